# The CUDA backend (included by the Makefile). `make cuda` builds SUNDIALS
# 7.1.1 with NVECTOR_CUDA from Debian's source (cached in build/sundials-cuda-7), then
# build/cuda/libodetensor.a: the whole library with src/cuda/ in place of
# src/cuda/none.c, plus its tests, the GPU example and the GPU benchmark.
# No GPU is needed to build; the binaries say "skipped: no CUDA device".

NVCC ?= $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard /usr/local/cuda/bin/nvcc))
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_ARCH ?= 90
CB := build/cuda
CUDA_SUN := build/sundials-cuda-7
CUDA_STAMP := $(CUDA_SUN)/.built-arkode-$(CUDA_ARCH)
CUDA_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -O2 -g -pthread -fPIC \
               -fvisibility=hidden -I$(CUDA_SUN)/include -Iinclude -Isrc -MMD -MP
NVFLAGS := -std=c++17 -O2 -g -arch=sm_$(CUDA_ARCH) -Xcompiler -fPIC,-Wall,-Wextra,-Werror \
           -I$(CUDA_SUN)/include -Iinclude -Isrc
CUDA_CORE := $(filter-out src/cuda/none.c,$(LIB_SRC))
CUDA_CU := $(wildcard src/cuda/*.cu)
CUDA_OBJ := $(CUDA_CORE:%.c=$(CB)/obj/%.o) $(CUDA_CU:%.cu=$(CB)/obj/%.o)
CUDA_SUN_LIBS := $(addprefix $(CUDA_SUN)/lib/libsundials_,arkode.a cvodes.a nveccuda.a nvecserial.a \
                 sunmatrixdense.a sunlinsoldense.a sunmatrixband.a sunlinsolband.a sunlinsolspgmr.a sunnonlinsolfixedpoint.a \
                 sunnonlinsolnewton.a core.a)
# Everything but cuBLAS and libc linked statically, so the binaries also run
# on a GPU machine whose image differs from this one (scripts/gpu-check.sh).
CUDA_LDLIBS := $(CUDA_SUN_LIBS) -L$(CUDA_HOME)/lib64 -lcublas -lcudart_static -ldl -lrt \
               -static-libstdc++ -static-libgcc -lm -pthread
CUDA_CHECK_LIBS := -Wl,-Bstatic -lcheck_pic -lsubunit -Wl,-Bdynamic -lrt -lm
CUDA_KERNELS := $(CB)/obj/examples/cuda/robertson_kernels.o

.PHONY: cuda test-cuda gpu-check

cuda: $(CB)/libodetensor.a $(CB)/tests/check_cuda $(CB)/examples/robertson_gpu \
      $(CB)/bench/gpu_robertson $(CB)/examples/kernel_robertson $(CB)/bench/gpu_kernels

# A compiled model (odetensor/kernel_model.inc) built by nvcc needs no CUDA
# backend in the library: this example links the plain one and the runtime.
$(CB)/obj/examples/kernel_robertson.o: examples/cuda/kernel_robertson.cu $(STATIC)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -MMD -MP -c $< -o $@
$(CB)/obj/bench/gpu_kernels.o: bench/gpu_kernels.cu $(STATIC)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -MMD -MP -c $< -o $@

$(CB)/examples/kernel_robertson $(CB)/bench/gpu_kernels: $(CB)/%: $(CB)/obj/%.o $(STATIC)
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $< $(STATIC) $(LDLIBS_CORE) -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt \
	    -static-libstdc++ -static-libgcc

$(CUDA_STAMP): | $(SUN_SRC_STAMP)
	@sh scripts/deps.sh cuda
	PATH="$(dir $(NVCC)):$$PATH" NVCC="$(NVCC)" CUDA_ARCH=$(CUDA_ARCH) \
	    sh scripts/sundials-cuda.sh $(CUDA_SUN)

$(CB)/obj/%.o: %.c | $(CUDA_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CUDA_CFLAGS) $(CHECK_OBJ_FLAGS) -c $< -o $@

$(CB)/obj/%.o: %.cu | $(CUDA_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -MMD -MP -c $< -o $@

$(CB)/obj/tests/cuda/check_cuda.o $(CB)/obj/tests/cuda/check_cuda_kernel.o: \
    CHECK_OBJ_FLAGS = $(CHECK_CFLAGS) -Wno-pedantic

$(CB)/libodetensor.a: $(CUDA_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(CB)/tests/check_cuda: $(CB)/obj/tests/cuda/check_cuda.o $(CB)/obj/tests/cuda/models.o \
                        $(CB)/obj/tests/cuda/check_cuda_kernel.o $(CB)/obj/tests/cuda/kmodels.o \
                        $(CUDA_KERNELS) $(CB)/libodetensor.a
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $(filter %.o,$^) $(CB)/libodetensor.a $(CUDA_CHECK_LIBS) $(CUDA_LDLIBS)

$(CB)/examples/robertson_gpu $(CB)/bench/gpu_robertson: $(CB)/%: $(CB)/obj/%.o \
                        $(CUDA_KERNELS) $(CB)/libodetensor.a
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $(filter %.o,$^) $(CB)/libodetensor.a $(CUDA_LDLIBS)

$(CB)/obj/examples/robertson_gpu.o: examples/cuda/robertson_gpu.c | $(CUDA_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CUDA_CFLAGS) -c $< -o $@

# The GPU benchmark measures free device memory: it needs the CUDA headers.
$(CB)/obj/bench/gpu_robertson.o: CHECK_OBJ_FLAGS = -I$(CUDA_HOME)/include

# make check runs the CUDA tests wherever nvcc exists; without a GPU they
# report "skipped: no CUDA device".
test-cuda:
ifeq ($(NVCC),)
	@echo "cuda: skipped (no nvcc on this machine)"
else ifeq ($(SANITIZE),1)
	@echo "cuda: skipped under SANITIZE=1 (the CUDA runtime and ASan do not mix)"
else
	@$(MAKE) --no-print-directory cuda
	$(CB)/tests/check_cuda
	$(CB)/examples/kernel_robertson 2000
endif

gpu-check:
	sh scripts/gpu-check.sh

-include $(shell find $(CB) -name '*.d' 2>/dev/null)

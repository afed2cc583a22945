# odetensor: GNU make build. `make help` prints this list.
#
# Everyday
#   make test-c           the fast loop: build the library and run the C suites (~1 min)
#   make check            build and run every test (installs Debian deps first)
#   make test-c SUNDIALS=system   the same library against Debian's SUNDIALS 6.4.1
#                         (default: our own optimised 7.1.1, scripts/sundials7.sh)
#   make check SANITIZE=1 the same under AddressSanitizer + UBSan
#   make check VALGRIND=1 the C tests and examples under valgrind (mk/hardening.mk)
#   make check TSAN=1     the C tests in a ThreadSanitizer build (build/tsan)
#   make lint             cppcheck + clang-format check; make format fixes the format
#   make demo             build and run the main example
#   make install PREFIX=/usr DESTDIR=/tmp/stage   (uninstall: the same arguments)
#
# Parts
#   make cuda             the CUDA lockstep backend (build/cuda/), needs nvcc
#   make wasm             the WebAssembly/JavaScript package (bindings/wasm/)
#   make wasm-demo        serve the browser demo on http://127.0.0.1:8123/demo/
#   make js-constants     rewrite the JS constants from the C headers (after an enum grew)
#   make mpi              the MPI layer, its tests, example and benchmark (mk/mpi.mk)
#   make python           the Python package (bindings/python, mk/python.mk)
#   make fuzz FUZZ_TIME=600  the libFuzzer targets, longer (check runs them 20 s each)
#
# Benchmarks (BENCHMARKS.md)
#   make bench            Robertson benchmark vs raw CVODE and SciPy
#   make bench-lockstep   lockstep vs lanes mode on the CPU
#   make bench-checksum   one result hash per driver path (refactoring guard)
#   make bench-fixed      the fixed cost of one small solve call vs raw CVODE
#   make bench-sens       forward sensitivities: plain vs DQ vs df/dp, np 1..64
#   make bench-methods    every method per lane: Lotka-Volterra, Robertson, both modes
#   make bench-linsol     dense vs band vs GMRES, reaction-diffusion n = 16 .. 1024
#   make bench-pk-methods which method for a dosed population (restarts at doses)
#   make bench-pk-table   a NONMEM-style dataset, 1,000 subjects, against a SciPy restart loop
#   make million          1,000,000 Robertson lanes per mode: time, peak RSS, bytes per lane
#   make bench-wasm       WebAssembly vs native, JS vs C callbacks, odex (npm)
#   make bench-mpi        MPI strong scaling, imbalance, messages, 64-node projection
#
# Internal: the pieces `make check` runs (each also runs alone)
#   test-headers test-readme test-install test-python test-examples test-million
#   test-cuda test-wasm test-wasm-browser test-inject test-fuzz test-mpi
#   test-valgrind test-tsan; and deps deps-check bench-bin fuzz-bin fuzz-lib
#   mpi-build mpi-example wasm-deps wasm-browser-deps gpu-check

PREFIX  ?= /usr/local
DESTDIR ?=
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
DOCDIR  ?= $(PREFIX)/share/doc/odetensor
SANITIZE ?= 0

CC  ?= cc
CXX ?= c++
PYTHON ?= /usr/bin/python3

# SUNDIALS: own (default) is 7.1.1 from Debian's source, built once Release
# (-O3), static and position-independent into build/sundials-7
# (scripts/sundials7.sh): Debian's binary package is built without
# optimisation and about 3x slower. system is Debian's libsundials-dev 6.4.1,
# built into its own folder (build/system).
SUNDIALS ?= own
# Debian's 7.1.1 source, which our own, the wasm and the CUDA SUNDIALS build.
SUN_SRC_STAMP := build/sundials-src-trixie/.unpacked
ifeq ($(SUNDIALS),system)
SUNB := /system
SUN_CFLAGS :=
SUN_STAMP :=
SUNDIALS_LIBS := -lsundials_arkode -lsundials_cvodes -lsundials_nvecserial -lsundials_sunmatrixdense \
                 -lsundials_sunlinsoldense -lsundials_sunmatrixband -lsundials_sunlinsolband \
                 -lsundials_sunlinsolspgmr -lsundials_sunnonlinsolfixedpoint
else ifeq ($(SUNDIALS),own)
SUNB :=
SUN_DIR := build/sundials-7
SUN_STAMP := $(SUN_DIR)/.built
SUN_CFLAGS := -I$(SUN_DIR)/include -DOT_SUN_SCOPED
# Our SUNDIALS allocates through src/core/sun_memory.c (scripts/sundials7.sh):
# every link of it gets that allocator too, in an archive of its own after
# SUNDIALS' (libodetensor has it already; a program of SUNDIALS alone not).
SUN_MEMORY_A := $(SUN_DIR)/lib/libot_sun_memory.a
SUNDIALS_LIBS := $(addprefix $(SUN_DIR)/lib/libsundials_,arkode.a cvodes.a nvecserial.a \
                 sunmatrixdense.a sunlinsoldense.a sunmatrixband.a sunlinsolband.a sunlinsolspgmr.a sunnonlinsolfixedpoint.a \
                 sunnonlinsolnewton.a core.a) $(SUN_MEMORY_A)
else
$(error SUNDIALS=$(SUNDIALS): use own (the default) or system)
endif

ifeq ($(SANITIZE),1)
B := build$(SUNB)/sanitize
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
OPT := -O1
else
B := build$(SUNB)
SANFLAGS :=
OPT := -O2
endif

WARN     := -Wall -Wextra -Wpedantic -Werror
CFLAGS   ?= $(OPT) -g
ALL_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) $(CFLAGS) $(SANFLAGS) -pthread -fPIC -fvisibility=hidden -Iinclude -Isrc $(SUN_CFLAGS) -MMD -MP
LDLIBS_CORE := $(SUNDIALS_LIBS) -lm -pthread
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)

LIB_SRC := src/core/error.c src/core/memory.c src/core/sun_memory.c \
           src/tensor/layout.c src/tensor/view.c src/tensor/tensor.c \
           src/dlpack/dlpack.c \
           src/ode/ode.c \
           src/ode/ode_info.c \
           src/entry/solve.c src/entry/solvers.c src/entry/plan.c src/entry/plan_with.c \
           src/entry/size_limits.c \
           src/solution/solution.c src/solution/assemble.c src/solution/output.c src/kit/callback.c src/kit/cv_setup.c \
           src/kit/advance.c src/kit/integ.c src/kit/progress.c src/kit/events.c src/kit/pool.c src/kit/sens.c src/kit/adjoint.c \
           src/run/loop.c src/run/take.c src/run/guard.c src/run/sens_jump.c src/run/adjoint.c \
           src/run/adjoint_back.c src/run/adjoint_events.c \
           src/lanes/lanes.c src/lanes/worker.c src/lanes/lane.c src/lanes/adjoint.c \
           src/lockstep/setup.c src/lockstep/loops.c src/lockstep/cpu.c src/lockstep/callbacks.c src/lockstep/alone.c \
           src/lockstep/lane_vector.c src/lockstep/block_dense.c src/lockstep/adjoint.c \
           src/dosing/records.c src/dosing/csv.c src/dosing/validate.c src/dosing/plan.c \
           src/dosing/schedule.c src/dosing/wrap.c src/dosing/steady.c src/dosing/observe.c src/dosing/solve.c \
           src/kernel/group.c src/kernel/calls.c src/kernel/ros.c src/kernel/erk.c src/kernel/drive.c \
           src/kernel/ros_tables.c src/kernel/erk_tables.c src/kernel/model.c src/kernel/roots.c \
           src/cuda/none.c
LIB_OBJ := $(LIB_SRC:%.c=$(B)/obj/%.o)
TEST_SRC := tests/check_main.c tests/check_tensor.c tests/check_dlpack.c tests/check_dlpack_own.c \
            tests/check_dlpack_import.c \
            tests/check_solve.c \
            tests/check_sens_roots.c tests/check_sens_events.c tests/check_adjoint_events.c tests/check_adjoint_models.c \
            tests/check_solve_faults.c tests/check_lockstep.c tests/check_concurrency.c \
            tests/check_faults_numeric.c tests/check_faults_scale.c tests/check_size_limits.c \
            tests/check_core_api.c tests/check_lockstep_blocks.c tests/check_traps.c \
            tests/check_events.c tests/check_sens_derivs.c tests/check_adjoint.c \
            tests/check_methods.c tests/check_linsol.c tests/check_mode_events.c \
            tests/check_callback_lane.c tests/check_lanes_alone.c tests/check_layer_api.c \
            tests/check_assemble.c tests/check_solve_options.c tests/check_messages.c tests/check_zeno.c \
            tests/check_dosing.c tests/check_dosing_plan.c tests/check_dose_solve.c tests/check_dose_ss.c tests/check_dose_grad.c tests/check_stop_outputs.c \
            tests/check_kernel.c tests/check_kernel_model.c tests/check_kernel_events.c tests/kmodels_c.c
TEST_OBJ := $(TEST_SRC:%.c=$(B)/obj/%.o)
EXAMPLES := dlpack_tour robertson lotka_volterra sensitivity_decay bouncing_ball user_jacobian \
            seir_peak population_pk population_doses fit_lotka_volterra fit_population_pk
EXAMPLE_BIN := $(EXAMPLES:%=$(B)/examples/%)

STATIC := $(B)/libodetensor.a
SHARED := $(B)/libodetensor.so

.PHONY: test-tables
.PHONY: all check demo install uninstall clean lint format help deps deps-check \
        test-c test-headers test-readme test-install test-python test-examples examples bench bench-bin \
        bench-lockstep bench-checksum bench-fixed bench-sens bench-methods bench-pk-methods bench-linsol million test-million \
        bench-pk-table bench-kernels

all: $(STATIC) $(SHARED) examples

help:
	@sed -n '1,/^$$/p' Makefile | sed 's/^# \{0,1\}//'

deps:
	@sh scripts/deps.sh build

deps-check:
	@sh scripts/deps.sh check $(HARDEN_DEPS)

# Objects depend on the SUNDIALS they were compiled against: a new one (or
# the switch from SUNDIALS=system's build) rebuilds them.
$(B)/obj/%.o: %.c $(SUN_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_OBJ_FLAGS) -c $< -o $@

ifeq ($(SUNDIALS),own)
$(SUN_STAMP): scripts/sundials7.sh | $(SUN_SRC_STAMP)
	@sh scripts/deps.sh build
	sh scripts/sundials7.sh $(SUN_DIR)

$(SUN_MEMORY_A): src/core/sun_memory.c src/core/sun_memory.h src/core/alloc.h $(SUN_STAMP)
	$(CC) -std=c11 $(WARN) -O2 -g -fPIC -Isrc -DOT_SUN_SCOPED -c src/core/sun_memory.c \
	    -o $(SUN_DIR)/lib/sun_memory.o
	rm -f $@
	ar rcs $@ $(SUN_DIR)/lib/sun_memory.o

# The build script makes SUNDIALS' own archives: a parallel make that needs
# one (the installed archive) waits for it.
$(filter-out $(SUN_MEMORY_A),$(filter %.a,$(SUNDIALS_LIBS))): $(SUN_STAMP) ; @:
endif

$(STATIC): $(LIB_OBJ) | $(SUN_MEMORY_A)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# The shared library carries our own SUNDIALS (static, position-independent)
# and exports none of it (--exclude-libs), so a program that also links
# another SUNDIALS, such as Debian's, gets no clash (test-install).
$(SHARED): $(LIB_OBJ) | $(SUN_MEMORY_A)
	$(CC) -shared $(SANFLAGS) -Wl,-soname,libodetensor.so.0 -Wl,--exclude-libs,ALL -o $@ $^ \
	    $(LDLIBS_CORE)

# The installed static library: ours plus, with our own SUNDIALS, its
# objects, so that a program links it with the .pc file's line alone.
$(B)/install/libodetensor.a: $(STATIC) $(filter %.a,$(SUNDIALS_LIBS))
	@mkdir -p $(dir $@)
	rm -f $@
	{ echo "create $@"; for a in $^; do echo "addlib $$a"; done; echo save; echo end; } | ar -M

examples: $(EXAMPLE_BIN)

$(B)/examples/%: $(B)/obj/examples/%.o $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $< $(STATIC) $(LDLIBS_CORE)

# Tests include Check's headers; only their objects get its flags.
$(TEST_OBJ): CHECK_OBJ_FLAGS = $(CHECK_CFLAGS) -Wno-pedantic

$(B)/tests/check_odetensor: $(TEST_OBJ) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $(TEST_OBJ) $(STATIC) $(CHECK_LIBS) $(LDLIBS_CORE)

check: deps-check
	@$(MAKE) --no-print-directory $(CHECK_LIST)

# What make check runs, built with as many jobs as make is given (.ci/run:
# make -j check-build, then make check, whose steps run one at a time so
# that no test times another's load); check-build-c: test-c's and
# test-install's alone. Everything it leaves out make check still builds.
CHECK_BUILD_C = $(STATIC) $(SHARED) $(B)/tests/check_odetensor
CHECK_BUILD = $(CHECK_BUILD_C) examples $(B)/bench/million_lanes $(B)/wasm/native_ref wasm \
               python mpi-build
ifneq ($(SANITIZE),1)
CHECK_BUILD += $(INJ)/check_alloc_inject $(B)/tests/check_malloc_fail fuzz-bin
endif
.PHONY: check-build check-build-c
# Debian's 7.1.1 source is fetched, and our own SUNDIALS built, first and
# alone: the native, wasm and CUDA builds and the sub-makes (fuzz-lib) all
# reach them, and two apt runs on one private list collide.
check-build: deps-check
	@$(MAKE) --no-print-directory $(SUN_STAMP) $(SUN_SRC_STAMP)
	@$(MAKE) --no-print-directory $(CHECK_BUILD)
$(SUN_SRC_STAMP):
	sh scripts/sundials-src.sh $(@D) trixie
check-build-c: deps-check
	@$(MAKE) --no-print-directory $(CHECK_BUILD_C)

# The public headers must compile alone, as C11 and as C++11.
test-headers:
	@mkdir -p $(B)/headers
	$(CC) -std=c11 $(WARN) -Iinclude -fsyntax-only -x c tests/headers.inc
	$(CXX) -std=c++11 $(WARN) -Iinclude -fsyntax-only -x c++ tests/headers.inc
	@echo "headers: compile as C11 and C++11"

ifeq ($(SANITIZE),1)
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:allocator_may_return_null=1 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# NumPy's own allocations look like leaks to LSan: check leaks in C, not there.
PY_ENV := LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
          ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
else
SAN_ENV :=
PY_ENV :=
endif

# The README's C example (the ```c block; fragments are ```C) must build and
# run as printed.
# The kernel methods' coefficient tables, parsed from the C and measured:
# order conditions, orders of y1, embedded and dense outputs (numpy).
test-tables:
	@mkdir -p $(B)
	/usr/bin/python3 tools/check_ros_tables.py >$(B)/tables-ros.out || { cat $(B)/tables-ros.out; exit 1; }
	/usr/bin/python3 tools/check_erk_tables.py >$(B)/tables-erk.out || { cat $(B)/tables-erk.out; exit 1; }
	@echo "tables: $$(tail -1 $(B)/tables-ros.out) (Rosenbrock), $$(tail -1 $(B)/tables-erk.out) (explicit RK)"

test-readme: $(STATIC)
	@mkdir -p $(B)/readme
	awk '/^```c$$/{f=1;next} /^```/{f=0} f' README.md > $(B)/readme/example.c
	$(CC) -std=c11 $(WARN) $(SANFLAGS) -Iinclude -o $(B)/readme/example $(B)/readme/example.c $(STATIC) $(LDLIBS_CORE)
	$(SAN_ENV) $(B)/readme/example >/dev/null
	$(SAN_ENV) $(B)/readme/example lockstep >/dev/null
	@echo "readme: the C example builds and runs right in both modes"

# Each example checks its own answer (analytic or invariant) in its exit code.
test-examples: examples
	@mkdir -p $(B)/demo
	@set -e; for e in $(EXAMPLES); do \
	    arg=; [ $$e = robertson ] && arg=$(B)/demo/robertson.svg; \
	    [ $$e = fit_lotka_volterra ] && arg=200; \
	    [ $$e = fit_population_pk ] && arg=20; \
	    [ $$e = population_doses ] && arg="examples/data/pk_1000.csv $(B)/demo --subjects 300"; \
	    $(SAN_ENV) $(B)/examples/$$e $$arg >$(B)/demo/$$e.out 2>&1 \
	        || { cat $(B)/demo/$$e.out; echo "example $$e FAILED"; exit 1; }; \
	    echo "example $$e: ok"; done
	@$(SAN_ENV) $(B)/examples/fit_population_pk 12 adjoint >$(B)/demo/fit_population_pk_adjoint.out 2>&1 \
	    || { cat $(B)/demo/fit_population_pk_adjoint.out; echo "example fit_population_pk adjoint FAILED"; exit 1; }
	@echo "example fit_population_pk adjoint (L-BFGS on the adjoint through doses): ok"

# make install into a staging folder, then the README example built against
# it with the pkg-config line alone, shared and static, a program that links
# odetensor and Debian's SUNDIALS 6.4.1 both (tests/install/clash.c), and the
# installed library's exports: the public headers' OT_API functions, nothing
# else (scripts/check-exports.sh).
STAGE_PC = PKG_CONFIG_SYSROOT_DIR=$(abspath $(B)/stage) PKG_CONFIG_PATH=$(B)/stage/usr/lib/pkgconfig
test-install: $(STATIC) $(SHARED) test-readme
	@rm -rf $(B)/stage
	@$(MAKE) --no-print-directory install DESTDIR=$(abspath $(B)/stage) PREFIX=/usr >/dev/null
	$(CC) -std=c11 $(WARN) $(SANFLAGS) -o $(B)/stage/example $(B)/readme/example.c \
	    $$($(STAGE_PC) pkg-config --cflags --libs odetensor)
	$(SAN_ENV) LD_LIBRARY_PATH=$(B)/stage/usr/lib $(B)/stage/example >/dev/null
	@# As on a machine without libdlpack-dev: the header's own DLPack definitions.
	$(CC) -std=c11 $(WARN) $(SANFLAGS) -DOT_DLPACK_OWN_ABI -o $(B)/stage/example_own_dlpack \
	    $(B)/readme/example.c $$($(STAGE_PC) pkg-config --cflags --libs odetensor)
	$(SAN_ENV) LD_LIBRARY_PATH=$(B)/stage/usr/lib $(B)/stage/example_own_dlpack >/dev/null
	$(CC) -std=c11 $(WARN) $(SANFLAGS) -o $(B)/stage/example_static $(B)/readme/example.c \
	    $$($(STAGE_PC) pkg-config --cflags odetensor) $(B)/stage/usr/lib/libodetensor.a \
	    $$($(STAGE_PC) pkg-config --static --libs-only-other --libs-only-l odetensor | \
	       sed 's/-lodetensor//')
	$(SAN_ENV) $(B)/stage/example_static >/dev/null
	$(CC) -std=c11 $(WARN) $(SANFLAGS) -o $(B)/stage/clash tests/install/clash.c \
	    $$($(STAGE_PC) pkg-config --cflags --libs odetensor) \
	    -lsundials_cvodes -lsundials_nvecserial -lsundials_sunnonlinsolfixedpoint -lm
	$(SAN_ENV) LD_LIBRARY_PATH=$(B)/stage/usr/lib $(B)/stage/clash
	sh scripts/check-exports.sh $(B)/stage/usr/lib/libodetensor.so $(B)/stage/usr/include/odetensor/*.h
	@rm -rf $(B)/prefix $(B)/consumer
	@$(MAKE) --no-print-directory install PREFIX=$(abspath $(B)/prefix) >/dev/null
	$(CC) -std=c11 $(WARN) $(SANFLAGS) -o $(B)/prefix/example $(B)/readme/example.c \
	    $$(PKG_CONFIG_PATH=$(B)/prefix/lib/pkgconfig pkg-config --cflags --libs odetensor)
	env -u LD_LIBRARY_PATH $(SAN_ENV) $(B)/prefix/example >/dev/null
	cmake -S tests/install/cmake -B $(B)/consumer -DCMAKE_PREFIX_PATH=$(abspath $(B)/prefix) \
	    -DAPP_SOURCE=$(abspath $(B)/readme/example.c) -DCMAKE_C_FLAGS="$(SANFLAGS)" >/dev/null
	cmake --build $(B)/consumer >/dev/null
	env -u LD_LIBRARY_PATH $(SAN_ENV) $(B)/consumer/app >/dev/null
	env -u LD_LIBRARY_PATH $(SAN_ENV) $(B)/consumer/app_static >/dev/null
	@echo "install: headers, libraries and odetensor.pc work from $(B)/stage, shared \
	and static (with or without a system dlpack.h), beside Debian's own SUNDIALS; from a prefix, the pkg-config line and \
	find_package(odetensor) build programs that run without LD_LIBRARY_PATH"

test-c: $(B)/tests/check_odetensor
	$(SAN_ENV) $(B)/tests/check_odetensor

demo: deps
	@$(MAKE) --no-print-directory $(B)/examples/robertson
	@mkdir -p $(B)/demo
	$(B)/examples/robertson $(B)/demo/robertson.svg

# Benchmarks (not part of check): build the programs, then bench/run.sh prints
# the table that BENCHMARKS.md records; `make bench ROUNDS=9` etc. set the
# sizes that bench/run.sh reads (see its header).
BENCH_BIN := $(B)/bench/raw_cvode $(B)/bench/ot_robertson $(B)/bench/interleave \
             $(B)/bench/lockstep_vs_lanes $(B)/bench/checksum $(B)/bench/fixed_cost \
             $(B)/bench/lockstep_sizes $(B)/bench/sens_cost $(B)/bench/methods \
             $(B)/bench/linsol $(B)/bench/pk_methods $(B)/bench/sens_doses \
             $(B)/bench/kernels $(B)/bench/kernel_models

bench-bin: $(BENCH_BIN)

$(B)/bench/%: $(B)/obj/bench/%.o $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $< $(STATIC) $(LDLIBS_CORE)

# interleave runs both solvers in one process: their objects without main().
$(B)/obj/bench/%.nomain.o: bench/%.c $(SUN_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DBENCH_NO_MAIN -c $< -o $@

$(B)/bench/interleave: $(B)/obj/bench/interleave.o $(B)/obj/bench/raw_cvode.nomain.o \
                       $(B)/obj/bench/ot_robertson.nomain.o $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $(filter %.o,$^) $(STATIC) $(LDLIBS_CORE)

bench:
	@sh scripts/deps.sh bench
	@$(MAKE) --no-print-directory bench-bin
	sh bench/run.sh $(B)/bench

# Lockstep vs lanes mode on the CPU (issue 4): the same Robertson problem;
# each mode in its own process for its peak RSS, each lane against a
# reference solved 1e4 times tighter.
bench-lockstep: $(B)/bench/lockstep_vs_lanes
	@for m in lanes1 lanes2 lockstep; do $(B)/bench/lockstep_vs_lanes $$m 10000; done

# KERNELS_ARGS: nbatch rounds (bench/kernels.c): the kernel methods against
# lanes mode and lockstep on Robertson at 0, 2 and 4 decades of rate spread.
KERNELS_ARGS ?= 10000 3
# KERNEL_MODELS_ARGS: nbatch rounds (bench/kernel_models.c): the Brusselator at
# n = 4, 16 and 64, Lotka-Volterra and a one-dose PK model.
KERNEL_MODELS_ARGS ?= 1000 3
bench-kernels: $(B)/bench/kernels $(B)/bench/kernel_models
	@for d in 0 2 4; do $(B)/bench/kernels $(KERNELS_ARGS) $$d; done
	@$(B)/bench/kernel_models $(KERNEL_MODELS_ARGS)

# The fixed cost of one small solve call against raw CVODE's create + solve.
bench-fixed: $(B)/bench/fixed_cost
	$(B)/bench/fixed_cost

# METHODS_ARGS: nbatch rounds (bench/methods.c): every method's cost per
# lane on Lotka-Volterra and Robertson, both modes, with its accuracy.
bench-methods: $(B)/bench/methods
	$(B)/bench/methods $(METHODS_ARGS)

# PK_ARGS: patients rounds (bench/pk_methods.c): which method for doses.
bench-pk-methods: $(B)/bench/pk_methods
	$(B)/bench/pk_methods $(PK_ARGS)

# LINSOL_ARGS: rounds max_n (bench/linsol.c): dense vs band vs GMRES on a
# reaction-diffusion system, n = 16 .. 1024.
bench-linsol: $(B)/bench/linsol
	$(B)/bench/linsol $(LINSOL_ARGS)

# SENS_ARGS: nbatch rounds glv_lanes (bench/sens_cost.c).
bench-sens: $(B)/bench/sens_cost
	$(B)/bench/sens_cost $(SENS_ARGS)

# SENS_DOSES_ARGS: patients rounds (bench/sens_doses.c): a gradient through
# doses against a plain dosed solve, both modes, np = 4 and 16.
bench-sens-doses: $(B)/bench/sens_doses
	$(B)/bench/sens_doses $(SENS_DOSES_ARGS)

# Event tables (issue 26): examples/population_doses on pk_1000.csv (1
# thread, then every core; it writes the parameters it drew and its
# observations) and bench/scipy_pk.py's solve_ivp restart loop on the same
# problem (PK_TABLE_METHODS), PK_TABLE_ROUNDS rounds interleaved, so that
# the machine's drift hits both alike.
PK_TABLE_ROUNDS ?= 1
PK_TABLE_METHODS ?= LSODA,BDF
PK_TABLE_DIR = $(B)/bench/pk_table
bench-pk-table: $(B)/examples/population_doses
	@sh scripts/deps.sh bench
	@mkdir -p $(PK_TABLE_DIR)
	@set -e; for r in $$(seq $(PK_TABLE_ROUNDS)); do echo "round $$r"; \
	    for th in 1 0; do $(B)/examples/population_doses examples/data/pk_1000.csv \
	        $(PK_TABLE_DIR) --threads $$th --params $(PK_TABLE_DIR)/params.csv \
	        --obs $(PK_TABLE_DIR)/obs.csv >$(PK_TABLE_DIR)/ot.out; sed -n '1,5p' $(PK_TABLE_DIR)/ot.out; done; \
	    $(PYTHON) bench/scipy_pk.py examples/data/pk_1000.csv $(PK_TABLE_DIR)/params.csv \
	        $(PK_TABLE_DIR)/obs.csv --methods $(PK_TABLE_METHODS); done

# A refactoring guard: one hash per driver path (lanes and lockstep; dense,
# difference quotients, steps, sensitivities, roots, out + f32) over
# Robertson; a change that must not alter results prints the same lines.
bench-checksum: $(B)/bench/checksum
	$(B)/bench/checksum $(CHECKSUM_LANES)

# A million lanes of Robertson (issue 6), each mode in its own process for its
# peak RSS; each run checks its answers (bench/million_lanes.c). `make check`
# runs the same on MILLION_CHECK_LANES lanes.
CHECKSUM_LANES ?= 10000
MILLION_LANES ?= 1000000
MILLION_CHECK_LANES ?= 10000
million: $(B)/bench/million_lanes
	@for m in lockstep lanes; do $(B)/bench/million_lanes $$m $(MILLION_LANES) || exit 1; done

test-million: $(B)/bench/million_lanes
	@for m in lockstep lanes; do \
	    $(SAN_ENV) $(B)/bench/million_lanes $$m $(MILLION_CHECK_LANES) || exit 1; done

# What a static link needs besides libodetensor.a (the .pc's Libs.private).
ifeq ($(SUNDIALS),own)
LIBS_PRIVATE := -lm -pthread
else
LIBS_PRIVATE := $(LDLIBS_CORE)
endif

# The CMake package's static link: -lm -pthread as m;Threads::Threads.
space := $(subst ,, )
CMAKE_STATIC_LIBS := $(subst $(space),;,$(strip $(patsubst -l%,%,$(subst -pthread,Threads::Threads,$(LIBS_PRIVATE)))))
OT_VERSION = $(shell sed -n 's/^\#define OT_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' include/odetensor/status.h | paste -sd.)

install: $(B)/install/libodetensor.a $(SHARED)
	install -d $(DESTDIR)$(INCDIR)/odetensor $(DESTDIR)$(LIBDIR)/pkgconfig \
	    $(DESTDIR)$(LIBDIR)/cmake/odetensor $(DESTDIR)$(DOCDIR)
	install -m 644 include/odetensor.h $(DESTDIR)$(INCDIR)/
	install -m 644 include/odetensor/*.h include/odetensor/*.inc $(DESTDIR)$(INCDIR)/odetensor/
	install -m 644 $(B)/install/libodetensor.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/libodetensor.so.0
	ln -sf libodetensor.so.0 $(DESTDIR)$(LIBDIR)/libodetensor.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' \
	    -e 's|@LIBS_PRIVATE@|$(LIBS_PRIVATE)|' \
	    -e 's|@VERSION@|$(OT_VERSION)|' \
	    odetensor.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/odetensor.pc
	sed -e 's|@INCDIR_REL@|$(shell realpath -m --relative-to=$(LIBDIR)/cmake/odetensor $(INCDIR))|' \
	    -e 's|@STATIC_LIBS@|$(CMAKE_STATIC_LIBS)|' \
	    cmake/odetensorConfig.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/odetensor/odetensorConfig.cmake
	sed -e 's|@VERSION@|$(OT_VERSION)|' cmake/odetensorConfigVersion.cmake.in \
	    > $(DESTDIR)$(LIBDIR)/cmake/odetensor/odetensorConfigVersion.cmake
	install -m 644 LICENSE THIRD-PARTY-NOTICES.md $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -rf $(DESTDIR)$(INCDIR)/odetensor $(DESTDIR)$(INCDIR)/odetensor.h
	rm -f $(DESTDIR)$(LIBDIR)/libodetensor.a $(DESTDIR)$(LIBDIR)/libodetensor.so \
	      $(DESTDIR)$(LIBDIR)/libodetensor.so.0 $(DESTDIR)$(LIBDIR)/pkgconfig/odetensor.pc
	rm -rf $(DESTDIR)$(LIBDIR)/cmake/odetensor $(DESTDIR)$(DOCDIR)

FORMAT_FILES = $(wildcard include/*.h include/odetensor/*.h src/*/*.c src/*/*.h tests/*.c examples/*.c examples/*.h \
                          src/cuda/*.cu tests/cuda/* examples/cuda/* bench/*.cu \
                          bench/*.c bench/wasm/*.c tests/fuzz/*.c tests/fuzz/*.h tests/inject/*.c \
                          bench/robertson.h bench/robertson_ot.h bindings/wasm/src/*.c bindings/wasm/src/*.h bindings/wasm/test/*.c \
                          include/odetensor_mpi.h tests/mpi/*.c \
                          examples/mpi/*.c bench/mpi/*.c tests/install/*.c \
                          bindings/python/src/*.c bindings/python/src/*.h bindings/python/tests/*.c \
                          tests/inject/*.h)

lint:
	@sh scripts/deps.sh lint
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	    --std=c11 --inline-suppr -Iinclude -Isrc --suppress=missingIncludeSystem src examples
	clang-format --dry-run -Werror $(FORMAT_FILES)
	@echo "lint: clean"

format:
	clang-format -i $(FORMAT_FILES)

clean:
	rm -rf build

include mk/cuda.mk
include mk/wasm.mk
include mk/hardening.mk
# After hardening.mk, which sets the check list: the million-lane program,
# scaled down, in plain and SANITIZE=1 checks.
ifeq ($(VALGRIND)$(TSAN),00)
CHECK_LIST += test-million
endif
include mk/inject.mk
include mk/python.mk
include mk/bench-wasm.mk
include mk/mpi.mk

# Keep objects make would treat as intermediate (examples).
.SECONDARY:

-include $(shell find build -name '*.d' 2>/dev/null)

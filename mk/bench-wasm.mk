# WebAssembly benchmarks (issue 5; included by the Makefile after mk/wasm.mk,
# whose objects and flags it reuses; not part of `make check`). `make
# bench-wasm` builds
#   $(B)/bench/wasm_native         Robertson natively (bench/wasm/native.c +
#                                  bench/ot_robertson.c, libodetensor.a, C callbacks)
#   build/bench-wasm/robertson_c.mjs  a second wasm module: the package's objects
#                                  plus bench/wasm/robertson_c.c, Robertson
#                                  with C callbacks inside wasm
#   build/bench-wasm/split/        the package linked as separate .mjs + .wasm
#                                  (only to measure the size of that layout)
#   $(B)/bench/wasm_modes          bench/wasm/modes.c natively: Robertson and
#                                  Lotka-Volterra, lanes and lockstep mode
#   build/bench-wasm/modes_c.mjs   the same file in a wasm module with the
#                                  package's objects (bench/wasm/modes.mjs)
#   $(B)/bench/wasm_native_o3      wasm_native linked with SUNDIALS built here
#                                  from the same Debian source at CMake's Release
#                                  (-O3), static, in build/sundials-native: a
#                                  control, since Debian's libsundials is built
#                                  without optimization (BENCHMARKS.md)
# installs odex and ode45-cash-karp from bench/wasm/package-lock.json into
# bench/wasm/node_modules (npm ci), then bench/wasm/run.sh prints the tables of BENCHMARKS.md's
# WebAssembly section. Sizes: `make bench-wasm NBATCH_WASM=2000 ROUNDS_WASM=5`
# (see bench/wasm/run.sh).

BWB := build/bench-wasm
BENCH_WASM_C := $(BWB)/robertson_c.mjs
BENCH_WASM_SPLIT := $(BWB)/split/odetensor.mjs
BENCH_WASM_NATIVE := $(B)/bench/wasm_native
BENCH_WASM_NATIVE_O3 := $(B)/bench/wasm_native_o3
BENCH_WASM_MODES := $(B)/bench/wasm_modes
BENCH_WASM_MODES_C := $(BWB)/modes_c.mjs
# The npm peers; the stamp is the second package, so an older node_modules
# with odex alone is brought up to date.
BENCH_WASM_ODEX := bench/wasm/node_modules/ode45-cash-karp/package.json
# SUNDIALS 6.4.1 for the host, optimized: the same source and index size (64)
# as Debian's binary package, so libodetensor.a (built against Debian's
# headers) links against it unchanged.
SUN_NATIVE := build/sundials-native
SUN_NATIVE_LIBS := $(addprefix $(SUN_NATIVE)/lib/libsundials_,arkode.a cvodes.a nvecserial.a \
                   sunmatrixdense.a sunlinsoldense.a sunmatrixband.a sunlinsolband.a sunlinsolspgmr.a sunnonlinsolfixedpoint.a \
                   sunnonlinsolnewton.a generic.a)
# The bench module: Robertson's entry points are EMSCRIPTEN_KEEPALIVE, so no
# export list; no JS callbacks, hence no table growth.
BENCH_WASM_LDFLAGS := $(WASM_OPT) -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createRobertsonC \
                      -sSINGLE_FILE=1 -sENVIRONMENT=web,worker -sFILESYSTEM=0 \
                      -sALLOW_MEMORY_GROWTH=1

.PHONY: bench-wasm bench-wasm-bin bench-methods-wasm

bench-wasm: wasm
	@command -v npm >/dev/null 2>&1 || sh scripts/deps.sh npm
	@$(MAKE) --no-print-directory bench-wasm-bin
	NODE=$(NODE) sh bench/wasm/run.sh $(BENCH_WASM_NATIVE) $(BENCH_WASM_C) $(BENCH_WASM_SPLIT) \
	    $(BENCH_WASM_NATIVE_O3) $(BENCH_WASM_MODES) $(BENCH_WASM_MODES_C)

bench-wasm-bin: $(BENCH_WASM_NATIVE) $(BENCH_WASM_NATIVE_O3) $(BENCH_WASM_C) $(BENCH_WASM_SPLIT) \
                $(BENCH_WASM_MODES) $(BENCH_WASM_MODES_C) $(BENCH_WASM_ODEX)

$(BENCH_WASM_MODES): $(B)/obj/bench/wasm/modes.o $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $(filter %.o,$^) $(STATIC) $(LDLIBS_CORE)

$(BENCH_WASM_MODES_C): $(WASM_OBJ) $(WB)/obj/bench/wasm/modes.o $(WASM_SUN_LIBS)
	@mkdir -p $(dir $@)
	$(EM_ENV) $(EMCC) $(subst createRobertsonC,createModesC,$(BENCH_WASM_LDFLAGS)) -o $@ \
	    $(filter %.o,$^) $(WASM_SUN_LIBS) -lm

$(BENCH_WASM_NATIVE): $(B)/obj/bench/wasm/native.o $(B)/obj/bench/ot_robertson.nomain.o $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $(filter %.o,$^) $(STATIC) $(LDLIBS_CORE)

# With our own SUNDIALS (the default) the native build is already optimised:
# native_o3 is the same program. With SUNDIALS=system it links the library
# against an optimised 6.4.1 built from the same source as Debian's.
ifeq ($(SUNDIALS),own)
$(BENCH_WASM_NATIVE_O3): $(B)/obj/bench/wasm/native.o $(B)/obj/bench/ot_robertson.nomain.o \
                        $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $(filter %.o,$^) $(STATIC) $(LDLIBS_CORE)
else
$(BENCH_WASM_NATIVE_O3): $(B)/obj/bench/wasm/native.o $(B)/obj/bench/ot_robertson.nomain.o \
                        $(STATIC) $(SUN_NATIVE)/.built-arkode
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $(filter %.o,$^) $(STATIC) $(SUN_NATIVE_LIBS) -lm -pthread
endif

# About 15 s on 2 cores, once; the log is $(SUN_NATIVE)-build.log.
$(SUN_NATIVE)/.built-arkode:
	@sh scripts/deps.sh wasm
	sh scripts/sundials-src.sh build/sundials-src
	rm -rf $(SUN_NATIVE)-build
	cmake -S build/sundials-src -B $(SUN_NATIVE)-build -DCMAKE_BUILD_TYPE=Release \
	    -DCMAKE_INSTALL_PREFIX=$(abspath $(SUN_NATIVE)) \
	    -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON \
	    -DBUILD_ARKODE=ON -DBUILD_CVODE=OFF -DBUILD_CVODES=ON -DBUILD_IDA=OFF -DBUILD_IDAS=OFF \
	    -DBUILD_KINSOL=OFF -DBUILD_FORTRAN_MODULE_INTERFACE=OFF -DENABLE_MPI=OFF \
	    -DENABLE_OPENMP=OFF -DENABLE_PTHREAD=OFF \
	    -DEXAMPLES_ENABLE_C=OFF -DEXAMPLES_ENABLE_CXX=OFF -DEXAMPLES_INSTALL=OFF \
	    -DSUNDIALS_INDEX_SIZE=64 -DSUNDIALS_PRECISION=DOUBLE >$(SUN_NATIVE)-build.log 2>&1 \
	    || { tail -30 $(SUN_NATIVE)-build.log; exit 1; }
	cmake --build $(SUN_NATIVE)-build -j$$(nproc) >>$(SUN_NATIVE)-build.log 2>&1 \
	    || { tail -30 $(SUN_NATIVE)-build.log; exit 1; }
	cmake --install $(SUN_NATIVE)-build >>$(SUN_NATIVE)-build.log 2>&1 \
	    || { tail -30 $(SUN_NATIVE)-build.log; exit 1; }
	touch $@

$(SUN_NATIVE_LIBS): $(SUN_NATIVE)/.built-arkode

# ot_robertson.c without its main(), for wasm (its ot_solve_all is what
# wasm_native times).
$(WB)/obj/bench/ot_robertson.nomain.o: bench/ot_robertson.c | $(WASM_STAMP)
	@mkdir -p $(dir $@)
	$(EM_ENV) $(EMCC) $(WASM_CFLAGS) -DBENCH_NO_MAIN -c $< -o $@

$(BENCH_WASM_C): $(WASM_OBJ) $(WB)/obj/bench/wasm/robertson_c.o \
                 $(WB)/obj/bench/ot_robertson.nomain.o $(WASM_SUN_LIBS)
	@mkdir -p $(dir $@)
	$(EM_ENV) $(EMCC) $(BENCH_WASM_LDFLAGS) -o $@ $(filter %.o,$^) $(WASM_SUN_LIBS) -lm

# The package's link without SINGLE_FILE: odetensor.mjs (glue) + odetensor.wasm.
$(BENCH_WASM_SPLIT): $(WASM_OBJ) $(WASM_SUN_LIBS)
	@mkdir -p $(dir $@)
	$(EM_ENV) $(EMCC) $(filter-out -sSINGLE_FILE=1,$(WASM_LDFLAGS)) -o $@ $(WASM_OBJ) \
	    $(WASM_SUN_LIBS) -lm

$(BENCH_WASM_ODEX): bench/wasm/package.json bench/wasm/package-lock.json
	cd bench/wasm && npm ci --no-audit --no-fund
	@touch $@

# Every method per lane natively and in wasm (bench/methods.c compiled both
# ways, one thread each): `make bench-methods-wasm METHODS_ARGS="1000 3"`.
BENCH_METHODS_WASM := $(BWB)/methods.js
$(BENCH_METHODS_WASM): $(WASM_OBJ) $(WB)/obj/bench/methods.o $(WASM_SUN_LIBS)
	@mkdir -p $(dir $@)
	$(EM_ENV) $(EMCC) $(WASM_OPT) -sENVIRONMENT=node -sALLOW_MEMORY_GROWTH=1 -sSINGLE_FILE=1 -o $@ \
	    $(filter %.o,$^) $(WASM_SUN_LIBS) -lm

bench-methods-wasm: $(B)/bench/methods $(BENCH_METHODS_WASM)
	@echo "native, 1 thread:"; $(B)/bench/methods $(or $(METHODS_ARGS),1000 3) 1
	@echo "wasm (node), 1 thread:"; node $(BENCH_METHODS_WASM) $(or $(METHODS_ARGS),1000 3) 1

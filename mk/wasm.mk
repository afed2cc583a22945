# The WebAssembly package (included by the Makefile). `make wasm` installs
# Debian's emscripten (scripts/deps.sh wasm), builds SUNDIALS for wasm32 from
# Debian's source (cached in build/sundials-wasm), compiles the core
# (LIB_SRC, with src/cuda/none.c) and the JS-facing shim with emcc, and links
# bindings/wasm/dist/odetensor.mjs: one ES module holding the glue and the
# wasm binary, loaded by bindings/wasm/index.mjs (ESM) and index.cjs (CJS).
# `make test-wasm` (part of `make check`) runs the Node tests against
# reference values from the native library. `make wasm-demo` serves the demo
# page (bindings/wasm/demo/) on 127.0.0.1; `make test-wasm-browser` (also in
# `make check`) drives it in Debian's headless Chromium with playwright-core.

EMCC ?= emcc
# emcc's JS optimizer needs Debian's node modules; its libc cache is frozen.
EM_ENV := env -u EM_CACHE NODE_PATH=/usr/share/nodejs
NODE ?= node
WB := build/wasm
WASM_SUN := build/sundials-wasm-7
WASM_STAMP := $(WASM_SUN)/.built-arkode
WASM_PKG := bindings/wasm
WASM_OUT := $(WASM_PKG)/dist/odetensor.mjs
# Optimisation of our code and of the link (SUNDIALS is built Release, -O3).
# -O3 measured 14 % faster than -O2 with C callbacks, 3-11 % with JS ones,
# bit-identical; -msimd128 and -flto measured no further gain (BENCHMARKS).
WASM_OPT ?= -O3
WASM_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) $(WASM_OPT) -Iinclude -Isrc \
               -I$(WASM_SUN)/include -MMD -MP
WASM_SHIM_OBJ := $(WB)/obj/$(WASM_PKG)/src/shim.o $(WB)/obj/$(WASM_PKG)/src/shim_solve.o \
                 $(WB)/obj/$(WASM_PKG)/src/shim_doses.o
WASM_OBJ := $(LIB_SRC:%.c=$(WB)/obj/%.o) $(WASM_SHIM_OBJ)
# The shim is a binding: public headers only (no -Isrc, so a private
# include fails the build).
$(WASM_SHIM_OBJ): WASM_CFLAGS := $(filter-out -Isrc -I$(WASM_SUN)/include,$(WASM_CFLAGS))
WASM_SUN_LIBS := $(addprefix $(WASM_SUN)/lib/libsundials_,arkode.a cvodes.a nvecserial.a \
                 sunmatrixdense.a sunlinsoldense.a sunmatrixband.a sunlinsolband.a sunlinsolspgmr.a sunnonlinsolfixedpoint.a \
                 sunnonlinsolnewton.a core.a)
# ES module, wasm embedded (no fetch or path lookups: the same file loads in
# Node, browsers and workers); JS callbacks enter the table with addFunction.
WASM_LDFLAGS := $(WASM_OPT) -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createOdeTensorModule \
                -sSINGLE_FILE=1 -sENVIRONMENT=web,worker -sFILESYSTEM=0 \
                -sALLOW_MEMORY_GROWTH=1 -sALLOW_TABLE_GROWTH=1 \
                -sEXPORTED_RUNTIME_METHODS=addFunction,removeFunction,UTF8ToString,stackSave,stackRestore
WASM_TESTS := $(wildcard $(WASM_PKG)/test/*.test.mjs $(WASM_PKG)/test/*.test.cjs)

.PHONY: wasm wasm-deps js-constants test-wasm wasm-demo wasm-browser-deps test-wasm-browser test-wasm-pack

# The package ships odetensor's licence and the notices of what its wasm
# embeds (SUNDIALS, Emscripten's runtime and musl), copied in at build time.
WASM_NOTICES := $(WASM_PKG)/LICENSE $(WASM_PKG)/THIRD-PARTY-NOTICES.md

wasm: wasm-deps
	@$(MAKE) --no-print-directory $(WASM_OUT) $(WASM_NOTICES)

$(WASM_NOTICES): $(WASM_PKG)/%: %
	cp $< $@

wasm-deps:
	@sh scripts/deps.sh wasm

$(WASM_STAMP): | $(SUN_SRC_STAMP)
	@sh scripts/deps.sh wasm
	sh scripts/sundials-wasm.sh $(WASM_SUN)

# emcc does not search /usr/include, so the wasm build uses odetensor's own
# DLPack definitions (include/odetensor/dlpack.h): the build that shows the
# headers need no libdlpack-dev.
$(WB)/obj/%.o: %.c $(WASM_STAMP)
	@mkdir -p $(dir $@)
	$(EM_ENV) $(EMCC) $(WASM_CFLAGS) -c $< -o $@

$(WASM_OUT): $(WASM_OBJ) $(WASM_SUN_LIBS)
	@mkdir -p $(dir $@)
	$(EM_ENV) $(EMCC) $(WASM_LDFLAGS) -o $@ $(WASM_OBJ) $(WASM_SUN_LIBS) -lm
	@echo "wasm: $@ ($$(wc -c <$@) bytes, $$(gzip -9c $@ | wc -c) gzipped)"

$(WASM_SUN_LIBS): $(WASM_STAMP)

# The reference: the same problems solved by the native library, as JSON.
$(B)/wasm/native_ref: $(WASM_PKG)/test/native_ref.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -O2 $(SANFLAGS) -Iinclude -o $@ $< \
	    $(STATIC) $(LDLIBS_CORE)

# glibc picks FMA variants of pow/exp on CPUs that have FMA; their last bit
# sometimes differs from the generic code that wasm's musl shares, which can
# flip one step decision (seen with sensitivities). The reference uses the
# generic code, so the comparison tests odetensor, not the CPU's libm.
# Under SANITIZE=1 the reference runs under ASan + UBSan, and the Node tests,
# the same wasm against the same reference, are make check's.
test-wasm: wasm $(B)/wasm/native_ref
	GLIBC_TUNABLES=glibc.cpu.hwcaps=-FMA,-AVX2 $(SAN_ENV) $(B)/wasm/native_ref \
	    > $(B)/wasm/native_ref.json
ifeq ($(SANITIZE),1)
	@echo "wasm: the native reference ran under ASan + UBSan; the Node tests skipped under SANITIZE=1 (the same wasm and reference as make check's, which runs them)"
else
	OT_NATIVE_REF=$(abspath $(B)/wasm/native_ref.json) $(NODE) --expose-gc --test --test-reporter=spec $(WASM_TESTS)
endif

# constants.mjs and index.d.ts's unions, written from the C headers after an
# enumerator or status code was added there (test/constants.test.mjs insists).
js-constants:
	$(NODE) $(WASM_PKG)/tools/gen_constants.mjs

# The browser demo. DEMO_PORT=0 picks any free port; the server prints the URL.
DEMO_PORT ?= 8123
WASM_NPM_STAMP := $(WASM_PKG)/node_modules/.package-lock.json

wasm-demo: wasm
	$(NODE) $(WASM_PKG)/demo/serve.mjs --port $(DEMO_PORT)

# Debian's chromium (never a browser downloaded by playwright) and fonts.
wasm-browser-deps:
	@sh scripts/deps.sh browser

# playwright-core, pinned by package-lock.json, into bindings/wasm/node_modules
# (gitignored); npm ci again whenever the lockfile changes.
$(WASM_NPM_STAMP): $(WASM_PKG)/package.json $(WASM_PKG)/package-lock.json
	@command -v npm >/dev/null 2>&1 || sh scripts/deps.sh npm
	cd $(WASM_PKG) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# Loads the demo in headless Chromium, moves sliders, checks the numbers and
# the canvas change; screenshot in build/wasm-demo.png.
ifeq ($(SANITIZE),1)
test-wasm-browser test-wasm-pack:
	@echo "$@: skipped under SANITIZE=1 (no native code of ours runs in it; make check runs it)"
else
test-wasm-browser: wasm wasm-browser-deps $(WASM_NPM_STAMP)
	$(NODE) --test --test-reporter=spec $(wildcard $(WASM_PKG)/test-browser/*.test.mjs)

# The npm package as a user gets it: npm pack, the tarball's files checked
# (licence and notices included), installed into a scratch project
# (tests/js-pack/), imported from ESM and CommonJS, its worker used, and its
# types checked by tsc (pinned in package-lock.json).
WASM_PACK := $(B)/wasm-pack
WASM_PACK_FILES := LICENSE THIRD-PARTY-NOTICES.md package.json index.mjs index.cjs index.d.ts \
                   index.d.cts callbacks.mjs solution.mjs doses.mjs constants.mjs worker.mjs worker_main.mjs worker.d.ts \
                   dist/odetensor.mjs
test-wasm-pack: wasm $(WASM_NPM_STAMP)
	@rm -rf $(WASM_PACK) && mkdir -p $(WASM_PACK)/consumer
	cd $(WASM_PKG) && npm pack --silent --pack-destination $(abspath $(WASM_PACK)) >/dev/null
	tar -tzf $(WASM_PACK)/odetensor-*.tgz | sed 's|^package/||' | sort > $(WASM_PACK)/files.txt
	@for f in $(WASM_PACK_FILES); do grep -qx "$$f" $(WASM_PACK)/files.txt || \
	    { echo "npm pack: $$f is missing"; exit 1; }; done
	@! grep -q '^test/\|^src/\|^demo/\|node_modules' $(WASM_PACK)/files.txt || \
	    { echo "npm pack: ships tests or sources"; exit 1; }
	cp tests/js-pack/* $(WASM_PACK)/consumer/
	cd $(WASM_PACK)/consumer && npm install --no-audit --no-fund --loglevel=error \
	    $(abspath $(WASM_PACK))/odetensor-*.tgz
	cd $(WASM_PACK)/consumer && $(NODE) esm.mjs && $(NODE) cjs.cjs
	cd $(WASM_PACK)/consumer && $(NODE) $(abspath $(WASM_PKG))/node_modules/typescript/bin/tsc \
	    -p tsconfig.json
	@echo "npm pack: installed from the tarball, ESM, CommonJS, worker and types all work"
endif

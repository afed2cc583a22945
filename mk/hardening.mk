# Hardening checks (issue 6): valgrind, ThreadSanitizer and libFuzzer.
#   make check VALGRIND=1   deps, then the C tests (CK_FORK=no) and the examples under
#                           valgrind memcheck (zero errors, zero definite/indirect leaks)
#   make check TSAN=1       deps, then a ThreadSanitizer build (build/tsan, clang) of the
#                           library and the C tests, run with halt_on_error
#   make fuzz [FUZZ_TIME=600]  the libFuzzer targets (build/fuzz, clang 14, ASan+UBSan),
#                           FUZZ_TIME seconds each; plain `make check` runs them for
#                           FUZZ_CHECK_TIME seconds each from tests/fuzz/<target>/
# VALGRIND=1 and TSAN=1 replace the usual check list: they are separate, slower runs.

VALGRIND ?= 0
TSAN ?= 0
FUZZ_CC ?= clang-14
FUZZ_TIME ?= 600
FUZZ_CHECK_TIME ?= 20
FUZZ_SEED ?= 12345
FUZZ_TARGETS := view dlpack solve

.PHONY: test-valgrind test-tsan test-fuzz fuzz fuzz-bin fuzz-lib valgrind tsan

ifeq ($(VALGRIND),1)
CHECK_LIST := test-valgrind
HARDEN_DEPS := valgrind
else ifeq ($(TSAN),1)
CHECK_LIST := test-tsan
HARDEN_DEPS := tsan
else
CHECK_LIST := test-headers test-readme test-tables test-install test-python test-examples \
              test-cuda test-wasm test-wasm-browser test-wasm-pack test-c test-inject \
              test-malloc-fail test-fuzz \
              test-mpi
HARDEN_DEPS := fuzz
endif

# ---- valgrind -------------------------------------------------------------
# Every example with its usual argument; any memcheck error or definite /
# indirect leak fails the run (possible leaks come from glibc's thread stacks
# of still-detached threads at exit and are not counted).
VG := valgrind -q --error-exitcode=1 --leak-check=full \
      --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
      --track-origins=yes

test-valgrind: $(B)/tests/check_odetensor examples
	@mkdir -p $(B)/valgrind
	@set -e; for e in $(EXAMPLES); do \
	    arg=; [ $$e = robertson ] && arg=$(B)/valgrind/robertson.svg; \
	    s=$$(date +%s); \
	    $(VG) $(B)/examples/$$e $$arg >$(B)/valgrind/$$e.out 2>&1 \
	        || { cat $(B)/valgrind/$$e.out; echo "valgrind: example $$e FAILED"; exit 1; }; \
	    echo "valgrind: example $$e clean ($$(( $$(date +%s) - s )) s)"; done
	@s=$$(date +%s); CK_FORK=no $(VG) $(B)/tests/check_odetensor \
	    || { echo "valgrind: C tests FAILED"; exit 1; }; \
	    echo "valgrind: C tests clean ($$(( $$(date +%s) - s )) s)"

valgrind:
	@sh scripts/deps.sh check valgrind
	@$(MAKE) --no-print-directory test-valgrind

# ---- ThreadSanitizer ------------------------------------------------------
# Its own build folder and compiler; SUNDIALS itself is not instrumented (each
# CVODE instance is used by one thread at a time, handed over through the
# thread pool's synchronisation, which TSan sees).
TSAN_B := build/tsan
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer

test-tsan:
	@$(MAKE) --no-print-directory B=$(TSAN_B) CC=clang OPT=-O1 TSAN=0 \
	    SANFLAGS="$(TSAN_FLAGS)" $(TSAN_B)/tests/check_odetensor
	TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1:allocator_may_return_null=1 CK_TIMEOUT_MULTIPLIER=20 \
	    $(TSAN_B)/tests/check_odetensor
	@echo "tsan: clean"

tsan:
	@sh scripts/deps.sh check tsan
	@$(MAKE) --no-print-directory test-tsan

# ---- libFuzzer ------------------------------------------------------------
# The library built with coverage for the fuzzer plus ASan and UBSan (any
# UBSan report aborts), and one binary per target in tests/fuzz/fuzz_<t>.c.
FUZZ_B := build/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_BIN := $(FUZZ_TARGETS:%=$(FUZZ_B)/fuzz_%)
FUZZ_ENV := ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

fuzz-lib:
	@$(MAKE) --no-print-directory B=$(FUZZ_B) CC=$(FUZZ_CC) OPT=-O1 TSAN=0 \
	    SANFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" $(FUZZ_B)/libodetensor.a

$(FUZZ_B)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h fuzz-lib
	$(FUZZ_CC) -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer \
	    -Iinclude -o $@ $< $(FUZZ_B)/libodetensor.a $(LDLIBS_CORE)

fuzz-bin: $(FUZZ_BIN)

# New inputs go to $(FUZZ_B)/corpus/<t> (the first folder); the committed
# seeds in tests/fuzz/<t>/ are only read.
define fuzz_run
	@set -e; for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(FUZZ_B)/corpus/$$t $(FUZZ_B)/artifacts/$$t; \
	    $(FUZZ_ENV) $(FUZZ_B)/fuzz_$$t -max_total_time=$(1) -seed=$(FUZZ_SEED) \
	        -max_len=512 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	        -artifact_prefix=$(FUZZ_B)/artifacts/$$t/ \
	        $(FUZZ_B)/corpus/$$t tests/fuzz/$$t >$(FUZZ_B)/fuzz_$$t.log 2>&1 \
	        || { tail -60 $(FUZZ_B)/fuzz_$$t.log; echo "fuzz $$t: FAILED"; exit 1; }; \
	    echo "fuzz $$t: $$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_B)/fuzz_$$t.log) runs in $(1) s, no finding"; \
	done
endef

# The fuzz build is ASan + UBSan (build/fuzz) whatever SANITIZE says: CI's
# SANITIZE=1 pass would repeat the same runs.
ifeq ($(SANITIZE),1)
test-fuzz:
	@echo "fuzz: skipped under SANITIZE=1 (build/fuzz always runs under ASan + UBSan; make check runs it)"
else
test-fuzz: fuzz-bin
	$(call fuzz_run,$(FUZZ_CHECK_TIME))
endif

fuzz:
	@sh scripts/deps.sh check fuzz
	@$(MAKE) --no-print-directory fuzz-bin
	$(call fuzz_run,$(FUZZ_TIME))


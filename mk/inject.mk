# Allocation-failure injection (issue 6): the library again, compiled with
# -DOT_FAULT_INJECT (src/core/alloc.h counts every allocation and allocating
# SUNDIALS call as a failure point) and always with ASan + UBSan, so LSan can
# check for leaks after each injected failure; tests/inject/ drives it.
#   make test-inject      build and run it (part of make check)

INJ := $(B)/inject
INJ_FLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -O1 -g -pthread -Iinclude -Isrc $(SUN_CFLAGS) \
             -DOT_FAULT_INJECT -fsanitize=address,undefined -fno-sanitize-recover=all \
             -fno-omit-frame-pointer -MMD -MP
INJ_OBJ := $(LIB_SRC:%.c=$(INJ)/obj/%.o) $(INJ)/obj/src/core/fault_inject.o

.PHONY: test-inject

# Both failure drivers run their cases in shards, one process a core at once
# (OT_INJECT_SHARD=s/n: the cases i with i % n == s), each shard's output
# kept in its own log and printed after; any shard failing fails the run.
INJECT_SHARDS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)
# $(call run_shards,binary,env): the shards of binary with env set.
run_shards = rm -f $(1).shard*.log; pids=; \
    for s in $$(seq 0 $$(($(INJECT_SHARDS) - 1))); do \
        OT_INJECT_SHARD=$$s/$(INJECT_SHARDS) $(2) $(1) > $(1).shard$$s.log 2>&1 & pids="$$pids $$!"; \
    done; rc=0; for p in $$pids; do wait $$p || rc=1; done; \
    cat $(1).shard*.log; exit $$rc

$(INJ)/obj/%.o: %.c $(SUN_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(INJ_FLAGS) -c $< -o $@

$(INJ)/obj/tests/inject/%.o: tests/inject/%.c
	@mkdir -p $(dir $@)
	$(CC) $(INJ_FLAGS) $(CHECK_CFLAGS) -Wno-pedantic -c $< -o $@

$(INJ)/libodetensor_inject.a: $(INJ_OBJ)
	rm -f $@
	ar rcs $@ $^

$(INJ)/check_alloc_inject: $(INJ)/obj/tests/inject/check_alloc_inject.o \
                           $(INJ)/obj/tests/inject/solve_cases.o $(INJ)/libodetensor_inject.a \
                           | $(SUN_MEMORY_A)
	$(CC) -fsanitize=address,undefined -o $@ $^ $(CHECK_LIBS) $(LDLIBS_CORE)

# allocator_may_return_null: the library's own overflow checks come first,
# but a real malloc failure must come back as NULL here, not as an ASan abort.
# It is built with ASan + UBSan in every check: under SANITIZE=1 (CI's second
# pass) it would build and run the same binary again, 6 minutes for nothing.
ifeq ($(SANITIZE),1)
test-inject:
	@echo "alloc-inject: skipped under SANITIZE=1 (it always runs under ASan + UBSan; make check runs it)"
else
test-inject: $(INJ)/check_alloc_inject
	@$(call run_shards,$(INJ)/check_alloc_inject,ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:allocator_may_return_null=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
endif

# Every malloc of the process failing in turn, SUNDIALS' own included
# (issue 23, item 3; tests/inject/check_malloc_fail.c replaces the
# allocator, so it links the plain library: ASan owns malloc, and under
# SANITIZE=1 the run says it is skipped).
#   make test-malloc-fail     build and run it (part of make check)
MF_OBJ := $(B)/obj/tests/inject/check_malloc_fail.o $(B)/obj/tests/inject/solve_cases.o
$(MF_OBJ): CHECK_OBJ_FLAGS = $(CHECK_CFLAGS) -Wno-pedantic -fno-builtin

$(B)/tests/check_malloc_fail: $(MF_OBJ) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(MF_OBJ) $(STATIC) $(CHECK_LIBS) $(LDLIBS_CORE)

.PHONY: test-malloc-fail
ifeq ($(SANITIZE),1)
test-malloc-fail:
	@echo "malloc-fail: skipped under SANITIZE=1 (it replaces malloc, which ASan owns); make check runs it"
else ifeq ($(SUNDIALS),system)
test-malloc-fail:
	@echo "malloc-fail: skipped with SUNDIALS=system: Debian's 6.4.1 allocates with the C library and checks few of its mallocs, so memory running out inside it is not caught (RELIABILITY.md)"
else
test-malloc-fail: $(B)/tests/check_malloc_fail
	@$(call run_shards,$(B)/tests/check_malloc_fail,)
endif

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

$(INJ)/obj/%.o: %.c $(SUN_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(INJ_FLAGS) -c $< -o $@

$(INJ)/obj/tests/inject/%.o: tests/inject/%.c
	@mkdir -p $(dir $@)
	$(CC) $(INJ_FLAGS) $(CHECK_CFLAGS) -Wno-pedantic -c $< -o $@

$(INJ)/libodetensor_inject.a: $(INJ_OBJ)
	rm -f $@
	ar rcs $@ $^

$(INJ)/check_alloc_inject: $(INJ)/obj/tests/inject/check_alloc_inject.o $(INJ)/libodetensor_inject.a
	$(CC) -fsanitize=address,undefined -o $@ $^ $(CHECK_LIBS) $(LDLIBS_CORE)

# allocator_may_return_null: the library's own overflow checks come first,
# but a real malloc failure must come back as NULL here, not as an ASan abort.
test-inject: $(INJ)/check_alloc_inject
	ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:allocator_may_return_null=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(INJ)/check_alloc_inject

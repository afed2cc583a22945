/* Private: every allocation odetensor makes goes through these macros, and so
 * does every SUNDIALS call that allocates. In a normal build they are the
 * plain calls (the hook is the constant 0 and folds away). A build with
 * -DOT_FAULT_INJECT (mk/inject.mk) counts each of them as a failure point and
 * can make the k-th one fail, as if memory ran out there: the allocation
 * returns NULL, the SUNDIALS constructor NULL, the SUNDIALS setup call its
 * memory-failure flag. tests/inject/ drives it for every k. */
#ifndef OT_SRC_ALLOC_H
#define OT_SRC_ALLOC_H

#include <stdlib.h>

#ifdef OT_FAULT_INJECT
#include "core/fault_inject.h"
#else
#define ot__inject_fail() 0
#endif

#define OT__MALLOC(size) (ot__inject_fail() ? NULL : malloc(size))
#define OT__CALLOC(count, size) (ot__inject_fail() ? NULL : calloc((count), (size)))
#define OT__REALLOC(ptr, size) (ot__inject_fail() ? NULL : realloc((ptr), (size)))
#define OT__ALIGNED_ALLOC(align, size)                                                   \
    (ot__inject_fail() ? NULL : aligned_alloc((align), (size)))

/* A SUNDIALS constructor (returns NULL when it cannot allocate). */
#define OT__SUN_NEW(call) (ot__inject_fail() ? NULL : (call))
/* A SUNDIALS call that allocates and returns a flag: fail_flag is the value
 * it returns when memory runs out (CV_MEM_FAIL, or nonzero for
 * SUNContext_Create, EAGAIN for pthread_create). */
#define OT__SUN_CALL(call, fail_flag) (ot__inject_fail() ? (fail_flag) : (call))

/* free() of each pointer given (NULLs are fine): teardowns of structs that
 * own many arrays, so each list is written once, where it is freed. */
#define OT__FREE_ALL(...)                                                                \
    do {                                                                                 \
        void *ot__owned_[] = {__VA_ARGS__};                                              \
        for (size_t ot__k_ = 0; ot__k_ < sizeof ot__owned_ / sizeof ot__owned_[0];       \
             ot__k_++)                                                                   \
            free(ot__owned_[ot__k_]);                                                    \
    } while (0)

#endif

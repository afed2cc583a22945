/* Private: SUNDIALS' memory, which odetensor's own build of SUNDIALS
 * (scripts/sundials7.sh) allocates through ot__sun_malloc and friends
 * instead of the C library (its objects are compiled with -Dmalloc=... and
 * so on). SUNDIALS does not check most of its allocations: a NULL from
 * malloc inside it is dereferenced. So here an allocation that fails while
 * a scope is protected (ot__sun_protect) does not return: it marks the
 * scope failed and jumps back out of SUNDIALS to the protect call, which
 * returns OT__SUN_NOMEM. Everything SUNDIALS allocated under the scope is
 * on the scope's list, so the owner then frees it all at once
 * (ot__sun_scope_release) without calling into SUNDIALS again: its objects
 * may be half built. A scope is one SUNContext's worth of SUNDIALS objects
 * (a lanes-mode worker's, a lockstep block's) and is used by one thread at
 * a time.
 *
 * With another SUNDIALS (Debian's 6.4.1, CUDA's, wasm's: OT_SUN_SCOPED not
 * defined) SUNDIALS calls the C library itself; protect is a plain call and
 * an allocation failure inside SUNDIALS stays what SUNDIALS makes of it. */
#ifndef OT_SRC_CORE_SUN_MEMORY_H
#define OT_SRC_CORE_SUN_MEMORY_H

#include <stddef.h>
#include <stdlib.h>

#include "core/alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ot__sun_link {
    struct ot__sun_link *prev, *next;
} ot__sun_link;

typedef struct {
    ot__sun_link head; /* the blocks allocated under the scope, a ring */
    int failed;        /* an allocation failed under it: its objects are dead */
} ot__sun_scope;

/* What ot__sun_protect returns when memory ran out under the scope. */
#define OT__SUN_NOMEM (-1000001)

/* An empty scope (before its first use; a zeroed one is not valid). */
void ot__sun_scope_init(ot__sun_scope *s);

/* fn(arg) with s as this thread's scope: its result, or OT__SUN_NOMEM when
 * an allocation under s failed (then s->failed is set, and what fn had
 * under way is abandoned: it must keep everything it allocates reachable
 * from the scope or from its owner). Protects nest; the innermost scope
 * gets the allocations. */
int ot__sun_protect(ot__sun_scope *s, int (*fn)(void *), void *arg);

/* Frees every block still allocated under s and empties it (failed
 * cleared): after a failure, in place of SUNDIALS' destructors. */
void ot__sun_scope_release(ot__sun_scope *s);

/* The allocator SUNDIALS' objects call (and odetensor, for memory SUNDIALS
 * frees, or that a SUNDIALS call in flight must not leak): the C library's
 * contract, except that under a protected scope a failure does not return. */
void *ot__sun_malloc(size_t size);
void *ot__sun_calloc(size_t count, size_t size);
void *ot__sun_realloc(void *ptr, size_t size);
void ot__sun_free(void *ptr);

/* Memory that SUNDIALS frees, or that odetensor frees but SUNDIALS
 * allocated, or that must go with a scope that fails (the contents of
 * odetensor's own vectors, matrices and solvers): SUNDIALS' allocator when
 * it has ours, else the C library's. The RAW forms are no failure points
 * of the injection build (alloc.h): clones SUNDIALS makes, which 6.4.1
 * crashes on when they fail. */
#ifdef OT_SUN_SCOPED
#define OT__SUN_RAW_MALLOC(size) ot__sun_malloc(size)
#define OT__SUN_RAW_CALLOC(count, size) ot__sun_calloc((count), (size))
#define OT__SUN_FREE(ptr) ot__sun_free(ptr)
#else
#define OT__SUN_RAW_MALLOC(size) malloc(size)
#define OT__SUN_RAW_CALLOC(count, size) calloc((count), (size))
#define OT__SUN_FREE(ptr) free(ptr)
#endif
#define OT__SUN_MALLOC(size) (ot__inject_fail() ? NULL : OT__SUN_RAW_MALLOC(size))
#define OT__SUN_CALLOC(count, size)                                                      \
    (ot__inject_fail() ? NULL : OT__SUN_RAW_CALLOC((count), (size)))

#ifdef __cplusplus
}
#endif

#endif

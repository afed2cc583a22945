/* Private: vector clones that survive an allocation failure. SUNDIALS
 * 6.4.1's N_VClone and N_VCloneEmpty write to the clone before checking it
 * for NULL (sundials_nvector.c), so a failed allocation inside them crashes,
 * and N_VCloneVectorArray leaks a vector when one clone fails. odetensor's
 * own clones go through these instead (clones made inside CVODE cannot). */
#ifndef OT_SRC_NV_CLONE_H
#define OT_SRC_NV_CLONE_H

#include <sundials/sundials_nvector.h>

#include "core/sun_memory.h"

static inline N_Vector ot__nv_clone_any(N_Vector w, int empty)
{
    N_Vector v = OT__SUN_NEW(empty ? w->ops->nvcloneempty(w) : w->ops->nvclone(w));
    if (v != NULL)
        v->sunctx = w->sunctx;
    return v;
}

/* A clone of w with its own data; NULL when out of memory. Ownership: the
 * caller's (N_VDestroy). */
static inline N_Vector ot__nv_clone(N_Vector w) { return ot__nv_clone_any(w, 0); }

/* count clones of w (empty: without data); NULL when out of memory, with
 * nothing left allocated. Ownership: the caller's (N_VDestroyVectorArray). */
static inline N_Vector *ot__nv_clone_array(int count, N_Vector w, int empty)
{
    /* SUNDIALS frees the array (N_VDestroyVectorArray): its allocator. */
    N_Vector *vs =
        count > 0 ? (N_Vector *)OT__SUN_MALLOC((size_t)count * sizeof *vs) : NULL;
    for (int j = 0; vs != NULL && j < count; j++)
        if ((vs[j] = ot__nv_clone_any(w, empty)) == NULL) {
            N_VDestroyVectorArray(vs, j);
            vs = NULL;
        }
    return vs;
}

#endif

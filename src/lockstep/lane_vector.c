/* Lockstep: the per-lane WRMS norm. A serial vector over [n, nbatch] whose
 * norm is the maximum over lanes of each lane's own WRMS norm, so every lane
 * meets its own tolerance; plain CVODE would average one bad lane away by
 * sqrt(nbatch). */
#include <math.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/sun_memory.h"
#include <nvector/nvector_serial.h>

#include "lockstep/lockstep.h"

/* Serial content (same leading fields, so the serial ops work on it) plus
 * the lane size and the norm choice. */
typedef struct {
    sunindextype length;
    sunbooleantype own_data;
    sunrealtype *data;
    sunindextype lane_n;
    int plain;
    const unsigned char *stopped; /* [nbatch]: lanes left out of the norm */
    ot__lane_blame *blame;        /* which lane the norms are made of, or NULL */
} lane_content;

static lane_content *content(N_Vector v) { return (lane_content *)v->content; }

/* Folds per-lane sums of squares into the norm: the max over lanes of
 * sqrt(sum / n), NaN if any lane is NaN (fmax would hide it). */
static sunrealtype lane_norm(N_Vector x, N_Vector w, N_Vector id)
{
    const lane_content *c = content(x);
    const sunrealtype *xd = c->data, *wd = content(w)->data;
    const sunrealtype *m = id ? content(id)->data : NULL;
    const sunindextype n = c->lane_n, nbatch = c->length / n;
    if (c->plain) {
        sunrealtype sum = 0;
        for (sunindextype i = 0; i < c->length; i++)
            if (!m || m[i] > 0)
                sum += (xd[i] * wd[i]) * (xd[i] * wd[i]);
        return sqrt(sum / (sunrealtype)c->length);
    }
    sunrealtype worst = 0, next = 0; /* the largest lane sum, and the one below */
    sunindextype wb = -1;
    for (sunindextype b = 0; b < nbatch; b++) {
        /* A lane stopped by its root stands still and its outputs are done:
         * its stale step history must not hold back the others. */
        if (c->stopped && c->stopped[b])
            continue;
        sunrealtype sum = 0;
        for (sunindextype i = b * n; i < (b + 1) * n; i++)
            if (!m || m[i] > 0)
                sum += (xd[i] * wd[i]) * (xd[i] * wd[i]);
        if (isnan(sum)) {
            wb = b;
            worst = sum;
            break;
        }
        if (sum > worst || wb < 0) {
            next = wb < 0 ? next : worst;
            worst = sum;
            wb = b;
        } else if (sum > next) {
            next = sum;
        }
    }
    if (c->blame && wb >= 0) { /* a failing step is blamed on the lane it waited for */
        c->blame->last = wb;
        /* Counted where that lane's error stands out (twice the next lane's
         * norm): a norm of the state itself (CVODE's accuracy check, about
         * 1 / rtol in every lane) is no lane's doing. */
        if (isnan(worst) || worst > 4 * next)
            c->blame->count[wb]++;
    }
    return isnan(worst) ? worst : sqrt(worst / (sunrealtype)n);
}

static sunrealtype wrms(N_Vector x, N_Vector w) { return lane_norm(x, w, NULL); }

static sunrealtype wrms_mask(N_Vector x, N_Vector w, N_Vector id)
{
    return lane_norm(x, w, id);
}

/* The clone ops allocate with SUNDIALS' allocator (it frees what they make:
 * N_VDestroy_Serial) and outside the injection points of alloc.h: CVODE calls them
 * through N_VClone, which in SUNDIALS 6.4.1 crashes on a NULL clone (nv_clone.h), so a
 * failure injected here would only test that crash. odetensor's own clones (ot__nv_clone)
 * count as points. */
static N_Vector clone_empty(N_Vector w)
{
    N_Vector v = N_VNewEmpty(w->sunctx);
    lane_content *c = v ? OT__SUN_RAW_MALLOC(sizeof *c) : NULL;
    if (c == NULL || N_VCopyOps(w, v) != 0) {
        OT__SUN_FREE(c);
        N_VDestroy(v);
        return NULL;
    }
    *c = *content(w);
    c->own_data = SUNFALSE;
    c->data = NULL;
    v->content = c;
    return v;
}

static N_Vector clone(N_Vector w)
{
    N_Vector v = clone_empty(w);
    if (v == NULL)
        return NULL;
    lane_content *c = content(v);
    c->data = OT__SUN_RAW_MALLOC((size_t)c->length * sizeof *c->data);
    if (c->data == NULL) {
        N_VDestroy(v);
        return NULL;
    }
    c->own_data = SUNTRUE;
    return v;
}

void ot__lockstep_vector_blame(N_Vector v, ot__lane_blame *blame)
{
    content(v)->blame = blame;
}

N_Vector ot__lockstep_vector_new(sunindextype n, sunindextype nbatch, int plain_norm,
                                 const unsigned char *stopped, SUNContext ctx)
{
    N_Vector v = OT__SUN_NEW(N_VNew_Serial(n * nbatch, ctx));
    lane_content *c = v ? OT__SUN_MALLOC(sizeof *c) : NULL;
    if (c == NULL) {
        N_VDestroy(v);
        return NULL;
    }
    c->length = n * nbatch;
    c->own_data = SUNTRUE;
    c->data = N_VGetArrayPointer(v);
    c->lane_n = n;
    c->plain = plain_norm;
    c->stopped = stopped;
    c->blame = NULL;
    OT__SUN_FREE(v->content);
    v->content = c;
    v->ops->nvclone = clone;
    v->ops->nvcloneempty = clone_empty;
    ot__lockstep_set_norm(v, wrms, wrms_mask);
    return v;
}

void ot__lockstep_set_norm(N_Vector v, sunrealtype (*wrms)(N_Vector, N_Vector),
                           sunrealtype (*wrms_mask)(N_Vector, N_Vector, N_Vector))
{
    v->ops->nvwrmsnorm = wrms;
    v->ops->nvwrmsnormmask = wrms_mask;
    /* Fused and local variants would bypass ours; without them SUNDIALS'
     * generic layer falls back to the ops above. */
    v->ops->nvwrmsnormvectorarray = NULL;
    v->ops->nvwrmsnormmaskvectorarray = NULL;
    v->ops->nvwsqrsumlocal = NULL;
    v->ops->nvwsqrsummasklocal = NULL;
}

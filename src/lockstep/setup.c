/* Lockstep mode: the backend-neutral setup of a block's integrator, once
 * the backend made its state vector: the clones, the initial state, the
 * integrator with its tolerances (per-lane vectors), linear solver, roots
 * with every lane's directions, and sensitivity or adjoint parts; and
 * freeing it all. The loops that drive it are loops.c's. */
#include <cvodes/cvodes.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "lockstep/lockstep.h"
#include "kit/adjoint.h"
#include "kit/cv_setup.h"
#include "kit/integ.h"
#include "kit/nv_clone.h"
#include "kit/progress.h"
#include "kit/sens.h"

/* ---- Setup ---------------------------------------------------------------- */

void ot__lockstep_init(ot__lockstep *L, const ot__plan *pl,
                       const ot__lockstep_backend *be)
{
    memset(L, 0, sizeof *L);
    ot__sun_scope_init(&L->scope);
    L->be = be;
    L->plan = pl;
    L->cb.cancel = pl->prog ? &pl->prog->cancelled : NULL;
    L->cb.prog = pl->prog;
    L->n = pl->n;
    L->nbatch = pl->nbatch;
    L->np = pl->np;
    L->nsv = pl->kind == OT__SENS                 ? pl->ns
             : pl->kind == OT__ADJ && !pl->has_y0 ? pl->np
                                                  : 0;
    L->rows = pl->rows;
}

void ot__lockstep_free_common(ot__lockstep *L)
{
    /* Memory ran out inside SUNDIALS: its objects may be half built; the
     * scope frees them (and the adjoint's parts) without SUNDIALS. */
    if (L->scope.failed) {
        ot__sun_scope_release(&L->scope);
    } else {
        const ot__ig_parts parts = {L->yS, L->atolS, (int)L->nsv, L->LS,
                                    L->A,  L->NLS,   L->NLSsens};
        ot__ig_free_all(&L->ig, &parts);
        N_VDestroy(L->y);
        N_VDestroy(L->yout);
        N_VDestroy(L->yr);
        N_VDestroy(L->ewt);
        N_VDestroy(L->atolv);
        SUNContext_Free(&L->ctx);
        ot__sun_scope_release(&L->scope); /* what SUNDIALS itself left */
    }
    OT__FREE_ALL(L->stopped, L->rootsfound, L->at, L->next, L->knext, L->scratch);
}

/* The per-lane atol vector from ode->atol_vec into L->atolv. The host
 * copies here and below are SUNDIALS' allocator's: SUNDIALS calls run
 * while they live, and a scope that fails there frees them. */
static int atol_vector(ot__lockstep *L)
{
    const int64_t n = L->n;
    double *host = OT__SUN_MALLOC((size_t)(n * L->nbatch) * sizeof *host);
    if (host == NULL || (L->atolv = ot__nv_clone(L->y)) == NULL) {
        OT__SUN_FREE(host);
        return OT_ERR_NOMEM;
    }
    for (int64_t b = 0; b < L->nbatch; b++)
        memcpy(host + b * n, L->plan->ode->atol_vec, (size_t)n * sizeof *host);
    const int st = L->be->upload(L, L->atolv, host);
    OT__SUN_FREE(host);
    return st;
}

/* Each lane's sensitivity tolerances (kit/sens.h) into L->atolS. */
static int sens_atol_vectors(ot__lockstep *L)
{
    const int64_t n = L->n, np = L->np;
    double *host = OT__SUN_MALLOC((size_t)(n * L->nbatch) * sizeof *host);
    if (host == NULL || (L->atolS = ot__nv_clone_array((int)L->nsv, L->y, 0)) == NULL) {
        OT__SUN_FREE(host);
        return OT_ERR_NOMEM;
    }
    int st = OT_OK;
    for (int64_t j = 0; j < L->nsv && st == OT_OK; j++) {
        ot__sens_atol(L->plan->ode, L->p, np, j, n, L->nbatch, host);
        st = L->be->upload(L, L->atolS[j], host);
    }
    OT__SUN_FREE(host);
    return st;
}

/* CVodeInit on L->y and every setting, through L->be's callbacks. */
static int configure(ot__lockstep *L)
{
    const ot__plan *pl = L->plan;
    const ot_ode *ode = pl->ode;
    const ot__lockstep_backend *be = L->be;
    const ot__lockstep_callbacks *c = be->callbacks;
    const ot__ig_callbacks cbs = {c->rhs, c->rhs_explicit, c->jac, c->root};
    int f = ot__ig_create(&L->ig, ode, &cbs, pl->t0, L->y, L->ctx);
    void *cv = L->ig.mem;
    if (!f && ode->atol_vec) {
        const int st = atol_vector(L);
        if (st != OT_OK)
            return st;
    }
    if (!f && L->ig.m->implicit)
        be->make_linear(L);
    int *dir = NULL; /* every lane's roots: the problem's directions */
    if (!f && ode->root_dir) {
        if ((dir = OT__SUN_MALLOC((size_t)(ode->nroots * L->nbatch) * sizeof *dir)) ==
            NULL)
            return OT_ERR_NOMEM;
        for (int64_t k = 0; k < ode->nroots * L->nbatch; k++)
            dir[k] = ode->root_dir[k % ode->nroots];
    }
    /* The block matrix has no CVODE difference quotients: ours always. */
    f = f ? f
          : ot__ig_setup(&L->ig, pl, L, &L->cb, L->atolv, L->A, L->LS, c->jac, L->y,
                         L->ctx, &L->NLS, ode->nroots * L->nbatch, c->root, dir);
    OT__SUN_FREE(dir);
    if (!f && pl->kind == OT__SENS) {
        f = OT__SUN_CALL(
            CVodeSensInit(cv, (int)L->nsv, CV_STAGGERED, be->callbacks->sens_rhs, L->yS),
            CV_MEM_FAIL);
        const int st = f || !ot__sens_estimated(ode) ? OT_OK : sens_atol_vectors(L);
        if (st != OT_OK)
            return st;
        f = f ? f
              : ot__cv_sens_setup(cv, ode, (int)L->nsv, L->y, L->atolS, L->ctx,
                                  &L->NLSsens);
    }
    if (!f && pl->kind == OT__ADJ)
        f = OT__SUN_CALL(CVodeAdjInit(cv, OT__ADJ_STEPS, CV_HERMITE), CV_MEM_FAIL);
    if (f == CV_MEM_FAIL)
        return OT_ERR_NOMEM;
    return f ? OT_ERR_SOLVER : OT_OK;
}

int ot__lockstep_finish_setup(ot__lockstep *L)
{
    if (L->y == NULL)
        return OT_ERR_NOMEM;
    L->yout = ot__nv_clone(L->y);
    L->ewt = L->yout ? ot__nv_clone(L->y) : NULL;
    if (L->ewt == NULL)
        return OT_ERR_NOMEM;
    /* Sensitivities, or dy0/dp for the adjoint when init computes y0. */
    if (L->nsv > 0 && (L->yS = ot__nv_clone_array((int)L->nsv, L->y, 0)) == NULL)
        return OT_ERR_NOMEM;
    const int st = L->be->initial_state(L);
    if (st != OT_OK)
        return st;
    return configure(L);
}

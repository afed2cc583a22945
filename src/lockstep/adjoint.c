/* Lockstep on the CPU: gradients by CVODES' adjoint method for a block of
 * lanes at once. The forward pass is the block's own lockstep integration
 * with checkpoints (CVodeF); the backward problem is one more lane vector
 * [n, nbatch] (lambda, with the per-lane norm: every lane meets the
 * tolerance), its Jacobian the block-diagonal matrix of -J_b^T and its
 * quadratures a lane vector [np, nbatch]. The loss, the backward arithmetic
 * and the gradient tensors are kit/adjoint.c's, as in lanes mode. */
#include <cvodes/cvodes.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "core/alloc.h"
#include "lockstep/lockstep.h"
#include "run/adjoint.h"
#include "kit/adjoint.h"
#include "kit/advance.h"
#include "kit/dq.h"
#include "kit/nv_clone.h"
#include "kit/sens.h"
#include "kit/sun_compat.h"
#include "tensor/tensor_impl.h"

/* The block's backward parts; each array its own allocation (callbacks
 * write into some). */
typedef struct {
    ot__lockstep *L;
    int which;
    N_Vector yB, qB;
    SUNMatrix AB;
    SUNLinearSolver LSB;
    SUNNonlinearSolver NLSB;
    double *J, *D;        /* [n, n, nbatch], [n, np, nbatch] */
    double *f0, *f1, *yw; /* [n, nbatch]: difference quotients */
    double *pp;           /* [np, nbatch]: perturbed params */
    double *dgdy;         /* [n, nbatch, nt]: dg_i/dy of every lane */
    double *gp, *loss;    /* [np, nbatch], [nbatch] */
    double *point;        /* ot__adj_point's scratch */
    N_Vector yQ;          /* [1, nbatch]: the integral term, a forward quadrature */
    double *dq;           /* [n + np]: one lane's integrand derivatives */
    int jac_first, dfdp_first;
} adj;

/* ---- Derivatives of every lane at (t, y) ----------------------------------- */

/* rhs of every lane at (t, y, p) into f, with lockstep's rules (a lane
 * whose rhs fails leaves the block). */
static int call_rhs(ot__lockstep *L, double t, const double *y, const double *p,
                    double *f)
{
    return ot__lockstep_call_rhs(L, 0, t, y, p, f);
}

/* A stopped lane's block of v ([rows, nbatch]) is zero: it stands still. */
static void zero_stopped(const ot__lockstep *L, double *v, int64_t rows)
{
    for (int64_t b = 0; b < L->nbatch; b++)
        if (L->stopped[b])
            memset(v + b * rows, 0, (size_t)rows * sizeof *v);
}

/* Every lane's J at (t, y) into a->J: the user's, or central differences of
 * rhs, state j of every lane at once (steps as in lanes/adjoint.c). */
static int jacobian(adj *a, double t, const double *y)
{
    ot__lockstep *L = a->L;
    const ot_ode *ode = L->plan->ode;
    const int64_t n = L->n, nb = L->nbatch;
    int rc = 0;
    if (ode->jac) {
        rc = ot__derivs_jac(&L->cb, ode, t, ot__view_compact(y, n, nb),
                            ot__view_compact(L->p, L->np, nb), a->J, nb, L->lane0,
                            &a->jac_first);
    } else {
        memcpy(a->yw, y, (size_t)(n * nb) * sizeof *y);
        for (int64_t j = 0; rc == 0 && j < n; j++) {
            for (int64_t b = 0; b < nb; b++) {
                const int64_t k = b * n + j;
                L->inc[b] = ot__adj_dq_step(ode, j, y[k]);
                a->yw[k] = y[k] + L->inc[b];
            }
            rc = call_rhs(L, t, a->yw, L->p, a->f0);
            for (int64_t b = 0; b < nb; b++)
                a->yw[b * n + j] = y[b * n + j] - L->inc[b];
            if (rc == 0)
                rc = call_rhs(L, t, a->yw, L->p, a->f1);
            L->dq_rhs_evals += 2;
            for (int64_t b = 0; b < nb; b++) {
                a->yw[b * n + j] = y[b * n + j];
                for (int64_t i = 0; rc == 0 && i < n; i++)
                    a->J[b * n * n + j * n + i] =
                        (a->f0[b * n + i] - a->f1[b * n + i]) / (2 * L->inc[b]);
            }
        }
    }
    if (rc == 0)
        zero_stopped(L, a->J, n * n);
    return rc;
}

/* The integrand of running lane b at (t, y_b): q into *q, its derivatives
 * into a->dq (d q/dy, then d q/dp). */
static int integrand(adj *a, int64_t b, double t, const double *y, double *q)
{
    ot__lockstep *L = a->L;
    return ot__adj_integrand(L->plan, &L->cb, L->lane0 + b, t, y + b * L->n,
                             L->p + b * L->np, q, a->dq, a->dq + L->n);
}

/* Lane b's integral term failed for good (its NaN retries spent, or < 0):
 * it leaves the block alone and the block's callbacks go on. */
static void integrand_failed(ot__lockstep *L, int64_t b)
{
    ot__lockstep_lane_fails(L, b, OT_ERR_CALLBACK, L->cb.msg);
    L->cb.failed = 0;
    L->cb.nan_count = 0;
    L->cb.msg[0] = '\0';
}

/* The forward problem's quadrature: its user data is the block. A retry
 * (> 0) is the block's; a lane whose integrand fails leaves it. */
static int quad_f(sunrealtype t, N_Vector y, N_Vector yQdot, void *ud)
{
    ot__lockstep *L = ud;
    adj *a = L->adj;
    double *q = N_VGetArrayPointer(yQdot);
    if (ot__cb_stopped(&L->cb))
        return -1;
    for (int64_t b = 0; b < L->nbatch; b++) {
        q[b] = 0;
        const int rc =
            L->stopped[b] ? 0 : integrand(a, b, t, N_VGetArrayPointer(y), &q[b]);
        if (rc > 0)
            return rc;
        if (rc < 0) {
            integrand_failed(L, b);
            q[b] = 0;
        }
    }
    return 0;
}

/* lambda' = -J^T lambda, - dq/dy with an integral term. */
static int rhs_b(sunrealtype t, N_Vector y, N_Vector yB, N_Vector yBdot, void *ud)
{
    adj *a = ud;
    ot__lockstep *L = a->L;
    const int64_t n = L->n;
    const double *yd = N_VGetArrayPointer(y), *lam = N_VGetArrayPointer(yB);
    double *out = N_VGetArrayPointer(yBdot);
    int rc = jacobian(a, t, yd);
    for (int64_t b = 0; rc == 0 && b < L->nbatch; b++) {
        ot__adj_rhs(a->J + b * n * n, lam + b * n, out + b * n, n);
        double q;
        if (!L->plan->loss.integrand || L->stopped[b])
            continue;
        if ((rc = integrand(a, b, t, yd, &q)) < 0) { /* this lane alone */
            integrand_failed(L, b);
            memset(out + b * n, 0, (size_t)n * sizeof *out);
            rc = 0;
            continue;
        }
        for (int64_t j = 0; rc == 0 && j < n; j++)
            out[b * n + j] -= a->dq[j];
    }
    return rc;
}

static int jac_b(sunrealtype t, N_Vector y, N_Vector yB, N_Vector fyB, SUNMatrix JB,
                 void *ud, N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)yB, (void)fyB, (void)t1, (void)t2, (void)t3;
    adj *a = ud;
    const int64_t n = a->L->n;
    const int rc = jacobian(a, t, N_VGetArrayPointer(y));
    double *blocks = ot__lockstep_block_data(JB);
    for (int64_t b = 0; rc == 0 && b < a->L->nbatch; b++)
        ot__adj_jac(a->J + b * n * n, blocks + b * n * n, n);
    return rc;
}

/* q' = -lambda^T df/dp in every lane: the user's df/dp, or central
 * differences in parameter j of every lane at once. */
static int quad_b(sunrealtype t, N_Vector y, N_Vector yB, N_Vector qBdot, void *ud)
{
    adj *a = ud;
    ot__lockstep *L = a->L;
    const ot_ode *ode = L->plan->ode;
    const int64_t n = L->n, np = L->np, nb = L->nbatch;
    const double *yd = N_VGetArrayPointer(y), *lam = N_VGetArrayPointer(yB);
    double *q = N_VGetArrayPointer(qBdot);
    int rc = 0;
    if (ode->dfdp) {
        rc = ot__derivs_dfdp(&L->cb, ode, t, ot__view_compact(yd, n, nb),
                             ot__view_compact(L->p, np, nb), a->D, nb, L->lane0,
                             &a->dfdp_first);
        for (int64_t b = 0; rc == 0 && b < nb; b++)
            ot__adj_quad(a->D + b * n * np, lam + b * n, q + b * np, n, np);
    } else {
        memcpy(a->pp, L->p, (size_t)(np * nb) * sizeof *a->pp);
        for (int64_t j = 0; rc == 0 && j < np; j++) {
            for (int64_t b = 0; b < nb; b++)
                a->pp[b * np + j] = L->p[b * np + j] + ot__fd_step(L->p[b * np + j]);
            rc = call_rhs(L, t, yd, a->pp, a->f0);
            for (int64_t b = 0; b < nb; b++)
                a->pp[b * np + j] = L->p[b * np + j] - ot__fd_step(L->p[b * np + j]);
            if (rc == 0)
                rc = call_rhs(L, t, yd, a->pp, a->f1);
            for (int64_t b = 0; b < nb; b++) {
                a->pp[b * np + j] = L->p[b * np + j];
                double s = 0;
                for (int64_t i = 0; i < n; i++)
                    s += lam[b * n + i] * (a->f0[b * n + i] - a->f1[b * n + i]);
                q[b * np + j] = -s / (2 * ot__fd_step(L->p[b * np + j]));
            }
        }
    }
    for (int64_t b = 0; rc == 0 && L->plan->loss.integrand && b < nb; b++) {
        double qq;
        if (L->stopped[b] || (rc = integrand(a, b, t, yd, &qq)) != 0)
            continue;
        for (int64_t j = 0; j < np; j++)
            q[b * np + j] -= a->dq[n + j];
    }
    if (rc == 0)
        zero_stopped(L, q, np);
    return rc;
}

/* ---- Setup and teardown ---------------------------------------------------- */

static void adj_free(adj *a)
{
    SUNLinSolFree(a->LSB);
    SUNMatDestroy(a->AB);
    SUNNonlinSolFree(a->NLSB);
    N_VDestroy(a->yB);
    N_VDestroy(a->qB);
    N_VDestroy(a->yQ);
    double *arrays[] = {a->J,  a->D,    a->f0,   a->f1,    a->yw, a->pp,
                        a->gp, a->loss, a->dgdy, a->point, a->dq};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++)
        free(arrays[k]);
}

static int adj_alloc(adj *a, ot__lockstep *L)
{
    const ot__plan *pl = L->plan;
    const size_t n = (size_t)L->n, np = (size_t)L->np, nb = (size_t)L->nbatch;
    a->L = L;
    a->which = -1;
    a->jac_first = a->dfdp_first = 1;
    double **const slots[11] = {&a->J,  &a->D,    &a->f0,   &a->f1,    &a->yw, &a->pp,
                                &a->gp, &a->loss, &a->dgdy, &a->point, &a->dq};
    const size_t sizes[11] = {n * n * nb,
                              n * np * nb + 1,
                              n * nb,
                              n * nb,
                              n * nb,
                              np * nb + 1,
                              np * nb + 1,
                              nb,
                              n * nb * (size_t)pl->nt,
                              (size_t)ot__adj_point_scratch(pl),
                              n + np};
    for (int i = 0; i < 11; i++)
        if ((*slots[i] = OT__MALLOC(sizes[i] * sizeof(double))) == NULL)
            return OT_ERR_NOMEM;
    a->yB = ot__nv_clone(L->y); /* the per-lane norm comes with the clone */
    if (a->yB == NULL)
        return OT_ERR_NOMEM;
    if (np > 0 && (a->qB = ot__lockstep_vector_new((sunindextype)np, (sunindextype)nb, 0,
                                                   L->stopped, L->ctx)) == NULL)
        return OT_ERR_NOMEM;
    if (pl->loss.integrand) { /* the integral term: a forward quadrature, per-lane norm */
        if ((a->yQ = ot__lockstep_vector_new(1, (sunindextype)nb, 0, L->stopped,
                                             L->ctx)) == NULL)
            return OT_ERR_NOMEM;
        const int f = ot__adj_integral_init(L->ig.mem, quad_f, a->yQ, pl->ode);
        if (f)
            return f == CV_MEM_FAIL ? OT_ERR_NOMEM : OT_ERR_SOLVER;
    }
    return OT_OK;
}

/* The backward problem at tB0 from lambda = a->yB, q = 0. */
static int backward_make(adj *a, double tB0)
{
    ot__lockstep *L = a->L;
    const ot_ode *ode = L->plan->ode;
    const int bdf = ode->method == OT_BDF, np = (int)L->np;
    if (np)
        N_VConst(0.0, a->qB);
    int f = OT__SUN_CALL(CVodeCreateB(L->ig.mem, bdf ? CV_BDF : CV_ADAMS, &a->which),
                         CV_MEM_FAIL);
    f = f ? f
          : OT__SUN_CALL(CVodeInitB(L->ig.mem, a->which, rhs_b, tB0, a->yB), CV_MEM_FAIL);
    f = f ? f : ot__adj_settings_b(L->ig.mem, a->which, ode, a);
    if (!f && bdf) {
        a->AB = ot__lockstep_block_matrix_new(L->n, L->nbatch, L->ctx);
        a->LSB = a->AB ? ot__lockstep_block_solver_new(L->n, L->nbatch, L->ctx) : NULL;
        f = a->LSB ? CVodeSetLinearSolverB(L->ig.mem, a->which, a->LSB, a->AB)
                   : CV_MEM_FAIL;
        f = f ? f : CVodeSetJacFnB(L->ig.mem, a->which, jac_b);
    } else if (!f) {
        a->NLSB = OT__SUN_NEW(SUNNonlinSol_FixedPoint(a->yB, 0, L->ctx));
        f = a->NLSB ? CVodeSetNonlinearSolverB(L->ig.mem, a->which, a->NLSB)
                    : CV_MEM_FAIL;
    }
    if (!f && np) {
        f = OT__SUN_CALL(CVodeQuadInitB(L->ig.mem, a->which, quad_b, a->qB), CV_MEM_FAIL);
        f = f ? f : ot__adj_quad_settings_b(L->ig.mem, a->which, ode);
    }
    return f;
}

/* ---- The block's hooks for the two passes (run/adjoint.c) ------------------ */

static int backward_make_unit(ot__unit *u, double tcur)
{
    ot__lockstep *L = u->mode;
    return backward_make(L->adj, tcur);
}

static const double *dy0dp(ot__unit *u, int64_t j)
{
    ot__lockstep *L = u->mode;
    return N_VGetArrayPointer(L->yS[j]);
}

void ot__lockstep_adjoint(ot__lockstep *L, const ot__sink *sk)
{
    const ot__plan *pl = L->plan;
    ot_solution *sol = sk->sol;
    adj a;
    memset(&a, 0, sizeof a);
    /* For quad_f, which gets the block; unset before returning. */
    /* cppcheck-suppress autoVariables */
    L->adj = &a;
    if (adj_alloc(&a, L) != OT_OK) {
        snprintf(L->cb.msg, sizeof L->cb.msg, "cannot allocate the adjoint's arrays");
        ot__lockstep_fail_batch(L, sol, OT_ERR_NOMEM, pl->t0, L->cb.msg);
        adj_free(&a);
        L->unit.ops->stats(&L->unit);
        return;
    }
    ot__run_adj ra = {.loss = a.loss,
                      .gp = a.gp,
                      .dgdy = a.dgdy,
                      .point = a.point,
                      .yB = a.yB,
                      .qB = a.qB,
                      .yQ = a.yQ,
                      .which = &a.which,
                      .backward_make = backward_make_unit,
                      .dy0dp = dy0dp};
    ot__run_adjoint(&L->unit, &ra);
    adj_free(&a);
    L->adj = NULL;
}

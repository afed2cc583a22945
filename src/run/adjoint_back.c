/* The adjoint's backward problem over a unit's k lanes (adjoint.h): its
 * callbacks, scratch and CVODES setup, once for every mode. Lanes are
 * columns: lane b's state is y[b n .. b n + n), its Jacobian block
 * J[b n n ..], and the arithmetic of a lane is the same whatever k is, so
 * one lane of lockstep computes what lanes mode does. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "core/alloc.h"
#include "core/sun_memory.h"
#include "kit/adjoint.h"
#include "kit/dq.h"
#include "kit/nv_clone.h"
#include "kit/sens.h"
#include "kit/sun_compat.h"
#include "run/adjoint.h"
#include "tensor/tensor_impl.h"

/* A lane that is not running stands still: its block of v ([rows, k]) is
 * zero. (In a one-lane unit the lane runs whenever a pass does.) */
static void zero_stopped(const ot__run_adj *a, double *v, int64_t rows)
{
    for (int64_t b = 0; b < a->k; b++)
        if (a->u->stopped[b] != OT__LANE_RUNNING)
            memset(v + b * rows, 0, (size_t)rows * sizeof *v);
}

/* rhs of every lane at y + inc e_j into f0 and at y - inc e_j into f1
 * (a->inc: each lane's step). */
static int dq_column(ot__run_adj *a, double t, const double *y, int64_t j)
{
    const int64_t n = a->n, k = a->k;
    for (int64_t b = 0; b < k; b++)
        a->yw[b * n + j] = y[b * n + j] + a->inc[b];
    int rc = a->ops->rhs(a, t, a->yw, a->u->p, a->f0);
    for (int64_t b = 0; b < k; b++)
        a->yw[b * n + j] = y[b * n + j] - a->inc[b];
    if (rc == 0)
        rc = a->ops->rhs(a, t, a->yw, a->u->p, a->f1);
    *a->dq_evals += 2;
    for (int64_t b = 0; b < k; b++)
        a->yw[b * n + j] = y[b * n + j];
    return rc;
}

/* Whether lane b's difference f0 - f1 is lost in rounding: its
 * roundoff (eps |f|) above 1e-9 of it, or no difference at all. Then its
 * step grows to bring the roundoff to 1e-11 of the difference (the
 * difference grows with the step), at most cbrt(eps) max(|y|_inf, atol_j)
 * of the lane. @return 1 when the step grew. */
static int regrow(ot__run_adj *a, int64_t b, const double *y, int64_t j)
{
    const ot_ode *ode = a->plan->ode;
    const int64_t n = a->n;
    double R = 0, D = 0, ynorm = 0;
    for (int64_t i = 0; i < n; i++) {
        const double f0 = a->f0[b * n + i], f1 = a->f1[b * n + i];
        R = fmax(R, DBL_EPSILON * (fabs(f0) + fabs(f1)));
        D = fmax(D, fabs(f0 - f1));
        ynorm = fmax(ynorm, fabs(y[b * n + i]));
    }
    const double atol = ode->atol_vec ? ode->atol_vec[j] : ode->atol,
                 cap = cbrt(DBL_EPSILON) * fmax(ynorm, atol);
    if (!(R > 1e-9 * D) || a->inc[b] >= cap || R == 0)
        return 0;
    a->inc[b] = D > 0 ? fmin(cap, a->inc[b] * (R / D) / 1e-11) : cap;
    return 1;
}

/* Every lane's J at (t, y) into a->J: the user's, or central differences
 * of rhs, state j of every lane at once. J enters the backward rhs itself,
 * not only Newton's matrix: CVODE's forward differences (error about 1e-8
 * of J) made the backward problem of Robertson at rtol 1e-10 take 100,000
 * steps between two outputs; central ones (about 1e-11) do not. Steps:
 * ot__adj_dq_step, grown where the difference is lost in rounding (a state
 * far below the others, whose rhs terms it is subtracted from: an oral
 * dose's gut amount at 1e-37 beside a central amount of 1 gave J[1, 0]
 * with half its digits, and the backward problem of a PK model ran out of
 * steps at rtol 1e-8). */
static int jacobian(ot__run_adj *a, double t, const double *y)
{
    const ot__unit *u = a->u;
    const ot_ode *ode = a->plan->ode;
    const int64_t n = a->n, k = a->k;
    int rc = 0;
    if (ode->jac) {
        rc = ot__derivs_jac(u->cb, ode, t, ot__view_compact(y, n, k),
                            ot__view_compact(u->p, a->np, k), a->J, k, u->lane0,
                            &a->jac_first);
    } else {
        memcpy(a->yw, y, (size_t)(n * k) * sizeof *y);
        for (int64_t j = 0; rc == 0 && j < n; j++) {
            for (int64_t b = 0; b < k; b++)
                a->inc[b] = ot__adj_dq_step(ode, j, y[b * n + j]);
            rc = dq_column(a, t, y, j);
            int grew = 0;
            for (int64_t b = 0; rc == 0 && b < k; b++)
                grew |= u->stopped[b] == OT__LANE_RUNNING && regrow(a, b, y, j);
            if (grew)
                rc = dq_column(a, t, y, j);
            for (int64_t b = 0; rc == 0 && b < k; b++)
                for (int64_t i = 0; i < n; i++)
                    a->J[b * n * n + j * n + i] =
                        (a->f0[b * n + i] - a->f1[b * n + i]) / (2 * a->inc[b]);
        }
    }
    if (rc == 0)
        zero_stopped(a, a->J, n * n);
    return rc;
}

/* The integrand of running lane b at (t, y [n, k]) into *q, its
 * derivatives into a->dqy (d q/dy) and a->dqp (d q/dp). @return 1 when they are
 * there; else 0 with *rc the integrator's code (> 0 retry, < 0 failed),
 * or with *rc = 0 when the lane is not running or, where lanes fail alone,
 * its integrand failed for good and it just left the unit. */
static int integrand(ot__run_adj *a, int64_t b, double t, const double *y, double *q,
                     int *rc)
{
    ot__unit *u = a->u;
    *rc = 0;
    if (u->stopped[b] != OT__LANE_RUNNING)
        return 0;
    const int r = ot__adj_integrand(a->plan, u->cb, u->lane0 + b, t, y + b * a->n,
                                    u->p + b * a->np, q, a->dqy, a->dqp);
    if (r < 0 && u->ops->blame) {
        /* It leaves with the integrand's message; the others' calls go on
         * from a clean callback state. */
        ot__run_lane_fails(u, b, OT_ERR_CALLBACK, u->cb->msg);
        if (u->ops->stopped_changed)
            u->ops->stopped_changed(u);
        u->cb->failed = 0;
        u->cb->nan_count = 0;
        u->cb->msg[0] = '\0';
        return 0;
    }
    *rc = r;
    return r == 0;
}

int ot__run_adj_quad(ot__run_adj *a, double t, N_Vector y, N_Vector yQdot)
{
    double *q = N_VGetArrayPointer(yQdot);
    if (ot__cb_stopped(a->u->cb))
        return -1;
    for (int64_t b = 0; b < a->k; b++) {
        int rc;
        q[b] = 0;
        if (!integrand(a, b, t, N_VGetArrayPointer(y), &q[b], &rc)) {
            if (rc != 0)
                return rc;
            q[b] = 0;
        }
    }
    return 0;
}

/* lambda' = -J^T lambda, - dq/dy with an integral term. */
static int rhs_b(sunrealtype t, N_Vector y, N_Vector yB, N_Vector yBdot, void *ud)
{
    ot__run_adj *a = ud;
    const int64_t n = a->n;
    const double *yd = N_VGetArrayPointer(y), *lam = N_VGetArrayPointer(yB);
    double *out = N_VGetArrayPointer(yBdot);
    int rc = jacobian(a, t, yd);
    for (int64_t b = 0; rc == 0 && b < a->k; b++) {
        ot__adj_rhs(a->J + b * n * n, lam + b * n, out + b * n, n);
        double q;
        if (!a->plan->loss.integrand || a->u->stopped[b] != OT__LANE_RUNNING)
            continue;
        if (integrand(a, b, t, yd, &q, &rc))
            for (int64_t j = 0; j < n; j++)
                out[b * n + j] -= a->dqy[j];
        else if (rc == 0) /* it just left: it stands still */
            memset(out + b * n, 0, (size_t)n * sizeof *out);
    }
    return rc;
}

static int jac_b(sunrealtype t, N_Vector y, N_Vector yB, N_Vector fyB, SUNMatrix JB,
                 void *ud, N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)yB, (void)fyB, (void)t1, (void)t2, (void)t3;
    ot__run_adj *a = ud;
    const int64_t n = a->n;
    const int rc = jacobian(a, t, N_VGetArrayPointer(y));
    double *blocks = a->ops->matrix_data(JB);
    for (int64_t b = 0; rc == 0 && b < a->k; b++)
        ot__adj_jac(a->J + b * n * n, blocks + b * n * n, n);
    return rc;
}

/* q' = -lambda^T df/dp, - dq/dp with an integral term: the user's df/dp,
 * or central differences in parameter j of every lane at once (steps as
 * for sensitivities, ot__fd_step). */
static int quad_b(sunrealtype t, N_Vector y, N_Vector yB, N_Vector qBdot, void *ud)
{
    ot__run_adj *a = ud;
    const ot__unit *u = a->u;
    const ot_ode *ode = a->plan->ode;
    const int64_t n = a->n, np = a->np, k = a->k;
    const double *yd = N_VGetArrayPointer(y), *lam = N_VGetArrayPointer(yB), *p = u->p;
    double *q = N_VGetArrayPointer(qBdot);
    int rc = 0;
    if (ode->dfdp) {
        rc = ot__derivs_dfdp(u->cb, ode, t, ot__view_compact(yd, n, k),
                             ot__view_compact(p, np, k), a->D, k, u->lane0,
                             &a->dfdp_first);
        for (int64_t b = 0; rc == 0 && b < k; b++)
            ot__adj_quad(a->D + b * n * np, lam + b * n, q + b * np, n, np);
    } else {
        memcpy(a->pp, p, (size_t)(np * k) * sizeof *a->pp);
        for (int64_t j = 0; rc == 0 && j < np; j++) {
            for (int64_t b = 0; b < k; b++)
                a->pp[b * np + j] = p[b * np + j] + ot__fd_step(p[b * np + j]);
            rc = a->ops->rhs(a, t, yd, a->pp, a->f0);
            for (int64_t b = 0; b < k; b++)
                a->pp[b * np + j] = p[b * np + j] - ot__fd_step(p[b * np + j]);
            if (rc == 0)
                rc = a->ops->rhs(a, t, yd, a->pp, a->f1);
            for (int64_t b = 0; b < k; b++) {
                a->pp[b * np + j] = p[b * np + j];
                double s = 0;
                for (int64_t i = 0; i < n; i++)
                    s += lam[b * n + i] * (a->f0[b * n + i] - a->f1[b * n + i]);
                q[b * np + j] = -s / (2 * ot__fd_step(p[b * np + j]));
            }
        }
    }
    for (int64_t b = 0; rc == 0 && a->plan->loss.integrand && b < k; b++) {
        double qq;
        if (integrand(a, b, t, yd, &qq, &rc))
            for (int64_t j = 0; j < np; j++)
                q[b * np + j] -= a->dqp[j];
    }
    if (rc == 0)
        zero_stopped(a, q, np);
    return rc;
}

/* ---- Setup and teardown ---------------------------------------------------- */

void ot__run_adj_free(ot__run_adj *a, int sundials_alive)
{
    /* Dead: a and its arrays are the scope's too (below), freed with it. */
    if (a == NULL || !sundials_alive)
        return;
    N_Vector vectors[] = {a->yB, a->qB, a->yQ};
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++)
        N_VDestroy(vectors[i]);
    SUNLinSolFree(a->LSB);
    SUNMatDestroy(a->AB);
    SUNNonlinSolFree(a->NLSB);
    double *arrays[] = {a->loss,       a->gp, a->dgdy, a->point.work, a->point.dgdy,
                        a->point.dgdp, a->J,  a->D,    a->f0,         a->f1,
                        a->yw,         a->pp, a->inc,  a->dqy,        a->dqp};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        OT__SUN_FREE(arrays[i]);
    OT__SUN_FREE(a);
}

int ot__run_adj_new(ot__run_adj **out, const ot__run_adj_ops *ops, void *mode,
                    const ot__plan *pl, int64_t k, N_Vector like, SUNContext ctx,
                    void *cv, CVQuadRhsFn fQ, int64_t *dq_evals)
{
    /* a and its arrays in SUNDIALS' allocator: made while SUNDIALS objects
     * are (under the owner's scope, core/sun_memory.h), they go with the
     * scope if memory runs out inside SUNDIALS before *out is set. */
    ot__run_adj *a =
        OT__SUN_CALLOC(1, sizeof *a); /* no arrays, no backward problem yet */
    if (a == NULL)
        return OT_ERR_NOMEM;
    a->ops = ops;
    a->mode = mode;
    a->plan = pl;
    a->ctx = ctx;
    a->n = pl->n, a->np = pl->np, a->k = k;
    a->dq_evals = dq_evals;
    a->which = -1;
    const size_t n = (size_t)pl->n, np = (size_t)pl->np, nk = (size_t)k;
    /* Views handed to the user (df/dp [n, np, k], the loss's and the
     * integrand's derivatives) end where their allocations end. */
    double **const slots[15] = {&a->loss,       &a->gp,         &a->dgdy, &a->point.work,
                                &a->point.dgdy, &a->point.dgdp, &a->J,    &a->D,
                                &a->f0,         &a->f1,         &a->yw,   &a->pp,
                                &a->inc,        &a->dqy,        &a->dqp};
    const size_t one_np = np ? np : 1;
    const size_t sizes[15] = {nk,
                              np * nk + 1,
                              n * nk * (size_t)pl->nt,
                              (size_t)ot__adj_point_scratch(pl),
                              n,
                              one_np,
                              n * n * nk,
                              np ? n * np * nk : 1,
                              n * nk,
                              n * nk,
                              n * nk,
                              np * nk + 1,
                              nk,
                              n,
                              one_np};
    int st = OT_OK;
    for (int i = 0; st == OT_OK && i < 15; i++)
        if ((*slots[i] = OT__SUN_MALLOC(sizes[i] * sizeof(double))) == NULL)
            st = OT_ERR_NOMEM;
    /* lambda is a vector like the state: in lockstep its per-lane norm
     * and blame come with the clone. */
    if (st == OT_OK && ((a->yB = ot__nv_clone(like)) == NULL ||
                        (np > 0 && (a->qB = ops->vector(a, pl->np)) == NULL)))
        st = OT_ERR_NOMEM;
    if (st == OT_OK && pl->loss.integrand) { /* the integral term: a forward quadrature */
        const int f = (a->yQ = ops->vector(a, 1)) == NULL
                          ? CV_MEM_FAIL
                          : ot__adj_integral_init(cv, fQ, a->yQ, pl->ode);
        st = f == 0 ? OT_OK : f == CV_MEM_FAIL ? OT_ERR_NOMEM : OT_ERR_SOLVER;
    }
    if (st != OT_OK) {
        ot__run_adj_free(a, 1);
        return st;
    }
    *out = a;
    return OT_OK;
}

int ot__run_adj_backward(ot__run_adj *a, double tB0)
{
    void *cv = a->u->ig->mem;
    const ot_ode *ode = a->plan->ode;
    const int bdf = ode->method == OT_BDF, np = (int)a->np;
    if (np)
        N_VConst(0.0, a->qB);
    int f = a->which >= 0
                ? 0
                : OT__SUN_CALL(CVodeCreateB(cv, bdf ? CV_BDF : CV_ADAMS, &a->which),
                               CV_MEM_FAIL);
    if (!f)
        f = a->inited
                ? CVodeReInitB(cv, a->which, tB0, a->yB)
                : OT__SUN_CALL(CVodeInitB(cv, a->which, rhs_b, tB0, a->yB), CV_MEM_FAIL);
    a->inited |= !f;
    if (!f && np && a->quad_inited)
        f = CVodeQuadReInitB(cv, a->which, a->qB);
    if (f || a->configured)
        return f;
    f = ot__adj_settings_b(cv, a->which, ode, a);
    if (!f && bdf) {
        if (a->LSB == NULL) { /* what a failed pass left is made again */
            SUNMatDestroy(a->AB);
            a->AB = NULL;
            a->LSB = a->ops->linear(a, &a->AB);
        }
        f = a->LSB ? CVodeSetLinearSolverB(cv, a->which, a->LSB, a->AB) : CV_MEM_FAIL;
        f = f ? f : CVodeSetJacFnB(cv, a->which, jac_b);
    } else if (!f) {
        if (a->NLSB == NULL)
            a->NLSB = OT__SUN_NEW(SUNNonlinSol_FixedPoint(a->yB, 0, a->ctx));
        f = a->NLSB ? CVodeSetNonlinearSolverB(cv, a->which, a->NLSB) : CV_MEM_FAIL;
    }
    if (!f && np && !a->quad_inited) {
        f = OT__SUN_CALL(CVodeQuadInitB(cv, a->which, quad_b, a->qB), CV_MEM_FAIL);
        a->quad_inited = !f;
    }
    f = f || !np ? f : ot__adj_quad_settings_b(cv, a->which, ode);
    a->configured = !f;
    return f;
}

/* Lanes mode: gradients by CVODES' adjoint method, one lane at a time on a
 * worker's CVODES instance. Forward: CVodeF to each output time (CVODES
 * keeps checkpoints), the outputs stored and the loss with its derivatives
 * taken there (kit/adjoint.c). Backward: from the last output time,
 * lambda' = -J^T lambda with the quadratures q' = -lambda^T df/dp; at each
 * earlier output time the integration stops, lambda jumps by dg_i/dy and
 * the backward problem restarts (CVodeReInitB). */
#include <cvodes/cvodes.h>
#include <float.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "core/alloc.h"
#include "lanes/worker.h"
#include "run/adjoint.h"
#include "kit/adjoint.h"
#include "kit/advance.h"
#include "kit/cv_setup.h"
#include "kit/dq.h"
#include "kit/sens.h"
#include "kit/sun_compat.h"
#include "tensor/tensor_impl.h"

/* The worker's adjoint parts. Each scratch array is its own allocation
 * (callbacks write into some of them). */
struct ot__lanes_adj {
    int which;       /* CVODES' index of the backward problem; -1 before */
    N_Vector yB, qB; /* lambda [n] and the quadratures [np] (own data) */
    SUNMatrix AB;    /* BDF: the backward Jacobian -J^T */
    SUNLinearSolver LSB;
    SUNNonlinearSolver NLSB;             /* Adams: fixed point */
    double *J, *D;                       /* [n, n] and [n, np]: J and df/dp at (t, y) */
    double *f0, *f1, *yw;                /* [n] each: difference-quotient scratch */
    double *dgdy;                        /* [n, nt]: dg_i/dy at every output time */
    double *gp;                          /* [np]: sum of dg_i/dp */
    double *point;                       /* ot__adj_point's scratch */
    N_Vector yQ;                         /* [1]: the integral term (forward quadrature) */
    double *dq;                          /* [n + np]: the integrand's derivatives */
    int jac_first, dfdp_first;           /* the lane's first jac, dfdp call is to come */
    int inited, quad_inited, configured; /* backward_start's steps taken */
};

/* ---- Derivatives at (t, y) ------------------------------------------------ */

/* rhs at (t, y, p) into f, checked as rhs_wrap checks it. */
static int call_rhs(ot__lanes_worker *w, double t, const double *y, const double *p,
                    double *f)
{
    const ot_ode *ode = w->plan->ode;
    if (ot__cb_stopped(&w->cb))
        return -1;
    int rc =
        ode->rhs(t, ot__view_compact(y, w->n, 1), ot__view_compact(p, w->plan->np, 1),
                 ot__view_mut_compact(f, w->n, 1), ode->user);
    if (rc != 0)
        return ot__cb_returned(&w->cb, "rhs", rc, t, OT__CB_RETRY);
    return ot__cb_finite(&w->cb, "rhs", "dydt", f, w->n, 1, w->lane, t, OT__CB_RETRY);
}

/* J at (t, y) into adj->J: the user's, or central differences of rhs.
 * Here J enters the backward rhs itself, not only Newton's matrix:
 * CVODE's forward differences (error about 1e-8 of J) made the backward
 * problem of Robertson at rtol 1e-10 take 100,000 steps between two
 * outputs; central ones (about 1e-11) do not. Step for state j: cbrt(eps)
 * max(|y_j|, rtol |y_j| + atol_j). */
static int jacobian(ot__lanes_worker *w, double t, const double *y)
{
    struct ot__lanes_adj *a = w->adj;
    const ot__plan *pl = w->plan;
    const ot_ode *ode = pl->ode;
    const int64_t n = w->n;
    if (ode->jac)
        return ot__derivs_jac(&w->cb, ode, t, ot__view_compact(y, n, 1), w->p, a->J, 1,
                              w->lane, &a->jac_first);
    memcpy(a->yw, y, (size_t)n * sizeof *y);
    int rc = 0;
    for (int64_t j = 0; rc == 0 && j < n; j++) {
        const double inc = ot__adj_dq_step(ode, j, y[j]);
        a->yw[j] = y[j] + inc;
        rc = call_rhs(w, t, a->yw, w->pbuf, a->f0);
        a->yw[j] = y[j] - inc;
        if (rc == 0)
            rc = call_rhs(w, t, a->yw, w->pbuf, a->f1);
        w->dq_evals += 2;
        a->yw[j] = y[j];
        for (int64_t i = 0; rc == 0 && i < n; i++)
            a->J[j * n + i] = (a->f0[i] - a->f1[i]) / (2 * inc);
    }
    return rc;
}

/* The integrand's derivatives at (t, y) into adj->dq: d q/dy, then d q/dp. */
static int integrand_derivs(ot__lanes_worker *w, double t, const double *y)
{
    double q;
    return ot__adj_integrand(w->plan, &w->cb, w->lane, t, y, w->pbuf, &q, w->adj->dq,
                             w->adj->dq + w->n);
}

static int quad_f(sunrealtype t, N_Vector y, N_Vector yQdot, void *ud)
{
    ot__lanes_worker *w = ud;
    if (ot__cb_stopped(&w->cb))
        return -1;
    return ot__adj_integrand(w->plan, &w->cb, w->lane, t, N_VGetArrayPointer(y), w->pbuf,
                             N_VGetArrayPointer(yQdot), w->adj->dq, w->adj->dq + w->n);
}

/* lambda' = -J^T lambda, - dq/dy with an integral term. */
static int rhs_b(sunrealtype t, N_Vector y, N_Vector yB, N_Vector yBdot, void *ud)
{
    ot__lanes_worker *w = ud;
    const double *yd = N_VGetArrayPointer(y);
    double *out = N_VGetArrayPointer(yBdot);
    int rc = jacobian(w, t, yd);
    if (rc == 0)
        ot__adj_rhs(w->adj->J, N_VGetArrayPointer(yB), out, w->n);
    if (rc == 0 && w->plan->loss.integrand && (rc = integrand_derivs(w, t, yd)) == 0)
        for (int64_t j = 0; j < w->n; j++)
            out[j] -= w->adj->dq[j];
    return rc;
}

static int jac_b(sunrealtype t, N_Vector y, N_Vector yB, N_Vector fyB, SUNMatrix JB,
                 void *ud, N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)yB, (void)fyB, (void)t1, (void)t2, (void)t3;
    ot__lanes_worker *w = ud;
    const int rc = jacobian(w, t, N_VGetArrayPointer(y));
    if (rc == 0)
        ot__adj_jac(w->adj->J, SUNDenseMatrix_Data(JB), w->n);
    return rc;
}

/* q' = -lambda^T df/dp: the user's df/dp, or central differences of rhs
 * in each parameter (steps as for sensitivities). */
static int quad_b(sunrealtype t, N_Vector y, N_Vector yB, N_Vector qBdot, void *ud)
{
    ot__lanes_worker *w = ud;
    struct ot__lanes_adj *a = w->adj;
    const ot__plan *pl = w->plan;
    const int64_t n = w->n, np = pl->np;
    const double *yd = N_VGetArrayPointer(y), *lam = N_VGetArrayPointer(yB);
    double *q = N_VGetArrayPointer(qBdot);
    if (pl->loss.integrand) { /* - dq/dp, with the rest below */
        const int rc = integrand_derivs(w, t, yd);
        if (rc != 0)
            return rc;
    }
    if (pl->ode->dfdp) {
        const int rc = ot__derivs_dfdp(&w->cb, pl->ode, t, ot__view_compact(yd, n, 1),
                                       w->p, a->D, 1, w->lane, &a->dfdp_first);
        if (rc == 0)
            ot__adj_quad(a->D, lam, q, n, np);
        for (int64_t j = 0; rc == 0 && pl->loss.integrand && j < np; j++)
            q[j] -= a->dq[n + j];
        return rc;
    }
    double *pp = w->pbuf + np;
    memcpy(pp, w->pbuf, (size_t)np * sizeof *pp);
    for (int64_t j = 0; j < np; j++) {
        const double h = ot__fd_step(w->pbuf[j]);
        pp[j] = w->pbuf[j] + h;
        int rc = call_rhs(w, t, yd, pp, a->f0);
        pp[j] = w->pbuf[j] - h;
        if (rc == 0)
            rc = call_rhs(w, t, yd, pp, a->f1);
        pp[j] = w->pbuf[j];
        if (rc != 0)
            return rc;
        double s = 0;
        for (int64_t i = 0; i < n; i++)
            s += lam[i] * (a->f0[i] - a->f1[i]);
        q[j] = -s / (2 * h) - (pl->loss.integrand ? a->dq[n + j] : 0.0);
    }
    return 0;
}

/* ---- Setup ---------------------------------------------------------------- */

int ot__lanes_adjoint_setup(ot__lanes_worker *w)
{
    const ot__plan *pl = w->plan;
    const size_t n = (size_t)w->n, np = (size_t)pl->np;
    struct ot__lanes_adj *a = OT__CALLOC(1, sizeof *a);
    if ((w->adj = a) == NULL)
        return CV_MEM_FAIL;
    a->which = -1;
    double **const slots[9] = {&a->J,    &a->D,  &a->f0,    &a->f1, &a->yw,
                               &a->dgdy, &a->gp, &a->point, &a->dq};
    const size_t sizes[9] = {
        n * n, n * np + 1,         n,      n,
        n,     n * (size_t)pl->nt, np + 1, (size_t)ot__adj_point_scratch(pl),
        n + np};
    for (int i = 0; i < 9; i++)
        if ((*slots[i] = OT__MALLOC(sizes[i] * sizeof(double))) == NULL)
            return CV_MEM_FAIL;
    a->yB = OT__SUN_NEW(N_VNew_Serial(w->n, w->ctx));
    a->qB = np ? OT__SUN_NEW(N_VNew_Serial((sunindextype)np, w->ctx)) : NULL;
    if (a->yB == NULL || (np && a->qB == NULL))
        return CV_MEM_FAIL;
    int f = 0;
    if (pl->loss.integrand) { /* the integral term: a forward quadrature */
        if ((a->yQ = OT__SUN_NEW(N_VNew_Serial(1, w->ctx))) == NULL)
            return CV_MEM_FAIL;
        f = ot__adj_integral_init(w->ig.mem, quad_f, a->yQ, pl->ode);
    }
    return f ? f
             : OT__SUN_CALL(CVodeAdjInit(w->ig.mem, OT__ADJ_STEPS, CV_HERMITE),
                            CV_MEM_FAIL);
}

void ot__lanes_adjoint_free(ot__lanes_worker *w)
{
    struct ot__lanes_adj *a = w->adj;
    if (a == NULL)
        return;
    SUNLinSolFree(a->LSB);
    SUNMatDestroy(a->AB);
    SUNNonlinSolFree(a->NLSB);
    N_VDestroy(a->yB);
    N_VDestroy(a->qB);
    N_VDestroy(a->yQ);
    free(a->dq);
    free(a->J);
    free(a->D);
    free(a->f0);
    free(a->f1);
    free(a->yw);
    free(a->dgdy);
    free(a->gp);
    free(a->point);
    free(a);
    w->adj = NULL;
}

/* The backward problem at tB0 from lambda = yB and q = 0. CVODES wants a
 * forward pass before CVodeInitB, so the backward problem is made at the
 * worker's first backward pass and re-initialised after; a step that failed
 * (out of memory) is taken again at the next lane's, never twice (a second
 * CVodeCreateB would add a second backward problem). @return CVODE's flag. */
static int backward_start(ot__lanes_worker *w, double tB0)
{
    struct ot__lanes_adj *a = w->adj;
    const ot_ode *ode = w->plan->ode;
    const int bdf = ode->method == OT_BDF, np = (int)w->plan->np;
    if (np)
        N_VConst(0.0, a->qB);
    int f =
        a->which >= 0
            ? 0
            : OT__SUN_CALL(CVodeCreateB(w->ig.mem, bdf ? CV_BDF : CV_ADAMS, &a->which),
                           CV_MEM_FAIL);
    if (!f)
        f = a->inited ? CVodeReInitB(w->ig.mem, a->which, tB0, a->yB)
                      : OT__SUN_CALL(CVodeInitB(w->ig.mem, a->which, rhs_b, tB0, a->yB),
                                     CV_MEM_FAIL);
    a->inited |= !f;
    if (!f && np && a->quad_inited)
        f = CVodeQuadReInitB(w->ig.mem, a->which, a->qB);
    if (f || a->configured)
        return f;
    f = ot__adj_settings_b(w->ig.mem, a->which, ode, w);
    if (!f && bdf) {
        if (a->AB == NULL)
            a->AB = OT__SUN_NEW(SUNDenseMatrix(w->n, w->n, w->ctx));
        if (a->AB && a->LSB == NULL)
            a->LSB = OT__SUN_NEW(SUNLinSol_Dense(a->yB, a->AB, w->ctx));
        f = a->LSB ? CVodeSetLinearSolverB(w->ig.mem, a->which, a->LSB, a->AB)
                   : CV_MEM_FAIL;
        f = f ? f : CVodeSetJacFnB(w->ig.mem, a->which, jac_b);
    } else if (!f) {
        if (a->NLSB == NULL)
            a->NLSB = OT__SUN_NEW(SUNNonlinSol_FixedPoint(a->yB, 0, w->ctx));
        f = a->NLSB ? CVodeSetNonlinearSolverB(w->ig.mem, a->which, a->NLSB)
                    : CV_MEM_FAIL;
    }
    if (!f && np && !a->quad_inited) {
        f = OT__SUN_CALL(CVodeQuadInitB(w->ig.mem, a->which, quad_b, a->qB), CV_MEM_FAIL);
        a->quad_inited = !f;
    }
    f = f || !np ? f : ot__adj_quad_settings_b(w->ig.mem, a->which, ode);
    a->configured = !f;
    return f;
}

/* ---- One lane ------------------------------------------------------------- */

static int backward_make(ot__unit *u, double tcur)
{
    return backward_start(u->mode, tcur);
}

static const double *dy0dp(ot__unit *u, int64_t j)
{
    ot__lanes_worker *w = u->mode;
    return w->yS0 + j * w->n;
}

void ot__lanes_solve_adjoint(ot__lanes_worker *w, int64_t b, const ot__sink *sk)
{
    struct ot__lanes_adj *a = w->adj;
    a->jac_first = a->dfdp_first = 1;
    /* CVODES' backward pass re-runs the forward problem from its first
     * checkpoint with CVodeSetInitStep(h0 of that run), which CVodeReInit
     * keeps: without this the next lane would start from this lane's first
     * step (results then depended on the lane order and thread count). */
    CVodeSetInitStep(w->ig.mem, w->plan->ode->h0);
    if (a->yQ) {
        N_VConst(0.0, a->yQ);
        if (CVodeQuadReInit(w->ig.mem, a->yQ) != CV_SUCCESS) {
            ot__lanes_fail(w, sk->sol, b, OT_ERR_SOLVER, w->cb.cv_msg);
            return;
        }
    }
    double loss = 0;
    ot__run_adj ra = {.loss = &loss,
                      .gp = a->gp,
                      .dgdy = a->dgdy,
                      .point = a->point,
                      .yB = a->yB,
                      .qB = a->qB,
                      .yQ = a->yQ,
                      .which = &a->which,
                      .backward_make = backward_make,
                      .dy0dp = dy0dp};
    ot__run_adjoint(ot__lanes_unit(w, b, sk), &ra);
}

/* Lanes mode: what the adjoint's backward problem (run/adjoint_back.c)
 * takes from a worker: rhs with the worker's callback rules (a failing
 * callback fails the lane), CVODES' serial vectors, the dense matrix and
 * its solver. The worker makes the problem at its first lane's backward
 * pass and re-initialises it for each later lane (CVodeReInitB). */
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "core/alloc.h"
#include "kit/adjoint.h"
#include "lanes/worker.h"
#include "run/adjoint.h"
#include "tensor/tensor_impl.h"

/* rhs at (t, y, p) into f, checked as the worker's rhs wrapper checks it. */
static int call_rhs(ot__run_adj *a, double t, const double *y, const double *p, double *f)
{
    ot__lanes_worker *w = a->mode;
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

static N_Vector vector(ot__run_adj *a, int64_t rows)
{
    return OT__SUN_NEW(N_VNew_Serial(rows, a->ctx));
}

static SUNLinearSolver dense(ot__run_adj *a, SUNMatrix *A)
{
    *A = OT__SUN_NEW(SUNDenseMatrix(a->n, a->n, a->ctx));
    return *A ? OT__SUN_NEW(SUNLinSol_Dense(a->yB, *A, a->ctx)) : NULL;
}

static const double *dy0dp(ot__unit *u, int64_t j)
{
    ot__lanes_worker *w = u->mode;
    return w->yS0 + j * w->n;
}

static const ot__run_adj_ops lane_adj = {.rhs = call_rhs,
                                         .vector = vector,
                                         .linear = dense,
                                         .matrix_data = SUNDenseMatrix_Data,
                                         .dy0dp = dy0dp};

/* The forward quadrature: its user data is the worker. */
static int quad_f(sunrealtype t, N_Vector y, N_Vector yQdot, void *ud)
{
    return ot__run_adj_quad(((ot__lanes_worker *)ud)->adj, t, y, yQdot);
}

int ot__lanes_adjoint_setup(ot__lanes_worker *w)
{
    const int st = ot__run_adj_new(&w->adj, &lane_adj, w, w->plan, 1, w->y, w->ctx,
                                   w->ig.mem, quad_f, &w->dq_evals);
    const int f = st ? 0
                     : OT__SUN_CALL(CVodeAdjInit(w->ig.mem, OT__ADJ_STEPS, CV_HERMITE),
                                    CV_MEM_FAIL);
    return st ? st : f == CV_MEM_FAIL ? OT_ERR_NOMEM : f ? OT_ERR_SOLVER : OT_OK;
}

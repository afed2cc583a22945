/* ot_solve_adjoint's forward and backward passes over a unit (adjoint.h);
 * the backward problem they integrate is adjoint_back.c's. */
#include <cvodes/cvodes.h>
#include <stdio.h>
#include <string.h>

#include "run/adjoint.h"
#include "kit/adjoint.h"
#include "kit/advance.h"

/* out of one lane for its loss, checked into that lane's own callback
 * state (ot__run_call_out). */
typedef struct {
    const ot_ode *ode;
    ot__cb *cb;
    int64_t lane;
} out_call;

static int out_one(void *ctx, double t, const double *y, const double *p, double *o)
{
    const out_call *c = ctx;
    return ot__run_call_out(c->ode, c->cb, c->lane, t, y, p, o);
}

/* CVodeF to each output time, the outputs stored, each running lane's loss
 * terms taken (a lane whose loss fails fails alone). @return 1 when every
 * output was reached. */
static int forward(ot__unit *u, ot__run_adj *a)
{
    const ot__plan *pl = u->plan;
    const int64_t n = u->n, k = u->k, np = u->np, nt = ot__plan_nt(pl, u->lane0);
    const double *times = ot__plan_times(pl, u->lane0), t0 = u->t_restart;
    memset(a->loss, 0, (size_t)k * sizeof *a->loss);
    memset(a->gp, 0, (size_t)(np * k + 1) * sizeof *a->gp);
    for (int64_t i = 0; i < nt; i++) {
        const double tout = times[i];
        N_Vector y = u->ops->target(u, i);
        if (tout == t0) {
            y = u->ops->restart_state(u, y);
        } else {
            double tret = tout;
            int ncheck = 0;
            int flag = CVodeF(u->ig->mem, tout, y, &tret, CV_NORMAL, &ncheck);
            if (flag >= 0 && ot__ig_time_check(u->ig, pl->ode->rtol, t0, u->cb->cv_msg,
                                               sizeof u->cb->cv_msg) < 0)
                flag = OT__IG_TIME_RESOLUTION;
            if (flag < 0) {
                const int nomem = flag == CV_MEM_FAIL; /* a checkpoint */
                double tcur = t0;
                CVodeGetCurrentTime(u->ig->mem, &tcur);
                char msg[320];
                snprintf(msg, sizeof msg, "CVODE stopped before t = %g: %s", tout,
                         nomem ? "out of memory for the adjoint's checkpoints"
                               : u->cb->cv_msg);
                ot__run_unit_fails(u, nomem ? OT_ERR_NOMEM : OT_ERR_SOLVER, tcur, msg, 1);
                return 0;
            }
        }
        if (ot__run_emit(u, i, tout, y, 1) != OT_OK)
            return 0;
        const double *yd = N_VGetArrayPointer(y);
        for (int64_t b = 0; b < k; b++) {
            if (u->stopped[b] != OT__LANE_RUNNING)
                continue;
            ot__cb cb; /* the lane's own */
            ot__cb_reset(&cb);
            out_call oc = {pl->ode, &cb, u->lane0 + b};
            const int st = ot__adj_point(pl, &cb, out_one, &oc, i, u->lane0 + b, tout,
                                         yd + b * n, u->p + b * np, a->point, &a->loss[b],
                                         a->dgdy + (i * k + b) * n, a->gp + b * np);
            if (st != OT_OK)
                ot__run_lane_fails(u, b, st, cb.msg);
        }
        if (ot__run_all_stopped(u))
            return 0;
    }
    return 1;
}

/* The backward pass from the last output time to t0, lambda jumping by
 * dg_i/dy at each (lanes that stopped stand still). @return 1 when it got
 * to t0. */
static int backward(ot__unit *u, ot__run_adj *a)
{
    const ot__plan *pl = u->plan;
    const int64_t n = u->n, k = u->k, nt = ot__plan_nt(pl, u->lane0);
    const double *times = ot__plan_times(pl, u->lane0), t0 = u->t_restart;
    double *lam = N_VGetArrayPointer(a->yB), tcur = times[nt - 1];
    memset(lam, 0, (size_t)(n * k) * sizeof *lam);
    int started = 0, jumped = 1;
    for (int64_t i = nt - 1; i >= -1; i--) {
        const double target = i >= 0 ? times[i] : t0;
        if (target < tcur) {
            /* Restarted where lambda jumped in some lane; without a jump in
             * any (no data there) the backward problem just goes on. */
            const int f = started ? 0 : ot__run_adj_backward(a, tcur);
            char msg[400];
            const int st = ot__adj_segment(u->ig->mem, a->which, started && jumped, tcur,
                                           target, a->yB, u->np ? a->qB : NULL, f,
                                           u->cb->cv_msg, msg, sizeof msg);
            started = 1;
            if (st != OT_OK) {
                ot__run_unit_fails(u, st, target, msg, 1);
                return 0;
            }
            tcur = target;
        }
        jumped = 0;
        for (int64_t b = 0; i >= 0 && b < k; b++)
            for (int64_t r = 0; u->stopped[b] == OT__LANE_RUNNING && r < n; r++) {
                lam[b * n + r] += a->dgdy[(i * k + b) * n + r];
                jumped |= a->dgdy[(i * k + b) * n + r] != 0;
            }
    }
    if (!started && u->np) /* every output at t0: no integral */
        N_VConst(0.0, a->qB);
    return 1;
}

void ot__run_adjoint(ot__unit *u, ot__run_adj *a)
{
    const ot__plan *pl = u->plan;
    ot_solution *sol = u->sink->sol;
    const int64_t n = u->n, np = u->np, k = u->k;
    a->u = u;
    a->jac_first = a->dfdp_first = 1;
    /* CVODES' backward pass re-runs the forward problem from its first
     * checkpoint with CVodeSetInitStep(h0 of that run), which CVodeReInit
     * keeps: without this a worker's next lane would start from this
     * lane's first step (results then depended on the lane order and
     * thread count). */
    CVodeSetInitStep(u->ig->mem, pl->ode->h0);
    if (a->yQ) { /* the integral term starts from zero in every unit */
        N_VConst(0.0, a->yQ);
        if (CVodeQuadReInit(u->ig->mem, a->yQ) != CV_SUCCESS) {
            ot__run_unit_fails(u, OT_ERR_SOLVER, u->t_restart, u->cb->cv_msg, 1);
            return;
        }
    }
    int reached = forward(u, a);
    if (reached && a->yQ) { /* the integral to the last output */
        double tq = 0;
        if (CVodeGetQuad(u->ig->mem, &tq, a->yQ) < 0) {
            ot__run_unit_fails(u, OT_ERR_SOLVER, tq, u->cb->cv_msg, 1);
            reached = 0;
        }
        for (int64_t b = 0; reached && b < k; b++)
            a->loss[b] += N_VGetArrayPointer(a->yQ)[b];
    }
    u->ops->stats(u); /* the forward pass's: CVodeB re-runs parts of it */
    long nst = 0;
    CVodeGetNumSteps(u->ig->mem, &nst);
    /* Checkpoints of (q_max + 2) n doubles each, one per OT__ADJ_STEPS
     * steps, and the Hermite data (y, y') at as many points; a block's are
     * shared by its lanes. */
    const int64_t qmax = pl->ode->method == OT_BDF ? 5 : 12;
    for (int64_t b = 0; b < k; b++)
        sol->adj_bytes[u->lane0 + b] = 8 * ((nst / OT__ADJ_STEPS + 1) * (qmax + 2) * n +
                                            (OT__ADJ_STEPS + 1) * 2 * n);
    if (!reached || !backward(u, a))
        return;
    const double *lam = N_VGetArrayPointer(a->yB),
                 *q = np ? N_VGetArrayPointer(a->qB) : NULL;
    for (int64_t b = 0; b < k; b++) {
        if (u->stopped[b] != OT__LANE_RUNNING)
            continue;
        double *gp = a->gp + b * np;
        for (int64_t j = 0; j < np; j++) {
            gp[j] += q[b * np + j];
            if (!pl->has_y0) { /* through init: (dy0/dp_j)^T lambda(t0) */
                const double *s = a->ops->dy0dp(u, j) + b * n;
                for (int64_t r = 0; r < n; r++)
                    gp[j] += s[r] * lam[b * n + r];
            }
        }
        ot__adj_store(pl, sol, u->lane0 + b, a->loss[b], gp, lam + b * n);
    }
}

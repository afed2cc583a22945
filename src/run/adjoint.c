/* ot_solve_adjoint's forward and backward passes over a unit (adjoint.h);
 * the backward problem they integrate is adjoint_back.c's. */
#include <cvodes/cvodes.h>
#include <stdio.h>
#include <string.h>

#include "run/adjoint.h"
#include "run/adjoint_events.h"
#include "run/sens_jump.h"
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

void ot__run_adj_point(ot__unit *u, ot__run_adj *a, int64_t i, int64_t b, double t,
                       const double *y, double *dgdp)
{
    const ot__plan *pl = u->plan;
    ot__cb cb; /* the lane's own */
    ot__cb_reset(&cb);
    out_call oc = {pl->ode, &cb, u->lane0 + b};
    const int st =
        ot__adj_point(pl, &cb, out_one, &oc, i, u->lane0 + b, t, y, u->p + b * u->np,
                      &a->point, &a->loss[b], a->dgdy + (i * u->k + b) * u->n, dgdp);
    if (st != OT_OK) {
        ot__run_lane_fails(u, b, st, cb.msg);
        if (u->ops->stopped_changed)
            u->ops->stopped_changed(u);
    }
}

/* The forward pass starts at u->t_restart: each lane's loss terms from
 * zero, and the integral term. CVODES' backward pass re-runs the forward
 * problem from its first checkpoint with CVodeSetInitStep(h0 of that run),
 * which CVodeReInit keeps: without setting the problem's own h0 again a
 * worker's next lane would start from this lane's first step (results
 * then depended on the lane order and thread count). @return CVODE's
 * flag. */
int ot__run_adj_begin(ot__unit *u, ot__run_adj *a)
{
    CVodeSetInitStep(u->ig->mem, u->plan->ode->h0);
    memset(a->loss, 0, (size_t)u->k * sizeof *a->loss);
    memset(a->gp, 0, (size_t)(u->np * u->k + 1) * sizeof *a->gp);
    if (a->yQ == NULL)
        return CV_SUCCESS;
    N_VConst(0.0, a->yQ);
    return CVodeQuadReInit(u->ig->mem, a->yQ);
}

/* CVodeF failed at tcur (flag, message what): where the unit blames one
 * lane (ops->blame), that lane fails alone and the pass starts again from
 * t0 without it, the old pass's checkpoints dropped (CVodeAdjReInit): the
 * others' results are those of the unit without that lane. @return 1
 * restarted; else the unit is done (0 every lane stopped, -1 it failed). */
static int again(ot__unit *u, ot__run_adj *a, int flag, double tcur, const char *what)
{
    const int left = ot__run_blame_lane(u, flag, tcur, what);
    if (left <= 0)
        return left;
    ot__run_keep_counters(u);
    int f = u->ops->resume(u, u->t_restart);
    f = f ? f : CVodeAdjReInit(u->ig->mem);
    f = f ? f : ot__run_adj_begin(u, a);
    if (f != CV_SUCCESS) {
        ot__run_unit_fails(u, OT_ERR_SOLVER, u->t_restart, u->cb->cv_msg, 1);
        return -1;
    }
    return 1;
}

/* CVodeF to each output time, the outputs stored, each running lane's loss
 * terms taken (a lane whose loss fails fails alone). @return 1 when every
 * output was reached. */
static int forward(ot__unit *u, ot__run_adj *a)
{
    const ot__plan *pl = u->plan;
    const int64_t n = u->n, k = u->k, np = u->np, nt = ot__plan_nt(pl, u->lane0);
    const double *times = ot__plan_times(pl, u->lane0), t0 = u->t_restart;
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
                if (nomem) {
                    ot__run_unit_fails(u, OT_ERR_NOMEM, tcur, msg, 1);
                    return 0;
                }
                if (again(u, a, flag, tcur, msg) != 1)
                    return 0;
                i = -1; /* from the first output again */
                continue;
            }
        }
        if (ot__run_emit(u, i, tout, y, 1) != OT_OK)
            return 0;
        const double *yd = N_VGetArrayPointer(y);
        for (int64_t b = 0; b < k; b++)
            if (u->stopped[b] == OT__LANE_RUNNING)
                ot__run_adj_point(u, a, i, b, tout, yd + b * n, a->gp + b * np);
        if (ot__run_all_stopped(u))
            return 0;
    }
    return 1;
}

/* One backward segment of the backward problem from *tcur down to target;
 * with restart (lambda jumped at *tcur) it first restarts there from yB,
 * and from the quadratures qB where they are (CVODES keeps q: it goes on
 * from where it is); f: the status of making the backward problem
 * (nonzero fails the segment). When CVodeB fails and the unit blames one
 * lane (ops->blame), that lane fails alone: its lambda and quadratures are
 * zero from the last good backward time, where the others go on (lambda
 * and q there, a restart). @return 1 at target (*tcur = target), 0 every
 * lane stopped, -1 the unit failed. */
int ot__run_adj_segment(ot__unit *u, ot__run_adj *a, int f, int restart, double *tcur,
                        double target)
{
    void *cv = u->ig->mem;
    N_Vector qB = u->np ? a->qB : NULL;
    if (u->ops->forget) /* blame reads this segment's steps */
        u->ops->forget(u);
    for (;;) {
        if (!f && restart) {
            f = CVodeReInitB(cv, a->which, *tcur, a->yB);
            if (!f && qB)
                f = CVodeQuadReInitB(cv, a->which, qB);
        }
        const int began = !f;
        double tret = target;
        void *bmem = began ? CVodeGetAdjCVodeBmem(cv, a->which) : NULL;
        long nst0 = 0, nst1 = 0;
        if (bmem)
            CVodeGetNumSteps(bmem, &nst0);
        f = f ? f : CVodeB(cv, target, CV_NORMAL);
        if (bmem && CVodeGetNumSteps(bmem, &nst1) == CV_SUCCESS)
            a->steps_b += nst1 - nst0;
        /* lambda and q at target; after a failure of CVodeB's own steps in a
         * unit that blames lanes, at the last good time, for the others. */
        int g = f >= 0 || (began && f != CV_MEM_FAIL && u->ops->blame) ? 0 : -1;
        g = g < 0 ? g : CVodeGetB(cv, a->which, &tret, a->yB);
        g = g < 0 || !qB ? g : CVodeGetQuadB(cv, a->which, &tret, qB);
        if (f >= 0 && g >= 0) {
            *tcur = target;
            return 1;
        }
        f = f < 0 ? f : g;
        char msg[400];
        snprintf(msg, sizeof msg,
                 "adjoint: the backward integration stopped between t = %g and %g: %s",
                 target, *tcur, f == CV_MEM_FAIL ? "out of memory" : u->cb->cv_msg);
        if (g < 0) {
            ot__run_unit_fails(u, f == CV_MEM_FAIL ? OT_ERR_NOMEM : OT_ERR_SOLVER, target,
                               msg, 1);
            return -1;
        }
        const int left = ot__run_blame_lane(u, f, target, msg);
        if (left <= 0)
            return left;
        double *lam = N_VGetArrayPointer(a->yB), *q = qB ? N_VGetArrayPointer(qB) : NULL;
        for (int64_t b = 0; b < u->k; b++) /* the lanes out stand still at zero */
            if (u->stopped[b] != OT__LANE_RUNNING) {
                memset(lam + b * u->n, 0, (size_t)u->n * sizeof *lam);
                if (q)
                    memset(q + b * u->np, 0, (size_t)u->np * sizeof *q);
            }
        *tcur = tret;
        f = 0;
        restart = 1;
    }
}

/* The backward pass from the last output time to t0, lambda jumping by
 * dg_i/dy at each (lanes that stopped stand still). @return 1 when it got
 * to t0 with a lane running. */
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
            int f = started ? 0 : ot__run_adj_backward(a, tcur);
            f = f || started ? f
                             : CVodeSetMaxNumStepsB(u->ig->mem, a->which, a->max_steps_b);
            const int reached =
                ot__run_adj_segment(u, a, f, started && jumped, &tcur, target);
            started = 1;
            if (reached != 1)
                return 0;
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
    const int64_t k = u->k;
    a->u = u;
    a->jac_first = a->dfdp_first = 1;
    /* CVodeF's data end at events; a block's lanes with their own times
     * stop at their own last outputs: both go segment by segment. */
    if (pl->stops || pl->ode->nroots > 0 || (pl->t_lanes && k > 1)) {
        ot__run_adjoint_events(u, a);
        return;
    }
    if (ot__run_adj_begin(u, a) != CV_SUCCESS) {
        ot__run_unit_fails(u, OT_ERR_SOLVER, u->t_restart, u->cb->cv_msg, 1);
        return;
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
    a->max_steps_b = ot__adj_max_steps_b(pl->ode, nst);
    a->steps_b = 0;
    ot__run_adj_bytes(u, nst);
    const int back = reached && backward(u, a);
    for (int64_t b = 0; reached && b < k; b++) { /* the backward pass's, every lane */
        sol->stats[u->lane0 + b].adj_steps = a->steps_b;
        sol->stats[u->lane0 + b].adj_max_steps = a->max_steps_b;
    }
    if (back)
        ot__run_adj_finish(u, a);
}

void ot__run_adj_bytes(ot__unit *u, int64_t nst)
{
    /* Checkpoints of (q_max + 2) n doubles each, one per OT__ADJ_STEPS
     * steps, and the Hermite data (y, y') at as many points; a block's are
     * shared by its lanes. */
    const int64_t n = u->n, qmax = u->plan->ode->method == OT_BDF ? 5 : 12;
    for (int64_t b = 0; b < u->k; b++)
        u->sink->sol->adj_bytes[u->lane0 + b] =
            8 *
            ((nst / OT__ADJ_STEPS + 1) * (qmax + 2) * n + (OT__ADJ_STEPS + 1) * 2 * n);
}

void ot__run_adj_finish(ot__unit *u, ot__run_adj *a)
{
    const ot__plan *pl = u->plan;
    ot_solution *sol = u->sink->sol;
    const int64_t n = u->n, np = u->np, k = u->k;
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

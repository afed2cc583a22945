/* Lanes mode: solving one lane on a worker's CVODE(S) instance, writing its
 * outputs, status and statistics. NaN padding and the gathering of steps
 * are solve.c's. */
#include <cvodes/cvodes.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "lanes/worker.h"
#include "solve/advance.h"
#include "solve/cv_setup.h"
#include "solve/dq.h"
#include "solve/events.h"
#include "solve/output.h"
#include "solve/progress.h"
#include "solve/sens.h"
#include "tensor/tensor_impl.h"

/* ---- Lane setup ----------------------------------------------------------- */

/* Lane b fails with status and what, or with the callback that made CVODE
 * give up (ot__cb_cause). */
void ot__lanes_fail(ot__lanes_worker *w, ot_solution *sol, int64_t b, int status,
                    const char *what)
{
    char msg[600];
    const char *cause = ot__cb_cause(&w->cb, &status, what, msg, sizeof msg);
    ot__solution_fail_lane(sol, b, status, cause);
}

/* The init callback for params p into y (n), checked. */
static int call_init(ot__lanes_worker *w, ot_view p, double *y)
{
    const ot_ode *ode = w->plan->ode;
    int rc = ode->init(p, ot__view_mut_compact(y, w->n, 1), ode->user);
    if (rc != 0) {
        ot__cb_note(&w->cb, -1, "init returned %d", rc);
        return OT_ERR_CALLBACK;
    }
    if (ot__cb_finite(&w->cb, "init", "y0", y, w->n, 1, w->lane, NAN, OT__CB_FINAL) != 0)
        return OT_ERR_CALLBACK;
    return OT_OK;
}

/* Points w->y0 at lane b's initial state and fills the initial sensitivities
 * (zero, or central differences of init when init computes y0). */
static int lane_start(ot__lanes_worker *w, int64_t b)
{
    const ot__plan *pl = w->plan;
    const int64_t n = w->n, np = pl->np;
    if (pl->has_y0) {
        N_VSetArrayPointer((double *)(uintptr_t)ot_view_lane(pl->y0, b), w->y0);
    } else {
        int st = call_init(w, w->p, w->y0_scratch);
        if (st != OT_OK)
            return st;
        N_VSetArrayPointer(w->y0_scratch, w->y0);
    }
    /* The adjoint needs dy0/dp only when init computes y0 (the chain rule
     * into dL/dp), in w->yS0 without vectors over it. */
    if (pl->kind != OT__SENS && (pl->kind != OT__ADJ || pl->has_y0))
        return OT_OK;
    const int64_t ns = pl->kind == OT__SENS ? pl->ns : np;
    for (int64_t j = 0; j < ns; j++) {
        double *s = w->yS0 + j * n;
        if (w->yS)
            N_VSetArrayPointer(s, w->yS[j]);
        if (pl->has_y0 || j >= np) { /* j >= np: d y0 / d y0_(j - np) */
            memset(s, 0, (size_t)n * sizeof *s);
            if (j >= np)
                s[j - np] = 1.0;
            continue;
        }
        double *pp = w->pbuf + np;
        memcpy(pp, w->pbuf, (size_t)np * sizeof *pp);
        const double h = ot__fd_step(w->pbuf[j]);
        pp[j] = w->pbuf[j] + h;
        int st = call_init(w, ot__view_compact(pp, np, 1), w->yp_scratch);
        pp[j] = w->pbuf[j] - h;
        if (st == OT_OK)
            st = call_init(w, ot__view_compact(pp, np, 1), w->ym_scratch);
        if (st != OT_OK)
            return st;
        for (int64_t i = 0; i < n; i++)
            s[i] = (w->yp_scratch[i] - w->ym_scratch[i]) / (2 * h);
    }
    return OT_OK;
}

/* ---- Outputs -------------------------------------------------------------- */

/* The out callback at (t, y) with params p into o (nout), checked. */
int ot__lanes_call_out(ot__lanes_worker *w, double t, const double *y, ot_view p,
                       double *o)
{
    const ot_ode *ode = w->plan->ode;
    int rc = ode->out(t, ot__view_compact(y, w->n, 1), p,
                      ot__view_mut_compact(o, ode->nout, 1), ode->user);
    if (rc != 0) {
        ot__cb_returned(&w->cb, "out", rc, t, OT__CB_FINAL);
        return OT_ERR_CALLBACK;
    }
    if (ot__cb_finite(&w->cb, "out", "o", o, ode->nout, 1, w->lane, t, OT__CB_FINAL) != 0)
        return OT_ERR_CALLBACK;
    return OT_OK;
}

/* Output sensitivity j: central difference of out along (s_j, e_j), or
 * along s_j alone for an initial value's (j >= np). */
static int out_sens(ot__lanes_worker *w, double t, const double *y, const double *s,
                    int64_t j, double *dst)
{
    const int64_t n = w->n, np = w->plan->np, nout = w->plan->rows;
    double *pp = w->pbuf + np;
    memcpy(pp, w->pbuf, (size_t)np * sizeof *pp);
    const double h = ot__sens_step(w->pbuf, np, j);
    for (int64_t i = 0; i < n; i++) {
        w->yp_scratch[i] = y[i] + h * s[i];
        w->ym_scratch[i] = y[i] - h * s[i];
    }
    if (j < np)
        pp[j] = w->pbuf[j] + h;
    int st = ot__lanes_call_out(w, t, w->yp_scratch, ot__view_compact(pp, np, 1),
                                w->diff_scratch);
    if (j < np)
        pp[j] = w->pbuf[j] - h;
    if (st == OT_OK)
        st = ot__lanes_call_out(w, t, w->ym_scratch, ot__view_compact(pp, np, 1), dst);
    for (int64_t r = 0; st == OT_OK && r < nout; r++)
        dst[r] = (w->diff_scratch[r] - dst[r]) / (2 * h);
    return st;
}

/* Records output i of lane b at time t from state y (and sensitivities in
 * w->yS, when solving them). */
int ot__lanes_emit(ot__lanes_worker *w, const ot__sink *sk, int64_t i, int64_t b,
                   double t, const double *y)
{
    const ot__plan *pl = w->plan;
    const ot_ode *ode = pl->ode;
    ot_solution *sol = sk->sol;
    const double *row = y;
    if (ode->out) {
        int st = ot__lanes_call_out(w, t, y, w->p, w->out_scratch);
        if (st != OT_OK)
            return st;
        row = w->out_scratch;
    }
    ot__out_store(sol->ys, i, b, row, pl->rows);
    if (pl->kind != OT__SENS)
        return OT_OK;
    for (int64_t j = 0; j < pl->ns; j++) {
        const double *s = N_VGetArrayPointer(w->yS[j]);
        if (ode->out) {
            int st = out_sens(w, t, y, s, j, w->out_scratch);
            if (st != OT_OK)
                return st;
            s = w->out_scratch;
        }
        ot__out_store(sol->sens[j], i, b, s, pl->rows);
    }
    return OT_OK;
}

/* ---- The two kinds of solve ---------------------------------------------- */

/* Where CVODE should write the state for output i: straight into ys when no
 * conversion or out function comes between. */
double *ot__lanes_state_dst(ot__lanes_worker *w, const ot__sink *sk, int64_t i, int64_t b)
{
    const ot__plan *pl = w->plan;
    if (!pl->ode->out && pl->ode->out_dtype == OT_F64)
        return ot__out_column(sk->sol->ys, i, b);
    return w->ys_scratch;
}

/* The lane stops at its root at t: the first fired root whose action is
 * OT_EVENT_STOP (rf: CVODE's root info). */
static void record_root(ot_solution *sol, int64_t b, double t, const ot_ode *ode,
                        const int *rf)
{
    sol->root_time[b] = t;
    const int r = rf ? ot__event_stop_root(ode, rf) : -1;
    sol->root_index[b] = r >= 0 ? r : 0;
}

/* Restarts lane b's integrator at t from y (CVodeReInit: order 1, a new
 * step), keeping its counters (CVODE zeroes them) in w->before. 0 or -1. */
static int restart(ot__lanes_worker *w, const ot__sink *sk, int64_t b, double t,
                   double *y)
{
    ot_lane_stats s;
    memset(&s, 0, sizeof s);
    ot__ig_stats(&w->ig, w->LS != NULL, &s);
    ot__cv_stats_add(&w->before, &s);
    N_VSetArrayPointer(y, w->y0);
    if (ot__ig_reinit(&w->ig, t, w->y0) != CV_SUCCESS) {
        ot__lanes_fail(w, sk->sol, b, OT_ERR_SOLVER, w->cb.cv_msg);
        return -1;
    }
    w->t_restart = t;
    w->y_restart = y;
    return 0;
}

/* The roots that fired at t, with y the lane's state there: 0 when the lane
 * stops (a STOP root fired; recorded as its root), 1 when it goes on (the
 * events recorded; restarted from the handler's state if one ran, y then
 * holding it), -1 when the lane failed. */
static int take_roots(ot__lanes_worker *w, const ot__sink *sk, int64_t b, double t,
                      double *y)
{
    const ot_ode *ode = w->plan->ode;
    ot_solution *sol = sk->sol;
    int found[64], *rf = found;
    if (ode->nroots > 64 && (rf = OT__MALLOC((size_t)ode->nroots * sizeof *rf)) == NULL) {
        ot__solution_fail_lane(sol, b, OT_ERR_NOMEM, "cannot allocate the root flags");
        return -1;
    }
    int go_on = 0;
    const int got = ot__ig_root_info(&w->ig, rf) == CV_SUCCESS;
    const int stop = got ? ot__event_stop_root(ode, rf) : -1;
    if (!got || stop >= 0 || sk->events == NULL) {
        record_root(sol, b, t, ode, got ? rf : NULL);
        char msg[200];
        /* The stop is an event too: its state at the root. */
        if (got && stop >= 0 && sk->events &&
            ot__event_push(ode, &sk->events[b], t, stop, y, y, msg, sizeof msg) != OT_OK)
            ot__solution_fail_lane(sol, b, OT_ERR_NOMEM, msg);
    } else {
        int changed = 0;
        char msg[200];
        const int st = ot__event_take(ode, &sk->events[b], t, rf, y, w->pbuf, b, &w->cb,
                                      &changed, msg, sizeof msg);
        go_on = 1;
        if (st != OT_OK) {
            ot__solution_fail_lane(sol, b, st, st == OT_ERR_CALLBACK ? w->cb.msg : msg);
            go_on = -1;
        } else if (changed && restart(w, sk, b, t, y) != 0) {
            go_on = -1; /* the handler's state, from t */
        }
    }
    if (rf != found)
        free(rf);
    return go_on;
}

/* Integrates lane b to `target`, its state there into dst, roots taken on
 * the way (solve/events.c): 1 reached, 0 stopped at a root (*tret its
 * time), -1 failed. With `exact` the integrator does not step past target
 * (a scheduled stop). A target at the lane's last restart is its state
 * there, with no step. */
static int reach(ot__lanes_worker *w, const ot__sink *sk, int64_t b, double target,
                 int exact, double *dst, double *tret)
{
    const ot__plan *pl = w->plan;
    for (;;) {
        *tret = target;
        if (target == w->t_restart) {
            memcpy(dst, w->y_restart, (size_t)w->n * sizeof *dst);
            for (int64_t j = 0; pl->kind == OT__SENS && j < pl->ns; j++)
                N_VSetArrayPointer(w->yS0 + j * w->n, w->yS[j]);
            return 1;
        }
        N_VSetArrayPointer(dst, w->y);
        if (exact)
            ot__ig_set_stop_time(&w->ig, target);
        int flag =
            ot__ig_advance(&w->ig, target, w->y, tret, pl->ode->max_steps, pl->ode->rtol,
                           ot__plan_t0(pl, b), w->cb.cv_msg, sizeof w->cb.cv_msg);
        if (flag >= 0 && pl->kind == OT__SENS) {
            for (int64_t j = 0; j < pl->ns; j++)
                N_VSetArrayPointer(w->sens_scratch + j * w->n, w->yS[j]);
            /* keep CV_ROOT_RETURN: only a failure replaces it */
            const int sflag = CVodeGetSensDky(w->ig.mem, *tret, 0, w->yS);
            flag = sflag < 0 ? sflag : flag;
        }
        if (flag < 0) {
            char msg[320];
            snprintf(msg, sizeof msg, "%s stopped before t = %g: %s", ot__ig_name(&w->ig),
                     target, w->cb.cv_msg);
            ot__lanes_fail(w, sk->sol, b, OT_ERR_SOLVER, msg);
            return -1;
        }
        if (flag != CV_ROOT_RETURN)
            return 1;
        memcpy(w->yp_scratch, dst, (size_t)w->n * sizeof *dst);
        const int go_on = take_roots(w, sk, b, *tret, w->yp_scratch);
        if (go_on <= 0)
            return go_on;
        if (*tret == target) /* the root was at target: its state after the handler */
            memcpy(dst, w->yp_scratch, (size_t)w->n * sizeof *dst);
        if (*tret == target)
            return 1;
    }
}

/* Lane b's scheduled stop k at t, its state y there: the handler (root
 * -1 - k), recorded as an event, and the restart. @return 0 or -1 (failed). */
static int take_stop(ot__lanes_worker *w, const ot__sink *sk, int64_t b, int64_t k,
                     double t, double *y)
{
    const ot_ode *ode = w->plan->ode;
    char msg[300];
    int st = ot__event_push(ode, &sk->events[b], t, -1 - k, y, y, msg, sizeof msg);
    if (st == OT_OK) {
        const int rc =
            ode->event_fn(t, (int)(-1 - k), b, ot__view_mut_compact(y, w->n, 1),
                          ot__view_mut_compact(w->pbuf, w->plan->np, 1), ode->user);
        ot__cb cb; /* the handler's own: not the lane's callback state */
        ot__cb_reset(&cb);
        if (rc != 0)
            snprintf(msg, sizeof msg,
                     "event handler returned %d at t = %g (scheduled stop %lld)", rc, t,
                     (long long)k);
        else if (ot__cb_finite(&cb, "event handler", "y", y, w->n, 1, b, t,
                               OT__CB_FINAL) ||
                 (w->plan->np > 0 && ot__cb_finite(&cb, "event handler", "p", w->pbuf,
                                                   w->plan->np, 1, b, t, OT__CB_FINAL)))
            snprintf(msg, sizeof msg, "%s", cb.msg);
        st = rc != 0 || cb.failed ? OT_ERR_CALLBACK : OT_OK;
        ot__record *r = &sk->events[b];
        memcpy(r->y + (r->count - 1) * r->width + 1 + w->n, y, (size_t)w->n * sizeof *y);
    }
    if (st != OT_OK) {
        ot__solution_fail_lane(sk->sol, b, st, msg);
        return -1;
    }
    if (restart(w, sk, b, t, y) != 0)
        return -1;
    /* SUNDIALS 6.4 keeps the stop time it just reached (7 clears it), and
     * would refuse to go on from it: aim the stop at the lane's last output,
     * which it never needs to pass. */
    const int64_t nt = ot__plan_nt(w->plan, b);
    const double last = ot__plan_times(w->plan, b)[nt - 1];
    if (last > t)
        ot__ig_set_stop_time(&w->ig, last);
    return 0;
}

static void solve_dense(ot__lanes_worker *w, int64_t b, const ot__sink *sk)
{
    const ot__plan *pl = w->plan;
    ot_solution *sol = sk->sol;
    const double *times = ot__plan_times(pl, b),
                 *stops = pl->stops ? ot__plan_stops(pl, b) : NULL;
    const int64_t nt = ot__plan_nt(pl, b), nstops = ot__plan_nstops(pl, b);
    int64_t k = 0;
    int go = 1;
    /* Stops at t0 come before the start. */
    for (; go && k < nstops && stops[k] == w->t_restart; k++) {
        memcpy(w->yp_scratch, w->y_restart, (size_t)w->n * sizeof(double));
        go = take_stop(w, sk, b, k, stops[k], w->yp_scratch) == 0;
    }
    for (int64_t i = 0; go && i < nt && !ot__progress_cancelled(pl->prog); i++) {
        const double tout = times[i];
        double tret = tout;
        double *dst = ot__lanes_state_dst(w, sk, i, b);
        /* Stops up to and at tout: an output at a stop shows the state after. */
        for (; go && k < nstops && stops[k] <= tout; k++) {
            const int r = reach(w, sk, b, stops[k], 1, w->ym_scratch, &tret);
            if (r == 1) {
                memcpy(w->yp_scratch, w->ym_scratch, (size_t)w->n * sizeof(double));
                go = take_stop(w, sk, b, k, stops[k], w->yp_scratch) == 0;
            } else {
                go = 0;
            }
        }
        if (!go)
            break;
        const int r = reach(w, sk, b, tout, w->ig.m->exact_outputs, dst, &tret);
        if (r < 0 || (r == 0 && tret < tout))
            break;
        int st = ot__lanes_emit(w, sk, i, b, tout, dst);
        if (st != OT_OK) {
            ot__solution_fail_lane(sol, b, st, w->cb.msg);
            break;
        }
        sol->count[b] = i + 1;
        sol->stats[b].final_time = tout;
        if (r == 0) /* stopped at a root exactly at tout */
            break;
    }
    if (sol->root_index && sol->root_index[b] >= 0 && sol->status[b] == OT_OK)
        sol->stats[b].final_time = sol->root_time[b];
}

/* Records y at t as the next step: the out function's row or y itself. */
static int emit_step(ot__lanes_worker *w, double t, const double *y)
{
    if (w->plan->ode->out) {
        int st = ot__lanes_call_out(w, t, y, w->p, w->out_scratch);
        if (st != OT_OK)
            return st;
        y = w->out_scratch;
    }
    double *slot = ot__record_push(&w->steps, t);
    if (slot == NULL) {
        snprintf(w->cb.msg, sizeof w->cb.msg,
                 "cannot grow the step record past %lld steps",
                 (long long)w->steps.count);
        return OT_ERR_NOMEM;
    }
    memcpy(slot, y, (size_t)w->plan->rows * sizeof *y);
    return OT_OK;
}

/* Hands the lane's steps to the sink, trimmed to size; the worker starts a
 * new record for its next lane. */
static void hand_over(ot__lanes_worker *w, const ot__sink *sk, int64_t b)
{
    ot__record *r = &w->steps;
    if (r->count > 0 && r->count < r->cap) { /* a failed shrink keeps the buffer */
        double *t = realloc(r->t, (size_t)r->count * sizeof *t);
        if (t != NULL)
            r->t = t;
        double *y = realloc(r->y, (size_t)(r->count * r->width) * sizeof *y + 1);
        if (y != NULL)
            r->y = y;
    }
    sk->records[b] = *r;
    r->t = r->y = NULL;
    r->count = r->cap = 0;
}

static void solve_steps(ot__lanes_worker *w, int64_t b, const ot__sink *sk)
{
    const ot__plan *pl = w->plan;
    ot_solution *sol = sk->sol;
    int st = emit_step(w, pl->t0, N_VGetArrayPointer(w->y0));
    if (st != OT_OK)
        ot__solution_fail_lane(sol, b, st, w->cb.msg);
    double t = pl->t0;
    N_VSetArrayPointer(w->ys_scratch, w->y);
    ot__ig_set_stop_time(&w->ig, pl->t_final);
    while (st == OT_OK && t < pl->t_final && !ot__progress_cancelled(pl->prog)) {
        if (w->steps.count > pl->step_limit) {
            /* As CVODE's own max_steps failure: blamed on a callback that
             * kept failing (fail_lane's cause reads cv_msg then). */
            snprintf(w->cb.cv_msg, sizeof w->cb.cv_msg,
                     "more than max_steps = %lld steps before t = %g",
                     (long long)pl->step_limit, pl->t_final);
            ot__lanes_fail(w, sol, b, OT_ERR_SOLVER, w->cb.cv_msg);
            break;
        }
        int flag = ot__ig_evolve(&w->ig, pl->t_final, w->y, &t, 1);
        if (flag >= 0 && ot__ig_time_check(&w->ig, pl->ode->rtol, ot__plan_t0(pl, b),
                                           w->cb.cv_msg, sizeof w->cb.cv_msg) < 0)
            flag = OT__IG_TIME_RESOLUTION;
        if (flag < 0) {
            char msg[320];
            snprintf(msg, sizeof msg, "%s stopped at t = %g: %s", ot__ig_name(&w->ig), t,
                     w->cb.cv_msg);
            ot__lanes_fail(w, sol, b, OT_ERR_SOLVER, msg);
            break;
        }
        st = emit_step(w, t, w->ys_scratch);
        if (st != OT_OK) {
            ot__solution_fail_lane(sol, b, st, w->cb.msg);
            break;
        }
        if (flag == CV_ROOT_RETURN) {
            memcpy(w->yp_scratch, w->ys_scratch, (size_t)w->n * sizeof *w->ys_scratch);
            const int go_on = take_roots(w, sk, b, t, w->yp_scratch);
            if (go_on <= 0)
                break;
            /* A changed state is a second step at the same time. */
            if (memcmp(w->yp_scratch, w->ys_scratch, (size_t)w->n * sizeof(double)) !=
                    0 &&
                (st = emit_step(w, t, w->yp_scratch)) != OT_OK) {
                ot__solution_fail_lane(sol, b, st, w->cb.msg);
                break;
            }
        }
    }
    const int64_t k = w->steps.count;
    sol->count[b] = k;
    sol->stats[b].final_time = k > 0 ? w->steps.t[k - 1] : pl->t0;
    hand_over(w, sk, b);
}

/* ---- Entry ---------------------------------------------------------------- */

void ot__lanes_solve_lane(ot__lanes_worker *w, int64_t b, const ot__sink *sk)
{
    const ot__plan *pl = w->plan;
    ot_solution *sol = sk->sol;
    w->lane = b;
    w->dq_evals = 0;
    w->sens_first = 1;
    memset(&w->before, 0, sizeof w->before);
    ot__cb_reset(&w->cb);
    const double *pcol = pl->np ? ot_view_lane(pl->p, b) : NULL;
    if (pl->kind == OT__SENS || pl->kind == OT__ADJ) {
        /* CVODES (and the adjoint's difference quotients) perturb the
         * parameters in place: a private copy. */
        if (pl->np) /* none: pcol is NULL, and memcpy must not see it */
            memcpy(w->pbuf, pcol, (size_t)pl->np * sizeof *w->pbuf);
        for (int64_t j = 0; j < pl->ns; j++) /* initial values: a scale of 1 */
            w->pbar[j] = j < pl->np ? ot__sens_pbar(w->pbuf[j]) : 1.0;
        pcol = w->pbuf;
    }
    if (pl->kind != OT__SENS && (ot__ode_handles_events(pl->ode) || pl->stops)) {
        /* The event handler may change the lane's params: its own copy. */
        if (pl->np)
            memcpy(w->pbuf, pcol, (size_t)pl->np * sizeof *w->pbuf);
        pcol = w->pbuf;
    }
    w->p = ot__view_compact(pcol, pl->np, 1);

    int st = lane_start(w, b);
    int flag = CV_SUCCESS;
    if (st == OT_OK) {
        flag = ot__ig_reinit(&w->ig, ot__plan_t0(pl, b), w->y0);
        w->t_restart = ot__plan_t0(pl, b);
        w->y_restart = N_VGetArrayPointer(w->y0);
        if (!flag && pl->kind == OT__SENS)
            flag = CVodeSensReInit(w->ig.mem, CV_STAGGERED, w->yS);
        if (!flag && pl->kind == OT__ADJ)
            flag = CVodeAdjReInit(w->ig.mem);
        /* CVODES copies pbar when it is set: give it this lane's scales. */
        if (!flag && pl->kind == OT__SENS)
            flag = CVodeSetSensParams(w->ig.mem, w->pbuf, w->pbar,
                                      pl->ode->sens_initial ? w->plist : NULL);
        for (int64_t j = 0; !flag && w->atolS && j < pl->ns; j++)
            ot__sens_atol(pl->ode, w->pbuf, pl->np, j, w->n, 1,
                          N_VGetArrayPointer(w->atolS[j]));
        if (!flag && w->atolS) /* CVODES copies them */
            flag = CVodeSensSVtolerances(w->ig.mem, pl->ode->rtol, w->atolS);
    }
    if (st != OT_OK || flag != CV_SUCCESS) {
        if (st != OT_OK)
            ot__solution_fail_lane(sol, b, st, w->cb.msg);
        else
            ot__lanes_fail(w, sol, b, OT_ERR_SOLVER, w->cb.cv_msg);
        sol->stats[b].final_time = pl->t0;
        return;
    }
    if (pl->kind == OT__ADJ) { /* its statistics are the forward pass's */
        ot__lanes_solve_adjoint(w, b, sk);
        return;
    }
    if (pl->kind == OT__STEPS)
        solve_steps(w, b, sk);
    else
        solve_dense(w, b, sk);
    ot__lane_stats(w, &sol->stats[b]);
}

void ot__lane_stats(ot__lanes_worker *w, ot_lane_stats *out)
{
    const ot__plan *pl = w->plan;
    ot_lane_stats *stats = out;
    ot__ig_stats(&w->ig, w->LS != NULL, stats);
    ot__cv_stats_add(stats, &w->before); /* restarts at events */
    /* Dense without the user's Jacobian: our DQ Jacobian's, not CVODE's. */
    if (w->LS != NULL && pl->ode->jac == NULL && pl->ode->linsol == OT_LINSOL_DENSE)
        stats->jac_rhs_evals = w->dq_evals;
}

/* The run loop (unit.h): output times, scheduled stops, roots and their
 * handlers, every-step output, progress and cancel, once for every mode. */
#include <cvodes/cvodes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "run/adjoint_events.h"
#include "run/guard.h"
#include "run/sens_jump.h"
#include "run/take.h"
#include "run/unit.h"
#include "kit/advance.h"
#include "kit/cv_setup.h"
#include "kit/events.h"
#include "kit/progress.h"
#include "tensor/tensor_impl.h"

/* ---- The unit's lanes ------------------------------------------------------ */

int ot__run_all_stopped(const ot__unit *u)
{
    for (int64_t b = 0; b < u->k; b++)
        if (u->stopped[b] == OT__LANE_RUNNING)
            return 0;
    return 1;
}

/* Lane b of the unit fails alone with status and msg. */
void ot__run_lane_fails(ot__unit *u, int64_t b, int status, const char *msg)
{
    ot__solution_fail_lane(u->sink->sol, u->lane0 + b, status, msg);
    u->stopped[b] = OT__LANE_FAILED;
    u->nfailed++;
}

/* Every running lane of the unit fails (the mode says how, ops->fail). */
void ot__run_unit_fails(ot__unit *u, int status, double t, const char *what, int solver)
{
    u->ops->fail(u, status, t, what, solver);
    for (int64_t b = 0; b < u->k; b++)
        if (u->stopped[b] == OT__LANE_RUNNING) {
            u->stopped[b] = OT__LANE_FAILED;
            u->nfailed++;
        }
}

void ot__run_unit_init(ot__unit *u, const ot__unit_ops *ops, void *mode,
                       const ot__plan *plan, const ot__sink *sink, ot__ig *ig, ot__cb *cb,
                       int64_t lane0, int64_t k, int has_ls)
{
    memset(u, 0, sizeof *u);
    u->ops = ops;
    u->mode = mode;
    u->plan = plan;
    u->sink = sink;
    u->ig = ig;
    u->cb = cb;
    u->lane0 = lane0;
    u->k = k;
    u->n = plan->n;
    u->np = plan->np;
    u->has_ls = has_ls;
    u->t_restart = ot__plan_t0(plan, lane0);
}

void ot__run_unit_arrays(ot__unit *u, unsigned char *stopped, int *rootsfound, double *p,
                         int64_t *at, int64_t *next, int64_t *knext, double *scratch,
                         ot_lane_stats *before, ot__record *steps)
{
    u->stopped = stopped;
    u->rootsfound = rootsfound;
    u->p = p;
    u->at = at;
    u->next = next;
    u->knext = knext;
    u->scratch = scratch;
    u->before = before;
    u->steps = steps;
}

int ot__run_call_out(const ot_ode *ode, ot__cb *cb, int64_t lane, double t,
                     const double *y, const double *p, double *o)
{
    const int rc =
        ode->out(t, ot__view_compact(y, ode->n, 1), ot__view_compact(p, ode->np, 1),
                 ot__view_mut_compact(o, ode->nout, 1), ode->user);
    if (rc != 0) {
        ot__cb_returned(cb, "out", rc, t, OT__CB_FINAL);
        return OT_ERR_CALLBACK;
    }
    return ot__cb_finite(cb, "out", "o", o, ode->nout, 1, lane, t, OT__CB_FINAL)
               ? OT_ERR_CALLBACK
               : OT_OK;
}

void ot__run_keep_counters(ot__unit *u)
{
    ot_lane_stats s;
    memset(&s, 0, sizeof s);
    ot__ig_stats(u->ig, u->has_ls, &s);
    ot__cv_stats_add(u->before, &s);
}

int ot__run_blame_lane(ot__unit *u, int flag, double t, const char *what)
{
    char msg[600];
    int status = OT_ERR_SOLVER;
    const int64_t b =
        u->ops->blame ? u->ops->blame(u, flag, what, &status, msg, sizeof msg) : -1;
    if (b < 0) {
        ot__run_unit_fails(u, OT_ERR_SOLVER, t, what, 1);
        return -1;
    }
    ot__run_lane_fails(u, b, status, msg);
    if (u->ops->stopped_changed)
        u->ops->stopped_changed(u);
    return ot__run_all_stopped(u) ? 0 : 1;
}

/* The integrator failed at tcur (flag, message what): when one lane explains
 * it (ops->blame), that lane fails alone and the others go on from tcur.
 * @return 1 the unit goes on, 0 every lane stopped, -1 the unit failed. */
static int fail_or_go_on(ot__unit *u, int flag, double tcur, const char *what)
{
    const int left = ot__run_blame_lane(u, flag, tcur, what);
    if (left <= 0)
        return left;
    ot__run_keep_counters(u);
    if (u->adj_ev)
        ot__adj_ev_before(u, tcur);
    if (u->ops->resume(u, tcur) != CV_SUCCESS) {
        ot__run_unit_fails(u, OT_ERR_SOLVER, tcur, u->cb->cv_msg, 1);
        return -1;
    }
    u->t_restart = tcur;
    return ot__run_restarted(u, tcur) == 0 ? 1 : -1;
}

/* Progress as the unit goes: its lanes times the fraction done (frac in
 * [0, 1]). */
static void report(ot__unit *u, double frac)
{
    if (!u->report)
        return;
    const double f = frac > 0 ? (frac < 1 ? frac : 1.0) : 0.0;
    const int64_t units = (int64_t)(f * (double)(u->k * OT__PROGRESS_ONE));
    if (units > u->reported) {
        ot__progress_add(u->plan->prog, units - u->reported);
        u->reported = units;
    }
}

/* Integrates the unit to target (its state there in *y; output i, or an
 * OT__TARGET_*), roots taken on the way: 1 reached, 0 every lane stopped,
 * -1 the unit failed. With `exact` the integrator does not step past
 * target (a scheduled stop). A target at the last restart is the state
 * there, with no step. */
static int reach(ot__unit *u, double target, int exact, int64_t i, N_Vector *y)
{
    const ot__plan *pl = u->plan;
    for (;;) {
        N_Vector dst = u->ops->target(u, i);
        if (target == u->t_restart) {
            *y = u->ops->restart_state(u, dst);
            return 1;
        }
        if (exact)
            ot__ig_set_stop_time(u->ig, target);
        double tret = target;
        int flag = ot__ig_advance(u->ig, target, dst, &tret, pl->ode->max_steps,
                                  pl->ode->rtol, ot__plan_t0(pl, u->lane0), u->cb->cv_msg,
                                  sizeof u->cb->cv_msg);
        if (flag >= 0 && pl->kind == OT__SENS) {
            /* keep the root return: only a failure replaces it */
            const int sflag = u->ops->sens_at(u, tret);
            flag = sflag < 0 ? sflag : flag;
        }
        if (flag < 0) {
            double tcur = pl->t0, hlast, hcur;
            ot__ig_times(u->ig, &tcur, &hlast, &hcur);
            char msg[320];
            snprintf(msg, sizeof msg, "%s stopped before t = %g: %s", ot__ig_name(u->ig),
                     target, u->cb->cv_msg);
            const int go = fail_or_go_on(u, flag, tcur, msg);
            if (go <= 0)
                return go;
            continue;
        }
        if (flag == OT__IG_TSTOP_RETURN && !exact && tret < target)
            continue; /* a stop no lane took (a lane standing still): go on */
        if (flag != OT__IG_ROOT_RETURN) {
            *y = dst;
            return 1;
        }
        const int rc = ot__run_take_roots(u, tret, dst, i >= 0 && tret == target);
        if (rc < 0)
            return -1;
        if (ot__run_all_stopped(u))
            return 0;
        if (tret == target) { /* the root was at target: the state after it */
            *y = rc > 0 ? u->ops->restart_state(u, dst) : dst;
            return 1;
        }
    }
}

/* ---- Output times ---------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The sorted union of the unit's lanes' times (times(pl, lane), count(pl,
 * lane) of them), in *out (the caller frees it). @return their number, or
 * -1 out of memory. */
static int64_t union_of(const ot__unit *u,
                        const double *(*times)(const ot__plan *, int64_t),
                        int64_t (*count)(const ot__plan *, int64_t), double **out)
{
    const ot__plan *pl = u->plan;
    int64_t total = 0, k = 0;
    for (int64_t b = 0; b < u->k; b++)
        total += count(pl, u->lane0 + b);
    double *v = OT__MALLOC((size_t)(total > 0 ? total : 1) * sizeof *v);
    if (v == NULL)
        return -1;
    for (int64_t b = 0; b < u->k; b++) {
        const int64_t nt = count(pl, u->lane0 + b);
        memcpy(v + k, times(pl, u->lane0 + b), (size_t)nt * sizeof *v);
        k += nt;
    }
    qsort(v, (size_t)total, sizeof *v, cmp_double);
    int64_t m = 0;
    for (int64_t i = 0; i < total; i++)
        if (m == 0 || v[i] != v[m - 1])
            v[m++] = v[i];
    *out = v;
    return m;
}

/* Output i of the union at t (state y): each lane whose next output time is
 * t stores it (a lane that stopped at a root at t too); a lane past its own
 * last output time is done and stands still. OT_OK, or the emit's status
 * (the unit failed). */
int ot__run_emit(ot__unit *u, int64_t i, double t, N_Vector y, int shared)
{
    const ot__plan *pl = u->plan;
    ot_solution *sol = u->sink->sol;
    int any = 0, left = 0;
    for (int64_t b = 0; b < u->k; b++) {
        const int64_t lane = u->lane0 + b, at = shared ? i : u->next[b];
        const int here = u->stopped[b] == OT__LANE_RUNNING || u->at[b] == -2;
        const int due = here && at < ot__plan_nt(pl, lane) &&
                        (shared || ot__plan_times(pl, lane)[at] == t);
        u->at[b] = due ? at : -1;
        any |= due;
    }
    if (!any)
        return OT_OK;
    const int st = u->ops->emit(u, t, y);
    if (st != OT_OK) {
        ot__run_unit_fails(u, st, t, u->cb->msg, 0);
        return st;
    }
    if (u->adj_ev) /* the adjoint's loss terms (run/adjoint_events.h) */
        ot__adj_ev_output(u, t, y);
    for (int64_t b = 0; b < u->k; b++) {
        if (u->at[b] < 0)
            continue;
        const int64_t lane = u->lane0 + b;
        sol->count[lane] = u->at[b] + 1;
        sol->stats[lane].final_time = t;
        u->next[b] = u->at[b] + 1;
        if (!shared && u->stopped[b] == OT__LANE_RUNNING &&
            u->next[b] >= ot__plan_nt(pl, lane)) {
            u->stopped[b] = OT__LANE_DONE; /* no events past its own times */
            left = 1;
        }
    }
    if (left && u->ops->stopped_changed)
        u->ops->stopped_changed(u);
    return OT_OK;
}

/* The guard's look at the unit's lanes at t (state y): a lane that went
 * through a handled root's surface unseen fails there (run/guard.c). */
static void check_crossings(ot__unit *u, double t, N_Vector y)
{
    if (u->guard == NULL || ot__run_all_stopped(u))
        return;
    const int64_t failed = u->nfailed;
    ot__guard_check(u->guard, u, t, u->ops->host_state(u, y));
    if (u->nfailed != failed && u->ops->stopped_changed)
        u->ops->stopped_changed(u);
}

/* What a run of ot__run_dense allocated for u. */
static void drop_run_parts(ot__unit *u)
{
    free(u->times_owned);
    free(u->stops_owned);
    ot__guard_free(u->guard);
    ot__sens_jump_free(u);
    u->times_owned = u->stops_owned = NULL;
    u->guard = NULL;
}

void ot__run_unit_abandon(ot__unit *u)
{
    drop_run_parts(u);
    ot__adj_ev_free(u);
}

void ot__run_dense(ot__unit *u)
{
    const ot__plan *pl = u->plan;
    /* Shared times, one lane's, or (per lane) the union of the lanes'.
     * Scheduled stops: one lane's, or the union. */
    const int shared = u->k == 1 || !pl->t_lanes;
    const double *times = ot__plan_times(pl, u->lane0), *stops = NULL;
    int64_t nts = ot__plan_nt(pl, u->lane0), nus = 0, ks = 0;
    if (!shared) {
        nts = union_of(u, ot__plan_times, ot__plan_nt, &u->times_owned);
        times = u->times_owned;
    }
    if (pl->stops && u->k == 1) {
        stops = ot__plan_stops(pl, u->lane0);
        nus = ot__plan_nstops(pl, u->lane0);
    } else if (pl->stops && nts >= 0) {
        nus = union_of(u, ot__plan_stops, ot__plan_nstops, &u->stops_owned);
        stops = u->stops_owned;
    }
    if (nts < 0 || nus < 0) {
        snprintf(u->cb->msg, sizeof u->cb->msg, "cannot allocate the lanes' times");
        ot__run_unit_fails(u, OT_ERR_NOMEM, pl->t0, u->cb->msg, 0);
        nts = nus = 0;
    }
    for (int64_t b = 0; b < u->k; b++)
        u->next[b] = u->knext[b] = 0;
    if (ot__guard_new(u, &u->guard) != OT_OK ||
        (ot__sens_jumps(pl) && ot__sens_jump_new(u) != OT_OK)) {
        snprintf(u->cb->msg, sizeof u->cb->msg,
                 "cannot allocate the events' guard (or the sensitivities' jump)");
        ot__run_unit_fails(u, OT_ERR_NOMEM, pl->t0, u->cb->msg, 0);
        nts = nus = 0;
    }
    /* Each lane's record holds its stops' events from the start: a push
     * that failed halfway would fail one lane of a block, and its
     * block-mates would go on with other steps than alone. */
    for (int64_t b = 0; nts > 0 && u->sink->events && b < u->k; b++)
        if (ot__plan_nstops(pl, u->lane0 + b) > 0 &&
            ot__record_reserve(&u->sink->events[u->lane0 + b],
                               ot__plan_nstops(pl, u->lane0 + b),
                               ot__event_width(u->n)) != OT_OK) {
            snprintf(u->cb->msg, sizeof u->cb->msg,
                     "cannot allocate the lanes' event records");
            ot__run_unit_fails(u, OT_ERR_NOMEM, pl->t0, u->cb->msg, 0);
            nts = nus = 0;
        }
    const double last = nts > 0 ? times[nts - 1] : pl->t0;
    /* An output at a stop's time shows the state after the stop, or with
     * outputs_before_stops the state before it: the output loop then takes
     * the stops at tout after the output, those at the start included. */
    const int before = pl->ode->outputs_before_stops;
    N_Vector y = NULL;
    int r = 1;
    /* Stops at the start come before it. */
    for (; r == 1 && !before && ks < nus && stops[ks] == u->t_restart; ks++) {
        y = u->ops->restart_state(u, u->ops->target(u, OT__TARGET_STOP));
        r = ot__run_take_stops(u, stops[ks], y, last);
    }
    for (int64_t i = 0; r == 1 && i < nts && !ot__run_all_stopped(u) &&
                        !ot__progress_cancelled(pl->prog);
         i++) {
        const double tout = times[i];
        /* Stops before tout, and those at tout unless they come after it. */
        for (; r == 1 && ks < nus && (stops[ks] < tout || (!before && stops[ks] == tout));
             ks++)
            if ((r = reach(u, stops[ks], 1, OT__TARGET_STOP, &y)) == 1)
                r = ot__run_take_stops(u, stops[ks], y, last);
        if (r != 1)
            break;
        for (int64_t b = 0; b < u->k; b++)
            u->at[b] = -1;
        /* A stop at tout still to come: reach tout exactly, never past it,
         * as reach does for the stop itself (the state its handler gets). */
        const int at_stop = before && ks < nus && stops[ks] == tout;
        if ((r = reach(u, tout, at_stop || u->ig->m->exact_outputs, i, &y)) < 0)
            break;
        if (r == 1)
            check_crossings(u, tout, y);
        if (ot__run_emit(u, i, tout, y, shared) != OT_OK)
            break;
        report(u, (double)(i + 1) / (double)nts);
        /* Then the stops at tout. At the last output they are past every
         * lane's outputs (a lane of per-lane times is done at its own
         * last), so, as stops after it, not taken. */
        for (; r == 1 && at_stop && i + 1 < nts && ks < nus && stops[ks] == tout; ks++)
            r = ot__run_take_stops(u, tout, y, last);
    }
    drop_run_parts(u); /* done with its times, stops and guard */
    u->ops->stats(u);
}

void ot__run_lane_out_of_memory(ot_solution *sol, int64_t lane, int method)
{
    char msg[160];
    snprintf(msg, sizeof msg,
             "%s ran out of memory (an allocation inside it failed) after t = %g",
             ot__method(method)->ark ? "ARKODE" : "CVODE", sol->stats[lane].final_time);
    ot__solution_fail_lane(sol, lane, OT_ERR_NOMEM, msg);
}

/* ---- Every step ------------------------------------------------------------ */

/* The unit's rows at (t, y) as the next step of its record. */
static int record_step(ot__unit *u, double t, N_Vector y)
{
    double *slot = ot__record_push(u->steps, t);
    if (slot == NULL) {
        snprintf(u->cb->msg, sizeof u->cb->msg,
                 "cannot grow the step record past %lld steps",
                 (long long)u->steps->count);
        return OT_ERR_NOMEM;
    }
    return u->ops->rows(u, t, y, slot);
}

/* Running lanes now have the record's steps, the last at t. */
static void count_steps(ot__unit *u, double t)
{
    ot_solution *sol = u->sink->sol;
    for (int64_t b = 0; b < u->k; b++)
        if (u->stopped[b] == OT__LANE_RUNNING) {
            sol->count[u->lane0 + b] = u->steps->count;
            sol->stats[u->lane0 + b].final_time = t;
        }
}

void ot__run_steps(ot__unit *u)
{
    const ot__plan *pl = u->plan;
    double t = pl->t0;
    for (int64_t b = 0; b < u->k; b++)
        u->sink->sol->stats[u->lane0 + b].final_time = t;
    N_Vector y = u->ops->restart_state(u, u->ops->target(u, OT__TARGET_STEP));
    int st = record_step(u, t, y);
    if (st != OT_OK)
        ot__run_unit_fails(u, st, t, u->cb->msg, 0);
    else
        count_steps(u, t);
    ot__ig_set_stop_time(u->ig, pl->t_final);
    if (ot__guard_new(u, &u->guard) != OT_OK) {
        snprintf(u->cb->msg, sizeof u->cb->msg, "cannot allocate the events' guard");
        ot__run_unit_fails(u, OT_ERR_NOMEM, t, u->cb->msg, 0);
    }
    while (!ot__run_all_stopped(u) && t < pl->t_final &&
           !ot__progress_cancelled(pl->prog)) {
        report(u, (t - pl->t0) / (pl->t_final - pl->t0));
        if (u->steps->count > pl->step_limit) {
            /* As CVODE's own max_steps failure: blamed on a callback that
             * kept failing (the cause reads cv_msg then). */
            snprintf(u->cb->cv_msg, sizeof u->cb->cv_msg,
                     "more than max_steps = %lld steps before t = %g",
                     (long long)pl->step_limit, pl->t_final);
            ot__run_unit_fails(u, OT_ERR_SOLVER, t, u->cb->cv_msg, 1);
            break;
        }
        N_Vector dst = u->ops->target(u, OT__TARGET_STEP);
        int flag = ot__ig_evolve(u->ig, pl->t_final, dst, &t, 1);
        if (flag >= 0 && ot__ig_time_check(u->ig, pl->ode->rtol, pl->t0, u->cb->cv_msg,
                                           sizeof u->cb->cv_msg) < 0)
            flag = OT__IG_TIME_RESOLUTION;
        if (flag < 0) {
            char msg[320];
            snprintf(msg, sizeof msg, "%s stopped at t = %g: %s", ot__ig_name(u->ig), t,
                     u->cb->cv_msg);
            if (fail_or_go_on(u, flag, t, msg) <= 0)
                break;
            continue;
        }
        if ((st = record_step(u, t, dst)) != OT_OK) {
            ot__run_unit_fails(u, st, t, u->cb->msg, 0);
            break;
        }
        count_steps(u, t);
        if (flag != OT__IG_ROOT_RETURN) {
            check_crossings(u, t, dst);
            continue;
        }
        const int rc = ot__run_take_roots(u, t, dst, 0);
        if (rc < 0)
            break;
        /* A state a handler changed is a second step at the same time. */
        if (rc == 2 && !ot__run_all_stopped(u)) {
            y = u->ops->restart_state(u, u->ops->target(u, OT__TARGET_STEP));
            if ((st = record_step(u, t, y)) != OT_OK) {
                ot__run_unit_fails(u, st, t, u->cb->msg, 0);
                break;
            }
            count_steps(u, t);
        }
    }
    ot__guard_free(u->guard);
    u->guard = NULL;
    u->ops->stats(u);
}

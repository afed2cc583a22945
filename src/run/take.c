/* The run loop's events (take.h): roots that fired and scheduled stops,
 * their handlers and the restart after them, once for every mode. */
#include <cvodes/cvodes.h>
#include <stdio.h>
#include <string.h>

#include "run/adjoint_events.h"
#include "run/guard.h"
#include "run/sens_jump.h"
#include "run/take.h"
#include "kit/events.h"

/* Restarts the unit at t from host (its state, maybe changed by handlers):
 * order 1, a new step, the counters kept. 0, or -1 when the unit failed. */
int ot__run_restart(ot__unit *u, double t, double *host)
{
    ot__run_keep_counters(u);
    if (u->adj_ev)
        ot__adj_ev_before(u, t);
    const int flag = u->ops->reinit(u, t, host);
    if (flag == CV_MEM_FAIL) { /* the mode's restart state (lockstep's first) */
        snprintf(u->cb->msg, sizeof u->cb->msg,
                 "cannot allocate the state to restart from at t = %g", t);
        ot__run_unit_fails(u, OT_ERR_NOMEM, t, u->cb->msg, 0);
        return -1;
    }
    if (flag != CV_SUCCESS) {
        ot__run_unit_fails(u, OT_ERR_SOLVER, t, u->cb->cv_msg, 1);
        return -1;
    }
    u->t_restart = t;
    return ot__run_restarted(u, t);
}

int ot__run_restarted(ot__unit *u, double t)
{
    const int st = u->adj_ev ? ot__adj_ev_after(u, t) : OT_OK;
    if (st != OT_OK)
        ot__run_unit_fails(u, st, t, u->cb->msg, 0);
    return st == OT_OK ? 0 : -1;
}

/* ---- Roots and stops ------------------------------------------------------- */

/* The roots that fired at t, y the unit's state there. A lane whose STOP
 * root fired (or any root, where the mode cannot show handlers the state)
 * stops there, recorded as its root and, with recorded events, as an event;
 * the others record their events, calling the handler for HANDLE roots on
 * their own [n, 1] column and params. A handler that fails fails its lane
 * alone. at_output: t is the output time being reached, so a lane that stops
 * here still gets that output (at[b] = -2). When a handler ran, the unit
 * restarts at t from the handlers' states. @return -1 the restart failed,
 * 0 no restart, 1 restarted, 2 restarted with a state a handler changed. */
int ot__run_take_roots(ot__unit *u, double t, N_Vector y, int at_output)
{
    const ot_ode *ode = u->plan->ode;
    ot_solution *sol = u->sink->sol;
    const int64_t nr = ode->nroots, n = u->n, np = u->np;
    const int got = ot__ig_root_info(u->ig, u->rootsfound) == CV_SUCCESS;
    double *yd = u->ops->host_state && u->sink->events ? u->ops->host_state(u, y) : NULL;
    if (yd && u->scratch)
        memcpy(u->scratch, yd, (size_t)(n * u->k) * sizeof *yd);
    if (yd && got)
        ot__guard_before(u->guard, u, t, yd);
    const int64_t failed_before = u->nfailed;
    int changed_any = 0, left = 0;
    for (int64_t b = 0; b < u->k; b++) {
        const int *rf = got ? u->rootsfound + b * nr : NULL;
        int fired = -1;
        for (int64_t r = 0; rf && r < nr && fired < 0; r++)
            fired = rf[r] != 0 ? (int)r : -1;
        if (u->stopped[b] != OT__LANE_RUNNING || (got && fired < 0))
            continue;
        const int64_t lane = u->lane0 + b;
        const int stop = got ? ot__event_stop_root(ode, rf) : -1;
        const int jumps = u->jump != NULL && rf != NULL;
        char msg[200];
        if (stop >= 0 || yd == NULL) {
            u->stopped[b] = OT__LANE_ROOT;
            left = 1;
            sol->root_index[lane] = stop >= 0 ? stop : fired >= 0 ? fired : 0;
            sol->root_time[lane] = t;
            sol->stats[lane].final_time = t;
            if (at_output)
                u->at[b] = -2;
            /* The stop is an event too: its state at the root. */
            if (stop >= 0 && yd &&
                ot__event_push(ode, &u->sink->events[lane], t, stop, yd + b * n,
                               yd + b * n, msg, sizeof msg) != OT_OK)
                ot__solution_fail_lane(sol, lane, OT_ERR_NOMEM, msg);
            continue;
        }
        /* The handler's failure is its lane's: its own callback state. */
        ot__cb cb;
        ot__cb_reset(&cb);
        int changed = 0;
        if (jumps)
            ot__sens_jump_save(u, b, yd + b * n, u->p + b * np);
        int st = ot__event_take(ode, &u->sink->events[lane], t, rf, yd + b * n,
                                u->p + b * np, lane, &cb, &changed, msg, sizeof msg);
        const char *why = st == OT_ERR_CALLBACK ? cb.msg : msg;
        if (st == OT_OK && jumps && changed) {
            st = ot__sens_jump_take(u, b, t, -1, rf, yd + b * n, u->p + b * np, msg,
                                    sizeof msg);
            why = msg;
        }
        if (st != OT_OK) {
            ot__run_lane_fails(u, b, st, why);
            left = 1;
        } else {
            changed_any |= changed;
        }
    }
    if (yd && got) /* handled crossings judged: a lane sent through fails */
        ot__guard_after(u->guard, u, t, yd);
    left |= u->nfailed != failed_before;
    if (left && u->ops->stopped_changed)
        u->ops->stopped_changed(u);
    if (!changed_any || ot__run_all_stopped(u))
        return 0;
    const int differs =
        u->scratch && memcmp(u->scratch, yd, (size_t)(n * u->k) * sizeof *yd) != 0;
    return ot__run_restart(u, t, yd) != 0 ? -1 : 1 + differs;
}

/* The lanes whose next scheduled stop is t (state y): the handler on each
 * (root -1 - k), recorded as an event; a lane whose handler fails fails
 * alone. Then the unit restarts at t, its stop time aimed at `last` (SUNDIALS
 * 6.4 keeps the stop time it just reached, 7 clears it, and 6.4 would
 * refuse to go on from it). @return 1 go on, 0 every lane stopped, -1 the
 * unit failed. */
int ot__run_take_stops(ot__unit *u, double t, N_Vector y, double last)
{
    const ot__plan *pl = u->plan;
    double *yd = u->ops->host_state(u, y);
    int taken = 0, left = 0;
    for (int64_t b = 0; b < u->k; b++) {
        const int64_t lane = u->lane0 + b, k = u->knext[b];
        if (u->stopped[b] != OT__LANE_RUNNING || k >= ot__plan_nstops(pl, lane) ||
            ot__plan_stops(pl, lane)[k] != t)
            continue;
        u->knext[b]++;
        ot__guard_forget(u->guard, b); /* the handler changes its motion */
        char msg[300];
        double *yb = yd + b * u->n, *qb = u->p + b * u->np;
        if (u->jump)
            ot__sens_jump_save(u, b, yb, qb);
        int st = ot__event_take_stop(pl->ode, &u->sink->events[lane], t, k, yb, qb, lane,
                                     msg, sizeof msg);
        if (st == OT_OK && u->jump)
            st = ot__sens_jump_take(u, b, t, k, NULL, yb, qb, msg, sizeof msg);
        if (st != OT_OK) {
            ot__run_lane_fails(u, b, st, msg);
            left = 1;
        } else {
            taken = 1;
        }
    }
    if (left && u->ops->stopped_changed)
        u->ops->stopped_changed(u);
    if (!taken || ot__run_all_stopped(u))
        return ot__run_all_stopped(u) ? 0 : 1;
    if (ot__run_restart(u, t, yd) != 0)
        return -1;
    if (last > t)
        ot__ig_set_stop_time(u->ig, last);
    return 1;
}

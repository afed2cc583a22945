/* The adjoint through events (adjoint_events.h): the forward pass's log,
 * the re-runs of its segments and the backward pass across them. */
#include <cvodes/cvodes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "kit/adjoint.h"
#include "run/adjoint_events.h"
#include "run/sens_jump.h"
#include "solution/output.h"

/* The forward pass's log, the unit's for its adjoint. */
struct ot__adj_ev {
    ot__run_adj *a;
    int64_t m, nr;       /* m = n + np; the root functions */
    ot__record seg;      /* a segment's start: y [n, k], q [np, k], the lanes'
                            states [k] (OT__LANE_*) */
    ot__record ev;       /* an event: lane, stop (-1: roots), the segment it
                            starts, rf [nr], z- [m], z+ [m] */
    double *dgdp;        /* [np, k, nt]: dg_i/dq of each lane at each output */
    double *y0, *p0;     /* [n, k], [np, k]: the unit's start */
    double *mu;          /* [np, k]: mu kept while the backward problem is made */
    int *rf;             /* [nr]: one event's roots */
    int64_t *oi;         /* [k]: each lane's next output, last first (backward) */
    int quad_flag;       /* CVodeGetQuadDky's, before a restart */
    int64_t segment_max; /* the most forward steps of one segment's re-run */
};

enum { EV_LANE = 0, EV_STOP = 1, EV_SEG = 2, EV_RF = 3 };

static void ev_free(ot__adj_ev *E)
{
    if (E == NULL)
        return;
    ot__record_free(&E->seg);
    ot__record_free(&E->ev);
    OT__FREE_ALL(E->dgdp, E->y0, E->p0, E->mu, E->rf, E->oi, E);
}

void ot__adj_ev_free(ot__unit *u)
{
    ev_free(u->adj_ev);
    u->adj_ev = NULL;
}

/* The log for unit u. Ownership: the caller's (ev_free, or through
 * u->adj_ev ot__adj_ev_free); NULL when out of memory. */
static ot__adj_ev *ev_new(ot__unit *u, ot__run_adj *a)
{
    const ot__plan *pl = u->plan;
    const int64_t n = u->n, np = u->np, k = u->k;
    ot__adj_ev *E = OT__CALLOC(1, sizeof *E);
    if (E == NULL)
        return NULL;
    E->a = a;
    E->m = n + np;
    E->nr = pl->ode->nroots;
    E->seg.width = (n + np + 1) * k;
    E->ev.width = EV_RF + E->nr + 2 * E->m;
    E->dgdp = OT__CALLOC((size_t)(np * k * pl->nt) + 1, sizeof *E->dgdp);
    E->y0 = OT__MALLOC((size_t)(n * k) * sizeof *E->y0);
    E->p0 = OT__MALLOC((size_t)(np * k + 1) * sizeof *E->p0);
    E->mu = OT__MALLOC((size_t)(np * k + 1) * sizeof *E->mu);
    E->rf = OT__CALLOC((size_t)E->nr + 1, sizeof *E->rf);
    E->oi = OT__MALLOC((size_t)k * sizeof *E->oi);
    if (!E->dgdp || !E->y0 || !E->p0 || !E->mu || !E->rf || !E->oi) {
        ev_free(E);
        return NULL;
    }
    return E;
}

/* The unit's state at its last restart, host memory [n, k]. */
static const double *restart_host(ot__unit *u)
{
    return u->ops->host_state(
        u, u->ops->restart_state(u, u->ops->target(u, OT__TARGET_STOP)));
}

/* A segment starts at t: the unit's restart state, parameters and lane
 * states. */
static int log_segment(ot__unit *u, double t)
{
    ot__adj_ev *E = u->adj_ev;
    double *slot = ot__record_push(&E->seg, t);
    if (slot == NULL) {
        snprintf(u->cb->msg, sizeof u->cb->msg,
                 "adjoint: cannot grow the log of segments between events past %lld",
                 (long long)E->seg.count);
        return OT_ERR_NOMEM;
    }
    memcpy(slot, restart_host(u), (size_t)(u->n * u->k) * sizeof *slot);
    if (u->np > 0)
        memcpy(slot + u->n * u->k, u->p, (size_t)(u->np * u->k) * sizeof *slot);
    for (int64_t b = 0; b < u->k; b++)
        slot[(u->n + u->np) * u->k + b] = (double)u->stopped[b];
    return OT_OK;
}

void ot__adj_ev_before(ot__unit *u, double t)
{
    ot__adj_ev *E = u->adj_ev;
    E->quad_flag = E->a->yQ ? CVodeGetQuadDky(u->ig->mem, t, 0, E->a->yQ) : 0;
}

int ot__adj_ev_after(ot__unit *u, double t)
{
    ot__adj_ev *E = u->adj_ev;
    /* The integral goes on from its value at t: CVodeReInit keeps the
     * quadrature of the last step, past t at a root. */
    const int f = E->quad_flag ? E->quad_flag
                  : E->a->yQ   ? CVodeQuadReInit(u->ig->mem, E->a->yQ)
                               : 0;
    if (f != 0) {
        snprintf(u->cb->msg, sizeof u->cb->msg,
                 "adjoint: cannot restart the integral term at t = %g: %.150s", t,
                 u->cb->cv_msg);
        return OT_ERR_SOLVER;
    }
    return log_segment(u, t);
}

void ot__adj_ev_output(ot__unit *u, double t, N_Vector y)
{
    ot__adj_ev *E = u->adj_ev;
    const int64_t n = u->n, np = u->np, k = u->k;
    const double *yd = N_VGetArrayPointer(y);
    for (int64_t b = 0; b < k; b++) {
        const int64_t i = u->at[b];
        if (i < 0 || u->stopped[b] != OT__LANE_RUNNING)
            continue;
        double *dg = E->dgdp + (i * k + b) * np;
        memset(dg, 0, (size_t)np * sizeof *dg);
        ot__run_adj_point(u, E->a, i, b, t, yd + b * n, dg);
    }
}

int ot__adj_ev_event(ot__unit *u, int64_t b, double t, int64_t stop, const int *rf,
                     const double *zm, const double *y, const double *q, char *msg,
                     size_t len)
{
    ot__adj_ev *E = u->adj_ev;
    double *slot = ot__record_push(&E->ev, t);
    if (slot == NULL) {
        snprintf(msg, len, "adjoint: cannot grow the log of events past %lld",
                 (long long)E->ev.count);
        return OT_ERR_NOMEM;
    }
    slot[EV_LANE] = (double)b;
    slot[EV_STOP] = (double)(stop >= 0 ? stop : -1);
    slot[EV_SEG] = (double)E->seg.count; /* the restart after it starts it */
    for (int64_t r = 0; r < E->nr; r++)
        slot[EV_RF + r] = rf ? (double)rf[r] : 0.0;
    double *z = slot + EV_RF + E->nr;
    memcpy(z, zm, (size_t)E->m * sizeof *z);
    memcpy(z + E->m, y, (size_t)u->n * sizeof *z);
    if (u->np > 0)
        memcpy(z + E->m + u->n, q, (size_t)u->np * sizeof *z);
    return OT_OK;
}

/* ---- The forward pass ---------------------------------------------------- */

/* The lanes that left the unit (failed). */
static int64_t failed(const ot__unit *u)
{
    int64_t c = 0;
    for (int64_t b = 0; b < u->k; b++)
        c += u->stopped[b] == OT__LANE_FAILED;
    return c;
}

/* Lanes past their own last output (lockstep's per-lane times) run again. */
static void undone(ot__unit *u)
{
    int any = 0;
    for (int64_t b = 0; b < u->k; b++)
        if (u->stopped[b] == OT__LANE_DONE) {
            u->stopped[b] = OT__LANE_RUNNING;
            any = 1;
        }
    if (any && u->ops->stopped_changed)
        u->ops->stopped_changed(u);
}

/* One forward pass from t0 (again: after a pass some lane left, from the
 * unit's start without it). @return 1 done with lanes running, 0 not. */
static int forward_pass(ot__unit *u, ot__run_adj *a, int again)
{
    ot__adj_ev *E = u->adj_ev;
    const ot__plan *pl = u->plan;
    const int64_t np = u->np, k = u->k;
    const double t0 = ot__plan_t0(pl, u->lane0);
    E->seg.count = E->ev.count = 0;
    if (np > 0)
        memcpy(u->p, E->p0, (size_t)(np * k) * sizeof *u->p);
    int f = 0;
    if (again) {
        undone(u);
        for (int64_t b = 0; u->sink->events && b < k; b++)
            if (u->stopped[b] == OT__LANE_RUNNING)
                u->sink->events[u->lane0 + b].count = 0; /* taken again */
        ot__run_keep_counters(u);
        f = u->ops->reinit(u, t0, E->y0);
        u->t_restart = t0;
    }
    f = f ? f : ot__run_adj_begin(u, a);
    if (f != CV_SUCCESS) {
        ot__run_unit_fails(u, f == CV_MEM_FAIL ? OT_ERR_NOMEM : OT_ERR_SOLVER, t0,
                           u->cb->cv_msg, 1);
        return 0;
    }
    /* Room for every stop's event and segment from the start: a push that
     * failed halfway would fail one lane of a block, and its block-mates
     * would go on with other steps than without the failure. */
    int64_t nstops = 0;
    for (int64_t b = 0; b < k; b++)
        nstops += ot__plan_nstops(pl, u->lane0 + b);
    if (ot__record_reserve(&E->ev, nstops, E->ev.width) != OT_OK ||
        ot__record_reserve(&E->seg, nstops + 2, E->seg.width) != OT_OK) {
        snprintf(u->cb->msg, sizeof u->cb->msg,
                 "adjoint: cannot allocate the log of %lld stops' events",
                 (long long)nstops);
        ot__run_unit_fails(u, OT_ERR_NOMEM, t0, u->cb->msg, 0);
        return 0;
    }
    if (log_segment(u, t0) != OT_OK) {
        ot__run_unit_fails(u, OT_ERR_NOMEM, t0, u->cb->msg, 0);
        return 0;
    }
    ot__run_dense(u);
    for (int64_t b = 0; b < k; b++)
        if (u->stopped[b] == OT__LANE_RUNNING || u->stopped[b] == OT__LANE_DONE)
            return 1;
    return 0;
}

/* ---- The lanes' output times ------------------------------------------------ */

/* Lane b's output times and their count. */
static const double *lane_times(const ot__unit *u, int64_t b, int64_t *nt)
{
    *nt = ot__plan_nt(u->plan, u->lane0 + b);
    return ot__plan_times(u->plan, u->lane0 + b);
}

/* The first output time of any lane after t, or INFINITY. */
static double output_after(const ot__unit *u, double t)
{
    double next = INFINITY;
    for (int64_t b = 0; b < u->k; b++) {
        int64_t nt;
        const double *tb = lane_times(u, b, &nt);
        for (int64_t i = 0; i < nt; i++)
            if (tb[i] > t) {
                next = tb[i] < next ? tb[i] : next;
                break;
            }
    }
    return next;
}

/* The latest output still to be taken backward (E->oi), or -INFINITY. */
static double output_before(const ot__unit *u)
{
    double last = -INFINITY;
    for (int64_t b = 0; b < u->k; b++) {
        int64_t nt;
        const double *tb = lane_times(u, b, &nt);
        if (u->adj_ev->oi[b] >= 0 && tb[u->adj_ev->oi[b]] > last)
            last = tb[u->adj_ev->oi[b]];
    }
    return last;
}

/* ---- The backward pass --------------------------------------------------- */

/* Segment s again from its start ts to te with checkpoints, output by
 * output (each CVodeF call within max_steps as in the forward pass).
 * @return 1, or -1 the unit failed. */
static int rerun(ot__unit *u, ot__run_adj *a, int64_t s, double te)
{
    ot__adj_ev *E = u->adj_ev;
    const ot__plan *pl = u->plan;
    void *cv = u->ig->mem;
    const int64_t n = u->n, np = u->np, k = u->k;
    const double ts = E->seg.t[s];
    double *rec = E->seg.y + s * E->seg.width;
    if (np > 0)
        memcpy(u->p, rec + n * k, (size_t)(np * k) * sizeof *u->p);
    /* The lanes as they were there (a lane the backward pass failed stays
     * failed), running where they were to reach outputs. */
    for (int64_t b = 0; b < k; b++)
        if (u->stopped[b] != OT__LANE_FAILED)
            u->stopped[b] = (unsigned char)rec[(n + np) * k + b];
    if (u->ops->stopped_changed)
        u->ops->stopped_changed(u);
    CVodeSetInitStep(cv, pl->ode->h0); /* as the forward pass's restart */
    int f = u->ops->reinit(u, ts, rec);
    u->t_restart = ts;
    if (!f && a->yQ) {
        N_VConst(0.0, a->yQ);
        f = CVodeQuadReInit(cv, a->yQ);
    }
    f = f ? f : CVodeAdjReInit(cv);
    f = f ? f : ot__ig_set_stop_time(u->ig, te);
    N_Vector y = u->ops->target(u, OT__TARGET_STEP);
    double at = ts;
    while (f >= 0) {
        const double next = output_after(u, at), tout = next < te ? next : te;
        at = tout;
        double tret = tout;
        int ncheck = 0;
        f = CVodeF(cv, tout, y, &tret, CV_NORMAL, &ncheck);
        if (f >= 0 && tout == te)
            break;
    }
    if (f < 0) {
        char msg[400];
        snprintf(msg, sizeof msg,
                 "adjoint: the forward problem run again from the event at t = %g to "
                 "t = %g failed: %s",
                 ts, te, f == CV_MEM_FAIL ? "out of memory" : u->cb->cv_msg);
        ot__run_unit_fails(u, f == CV_MEM_FAIL ? OT_ERR_NOMEM : OT_ERR_SOLVER, ts, msg,
                           1);
        return -1;
    }
    long nst = 0;
    CVodeGetNumSteps(cv, &nst);
    E->segment_max = E->segment_max > nst ? E->segment_max : nst;
    return 1;
}

/* The backward problem from *tcur to target; made first when it is not
 * yet (CVODES' own start zeroes mu: kept aside). */
static int back_to(ot__unit *u, ot__run_adj *a, int *made, int restart, double *tcur,
                   double target)
{
    ot__adj_ev *E = u->adj_ev;
    const size_t mu_bytes = (size_t)(u->np * u->k) * sizeof(double);
    int f = 0;
    if (!*made) {
        if (u->np > 0)
            memcpy(E->mu, N_VGetArrayPointer(a->qB), mu_bytes);
        f = ot__run_adj_backward(a, *tcur);
        if (u->np > 0)
            memcpy(N_VGetArrayPointer(a->qB), E->mu, mu_bytes);
        f = f ? f : CVodeSetMaxNumStepsB(u->ig->mem, a->which, a->max_steps_b);
        *made = 1;
        restart = 1;
    }
    return ot__run_adj_segment(u, a, f, restart, tcur, target);
}

/* Lane b stands still from here: its lambda and mu zero. */
static void stand_still(ot__unit *u, ot__run_adj *a, int64_t b)
{
    memset(N_VGetArrayPointer(a->yB) + b * u->n, 0, (size_t)u->n * sizeof(double));
    if (u->np > 0)
        memset(N_VGetArrayPointer(a->qB) + b * u->np, 0, (size_t)u->np * sizeof(double));
}

/* The events that start segment s, last first: each lane's jump. */
static void jump_events(ot__unit *u, ot__run_adj *a, int64_t s, int64_t *e)
{
    ot__adj_ev *E = u->adj_ev;
    const int64_t n = u->n, np = u->np;
    double *lam = N_VGetArrayPointer(a->yB), *mu = np ? N_VGetArrayPointer(a->qB) : NULL;
    for (; *e >= 0 && (int64_t)E->ev.y[*e * E->ev.width + EV_SEG] == s; (*e)--) {
        const double *slot = E->ev.y + *e * E->ev.width;
        const int64_t b = (int64_t)slot[EV_LANE], stop = (int64_t)slot[EV_STOP];
        if (u->stopped[b] != OT__LANE_RUNNING)
            continue;
        for (int64_t r = 0; r < E->nr; r++)
            E->rf[r] = (int)slot[EV_RF + r];
        const double *zm = slot + EV_RF + E->nr;
        char msg[400];
        const int st = ot__sens_jump_back(
            u, b, E->ev.t[*e], stop, stop >= 0 ? NULL : E->rf, zm, zm + E->m, lam + b * n,
            mu ? mu + b * np : NULL, a->gp + b * np, msg, sizeof msg);
        if (st != OT_OK) {
            ot__run_lane_fails(u, b, st, msg);
            stand_still(u, a, b);
            if (u->ops->stopped_changed)
                u->ops->stopped_changed(u);
        }
    }
}

/* The lanes whose next output backward is at t: lambda and mu jump by its
 * dg/dy and dg/dq. @return whether any moved. */
static int jump_output(ot__unit *u, ot__run_adj *a, double t)
{
    ot__adj_ev *E = u->adj_ev;
    const int64_t n = u->n, np = u->np, k = u->k;
    double *lam = N_VGetArrayPointer(a->yB), *mu = np ? N_VGetArrayPointer(a->qB) : NULL;
    int moved = 0;
    for (int64_t b = 0; b < k; b++) {
        int64_t nt;
        const double *tb = lane_times(u, b, &nt);
        const int64_t i = E->oi[b];
        if (i < 0 || tb[i] != t)
            continue;
        E->oi[b]--;
        if (u->stopped[b] != OT__LANE_RUNNING)
            continue;
        const double *dy = a->dgdy + (i * k + b) * n, *dp = E->dgdp + (i * k + b) * np;
        for (int64_t r = 0; r < n; r++) {
            lam[b * n + r] += dy[r];
            moved |= dy[r] != 0;
        }
        for (int64_t j = 0; j < np; j++) {
            mu[b * np + j] += dp[j];
            moved |= dp[j] != 0;
        }
    }
    return moved;
}

/* Whether segment s began at a scheduled stop: its events (the last not
 * yet jumped is e) are a stop's. One restart follows each call that takes
 * roots or stops, so a segment's events are all roots or all stops. */
static int starts_at_stop(const ot__adj_ev *E, int64_t s, int64_t e)
{
    if (e < 0)
        return 0;
    const double *slot = E->ev.y + e * E->ev.width;
    return (int64_t)slot[EV_SEG] == s && slot[EV_STOP] >= 0;
}

/* The segments last to first. @return 1 at t0 with a lane running. */
static int backward(ot__unit *u, ot__run_adj *a)
{
    ot__adj_ev *E = u->adj_ev;
    const int64_t nseg = E->seg.count;
    N_VConst(0.0, a->yB);
    if (u->np > 0)
        N_VConst(0.0, a->qB);
    double last = -INFINITY; /* the last output of any lane */
    for (int64_t b = 0; b < u->k; b++) {
        int64_t nt;
        const double *tb = lane_times(u, b, &nt);
        E->oi[b] = nt - 1;
        last = nt > 0 && tb[nt - 1] > last ? tb[nt - 1] : last;
    }
    int64_t e = E->ev.count - 1;
    while (e >= 0 && (int64_t)E->ev.y[e * E->ev.width + EV_SEG] >= nseg)
        e--; /* no restart followed: every lane had stopped */
    int made = 0;
    for (int64_t s = nseg - 1; s >= 0; s--) {
        const double ts = E->seg.t[s], te = s + 1 < nseg ? E->seg.t[s + 1] : last;
        double tcur = te;
        int restart = 1; /* the segment's re-run re-initialised CVODES' adjoint */
        if (te > ts && rerun(u, a, s, te) != 1)
            return 0;
        /* An output at ts belongs to the segment: it came after the events
         * that start it, unless they are stops and outputs stand before
         * them (ot_ode_set_outputs_before_stops): then it is segment s - 1's
         * last, taken after these events' jump. */
        const int past_ts = u->plan->ode->outputs_before_stops && starts_at_stop(E, s, e);
        for (double to = output_before(u); to > ts || (to == ts && !past_ts);
             to = output_before(u)) {
            if (to < tcur) { /* its outputs, last first */
                if (back_to(u, a, &made, restart, &tcur, to) != 1)
                    return 0;
                restart = 0;
            }
            restart |= jump_output(u, a, to);
        }
        if (ts < tcur && back_to(u, a, &made, restart, &tcur, ts) != 1)
            return 0;
        jump_events(u, a, s, &e);
        if (ot__run_all_stopped(u))
            return 0;
    }
    return 1;
}

/* ---- Both passes ------------------------------------------------------------ */

void ot__run_adjoint_events(ot__unit *u, ot__run_adj *a)
{
    const ot__plan *pl = u->plan;
    ot_solution *sol = u->sink->sol;
    const int64_t n = u->n, np = u->np, k = u->k;
    ot__adj_ev *E = ev_new(u, a);
    if (E == NULL) {
        snprintf(u->cb->msg, sizeof u->cb->msg,
                 "cannot allocate the adjoint's log of events");
        ot__run_unit_fails(u, OT_ERR_NOMEM, u->t_restart, u->cb->msg, 0);
        return;
    }
    u->adj_ev = E;
    memcpy(E->y0, restart_host(u), (size_t)(n * k) * sizeof *E->y0);
    if (np > 0)
        memcpy(E->p0, u->p, (size_t)(np * k) * sizeof *E->p0);
    /* A pass in which a lane left is run again without it. */
    int reached = 0;
    for (int again = 0;; again = 1) {
        const int64_t before = failed(u);
        reached = forward_pass(u, a, again);
        if (!reached || failed(u) == before)
            break;
    }
    if (reached && a->yQ) { /* the integral to the last output */
        double tq = 0;
        if (CVodeGetQuad(u->ig->mem, &tq, a->yQ) < 0) {
            ot__run_unit_fails(u, OT_ERR_SOLVER, tq, u->cb->cv_msg, 1);
            reached = 0;
        }
        for (int64_t b = 0; reached && b < k; b++) /* done: it stood still since */
            if (u->stopped[b] == OT__LANE_RUNNING || u->stopped[b] == OT__LANE_DONE)
                a->loss[b] += N_VGetArrayPointer(a->yQ)[b];
    }
    int back = 0;
    if (reached) {
        a->max_steps_b = ot__adj_max_steps_b(pl->ode, sol->stats[u->lane0].steps);
        a->steps_b = 0;
        int st = ot__sens_jump_new(u);
        const int f = st == OT_OK ? ot__ig_roots_quiet(u->ig, 1) : 0;
        if (st != OT_OK || f != 0) {
            snprintf(u->cb->msg, sizeof u->cb->msg,
                     "cannot allocate the adjoint's jump (or quiet the roots)");
            ot__run_unit_fails(u, st != OT_OK ? OT_ERR_NOMEM : OT_ERR_SOLVER,
                               u->t_restart, u->cb->msg, 0);
        } else {
            back = backward(u, a);
        }
        ot__ig_roots_quiet(u->ig, 0);
        /* A later solve on this integrator (a worker's next lane) sets its
         * own stop times; SUNDIALS 6.4 keeps this one's otherwise. */
        ot__ig_set_stop_time(u->ig, INFINITY);
        ot__sens_jump_free(u);
        ot__run_adj_bytes(u, E->segment_max);
        for (int64_t b = 0; b < k; b++) {
            sol->stats[u->lane0 + b].adj_steps = a->steps_b;
            sol->stats[u->lane0 + b].adj_max_steps = a->max_steps_b;
        }
    }
    if (back)
        ot__run_adj_finish(u, a);
    ot__adj_ev_free(u);
}

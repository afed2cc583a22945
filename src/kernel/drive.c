/* The kernel solver's loop: a group's lanes started (inputs, first step),
 * stepped together each with its own t and h until every one has reached
 * its last output time or failed, with per-lane step control and outputs
 * from the dense output; and the solver's entry, the groups dealt by the
 * pool. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "kernel/kernel.h"
#include "kernel/step.h"
#include "kit/events.h"
#include "kit/pool.h"
#include "kit/progress.h"
#include "tensor/tensor_impl.h"

/* Step-size control: odetensor/kernel.h's rules (OT_KERNEL_SAFETY ...), the
 * same for a compiled model's lane loop. */

double ot__kernel_err_norm(const ot__kgroup *g, int64_t c)
{
    const ot_ode *ode = g->ode;
    const int64_t n = g->n;
    return ot_kernel_err_norm(n, g->y + c * n, g->y1 + c * n, g->err + c * n, ode->rtol,
                              ode->atol, ode->atol_vec);
}

static int err_order(const ot__kgroup *g) { return ot_kernel_err_order(g->ros, g->erk); }

static int method_order(const ot__kgroup *g)
{
    return g->ros ? g->ros->order : g->erk->order;
}

/* Lane c fails with status: a callback's own message (the rules of
 * kit/callback.h noted it), or what. A lane stopped by a cancel is left to
 * solve.c, which marks every unfinished lane. */
static void lane_fails(ot__kgroup *g, ot__klane *L, int status, const char *what)
{
    L->state = OT__KL_FAILED;
    if (L->cb.cancel != NULL && __atomic_load_n(L->cb.cancel, __ATOMIC_RELAXED) != 0)
        return;
    const char *msg = status == OT_ERR_CALLBACK && L->cb.msg[0] ? L->cb.msg : what;
    ot__solution_fail_lane(g->sink->sol, L->b, status, msg);
}

/* Lane c's output `next` at state ys (the out function's row if any). */
static int store(ot__kgroup *g, int64_t c, double t, const double *ys)
{
    ot__klane *L = &g->lane[c];
    const int st = ot__kernel_store(g->pl, g->sink, &L->cb, L->b, L->next, t, ys,
                                    g->p + c * g->np, g->dense + g->n);
    if (st != OT_OK) {
        lane_fails(g, L, st, "out failed");
        return st;
    }
    L->next++;
    L->since = 0;
    return OT_OK;
}

/* Lane L's next scheduled stop that it takes, or INFINITY: a stop past
 * its last output is not taken, nor one at it when outputs stand before
 * stops (the run loop's rule, run/loop.c). */
static double next_stop(const ot__kgroup *g, const ot__klane *L)
{
    if (L->knext >= L->nstops)
        return INFINITY;
    const double s = L->stops[L->knext];
    return s < L->t_end || (!g->ode->outputs_before_stops && s == L->t_end) ? s
                                                                            : INFINITY;
}

static void restart(ot__kgroup *g, int64_t c, int new_step);

/* Lane c, standing at its next stop: the event handler on its state and
 * parameters, recorded as an event (kit/events.h, as every mode does);
 * the lane then starts afresh there (f, J at the new state; no step-size
 * history across the jump). A failing handler fails the lane alone. */
static void take_stop(ot__kgroup *g, int64_t c)
{
    ot__klane *L = &g->lane[c];
    char msg[300];
    const int st =
        ot__event_take_stop(g->ode, &g->sink->events[L->b], L->t, L->knext,
                            g->y + c * g->n, g->p + c * g->np, L->b, msg, sizeof msg);
    L->knext++;
    if (st != OT_OK) { /* msg is the handler's; lane_fails would prefer cb's */
        L->state = OT__KL_FAILED;
        ot__solution_fail_lane(g->sink->sol, L->b, st, msg);
        return;
    }
    restart(g, c, 0);
}

/* Lane c's stops at its time t, if it stands at them. */
static void take_stops_here(ot__kgroup *g, int64_t c)
{
    ot__klane *L = &g->lane[c];
    while (L->state == OT__KL_RUN && next_stop(g, L) == L->t)
        take_stop(g, c);
}

/* Lane c's state at t0 and its parameters, compact; init's y0 checked. */
static int lane_inputs(ot__kgroup *g, int64_t c)
{
    ot__klane *L = &g->lane[c];
    return ot__kernel_lane_inputs(g->pl, &L->cb, L->b, g->p + c * g->np, g->y + c * g->n);
}

/* Hairer and Wanner's starting step (Solving ODEs I, II.4) for the running
 * lanes (only < 0), or lane `only` alone (a restart after a handled event,
 * as CVODE estimates one after its restart): from the sizes of y, f(t, y)
 * and a difference quotient of f along an explicit Euler step; two rhs
 * calls. f(t, y) goes into f0 (an ERK's first stage). */
static void first_steps(ot__kgroup *g, double *f0, int64_t only)
{
    const ot_ode *ode = g->ode;
    const int64_t n = g->n;
    const int q = method_order(g) + 1;
    int any = 0;
#define PICKED(c) (g->lane[c].state == OT__KL_RUN && (only < 0 || (c) == only))
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        L->want = PICKED(c);
        g->tv[c] = L->t;
        any |= L->want;
    }
    if (!any)
        return;
    ot__kernel_rhs(g, g->tv, g->y, f0, OT__KC_RHS);
    ot__kernel_drop_failed(g, 1);
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (!PICKED(c))
            continue;
        if (L->rc != 0) {
            lane_fails(g, L, OT_ERR_CALLBACK,
                       only < 0 ? "rhs failed at t0" : "rhs failed at the restart");
            continue;
        }
        double d1;
        L->ctl.h =
            ot_kernel_h0_probe(n, g->y + c * n, f0 + c * n, ode->rtol, ode->atol,
                               ode->atol_vec, L->t_end - L->t, g->arg + c * n, &d1);
        g->tv[c] = L->t + L->ctl.h;
        L->errn = d1; /* kept for the second half */
    }
    for (int64_t c = 0; c < g->k; c++)
        g->lane[c].want = PICKED(c);
    ot__kernel_rhs(g, g->tv, g->arg, g->fs, OT__KC_RHS);
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (!PICKED(c))
            continue;
        /* A failed probe says nothing of the lane: the first attempt's
         * own control takes it from the Euler step's size. */
        L->ctl.h = ot_kernel_h0_finish(
            n, g->y + c * n, f0 + c * n, L->rc == 0 ? g->fs + c * n : NULL, ode->rtol,
            ode->atol, ode->atol_vec, L->ctl.h, L->errn, q, L->t_end - L->t, ode->hmax);
    }
#undef PICKED
}

/* Starts lanes [u block, ...) in the group's columns. */
static void start(ot__kgroup *g, int64_t u)
{
    const ot__plan *pl = g->pl;
    const int64_t b0 = u * pl->block;
    g->k = pl->nbatch - b0 < g->cap ? pl->nbatch - b0 : g->cap;
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        const int64_t b = b0 + c;
        memset(&L->st, 0, sizeof L->st);
        ot__cb_reset(&L->cb);
        L->cb.cancel = pl->prog ? &pl->prog->cancelled : NULL;
        L->cb.prog = pl->prog;
        L->b = b;
        L->t = ot__plan_t0(pl, b);
        L->st.final_time = L->t;
        L->nt = ot__plan_nt(pl, b);
        L->t_end = ot__plan_times(pl, b)[L->nt - 1];
        L->next = L->since = 0;
        L->state = OT__KL_RUN;
        L->fresh = 1;
        ot_kernel_ctrl_start(&L->ctl, 0);
        L->stops = pl->stops ? ot__plan_stops(pl, b) : NULL;
        L->nstops = pl->stops ? ot__plan_nstops(pl, b) : 0;
        L->knext = 0;
        if (pl->bad && pl->bad[b]) { /* failed already (solve.c), by its inputs */
            L->state = OT__KL_FAILED;
            memset(g->y + c * g->n, 0, (size_t)g->n * sizeof(double));
            memset(g->p + c * g->np, 0, (size_t)g->np * sizeof(double));
            continue;
        }
        if (lane_inputs(g, c) != OT_OK) {
            lane_fails(g, L, OT_ERR_CALLBACK, "init failed");
            memset(g->y + c * g->n, 0, (size_t)g->n * sizeof(double));
            continue;
        }
        /* Its record holds its stops' events from the start. */
        if (L->nstops > 0 && ot__record_reserve(&g->sink->events[b], L->nstops,
                                                ot__event_width(g->n)) != OT_OK) {
            lane_fails(g, L, OT_ERR_NOMEM, "cannot allocate the lane's event record");
            continue;
        }
        const int before = g->ode->outputs_before_stops;
        if (!before)
            take_stops_here(g, c); /* stops at t0 come before its outputs */
        const double *times = ot__plan_times(pl, b);
        while (L->state == OT__KL_RUN && L->next < L->nt && times[L->next] <= L->t)
            if (store(g, c, L->t, g->y + c * g->n) != OT_OK)
                break;
        if (before)
            take_stops_here(g, c);
        if (L->state == OT__KL_RUN && L->next == L->nt)
            L->state = OT__KL_DONE;
        /* Its roots' reference at its start (a stop there already set it). */
        if (L->state == OT__KL_RUN && g->ode->nroots > 0 && L->knext == 0 &&
            ot__kernel_roots_restart(g, c) != 0)
            lane_fails(g, L, OT_ERR_CALLBACK, "root failed");
    }
    int any_h0 = 0;
    for (int64_t c = 0; c < g->k; c++)
        if (g->lane[c].state == OT__KL_RUN) {
            if (g->ode->h0 > 0)
                g->lane[c].ctl.h = fmin(g->ode->h0, g->lane[c].t_end - g->lane[c].t);
            else
                any_h0 = 1;
        }
    if (any_h0) {
        /* An ERK's first stage is f(t0, y0): kept, so its first attempt has it. */
        double *f0 = g->erk ? g->kst : g->f0;
        first_steps(g, f0, -1);
        if (g->erk)
            for (int64_t c = 0; c < g->k; c++)
                g->lane[c].fresh = 0;
    }
}

/* Lane L fails for why (OT_KERNEL_LANE_*), in the words a compiled
 * model's lane gets too. */
static void lane_gives_up(ot__kgroup *g, ot__klane *L, int why)
{
    char msg[300];
    const int st = ot__kernel_fail_message(g->ode, g->ros ? g->ros->name : g->erk->name,
                                           why, L->t, L->ctl.h, msg, sizeof msg);
    lane_fails(g, L, st, msg);
}

/* Whether lane c's attempt needs its dense output: an output falls in it,
 * or roots are searched along it. */
static int wants_dense(const ot__kgroup *g, const ot__klane *L)
{
    const double *times = ot__plan_times(g->pl, L->b);
    return g->ode->nroots > 0 || (L->next < L->nt && times[L->next] < L->t + L->ctl.h);
}

/* Lane c starts afresh at its time after a jump (a stop's or an event's
 * handler): no step-size history, f0 and J to be made, its roots' new
 * reference. After a handled event also a new first step, the start's
 * estimate for the lane alone (as CVODE estimates one after its restart):
 * the step the lane had could take both signs of the next crossing at once
 * (a ball's rise and fall in one step of a method exact for its parabola),
 * and no sign change at the ends shows it. */
static void restart(ot__kgroup *g, int64_t c, int new_step)
{
    ot__klane *L = &g->lane[c];
    L->fresh = 1;
    ot_kernel_ctrl_start(&L->ctl, L->ctl.h); /* no history across the jump */
    if (g->ode->nroots > 0 && ot__kernel_roots_restart(g, c) != 0) {
        lane_fails(g, L, OT_ERR_CALLBACK, "root failed");
        return;
    }
    if (!new_step)
        return;
    if (g->ode->h0 > 0) {
        L->ctl.h = fmin(g->ode->h0, L->t_end - L->t);
        return;
    }
    first_steps(g, g->erk ? g->kst : g->f0, c);
    if (L->state == OT__KL_RUN && g->erk) /* its first stage is made */
        L->fresh = 0;
    L->rc = 0;
    L->want = 0;
}

/* Lane c at an event of its roots at its time t (its state in g->y, its
 * roots in g->rootsfound), as the run loop takes one (run/take.c): a
 * stopping root ends the lane there, its lane_root and its event recorded,
 * with its outputs at t; else the events are recorded around the handler's
 * calls, the outputs at t show the state after them, and the lane starts
 * afresh there. */
static void take_event(ot__kgroup *g, int64_t c)
{
    ot__klane *L = &g->lane[c];
    const ot_ode *ode = g->ode;
    ot_solution *sol = g->sink->sol;
    double *y = g->y + c * g->n;
    const double *times = ot__plan_times(g->pl, L->b);
    char msg[300];
    const int stop = ot__event_stop_root(ode, g->rootsfound);
    int st = OT_OK;
    if (stop >= 0) {
        sol->root_index[L->b] = stop;
        sol->root_time[L->b] = L->t;
        st = ot__event_push(ode, &g->sink->events[L->b], L->t, stop, y, y, msg,
                            sizeof msg);
    } else {
        int changed = 0;
        st = ot__event_take(ode, &g->sink->events[L->b], L->t, g->rootsfound, y,
                            g->p + c * g->np, L->b, &L->cb, &changed, msg, sizeof msg);
    }
    if (st != OT_OK) {
        lane_fails(g, L, st, msg);
        return;
    }
    while (L->state == OT__KL_RUN && L->next < L->nt && times[L->next] == L->t)
        store(g, c, L->t, y);
    if (L->state != OT__KL_RUN)
        return;
    if (stop >= 0 || L->next == L->nt) { /* stopped, or at its last output */
        L->state = OT__KL_DONE;
        return;
    }
    restart(g, c, 1);
}

/* An accepted step of lane c: its events, the outputs inside it (up to
 * its first stopping or handled event, which ends it early), then its new
 * state. */
static void accept(ot__kgroup *g, int64_t c, double t1)
{
    ot__klane *L = &g->lane[c];
    const int64_t n = g->n;
    const double *times = ot__plan_times(g->pl, L->b);
    double t_end = t1;
    int event = 0;
    if (g->ode->nroots > 0) {
        event = ot__kernel_roots_scan(g, c, &t_end);
        if (event == -1)
            lane_fails(g, L, OT_ERR_CALLBACK, "root failed");
        if (event < 0)
            return;
    }
    const double *y_end = event ? g->yev : g->y1 + c * n;
    /* Outputs at a stop taken here follow it, unless they stand before it;
     * those at an event follow it (take_event). */
    const int at_stop = !event && next_stop(g, L) == t_end;
    const int after = event || (at_stop && !g->ode->outputs_before_stops);
    while (L->state == OT__KL_RUN && L->next < L->nt &&
           (times[L->next] < t_end || (times[L->next] == t_end && !after))) {
        const double tout = times[L->next];
        const double *ys = y_end;
        if (tout < t_end) {
            ot__kernel_state_at(g, c, tout, g->dense);
            ys = g->dense;
        }
        store(g, c, tout, ys);
    }
    if (L->state != OT__KL_RUN)
        return;
    memcpy(g->y + c * n, y_end, (size_t)n * sizeof(double));
    if (!event && g->erk && g->erk->fsal) {
        const int64_t nk = n * g->cap;
        memcpy(g->kst + c * n, g->kst + (g->erk->stages - 1) * nk + c * n,
               (size_t)n * sizeof(double));
    } else {
        L->fresh = 1;
    }
    L->st.steps++;
    L->since++;
    ot_kernel_accepted(&L->ctl, L->errn, err_order(g), g->ros != NULL, g->ode->hmax);
    L->t = t_end;
    L->st.final_time = t_end;
    if (event) {
        take_event(g, c);
    } else if (at_stop) {
        take_stops_here(g, c);
        while (L->state == OT__KL_RUN && L->next < L->nt && times[L->next] == t1)
            store(g, c, t1, g->y + c * n);
    }
    if (L->state == OT__KL_RUN && L->next == L->nt)
        L->state = OT__KL_DONE;
}

/* One attempt of every running lane, then each lane's verdict. */
static void step_group(ot__kgroup *g)
{
    const ot_ode *ode = g->ode;
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (L->state != OT__KL_RUN)
            continue;
        /* Land on the next stop or the last output time rather than
         * just short of it. */
        L->t1 = ot_kernel_clip(L->t, &L->ctl.h, fmin(next_stop(g, L), L->t_end));
    }
    if (g->ros)
        ot__kernel_ros_attempt(g);
    else
        ot__kernel_erk_attempt(g);
    int dense = 0;
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        L->want = L->state == OT__KL_RUN && L->rc == 0 && L->errn <= 1 && g->erk &&
                  g->erk->dense_stages > g->erk->stages && wants_dense(g, L);
        dense |= L->want;
    }
    if (dense) {
        ot__kernel_erk_dense_stages(g);
        for (int64_t c = 0; c < g->k; c++)
            if (g->lane[c].want && g->lane[c].rc != 0)
                g->lane[c].rc = g->lane[c].rc < 0 ? -1 : 1;
    }
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (L->state != OT__KL_RUN)
            continue;
        L->st.err_test_fails += L->rc == 0 && L->errn > 1;
        const int v = ot_kernel_judge(&L->ctl, L->rc, L->errn, err_order(g),
                                      g->ros != NULL, ode->hmax, L->t);
        if (v == OT_KERNEL_ACCEPT)
            accept(g, c, L->t1);
        else if (v == OT_KERNEL_LANE_CALLBACK)
            lane_fails(g, L, OT_ERR_CALLBACK, "a callback failed");
        else if (v != OT_KERNEL_RETRY && v != OT_KERNEL_REJECT)
            lane_gives_up(g, L, v);
    }
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (L->state == OT__KL_RUN && L->since >= ode->max_steps)
            lane_gives_up(g, L, OT_KERNEL_LANE_MAX_STEPS);
    }
}

static int64_t solve_group(void *state, int64_t u)
{
    ot__kgroup *g = state;
    start(g, u);
    for (;;) {
        int running = 0;
        for (int64_t c = 0; c < g->k; c++)
            running |= g->lane[c].state == OT__KL_RUN;
        if (!running || ot__progress_cancelled(g->pl->prog))
            break;
        step_group(g);
    }
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        g->sink->sol->stats[L->b] = L->st;
    }
    return g->k;
}

int ot__kernel_run(const ot__plan *pl, const ot__sink *sink)
{
    const int nthreads = (int)pl->threads;
    ot__kgroup **groups = OT__CALLOC((size_t)nthreads, sizeof *groups);
    int st = groups ? OT_OK
                    : ot__fail(OT_ERR_NOMEM, "solve: cannot allocate %d lane groups",
                               nthreads);
    for (int i = 0; st == OT_OK && i < nthreads; i++)
        st = ot__kgroup_new(&groups[i], pl, sink);
    if (st == OT_OK) {
        const int64_t units = (pl->nbatch + pl->block - 1) / pl->block;
        ot__pool_run(pl, nthreads, units, (void *const *)groups, solve_group);
    }
    for (int i = 0; groups && i < nthreads; i++)
        ot__kgroup_free(groups[i]);
    free(groups);
    return st;
}

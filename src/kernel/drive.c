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
#include "run/unit.h"
#include "solution/output.h"
#include "tensor/tensor_impl.h"

/* Step-size control: h_new = h min(FAC_MAX, max(FAC_MIN, SAFETY
 * errn^(-1/q))), q the order of the error estimate; no growth right after
 * a rejection. A callback that asks for a smaller step quarters it, at most
 * RETRY_LIMIT times in a row. */
#define SAFETY 0.9
#define FAC_MIN 0.2
#define FAC_MAX 6.0
#define RETRY_LIMIT 50

double ot__kernel_err_norm(const ot__kgroup *g, int64_t c)
{
    const ot_ode *ode = g->ode;
    const int64_t n = g->n;
    const double *y = g->y + c * n, *y1 = g->y1 + c * n, *err = g->err + c * n;
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        const double atol = ode->atol_vec ? ode->atol_vec[i] : ode->atol;
        const double sc = atol + ode->rtol * fmax(fabs(y[i]), fabs(y1[i]));
        const double r = err[i] / sc;
        s += r * r;
    }
    return sqrt(s / (double)n);
}

/* The exponent of the error estimate's leading term, err = O(h^q): the
 * lower of the two solutions' orders plus one. For the explicit pairs the
 * embedded solution is one order below y1; the Rosenbrock tables say
 * theirs (ros23 advances order 2 with an order-3 estimate). */
static int err_order(const ot__kgroup *g)
{
    if (g->ros)
        return (g->ros->order < g->ros->embedded_order ? g->ros->order
                                                       : g->ros->embedded_order) +
               1;
    return g->erk->order;
}

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
    const ot__plan *pl = g->pl;
    const double *row = ys;
    if (g->ode->out) {
        double *o = g->dense + g->n;
        const ot__cb_lane_state was = ot__cb_lane_at(L->b);
        const int st = ot__run_call_out(g->ode, &L->cb, L->b, t, ys, g->p + c * g->np, o);
        ot__cb_lane_restore(was);
        if (st != OT_OK) {
            lane_fails(g, L, st, "out failed");
            return st;
        }
        row = o;
    }
    ot__out_store(g->sink->sol->ys, L->next, L->b, row, pl->rows);
    L->next++;
    L->since = 0;
    g->sink->sol->count[L->b] = L->next;
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
    L->fresh = 1;
    L->hacc = 0;
    L->rejected = 0;
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
    const ot__plan *pl = g->pl;
    ot__klane *L = &g->lane[c];
    const int64_t n = g->n, np = g->np;
    if (np > 0)
        memcpy(g->p + c * np, ot_view_lane(pl->p, L->b), (size_t)np * sizeof(double));
    double *y = g->y + c * n;
    if (pl->has_y0) {
        memcpy(y, ot_view_lane(pl->y0, L->b), (size_t)n * sizeof *y);
        return OT_OK;
    }
    const ot__cb_lane_state was = ot__cb_lane_at(L->b);
    const int rc = g->ode->init(ot__view_compact(g->p + c * np, np, 1),
                                ot__view_mut_compact(y, n, 1), g->ode->user);
    ot__cb_lane_restore(was);
    if (rc != 0) {
        ot__cb_note(&L->cb, -1, "init returned %d", rc);
        return OT_ERR_CALLBACK;
    }
    if (ot__cb_finite(&L->cb, "init", "y0", y, n, 1, L->b, NAN, OT__CB_FINAL) != 0)
        return OT_ERR_CALLBACK;
    return OT_OK;
}

/* Hairer and Wanner's starting step (Solving ODEs I, II.4) for the lanes
 * without ot_ode_set_initial_step's: from the sizes of y0, f(t0, y0) and a
 * difference quotient of f along an explicit Euler step; two rhs calls.
 * f(t0, y0) goes into dst (an ERK's first stage). */
static void first_steps(ot__kgroup *g, double *f0)
{
    const ot_ode *ode = g->ode;
    const int64_t n = g->n;
    const int q = method_order(g) + 1;
    int any = 0;
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        L->want = L->state == OT__KL_RUN;
        g->tv[c] = L->t;
        any |= L->want;
    }
    if (!any)
        return;
    ot__kernel_rhs(g, g->tv, g->y, f0, OT__KC_RHS);
    ot__kernel_drop_failed(g, 1);
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (L->state != OT__KL_RUN)
            continue;
        if (L->rc != 0) {
            lane_fails(g, L, OT_ERR_CALLBACK, "rhs failed at t0");
            continue;
        }
        const double *y = g->y + c * n, *f = f0 + c * n;
        double d0 = 0, d1 = 0;
        for (int64_t i = 0; i < n; i++) {
            const double sc =
                (ode->atol_vec ? ode->atol_vec[i] : ode->atol) + ode->rtol * fabs(y[i]);
            d0 += (y[i] / sc) * (y[i] / sc);
            d1 += (f[i] / sc) * (f[i] / sc);
        }
        d0 = sqrt(d0 / (double)n);
        d1 = sqrt(d1 / (double)n);
        double h = d0 < 1e-5 || d1 < 1e-5 ? 1e-6 : 0.01 * d0 / d1;
        h = fmin(h, L->t_end - L->t);
        L->h = h;
        double *a = g->arg + c * n;
        for (int64_t i = 0; i < n; i++)
            a[i] = y[i] + h * f[i];
        g->tv[c] = L->t + h;
        L->errn = d1; /* kept for the second half */
    }
    for (int64_t c = 0; c < g->k; c++)
        g->lane[c].want = g->lane[c].state == OT__KL_RUN;
    ot__kernel_rhs(g, g->tv, g->arg, g->fs, OT__KC_RHS);
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (L->state != OT__KL_RUN)
            continue;
        double h = L->h;
        if (L->rc == 0) {
            const double *y = g->y + c * n, *f = f0 + c * n, *f1 = g->fs + c * n;
            double d2 = 0;
            for (int64_t i = 0; i < n; i++) {
                const double sc = (ode->atol_vec ? ode->atol_vec[i] : ode->atol) +
                                  ode->rtol * fabs(y[i]);
                const double r = (f1[i] - f[i]) / sc;
                d2 += r * r;
            }
            d2 = sqrt(d2 / (double)n) / h;
            const double dm = fmax(L->errn, d2);
            const double h1 =
                dm <= 1e-15 ? fmax(1e-6, h * 1e-3) : pow(0.01 / dm, 1.0 / q);
            h = fmin(100 * h, h1);
        }
        /* A failed probe says nothing of the lane: the first attempt's
         * own control takes it from the Euler step's size. */
        L->h = fmin(h, L->t_end - L->t);
        if (ode->hmax > 0)
            L->h = fmin(L->h, ode->hmax);
    }
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
        L->rejected = L->retries = 0;
        L->fresh = 1;
        L->h = L->hacc = 0;
        L->erracc = 1;
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
    }
    int any_h0 = 0;
    for (int64_t c = 0; c < g->k; c++)
        if (g->lane[c].state == OT__KL_RUN) {
            if (g->ode->h0 > 0)
                g->lane[c].h = fmin(g->ode->h0, g->lane[c].t_end - g->lane[c].t);
            else
                any_h0 = 1;
        }
    if (any_h0) {
        /* An ERK's first stage is f(t0, y0): kept, so its first attempt has it. */
        double *f0 = g->erk ? g->kst : g->f0;
        first_steps(g, f0);
        if (g->erk)
            for (int64_t c = 0; c < g->k; c++)
                g->lane[c].fresh = 0;
    }
}

/* The next step's h from this attempt's error norm. After an accepted
 * Rosenbrock step, Gustafsson's predictive controller as in Hairer and
 * Wanner's RODAS also bounds the growth by the error's trend over the last
 * two steps: the plain rule lets a stiff problem's error creep up over long
 * steps where the estimate stays just below 1 (HIRES at rtol 1e-4 drifted
 * to 171 tolerance units on Rodas5P without it). */
static double next_h(const ot__kgroup *g, ot__klane *L, int accepted)
{
    const double e = L->errn, q = err_order(g);
    const double r = e > 0 ? pow(e, -1.0 / q) : INFINITY; /* one pow a step */
    double fac = fmin(FAC_MAX, fmax(FAC_MIN, SAFETY * r));
    if (accepted && g->ros) {
        /* erracc^(1/q) is kept rather than erracc: (erracc / e^2)^(1/q) =
         * erracc^(1/q) r^2. */
        if (L->hacc > 0 && e > 0) {
            const double gus = SAFETY * (L->h / L->hacc) * L->erracc * r * r;
            fac = fmin(fac, fmin(FAC_MAX, fmax(FAC_MIN, gus)));
        }
        L->hacc = L->h;
        L->erracc = e >= 1e-2 ? 1.0 / r : pow(1e-2, 1.0 / q);
    }
    if (accepted && L->rejected)
        fac = fmin(fac, 1.0);
    if (!accepted)
        fac = fmin(fac, 1.0);
    double h = L->h * fac;
    if (g->ode->hmax > 0)
        h = fmin(h, g->ode->hmax);
    return h;
}

/* Whether lane c accepts its attempt, and whether an output falls in it. */
static int wants_dense(const ot__kgroup *g, const ot__klane *L)
{
    const double *times = ot__plan_times(g->pl, L->b);
    return L->next < L->nt && times[L->next] < L->t + L->h;
}

/* An accepted step of lane c: outputs inside it, then its new state. */
static void accept(ot__kgroup *g, int64_t c, double t1)
{
    ot__klane *L = &g->lane[c];
    const int64_t n = g->n;
    const double *times = ot__plan_times(g->pl, L->b);
    /* Outputs at a stop taken here follow it, unless they stand before it. */
    const int at_stop = next_stop(g, L) == t1;
    const int after = at_stop && !g->ode->outputs_before_stops;
    while (L->state == OT__KL_RUN && L->next < L->nt &&
           (times[L->next] < t1 || (times[L->next] == t1 && !after))) {
        const double tout = times[L->next];
        const double *ys = g->y1 + c * n;
        if (tout < t1) {
            const double theta = (tout - L->t) / L->h;
            if (g->ros)
                ot__kernel_ros_dense(g, c, theta, g->dense);
            else
                ot__kernel_erk_dense(g, c, theta, g->dense);
            ys = g->dense;
        }
        store(g, c, tout, ys);
    }
    if (L->state != OT__KL_RUN)
        return;
    memcpy(g->y + c * n, g->y1 + c * n, (size_t)n * sizeof(double));
    if (g->erk && g->erk->fsal) {
        const int64_t nk = n * g->cap;
        memcpy(g->kst + c * n, g->kst + (g->erk->stages - 1) * nk + c * n,
               (size_t)n * sizeof(double));
    } else {
        L->fresh = 1;
    }
    L->st.steps++;
    L->since++;
    L->h = next_h(g, L, 1);
    L->rejected = 0;
    L->retries = 0;
    L->t = t1;
    L->st.final_time = t1;
    if (at_stop) {
        take_stops_here(g, c);
        while (L->state == OT__KL_RUN && L->next < L->nt && times[L->next] == t1)
            store(g, c, t1, g->y + c * n);
    }
    if (L->state == OT__KL_RUN && L->next == L->nt)
        L->state = OT__KL_DONE;
}

/* The gap between doubles at t: a step must be 4 of them at least. */
static int too_small(double t, double h)
{
    return !(h >= 4 * (nextafter(fabs(t), INFINITY) - fabs(t)));
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
        const double target = fmin(next_stop(g, L), L->t_end), rest = target - L->t;
        if (L->h >= rest * (1 - 1e-12) || L->h > 0.99 * rest) {
            L->h = rest;
            L->t1 = target;
        } else {
            L->t1 = L->t + L->h;
        }
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
        if (L->rc < 0) {
            lane_fails(g, L, OT_ERR_CALLBACK, "a callback failed");
            continue;
        }
        if (L->rc > 0) {
            if (++L->retries > RETRY_LIMIT) {
                char msg[200];
                snprintf(msg, sizeof msg,
                         "%d attempts in a row at t = %.17g failed in a callback or a "
                         "singular matrix",
                         RETRY_LIMIT, L->t);
                lane_fails(g, L, OT_ERR_SOLVER, msg);
                continue;
            }
            L->h *= 0.25;
            L->rejected = 1;
        } else if (L->errn <= 1) {
            accept(g, c, L->t1);
            continue;
        } else {
            L->st.err_test_fails++;
            L->h = next_h(g, L, 0);
            L->rejected = 1;
        }
        if (too_small(L->t, L->h)) {
            char msg[240];
            snprintf(msg, sizeof msg,
                     "step size %.3g at t = %.17g is below the time resolution (4 gaps "
                     "between doubles there): the method cannot meet the tolerances "
                     "(a singularity, or a problem too stiff for %s)",
                     L->h, L->t, g->ros ? g->ros->name : g->erk->name);
            lane_fails(g, L, OT_ERR_SOLVER, msg);
        }
    }
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (L->state == OT__KL_RUN && L->since >= ode->max_steps) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "max_steps: %lld steps from the last output without reaching the "
                     "next, at t = %.17g (ot_ode_set_max_steps)",
                     (long long)ode->max_steps, L->t);
            lane_fails(g, L, OT_ERR_SOLVER, msg);
        }
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

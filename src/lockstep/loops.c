/* Lockstep mode: the backend-neutral loops (their setup: setup.c). One
 * CVODE(S) or ARKStep runs over a vector
 * of length n * nbatch laid out [n, nbatch]. A callback failure or a solver
 * failure stops the whole batch (every lane still running gets the status
 * and message); a root stops its own lane only, which then stands still (zero
 * derivative) while the others go on. The backend (cpu.c, or src/cuda/)
 * owns the vectors, the linear algebra, the callbacks and the data movement
 * into the outputs; solve.c pads and gathers them. */
#include <cvodes/cvodes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "lockstep/lockstep.h"
#include "solve/advance.h"
#include "solve/cv_setup.h"
#include "solve/integ.h"
#include "solve/events.h"
#include "solve/progress.h"
#include "tensor/tensor_impl.h"

/* ---- Results -------------------------------------------------------------- */

/* Every running lane fails with the same status: the batch stopped at t.
 * what: the cause (a callback that made CVODE give up takes its place,
 * ot__cb_cause). */
void ot__lockstep_fail_batch(ot__lockstep *L, ot_solution *sol, int status, double t,
                             const char *what)
{
    char cause[600], msg[700];
    snprintf(msg, sizeof msg, "lockstep batch stopped at t = %g: %s", t,
             ot__cb_cause(&L->cb, &status, what, cause, sizeof cause));
    for (int64_t b = 0; b < L->nbatch; b++)
        if (!L->stopped[b]) {
            ot__solution_fail_lane(sol, L->lane0 + b, status, msg);
            sol->stats[L->lane0 + b].final_time = t;
            L->stopped[b] = 2;
        }
}

/* The roots that fired at t, y the batch's state there (host memory): a
 * lane whose STOP root fired (or any root, without recorded events) stops
 * there with count `count`; the others record their events, calling the
 * handler for each HANDLE root on that lane's [n, 1] column. A handler
 * that fails fails its lane alone. When a handler ran, the whole batch
 * restarts at t from y (CVodeReInit: every lane back to order 1, the cost
 * of events in lockstep; BENCHMARKS.md). @return 1 when it restarted. */
static int take_roots(ot__lockstep *L, const ot__sink *sk, double t, int64_t count,
                      N_Vector y)
{
    const ot_ode *ode = L->plan->ode;
    ot_solution *sol = sk->sol;
    const int64_t nr = ode->nroots, n = L->n, np = L->np;
    int stopped = 0, changed_any = 0;
    if (ot__ig_root_info(&L->ig, L->rootsfound) != CV_SUCCESS)
        return 0;
    double *yd = L->be->host_state ? L->be->host_state(L, y) : NULL;
    for (int64_t b = 0; b < L->nbatch; b++) {
        const int *rf = L->rootsfound + b * nr;
        int fired = -1;
        for (int64_t r = 0; r < nr && fired < 0; r++)
            fired = rf[r] != 0 ? (int)r : -1;
        if (L->stopped[b] || fired < 0)
            continue;
        const int64_t lane = L->lane0 + b;
        const int stop = ot__event_stop_root(ode, rf);
        if (stop >= 0 || sk->events == NULL || yd == NULL) {
            L->stopped[b] = 1;
            stopped = 1;
            sol->root_index[lane] = stop >= 0 ? stop : fired;
            sol->root_time[lane] = t;
            sol->count[lane] = L->next ? L->next[b] : count;
            sol->stats[lane].final_time = t;
            char msg[200];
            /* The stop is an event too: its state at the root. */
            if (sk->events && yd &&
                ot__event_push(ode, &sk->events[lane], t, sol->root_index[lane],
                               yd + b * n, yd + b * n, msg, sizeof msg) != OT_OK)
                ot__solution_fail_lane(sol, lane, OT_ERR_NOMEM, msg);
            continue;
        }
        /* The handler is the lane's own: its failure must not stop the
         * batch's callbacks (L->cb), so it reports into its own kit. */
        ot__cb cb;
        ot__cb_reset(&cb);
        int changed = 0;
        char msg[200];
        const int st =
            ot__event_take(ode, &sk->events[lane], t, rf, yd + b * n, L->p + b * np, lane,
                           &cb, &changed, msg, sizeof msg);
        changed_any |= changed;
        if (st != OT_OK) {
            ot__solution_fail_lane(sol, lane, st, st == OT_ERR_CALLBACK ? cb.msg : msg);
            L->stopped[b] = 2;
            stopped = 1;
            sol->count[lane] = L->next ? L->next[b] : count;
            sol->stats[lane].final_time = t;
        }
    }
    if (stopped && L->be->stopped_changed)
        L->be->stopped_changed(L);
    if (!changed_any)
        return 0;
    ot_lane_stats s;
    memset(&s, 0, sizeof s);
    ot__ig_stats(&L->ig, L->LS != NULL, &s);
    ot__cv_stats_add(&L->before, &s);
    if (ot__ig_reinit(&L->ig, t, y) != CV_SUCCESS)
        ot__lockstep_fail_batch(L, sol, OT_ERR_SOLVER, t, L->cb.cv_msg);
    return 1;
}

/* Progress as the block goes: its lanes times the fraction done, frac in
 * [0, 1] (progress.h): of its output times (dense), of the time span
 * (every step). */
static void report(ot__lockstep *L, double frac)
{
    const int64_t units = (int64_t)(frac > 0 ? (frac < 1 ? frac : 1.0) *
                                                   (double)(L->nbatch * OT__PROGRESS_ONE)
                                             : 0.0);
    if (units > L->reported) {
        ot__progress_add(L->plan->prog, units - L->reported);
        L->reported = units;
    }
}

static int all_stopped(const ot__lockstep *L)
{
    for (int64_t b = 0; b < L->nbatch; b++)
        if (!L->stopped[b])
            return 0;
    return 1;
}

/* ---- The loops ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The sorted union of the block's lanes' times (times(pl, lane), count(pl,
 * lane) of them), in *out (the caller frees it). @return their number, or
 * -1 out of memory. */
static int64_t union_of(ot__lockstep *L,
                        const double *(*times)(const ot__plan *, int64_t),
                        int64_t (*count)(const ot__plan *, int64_t), double **out)
{
    const ot__plan *pl = L->plan;
    int64_t total = 0, k = 0;
    for (int64_t b = 0; b < L->nbatch; b++)
        total += count(pl, L->lane0 + b);
    double *u = OT__MALLOC((size_t)(total > 0 ? total : 1) * sizeof *u);
    if (u == NULL)
        return -1;
    for (int64_t b = 0; b < L->nbatch; b++) {
        const int64_t nt = count(pl, L->lane0 + b);
        memcpy(u + k, times(pl, L->lane0 + b), (size_t)nt * sizeof *u);
        k += nt;
    }
    qsort(u, (size_t)total, sizeof *u, cmp_double);
    int64_t m = 0;
    for (int64_t i = 0; i < total; i++)
        if (m == 0 || u[i] != u[m - 1])
            u[m++] = u[i];
    *out = u;
    return m;
}

/* Per-lane output times: their union in *times (the caller frees it), and
 * L->next (zeroed: each lane's next output). @return their number, or -1. */
static int64_t union_times(ot__lockstep *L, double **times)
{
    L->next = OT__CALLOC((size_t)L->nbatch, sizeof *L->next);
    const int64_t m = L->next ? union_of(L, ot__plan_times, ot__plan_nt, times) : -1;
    if (m < 0) {
        free(L->next);
        L->next = NULL;
    }
    return m;
}

/* Integrates the block to target (its state then in *y), roots taken on
 * the way: 1 reached, 0 every lane stopped, -1 the batch failed. `count`:
 * outputs stored so far (shared times). With `exact` the integrator does
 * not step past target (a scheduled stop). A target at the block's last
 * restart is the state there, with no step. */
static int reach(ot__lockstep *L, const ot__sink *sk, double target, int exact,
                 int64_t count, N_Vector *y)
{
    const ot__plan *pl = L->plan;
    for (;;) {
        if (target == L->t_restart) {
            *y = L->y_restart;
            return 1;
        }
        if (exact)
            ot__ig_set_stop_time(&L->ig, target);
        double tret = target;
        int flag =
            ot__ig_advance(&L->ig, target, L->yout, &tret, pl->ode->max_steps,
                           pl->ode->rtol, pl->t0, L->cb.cv_msg, sizeof L->cb.cv_msg);
        if (flag == CV_ROOT_RETURN) {
            if (take_roots(L, sk, tret, count, L->yout)) { /* restarted at tret */
                L->t_restart = tret;
                L->y_restart = L->yout;
            }
            if (all_stopped(L))
                return 0;
            continue;
        }
        if (flag >= 0 && pl->kind == OT__SENS)
            flag = CVodeGetSensDky(L->ig.mem, tret, 0, L->yS);
        if (flag < 0) {
            double tcur = pl->t0, hlast, hcur;
            ot__ig_times(&L->ig, &tcur, &hlast, &hcur);
            ot__lockstep_fail_batch(L, sk->sol, OT_ERR_SOLVER, tcur, L->cb.cv_msg);
            return -1;
        }
        *y = L->yout;
        return 1;
    }
}

/* The lanes whose next scheduled stop is t (state y, host memory): the
 * handler on each (root -1 - k), recorded; a lane whose handler fails
 * fails alone. Then the block restarts at t from y. */
static void take_stops(ot__lockstep *L, const ot__sink *sk, double t, N_Vector y,
                       int64_t *knext, double last)
{
    const ot__plan *pl = L->plan;
    const ot_ode *ode = pl->ode;
    double *yd = L->be->host_state(L, y);
    int stopped = 0;
    for (int64_t b = 0; b < L->nbatch; b++) {
        const int64_t lane = L->lane0 + b, k = knext[b];
        if (L->stopped[b] || k >= ot__plan_nstops(pl, lane) ||
            ot__plan_stops(pl, lane)[k] != t)
            continue;
        knext[b]++;
        double *yb = yd + b * L->n, *pb = L->p + b * L->np;
        char msg[300];
        ot__record *r = &sk->events[lane];
        int st = ot__event_push(ode, r, t, -1 - k, yb, yb, msg, sizeof msg);
        if (st == OT_OK) {
            ot__cb cb;
            ot__cb_reset(&cb);
            const ot__cb_lane_state was = ot__cb_lane_at(lane);
            const int rc =
                ode->event_fn(t, (int)(-1 - k), lane, ot__view_mut_compact(yb, L->n, 1),
                              ot__view_mut_compact(pb, L->np, 1), ode->user);
            ot__cb_lane_restore(was);
            if (rc != 0)
                snprintf(msg, sizeof msg,
                         "event handler returned %d at t = %g (scheduled stop %lld)", rc,
                         t, (long long)k);
            else if (ot__cb_finite(&cb, "event handler", "y", yb, L->n, 1, lane, t,
                                   OT__CB_FINAL) ||
                     (L->np > 0 && ot__cb_finite(&cb, "event handler", "p", pb, L->np, 1,
                                                 lane, t, OT__CB_FINAL)))
                snprintf(msg, sizeof msg, "%s", cb.msg);
            st = rc != 0 || cb.failed ? OT_ERR_CALLBACK : OT_OK;
            memcpy(r->y + (r->count - 1) * r->width + 1 + L->n, yb,
                   (size_t)L->n * sizeof *yb);
        }
        if (st != OT_OK) {
            ot__solution_fail_lane(sk->sol, lane, st, msg);
            L->stopped[b] = 2;
            stopped = 1;
            sk->sol->stats[lane].final_time = t;
        }
    }
    if (stopped && L->be->stopped_changed)
        L->be->stopped_changed(L);
    ot_lane_stats s;
    memset(&s, 0, sizeof s);
    ot__ig_stats(&L->ig, L->LS != NULL, &s);
    ot__cv_stats_add(&L->before, &s);
    if (y != L->yout) /* keep the restart state in yout: L->y is CVODE's */
        memcpy(N_VGetArrayPointer(L->yout), yd, (size_t)(L->n * L->nbatch) * sizeof *yd);
    if (ot__ig_reinit(&L->ig, t, L->yout) != CV_SUCCESS)
        ot__lockstep_fail_batch(L, sk->sol, OT_ERR_SOLVER, t, L->cb.cv_msg);
    /* SUNDIALS 6.4 keeps the stop time it just reached (7 clears it) and
     * would refuse to go on: aim it at the block's last output time. */
    if (last > t)
        ot__ig_set_stop_time(&L->ig, last);
    L->t_restart = t;
    L->y_restart = L->yout;
}

static void solve_dense(ot__lockstep *L, const ot__sink *sk)
{
    ot_solution *sol = sk->sol;
    const ot__plan *pl = L->plan;
    /* Shared times, or (per lane) the union of the lanes': at each, the
     * lanes whose next output it is store it (the backend's emit reads
     * L->next). Scheduled stops: the union of the lanes' too. */
    double *owned = NULL, *ustops = NULL;
    const double *times = pl->t;
    int64_t nts = pl->nt, nus = 0, ks = 0;
    int64_t *knext = NULL;
    L->t_restart = pl->t0;
    L->y_restart = L->y;
    if (pl->t_lanes) {
        nts = union_times(L, &owned);
        times = owned;
    }
    if (pl->stops && nts >= 0) {
        nus = union_of(L, ot__plan_stops, ot__plan_nstops, &ustops);
        knext = OT__CALLOC((size_t)L->nbatch, sizeof *knext);
        if (knext == NULL)
            nus = -1;
    }
    if (nts < 0 || nus < 0) {
        snprintf(L->cb.msg, sizeof L->cb.msg, "cannot allocate the lanes' times");
        ot__lockstep_fail_batch(L, sol, OT_ERR_NOMEM, pl->t0, L->cb.msg);
        nts = 0;
    }
    N_Vector y = L->y;
    for (int64_t i = 0; i < nts && !all_stopped(L) && !ot__progress_cancelled(pl->prog);
         i++) {
        const double tout = times[i];
        int r = 1;
        /* Stops up to and at tout: an output at a stop shows the state after. */
        for (; r == 1 && ks < nus && ustops[ks] <= tout && !all_stopped(L); ks++)
            if ((r = reach(L, sk, ustops[ks], 1, i, &y)) == 1)
                take_stops(L, sk, ustops[ks], y, knext, times[nts - 1]);
        if (r != 1 || all_stopped(L) ||
            (r = reach(L, sk, tout, L->ig.m->exact_outputs, i, &y)) != 1)
            break;
        if (L->be->emit(L, sol, i, tout, y) != OT_OK) {
            ot__lockstep_fail_batch(L, sol, OT_ERR_CALLBACK, tout, L->cb.msg);
            break;
        }
        report(L, (double)(i + 1) / (double)nts);
    }
    free(owned);
    free(ustops);
    free(knext);
    free(L->next);
    L->next = NULL;
}

/* The batch's rows at (t, y) as the next step of the shared record. */
static int record_step(ot__lockstep *L, ot__record *r, double t, N_Vector y)
{
    double *slot = ot__record_push(r, t);
    if (slot == NULL) {
        snprintf(L->cb.msg, sizeof L->cb.msg, "cannot grow the step record");
        return OT_ERR_NOMEM;
    }
    return L->be->host_rows(L, t, y, slot);
}

/* Running lanes now have k entries, the last at t. */
static void advance_counts(ot__lockstep *L, ot_solution *sol, int64_t k, double t)
{
    for (int64_t b = 0; b < L->nbatch; b++)
        if (!L->stopped[b]) {
            sol->count[L->lane0 + b] = k;
            sol->stats[L->lane0 + b].final_time = t;
        }
}

/* Every step of the batch into its record in the sink (one per block of
 * lanes): lane b's rows are column b of each step, its count says how many
 * are its own. */
static void solve_steps(ot__lockstep *L, const ot__sink *sk)
{
    const ot__plan *pl = L->plan;
    ot_solution *sol = sk->sol;
    ot__record *r = &sk->records[L->lane0 / pl->block];
    r->width = L->rows * L->nbatch;
    double t = pl->t0;
    int st = record_step(L, r, t, L->y);
    if (st != OT_OK)
        ot__lockstep_fail_batch(L, sol, st, t, L->cb.msg);
    else
        advance_counts(L, sol, r->count, t);
    ot__ig_set_stop_time(&L->ig, pl->t_final);
    while (!all_stopped(L) && t < pl->t_final && !ot__progress_cancelled(pl->prog)) {
        report(L, (t - pl->t0) / (pl->t_final - pl->t0));
        if (r->count > pl->step_limit) {
            /* As CVODE's own max_steps failure (and blamed the same way). */
            snprintf(L->cb.cv_msg, sizeof L->cb.cv_msg,
                     "more than max_steps = %lld steps", (long long)pl->step_limit);
            ot__lockstep_fail_batch(L, sol, OT_ERR_SOLVER, t, L->cb.cv_msg);
            break;
        }
        int flag = ot__ig_evolve(&L->ig, pl->t_final, L->yout, &t, 1);
        if (flag >= 0 && ot__ig_time_check(&L->ig, pl->ode->rtol, pl->t0, L->cb.cv_msg,
                                           sizeof L->cb.cv_msg) < 0)
            flag = OT__IG_TIME_RESOLUTION;
        if (flag < 0) {
            ot__lockstep_fail_batch(L, sol, OT_ERR_SOLVER, t, L->cb.cv_msg);
            break;
        }
        if ((st = record_step(L, r, t, L->yout)) != OT_OK) {
            ot__lockstep_fail_batch(L, sol, st, t, L->cb.msg);
            break;
        }
        advance_counts(L, sol, r->count, t);
        if (flag == CV_ROOT_RETURN)
            if (take_roots(L, sk, t, r->count, L->yout) && !all_stopped(L) &&
                (st = record_step(L, r, t, L->yout)) != OT_OK) {
                ot__lockstep_fail_batch(L, sol, st, t,
                                        L->cb.msg); /* the handlers' states at t */
                break;
            }
    }
}

/* ---- Entry ---------------------------------------------------------------- */

/* Every lane shares the batch's counters; the Jacobian's rhs calls are our
 * difference quotients'. */
void ot__lockstep_batch_stats(ot__lockstep *L, ot_solution *sol)
{
    ot_lane_stats s;
    memset(&s, 0, sizeof s);
    ot__ig_stats(&L->ig, L->LS != NULL, &s);
    ot__cv_stats_add(&s, &L->before); /* restarts at events */
    s.jac_rhs_evals = L->dq_rhs_evals;
    for (int64_t b = 0; b < L->nbatch; b++) {
        const double ft = sol->stats[L->lane0 + b].final_time;
        sol->stats[L->lane0 + b] = s;
        sol->stats[L->lane0 + b].final_time = ft;
    }
}

/* init failed: every lane fails with L->cb.msg. */
static void init_failed(ot__lockstep *L, ot_solution *sol)
{
    const ot__plan *pl = L->plan;
    char msg[300];
    snprintf(msg, sizeof msg, "lockstep batch stopped before t0: %s", L->cb.msg);
    for (int64_t b = 0; b < pl->nbatch; b++) {
        ot__solution_fail_lane(sol, L->lane0 + b, OT_ERR_CALLBACK, msg);
        sol->stats[L->lane0 + b].final_time = pl->t0;
    }
}

int ot__lockstep_solve(ot__lockstep *L, const ot__sink *sk, int setup_st,
                       const char *what)
{
    const ot__plan *pl = L->plan;
    /* The block's lanes count as done whatever happens to them. */
    if (setup_st != OT_OK)
        ot__progress_add(pl->prog, L->nbatch * OT__PROGRESS_ONE - L->reported);
    if (setup_st == OT_ERR_CALLBACK) {
        init_failed(L, sk->sol); /* every lane fails; the call goes on */
        return OT_OK;
    }
    if (setup_st == OT_ERR_NOMEM)
        return ot__fail(setup_st, "solve: cannot allocate the %s solver for %lld lanes",
                        what, (long long)pl->nbatch);
    if (setup_st != OT_OK)
        return ot__fail(setup_st, "solve: %s setup failed: %s", what, L->cb.cv_msg);
    if (pl->kind == OT__ADJ)
        ot__lockstep_adjoint(L, sk);
    else if (pl->kind == OT__STEPS)
        solve_steps(L, sk);
    else
        solve_dense(L, sk);
    if (pl->kind != OT__ADJ) /* the adjoint's are its forward pass's */
        ot__lockstep_batch_stats(L, sk->sol);
    ot__progress_add(pl->prog, L->nbatch * OT__PROGRESS_ONE - L->reported);
    return OT_OK;
}

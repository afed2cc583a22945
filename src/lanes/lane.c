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
#include "run/adjoint.h"
#include "run/sens_jump.h"
#include "kit/advance.h"
#include "kit/cv_setup.h"
#include "kit/dq.h"
#include "kit/events.h"
#include "solution/output.h"
#include "kit/progress.h"
#include "kit/sens.h"
#include "tensor/tensor_impl.h"

/* ---- Lane setup ----------------------------------------------------------- */

/* Lane b fails with status and what, or with the callback that made CVODE
 * give up (ot__cb_cause). */
static void fail_lane(ot__lanes_worker *w, ot_solution *sol, int64_t b, int status,
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

static int init_at(void *ctx, double t, const double *y, const double *p, double *out)
{
    (void)t, (void)y;
    ot__lanes_worker *w = ctx;
    return call_init(w, ot__view_compact(p, w->plan->np, 1), out);
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
        const ot__central_space sp = {1,    n,    np,           n,
                                      NULL, NULL, w->pbuf + np, w->yp_scratch};
        const int st = ot__central(init_at, w, &sp, NAN, NULL, NULL, w->pbuf, j, NULL, s);
        if (st != OT_OK)
            return st;
    }
    return OT_OK;
}

/* ---- Outputs -------------------------------------------------------------- */

/* The out callback at (t, y) with params p into o (nout), checked. */
static int call_out(ot__lanes_worker *w, double t, const double *y, ot_view p, double *o)
{
    return ot__run_call_out(w->plan->ode, &w->cb, w->lane, t, y,
                            (const double *)p.layout.data, o);
}

static int out_at(void *ctx, double t, const double *y, const double *p, double *o)
{
    ot__lanes_worker *w = ctx;
    return call_out(w, t, y, ot__view_compact(p, w->plan->np, 1), o);
}

/* Output sensitivity j (ot__central). */
static int out_sens(ot__lanes_worker *w, double t, const double *y, const double *s,
                    int64_t j, double *dst)
{
    const ot__central_space sp = {1,
                                  w->n,
                                  w->plan->np,
                                  w->plan->rows,
                                  w->yp_scratch,
                                  w->ym_scratch,
                                  w->pbuf + w->plan->np,
                                  w->diff_scratch};
    return ot__central(out_at, w, &sp, t, y, s, w->pbuf, j, ot__sens_dir(&w->unit, j),
                       dst);
}

/* Records output i of lane b at time t from state y (and sensitivities in
 * w->yS, when solving them). */
static int store_output(ot__lanes_worker *w, const ot__sink *sk, int64_t i, int64_t b,
                        double t, const double *y)
{
    const ot__plan *pl = w->plan;
    const ot_ode *ode = pl->ode;
    ot_solution *sol = sk->sol;
    const double *row = y;
    if (ode->out) {
        int st = call_out(w, t, y, w->p, w->out_scratch);
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
static double *state_dst(ot__lanes_worker *w, const ot__sink *sk, int64_t i, int64_t b)
{
    const ot__plan *pl = w->plan;
    if (!pl->ode->out && pl->ode->out_dtype == OT_F64)
        return ot__out_column(sk->sol->ys, i, b);
    return w->ys_scratch;
}

/* ---- The lane as a unit of the run loop (run/unit.h) ------------------------ */

static N_Vector target(ot__unit *u, int64_t i)
{
    ot__lanes_worker *w = u->mode;
    double *dst = i >= 0                 ? state_dst(w, u->sink, i, u->lane0)
                  : i == OT__TARGET_STOP ? w->ym_scratch
                                         : w->ys_scratch;
    N_VSetArrayPointer(dst, w->y);
    return w->y;
}

static N_Vector restart_state(ot__unit *u, N_Vector dst)
{
    ot__lanes_worker *w = u->mode;
    double *d = N_VGetArrayPointer(dst);
    if (d != w->y_restart)
        memcpy(d, w->y_restart, (size_t)w->n * sizeof *d);
    for (int64_t j = 0; w->plan->kind == OT__SENS && j < w->plan->ns; j++)
        N_VSetArrayPointer(w->yS0 + j * w->n, w->yS[j]);
    return dst;
}

static int sens_at(ot__unit *u, double t)
{
    ot__lanes_worker *w = u->mode;
    for (int64_t j = 0; j < w->plan->ns; j++)
        N_VSetArrayPointer(w->sens_scratch + j * w->n, w->yS[j]);
    return CVodeGetSensDky(w->ig.mem, t, 0, w->yS);
}

static double *sens_state(ot__unit *u, int64_t j)
{
    return N_VGetArrayPointer(((ot__lanes_worker *)u->mode)->yS[j]);
}

/* A copy, so that the handlers never write into an output column. */
static double *host_state(ot__unit *u, N_Vector y)
{
    ot__lanes_worker *w = u->mode;
    memcpy(w->yp_scratch, N_VGetArrayPointer(y), (size_t)w->n * sizeof(double));
    return w->yp_scratch;
}

static int reinit(ot__unit *u, double t, double *host)
{
    ot__lanes_worker *w = u->mode;
    N_VSetArrayPointer(host, w->y0);
    w->y_restart = host;
    w->t_restart = t;
    const int flag = ot__ig_reinit(&w->ig, t, w->y0);
    if (flag != CV_SUCCESS || w->plan->kind != OT__SENS)
        return flag;
    /* The sensitivities there (jumped), kept where restart_state finds them. */
    for (int64_t j = 0; j < w->plan->ns; j++) {
        double *s = N_VGetArrayPointer(w->yS[j]), *keep = w->yS0 + j * w->n;
        if (s != keep)
            memcpy(keep, s, (size_t)w->n * sizeof *s);
        N_VSetArrayPointer(keep, w->yS[j]);
    }
    return CVodeSensReInit(w->ig.mem, CV_STAGGERED, w->yS);
}

static int emit(ot__unit *u, double t, N_Vector y)
{
    return store_output(u->mode, u->sink, u->at[0], u->lane0, t, N_VGetArrayPointer(y));
}

/* The step's row: the out function's, or y itself. */
static int rows(ot__unit *u, double t, N_Vector y, double *dst)
{
    ot__lanes_worker *w = u->mode;
    if (w->plan->ode->out)
        return call_out(w, t, N_VGetArrayPointer(y), w->p, dst);
    memcpy(dst, N_VGetArrayPointer(y), (size_t)w->plan->rows * sizeof *dst);
    return OT_OK;
}

/* The lane's statistics from CVODE's counters, restarts and our DQ
 * Jacobian's rhs calls included. */
static void stats(ot__unit *u)
{
    ot__lanes_worker *w = u->mode;
    const ot__plan *pl = w->plan;
    ot_lane_stats *s = &u->sink->sol->stats[u->lane0];
    ot__ig_stats(&w->ig, w->LS != NULL, s);
    ot__cv_stats_add(s, &w->before); /* restarts at events */
    /* Dense without the user's Jacobian: our DQ Jacobian's, not CVODE's. */
    if (w->LS != NULL && pl->ode->jac == NULL && pl->ode->linsol == OT_LINSOL_DENSE)
        s->jac_rhs_evals = w->dq_evals;
}

static void fail(ot__unit *u, int status, double t, const char *what, int solver)
{
    (void)t;
    if (solver)
        fail_lane(u->mode, u->sink->sol, u->lane0, status, what);
    else
        ot__solution_fail_lane(u->sink->sol, u->lane0, status, what);
}

static const ot__unit_ops lane_ops = {
    .target = target,
    .restart_state = restart_state,
    .sens_at = sens_at,
    .sens_state = sens_state,
    .host_state = host_state,
    .reinit = reinit,
    .emit = emit,
    .rows = rows,
    .stats = stats,
    .fail = fail,
};

/* Lane b as the run loop's unit: one lane on the worker's integrator,
 * starting at its t0 from w->y_restart (w->unit, reused per lane). */
static ot__unit *lane_unit(ot__lanes_worker *w, int64_t b, const ot__sink *sk)
{
    ot__unit *u = &w->unit;
    ot__run_unit_init(u, &lane_ops, w, w->plan, sk, &w->ig, &w->cb, b, 1, w->LS != NULL);
    ot__run_unit_arrays(u, &w->lane_state, w->rootsfound, w->pbuf, &w->lane_at,
                        &w->lane_next, &w->lane_knext,
                        w->plan->kind == OT__STEPS ? w->ev_scratch : NULL, &w->before,
                        &w->steps);
    u->t_restart = w->t_restart;
    w->lane_state = OT__LANE_RUNNING;
    return u;
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

/* ---- Entry ---------------------------------------------------------------- */

static void solve_lane(ot__lanes_worker *w, int64_t b, const ot__sink *sk)
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
            fail_lane(w, sol, b, OT_ERR_SOLVER, w->cb.cv_msg);
        sol->stats[b].final_time = pl->t0;
        return;
    }
    ot__unit *u = lane_unit(w, b, sk);
    if (pl->kind == OT__ADJ) {
        ot__run_adjoint(u, w->adj);
    } else if (pl->kind == OT__STEPS) {
        ot__run_steps(u);
        hand_over(w, sk, b);
    } else {
        ot__run_dense(u);
    }
}

typedef struct {
    ot__lanes_worker *w;
    int64_t b;
    const ot__sink *sk;
} lane_call;

static int protected_lane(void *arg)
{
    const lane_call *c = arg;
    solve_lane(c->w, c->b, c->sk);
    return OT_OK;
}

void ot__lanes_solve_lane(ot__lanes_worker *w, int64_t b, const ot__sink *sk)
{
    const ot__plan *pl = w->plan;
    ot_solution *sol = sk->sol;
    if (pl->bad && pl->bad[b]) /* failed already, by its inputs */
        return;
    const char *which = ot__method(pl->ode->method)->ark ? "ARKODE" : "CVODE";
    if (w->broken) {
        char msg[120];
        snprintf(msg, sizeof msg, "cannot allocate the %s solver", which);
        ot__solution_fail_lane(sol, b, OT_ERR_NOMEM, msg);
        sol->stats[b].final_time = ot__plan_t0(pl, b);
        return;
    }
    const lane_call c = {w, b, sk};
    if (ot__sun_protect(&w->scope, protected_lane, (void *)&c) != OT__SUN_NOMEM)
        return;
    /* Memory ran out inside SUNDIALS: the lane fails with what it reached
     * (its outputs so far, its steps for ot_solve); the worker's SUNDIALS
     * objects are dropped and made again for its next lane. */
    ot__run_unit_abandon(&w->unit);
    ot__run_lane_out_of_memory(sol, b, pl->ode->method);
    if (pl->kind == OT__STEPS)
        hand_over(w, sk, b);
    ot__lanes_worker_renew(w);
}

/* Lanes mode: solving one lane on a worker's CVODE(S) instance, writing its
 * outputs, status and statistics. */
#include <cvodes/cvodes.h>
#include <float.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "solve/cv_advance.h"
#include "lanes/worker.h"
#include "solve/output.h"

/* ---- Lane setup ----------------------------------------------------------- */

static void fail_lane(ot__worker *w, ot_solution *sol, int64_t b, int status,
                      const char *what)
{
    char msg[512];
    if (w->cb_failed && status == OT_ERR_SOLVER) {
        /* CVODE gave up after a callback failed: the callback is the cause. */
        status = OT_ERR_CALLBACK;
        snprintf(msg, sizeof msg, "%s; then %s", w->cb_msg, w->cv_msg);
    } else {
        snprintf(msg, sizeof msg, "%s", what);
    }
    ot__solution_fail_lane(sol, b, status, msg);
}

/* The init callback for params p into y (n), checked. */
static int call_init(ot__worker *w, ot_view p, double *y)
{
    const ot_ode *ode = w->plan->ode;
    int rc = ode->init(p, ot__mview(y, w->n, 1), ode->user);
    if (rc != 0) {
        snprintf(w->cb_msg, sizeof w->cb_msg, "init returned %d", rc);
        return OT_ERR_CALLBACK;
    }
    for (int64_t i = 0; i < w->n; i++)
        if (!isfinite(y[i])) {
            snprintf(w->cb_msg, sizeof w->cb_msg, "init wrote NaN or Inf to y0[%lld]",
                     (long long)i);
            return OT_ERR_CALLBACK;
        }
    return OT_OK;
}

/* Central-difference step for parameter value v. */
static double fd_step(double v) { return cbrt(DBL_EPSILON) * fmax(fabs(v), 1.0); }

/* Points w->y0 at lane b's initial state and fills the initial sensitivities
 * (zero, or central differences of init when init computes y0). */
static int lane_start(ot__worker *w, int64_t b)
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
    if (pl->kind != OT__SENS)
        return OT_OK;
    for (int64_t j = 0; j < np; j++) {
        double *s = w->yS0 + j * n;
        N_VSetArrayPointer(s, w->yS[j]);
        if (pl->has_y0) {
            memset(s, 0, (size_t)n * sizeof *s);
            continue;
        }
        double *pp = w->pbuf + np;
        memcpy(pp, w->pbuf, (size_t)np * sizeof *pp);
        const double h = fd_step(w->pbuf[j]);
        pp[j] = w->pbuf[j] + h;
        int st = call_init(w, ot__cview(pp, np), w->yp_scratch);
        pp[j] = w->pbuf[j] - h;
        if (st == OT_OK)
            st = call_init(w, ot__cview(pp, np), w->ym_scratch);
        if (st != OT_OK)
            return st;
        for (int64_t i = 0; i < n; i++)
            s[i] = (w->yp_scratch[i] - w->ym_scratch[i]) / (2 * h);
    }
    return OT_OK;
}

/* ---- Outputs -------------------------------------------------------------- */

/* The out callback at (t, y) with params p into o (nout), checked. */
static int call_out(ot__worker *w, double t, const double *y, ot_view p, double *o)
{
    const ot_ode *ode = w->plan->ode;
    int rc = ode->out(t, ot__cview(y, w->n), p, ot__mview(o, ode->nout, 1), ode->user);
    if (rc != 0) {
        snprintf(w->cb_msg, sizeof w->cb_msg, "out returned %d at t = %g", rc, t);
        return OT_ERR_CALLBACK;
    }
    for (int64_t r = 0; r < ode->nout; r++)
        if (!isfinite(o[r])) {
            snprintf(w->cb_msg, sizeof w->cb_msg,
                     "out wrote NaN or Inf at t = %g to o[%lld]", t, (long long)r);
            return OT_ERR_CALLBACK;
        }
    return OT_OK;
}

/* Output sensitivity j: central difference of out along (s_j, e_j). */
static int out_sens(ot__worker *w, double t, const double *y, const double *s, int64_t j,
                    double *dst)
{
    const int64_t n = w->n, np = w->plan->np, nout = w->plan->rows;
    double *pp = w->pbuf + np;
    memcpy(pp, w->pbuf, (size_t)np * sizeof *pp);
    const double h = fd_step(w->pbuf[j]);
    for (int64_t i = 0; i < n; i++) {
        w->yp_scratch[i] = y[i] + h * s[i];
        w->ym_scratch[i] = y[i] - h * s[i];
    }
    pp[j] = w->pbuf[j] + h;
    int st = call_out(w, t, w->yp_scratch, ot__cview(pp, np), w->diff_scratch);
    pp[j] = w->pbuf[j] - h;
    if (st == OT_OK)
        st = call_out(w, t, w->ym_scratch, ot__cview(pp, np), dst);
    for (int64_t r = 0; st == OT_OK && r < nout; r++)
        dst[r] = (w->diff_scratch[r] - dst[r]) / (2 * h);
    return st;
}

/* Records output i of lane b at time t from state y (and sensitivities in
 * w->yS, when solving them). */
static int emit_dense(ot__worker *w, const ot__sink *sk, int64_t i, int64_t b, double t,
                      const double *y)
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
    for (int64_t j = 0; j < pl->np; j++) {
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
static double *state_dst(ot__worker *w, const ot__sink *sk, int64_t i, int64_t b)
{
    const ot__plan *pl = w->plan;
    if (!pl->ode->out && pl->ode->out_dtype == OT_F64)
        return ot__out_column(sk->sol->ys, i, b);
    return w->ys_scratch;
}

static void record_root(ot__worker *w, ot_solution *sol, int64_t b, double t)
{
    int found[64], *rf = found;
    const int nr = (int)w->plan->ode->nroots;
    if (nr > 64 && (rf = OT__MALLOC((size_t)nr * sizeof *rf)) == NULL)
        rf = NULL;
    sol->root_time[b] = t;
    sol->root_index[b] = 0;
    if (rf && CVodeGetRootInfo(w->cv, rf) == CV_SUCCESS)
        for (int r = 0; r < nr; r++)
            if (rf[r] != 0) {
                sol->root_index[b] = r;
                break;
            }
    if (rf != found)
        free(rf);
}

static void solve_dense(ot__worker *w, int64_t b, const ot__sink *sk)
{
    const ot__plan *pl = w->plan;
    ot_solution *sol = sk->sol;
    int64_t i = 0;
    int root = 0;
    for (; i < pl->nt && !root; i++) {
        const double tout = pl->t[i];
        double *dst = state_dst(w, sk, i, b);
        double tret = pl->t0;
        int flag = CV_SUCCESS;
        if (tout == pl->t0) {
            memcpy(dst, N_VGetArrayPointer(w->y0), (size_t)w->n * sizeof *dst);
            for (int64_t j = 0; pl->kind == OT__SENS && j < pl->np; j++)
                N_VSetArrayPointer(w->yS0 + j * w->n, w->yS[j]);
        } else {
            N_VSetArrayPointer(dst, w->y);
            flag = ot__cv_advance(w->cv, tout, w->y, &tret, pl->ode->max_steps, w->cv_msg,
                                  sizeof w->cv_msg);
            if (flag >= 0 && pl->kind == OT__SENS) {
                for (int64_t j = 0; j < pl->np; j++)
                    N_VSetArrayPointer(w->sens_scratch + j * w->n, w->yS[j]);
                /* keep CV_ROOT_RETURN: only a failure replaces it */
                const int sflag = CVodeGetSensDky(w->cv, tret, 0, w->yS);
                flag = sflag < 0 ? sflag : flag;
            }
        }
        if (flag < 0) {
            char msg[320];
            snprintf(msg, sizeof msg, "CVODE stopped before t = %g: %s", tout, w->cv_msg);
            fail_lane(w, sol, b, OT_ERR_SOLVER, msg);
            break;
        }
        if (flag == CV_ROOT_RETURN) {
            record_root(w, sol, b, tret);
            root = 1;
            if (tret < tout)
                break;
        }
        int st = emit_dense(w, sk, i, b, tout, dst);
        if (st != OT_OK) {
            ot__solution_fail_lane(sol, b, st, w->cb_msg);
            break;
        }
        sol->count[b] = i + 1;
        sol->stats[b].final_time = tout;
    }
    for (int64_t k = sol->count[b]; k < pl->nt; k++) {
        ot__out_nan(sol->ys, k, b, pl->rows);
        for (int64_t j = 0; pl->kind == OT__SENS && j < pl->np; j++)
            ot__out_nan(sol->sens[j], k, b, pl->rows);
    }
    if (root && sol->status[b] == OT_OK)
        sol->stats[b].final_time = sol->root_time[b];
}

/* Appends (t, row) to the worker's growable step record. */
static int append_step(ot__worker *w, int64_t k, double t, const double *row)
{
    const int64_t rows = w->plan->rows;
    if (k == w->steps_cap) {
        const int64_t cap = w->steps_cap ? 2 * w->steps_cap : 256;
        double *nt = OT__REALLOC(w->steps_t, (size_t)cap * sizeof *nt);
        if (nt)
            w->steps_t = nt;
        double *ny =
            nt ? OT__REALLOC(w->steps_y, (size_t)(cap * rows) * sizeof *ny) : NULL;
        if (ny == NULL)
            return OT_ERR_NOMEM;
        w->steps_y = ny;
        w->steps_cap = cap;
    }
    w->steps_t[k] = t;
    memcpy(w->steps_y + k * rows, row, (size_t)rows * sizeof *row);
    return OT_OK;
}

/* Records y at t as step k: the out function's row or y itself. */
static int emit_step(ot__worker *w, int64_t k, double t, const double *y)
{
    if (w->plan->ode->out) {
        int st = call_out(w, t, y, w->p, w->out_scratch);
        if (st != OT_OK)
            return st;
        y = w->out_scratch;
    }
    if (append_step(w, k, t, y) != OT_OK) {
        snprintf(w->cb_msg, sizeof w->cb_msg,
                 "cannot grow the step record past %lld steps", (long long)k);
        return OT_ERR_NOMEM;
    }
    return OT_OK;
}

static void solve_steps(ot__worker *w, int64_t b, const ot__sink *sk)
{
    const ot__plan *pl = w->plan;
    ot_solution *sol = sk->sol;
    int64_t k = 0;
    int st = emit_step(w, k, pl->t0, N_VGetArrayPointer(w->y0));
    if (st != OT_OK)
        ot__solution_fail_lane(sol, b, st, w->cb_msg);
    else
        k++;
    double t = pl->t0;
    N_VSetArrayPointer(w->ys_scratch, w->y);
    CVodeSetStopTime(w->cv, pl->t_final);
    while (st == OT_OK && t < pl->t_final) {
        if (k > pl->step_limit) {
            /* As CVODE's own max_steps failure: blamed on a callback that
             * kept failing (fail_lane reads cv_msg then). */
            snprintf(w->cv_msg, sizeof w->cv_msg,
                     "more than max_steps = %lld steps before t = %g",
                     (long long)pl->step_limit, pl->t_final);
            fail_lane(w, sol, b, OT_ERR_SOLVER, w->cv_msg);
            break;
        }
        int flag = CVode(w->cv, pl->t_final, w->y, &t, CV_ONE_STEP);
        if (flag < 0) {
            char msg[320];
            snprintf(msg, sizeof msg, "CVODE stopped at t = %g: %s", t, w->cv_msg);
            fail_lane(w, sol, b, OT_ERR_SOLVER, msg);
            break;
        }
        st = emit_step(w, k++, t, w->ys_scratch);
        if (st != OT_OK) {
            ot__solution_fail_lane(sol, b, st, w->cb_msg);
            k--;
            break;
        }
        if (flag == CV_ROOT_RETURN) {
            record_root(w, sol, b, t);
            break;
        }
    }
    sol->count[b] = k;
    sol->stats[b].final_time = k > 0 ? w->steps_t[k - 1] : pl->t0;
    /* Hand the lane an exact-size copy; the worker keeps its buffers. */
    const size_t rows = (size_t)pl->rows;
    sk->lane_ts[b] = OT__MALLOC((size_t)(k > 0 ? k : 1) * sizeof(double));
    sk->lane_ys[b] = OT__MALLOC((size_t)(k > 0 ? k : 1) * rows * sizeof(double) + 1);
    if (!sk->lane_ts[b] || !sk->lane_ys[b]) {
        free(sk->lane_ts[b]);
        free(sk->lane_ys[b]);
        sk->lane_ts[b] = sk->lane_ys[b] = NULL;
        sol->count[b] = 0;
        ot__solution_fail_lane(sol, b, OT_ERR_NOMEM, "cannot allocate the lane's steps");
        return;
    }
    if (k > 0) { /* no record at all when the first step could not be kept */
        memcpy(sk->lane_ts[b], w->steps_t, (size_t)k * sizeof(double));
        memcpy(sk->lane_ys[b], w->steps_y, (size_t)k * rows * sizeof(double));
    }
}

/* ---- Entry ---------------------------------------------------------------- */

static void collect_stats(ot__worker *w, ot_lane_stats *s)
{
    long v;
    if (CVodeGetNumSteps(w->cv, &v) == CV_SUCCESS)
        s->steps = v;
    if (CVodeGetNumRhsEvals(w->cv, &v) == CV_SUCCESS)
        s->rhs_evals = v;
    if (CVodeGetNumErrTestFails(w->cv, &v) == CV_SUCCESS)
        s->err_test_fails = v;
    if (CVodeGetNumNonlinSolvIters(w->cv, &v) == CV_SUCCESS)
        s->nonlin_iters = v;
    if (CVodeGetNumNonlinSolvConvFails(w->cv, &v) == CV_SUCCESS)
        s->nonlin_fails = v;
    if (w->LS && CVodeGetNumJacEvals(w->cv, &v) == CV_SUCCESS)
        s->jac_evals = v;
    if (w->LS && CVodeGetNumLinRhsEvals(w->cv, &v) == CV_SUCCESS)
        s->jac_rhs_evals = v;
    if (w->LS && CVodeGetNumLinSolvSetups(w->cv, &v) == CV_SUCCESS)
        s->lin_setups = v;
}

void ot__worker_solve_lane(ot__worker *w, int64_t b, const ot__sink *sk)
{
    const ot__plan *pl = w->plan;
    ot_solution *sol = sk->sol;
    w->cb_failed = 0;
    w->nan_count = 0;
    w->cb_msg[0] = w->cv_msg[0] = '\0';
    const double *pcol = pl->np ? ot_view_lane(pl->p, b) : NULL;
    if (pl->kind == OT__SENS) {
        /* CVODES perturbs the parameters in place: give it a private copy. */
        memcpy(w->pbuf, pcol, (size_t)pl->np * sizeof *w->pbuf);
        for (int64_t j = 0; j < pl->np; j++)
            w->pbar[j] = w->pbuf[j] != 0 ? fabs(w->pbuf[j]) : 1.0;
        pcol = w->pbuf;
    }
    w->p = ot__cview(pcol, pl->np);

    int st = lane_start(w, b);
    int flag = CV_SUCCESS;
    if (st == OT_OK) {
        flag = CVodeReInit(w->cv, pl->t0, w->y0);
        if (!flag && pl->kind == OT__SENS)
            flag = CVodeSensReInit(w->cv, CV_STAGGERED, w->yS);
        /* CVODES copies pbar when it is set: give it this lane's scales. */
        if (!flag && pl->kind == OT__SENS)
            flag = CVodeSetSensParams(w->cv, w->pbuf, w->pbar, NULL);
    }
    if (st != OT_OK || flag != CV_SUCCESS) {
        if (st != OT_OK)
            ot__solution_fail_lane(sol, b, st, w->cb_msg);
        else
            fail_lane(w, sol, b, OT_ERR_SOLVER, w->cv_msg);
        sol->stats[b].final_time = pl->t0;
        if (pl->kind == OT__STEPS) {
            sk->lane_ts[b] = sk->lane_ys[b] = NULL;
            return;
        }
        for (int64_t k = 0; k < pl->nt; k++) {
            ot__out_nan(sol->ys, k, b, pl->rows);
            for (int64_t j = 0; pl->kind == OT__SENS && j < pl->np; j++)
                ot__out_nan(sol->sens[j], k, b, pl->rows);
        }
        return;
    }
    if (pl->kind == OT__STEPS)
        solve_steps(w, b, sk);
    else
        solve_dense(w, b, sk);
    collect_stats(w, &sol->stats[b]);
}

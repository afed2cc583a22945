/* Lockstep mode: the backend-neutral loops. One CVODE(S) runs over a vector
 * of length n * nbatch laid out [n, nbatch]. A callback failure or a solver
 * failure stops the whole batch (every lane still running gets the status
 * and message); a root stops its own lane only, which then stands still (zero
 * derivative) while the others go on. The backend (lockstep_cpu.c, or
 * src/cuda/) owns the vectors, the linear algebra, the callbacks and the data
 * movement into the outputs. */
#include <cvodes/cvodes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "solve/nv_clone.h"
#include "solve/cv_advance.h"
#include "solve/cv_setup.h"
#include "lockstep/lockstep.h"
#include "solve/output.h"

/* ---- Results -------------------------------------------------------------- */

/* Every running lane fails with the same status: the batch stopped. why:
 * the cause, or NULL for the callback's and CVODE's last messages. */
void ot__ls_fail_batch(ot__lockstep *L, ot_solution *sol, int status, double t,
                       const char *why)
{
    char msg[600];
    if (why)
        snprintf(msg, sizeof msg, "lockstep batch stopped at t = %g: %s", t, why);
    else if (L->cb_failed)
        snprintf(msg, sizeof msg, "lockstep batch stopped at t = %g: %s%s%s", t,
                 L->cb_msg, L->cv_msg[0] ? "; then " : "", L->cv_msg);
    else
        snprintf(msg, sizeof msg, "lockstep batch stopped at t = %g: %s", t, L->cv_msg);
    if (L->cb_failed && status == OT_ERR_SOLVER)
        status = OT_ERR_CALLBACK;
    for (int64_t b = 0; b < L->nb; b++)
        if (!L->stopped[b]) {
            ot__solution_fail_lane(sol, b, status, msg);
            sol->stats[b].final_time = t;
            L->stopped[b] = 2;
        }
}

void ot__ls_free_common(ot__lockstep *L)
{
    if (L->yS)
        N_VDestroyVectorArray(L->yS, (int)L->np);
    CVodeFree(&L->cv);
    SUNLinSolFree(L->LS);
    SUNMatDestroy(L->A);
    SUNNonlinSolFree(L->NLS);
    SUNNonlinSolFree(L->NLSsens);
    N_VDestroy(L->y);
    N_VDestroy(L->yout);
    N_VDestroy(L->ewt);
    N_VDestroy(L->atolv);
    SUNContext_Free(&L->ctx);
    free(L->stopped);
    free(L->rootsfound);
}

int ot__ls_finish_setup(ot__lockstep *L)
{
    const ot__plan *pl = L->plan;
    if (L->y == NULL)
        return OT_ERR_NOMEM;
    L->yout = ot__nv_clone(L->y);
    L->ewt = L->yout ? ot__nv_clone(L->y) : NULL;
    if (L->ewt == NULL)
        return OT_ERR_NOMEM;
    if (pl->kind == OT__SENS && (L->yS = ot__nv_clone_array((int)L->np, L->y, 0)) == NULL)
        return OT_ERR_NOMEM;
    const int st = L->be->initial_state(L);
    if (st != OT_OK)
        return st;
    L->cv =
        OT__SUN_NEW(CVodeCreate(pl->ode->method == OT_BDF ? CV_BDF : CV_ADAMS, L->ctx));
    return L->cv ? ot__ls_configure(L) : OT_ERR_NOMEM;
}

int ot__ls_configure(ot__lockstep *L)
{
    const ot__plan *pl = L->plan;
    const ot_ode *ode = pl->ode;
    const ot__ls_backend *be = L->be;
    void *cv = L->cv;
    int f = OT__SUN_CALL(CVodeInit(cv, be->rhs, pl->t0, L->y), CV_MEM_FAIL);
    f = f ? f : ot__cv_options(cv, pl, L, ot__ls_err);
    if (!f && ode->atol_vec) {
        const int st = be->make_atol(L);
        if (st != OT_OK)
            return st;
    }
    f = f ? f : ot__cv_tolerances(cv, ode, L->atolv);
    if (!f && ode->method == OT_BDF)
        be->make_linear(L);
    /* The block matrix has no CVODE difference quotients: ours always. */
    f = f ? f : ot__cv_solver(cv, ode, L->A, L->LS, be->jac, L->y, L->ctx, &L->NLS);
    if (!f && ode->nroots > 0)
        f = OT__SUN_CALL(CVodeRootInit(cv, (int)(ode->nroots * L->nb), be->root),
                         CV_MEM_FAIL);
    if (!f && pl->kind == OT__SENS) {
        f = OT__SUN_CALL(CVodeSensInit(cv, (int)L->np, CV_STAGGERED, be->sens_rhs, L->yS),
                         CV_MEM_FAIL);
        f = f ? f : ot__cv_sens_setup(cv, ode, (int)L->np, L->y, L->ctx, &L->NLSsens);
    }
    if (f == CV_MEM_FAIL)
        return OT_ERR_NOMEM;
    return f ? OT_ERR_SOLVER : OT_OK;
}

/* Lanes whose root fired at t stop there; their count is `count`. */
static void take_roots(ot__lockstep *L, ot_solution *sol, double t, int64_t count)
{
    const int64_t nr = L->plan->ode->nroots;
    int stopped = 0;
    if (CVodeGetRootInfo(L->cv, L->rootsfound) != CV_SUCCESS)
        return;
    for (int64_t b = 0; b < L->nb; b++)
        for (int64_t r = 0; r < nr && !L->stopped[b]; r++)
            if (L->rootsfound[b * nr + r] != 0) {
                L->stopped[b] = 1;
                stopped = 1;
                sol->root_index[b] = (int)r;
                sol->root_time[b] = t;
                sol->count[b] = count;
                sol->stats[b].final_time = t;
            }
    if (stopped && L->be->stopped_changed)
        L->be->stopped_changed(L);
}

int ot__ls_all_stopped(const ot__lockstep *L)
{
    for (int64_t b = 0; b < L->nb; b++)
        if (!L->stopped[b])
            return 0;
    return 1;
}

/* ---- The loops ------------------------------------------------------------ */

static void solve_dense(ot__lockstep *L, ot_solution *sol)
{
    const ot__plan *pl = L->plan;
    int64_t i = 0;
    for (; i < pl->nt && !ot__ls_all_stopped(L); i++) {
        const double tout = pl->t[i];
        N_Vector y = L->y; /* t0 itself: the initial state */
        if (tout != pl->t0) {
            double tret = pl->t0;
            int flag;
            while ((flag = ot__cv_advance(L->cv, tout, L->yout, &tret, pl->ode->max_steps,
                                          L->cv_msg, sizeof L->cv_msg)) ==
                   CV_ROOT_RETURN) {
                take_roots(L, sol, tret, i);
                if (ot__ls_all_stopped(L))
                    break;
            }
            if (ot__ls_all_stopped(L))
                break;
            if (flag >= 0 && pl->kind == OT__SENS)
                flag = CVodeGetSensDky(L->cv, tret, 0, L->yS);
            if (flag < 0) {
                double tcur = pl->t0;
                CVodeGetCurrentTime(L->cv, &tcur);
                ot__ls_fail_batch(L, sol, OT_ERR_SOLVER, tcur, NULL);
                break;
            }
            y = L->yout;
        }
        if (L->be->emit(L, sol, i, tout, y) != OT_OK) {
            ot__ls_fail_batch(L, sol, OT_ERR_CALLBACK, tout, L->cb_msg);
            break;
        }
    }
    L->be->nan_fill(L, sol);
}

/* Growable record of the batch's steps: times and [rows, nb] per step. */
typedef struct {
    double *t, *y;
    int64_t cap;
} record;

static int record_step(ot__lockstep *L, record *r, int64_t k, double t, N_Vector y)
{
    const int64_t block = L->rows * L->nb;
    if (k == r->cap) {
        const int64_t cap = r->cap ? 2 * r->cap : 64;
        double *nt = OT__REALLOC(r->t, (size_t)cap * sizeof *nt);
        if (nt)
            r->t = nt;
        double *ny = nt ? OT__REALLOC(r->y, (size_t)(cap * block) * sizeof *ny) : NULL;
        if (ny == NULL) {
            snprintf(L->cb_msg, sizeof L->cb_msg, "cannot grow the step record");
            return OT_ERR_NOMEM;
        }
        r->y = ny;
        r->cap = cap;
    }
    r->t[k] = t;
    return L->be->host_rows(L, t, y, r->y + k * block);
}

/* Running lanes now have k entries, the last at t. */
static void advance_counts(ot__lockstep *L, ot_solution *sol, int64_t k, double t)
{
    for (int64_t b = 0; b < L->nb; b++)
        if (!L->stopped[b]) {
            sol->count[b] = k;
            sol->stats[b].final_time = t;
        }
}

/* Hands each lane an exact-size copy of its steps, as lanes mode does. */
static void hand_over(ot__lockstep *L, const ot__sink *sk, const record *r)
{
    ot_solution *sol = sk->sol;
    const int64_t block = L->rows * L->nb;
    for (int64_t b = 0; b < L->nb; b++) {
        const int64_t c = sol->count[b];
        sk->lane_ts[b] = OT__MALLOC((size_t)(c > 0 ? c : 1) * sizeof(double));
        sk->lane_ys[b] =
            OT__MALLOC((size_t)((c > 0 ? c : 1) * L->rows) * sizeof(double) + 1);
        if (!sk->lane_ts[b] || !sk->lane_ys[b]) {
            free(sk->lane_ts[b]);
            free(sk->lane_ys[b]);
            sk->lane_ts[b] = sk->lane_ys[b] = NULL;
            sol->count[b] = 0;
            ot__solution_fail_lane(sol, b, OT_ERR_NOMEM,
                                   "cannot allocate the lane's steps");
            continue;
        }
        for (int64_t q = 0; q < c; q++) {
            sk->lane_ts[b][q] = r->t[q];
            memcpy(sk->lane_ys[b] + q * L->rows, r->y + q * block + b * L->rows,
                   (size_t)L->rows * sizeof(double));
        }
    }
}

static void solve_steps(ot__lockstep *L, const ot__sink *sk)
{
    const ot__plan *pl = L->plan;
    ot_solution *sol = sk->sol;
    record r = {NULL, NULL, 0};
    int64_t k = 0;
    double t = pl->t0;
    int st = record_step(L, &r, k, t, L->y);
    if (st != OT_OK)
        ot__ls_fail_batch(L, sol, st, t, L->cb_msg);
    else
        advance_counts(L, sol, ++k, t);
    CVodeSetStopTime(L->cv, pl->t_final);
    while (!ot__ls_all_stopped(L) && t < pl->t_final) {
        if (k > pl->step_limit) {
            char why[128];
            snprintf(why, sizeof why, "more than max_steps = %lld steps",
                     (long long)pl->step_limit);
            ot__ls_fail_batch(L, sol, OT_ERR_SOLVER, t, why);
            break;
        }
        const int flag = CVode(L->cv, pl->t_final, L->yout, &t, CV_ONE_STEP);
        if (flag < 0) {
            ot__ls_fail_batch(L, sol, OT_ERR_SOLVER, t, NULL);
            break;
        }
        if ((st = record_step(L, &r, k, t, L->yout)) != OT_OK) {
            ot__ls_fail_batch(L, sol, st, t, L->cb_msg);
            break;
        }
        advance_counts(L, sol, ++k, t);
        if (flag == CV_ROOT_RETURN)
            take_roots(L, sol, t, k);
    }
    hand_over(L, sk, &r);
    free(r.t);
    free(r.y);
}
/* NaN past each lane's count, in host outputs. */
void ot__ls_nan_fill_host(ot__lockstep *L, ot_solution *sol)
{
    const ot__plan *pl = L->plan;
    for (int64_t b = 0; b < L->nb; b++)
        for (int64_t k = sol->count[b]; k < pl->nt; k++) {
            ot__out_nan(sol->ys, k, b, pl->rows);
            for (int64_t j = 0; pl->kind == OT__SENS && j < pl->np; j++)
                ot__out_nan(sol->sens[j], k, b, pl->rows);
        }
}
/* ---- Entry ---------------------------------------------------------------- */

/* Every lane shares the batch's counters. */
static void batch_stats(ot__lockstep *L, ot_solution *sol)
{
    ot_lane_stats s;
    memset(&s, 0, sizeof s);
    long v;
    if (CVodeGetNumSteps(L->cv, &v) == CV_SUCCESS)
        s.steps = v;
    if (CVodeGetNumRhsEvals(L->cv, &v) == CV_SUCCESS)
        s.rhs_evals = v;
    if (CVodeGetNumErrTestFails(L->cv, &v) == CV_SUCCESS)
        s.err_test_fails = v;
    if (CVodeGetNumNonlinSolvIters(L->cv, &v) == CV_SUCCESS)
        s.nonlin_iters = v;
    if (CVodeGetNumNonlinSolvConvFails(L->cv, &v) == CV_SUCCESS)
        s.nonlin_fails = v;
    if (L->LS && CVodeGetNumJacEvals(L->cv, &v) == CV_SUCCESS)
        s.jac_evals = v;
    if (L->LS && CVodeGetNumLinSolvSetups(L->cv, &v) == CV_SUCCESS)
        s.lin_setups = v;
    s.jac_rhs_evals = L->dq_rhs_evals;
    for (int64_t b = 0; b < L->nb; b++) {
        const double ft = sol->stats[b].final_time;
        sol->stats[b] = s;
        sol->stats[b].final_time = ft;
    }
}
void ot__lockstep_loop(ot__lockstep *L, const ot__sink *sk)
{
    const ot__plan *pl = L->plan;
    if (pl->kind == OT__STEPS)
        solve_steps(L, sk);
    else
        solve_dense(L, sk->sol);
    batch_stats(L, sk->sol);
    if (pl->ode->progress)
        pl->ode->progress(pl->nbatch, pl->nbatch, pl->ode->progress_user);
}

void ot__lockstep_init_failed(ot__lockstep *L, const ot__sink *sk)
{
    const ot__plan *pl = L->plan;
    char msg[300];
    snprintf(msg, sizeof msg, "lockstep batch stopped before t0: %s", L->cb_msg);
    for (int64_t b = 0; b < pl->nbatch; b++) {
        ot__solution_fail_lane(sk->sol, b, OT_ERR_CALLBACK, msg);
        sk->sol->stats[b].final_time = pl->t0;
    }
    if (pl->kind != OT__STEPS)
        L->be->nan_fill(L, sk->sol);
}

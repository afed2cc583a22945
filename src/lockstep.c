/* Lockstep mode on the CPU: one CVODE(S) over a vector of length n * nbatch
 * laid out [n, nbatch], with block-diagonal linear algebra and the per-lane
 * norm. A callback failure or a solver failure stops the whole batch (every
 * lane still running gets the status and message); a root stops its own lane
 * only, which then stands still (zero derivative) while the others go on. */
#include <cvodes/cvodes.h>
#include <stdlib.h>
#include <string.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "error.h"
#include "lockstep_solver.h"
#include "output.h"

static _Thread_local int plain_norm;

void ot__lockstep_plain_norm(int plain) { plain_norm = plain; }

/* ---- Setup ---------------------------------------------------------------- */

static void free_solver(ot__lockstep *L)
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
    free(L->p);
    free(L->pp);
    free(L->o);
    free(L->o2);
    free(L->yp);
    free(L->ym);
    free(L->inc);
    free(L->stopped);
    free(L->rootsfound);
}

/* y0 for every lane into L->y, and the initial sensitivities (zero, or
 * central differences of init). */
static int initial_state(ot__lockstep *L)
{
    const ot__plan *pl = L->plan;
    const ot_ode *ode = pl->ode;
    const int64_t n = L->n, nb = L->nb, np = L->np;
    double *y = N_VGetArrayPointer(L->y);
    for (int64_t b = 0; pl->has_y0 && b < nb; b++)
        memcpy(y + b * n, ot_view_lane(pl->y0, b), (size_t)n * sizeof *y);
    if (!pl->has_y0) {
        int rc = ode->init(ot__ls_view(L->p, np, nb), ot__ls_mut(y, n, nb), ode->user);
        if (rc != 0) {
            snprintf(L->cb_msg, sizeof L->cb_msg, "init returned %d", rc);
            return OT_ERR_CALLBACK;
        }
    }
    for (int64_t j = 0; pl->kind == OT__SENS && j < np; j++) {
        double *s = N_VGetArrayPointer(L->yS[j]);
        memset(s, 0, (size_t)(n * nb) * sizeof *s);
        if (pl->has_y0)
            continue;
        memcpy(L->pp, L->p, (size_t)(np * nb) * sizeof *L->pp);
        for (int64_t b = 0; b < nb; b++)
            L->pp[b * np + j] += ot__ls_fd_step(L->p[b * np + j]);
        int rc =
            ode->init(ot__ls_view(L->pp, np, nb), ot__ls_mut(L->yp, n, nb), ode->user);
        for (int64_t b = 0; b < nb; b++)
            L->pp[b * np + j] = L->p[b * np + j] - ot__ls_fd_step(L->p[b * np + j]);
        if (rc == 0)
            rc = ode->init(ot__ls_view(L->pp, np, nb), ot__ls_mut(L->ym, n, nb),
                           ode->user);
        if (rc != 0) {
            snprintf(L->cb_msg, sizeof L->cb_msg, "init returned %d", rc);
            return OT_ERR_CALLBACK;
        }
        for (int64_t b = 0; b < nb; b++)
            for (int64_t i = b * n; i < (b + 1) * n; i++)
                s[i] = (L->yp[i] - L->ym[i]) / (2 * ot__ls_fd_step(L->p[b * np + j]));
    }
    for (int64_t k = 0; k < n * nb; k++)
        if (!isfinite(y[k])) {
            snprintf(L->cb_msg, sizeof L->cb_msg, "init wrote NaN or Inf in lane %lld",
                     (long long)(k / n));
            return OT_ERR_CALLBACK;
        }
    return OT_OK;
}

static int configure(ot__lockstep *L)
{
    const ot__plan *pl = L->plan;
    const ot_ode *ode = pl->ode;
    void *cv = L->cv;
    int f = CVodeInit(cv, ot__ls_rhs, pl->t0, L->y);
    f = f ? f : CVodeSetUserData(cv, L);
    f = f ? f : CVodeSetErrHandlerFn(cv, ot__ls_err, L);
    f = f ? f : CVodeSetMaxNumSteps(cv, pl->kind == OT__STEPS ? -1 : ode->max_steps);
    if (!f && ode->h0 > 0)
        f = CVodeSetInitStep(cv, ode->h0);
    if (!f && ode->hmax > 0)
        f = CVodeSetMaxStep(cv, ode->hmax);
    if (!f && ode->atol_vec) {
        L->atolv = N_VClone(L->y);
        if (L->atolv == NULL)
            return OT_ERR_NOMEM;
        double *a = N_VGetArrayPointer(L->atolv);
        for (int64_t b = 0; b < L->nb; b++)
            memcpy(a + b * L->n, ode->atol_vec, (size_t)L->n * sizeof *a);
        f = CVodeSVtolerances(cv, ode->rtol, L->atolv);
    } else if (!f) {
        f = CVodeSStolerances(cv, ode->rtol, ode->atol);
    }
    if (!f && ode->method == OT_BDF) {
        L->A = ot__block_matrix_new(L->n, L->nb, L->ctx);
        L->LS = L->A ? ot__block_solver_new(L->n, L->nb, L->ctx) : NULL;
        if (L->LS == NULL)
            return OT_ERR_NOMEM;
        f = CVodeSetLinearSolver(cv, L->LS, L->A);
        f = f ? f : CVodeSetJacFn(cv, ot__ls_jac);
    } else if (!f) {
        L->NLS = SUNNonlinSol_FixedPoint(L->y, 0, L->ctx);
        if (L->NLS == NULL)
            return OT_ERR_NOMEM;
        f = CVodeSetNonlinearSolver(cv, L->NLS);
    }
    if (!f && ode->nroots > 0)
        f = CVodeRootInit(cv, (int)(ode->nroots * L->nb), ot__ls_root);
    if (!f && pl->kind == OT__SENS) {
        f = CVodeSensInit(cv, (int)L->np, CV_STAGGERED, ot__ls_sens_rhs, L->yS);
        f = f ? f : CVodeSetSensErrCon(cv, SUNTRUE);
        if (!f && (ode->sens_rtol > 0 || ode->sens_atol > 0)) {
            double *atols = malloc((size_t)L->np * sizeof *atols);
            if (atols == NULL)
                return OT_ERR_NOMEM;
            for (int64_t j = 0; j < L->np; j++)
                atols[j] = ode->sens_atol;
            f = CVodeSensSStolerances(cv, ode->sens_rtol, atols);
            free(atols);
        } else if (!f) {
            f = CVodeSensEEtolerances(cv);
        }
        if (!f && ode->method == OT_ADAMS) {
            L->NLSsens = SUNNonlinSol_FixedPointSens((int)L->np, L->y, 0, L->ctx);
            if (L->NLSsens == NULL)
                return OT_ERR_NOMEM;
            f = CVodeSetNonlinearSolverSensStg(cv, L->NLSsens);
        }
    }
    if (f == CV_MEM_FAIL)
        return OT_ERR_NOMEM;
    return f ? OT_ERR_SOLVER : OT_OK;
}

static int make_solver(ot__lockstep *L, const ot__plan *pl)
{
    memset(L, 0, sizeof *L);
    L->plan = pl;
    L->n = pl->n;
    L->nb = pl->nbatch;
    L->np = pl->np;
    L->rows = pl->rows;
    const size_t n = (size_t)L->n, nb = (size_t)L->nb, np = (size_t)L->np;
    const size_t rows = (size_t)L->rows, nr = (size_t)pl->ode->nroots;
    L->p = malloc((np * nb + 1) * sizeof *L->p);
    L->pp = malloc((np * nb + 1) * sizeof *L->pp);
    L->o = malloc(rows * nb * sizeof *L->o);
    L->o2 = malloc(rows * nb * sizeof *L->o2);
    L->yp = malloc(n * nb * sizeof *L->yp);
    L->ym = malloc(n * nb * sizeof *L->ym);
    L->inc = malloc(nb * sizeof *L->inc);
    L->stopped = calloc(nb, 1);
    L->rootsfound = malloc((nr * nb + 1) * sizeof *L->rootsfound);
    if (!L->p || !L->pp || !L->o || !L->o2 || !L->yp || !L->ym || !L->inc ||
        !L->stopped || !L->rootsfound || SUNContext_Create(NULL, &L->ctx) != 0)
        return OT_ERR_NOMEM;
    for (int64_t b = 0; b < L->nb && np > 0; b++)
        memcpy(L->p + b * L->np, ot_view_lane(pl->p, b), np * sizeof *L->p);
    L->y = ot__lane_vector_new(L->n, L->nb, plain_norm, L->ctx);
    L->yout = L->y ? N_VClone(L->y) : NULL;
    L->ewt = L->yout ? N_VClone(L->y) : NULL;
    if (L->ewt == NULL)
        return OT_ERR_NOMEM;
    if (pl->kind == OT__SENS && (L->yS = N_VCloneVectorArray((int)np, L->y)) == NULL)
        return OT_ERR_NOMEM;
    int st = initial_state(L);
    if (st != OT_OK)
        return st;
    L->cv = CVodeCreate(pl->ode->method == OT_BDF ? CV_BDF : CV_ADAMS, L->ctx);
    return L->cv ? configure(L) : OT_ERR_NOMEM;
}

/* ---- Results -------------------------------------------------------------- */

/* Every running lane fails with the same status: the batch stopped. why:
 * the cause, or NULL for the callback's and CVODE's last messages. */
static void fail_batch(ot__lockstep *L, ot_solution *sol, int status, double t,
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

/* Lanes whose root fired at t stop there; their count is `count`. */
static void take_roots(ot__lockstep *L, ot_solution *sol, double t, int64_t count)
{
    const int64_t nr = L->plan->ode->nroots;
    if (CVodeGetRootInfo(L->cv, L->rootsfound) != CV_SUCCESS)
        return;
    for (int64_t b = 0; b < L->nb; b++)
        for (int64_t r = 0; r < nr && !L->stopped[b]; r++)
            if (L->rootsfound[b * nr + r] != 0) {
                L->stopped[b] = 1;
                sol->root_index[b] = (int)r;
                sol->root_time[b] = t;
                sol->count[b] = count;
                sol->stats[b].final_time = t;
            }
}

static int all_stopped(const ot__lockstep *L)
{
    for (int64_t b = 0; b < L->nb; b++)
        if (!L->stopped[b])
            return 0;
    return 1;
}

/* The recorded rows for all lanes at (t, y): y itself or the out function's. */
static const double *rows_at(ot__lockstep *L, double t, const double *y, int *st)
{
    const ot_ode *ode = L->plan->ode;
    *st = OT_OK;
    if (!ode->out)
        return y;
    int rc = ode->out(t, ot__ls_view(y, L->n, L->nb), ot__ls_view(L->p, L->np, L->nb),
                      ot__ls_mut(L->o, L->rows, L->nb), ode->user);
    if (rc != 0) {
        snprintf(L->cb_msg, sizeof L->cb_msg, "out returned %d at t = %g", rc, t);
        L->cb_failed = 1;
        *st = OT_ERR_CALLBACK;
    }
    return L->o;
}

/* Output sensitivity j for all lanes into L->o2 (central differences of out
 * along (s_j, e_j)). */
static int out_sens(ot__lockstep *L, double t, const double *y, const double *s,
                    int64_t j)
{
    const ot_ode *ode = L->plan->ode;
    const int64_t n = L->n, nb = L->nb, np = L->np;
    memcpy(L->pp, L->p, (size_t)(np * nb) * sizeof *L->pp);
    for (int64_t b = 0; b < nb; b++) {
        const double h = ot__ls_fd_step(L->p[b * np + j]);
        for (int64_t i = b * n; i < (b + 1) * n; i++) {
            L->yp[i] = y[i] + h * s[i];
            L->ym[i] = y[i] - h * s[i];
        }
        L->pp[b * np + j] += h;
    }
    int rc = ode->out(t, ot__ls_view(L->yp, n, nb), ot__ls_view(L->pp, np, nb),
                      ot__ls_mut(L->o2, L->rows, nb), ode->user);
    for (int64_t b = 0; b < nb; b++)
        L->pp[b * np + j] = L->p[b * np + j] - ot__ls_fd_step(L->p[b * np + j]);
    if (rc == 0)
        rc = ode->out(t, ot__ls_view(L->ym, n, nb), ot__ls_view(L->pp, np, nb),
                      ot__ls_mut(L->o, L->rows, nb), ode->user);
    if (rc != 0) {
        snprintf(L->cb_msg, sizeof L->cb_msg, "out returned %d at t = %g", rc, t);
        L->cb_failed = 1;
        return OT_ERR_CALLBACK;
    }
    for (int64_t b = 0; b < nb; b++) {
        const double h2 = 2 * ot__ls_fd_step(L->p[b * np + j]);
        for (int64_t r = b * L->rows; r < (b + 1) * L->rows; r++)
            L->o2[r] = (L->o2[r] - L->o[r]) / h2;
    }
    return OT_OK;
}

/* Stores output i for every running lane from state y. */
static int emit_dense(ot__lockstep *L, ot_solution *sol, int64_t i, double t,
                      const double *y)
{
    int st;
    const double *rows = rows_at(L, t, y, &st);
    if (st != OT_OK)
        return st;
    for (int64_t b = 0; b < L->nb; b++)
        if (!L->stopped[b])
            ot__out_store(sol->ys, i, b, rows + b * L->rows, L->rows);
    for (int64_t j = 0; L->plan->kind == OT__SENS && j < L->np; j++) {
        const double *s = N_VGetArrayPointer(L->yS[j]);
        if (L->plan->ode->out) {
            if ((st = out_sens(L, t, y, s, j)) != OT_OK)
                return st;
            s = L->o2;
        }
        for (int64_t b = 0; b < L->nb; b++)
            if (!L->stopped[b])
                ot__out_store(sol->sens[j], i, b, s + b * L->rows, L->rows);
    }
    for (int64_t b = 0; b < L->nb; b++)
        if (!L->stopped[b]) {
            sol->count[b] = i + 1;
            sol->stats[b].final_time = t;
        }
    return OT_OK;
}

/* ---- The loops ------------------------------------------------------------ */

/* NaN past each lane's count: after its root, failure, or the batch's. */
static void nan_after_counts(const ot__lockstep *L, ot_solution *sol)
{
    const ot__plan *pl = L->plan;
    for (int64_t b = 0; b < L->nb; b++)
        for (int64_t k = sol->count[b]; k < pl->nt; k++) {
            ot__out_nan(sol->ys, k, b, pl->rows);
            for (int64_t j = 0; pl->kind == OT__SENS && j < pl->np; j++)
                ot__out_nan(sol->sens[j], k, b, pl->rows);
        }
}

static void solve_dense(ot__lockstep *L, ot_solution *sol)
{
    const ot__plan *pl = L->plan;
    int64_t i = 0;
    for (; i < pl->nt && !all_stopped(L); i++) {
        const double tout = pl->t[i];
        const double *y = N_VGetArrayPointer(L->y);
        if (tout != pl->t0) {
            double tret = pl->t0;
            int flag;
            while ((flag = CVode(L->cv, tout, L->yout, &tret, CV_NORMAL)) ==
                   CV_ROOT_RETURN) {
                take_roots(L, sol, tret, i);
                if (all_stopped(L))
                    break;
            }
            if (all_stopped(L))
                break;
            if (flag >= 0 && pl->kind == OT__SENS)
                flag = CVodeGetSens(L->cv, &tret, L->yS);
            if (flag < 0) {
                double tcur = pl->t0;
                CVodeGetCurrentTime(L->cv, &tcur);
                fail_batch(L, sol, OT_ERR_SOLVER, tcur, NULL);
                break;
            }
            y = N_VGetArrayPointer(L->yout);
        }
        if (emit_dense(L, sol, i, tout, y) != OT_OK) {
            fail_batch(L, sol, OT_ERR_CALLBACK, tout, L->cb_msg);
            break;
        }
    }
    nan_after_counts(L, sol);
}

/* Growable record of the batch's steps: times and [rows, nb] per step. */
typedef struct {
    double *t, *y;
    int64_t cap;
} record;

static int record_step(ot__lockstep *L, record *r, int64_t k, double t, const double *y)
{
    const int64_t block = L->rows * L->nb;
    if (k == r->cap) {
        const int64_t cap = r->cap ? 2 * r->cap : 64;
        double *nt = realloc(r->t, (size_t)cap * sizeof *nt);
        if (nt)
            r->t = nt;
        double *ny = nt ? realloc(r->y, (size_t)(cap * block) * sizeof *ny) : NULL;
        if (ny == NULL) {
            snprintf(L->cb_msg, sizeof L->cb_msg, "cannot grow the step record");
            return OT_ERR_NOMEM;
        }
        r->y = ny;
        r->cap = cap;
    }
    int st;
    const double *rows = rows_at(L, t, y, &st);
    if (st != OT_OK)
        return st;
    r->t[k] = t;
    memcpy(r->y + k * block, rows, (size_t)block * sizeof *rows);
    return OT_OK;
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
        sk->lane_ts[b] = malloc((size_t)(c > 0 ? c : 1) * sizeof(double));
        sk->lane_ys[b] = malloc((size_t)((c > 0 ? c : 1) * L->rows) * sizeof(double) + 1);
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
    int st = record_step(L, &r, k, t, N_VGetArrayPointer(L->y));
    if (st != OT_OK)
        fail_batch(L, sol, st, t, L->cb_msg);
    else
        advance_counts(L, sol, ++k, t);
    CVodeSetStopTime(L->cv, pl->t_final);
    while (!all_stopped(L) && t < pl->t_final) {
        if (k > pl->step_limit) {
            char why[128];
            snprintf(why, sizeof why, "more than max_steps = %lld steps",
                     (long long)pl->step_limit);
            fail_batch(L, sol, OT_ERR_SOLVER, t, why);
            break;
        }
        const int flag = CVode(L->cv, pl->t_final, L->yout, &t, CV_ONE_STEP);
        if (flag < 0) {
            fail_batch(L, sol, OT_ERR_SOLVER, t, NULL);
            break;
        }
        if ((st = record_step(L, &r, k, t, N_VGetArrayPointer(L->yout))) != OT_OK) {
            fail_batch(L, sol, st, t, L->cb_msg);
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

int ot__lockstep_run(const ot__plan *pl, const ot__sink *sk)
{
    ot__lockstep L;
    ot_solution *sol = sk->sol;
    int st = make_solver(&L, pl);
    if (st == OT_ERR_CALLBACK) {
        /* init failed: every lane fails; the call itself goes on. */
        char msg[300];
        snprintf(msg, sizeof msg, "lockstep batch stopped before t0: %s", L.cb_msg);
        for (int64_t b = 0; b < L.nb; b++) {
            ot__solution_fail_lane(sol, b, OT_ERR_CALLBACK, msg);
            sol->stats[b].final_time = pl->t0;
        }
        if (pl->kind != OT__STEPS)
            nan_after_counts(&L, sol);
        st = OT_OK;
    } else if (st != OT_OK) {
        st = st == OT_ERR_NOMEM
                 ? ot__fail(st,
                            "solve: cannot allocate the lockstep solver for %lld lanes",
                            (long long)pl->nbatch)
                 : ot__fail(st, "solve: CVODE setup failed: %s", L.cv_msg);
    } else {
        if (pl->kind == OT__STEPS)
            solve_steps(&L, sk);
        else
            solve_dense(&L, sol);
        batch_stats(&L, sol);
        if (pl->ode->progress)
            pl->ode->progress(pl->nbatch, pl->nbatch, pl->ode->progress_user);
    }
    free_solver(&L);
    return st;
}

/* Lockstep mode: a block as the run loop's unit (run/unit.h), and the
 * block's entry. One CVODE(S) or ARKStep runs over a vector of length
 * n * nbatch laid out [n, nbatch]. A lane that fails (alone.c, and blame
 * below) or stops at a root leaves the block and stands still (zero
 * derivative) while the others go on; only a failure no lane explains
 * stops the whole batch. The backend (cpu.c, or src/cuda/)
 * owns the vectors, the linear algebra, the callbacks and the data movement
 * into the outputs; solve.c pads and gathers them. */
#include <cvodes/cvodes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "lockstep/lockstep.h"
#include "run/unit.h"
#include "kit/advance.h"
#include "kit/cv_setup.h"
#include "kit/integ.h"
#include "kit/nv_clone.h"
#include "kit/progress.h"

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

/* ---- The block as a unit of the run loop ------------------------------------ */

static N_Vector target(ot__unit *u, int64_t i)
{
    (void)i;
    return ((ot__lockstep *)u->mode)->yout;
}

static N_Vector restart_state(ot__unit *u, N_Vector dst)
{
    (void)dst;
    return ((ot__lockstep *)u->mode)->y_restart;
}

static int sens_at(ot__unit *u, double t)
{
    ot__lockstep *L = u->mode;
    return CVodeGetSensDky(L->ig.mem, t, 0, L->yS);
}

static double *sens_state(ot__unit *u, int64_t j)
{
    return N_VGetArrayPointer(((ot__lockstep *)u->mode)->yS[j]);
}

static double *host_state(ot__unit *u, N_Vector y)
{
    ot__lockstep *L = u->mode;
    return L->be->host_state ? L->be->host_state(L, y) : NULL;
}

/* From a copy of host in L->yr (made at the first restart), which keeps
 * the restart state while yout takes the next outputs: resume needs it when
 * the integrator fails before its first step from there. L->y, the state
 * at t0, is the integrator's own and never written. */
static int reinit(ot__unit *u, double t, double *host)
{
    ot__lockstep *L = u->mode;
    if (L->yr == NULL && (L->yr = ot__nv_clone(L->y)) == NULL)
        return CV_MEM_FAIL;
    memcpy(N_VGetArrayPointer(L->yr), host, (size_t)(L->n * L->nbatch) * sizeof *host);
    L->y_restart = L->yr;
    const int flag = ot__ig_reinit(&L->ig, t, L->yr);
    return flag != CV_SUCCESS || L->plan->kind != OT__SENS
               ? flag
               : CVodeSensReInit(L->ig.mem, CV_STAGGERED, L->yS); /* jumped in place */
}

/* What the block's steps owed to each lane, from the last output (or the
 * adjoint's backward segment) on. */
static void forget_blame(ot__lockstep *L)
{
    ot__lane_blame *const records[2] = {&L->blame, &L->back};
    for (int k = 0; k < 2; k++) {
        records[k]->last = -1;
        if (records[k]->count)
            memset(records[k]->count, 0, (size_t)L->nbatch * sizeof *records[k]->count);
    }
    if (L->retries)
        memset(L->retries, 0, (size_t)L->nbatch * sizeof *L->retries);
}

static void forget(ot__unit *u) { forget_blame(u->mode); }

static int emit(ot__unit *u, double t, N_Vector y)
{
    ot__lockstep *L = u->mode;
    forget_blame(L);
    return L->be->emit(L, u->sink->sol, t, y);
}

/* The lane a failed step was for: one that kept asking for smaller steps
 * (a callback's > 0), else for too much work the lane whose error the
 * steps waited for most often since the last output, else the lane of the
 * failing test's norm. Not when a callback stopped the block or the solve
 * was cancelled: those are the block's. The norms are the backward
 * problem's once it has taken one (the adjoint's, since its segment
 * began; CVODES' forward re-runs in between are not its steps). */
static int64_t blame(ot__unit *u, int flag, const char *what, int *status, char *msg,
                     size_t len)
{
    ot__lockstep *L = u->mode;
    const ot__lane_blame *rec = L->back.count && L->back.last >= 0 ? &L->back : &L->blame;
    /* A time too coarse for the steps is every lane's (advance.h). */
    if (L->blame.count == NULL || ot__cb_stopped(&L->cb) ||
        flag == OT__IG_TIME_RESOLUTION)
        return -1;
    int64_t b = -1, most = 0;
    /* A lane whose NaN/Inf made the integrator give up (still recoverable
     * when it did). */
    const int64_t named = L->cb.failed ? L->cb.lane - L->lane0 : -1;
    if (named >= 0 && named < L->nbatch && !L->stopped[named])
        b = named;
    for (int64_t k = 0; b < 0 && L->retries && k < L->nbatch; k++)
        if (!L->stopped[k] && L->retries[k] > most) {
            most = L->retries[k];
            b = k;
        }
    if (b < 0 && flag != CV_TOO_MUCH_WORK && rec->last >= 0 && !L->stopped[rec->last])
        b = rec->last;
    int64_t busiest = -1;
    for (int64_t k = 0; b < 0 && k < L->nbatch; k++)
        if (!L->stopped[k] && (busiest < 0 || rec->count[k] > rec->count[busiest]))
            busiest = k;
    b = b < 0 ? busiest : b;
    if (b < 0)
        return -1;
    if (most > 0) { /* its own retries: the callback's cause, as in lanes mode */
        *status = OT_ERR_CALLBACK;
        snprintf(msg, len, "%s (lane %lld asked for smaller steps %lld times); then %s",
                 L->cb.msg, (long long)(L->lane0 + b), (long long)most, L->cb.cv_msg);
    } else if (named >= 0) { /* the callback's cause, as in lanes mode */
        *status = OT_ERR_SOLVER;
        ot__cb_cause(&L->cb, status, what, msg, len);
    } else {
        *status = OT_ERR_SOLVER;
        snprintf(msg, len,
                 "%s (its error set the block's steps; the block went on "
                 "without it)",
                 what);
    }
    ot__cb_reset(&L->cb);
    forget_blame(L);
    return b;
}

/* From the last good step at t: the state (and sensitivities) there; with
 * no step since the last restart, the restart state itself (the
 * integrator's interpolation has no step to work from). */
static int resume(ot__unit *u, double t)
{
    ot__lockstep *L = u->mode;
    const int fresh = t == u->t_restart;
    int flag = fresh ? 0 : ot__ig_dky(&L->ig, t, L->yout);
    if (!flag && !fresh && L->plan->kind == OT__SENS)
        flag = CVodeGetSensDky(L->ig.mem, t, 0, L->yS);
    N_Vector from = fresh ? L->y_restart : L->yout;
    flag = flag ? flag : ot__ig_reinit(&L->ig, t, from);
    if (!flag && L->plan->kind == OT__SENS)
        flag = CVodeSensReInit(L->ig.mem, CV_STAGGERED, L->yS);
    L->y_restart = from;
    return flag;
}

static int rows(ot__unit *u, double t, N_Vector y, double *dst)
{
    ot__lockstep *L = u->mode;
    return L->be->host_rows(L, t, y, dst);
}

static void stopped_changed(ot__unit *u)
{
    ot__lockstep *L = u->mode;
    if (L->be->stopped_changed)
        L->be->stopped_changed(L);
}

/* Every lane shares the batch's counters; the Jacobian's rhs calls are our
 * difference quotients'. */
static void stats(ot__unit *u)
{
    ot__lockstep *L = u->mode;
    ot_solution *sol = u->sink->sol;
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

static void fail(ot__unit *u, int status, double t, const char *what, int solver)
{
    (void)solver;
    ot__lockstep_fail_batch(u->mode, u->sink->sol, status, t, what);
}

static const ot__unit_ops block_ops = {
    .target = target,
    .restart_state = restart_state,
    .sens_at = sens_at,
    .sens_state = sens_state,
    .host_state = host_state,
    .reinit = reinit,
    .emit = emit,
    .rows = rows,
    .stopped_changed = stopped_changed,
    .stats = stats,
    .fail = fail,
    .blame = blame,
    .resume = resume,
    .forget = forget,
};

/* The block as the run loop's unit, its arrays in L (freed with it).
 * @return OT_OK or OT_ERR_NOMEM. */
static int block_unit(ot__lockstep *L, const ot__sink *sk)
{
    const ot__plan *pl = L->plan;
    const size_t nb = (size_t)L->nbatch;
    L->at = OT__MALLOC(nb * sizeof *L->at);
    L->next = OT__MALLOC(nb * sizeof *L->next);
    L->knext = OT__MALLOC(nb * sizeof *L->knext);
    if (pl->kind == OT__STEPS)
        L->scratch = OT__MALLOC((size_t)L->n * nb * sizeof *L->scratch);
    if (!L->at || !L->next || !L->knext || (pl->kind == OT__STEPS && !L->scratch))
        return OT_ERR_NOMEM;
    for (size_t b = 0; b < nb; b++) {
        L->at[b] = -1;
        sk->sol->stats[L->lane0 + (int64_t)b].final_time = pl->t0;
    }
    forget_blame(L);
    ot__record *r = pl->kind == OT__STEPS ? &sk->records[L->lane0 / pl->block] : NULL;
    if (r)
        r->width = L->rows * L->nbatch;
    L->y_restart = L->y;
    const int64_t nfailed = L->unit.nfailed; /* in setup (init) */
    ot__unit *u = &L->unit;
    ot__run_unit_init(u, &block_ops, L, pl, sk, &L->ig, &L->cb, L->lane0, L->nbatch,
                      L->LS != NULL);
    u->report = 1;
    ot__run_unit_arrays(u, L->stopped, L->rootsfound, L->p, L->at, L->next, L->knext,
                        L->scratch, &L->before, r);
    u->nfailed = nfailed;
    return OT_OK;
}

/* ---- Entry ---------------------------------------------------------------- */

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
    if (setup_st == OT_OK && block_unit(L, sk) != OT_OK)
        setup_st = OT_ERR_NOMEM;
    if (setup_st != OT_OK)
        ot__progress_add(pl->prog, L->nbatch * OT__PROGRESS_ONE - L->unit.reported);
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
        ot__run_steps(&L->unit);
    else
        ot__run_dense(&L->unit);
    ot__progress_add(pl->prog, L->nbatch * OT__PROGRESS_ONE - L->unit.reported);
    return OT_OK;
}

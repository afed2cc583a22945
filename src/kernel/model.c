/* A compiled model's solve (odetensor/kernel.h, kernel_model.inc): the
 * lane loop the model's build compiled, on the CPU KM_CHUNK lanes a pool
 * unit (the loop steps OT_KM_WIDTH of them at once), or on the CUDA device
 * every lane at once; then the lanes' outputs,
 * statistics and failures into the solution as the lane groups put them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "kernel/kernel.h"
#include "kit/pool.h"
#include "solution/solution_impl.h"

/* Lanes [0, cap) of a job, compact. */
typedef struct {
    ot_kernel_job job;
    double *t0, *times, *y0, *p, *ys, *row;
    int64_t *nt;
    ot_kernel_lane_result *res;
    int64_t cap;
} kjob;

static void kjob_free(kjob *j)
{
    if (j == NULL)
        return;
    OT__FREE_ALL(j->t0, j->times, j->y0, j->p, j->ys, j->row, j->nt, j->res);
    free(j);
}

static size_t bytes(int64_t count, size_t size)
{
    return (size_t)(count > 0 ? count : 1) * size;
}

/* A job for cap lanes of plan (ownership: the caller's, kjob_free). */
static kjob *kjob_new(const ot__plan *pl, int64_t cap)
{
    kjob *j = OT__CALLOC(1, sizeof *j);
    if (j == NULL)
        return NULL;
    const int64_t n = pl->n, nt = pl->nt;
    j->cap = cap;
    int ok = (j->t0 = OT__MALLOC(bytes(cap, sizeof(double)))) != NULL;
    ok &= (j->times = OT__MALLOC(bytes(nt * cap, sizeof(double)))) != NULL;
    ok &= (j->y0 = OT__MALLOC(bytes(n * cap, sizeof(double)))) != NULL;
    ok &= (j->p = OT__MALLOC(bytes(pl->np * cap, sizeof(double)))) != NULL;
    ok &= (j->ys = OT__MALLOC(bytes(n * nt * cap, sizeof(double)))) != NULL;
    ok &= (j->row = OT__MALLOC(bytes(pl->rows, sizeof(double)))) != NULL;
    ok &= (j->nt = OT__MALLOC(bytes(cap, sizeof(int64_t)))) != NULL;
    ok &= (j->res = OT__CALLOC((size_t)(cap > 0 ? cap : 1), sizeof *j->res)) != NULL;
    if (!ok) {
        kjob_free(j);
        return NULL;
    }
    const ot_ode *ode = pl->ode;
    const ot__ros_table *ros = NULL;
    const ot__erk_table *erk = NULL;
    ot__kernel_tables(ode->method, &ros, &erk);
    const ot_kernel_job job = {OT_KERNEL_ABI,
                               n,
                               pl->np,
                               0,
                               ros,
                               erk,
                               ode->rtol,
                               ode->atol,
                               ode->atol_vec,
                               ode->h0,
                               ode->hmax,
                               ode->max_steps,
                               ode->autonomous,
                               (int)ode->device.id,
                               j->t0,
                               j->times,
                               j->nt,
                               nt,
                               j->y0,
                               j->p,
                               j->ys,
                               j->res};
    j->job = job;
    return j;
}

/* Lane b into slot c of j: its start, times and inputs. @return 0, or 1
 * when it failed already (by its inputs, solve.c; or its init, here). */
static int pack(kjob *j, const ot__plan *pl, const ot__sink *sink, int64_t c, int64_t b)
{
    const int64_t n = pl->n, nt = pl->nt;
    j->t0[c] = ot__plan_t0(pl, b);
    j->nt[c] = ot__plan_nt(pl, b);
    memcpy(j->times + c * nt, ot__plan_times(pl, b), (size_t)nt * sizeof(double));
    memset(j->y0 + c * n, 0, (size_t)n * sizeof(double));
    memset(j->p + c * pl->np, 0, (size_t)pl->np * sizeof(double));
    if (pl->bad && pl->bad[b])
        return 1;
    ot__cb cb;
    ot__cb_reset(&cb);
    if (ot__kernel_lane_inputs(pl, &cb, b, j->p + c * pl->np, j->y0 + c * n) != OT_OK) {
        ot__solution_fail_lane(sink->sol, b, OT_ERR_CALLBACK,
                               cb.msg[0] ? cb.msg : "init failed");
        return 1;
    }
    return 0;
}

/* Slot c's result into lane b of the solution: its outputs (through the
 * out function, if any), count, statistics and failure. */
static void unpack(const kjob *j, const ot__plan *pl, const ot__sink *sink, int64_t c,
                   int64_t b)
{
    const ot_ode *ode = pl->ode;
    const ot_kernel_lane_result *r = &j->res[c];
    const int64_t n = pl->n;
    ot_lane_stats st;
    memset(&st, 0, sizeof st);
    st.steps = r->steps;
    st.rhs_evals = r->rhs_evals;
    st.jac_rhs_evals = r->jac_rhs_evals;
    st.jac_evals = r->jac_evals;
    st.lin_setups = r->lin_setups;
    st.err_test_fails = r->err_test_fails;
    st.final_time = r->t;
    sink->sol->stats[b] = st;
    ot__cb cb;
    ot__cb_reset(&cb);
    const double *times = j->times + c * pl->nt;
    for (int64_t i = 0; i < r->count; i++) {
        const int s =
            ot__kernel_store(pl, sink, &cb, b, i, times[i], j->ys + (c * pl->nt + i) * n,
                             j->p + c * pl->np, j->row);
        if (s != OT_OK) {
            ot__solution_fail_lane(sink->sol, b, s, cb.msg[0] ? cb.msg : "out failed");
            return;
        }
    }
    if (r->status == OT_KERNEL_LANE_OK)
        return;
    const ot_kernel_ros_table *ros = j->job.ros;
    const char *method = ros ? ros->name : j->job.erk->name;
    char msg[300];
    int s = OT_ERR_CALLBACK;
    if (r->status == OT_KERNEL_LANE_CALLBACK)
        snprintf(
            msg, sizeof msg,
            "the compiled model %s's rhs or jac returned < 0 (or failed at the lane's "
            "own state) at t = %.17g",
            ode->kmodel->name, r->t);
    else if (r->status == OT_KERNEL_LANE_NAN)
        snprintf(
            msg, sizeof msg,
            "the compiled model %s's rhs or jac wrote NaN or Inf more than %d times; "
            "the last at or after t = %.17g",
            ode->kmodel->name, OT_KERNEL_NAN_RETRIES, r->t);
    else
        s = ot__kernel_fail_message(ode, method, r->status, r->t, r->h, msg, sizeof msg);
    ot__solution_fail_lane(sink->sol, b, s, msg);
}

/* A pool thread's state: its one-lane job, and the plan and sink. */
typedef struct {
    kjob *j;
    const ot__plan *pl;
    const ot__sink *sink;
} worker;

/* Lanes a pool unit hands the model's host loop at once (which steps
 * OT_KM_WIDTH of them together). */
enum { KM_CHUNK = 64 };

static int64_t solve_unit(void *state, int64_t u)
{
    worker *w = state;
    const ot__plan *pl = w->pl;
    const int64_t b0 = u * KM_CHUNK,
                  m = pl->nbatch - b0 < KM_CHUNK ? pl->nbatch - b0 : KM_CHUNK;
    /* The lanes that start (not failed by their inputs or init), compact. */
    int64_t c = 0, lanes[KM_CHUNK];
    for (int64_t b = b0; b < b0 + m; b++) {
        if (pack(w->j, pl, w->sink, c, b) != 0) {
            w->sink->sol->stats[b].final_time = w->j->t0[c];
            continue;
        }
        lanes[c++] = b;
    }
    w->j->job.nlanes = c;
    if (c > 0)
        pl->ode->kmodel->host(&w->j->job, 0, c);
    for (int64_t i = 0; i < c; i++)
        unpack(w->j, pl, w->sink, i, lanes[i]);
    return m;
}

int ot__kmodel_run(const ot__plan *pl, const ot__sink *sink)
{
    const int nthreads = (int)pl->threads;
    worker *w = OT__CALLOC((size_t)nthreads, sizeof *w);
    void **states = OT__CALLOC((size_t)nthreads, sizeof *states);
    int st = w && states ? OT_OK : OT_ERR_NOMEM;
    for (int i = 0; st == OT_OK && i < nthreads; i++) {
        w[i].pl = pl;
        w[i].sink = sink;
        if ((w[i].j = kjob_new(pl, KM_CHUNK)) == NULL)
            st = OT_ERR_NOMEM;
        states[i] = &w[i];
    }
    if (st == OT_OK)
        ot__pool_run(pl, nthreads, (pl->nbatch + KM_CHUNK - 1) / KM_CHUNK,
                     (void *const *)states, solve_unit);
    else
        ot__fail(OT_ERR_NOMEM, "solve: cannot allocate %d lanes' work", nthreads);
    for (int i = 0; w && i < nthreads; i++)
        kjob_free(w[i].j);
    free(w);
    free(states);
    return st;
}

int ot__kmodel_run_cuda(const ot__plan *pl, const ot__sink *sink)
{
    const ot_kernel_model *m = pl->ode->kmodel;
    kjob *j = kjob_new(pl, pl->nbatch);
    if (j == NULL)
        return ot__fail(OT_ERR_NOMEM,
                        "solve: cannot allocate the host copy of %lld lanes for CUDA",
                        (long long)pl->nbatch);
    for (int64_t b = 0; b < pl->nbatch; b++)
        pack(j, pl, sink, b, b);
    j->job.nlanes = pl->nbatch;
    char msg[256] = "";
    const int rc = m->cuda(&j->job, msg, sizeof msg);
    int st = OT_OK;
    if (rc != 0) {
        st =
            ot__fail(OT_ERR_NO_CUDA,
                     "solve: the CUDA run of compiled model %s failed: %s", m->name, msg);
    } else {
        for (int64_t b = 0; b < pl->nbatch; b++) {
            if (pl->bad && pl->bad[b])
                continue;
            if (sink->sol->status[b] != OT_OK) /* its init failed */
                continue;
            unpack(j, pl, sink, b, b);
        }
    }
    kjob_free(j);
    return st;
}

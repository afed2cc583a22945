/* Lanes mode driver: checks the request, allocates the outputs, deals lanes
 * to worker threads (one CVODE instance each) and gathers the results. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "cuda/backend.h"
#include "lockstep/lockstep_impl.h"
#include "solve/solve.h"
#include "tensor/tensor_impl.h"

typedef struct {
    const ot__plan *plan;
    const ot__sink *sink;
    atomic_llong next; /* the next lane to hand out */
    pthread_mutex_t progress_lock;
    int64_t done;
} pool;

typedef struct {
    pool *pool;
    ot__worker *worker;
} job;

/* Lanes are handed out one at a time: they differ in cost, and a lane's
 * result does not depend on which worker solves it. */
static void *run_worker(void *arg)
{
    job *jb = arg;
    pool *p = jb->pool;
    const ot_ode *ode = p->plan->ode;
    for (;;) {
        const int64_t b = atomic_fetch_add(&p->next, 1);
        if (b >= p->plan->nbatch)
            break;
        ot__worker_solve_lane(jb->worker, b, p->sink);
        if (ode->progress) {
            pthread_mutex_lock(&p->progress_lock);
            ode->progress(++p->done, p->plan->nbatch, ode->progress_user);
            pthread_mutex_unlock(&p->progress_lock);
        }
    }
    return NULL;
}

static int thread_count(const ot__plan *pl)
{
    int64_t t = pl->ode->threads;
    if (t <= 0) {
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        t = cores > 0 ? cores : 1;
    }
    return (int)(t < pl->nbatch ? t : pl->nbatch);
}

/* Solves every lane of plan into sink. Workers are made up front in this
 * thread, so a failure to make one fails the call before any lane runs. */
static int run_lanes(const ot__plan *pl, const ot__sink *sink)
{
    const int nthreads = thread_count(pl);
    ot__worker **workers = OT__CALLOC((size_t)nthreads, sizeof *workers);
    job *jobs = OT__CALLOC((size_t)nthreads, sizeof *jobs);
    pthread_t *tids = OT__CALLOC((size_t)nthreads, sizeof *tids);
    int st = workers && jobs && tids ? OT_OK
                                     : ot__fail(OT_ERR_NOMEM,
                                                "solve: cannot allocate %d "
                                                "workers",
                                                nthreads);
    for (int i = 0; st == OT_OK && i < nthreads; i++)
        st = ot__worker_new(&workers[i], pl);
    if (st == OT_OK) {
        pool p;
        p.plan = pl;
        p.sink = sink;
        atomic_init(&p.next, 0);
        p.done = 0;
        pthread_mutex_init(&p.progress_lock, NULL);
        /* Thread 0 is this thread; a thread that cannot start leaves its
         * share to the others. */
        int started = 0;
        for (int i = 0; i < nthreads; i++) {
            jobs[i].pool = &p;
            jobs[i].worker = workers[i];
        }
        for (int i = 1; i < nthreads; i++)
            if (OT__SUN_CALL(pthread_create(&tids[i], NULL, run_worker, &jobs[i]),
                             EAGAIN) == 0)
                tids[started++] = tids[i];
        run_worker(&jobs[0]);
        for (int i = 0; i < started; i++)
            pthread_join(tids[i], NULL);
        pthread_mutex_destroy(&p.progress_lock);
    }
    for (int i = 0; workers && i < nthreads; i++)
        ot__worker_free(workers[i]);
    free(workers);
    free(jobs);
    free(tids);
    return st;
}

static int dispatch(const ot__plan *pl, const ot__sink *sink)
{
    if (pl->ode->device.type == OT_CUDA)
        return ot__cuda_lockstep_run(pl, sink);
    return pl->ode->mode == OT_LOCKSTEP ? ot__lockstep_run(pl, sink)
                                        : run_lanes(pl, sink);
}

static int finish(ot_solution *sol, ot_solution **out)
{
    *out = sol;
    const int64_t failed = ot_solution_nfailed(sol);
    if (failed == 0)
        return OT_OK;
    for (int64_t b = 0; b < sol->nbatch; b++)
        if (sol->status[b] != OT_OK)
            return ot__fail(OT_ERR_LANES_FAILED,
                            "%lld of %lld lanes failed; lane %lld: %s", (long long)failed,
                            (long long)sol->nbatch, (long long)b,
                            ot_solution_lane_message(sol, b));
    return OT_ERR_LANES_FAILED;
}

static int solve_at_times(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                          ot__kind kind, ot_solution **out)
{
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "out: NULL");
    ot__plan pl;
    ot_solution *sol = NULL;
    int st = ot__plan_make(&pl, ode, y0, params, t_eval, 0, kind);
    const int64_t nsens = kind == OT__SENS ? pl.np : 0;
    if (st == OT_OK)
        st = ot__solution_new(&sol, pl.nbatch, nsens, ode->nroots > 0);
    const int64_t shape[3] = {pl.rows, pl.nt, pl.nbatch};
    /* Outputs kept on a CUDA device are allocated there by the backend. */
    const int host_out = !(ode && ode->device.type == OT_CUDA && ode->outputs_on_device);
    if (st == OT_OK && host_out)
        st = ot__tensor_alloc(&sol->ys, (ot_dtype)ode->out_dtype, 3, shape, "ys");
    for (int64_t j = 0; st == OT_OK && host_out && j < nsens; j++)
        st = ot__tensor_alloc(&sol->sens[j], (ot_dtype)ode->out_dtype, 3, shape, "sens");
    if (st == OT_OK)
        st = ot__tensor_alloc(&sol->ts, OT_F64, 1, &pl.nt, "ts");
    if (st == OT_OK) {
        memcpy(ot_tensor_layout(sol->ts)->data, pl.t, (size_t)pl.nt * sizeof(double));
        ot__sink sink = {sol, NULL, NULL};
        st = dispatch(&pl, &sink);
    }
    ot__plan_free(&pl);
    if (st != OT_OK) {
        ot_solution_free(sol);
        return st;
    }
    return finish(sol, out);
}

int ot_solve_dense(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                   ot_solution **out)
{
    return solve_at_times(ode, y0, params, t_eval, OT__DENSE, out);
}

int ot_solve_fwd_sens(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                      ot_solution **out)
{
    return solve_at_times(ode, y0, params, t_eval, OT__SENS, out);
}

/* Copies the per-lane step records into NaN-padded [nt_max, nbatch] times and
 * [rows, nt_max, nbatch] outputs. */
static int gather_steps(const ot__plan *pl, ot__sink *sk)
{
    ot_solution *sol = sk->sol;
    int64_t nt_max = 1;
    for (int64_t b = 0; b < pl->nbatch; b++)
        if (sol->count[b] > nt_max)
            nt_max = sol->count[b];
    const int64_t tshape[2] = {nt_max, pl->nbatch},
                  yshape[3] = {pl->rows, nt_max, pl->nbatch};
    int st = ot__tensor_alloc(&sol->ts, OT_F64, 2, tshape, "ts");
    if (st == OT_OK)
        st = ot__tensor_alloc(&sol->ys, (ot_dtype)pl->ode->out_dtype, 3, yshape, "ys");
    if (st != OT_OK)
        return st;
    double *ts = ot_tensor_layout(sol->ts)->data;
    const int f64 = pl->ode->out_dtype == OT_F64;
    char *ys = ot_tensor_layout(sol->ys)->data;
    const size_t isz = f64 ? sizeof(double) : sizeof(float);
    for (int64_t b = 0; b < pl->nbatch; b++) {
        const int64_t c = sk->lane_ts[b] ? sol->count[b] : 0;
        for (int64_t k = 0; k < nt_max; k++) {
            ts[b * nt_max + k] = k < c ? sk->lane_ts[b][k] : NAN;
            char *col = ys + (size_t)((b * nt_max + k) * pl->rows) * isz;
            for (int64_t r = 0; r < pl->rows; r++) {
                const double v = k < c ? sk->lane_ys[b][k * pl->rows + r] : NAN;
                if (f64)
                    ((double *)(void *)col)[r] = v;
                else
                    ((float *)(void *)col)[r] = (float)v;
            }
        }
    }
    return OT_OK;
}

int ot_solve(const ot_ode *ode, ot_view y0, ot_view params, double final_time,
             ot_solution **out)
{
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "out: NULL");
    ot__plan pl;
    ot_solution *sol = NULL;
    ot__sink sink = {NULL, NULL, NULL};
    int st = ot__plan_make(&pl, ode, y0, params, ot_view_absent(), final_time, OT__STEPS);
    if (st == OT_OK)
        st = ot__solution_new(&sol, pl.nbatch, 0, ode->nroots > 0);
    if (st == OT_OK) {
        sink.sol = sol;
        sink.lane_ts = OT__CALLOC((size_t)pl.nbatch, sizeof *sink.lane_ts);
        sink.lane_ys = OT__CALLOC((size_t)pl.nbatch, sizeof *sink.lane_ys);
        if (!sink.lane_ts || !sink.lane_ys)
            st = ot__fail(OT_ERR_NOMEM, "solve: cannot allocate step records");
    }
    if (st == OT_OK)
        st = dispatch(&pl, &sink);
    if (st == OT_OK)
        st = gather_steps(&pl, &sink);
    for (int64_t b = 0; sol && b < pl.nbatch; b++) {
        if (sink.lane_ts)
            free(sink.lane_ts[b]);
        if (sink.lane_ys)
            free(sink.lane_ys[b]);
    }
    free(sink.lane_ts);
    free(sink.lane_ys);
    ot__plan_free(&pl);
    if (st != OT_OK) {
        ot_solution_free(sol);
        return st;
    }
    return finish(sol, out);
}

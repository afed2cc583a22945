/* Lanes mode: the thread pool. Lanes are dealt one at a time to worker
 * threads, each with its own CVODE(S) instance (worker.c). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/error.h"
#include "lanes/lanes.h"
#include "lanes/worker.h"

typedef struct {
    const ot__plan *plan;
    const ot__sink *sink;
    atomic_llong next; /* the next lane to hand out */
    pthread_mutex_t progress_lock;
    int64_t done;
} pool;

typedef struct {
    pool *pool;
    ot__lanes_worker *worker;
} job;

/* Lanes are handed out one at a time: they differ in cost, and a lane's
 * result does not depend on which worker solves it. */
static void *run_worker(void *arg)
{
    job *jb = arg;
    pool *p = jb->pool;
    const ot__plan *pl = p->plan;
    for (;;) {
        const int64_t b = atomic_fetch_add(&p->next, 1);
        if (b >= pl->nbatch)
            break;
        ot__lanes_solve_lane(jb->worker, b, p->sink);
        if (pl->progress) {
            pthread_mutex_lock(&p->progress_lock);
            pl->progress(++p->done, pl->nbatch, pl->progress_user);
            pthread_mutex_unlock(&p->progress_lock);
        }
    }
    return NULL;
}

int ot__lanes_run(const ot__plan *pl, const ot__sink *sink)
{
    const int nthreads = (int)pl->threads;
    ot__lanes_worker **workers = OT__CALLOC((size_t)nthreads, sizeof *workers);
    job *jobs = OT__CALLOC((size_t)nthreads, sizeof *jobs);
    pthread_t *tids = OT__CALLOC((size_t)nthreads, sizeof *tids);
    int st = workers && jobs && tids ? OT_OK
                                     : ot__fail(OT_ERR_NOMEM,
                                                "solve: cannot allocate %d "
                                                "workers",
                                                nthreads);
    for (int i = 0; st == OT_OK && i < nthreads; i++)
        st = ot__lanes_worker_new(&workers[i], pl);
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
        ot__lanes_worker_free(workers[i]);
    free(workers);
    free(jobs);
    free(tids);
    return st;
}

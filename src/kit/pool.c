/* The thread pool: units (lanes, or blocks of lanes) dealt one at a time to
 * worker threads from an atomic counter. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "kit/callback.h"
#include "kit/pool.h"
#include "kit/progress.h"

typedef struct {
    const ot__plan *plan;
    int64_t units;
    ot__unit_fn fn;
    atomic_llong next; /* the next unit to hand out */
} pool;

typedef struct {
    pool *pool;
    void *state;
} job;

static void *run_thread(void *arg)
{
    job *jb = arg;
    pool *p = jb->pool;
    const ot__plan *pl = p->plan;
    /* After a cancel no unit starts (solve.c marks their lanes). */
    while (!ot__progress_cancelled(pl->prog)) {
        const int64_t u = atomic_fetch_add(&p->next, 1);
        if (u >= p->units)
            break;
        /* unit u holds lanes [u block, (u + 1) block) (solve.h) */
        const ot__cb_lane_state was =
            ot__cb_lane_enter(pl->lane_offset, pl->lane_offset + u * pl->block);
        const int64_t lanes = p->fn(jb->state, u);
        ot__cb_lane_restore(was);
        if (lanes > 0)
            ot__progress_add(pl->prog, lanes * OT__PROGRESS_ONE);
    }
    return NULL;
}

void ot__pool_run(const ot__plan *pl, int nthreads, int64_t units, void *const *states,
                  ot__unit_fn fn)
{
    pool p;
    p.plan = pl;
    p.units = units;
    p.fn = fn;
    atomic_init(&p.next, 0);

    /* Thread 0 is this thread. Without memory for the others' bookkeeping
     * this thread solves every unit alone. */
    job *jobs = nthreads > 1 ? OT__CALLOC((size_t)nthreads, sizeof *jobs) : NULL;
    pthread_t *tids = jobs ? OT__CALLOC((size_t)nthreads, sizeof *tids) : NULL;
    job self = {&p, states[0]};
    int started = 0;
    for (int i = 1; tids && i < nthreads; i++) {
        jobs[i].pool = &p;
        jobs[i].state = states[i];
        if (OT__SUN_CALL(pthread_create(&tids[started], NULL, run_thread, &jobs[i]),
                         EAGAIN) == 0)
            started++;
    }
    run_thread(&self);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    free(jobs);
    free(tids);
}

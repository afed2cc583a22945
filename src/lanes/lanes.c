/* Lanes mode: one worker (a CVODE(S) instance, worker.c) per thread, the
 * lanes dealt to them by the pool one at a time. */
#include <stdlib.h>

#include "core/alloc.h"
#include "core/error.h"
#include "lanes/lanes.h"
#include "lanes/worker.h"
#include "kit/pool.h"

static int64_t solve_lane(void *worker, int64_t b)
{
    ot__lanes_worker *w = worker;
    ot__lanes_solve_lane(w, b, w->sink);
    return 1;
}

int ot__lanes_run(const ot__plan *pl, const ot__sink *sink)
{
    const int nthreads = (int)pl->threads;
    ot__lanes_worker **workers = OT__CALLOC((size_t)nthreads, sizeof *workers);
    int st = workers
                 ? OT_OK
                 : ot__fail(OT_ERR_NOMEM, "solve: cannot allocate %d workers", nthreads);
    for (int i = 0; st == OT_OK && i < nthreads; i++)
        if ((st = ot__lanes_worker_new(&workers[i], pl)) == OT_OK)
            workers[i]->sink = sink;
    if (st == OT_OK)
        ot__pool_run(pl, nthreads, pl->nbatch, (void *const *)workers, solve_lane);
    for (int i = 0; workers && i < nthreads; i++)
        ot__lanes_worker_free(workers[i]);
    free(workers);
    return st;
}

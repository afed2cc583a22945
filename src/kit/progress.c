/* Progress and cancellation of one solve (progress.h). */
#include "kit/callback.h"
#include "kit/progress.h"

#include <time.h>

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The callback with whole lanes done, under the lock: a nonzero return
 * cancels. */
static void report(ot__progress_state *ps, int64_t whole)
{
    ps->reported = whole;
    ps->last_ns = now_ns();
    const ot__cb_lane_state was = ot__cb_lane_enter(0, -1); /* not a lane's */
    if (ps->fn(whole, ps->total, ps->user) != 0)
        __atomic_store_n(&ps->cancelled, 1, __ATOMIC_RELAXED);
    ot__cb_lane_restore(was);
}

void ot__progress_init(ot__progress_state *ps, ot_progress_fn fn, void *user,
                       int64_t total)
{
    ps->fn = fn;
    ps->user = user;
    ps->total = total;
    ps->done = 0;
    ps->reported = 0;
    ps->cancelled = 0;
    ps->last_ns = now_ns();
    pthread_mutex_init(&ps->lock, NULL);
}

void ot__progress_destroy(ot__progress_state *ps) { pthread_mutex_destroy(&ps->lock); }

int ot__progress_add(ot__progress_state *ps, int64_t units)
{
    if (ps == NULL || ps->fn == NULL)
        return 0;
    pthread_mutex_lock(&ps->lock);
    ps->done += units;
    const int64_t whole = ps->done / OT__PROGRESS_ONE;
    /* Once cancelled, no more calls: the caller asked to stop. */
    if (whole > ps->reported && !ot__progress_cancelled(ps))
        report(ps, whole);
    pthread_mutex_unlock(&ps->lock);
    return ot__progress_cancelled(ps);
}

void ot__progress_poll(ot__progress_state *ps)
{
    /* A thread that finds the lock taken goes on: another one reports. */
    if (ps->fn == NULL || ot__progress_cancelled(ps) || pthread_mutex_trylock(&ps->lock))
        return;
    if (!ot__progress_cancelled(ps) && now_ns() - ps->last_ns >= OT__PROGRESS_POLL_NS)
        report(ps, ps->reported);
    pthread_mutex_unlock(&ps->lock);
}

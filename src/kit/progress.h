/* Private: progress and cancellation of one solve, shared by its threads
 * (the pool's lanes, lockstep blocks as they advance). Progress counts
 * lanes in fixed point (OT__PROGRESS_ONE per lane), so that lockstep blocks
 * can report fractions of their lanes as they go and the sum still ends at
 * exactly every lane; the callback sees whole lanes, increasing. */
#ifndef OT_SRC_SOLVE_PROGRESS_H
#define OT_SRC_SOLVE_PROGRESS_H

#include <pthread.h>
#include <stdint.h>

#include "odetensor/ode.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OT__PROGRESS_ONE ((int64_t)1 << 20)

typedef struct ot__progress_state {
    ot_progress_fn fn; /* NULL: nothing is reported, nothing cancels */
    void *user;
    int64_t total; /* lanes */
    pthread_mutex_t lock;
    int64_t done;     /* fixed point, under lock */
    int64_t reported; /* whole lanes last reported */
    int cancelled;    /* set once by the callback's nonzero return (atomic access) */
    int64_t last_ns;  /* CLOCK_MONOTONIC of the last call, under lock */
} ot__progress_state;

/* How long the progress callback may go uncalled while lanes run: the
 * longest a cancel waits (plus one callback of the model's). */
#define OT__PROGRESS_POLL_NS ((int64_t)20 * 1000 * 1000)

void ot__progress_init(ot__progress_state *ps, ot_progress_fn fn, void *user,
                       int64_t total);
void ot__progress_destroy(ot__progress_state *ps);

/* Adds `units` (fixed point) of progress and calls the callback, under the
 * lock, when the whole lanes done grew. @return nonzero once cancelled.
 * Between these, callback wrappers poll (ot__progress_poll, callback.h):
 * the callback is called again with the same done once OT__PROGRESS_POLL_NS
 * passed, so that it can cancel a long lane. */
int ot__progress_add(ot__progress_state *ps, int64_t units);

/* Whether the callback asked to stop; any thread, any time (NULL: no). */
static inline int ot__progress_cancelled(const ot__progress_state *ps)
{
    return ps != NULL && __atomic_load_n(&ps->cancelled, __ATOMIC_RELAXED) != 0;
}

#ifdef __cplusplus
}
#endif

#endif

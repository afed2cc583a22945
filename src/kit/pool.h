/* Private: the thread pool every threaded solver uses (lanes mode deals
 * lanes, blocked lockstep deals blocks of lanes). */
#ifndef OT_SRC_SOLVE_POOL_H
#define OT_SRC_SOLVE_POOL_H

#include "solve/solve.h"

/* Solves unit u of a plan on a thread with that thread's state; returns the
 * lanes the pool reports as done for it (0: the unit reported its own
 * progress, as lockstep blocks do as they go). */
typedef int64_t (*ot__unit_fn)(void *state, int64_t unit);

/* Deals units 0 .. units - 1 one at a time to nthreads threads (this one and
 * nthreads - 1 started here, each with states[i]), and reports progress in
 * lanes to plan->prog (progress.h); once the progress callback cancels, no
 * unit starts (solve.c marks the lanes left). A thread that cannot start
 * leaves its share to the others. Units differ in cost, and a unit's result
 * does not depend on which thread solves it. Unit u holds lanes
 * [u plan->block, (u + 1) plan->block): while it runs, ot_callback_lane's
 * value on its thread is its first lane (plan->lane_offset + u block). */
void ot__pool_run(const ot__plan *plan, int nthreads, int64_t units, void *const *states,
                  ot__unit_fn fn);

#endif

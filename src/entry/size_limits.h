/* Private: the bytes a solve will need, checked before anything is allocated
 * (issue 6, size limits). */
#ifndef OT_SRC_SIZE_LIMITS_H
#define OT_SRC_SIZE_LIMITS_H

#include <stdint.h>

#include "solve/solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Adds up what the solve of plan will allocate: its outputs (ys, the
 * sensitivities, ts), the per-lane arrays of the solution, f64 copies of f32
 * inputs and the solver's working memory for the plan's mode (lanes: per
 * worker thread; lockstep: per lane). plan must have its sizes (n, np, rows, threads,
 * solver, nbatch, kind, ode) set; nt is the t_eval length (ignored for OT__STEPS, which
 * counts the two records every lane makes at least). y0 and params are the caller's
 * views, read for their dtype, lanes and device only.
 * @return OT_OK; OT_ERR_OVERFLOW when a count overflows int64 (the message
 * names the term and its factors); OT_ERR_NOMEM when the total is more than
 * the memory this process may have (physical memory, or RLIMIT_AS /
 * RLIMIT_DATA when lower), the message listing the largest terms; a total
 * below OT__SIZE_QUERY_FLOOR is not compared. No message is formatted and
 * no system call made for a request that passes below the floor. */
int ot__size_check(const ot__plan *plan, ot_view y0, ot_view params, ot_view t_eval,
                   int64_t nt);

/* Requests below this many bytes go ahead without reading the process's
 * limits (system calls), as no useful refusal in advance is possible. */
#define OT__SIZE_QUERY_FLOOR ((uint64_t)1 << 20)

/* Test hooks: core/test_hooks.h. */

#ifdef __cplusplus
}
#endif

#endif

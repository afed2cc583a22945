/* Private: the lanes solver's entry in the solver table (entry/solvers.c). */
#ifndef OT_SRC_LANES_LANES_H
#define OT_SRC_LANES_LANES_H

#include "solve/solve.h"

/* Solves every lane of plan into sink on a pool of worker threads, one
 * CVODE(S) instance each. Workers are made up front in the calling thread,
 * so a failure to make one fails the call before any lane runs.
 * @return OT_OK (lane failures are in the solution), OT_ERR_NOMEM or
 * OT_ERR_SOLVER. */
int ot__lanes_run(const ot__plan *plan, const ot__sink *sink);

#endif

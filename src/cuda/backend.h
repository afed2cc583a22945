/* Private: the entry points of the CUDA backend. A build without it links
 * src/cuda_none.c, whose versions say so; `make cuda` links src/cuda/. */
#ifndef OT_SRC_CUDA_BACKEND_H
#define OT_SRC_CUDA_BACKEND_H

#include "solve/solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Solves a checked plan in lockstep on plan->ode->device into sink; with
 * outputs on the device it allocates sol->ys and sol->sens itself.
 * @return OT_OK (lane failures are in the solution), OT_ERR_NO_CUDA,
 * OT_ERR_NOMEM, OT_ERR_SOLVER. */
int ot__cuda_lockstep_run(const ot__plan *plan, const ot__sink *sink);

/* A host f64 copy of a device view. Ownership: *out is the caller's.
 * @return OT_OK, OT_ERR_NO_CUDA, OT_ERR_NOMEM. */
int ot__cuda_to_host(ot_view v, ot_tensor **out, const char *name);

#ifdef __cplusplus
}
#endif

#endif

/* Private: the CUDA lockstep solver's entries in the solver table
 * (entry/solvers.c). A build without the backend links src/cuda/none.c,
 * whose versions refuse with OT_ERR_NO_CUDA; `make cuda` links the rest of
 * src/cuda/. */
#ifndef OT_SRC_CUDA_BACKEND_H
#define OT_SRC_CUDA_BACKEND_H

#include "solve/solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Solves a checked plan in lockstep on plan->ode->device into sink.
 * @return OT_OK (lane failures are in the solution), OT_ERR_NO_CUDA,
 * OT_ERR_NOMEM, OT_ERR_SOLVER, OT_ERR_DEVICE. */
int ot__cuda_run(const ot__plan *plan, const ot__sink *sink);

/* An output tensor [rows, nt, nbatch]: on the device when the problem keeps
 * outputs there (freed with cudaFree), else in host memory.
 * Ownership: *out is the caller's. @return OT_OK, OT_ERR_NO_CUDA,
 * OT_ERR_NOMEM. */
int ot__cuda_alloc_output(ot_tensor **out, const ot__plan *plan, const char *name);

/* NaN past each lane's count in device outputs. @return OT_OK or
 * OT_ERR_DEVICE. */
int ot__cuda_pad_outputs(const ot__plan *plan, ot_solution *sol);

/* A host f64 copy of a device view. Ownership: *out is the caller's.
 * @return OT_OK, OT_ERR_NO_CUDA, OT_ERR_NOMEM, OT_ERR_DEVICE. */
int ot__cuda_host_copy(ot_view v, ot_tensor **out, const char *name);

#ifdef __cplusplus
}
#endif

#endif

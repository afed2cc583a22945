/* Private: lockstep mode (one CVODE over all lanes) and its SUNDIALS parts. */
#ifndef OT_SRC_LOCKSTEP_IMPL_H
#define OT_SRC_LOCKSTEP_IMPL_H

#include <nvector/nvector_serial.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>

#include "solve/solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A serial vector of length n * nbatch whose WRMS norms are the maximum over
 * lanes of each lane's norm, leaving out lanes with stopped[b] set (stopped
 * is read at every norm; NULL: none). plain_norm: CVODE's ordinary norm, for
 * tests that show the difference. Its clones keep all three properties.
 * Ownership: the caller's (N_VDestroy). NULL when out of memory. */
N_Vector ot__lane_vector_new(sunindextype n, sunindextype nbatch, int plain_norm,
                             const unsigned char *stopped, SUNContext ctx);

/* Block-diagonal matrix, nbatch dense n x n blocks as [n, n, nbatch]
 * column-major. Ownership: the caller's (SUNMatDestroy). */
SUNMatrix ot__block_matrix_new(sunindextype n, sunindextype nbatch, SUNContext ctx);
sunrealtype *ot__block_matrix_data(SUNMatrix A);

/* Direct solver factoring each block (partial pivoting). Ownership: the
 * caller's (SUNLinSolFree). */
SUNLinearSolver ot__block_solver_new(sunindextype n, sunindextype nbatch, SUNContext ctx);

/* Runs a checked plan in lockstep on the CPU into sink (dense, sens: the
 * solution's tensors; steps: lane_ts/lane_ys as in lanes mode).
 * @return OT_OK (lane failures are in the solution), OT_ERR_NOMEM,
 * OT_ERR_SOLVER when CVODE cannot be set up. */
int ot__lockstep_run(const ot__plan *plan, const ot__sink *sink);

/* Test hook: lockstep solves on this thread use CVODE's plain WRMS norm
 * instead of the per-lane maximum (1), or the per-lane norm again (0). */
void ot__lockstep_plain_norm(int plain);

#ifdef __cplusplus
}
#endif

#endif

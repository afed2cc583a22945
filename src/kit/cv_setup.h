/* Private: the CVODE(S) settings every driver makes the same way (lanes
 * workers, lockstep on the CPU and on CUDA). Each returns a CVODE flag. */
#ifndef OT_SRC_CVODE_SETUP_H
#define OT_SRC_CVODE_SETUP_H

#include <cvodes/cvodes.h>

#include "kit/callback.h"
#include "solve/solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* User data, the error handler (CVODE's messages go to cb->cv_msg, never to
 * stderr), step limits (none for ot_solve, which counts its own) and the
 * first and largest step. */
int ot__cv_options(void *cv, const ot__plan *plan, void *user, ot__cb *cb);

/* Rtol with scalar atol, or with atolv (already filled with the per-state
 * values) when the problem has an atol vector. */
int ot__cv_tolerances(void *cv, const ot_ode *ode, N_Vector atolv);

/* After CVodeSensInit: error control on the sensitivities, the user's
 * tolerances, or else CVODES' estimate, given per lane in atolS when not
 * NULL (kit/sens.h; CVODES copies them), and for Adams a fixed-point
 * sensitivity solver (stored in *nls, the caller frees it). */
int ot__cv_sens_setup(void *cv, const ot_ode *ode, int np, N_Vector y, N_Vector *atolS,
                      SUNContext ctx, SUNNonlinearSolver *nls);

/* The state solver: for BDF the linear solver A/LS the caller made (with
 * jac, or CVODE's DQ when jac is NULL); for Adams a fixed-point iteration
 * stored in *nls. */
int ot__cv_solver(void *cv, const ot_ode *ode, SUNMatrix A, SUNLinearSolver LS,
                  CVLsJacFn jac, N_Vector y, SUNContext ctx, SUNNonlinearSolver *nls);

/* CVODE's counters into *s (final_time untouched); with_ls: the linear
 * solver's too. */
void ot__cv_stats(void *cv, int with_ls, ot_lane_stats *s);

/* acc += s, counter by counter (final_time untouched): statistics across
 * CVodeReInit, which zeroes CVODE's counters (an event handler's restart). */
void ot__cv_stats_add(ot_lane_stats *acc, const ot_lane_stats *s);

#ifdef __cplusplus
}
#endif

#endif

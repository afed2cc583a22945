/* Private: ot_solve_adjoint's two passes, once for every mode, over a unit
 * of the run loop (run/unit.h): forward with CVODES' checkpoints (CVodeF)
 * to each output time, the outputs stored and each lane's loss terms taken
 * (kit/adjoint.c); then backward from the last output time, lambda
 * jumping by dg_i/dy at each, and the gradients assembled. A mode supplies
 * its backward problem (vectors, linear solver, callbacks) and where the
 * arrays live; lanes mode's unit is one lane with its own output times,
 * lockstep's a block sharing them. */
#ifndef OT_SRC_RUN_ADJOINT_H
#define OT_SRC_RUN_ADJOINT_H

#include "run/unit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The adjoint's parts of a unit of k lanes, owned by the mode. */
typedef struct {
    double *loss;  /* [k]: each lane's loss */
    double *gp;    /* [np, k]: the sum of dg_i/dp, then dL/dp */
    double *dgdy;  /* [n, k, nt]: dg_i/dy of each lane at each output */
    double *point; /* ot__adj_point's scratch */
    N_Vector yB;   /* lambda [n, k] */
    N_Vector qB;   /* the quadratures [np, k] (NULL without parameters) */
    N_Vector yQ;   /* the integral term [1, k] (a forward quadrature), or NULL */
    int *which;    /* CVODES' index of the backward problem */
    /* Makes (or re-initialises) the backward problem at tcur with lambda
     * in yB: the integrator's flag. */
    int (*backward_make)(ot__unit *u, double tcur);
    /* d y0 / d p_j of every lane, [n, k] (init computes y0). */
    const double *(*dy0dp)(ot__unit *u, int64_t j);
} ot__run_adj;

/* Both passes of a set-up unit (its integrator with CVodeAdjInit, started
 * at t_restart): outputs, loss and gradients into the sink; failures are
 * the lanes' (a lane whose loss fails fails alone). */
void ot__run_adjoint(ot__unit *u, ot__run_adj *a);

#ifdef __cplusplus
}
#endif

#endif

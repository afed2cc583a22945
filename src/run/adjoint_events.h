/* Private: the adjoint through scheduled stops and handled roots (issue
 * 25), once for every mode. CVODES' checkpoints cover one integration, and
 * a handler restarts it, so the adjoint goes segment by segment:
 *
 * - the forward pass is the run loop's own (ot__run_dense): every stop,
 *   root and handler as in a plain solve, and a log of what the backward
 *   pass needs: each segment's start (time, the unit's state and current
 *   parameters q after the handlers), each event (its lane, stop or roots,
 *   z- and z+ with z = (y, q)) and each output's dg/dy and dg/dq;
 * - the backward pass takes the segments last to first: it runs the
 *   segment forward again from its start with checkpoints (CVodeF, the
 *   roots quiet: they were taken), integrates (lambda, mu) back across it
 *   (mu = dL/dq, CVODES' quadratures), lambda and mu jumping by dg/dy and
 *   dg/dq at its outputs, and at the segment's start jumps through its
 *   events, (lambda, mu)- = M^T (lambda, mu)+ (run/sens_jump.h).
 *
 * dL/dp = mu(t0) (q = p there), plus through init (dy0/dp)^T lambda(t0),
 * plus each stop that moves with p (stops_dp); dL/dy0 = lambda(t0). The
 * forward work is about twice a plain solve's. Where a lane leaves a
 * lockstep block during the forward pass (its callback failed), the pass
 * runs again from t0 without it: the segments the backward pass re-runs
 * are then the block's steps without it, as in the adjoint without
 * events. */
#ifndef OT_SRC_RUN_ADJOINT_EVENTS_H
#define OT_SRC_RUN_ADJOINT_EVENTS_H

#include <stddef.h>

#include "run/adjoint.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ot__adj_ev ot__adj_ev;

/* Both passes of a unit whose solve has stops or handled roots
 * (ot__sens_jumps): outputs, loss and gradients into the sink. */
void ot__run_adjoint_events(ot__unit *u, ot__run_adj *a);

/* Frees u's log (u->adj_ev, the unit's while its adjoint runs; NULL: a
 * no-op): ot__run_unit_abandon calls it when memory ran out inside
 * SUNDIALS mid-run. */
void ot__adj_ev_free(ot__unit *u);

/* The run loop's calls while u->adj_ev is set (the forward pass). Before
 * a restart (or resume) at t: the integral term's quadrature at t. After
 * it: that quadrature restarted, and the new segment logged. @return
 * OT_OK, or OT_ERR_NOMEM / OT_ERR_SOLVER with the message in u->cb->msg. */
void ot__adj_ev_before(ot__unit *u, double t);
int ot__adj_ev_after(ot__unit *u, double t);
/* Output i at t from state y: each lane due (u->at[b] >= 0) takes its loss
 * term (a loss that fails fails its lane). */
void ot__adj_ev_output(ot__unit *u, double t, N_Vector y);
/* Lane b's event at t (its stop, or the roots rf) took z- = zm [n + np]
 * to (y, q): logged for the backward pass. @return OT_OK or OT_ERR_NOMEM
 * with msg. */
int ot__adj_ev_event(ot__unit *u, int64_t b, double t, int64_t stop, const int *rf,
                     const double *zm, const double *y, const double *q, char *msg,
                     size_t len);

#ifdef __cplusplus
}
#endif

#endif

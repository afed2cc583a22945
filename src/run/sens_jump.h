/* Private: forward sensitivities through events, once for every mode
 * (issue 25). At an event the handler maps the lane's state and
 * parameters, z = (y, q) with q the lane's current parameters, to
 * z+ = H(t, z-). With Z_j = (S_j, P_j) the sensitivity j of y and of q
 * (P_j = d q / d p_j: e_j for a parameter's, 0 for an initial value's
 * until a handler moves q), the jump is
 *
 *   Z_j+ = DH Z_j- + (DH (f-, 0) + H_t - (f+, 0)) dtau_j
 *
 * with f- = f(t, y-, q-), f+ = f(t, y+, q+) and dtau_j the event time's
 * derivative: for a root g, -(Dg Z_j) / (g_t + g_y f-); for a scheduled
 * stop, the caller's stops_dp (a lag), else 0. DH along a direction is the
 * user's event Jacobian (ot_ode_set_event_jac) or a central difference of
 * the handler with the step of ot__central (kit/sens.h); Dg a central
 * difference of the root function. Between events the sensitivities'
 * rhs is f_y S_j + f_q P_j: the modes' sensitivity rhs and output
 * sensitivities take P_j as their direction in p (u->psens). */
#ifndef OT_SRC_RUN_SENS_JUMP_H
#define OT_SRC_RUN_SENS_JUMP_H

#include <stddef.h>

#include "run/unit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether a solve of pl carries derivatives through events: forward
 * sensitivities or the adjoint, with scheduled stops or a handled root.
 * The adjoint's jump is the transpose of the same map, taken backward
 * (ot__sens_jump_back; run/adjoint_events.h logs the events for it). */
int ot__sens_jumps(const ot__plan *pl);

/* For a run of u when ot__sens_jumps: u->psens (each lane's P, the
 * identity's columns) and the jump's scratch, the unit's (freed by
 * ot__sens_jump_free, which ot__run_unit_abandon calls). @return OT_OK or
 * OT_ERR_NOMEM. */
int ot__sens_jump_new(ot__unit *u);
void ot__sens_jump_free(ot__unit *u);

/* Lane b's state y and parameters q before its handler runs (the jump's
 * z-). */
void ot__sens_jump_save(ot__unit *u, int64_t b, const double *y, const double *q);

/* After lane b's handler (or handlers) took it from the saved z- to y+
 * and q+ at t: its sensitivities in ops->sens_state and u->psens jump.
 * stop >= 0: the lane's scheduled stop `stop` (its stops_dp); else the
 * roots rf (nroots flags) fired, those with OT_EVENT_HANDLE handled in
 * root order, the event time from the first fired root. @return OT_OK, or
 * OT_ERR_CALLBACK with the message in msg (a callback failed, or the jump
 * is not finite, or the crossing is tangential). */
int ot__sens_jump_take(ot__unit *u, int64_t b, double t, int64_t stop, const int *rf,
                       const double *y, const double *q, char *msg, size_t len);

/* The adjoint's jump at an event of lane b logged in the forward pass
 * (time t, its stop or roots rf, z- = zm [m] and z+ = zp [m], m = n + np):
 * (lambda, mu) [n] and [np] in place from after the event to before it,
 * (lambda, mu)- = M^T (lambda, mu)+ with M the forward jump's map of
 * (dy, dq) (the event time's part included); a stop that moves with p
 * (stops_dp) adds (B . (lambda, mu)+) d stop / d p to gp [np]. The map
 * comes from the user's event Jacobian or central differences of the
 * handler along z's unit vectors (2 (m + 1) handler calls). Needs
 * ot__sens_jump_new's scratch. @return OT_OK, or a status with msg. */
int ot__sens_jump_back(ot__unit *u, int64_t b, double t, int64_t stop, const int *rf,
                       const double *zm, const double *zp, double *lam, double *mu,
                       double *gp, char *msg, size_t len);

/* Sensitivity j's direction in p for the unit's lanes, [np, k] (NULL: no
 * jump has run, e_j). */
static inline const double *ot__sens_dir(const ot__unit *u, int64_t j)
{
    return u->psens ? u->psens + j * u->np * u->k : NULL;
}

#ifdef __cplusplus
}
#endif

#endif

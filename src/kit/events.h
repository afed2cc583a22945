/* Private: what every driver does when a root fires, written once (issue 14).
 * A root's action (ot_ode_set_event_actions) decides: OT_EVENT_STOP stops the
 * lane (the driver's own, older path), OT_EVENT_RECORD records the event and
 * the lane goes on, OT_EVENT_HANDLE records it around a call of the event
 * handler, which may change the lane's state and parameters; the driver then
 * restarts the integrator at the event (CVodeReInit: order 1, a new step).
 * Each recorded event is one entry of the lane's record (solution/output.h):
 * time t and [root, y before (n), y after (n)]. */
#ifndef OT_SRC_SOLVE_EVENTS_H
#define OT_SRC_SOLVE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "kit/callback.h"
#include "solve/solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The width of an event record entry for n states. */
static inline int64_t ot__event_width(int64_t n) { return 1 + 2 * n; }

/* The action of root r (OT_EVENT_STOP when none were set). */
static inline int ot__event_action(const ot_ode *ode, int64_t r)
{
    return ode->event_action ? ode->event_action[r] : OT_EVENT_STOP;
}

/* Handles the roots that fired for one lane at t: rootsfound[r] != 0 for
 * each (nroots entries, CVODE's). y is the lane's state at t (n values; the
 * handler may change it in place), p its parameters (np, a copy the lane
 * owns; may change). Records each fired root in index order into r (lane
 * `lane` for messages), calling the handler for OT_EVENT_HANDLE roots.
 * @return OT_OK and *changed (whether a handler ran: the integrator must
 * restart), or OT_ERR_CALLBACK (the handler failed or wrote NaN/Inf: cb's
 * message), OT_ERR_SOLVER (more than max_events: msg), OT_ERR_NOMEM. A STOP
 * root is the driver's to test first (ot__event_stop_root). */
int ot__event_take(const ot_ode *ode, ot__record *r, double t, const int *rootsfound,
                   double *y, double *p, int64_t lane, ot__cb *cb, int *changed,
                   char *msg, size_t msg_len);

/* Scheduled stop k of one lane at t: recorded as an event (root -1 - k)
 * around a call of the handler on y (n, changed in place) and p (np, the
 * lane's copy), checked. @return OT_OK, OT_ERR_CALLBACK (the handler failed
 * or wrote NaN/Inf), OT_ERR_SOLVER (more than max_events) or OT_ERR_NOMEM,
 * the message in msg. */
int ot__event_take_stop(const ot_ode *ode, ot__record *r, double t, int64_t k, double *y,
                        double *p, int64_t lane, char *msg, size_t msg_len);

/* The handler, raw: root `root` (-1 - k for stop k) of lane `lane` on y
 * (n) and p (np) in place, ot_callback_lane() naming the lane; its return
 * code, unchecked (the jump of sensitivities calls it on copies). */
int ot__event_call(const ot_ode *ode, double t, int64_t root, int64_t lane, double *y,
                   double *p);

/* Records one event of root `root` at t: y before and after (n each).
 * @return OT_OK, OT_ERR_SOLVER (more than max_events: msg) or OT_ERR_NOMEM. */
int ot__event_push(const ot_ode *ode, ot__record *r, double t, int64_t root,
                   const double *before, const double *after, char *msg, size_t msg_len);

/* Whether a solve of ode records events: it has roots, and its solver
 * records them (recorded_events; else its roots stop lanes only). Every
 * event is then recorded, a stopping one too (its state at the root). */
static inline int ot__events_recorded(const ot_ode *ode)
{
    return ode->nroots > 0 && ot__solver_for(ode)->recorded_events;
}

/* The first fired root whose action is OT_EVENT_STOP, or -1. */
int ot__event_stop_root(const ot_ode *ode, const int *rootsfound);

/* The event tensors of a finished solve from the lanes' records
 * (events[nbatch]): times [m, nbatch], roots [m, nbatch] (root indices as
 * f64), before and after [n, m, nbatch], NaN past each lane's count; m is
 * the largest count (1 at least). Lanes whose events would not fit in
 * memory beside the records are cut to what fits and fail (OT_ERR_NOMEM).
 * @return OT_OK, or OT_ERR_NOMEM for the tensors. */
int ot__event_gather(const ot__plan *pl, ot_solution *sol, ot__record *events);

#ifdef __cplusplus
}
#endif

#endif

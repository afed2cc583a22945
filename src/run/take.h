/* Private: the run loop's events (run/take.c), for the loop (run/loop.c):
 * the roots that fired, the scheduled stops, their handlers, and the
 * unit's restart after them. */
#ifndef OT_SRC_RUN_TAKE_H
#define OT_SRC_RUN_TAKE_H

#include "run/unit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Restarts the unit at t from host (its state, maybe changed by handlers):
 * order 1, a new step, the counters kept. 0, or -1 when the unit failed. */
int ot__run_restart(ot__unit *u, double t, double *host);
/* After a restart or resume at t (u->t_restart = t): what else starts
 * there (the adjoint's next segment). 0, or -1 when the unit failed. */
int ot__run_restarted(ot__unit *u, double t);

/* The roots that fired at t, y the unit's state there (take.c says the
 * rules). @return -1 the restart failed, 0 no restart, 1 restarted, 2
 * restarted with a state a handler changed. */
int ot__run_take_roots(ot__unit *u, double t, N_Vector y, int at_output);
/* The lanes whose next scheduled stop is t (state y), then the restart,
 * the stop time aimed at last. @return 1 go on, 0 every lane stopped, -1
 * the unit failed. */
int ot__run_take_stops(ot__unit *u, double t, N_Vector y, double last);

#ifdef __cplusplus
}
#endif

#endif

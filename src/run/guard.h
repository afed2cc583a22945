/* Private: the run loop's guard against crossings no event reported
 * (run/guard.c): handled roots whose lane went through their surface
 * unseen, and events that pile up (Zeno). */
#ifndef OT_SRC_RUN_GUARD_H
#define OT_SRC_RUN_GUARD_H

#include "run/unit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ot__guard ot__guard;

/* The guard of unit u, or *out NULL where it has nothing to watch (no
 * handled root with a direction, or a mode that shows handlers no state).
 * Ownership: *out is the caller's (ot__guard_free). @return OT_OK or
 * OT_ERR_NOMEM. */
int ot__guard_new(const ot__unit *u, ot__guard **out);
void ot__guard_free(ot__guard *g);

/* Before the handlers of the roots that fired at t: the unit's host state
 * yd [n, k]. NULL g: nothing. */
void ot__guard_before(ot__guard *g, const ot__unit *u, double t, const double *yd);
/* After them (yd the state they left): each handled crossing judged; a
 * lane sent through the surface or whose events pile up fails; a lane
 * left moving back is watched. */
void ot__guard_after(ot__guard *g, ot__unit *u, double t, const double *yd);
/* Lane b's state was changed by a handler (a scheduled stop): its watch
 * ends. */
void ot__guard_forget(ot__guard *g, int64_t b);
/* At an output or a step at t (host state yd): a watched lane found past
 * its surface, moving further past, with no event since, fails. */
void ot__guard_check(ot__guard *g, ot__unit *u, double t, const double *yd);

#ifdef __cplusplus
}
#endif

#endif

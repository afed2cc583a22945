/* Private: an integrator's normal mode (CVode(CV_NORMAL), ARKodeEvolve(ARK_NORMAL))
 * for the dense output loops (lanes and lockstep), also for output times
 * near zero, and the time-resolution check. */
#ifndef OT_SRC_ADVANCE_H
#define OT_SRC_ADVANCE_H

#include <stddef.h>

#include "kit/integ.h"

#ifdef __cplusplus
extern "C" {
#endif

/* As CVode(cv, tout, yout, tret, CV_NORMAL) (or ARKODE's normal mode): integrates to tout
 * and writes y(tout) into yout; returns CVODE's flag (CV_ROOT_RETURN with *tret at the
 * root). CVODE decides "tout reached" from the sign of (tn - tout) * h, a
 * product that underflows to -0 once both are around 1e-162 or less, and
 * then fails ("Trouble interpolating ... tout too far back") or extrapolates
 * from a step far shorter than tout. So while tout, or the time reached so
 * far, is below 1e-100 in magnitude, this steps with CV_ONE_STEP, compares
 * times directly and interpolates with CVodeGetDky; at most max_steps steps
 * (as CVODE's mxstep: CV_TOO_MUCH_WORK with a message into msg). Elsewhere it
 * is CVode itself, so ordinary solves are unchanged bit for bit. Read
 * sensitivities afterwards with CVodeGetSensDky at *tret. Fails with
 * OT__IG_TIME_RESOLUTION when t is too coarse for the steps (below). */
int ot__ig_advance(const ot__ig *ig, double tout, N_Vector yout, double *tret,
                   long max_steps, double rtol, double t_start, char *msg,
                   size_t msg_len);

/* Time resolution: t is a double, so near t = 1e15 representable times are
 * 0.125 apart and every step's end time is rounded by up to half that. CVODE
 * only warns ("t + h = t on the next step", a warning SUNDIALS 7 sends to
 * its logger alone) and goes on with an answer that drifts (y' = -y from
 * t0 = 1e15 over one time unit gave 1e-5 instead of 0.37). A lane fails
 * with OT__IG_TIME_RESOLUTION and a message into msg that says to shift
 * time when its current or last step is shorter than OT__TIME_GAPS_PER_STEP
 * gaps between doubles at t (t barely moves), or when that gap is more
 * than max(rtol, 1e-12) of the time since its start t_start (t cannot
 * resolve the solution's own time axis). Tiny steps that only land on a
 * scheduled stop or output are not flagged, as a rule on the step size
 * relative to its rounding did (a dose 1e-8 h after another at t = 132 h).
 * Checked when ot__ig_advance returns (each output time and root) and after
 * every step of an every-step solve, so a dip in the step size between two
 * outputs can pass unseen: a guard against coarse time, not a proof of
 * accuracy. */
#define OT__TIME_GAPS_PER_STEP 4.0
#define OT__IG_TIME_RESOLUTION (-1001)
int ot__ig_time_check(const ot__ig *ig, double rtol, double t_start, char *msg,
                      size_t msg_len);

#ifdef __cplusplus
}
#endif

#endif

/* Private: CVode(CV_NORMAL) for the dense output loops (lanes and lockstep),
 * also for output times near zero. */
#ifndef OT_SRC_CV_ADVANCE_H
#define OT_SRC_CV_ADVANCE_H

#include <stddef.h>

#include <cvodes/cvodes.h>

#ifdef __cplusplus
extern "C" {
#endif

/* As CVode(cv, tout, yout, tret, CV_NORMAL): integrates to tout and writes
 * y(tout) into yout; returns CVODE's flag (CV_ROOT_RETURN with *tret at the
 * root). CVODE decides "tout reached" from the sign of (tn - tout) * h, a
 * product that underflows to -0 once both are around 1e-162 or less, and
 * then fails ("Trouble interpolating ... tout too far back") or extrapolates
 * from a step far shorter than tout. So while tout, or the time reached so
 * far, is below 1e-100 in magnitude, this steps with CV_ONE_STEP, compares
 * times directly and interpolates with CVodeGetDky; at most max_steps steps
 * (as CVODE's mxstep: CV_TOO_MUCH_WORK with a message into msg). Elsewhere it
 * is CVode itself, so ordinary solves are unchanged bit for bit. Read
 * sensitivities afterwards with CVodeGetSensDky at *tret. */
int ot__cv_advance(void *cv, double tout, N_Vector yout, double *tret, long max_steps,
                   char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif

#endif

/* CVode's normal mode, made safe for output times near zero (cv_advance.h). */
#include "solve/cv_advance.h"

#include <math.h>
#include <stdio.h>

/* Above this, (tn - tout) * h cannot underflow unless tn and tout agree to
 * far inside CVODE's own time fuzz (h is at least about 1e-16 tn), where
 * CVodeGetDky accepts tout anyway. */
static const double TINY_T = 1e-100;

int ot__cv_advance(void *cv, double tout, N_Vector yout, double *tret, long max_steps,
                   char *msg, size_t msg_len)
{
    double tn = tout;
    if (CVodeGetCurrentTime(cv, &tn) != CV_SUCCESS ||
        !(fabs(tout) < TINY_T || (tn != 0 && fabs(tn) < TINY_T)))
        return CVode(cv, tout, yout, tret, CV_NORMAL);
    for (long k = 0; tn < tout; k++) {
        if (max_steps > 0 && k >= max_steps) {
            snprintf(msg, msg_len,
                     "CVODES/CVode: At t = %g, mxstep steps taken before reaching tout.",
                     tn);
            return CV_TOO_MUCH_WORK;
        }
        const int flag = CVode(cv, tout, yout, &tn, CV_ONE_STEP);
        if (flag < 0 || flag == CV_ROOT_RETURN) {
            *tret = tn;
            return flag;
        }
    }
    *tret = tout;
    return CVodeGetDky(cv, tout, 0, yout);
}

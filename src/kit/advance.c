/* The integrators' normal mode, made safe for output times near zero (advance.h). */
#include "kit/advance.h"

#include <math.h>
#include <stdio.h>

/* Above this, (tn - tout) * h cannot underflow unless tn and tout agree to
 * far inside CVODE's own time fuzz (h is at least about 1e-16 tn), where
 * CVodeGetDky accepts tout anyway. */
static const double TINY_T = 1e-100;

/* flag, or the time check's failure. */
static int check_time(const ot__ig *ig, int flag, double rtol, double t_start, char *msg,
                      size_t msg_len)
{
    const int st = ot__ig_time_check(ig, rtol, t_start, msg, msg_len);
    return st < 0 ? st : flag;
}

int ot__ig_time_check(const ot__ig *ig, double rtol, double t_start, char *msg,
                      size_t msg_len)
{
    double tn = 0, hlast = 0, hcur = 0;
    if (ot__ig_times(ig, &tn, &hlast, &hcur) != 0)
        return CV_SUCCESS;
    const double at = fabs(tn), gap = nextafter(at, INFINITY) - at;
    double h = fabs(hcur);
    if (hlast != 0 && fabs(hlast) < h)
        h = fabs(hlast);
    const double elapsed = fabs(tn - t_start);
    /* A step within a few gaps of t barely moves t (CVODE's "t + h = t"),
     * or t itself cannot resolve the time since the start to rtol. */
    const int stuck = h != 0 && h < OT__TIME_GAPS_PER_STEP * gap;
    const int coarse = elapsed > 0 && gap > fmax(rtol, 1e-12) * elapsed;
    if (!stuck && !coarse)
        return CV_SUCCESS;
    snprintf(msg, msg_len,
             "at t = %.17g doubles are %g apart: too coarse for %s (%g). Shift time so "
             "that t0 is near 0 (solve in t - t0).",
             tn, gap, stuck ? "a step of" : "the time since t0 at rtol",
             stuck ? h : elapsed);
    return OT__IG_TIME_RESOLUTION;
}

int ot__ig_advance(const ot__ig *ig, double tout, N_Vector yout, double *tret,
                   long max_steps, double rtol, double t_start, char *msg, size_t msg_len)
{
    double tn = tout, hlast, hcur;
    if (ot__ig_times(ig, &tn, &hlast, &hcur) != 0 ||
        !(fabs(tout) < TINY_T || (tn != 0 && fabs(tn) < TINY_T))) {
        const int flag = ot__ig_evolve(ig, tout, yout, tret, 0);
        return flag < 0 ? flag : check_time(ig, flag, rtol, t_start, msg, msg_len);
    }
    for (long k = 0; tn < tout; k++) {
        if (max_steps > 0 && k >= max_steps) {
            snprintf(msg, msg_len,
                     "%s: At t = %g, mxstep steps taken before reaching tout.",
                     ig->ark ? "ARKODE/ARKodeEvolve" : "CVODES/CVode", tn);
            return CV_TOO_MUCH_WORK;
        }
        const int flag = ot__ig_evolve(ig, tout, yout, &tn, 1);
        if (flag < 0 || flag == CV_ROOT_RETURN) {
            *tret = tn;
            return flag < 0 ? flag : check_time(ig, flag, rtol, t_start, msg, msg_len);
        }
    }
    *tret = tout;
    const int flag = ot__ig_dky(ig, tout, yout);
    return flag < 0 ? flag : check_time(ig, flag, rtol, t_start, msg, msg_len);
}

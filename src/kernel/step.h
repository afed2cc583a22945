/* Private: what the kernel solver's steppers (ros.c, erk.c) and its loop
 * (drive.c) share. */
#ifndef OT_SRC_KERNEL_STEP_H
#define OT_SRC_KERNEL_STEP_H

#include <math.h>
#include <string.h>

#include "kernel/kernel.h"

/* y += a x over n values. */
static inline void ot__kernel_axpy(double *y, double a, const double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] += a * x[i];
}

/* Lanes whose call failed leave this attempt (want 0, rc kept). at_point:
 * the call was at the lane's accepted state, which no smaller step moves,
 * so a retry there fails the lane. */
static inline void ot__kernel_drop_failed(ot__kgroup *g, int at_point)
{
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (L->want && L->rc != 0) {
            L->want = 0;
            if (at_point)
                L->rc = -1;
        }
    }
}

/* Lane c's error norm: the RMS of err / (atol + rtol max(|y|, |y1|)). */
double ot__kernel_err_norm(const ot__kgroup *g, int64_t c);

/* One attempt of every running lane's step h: y1, err and errn; rc set for
 * the lanes whose callbacks failed (ros.c, erk.c). */
void ot__kernel_ros_attempt(ot__kgroup *g);
void ot__kernel_erk_attempt(ot__kgroup *g);
/* ERK: the dense output's extra stages for the lanes wanted. */
void ot__kernel_erk_dense_stages(ot__kgroup *g);
/* Lane c's dense output at t + theta h of its last attempt into out [n]. */
void ot__kernel_ros_dense(const ot__kgroup *g, int64_t c, double theta, double *out);
void ot__kernel_erk_dense(const ot__kgroup *g, int64_t c, double theta, double *out);

/* Lane c's state at time s of its accepted attempt (t to t1) into out: y1
 * at t1, else the dense output (accept's outputs, the roots' search). */
static inline void ot__kernel_state_at(const ot__kgroup *g, int64_t c, double s,
                                       double *out)
{
    const ot__klane *L = &g->lane[c];
    if (s == L->t1) {
        memcpy(out, g->y1 + c * g->n, (size_t)g->n * sizeof *out);
        return;
    }
    const double theta = (s - L->t) / L->ctl.h;
    if (g->ros)
        ot__kernel_ros_dense(g, c, theta, out);
    else
        ot__kernel_erk_dense(g, c, theta, out);
}

#endif

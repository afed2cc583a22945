/* Private: the difference-quotient increments every driver uses, written
 * once for host code and CUDA kernels alike (nvcc compiles these as
 * __host__ __device__).
 * - Jacobian blocks by forward differences, with CVODE's dense DQ increment
 *   (cvLsDenseDQJac in SUNDIALS): for state j of a lane with weights w and
 *   rhs f, inc = max(sqrt(eps) |y_j|, min_inc / w_j), where min_inc =
 *   1000 |h| eps n ||f||_wrms, or 1 when ||f|| is 0; the column is
 *   (1 / inc) (f(y + inc e_j) - f(y)) (ot__dq_column).
 * - Sensitivities of init and out (and lockstep's sensitivity rhs) by
 *   central differences with the step ot__fd_step of the parameter. */
#ifndef OT_SRC_SOLVE_DQ_H
#define OT_SRC_SOLVE_DQ_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "core/host_device.h"

/* Central-difference step for a parameter of value v. */
static inline OT__HD double ot__fd_step(double v)
{
    return cbrt(DBL_EPSILON) * fmax(fabs(v), 1.0);
}

/* A lane's min_inc from its rhs f and error weights w (n entries each). */
static inline OT__HD double ot__dq_min_inc(const double *f, const double *w, int64_t n,
                                           double h)
{
    double fnorm = 0;
    for (int64_t i = 0; i < n; i++)
        fnorm += (f[i] * w[i]) * (f[i] * w[i]);
    fnorm = sqrt(fnorm / (double)n);
    return fnorm != 0 ? 1000 * fabs(h) * DBL_EPSILON * (double)n * fnorm : 1.0;
}

/* The increment for a state of value y with error weight w. */
static inline OT__HD double ot__dq_inc(double y, double w, double min_inc)
{
    return fmax(sqrt(DBL_EPSILON) * fabs(y), min_inc / w);
}

/* Column j of a lane's block from f at the perturbed state (ft) and at y
 * (fd): CVODE's (1 / inc) * (ft - fd) (N_VLinearSum(1/inc, ft, -1/inc, fd)
 * is c * (x - y) in SUNDIALS' serial vector), not (ft - fd) / inc, which
 * rounds differently: every driver forms it here so that one lane of
 * lockstep, lanes mode and raw CVODE agree bit for bit. */
static inline OT__HD void ot__dq_column(const double *ft, const double *fd, double inc,
                                        double *col, int64_t n)
{
    const double inv = 1.0 / inc;
    for (int64_t i = 0; i < n; i++)
        col[i] = inv * (ft[i] - fd[i]);
}

#endif

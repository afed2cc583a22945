/* Compiled test models (odetensor/kernel.h): one source, built as C into
 * the test suite (kmodels_c.c) and by nvcc into the CUDA tests
 * (cuda/kmodels.cu), both through kmodels.inc. Each returns 0, > 0 for a
 * smaller step, < 0 to fail. */
#ifndef OT_TESTS_KMODELS_H
#define OT_TESTS_KMODELS_H

#include <odetensor/kernel.h>

/* Robertson's kinetics, rates p = (k1, k2, k3), with its Jacobian: the
 * CUDA example's model (robertson_rhs, robertson_jac), the one source. */
#include "../examples/cuda/robertson_model.h"

/* A forced Van der Pol oscillator (it reads t), mu = p[0]; no Jacobian. */
OT_HD int km_vdp_rhs(double t, const double *y, const double *p, double *f)
{
    f[0] = y[1];
    f[1] = p[0] * (1 - y[0] * y[0]) * y[1] - y[0] + 0.1 * sin(t);
    return 0;
}

/* y' = -p0 y with a wall: past y < p1 the rhs asks for a retry, past
 * t > p2 it fails (returns -1): lanes whose p1, p2 are out of reach
 * solve y0 exp(-p0 t). */
OT_HD int km_decay_rhs(double t, const double *y, const double *p, double *f)
{
    if (t > p[2])
        return -1;
    if (y[0] < p[1])
        return 1;
    f[0] = -p[0] * y[0];
    return 0;
}

/* Two decays, y' = (-k y0, -2 k y1) with k = p[0]: st_decay_rhs compiled
 * (check_core_api's rows). */
OT_HD int km_twodecay_rhs(double t, const double *y, const double *p, double *f)
{
    (void)t;
    f[0] = -p[0] * y[0];
    f[1] = -2.0 * p[0] * y[1];
    return 0;
}

#endif

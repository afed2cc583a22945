/* Robertson's kinetics as one model source for the CPU and the GPU
 * (odetensor/kernel.h's OT_HD: host-device under nvcc, plain inline in C):
 * kernel_robertson.cu and bench/gpu_kernels.cu compile it into the kernel
 * methods with <odetensor/kernel_model.inc>. */
#ifndef OT_EXAMPLES_CUDA_ROBERTSON_MODEL_H
#define OT_EXAMPLES_CUDA_ROBERTSON_MODEL_H

#include <odetensor/kernel.h>

/* The model: rates p = (k1, k2, k3). Returns 0 (a value > 0 would ask for a
 * smaller step, < 0 fail the lane). */
OT_HD int robertson_rhs(double t, const double *y, const double *p, double *f)
{
    (void)t;
    const double r1 = p[0] * y[0], r2 = p[1] * y[1] * y[2], r3 = p[2] * y[1] * y[1];
    f[0] = -r1 + r2;
    f[1] = r1 - r2 - r3;
    f[2] = r3;
    return 0;
}

/* d f_i / d y_j at J[i + 3 j]; J arrives zeroed, so only the nonzeros. */
OT_HD int robertson_jac(double t, const double *y, const double *p, double *J)
{
    (void)t;
    J[0] = -p[0];
    J[1] = p[0];
    J[3] = p[1] * y[2];
    J[4] = -p[1] * y[2] - 2 * p[2] * y[1];
    J[5] = 2 * p[2] * y[1];
    J[6] = p[1] * y[1];
    J[7] = -p[1] * y[1];
    return 0;
}

#endif

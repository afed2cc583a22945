/* Robertson kinetics on the device: one thread per lane. The callbacks get
 * [3, nb] views of device memory (column b is lane b) and launch on the
 * default stream, as odetensor's CUDA lockstep expects. */
#include "robertson_kernels.h"

/* Lane b's rhs (and Jacobian) from its state y and rates k; shared by the
 * kernels and the host versions so both compute the same numbers. */
__host__ __device__ static void rhs_lane(const double *y, const double *k, double *d)
{
    d[0] = -k[0] * y[0] + k[1] * y[1] * y[2];
    d[2] = k[2] * y[1] * y[1];
    d[1] = -d[0] - d[2];
}

/* a: the lane's 3 x 3 block, column-major, zeroed by the solver. */
__host__ __device__ static void jac_lane(const double *y, const double *k, double *a)
{
    a[0] = -k[0];
    a[1] = k[0];
    a[3] = k[1] * y[2];
    a[4] = -k[1] * y[2] - 2 * k[2] * y[1];
    a[5] = 2 * k[2] * y[1];
    a[6] = k[1] * y[1];
    a[7] = -k[1] * y[1];
}

__global__ static void rhs_kernel(const double *y, const double *k, double *d, int64_t nb)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb)
        rhs_lane(y + 3 * b, k + 3 * b, d + 3 * b);
}

__global__ static void jac_kernel(const double *y, const double *k, double *a, int64_t nb)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb)
        jac_lane(y + 3 * b, k + 3 * b, a + 9 * b);
}

static unsigned blocks(int64_t nb) { return (unsigned)((nb + 255) / 256); }

extern "C" int robertson_rhs_gpu(double t, ot_view y, ot_view p, ot_view_mut dydt,
                                 void *u)
{
    (void)t, (void)u;
    const int64_t nb = y.layout.shape[1];
    rhs_kernel<<<blocks(nb), 256>>>(ot_view_col_f64(y, 0, 0), ot_view_col_f64(p, 0, 0),
                                    ot_view_mut_col_f64(dydt, 0, 0), nb);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int robertson_jac_gpu(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    const int64_t nb = y.layout.shape[1];
    jac_kernel<<<blocks(nb), 256>>>(ot_view_col_f64(y, 0, 0), ot_view_col_f64(p, 0, 0),
                                    ot_view_mut_col_f64(J, 0, 0), nb);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int robertson_rhs_cpu(double t, ot_view y, ot_view p, ot_view_mut dydt,
                                 void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        rhs_lane(ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0),
                 ot_view_mut_col_f64(dydt, b, 0));
    return 0;
}

extern "C" int robertson_jac_cpu(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        jac_lane(ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0),
                 ot_view_mut_col_f64(J, 0, b));
    return 0;
}

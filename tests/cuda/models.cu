/* Device models for the CUDA tests: one thread per lane. */
#include <cuda_runtime.h>

#include "models.h"

static unsigned blocks(int64_t nb) { return (unsigned)((nb + 255) / 256); }

__global__ static void decay_k(const double *y, const double *k, double *d, int64_t nb)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb)
        d[b] = -k[b] * y[b];
}

__global__ static void osc_k(const double *y, const double *w, double *d, int64_t nb)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb) {
        d[2 * b] = y[2 * b + 1];
        d[2 * b + 1] = -w[b] * w[b] * y[2 * b];
    }
}

__global__ static void fall_k(const double *y, double *d, int64_t nb)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb) {
        d[2 * b] = y[2 * b + 1];
        d[2 * b + 1] = -9.81;
    }
}

__global__ static void ground_k(const double *y, double *g, int64_t nb)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb)
        g[b] = y[2 * b];
}

static int launched(void) { return cudaGetLastError() == cudaSuccess ? 0 : -1; }

extern "C" int decay_gpu(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)u;
    const int64_t nb = y.layout.shape[1];
    decay_k<<<blocks(nb), 256>>>(ot_view_col_f64(y, 0, 0), ot_view_col_f64(p, 0, 0),
                                 ot_view_mut_col_f64(d, 0, 0), nb);
    return launched();
}

extern "C" int decay_fail_gpu(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    return t > 1.0 ? -1 : decay_gpu(t, y, p, d, u);
}

extern "C" int osc_gpu(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)u;
    const int64_t nb = y.layout.shape[1];
    osc_k<<<blocks(nb), 256>>>(ot_view_col_f64(y, 0, 0), ot_view_col_f64(p, 0, 0),
                               ot_view_mut_col_f64(d, 0, 0), nb);
    return launched();
}

extern "C" int fall_gpu(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)p, (void)u;
    const int64_t nb = y.layout.shape[1];
    fall_k<<<blocks(nb), 256>>>(ot_view_col_f64(y, 0, 0), ot_view_mut_col_f64(d, 0, 0),
                                nb);
    return launched();
}

extern "C" int ground_gpu(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    const int64_t nb = y.layout.shape[1];
    ground_k<<<blocks(nb), 256>>>(ot_view_col_f64(y, 0, 0), ot_view_mut_col_f64(g, 0, 0),
                                  nb);
    return launched();
}

extern "C" double *dev_alloc(size_t count)
{
    double *p = NULL;
    return cudaMalloc((void **)&p, count * sizeof(double)) == cudaSuccess ? p : NULL;
}

extern "C" void dev_free(void *p) { cudaFree(p); }

extern "C" int to_device(double *dst, const double *src, size_t count)
{
    return cudaMemcpy(dst, src, count * sizeof(double), cudaMemcpyHostToDevice) ==
                   cudaSuccess
               ? 0
               : -1;
}

extern "C" int to_host(double *dst, const void *src, size_t bytes)
{
    return cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) == cudaSuccess ? 0 : -1;
}

/* Lane `bad` writes NaN once t > 0.5 (the others decay). */
__global__ static void decay_nan_k(const double *y, const double *k, double *d,
                                   int64_t nb, int64_t bad, int late)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb)
        d[b] =
            b == bad && late ? __longlong_as_double(0x7ff8000000000000LL) : -k[b] * y[b];
}

extern "C" int decay_nan_gpu(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)u;
    const int64_t nb = y.layout.shape[1];
    decay_nan_k<<<blocks(nb), 256>>>(ot_view_col_f64(y, 0, 0), ot_view_col_f64(p, 0, 0),
                                     ot_view_mut_col_f64(d, 0, 0), nb, 3, t > 0.5);
    return launched();
}

extern "C" int decay_lane0_gpu(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)u;
    /* Written for one lane: only column 0. */
    decay_k<<<1, 1>>>(ot_view_col_f64(y, 0, 0), ot_view_col_f64(p, 0, 0),
                      ot_view_mut_col_f64(d, 0, 0), 1);
    return launched();
}

extern "C" int cuda_current_device(int *dev)
{
    return cudaGetDevice(dev) == cudaSuccess ? 0 : -1;
}

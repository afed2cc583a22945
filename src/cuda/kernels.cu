/* Small kernels of the CUDA lockstep backend: broadcast, masking, the
 * all-lane difference quotients (increments from kit/dq.h), f32
 * conversion and NaN padding. One thread
 * per lane unless noted; all on the default stream. */
#include <math.h>

#include "cuda/cuda_impl.h"

namespace
{

__device__ int64_t lane_index() { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }

__global__ void replicate(double *dst, int64_t rows, int64_t nbatch)
{
    const int64_t b = lane_index();
    if (b > 0 && b < nbatch)
        for (int64_t r = 0; r < rows; r++)
            dst[b * rows + r] = dst[r];
}

__global__ void zero_masked(double *v, const unsigned char *mask, int64_t rows,
                            int64_t nbatch)
{
    const int64_t b = lane_index();
    if (b < nbatch && mask[b])
        for (int64_t r = 0; r < rows; r++)
            v[b * rows + r] = 0;
}

__global__ void dq_perturb(const double *y, const double *fy, const double *ewt,
                           double *yt, double *inc, int64_t n, int64_t nbatch, int64_t j,
                           double h)
{
    const int64_t b = lane_index();
    if (b >= nbatch)
        return;
    const double min_inc = ot__dq_min_inc(fy + b * n, ewt + b * n, n, h);
    const int64_t k = b * n + j;
    const double d = ot__dq_inc(y[k], ewt[k], min_inc);
    inc[b] = d;
    yt[k] = y[k] + d;
}

__global__ void dq_column(const double *ft, const double *fy, const double *inc,
                          const double *y, double *yt, double *a, int64_t n,
                          int64_t nbatch, int64_t j)
{
    const int64_t b = lane_index();
    if (b >= nbatch)
        return;
    ot__dq_column(ft + b * n, fy + b * n, inc[b], a + b * n * n + j * n, n);
    yt[b * n + j] = y[b * n + j];
}

__global__ void fd_prepare(const double *y, const double *s, const double *p, double *yp,
                           double *ym, double *pp, double *inc, int64_t n, int64_t np,
                           int64_t nbatch, int64_t j)
{
    const int64_t b = lane_index();
    if (b >= nbatch)
        return;
    const double h = ot__fd_step(p[b * np + j]);
    inc[b] = h;
    for (int64_t k = b * n; k < (b + 1) * n; k++) {
        const double d = s ? h * s[k] : 0.0;
        yp[k] = y ? y[k] + d : 0.0;
        ym[k] = y ? y[k] - d : 0.0;
    }
    for (int64_t q = 0; q < np; q++)
        pp[b * np + q] = p[b * np + q];
    pp[b * np + j] += h;
}

__global__ void fd_minus(const double *p, double *pp, const double *inc, int64_t np,
                         int64_t nbatch, int64_t j)
{
    const int64_t b = lane_index();
    if (b < nbatch)
        pp[b * np + j] = p[b * np + j] - inc[b];
}

__global__ void fd_combine(double *plus, const double *minus, const double *inc,
                           int64_t rows, int64_t nbatch)
{
    const int64_t b = lane_index();
    if (b < nbatch)
        for (int64_t r = b * rows; r < (b + 1) * rows; r++)
            plus[r] = (plus[r] - minus[r]) / (2 * inc[b]);
}

/* One thread per (k, b) output column. */
__global__ void nan_after(void *ys, int f32, const long long *counts, int64_t rows,
                          int64_t nt, int64_t nbatch)
{
    for (int64_t c = lane_index(); c < nt * nbatch;
         c += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = c % nt, b = c / nt;
        if (k < counts[b])
            continue;
        for (int64_t r = 0; r < rows; r++) {
            const int64_t at = (b * nt + k) * rows + r;
            if (f32)
                ((float *)ys)[at] = NAN;
            else
                ((double *)ys)[at] = NAN;
        }
    }
}

/* Column i of a [rows, nt, nbatch] device output from compact [rows, nbatch]. */
__global__ void scatter(const double *src, void *dst, int f32, int64_t rows, int64_t nt,
                        int64_t nbatch, int64_t i)
{
    for (int64_t c = lane_index(); c < rows * nbatch;
         c += (int64_t)gridDim.x * blockDim.x) {
        const int64_t b = c / rows, r = c % rows, at = (b * nt + i) * rows + r;
        if (f32)
            ((float *)dst)[at] = (float)src[c];
        else
            ((double *)dst)[at] = src[c];
    }
}

/* The lowest index of a non-finite value into *first (atomicMin). */
__global__ void first_bad(const double *v, int64_t count, unsigned long long *first)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count && !isfinite(v[i]))
        atomicMin(first, (unsigned long long)i);
}

__global__ void poison(double *v, int64_t count)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        v[i] = __longlong_as_double((long long)OT__UNWRITTEN_BITS);
}

unsigned capped_grid(int64_t count)
{
    const int64_t g = (count + 255) / 256;
    return (unsigned)(g > 65535 ? 65535 : (g < 1 ? 1 : g));
}

} // namespace

void ot__cuda_replicate(double *dst, int64_t rows, int64_t nbatch)
{
    replicate<<<OT_CUDA_GRID(nbatch)>>>(dst, rows, nbatch);
}

void ot__cuda_zero_masked(double *v, const unsigned char *mask, int64_t rows,
                          int64_t nbatch)
{
    zero_masked<<<OT_CUDA_GRID(nbatch)>>>(v, mask, rows, nbatch);
}

void ot__cuda_dq_perturb(const double *y, const double *fy, const double *ewt, double *yt,
                         double *inc, int64_t n, int64_t nbatch, int64_t j, double h)
{
    dq_perturb<<<OT_CUDA_GRID(nbatch)>>>(y, fy, ewt, yt, inc, n, nbatch, j, h);
}

void ot__cuda_dq_column(const double *ft, const double *fy, const double *inc,
                        const double *y, double *yt, double *a, int64_t n, int64_t nbatch,
                        int64_t j)
{
    dq_column<<<OT_CUDA_GRID(nbatch)>>>(ft, fy, inc, y, yt, a, n, nbatch, j);
}

void ot__cuda_fd_prepare(const double *y, const double *s, const double *p, double *yp,
                         double *ym, double *pp, double *inc, int64_t n, int64_t np,
                         int64_t nbatch, int64_t j)
{
    fd_prepare<<<OT_CUDA_GRID(nbatch)>>>(y, s, p, yp, ym, pp, inc, n, np, nbatch, j);
}

void ot__cuda_fd_minus(const double *p, double *pp, const double *inc, int64_t np,
                       int64_t nbatch, int64_t j)
{
    fd_minus<<<OT_CUDA_GRID(nbatch)>>>(p, pp, inc, np, nbatch, j);
}

void ot__cuda_fd_combine(double *plus, const double *minus, const double *inc,
                         int64_t rows, int64_t nbatch)
{
    fd_combine<<<OT_CUDA_GRID(nbatch)>>>(plus, minus, inc, rows, nbatch);
}

void ot__cuda_nan_after(void *ys, int f32, const long long *counts, int64_t rows,
                        int64_t nt, int64_t nbatch)
{
    nan_after<<<capped_grid(nt * nbatch), 256>>>(ys, f32, counts, rows, nt, nbatch);
}

void ot__cuda_scatter(const double *src, void *dst, int f32, int64_t rows, int64_t nt,
                      int64_t nbatch, int64_t i)
{
    scatter<<<capped_grid(rows * nbatch), 256>>>(src, dst, f32, rows, nt, nbatch, i);
}

cudaError_t ot__cuda_first_nonfinite(const double *v, int64_t count,
                                     unsigned long long *word, int64_t *index,
                                     double *value)
{
    unsigned long long first = ~0ULL;
    *index = -1;
    cudaError_t e = cudaMemcpy(word, &first, sizeof first, cudaMemcpyHostToDevice);
    if (e == cudaSuccess && count > 0) {
        first_bad<<<OT_CUDA_GRID(count)>>>(v, count, word);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpy(&first, word, sizeof first, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && first != ~0ULL) {
        *index = (int64_t)first;
        e = cudaMemcpy(value, v + first, sizeof *value, cudaMemcpyDeviceToHost);
    }
    return e;
}

void ot__cuda_poison(double *v, int64_t count)
{
    if (count > 0)
        poison<<<OT_CUDA_GRID(count)>>>(v, count);
}

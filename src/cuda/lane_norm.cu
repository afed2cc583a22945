/* The per-lane WRMS norm on the device: each thread sums one lane's squares,
 * a block takes the max, and blocks meet in one atomicMax on the bit pattern
 * (non-negative doubles order like their bits, and NaN above all of them, so
 * a NaN lane still makes the norm NaN). */
#include <math.h>
#include <string.h>

#include "cuda/cuda_impl.h"

namespace
{

/* The lane size and result word of this thread's solve: CVODE calls the
 * norm from the thread that called the solve, and clones of the vector
 * share these ops, so the state lives with the thread. */
thread_local int64_t lane_n;
thread_local unsigned long long *lane_word;
thread_local const unsigned char *lane_mask; /* device: lanes left out */

__global__ void lane_sumsq(const double *x, const double *w, const double *id, int64_t n,
                           int64_t nbatch, const unsigned char *mask,
                           unsigned long long *out)
{
    __shared__ double best[256];
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    double s = 0;
    /* A lane stopped by its root stands still: its stale step history must
     * not hold back the others. */
    if (b < nbatch && !(mask && mask[b]))
        for (int64_t k = b * n; k < (b + 1) * n; k++)
            if (!id || id[k] > 0) {
                const double v = x[k] * w[k];
                s += v * v;
            }
    best[threadIdx.x] = s;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) {
            const double a = best[threadIdx.x], c = best[threadIdx.x + stride];
            best[threadIdx.x] = isnan(a) ? a : (isnan(c) || c > a ? c : a);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicMax(out, (unsigned long long)__double_as_longlong(best[0]));
}

sunrealtype lane_norm(N_Vector x, N_Vector w, N_Vector id)
{
    const int64_t len = N_VGetLength(x), n = lane_n, nbatch = len / n;
    unsigned long long word = 0;
    if (cudaMemsetAsync(lane_word, 0, sizeof word) != cudaSuccess)
        return NAN;
    lane_sumsq<<<OT_CUDA_GRID(nbatch)>>>(ot__dptr(x), ot__dptr(w),
                                         id ? ot__dptr(id) : NULL, n, nbatch, lane_mask,
                                         lane_word);
    /* A launch that failed leaves the word at 0: a norm of 0 would accept
     * every step. NaN fails CVODE's tests instead, and the batch stops. */
    if (cudaGetLastError() != cudaSuccess ||
        cudaMemcpy(&word, lane_word, sizeof word, cudaMemcpyDeviceToHost) != cudaSuccess)
        return NAN; /* CVODE then fails its tests and the batch stops */
    double worst;
    memcpy(&worst, &word, sizeof worst);
    return sqrt(worst / (double)n);
}

sunrealtype wrms(N_Vector x, N_Vector w) { return lane_norm(x, w, NULL); }
sunrealtype wrms_mask(N_Vector x, N_Vector w, N_Vector id) { return lane_norm(x, w, id); }

} // namespace

void ot__cuda_lane_norm(N_Vector v, int64_t n, const unsigned char *mask,
                        unsigned long long *word)
{
    lane_n = n;
    lane_word = word;
    lane_mask = mask;
    ot__lockstep_set_norm(v, wrms, wrms_mask);
}

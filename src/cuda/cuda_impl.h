/* Private: the CUDA lockstep backend (built by `make cuda`). Vectors are
 * NVECTOR_CUDA over [n, nbatch]; the block LU, the per-lane norm, the
 * difference quotients and all data movement run on the device. Kernels run
 * on the default stream, the one user callbacks are told to use. */
#ifndef OT_SRC_CUDA_IMPL_H
#define OT_SRC_CUDA_IMPL_H

#include <cuda_runtime.h>
#include <nvector/nvector_cuda.h>

#include "lockstep/lockstep.h"
#include "kit/dq.h"

/* Device-side state of one lockstep solve, L->dev. Every pointer is device
 * memory owned by the solve (cudaFree in state_free, lockstep_cuda.cu). */
typedef struct {
    int device;
    double *p, *pp;           /* [np, nbatch] params, perturbed params */
    double *o, *o2;           /* [rows, nbatch] out scratch */
    double *yp, *ym;          /* [n, nbatch] perturbed states */
    double *inc;              /* [nbatch] per-lane increments */
    double *g;                /* [nroots, nbatch] root values */
    unsigned char *mask;      /* [nbatch] lanes stopped by a root */
    int any_stopped;          /* host copy: is any mask entry set */
    double *stage;            /* [rows, nbatch] pinned host staging for host outputs */
    long long *counts;        /* [nbatch] lane counts for the NaN padding */
    unsigned long long *word; /* one word for norm reductions */
    unsigned long long *bad;  /* one word: the first non-finite callback output */
    /* Host outputs of a dense solve: device mirrors of ys and each
     * sensitivity ([1 + nsens], each [rows, nt, nbatch] in the output
     * dtype), copied to the host once at the end; NULL: stores go to the
     * host per output (the mirrors could not be allocated). */
    void **mirror;
    int64_t nmirror;
} ot__cuda_state;

/* One launch covering `count` items, 256 threads a block. */
#define OT_CUDA_GRID(count) (unsigned)(((count) + 255) / 256), 256u

/* ---- lane_norm.cu --------------------------------------------------------- */

/* Makes v's WRMS norms (and those of its clones) the maximum over lanes of
 * each lane's norm, for lanes of n entries, leaving out lanes with mask[b]
 * set (device memory), reduced on the device into word. */
void ot__cuda_lane_norm(N_Vector v, int64_t n, const unsigned char *mask,
                        unsigned long long *word);

/* ---- block_lu.cu ---------------------------------------------------------- */

/* Block-diagonal matrix on the device, [n, n, nbatch] column-major, its data
 * at ot__lockstep_block_data. Ownership: the caller's (SUNMatDestroy). NULL
 * when out of memory. */
SUNMatrix ot__cuda_block_matrix_new(int64_t n, int64_t nbatch, SUNContext ctx);
/* Batched LU of the blocks: own kernel (one thread a lane), or cuBLAS
 * getrf/getrsBatched when use_cublas. NULL when out of memory. */
SUNLinearSolver ot__cuda_block_solver_new(int64_t n, int64_t nbatch, int use_cublas,
                                          SUNContext ctx);

/* ---- kernels.cu: host wrappers, all on the default stream ---------------- */

/* dst[:, b] = dst[:, 0] for every lane b (a broadcast one-lane input). */
void ot__cuda_replicate(double *dst, int64_t rows, int64_t nbatch);
/* v[:, b] = 0 for lanes with mask[b]. */
void ot__cuda_zero_masked(double *v, const unsigned char *mask, int64_t rows,
                          int64_t nbatch);
/* One column of the difference-quotient Jacobian, as in CVODE's dense DQ. */
void ot__cuda_dq_perturb(const double *y, const double *fy, const double *ewt, double *yt,
                         double *inc, int64_t n, int64_t nbatch, int64_t j, double h);
void ot__cuda_dq_column(const double *ft, const double *fy, const double *inc,
                        const double *y, double *yt, double *a, int64_t n, int64_t nbatch,
                        int64_t j);
/* Central differences along (s, e_j): yp = y + h s, ym = y - h s (s may be
 * NULL: zero), pp = p with p[j] + h; h per lane into inc. */
void ot__cuda_fd_prepare(const double *y, const double *s, const double *p, double *yp,
                         double *ym, double *pp, double *inc, int64_t n, int64_t np,
                         int64_t nbatch, int64_t j);
/* pp[j, b] = p[j, b] - inc[b]. */
void ot__cuda_fd_minus(const double *p, double *pp, const double *inc, int64_t np,
                       int64_t nbatch, int64_t j);
/* plus[:, b] = (plus - minus) / (2 inc[b]). */
void ot__cuda_fd_combine(double *plus, const double *minus, const double *inc,
                         int64_t rows, int64_t nbatch);
/* Column [:, i, :] of a [rows, nt, nbatch] device output from compact [rows, nbatch],
 * converted to f32 when f32. */
void ot__cuda_scatter(const double *src, void *dst, int f32, int64_t rows, int64_t nt,
                      int64_t nbatch, int64_t i);
/* NaN at [:, k, b] for k >= counts[b], in a [rows, nt, nbatch] device tensor. */
void ot__cuda_nan_after(void *ys, int f32, const long long *counts, int64_t rows,
                        int64_t nt, int64_t nbatch);

/* The lowest index of a NaN/Inf in v[0, count) into *index (-1: none) and
 * its value into *value, through the device word `word`; synchronous. */
cudaError_t ot__cuda_first_nonfinite(const double *v, int64_t count,
                                     unsigned long long *word, int64_t *index,
                                     double *value);
/* v[0, count) = the unwritten NaN (kit/callback.h), before a callback's
 * first call: a column it leaves is reported by name. */
void ot__cuda_poison(double *v, int64_t count);

/* ---- callbacks.cu --------------------------------------------------------- */

/* The CVODE callbacks on device vectors. */
extern const ot__lockstep_callbacks ot__cuda_callbacks;
/* Views over device storage, [rows, nbatch] f64 on L's device. */
ot_view ot__cuda_view(const ot__lockstep *L, const double *d, int64_t rows);
ot_view_mut ot__cuda_mut(const ot__lockstep *L, double *d, int64_t rows);
/* Fills v[0, count) with the unwritten NaN before callback `which`'s first
 * call in this batch (lockstep.h's OT__POISONED_*). */
void ot__cuda_poison_first(ot__lockstep *L, unsigned which, double *v, int64_t count);
/* What a callback wrote into device memory v ([rows, nbatch]), checked on
 * the device as the CPU path checks it: NaN/Inf named by element and lane
 * (recoverable a few times for rhs and jac), a column never written named as
 * such. One small kernel and one word copied back per call. @return 0 or
 * CVODE's code (1 retry, -1 stop). */
int ot__cuda_finite(ot__lockstep *L, const char *name, const char *target,
                    const double *v, int64_t rows, double t, ot__cb_kind kind);
/* Records a failed CUDA call or a launch error after a user callback. */
int ot__cuda_check(ot__lockstep *L, cudaError_t e, const char *what);

static inline double *ot__dptr(N_Vector v) { return N_VGetDeviceArrayPointer_Cuda(v); }

#endif

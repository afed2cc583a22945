/* Lockstep on a CUDA device: setup of NVECTOR_CUDA, the device block LU and
 * the callbacks, moving inputs in and outputs out, and the solver's entries
 * in the solver table (cuda/backend.h). The loops are lockstep/loops.c's. */
#include <cvodes/cvodes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "cuda/backend.h"
#include "core/error.h"
#include "tensor/layout.h"
#include "kit/nv_clone.h"
#include "core/test_hooks.h"
#include "solution/output.h"
#include "kit/sun_compat.h"
#include "tensor/tensor_impl.h"
#include "cuda/cuda_impl.h"

/* Test and benchmark hook: use cuBLAS' batched LU instead of the own kernel
 * for solves started on this thread. */
static thread_local int use_cublas;
extern "C" void ot__cuda_use_cublas(int on) { use_cublas = on; }

namespace
{

ot__cuda_state *state(const ot__lockstep *L) { return (ot__cuda_state *)L->dev; }

void state_free(ot__cuda_state *S)
{
    if (S == NULL)
        return;
    void *ptrs[] = {S->p,   S->pp, S->o,    S->o2,     S->yp,   S->ym,
                    S->inc, S->g,  S->mask, S->counts, S->word, S->bad};
    for (void *p : ptrs)
        cudaFree(p);
    for (int64_t k = 0; S->mirror && k < S->nmirror; k++)
        cudaFree(S->mirror[k]);
    free(S->mirror);
    cudaFreeHost(S->stage);
    free(S);
}

template <typename T> bool dalloc(T **p, size_t count)
{
    return cudaMalloc((void **)p, (count ? count : 1) * sizeof(T)) == cudaSuccess;
}

/* Copies a lane input (host or device, [rows] / [rows, 1] broadcast or
 * [rows, nbatch] with any column stride) into compact device [rows, nbatch]. */
cudaError_t upload(double *dst, ot_view v, int64_t rows, int64_t nbatch)
{
    const ot_layout *l = &v.layout;
    if (rows == 0)
        return cudaSuccess;
    const size_t width = (size_t)rows * sizeof(double);
    if (l->shape[1] == 1) {
        cudaError_t e = cudaMemcpy(dst, l->data, width, cudaMemcpyDefault);
        if (e == cudaSuccess && nbatch > 1)
            ot__cuda_replicate(dst, rows, nbatch);
        return e == cudaSuccess ? cudaGetLastError() : e;
    }
    return cudaMemcpy2D(dst, width, l->data, (size_t)l->strides[1], width, (size_t)nbatch,
                        cudaMemcpyDefault);
}

void free_solver(ot__lockstep *L)
{
    ot__lockstep_free_common(L);
    free(L->p);
    state_free(state(L));
}

/* y0 into L->y (given, or from init on the device), and the initial
 * sensitivities: zero, or central differences of init. */
int initial_state(ot__lockstep *L)
{
    const ot__plan *pl = L->plan;
    const ot_ode *ode = pl->ode;
    ot__cuda_state *S = state(L);
    const int64_t n = L->n, nbatch = L->nbatch, np = L->np;
    double *y = ot__dptr(L->y);
    if (pl->has_y0) {
        if (ot__cuda_check(L, upload(y, pl->y0, n, nbatch), "y0 upload"))
            return OT_ERR_SOLVER;
    } else {
        ot__cuda_poison_first(L, OT__POISONED_INIT, y, n * nbatch);
        int rc = ode->init(ot__cuda_view(L, S->p, np), ot__cuda_mut(L, y, n), ode->user);
        if (rc != 0 || cudaGetLastError() != cudaSuccess) {
            ot__cb_note(&L->cb, -1, "init returned %d", rc);
            return OT_ERR_CALLBACK;
        }
        if (ot__cuda_finite(L, "init", "y0", y, n, NAN, OT__CB_FINAL) != 0)
            return OT_ERR_CALLBACK;
    }
    for (int64_t j = 0; pl->kind == OT__SENS && j < np; j++) {
        N_VConst(0.0, L->yS[j]);
        if (pl->has_y0)
            continue;
        ot__cuda_fd_prepare(NULL, NULL, S->p, S->yp, S->ym, S->pp, S->inc, n, np, nbatch,
                            j);
        int rc =
            ode->init(ot__cuda_view(L, S->pp, np), ot__cuda_mut(L, S->yp, n), ode->user);
        ot__cuda_fd_minus(S->p, S->pp, S->inc, np, nbatch, j);
        if (rc == 0)
            rc = ode->init(ot__cuda_view(L, S->pp, np), ot__cuda_mut(L, S->ym, n),
                           ode->user);
        if (rc != 0) {
            ot__cb_note(&L->cb, -1, "init returned %d", rc);
            return OT_ERR_CALLBACK;
        }
        ot__cuda_fd_combine(S->yp, S->ym, S->inc, n, nbatch);
        if (ot__cuda_check(L,
                           cudaMemcpy(ot__dptr(L->yS[j]), S->yp,
                                      (size_t)(n * nbatch) * sizeof(double),
                                      cudaMemcpyDeviceToDevice),
                           "sensitivity start"))
            return OT_ERR_SOLVER;
    }
    return OT_OK;
}

int upload_lanes(ot__lockstep *L, N_Vector v, const double *host)
{
    const size_t count = (size_t)(L->n * L->nbatch);
    const cudaError_t e =
        cudaMemcpy(ot__dptr(v), host, count * sizeof *host, cudaMemcpyHostToDevice);
    return ot__cuda_check(L, e, "tolerance upload") ? OT_ERR_SOLVER : OT_OK;
}

void make_linear(ot__lockstep *L)
{
    L->A = ot__cuda_block_matrix_new(L->n, L->nbatch, L->ctx);
    L->LS = L->A ? ot__cuda_block_solver_new(L->n, L->nbatch, use_cublas, L->ctx) : NULL;
}

/* The device mask follows L->stopped: zeroed derivatives and Jacobian
 * blocks, and no say in the norm, for lanes stopped by a root. */
void stopped_changed(ot__lockstep *L)
{
    ot__cuda_state *S = state(L);
    S->any_stopped = 1;
    ot__cuda_check(
        L, cudaMemcpy(S->mask, L->stopped, (size_t)L->nbatch, cudaMemcpyHostToDevice),
        "stopped lanes");
}

int emit(ot__lockstep *L, ot_solution *sol, double t, N_Vector yv);
int host_rows(ot__lockstep *L, double t, N_Vector y, double *dst);

const ot__lockstep_backend cuda_backend = {
    .emit = emit,
    .host_rows = host_rows,
    .callbacks = &ot__cuda_callbacks,
    .upload = upload_lanes,
    .make_linear = make_linear,
    .stopped_changed = stopped_changed,
    .host_state = nullptr, /* events stop lanes only here (plan.c refuses the rest) */
    .initial_state = initial_state,
};

int make_solver(ot__lockstep *L, const ot__plan *pl, ot__cuda_state *S)
{
    const size_t n = (size_t)L->n, nbatch = (size_t)L->nbatch, np = (size_t)L->np;
    const size_t rows = (size_t)L->rows, nr = (size_t)pl->ode->nroots;
    L->stopped = (unsigned char *)calloc(nbatch, 1);
    L->rootsfound = (int *)malloc((nr * nbatch + 1) * sizeof *L->rootsfound);
    if (!L->stopped || !L->rootsfound)
        return OT_ERR_NOMEM;
    if (!dalloc(&S->p, np * nbatch) || !dalloc(&S->pp, np * nbatch) ||
        !dalloc(&S->o, rows * nbatch) || !dalloc(&S->o2, rows * nbatch) ||
        !dalloc(&S->yp, n * nbatch) || !dalloc(&S->ym, n * nbatch) ||
        !dalloc(&S->inc, nbatch) || !dalloc(&S->g, nr * nbatch) ||
        !dalloc(&S->mask, nbatch) ||
        cudaMallocHost((void **)&S->stage, (rows * nbatch + 1) * sizeof(double)) !=
            cudaSuccess ||
        !dalloc(&S->counts, nbatch) || !dalloc(&S->word, 1) || !dalloc(&S->bad, 1) ||
        cudaMemset(S->mask, 0, nbatch) != cudaSuccess ||
        ot__sun_context_new(&L->ctx, &L->cb) != 0)
        return OT_ERR_NOMEM;
    if (np > 0 &&
        ot__cuda_check(L, upload(S->p, pl->p, L->np, L->nbatch), "params upload"))
        return OT_ERR_SOLVER;
    if (pl->kind == OT__SENS) { /* a host copy for the sensitivity tolerances */
        if ((L->p = (double *)malloc(np * nbatch * sizeof *L->p)) == NULL)
            return OT_ERR_NOMEM;
        if (ot__cuda_check(L,
                           cudaMemcpy(L->p, S->p, np * nbatch * sizeof *L->p,
                                      cudaMemcpyDeviceToHost),
                           "params download"))
            return OT_ERR_SOLVER;
    }
    L->y = N_VNew_Cuda(L->n * L->nbatch, L->ctx);
    if (L->y == NULL)
        return OT_ERR_NOMEM;
    ot__cuda_lane_norm(L->y, L->n, S->mask, S->word);
    return ot__lockstep_finish_setup(L);
}

/* ---- Backend: moving results out ---------------------------------------- */

/* The rows recorded at (t, y) for all lanes, on the device: y or out's. */
const double *device_rows(ot__lockstep *L, double t, const double *y, int *st)
{
    const ot_ode *ode = L->plan->ode;
    ot__cuda_state *S = state(L);
    *st = OT_OK;
    if (!ode->out)
        return y;
    ot__cuda_poison_first(L, OT__POISONED_OUT, S->o, L->rows * L->nbatch);
    int rc = ode->out(t, ot__cuda_view(L, y, L->n), ot__cuda_view(L, S->p, L->np),
                      ot__cuda_mut(L, S->o, L->rows), ode->user);
    if (rc != 0 || cudaGetLastError() != cudaSuccess) {
        ot__cb_returned(&L->cb, "out", rc, t, OT__CB_FINAL);
        *st = OT_ERR_CALLBACK;
    } else if (ot__cuda_finite(L, "out", "o", S->o, L->rows, t, OT__CB_FINAL) != 0) {
        *st = OT_ERR_CALLBACK;
    }
    return S->o;
}

/* Output sensitivity j into S->o2: central differences of out. */
int out_sens(ot__lockstep *L, double t, const double *y, const double *s, int64_t j)
{
    const ot_ode *ode = L->plan->ode;
    ot__cuda_state *S = state(L);
    ot__cuda_fd_prepare(y, s, S->p, S->yp, S->ym, S->pp, S->inc, L->n, L->np, L->nbatch,
                        j);
    int rc = ode->out(t, ot__cuda_view(L, S->yp, L->n), ot__cuda_view(L, S->pp, L->np),
                      ot__cuda_mut(L, S->o2, L->rows), ode->user);
    ot__cuda_fd_minus(S->p, S->pp, S->inc, L->np, L->nbatch, j);
    if (rc == 0)
        rc = ode->out(t, ot__cuda_view(L, S->ym, L->n), ot__cuda_view(L, S->pp, L->np),
                      ot__cuda_mut(L, S->o, L->rows), ode->user);
    if (rc != 0 || cudaGetLastError() != cudaSuccess) {
        ot__cb_returned(&L->cb, "out", rc, t, OT__CB_FINAL);
        return OT_ERR_CALLBACK;
    }
    ot__cuda_fd_combine(S->o2, S->o, S->inc, L->rows, L->nbatch);
    return OT_OK;
}

/* Column [:, i, :] of output k (0: ys, 1 + j: sensitivity j) from device
 * rows [rows, nbatch]: a scatter kernel into device outputs or their
 * device mirrors; without a mirror one copy into pinned staging, then
 * per-lane stores (small strided device-to-host copies are slow). */
int store_column(ot__lockstep *L, const ot_tensor *t, int64_t k, int64_t i,
                 const double *src)
{
    const ot_layout *l = ot_tensor_layout(t);
    ot__cuda_state *S = state(L);
    void *dst = l->device.type == OT_CUDA ? l->data : S->mirror ? S->mirror[k] : NULL;
    if (dst != NULL) {
        ot__cuda_scatter(src, dst, l->dtype == OT_F32, L->rows, l->shape[1], L->nbatch,
                         i);
        return ot__cuda_check(L, cudaGetLastError(), "output scatter") ? OT_ERR_SOLVER
                                                                       : OT_OK;
    }
    if (ot__cuda_check(L,
                       cudaMemcpy(S->stage, src,
                                  (size_t)(L->rows * L->nbatch) * sizeof(double),
                                  cudaMemcpyDeviceToHost),
                       "output copy"))
        return OT_ERR_SOLVER;
    for (int64_t b = 0; b < L->nbatch; b++)
        ot__out_store(t, i, b, S->stage + b * L->rows, L->rows);
    return OT_OK;
}

/* Output i of every lane at once (the device gathers whole columns; CUDA
 * solves share their times, so every due lane stores the same index, and a
 * lane that is not due gets NaN there by its count). */
int emit(ot__lockstep *L, ot_solution *sol, double t, N_Vector yv)
{
    int64_t i = -1;
    for (int64_t b = 0; b < L->nbatch && i < 0; b++)
        i = L->at[b];
    const double *y = ot__dptr(yv);
    int st;
    const double *rows = device_rows(L, t, y, &st);
    if (st == OT_OK)
        st = store_column(L, sol->ys, 0, i, rows);
    for (int64_t j = 0; st == OT_OK && L->plan->kind == OT__SENS && j < L->np; j++) {
        const double *s = ot__dptr(L->yS[j]);
        if (L->plan->ode->out) {
            if ((st = out_sens(L, t, y, s, j)) != OT_OK)
                break;
            s = state(L)->o2;
        }
        st = store_column(L, sol->sens[j], 1 + j, i, s);
    }
    return st;
}

int host_rows(ot__lockstep *L, double t, N_Vector y, double *dst)
{
    int st;
    const double *rows = device_rows(L, t, ot__dptr(y), &st);
    if (st != OT_OK)
        return st;
    return ot__cuda_check(L,
                          cudaMemcpy(dst, rows,
                                     (size_t)(L->rows * L->nbatch) * sizeof *dst,
                                     cudaMemcpyDeviceToHost),
                          "step copy")
               ? OT_ERR_SOLVER
               : OT_OK;
}

void release_device(void *ctx) { cudaFree(ctx); }

/* A device tensor [rows, nt, nbatch] owned by the solution (freed with
 * cudaFree). */
int device_tensor(ot_tensor **out, const ot__plan *pl, const char *name)
{
    const ot_ode *ode = pl->ode;
    const int64_t shape[3] = {pl->rows, pl->nt, pl->nbatch};
    ot_layout l;
    /* The same shape and overflow checks as host outputs, on a placeholder
     * address; the real one comes from cudaMalloc. */
    int st = ot__layout_build(&l, (void *)(uintptr_t)64, ode->out_dtype, ode->device, 3,
                              shape, NULL, name);
    if (st != OT_OK)
        return st;
    const size_t bytes =
        (size_t)(pl->rows * pl->nt * pl->nbatch) * ot_dtype_size(ode->out_dtype);
    void *d = NULL;
    if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess)
        return ot__fail(OT_ERR_NOMEM, "%s: cannot allocate %zu bytes on CUDA device %d",
                        name, bytes, (int)ode->device.id);
    l.data = d;
    st = ot_tensor_wrap(out, &l, 0, release_device, d);
    if (st != OT_OK)
        cudaFree(d);
    return st;
}

int device_count(int *count, const char *who)
{
    int c = 0;
    const cudaError_t e = cudaGetDeviceCount(&c);
    *count = e == cudaSuccess ? c : 0;
    if (e != cudaSuccess || c == 0) {
        cudaGetLastError(); /* clear the sticky error for the next try */
        return ot__fail(OT_ERR_NO_CUDA, "%s: no CUDA device (%s)", who,
                        e == cudaSuccess ? "the driver reports none"
                                         : cudaGetErrorString(e));
    }
    return OT_OK;
}

/* Host outputs of a dense solve are gathered in device mirrors and copied
 * over once at the end: per-output copies into the strided host layout cost
 * more than the solve itself at a million lanes. Without memory for them
 * the stores go to the host per output instead. */
void make_mirrors(ot__cuda_state *S, const ot__plan *pl, const ot_solution *sol)
{
    if (pl->kind == OT__STEPS || ot_tensor_layout(sol->ys)->device.type == OT_CUDA)
        return;
    const int64_t count = 1 + sol->nsens;
    const size_t bytes = (size_t)ot_view_numel(ot_tensor_view(sol->ys)) *
                         ot_dtype_size(pl->ode->out_dtype);
    S->mirror = (void **)calloc((size_t)count, sizeof *S->mirror);
    if (S->mirror == NULL)
        return;
    S->nmirror = count;
    for (int64_t k = 0; k < count; k++)
        if (cudaMalloc(&S->mirror[k], bytes ? bytes : 1) != cudaSuccess) {
            cudaGetLastError();
            for (int64_t q = 0; q < k; q++)
                cudaFree(S->mirror[q]);
            free(S->mirror);
            S->mirror = NULL;
            S->nmirror = 0;
            return;
        }
}

/* The mirrors into the host outputs (both compact [rows, nt, nbatch]). */
int copy_mirrors(const ot__cuda_state *S, ot_solution *sol)
{
    cudaError_t e = cudaSuccess;
    for (int64_t k = 0; S->mirror && k < S->nmirror && e == cudaSuccess; k++) {
        const ot_tensor *h = k == 0 ? sol->ys : sol->sens[k - 1];
        const ot_layout *l = ot_tensor_layout(h);
        const size_t bytes =
            (size_t)ot_view_numel(ot_tensor_view(h)) * ot_dtype_size(l->dtype);
        e = cudaMemcpy(l->data, S->mirror[k], bytes, cudaMemcpyDeviceToHost);
    }
    return e == cudaSuccess
               ? OT_OK
               : ot__fail(OT_ERR_DEVICE, "solve: copying outputs to the host: %s",
                          cudaGetErrorString(e));
}

/* The device the plan asks for, checked and made current. */
int use_device(const ot__plan *pl)
{
    int count;
    int st = device_count(&count, "device");
    if (st != OT_OK)
        return st;
    if (pl->ode->device.id >= count)
        return ot__fail(OT_ERR_NO_CUDA, "device: CUDA device %d requested, %d present",
                        (int)pl->ode->device.id, count);
    const cudaError_t e = cudaSetDevice(pl->ode->device.id);
    if (e != cudaSuccess)
        return ot__fail(OT_ERR_NO_CUDA, "device: cudaSetDevice(%d): %s",
                        (int)pl->ode->device.id, cudaGetErrorString(e));
    return OT_OK;
}

} // namespace

extern "C" int ot_cuda_device_count(int *count)
{
    int c;
    const int st = device_count(&c, "ot_cuda_device_count");
    if (count)
        *count = c;
    return st;
}

extern "C" int ot__cuda_host_copy(ot_view v, ot_tensor **out, const char *name)
{
    const ot_layout *l = &v.layout;
    int count;
    int st = device_count(&count, name);
    if (st != OT_OK)
        return st;
    if (l->dtype != OT_F64)
        return ot__fail(OT_ERR_DTYPE, "%s: device inputs must be f64", name);
    ot_tensor *t;
    if ((st = ot_tensor_new(&t, OT_F64, l->ndim, l->shape)) != OT_OK)
        return st;
    /* Columns are contiguous (the layout rules): one copy per column. */
    cudaError_t e = cudaSuccess;
    const int64_t cols = l->shape[1] * l->shape[2];
    for (int64_t c = 0; e == cudaSuccess && c < cols; c++) {
        const int64_t j = c % l->shape[1], k = c / l->shape[1];
        e = cudaMemcpy((double *)ot_tensor_layout(t)->data + c * l->shape[0],
                       (const char *)l->data + j * l->strides[1] + k * l->strides[2],
                       (size_t)l->shape[0] * sizeof(double), cudaMemcpyDeviceToHost);
    }
    if (e != cudaSuccess) {
        ot_tensor_free(t);
        return ot__fail(OT_ERR_DEVICE, "%s: copy from the device failed: %s", name,
                        cudaGetErrorString(e));
    }
    *out = t;
    return OT_OK;
}

extern "C" int ot__cuda_alloc_output(ot_tensor **out, const ot__plan *pl,
                                     const char *name)
{
    if (!pl->ode->outputs_on_device) {
        const int64_t shape[3] = {pl->rows, pl->nt, pl->nbatch};
        return ot__tensor_alloc(out, (ot_dtype)pl->ode->out_dtype, 3, shape, name);
    }
    int prev = 0;
    cudaGetDevice(&prev);
    int st = use_device(pl);
    if (st == OT_OK)
        st = device_tensor(out, pl, name);
    cudaSetDevice(prev); /* the caller's current device, as it was */
    return st;
}

extern "C" int ot__cuda_pad_outputs(const ot__plan *pl, ot_solution *sol)
{
    long long *counts = NULL;
    static_assert(sizeof(long long) == sizeof(int64_t), "counts are int64");
    const size_t bytes = (size_t)pl->nbatch * sizeof(int64_t);
    cudaError_t e = cudaMalloc((void **)&counts, bytes ? bytes : 1);
    if (e == cudaSuccess)
        e = cudaMemcpy(counts, sol->count, bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        const int f32 = ot_tensor_layout(sol->ys)->dtype == OT_F32;
        ot__cuda_nan_after(ot_tensor_layout(sol->ys)->data, f32, counts, pl->rows, pl->nt,
                           pl->nbatch);
        for (int64_t j = 0; j < sol->nsens; j++)
            ot__cuda_nan_after(ot_tensor_layout(sol->sens[j])->data, f32, counts,
                               pl->rows, pl->nt, pl->nbatch);
        e = cudaGetLastError(); /* a launch that failed: no padding written */
        const cudaError_t s = cudaDeviceSynchronize();
        e = e != cudaSuccess ? e : s;
    }
    cudaFree(counts);
    return e == cudaSuccess
               ? OT_OK
               : ot__fail(OT_ERR_DEVICE, "solve: NaN padding on the device: %s",
                          cudaGetErrorString(e));
}

extern "C" int ot__cuda_run(const ot__plan *pl, const ot__sink *sk)
{
    /* The caller's current device comes back at the end: a library call
     * must not move a program's later CUDA work to another GPU. */
    int prev = 0;
    cudaGetDevice(&prev);
    int st = use_device(pl);
    if (st != OT_OK)
        return st;
    ot__lockstep L;
    ot__lockstep_init(&L, pl, &cuda_backend);
    ot__cuda_state *S = (ot__cuda_state *)calloc(1, sizeof *S);
    L.dev = S;
    if (S == NULL) {
        st = ot__lockstep_solve(&L, sk, OT_ERR_NOMEM, "CUDA lockstep");
    } else {
        S->device = pl->ode->device.id;
        make_mirrors(S, pl, sk->sol);
        st = ot__lockstep_solve(&L, sk, make_solver(&L, pl, S), "CUDA lockstep");
        /* An error here (a kernel that faulted after its launch was
         * checked) makes every number on the device suspect: the call
         * fails, whatever the lanes said. */
        const cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess && (st == OT_OK || st == OT_ERR_LANES_FAILED))
            st = ot__fail(OT_ERR_DEVICE,
                          "CUDA lockstep: the device failed during the solve: %s",
                          cudaGetErrorString(e));
        if (S->mirror) {
            const int copied = copy_mirrors(S, sk->sol);
            st = st == OT_OK ? copied : st;
        }
    }
    free_solver(&L);
    cudaSetDevice(prev);
    return st;
}

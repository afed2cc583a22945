/* Block-diagonal matrix and batched LU on the device. The own kernel gives
 * each lane one thread that factors (partial pivoting) or solves its n x n
 * block with lockstep's arithmetic (lockstep/block_lu.h); cuBLAS'
 * getrf/getrsBatched is the alternative for comparison (bench/gpu_robertson
 * measures both). The constructors and the ops that leave the data alone are
 * lockstep's (block_dense.c). */
#include <cublas_v2.h>
#include <stdlib.h>

#include "cuda/cuda_impl.h"
#include "kit/sun_compat.h"
#include "lockstep/block_lu.h"

namespace
{

ot__block_content *bc(SUNMatrix A) { return ot__block(A); }

__global__ void scale_add_i(double *a, double c, int64_t n, int64_t count)
{
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < count;
         k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t in_block = k % (n * n);
        a[k] = c * a[k] + (in_block % (n + 1) == 0 ? 1.0 : 0.0);
    }
}

__global__ void scale_add(double *a, double c, const double *b, int64_t count)
{
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < count;
         k += (int64_t)gridDim.x * blockDim.x)
        a[k] = c * a[k] + b[k];
}

__global__ void matvec(const double *a, const double *x, double *y, int64_t n,
                       int64_t nbatch)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nbatch)
        return;
    const double *blk = a + b * n * n, *xb = x + b * n;
    double *yb = y + b * n;
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t j = 0; j < n; j++)
            s += blk[j * n + i] * xb[j];
        yb[i] = s;
    }
}

unsigned grid_for(size_t count)
{
    return (unsigned)((count + 255) / 256 > 65535 ? 65535 : (count + 255) / 256);
}

double *alloc_device(size_t count, int)
{
    double *d = NULL;
    return cudaMalloc((void **)&d, count * sizeof *d) == cudaSuccess ? d : NULL;
}

void free_device(double *d) { cudaFree(d); }

int zero(SUNMatrix A)
{
    return cudaMemsetAsync(bc(A)->data, 0, ot__block_count(A) * sizeof(double)) ==
                   cudaSuccess
               ? 0
               : -1;
}

int copy(SUNMatrix A, SUNMatrix B)
{
    return cudaMemcpyAsync(bc(B)->data, bc(A)->data, ot__block_count(A) * sizeof(double),
                           cudaMemcpyDeviceToDevice) == cudaSuccess
               ? 0
               : -1;
}

int scaleaddi(sunrealtype c, SUNMatrix A)
{
    const size_t count = ot__block_count(A);
    scale_add_i<<<grid_for(count), 256>>>(bc(A)->data, c, bc(A)->n, (int64_t)count);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

int scaleadd(sunrealtype c, SUNMatrix A, SUNMatrix B)
{
    const size_t count = ot__block_count(A);
    scale_add<<<grid_for(count), 256>>>(bc(A)->data, c, bc(B)->data, (int64_t)count);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

int mv(SUNMatrix A, N_Vector x, N_Vector y)
{
    matvec<<<OT_CUDA_GRID(bc(A)->nbatch)>>>(bc(A)->data, ot__dptr(x), ot__dptr(y),
                                            bc(A)->n, bc(A)->nbatch);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

const ot__block_matrix_ops device_matrix = {
    {alloc_device, free_device}, zero, copy, scaleadd, scaleaddi, mv};

/* ---- LU ------------------------------------------------------------------ */

__global__ void lu_factor(double *a, sunindextype *piv, int64_t n, int64_t nbatch,
                          int *fail)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nbatch && ot__lu_factor(a + b * n * n, n, piv + b * n) != 0)
        atomicMax(fail, 1);
}

__global__ void lu_solve(const double *a, const sunindextype *piv, double *x, int64_t n,
                         int64_t nbatch)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nbatch)
        ot__lu_solve(a + b * n * n, n, piv + b * n, x + b * n);
}

__global__ void block_pointers(double **ptr, double *base, int64_t stride, int64_t nbatch)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nbatch)
        ptr[b] = base + b * stride;
}

__global__ void any_nonzero(const int *info, int64_t nbatch, int *fail)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nbatch && info[b] != 0)
        atomicMax(fail, 1);
}

struct solver_content {
    ot__block_solver_head head;
    sunindextype *piv;     /* device n * nbatch (own kernels) */
    int *fail;             /* device word */
    int *ipiv, *info;      /* device n * nbatch, nbatch (cuBLAS) */
    double **aptr, **bptr; /* device nbatch each (cuBLAS) */
    cublasHandle_t handle; /* NULL: own kernels */
};

solver_content *sc(SUNLinearSolver S) { return (solver_content *)S->content; }

/* A singular block is a recoverable failure, as with SUNDIALS' dense LU. */
int ls_setup(SUNLinearSolver S, SUNMatrix A)
{
    solver_content *c = sc(S);
    const int64_t n = c->head.n, nbatch = c->head.nbatch;
    int fail = 0;
    if (cudaMemsetAsync(c->fail, 0, sizeof(int)) != cudaSuccess)
        return OT__SUNLS_MEM_FAIL;
    if (c->handle) {
        block_pointers<<<OT_CUDA_GRID(nbatch)>>>(c->aptr, bc(A)->data, n * n, nbatch);
        if (cudaGetLastError() != cudaSuccess)
            return OT__SUNLS_EXT_FAIL;
        if (cublasDgetrfBatched(c->handle, (int)n, c->aptr, (int)n, c->ipiv, c->info,
                                (int)nbatch) != CUBLAS_STATUS_SUCCESS)
            return OT__SUNLS_EXT_FAIL;
        any_nonzero<<<OT_CUDA_GRID(nbatch)>>>(c->info, nbatch, c->fail);
    } else {
        lu_factor<<<OT_CUDA_GRID(nbatch)>>>(bc(A)->data, c->piv, n, nbatch, c->fail);
    }
    /* A failed launch leaves fail at 0: "factored" with nothing done. */
    if (cudaGetLastError() != cudaSuccess ||
        cudaMemcpy(&fail, c->fail, sizeof fail, cudaMemcpyDeviceToHost) != cudaSuccess)
        return OT__SUNLS_EXT_FAIL;
    c->head.last_flag = fail;
    return fail ? SUNLS_LUFACT_FAIL : OT__SUN_SUCCESS;
}

int ls_solve(SUNLinearSolver S, SUNMatrix A, N_Vector x, N_Vector b, sunrealtype tol)
{
    (void)tol;
    solver_content *c = sc(S);
    const int64_t n = c->head.n, nbatch = c->head.nbatch;
    N_VScale(1.0, b, x);
    if (c->handle) {
        int info = 0;
        block_pointers<<<OT_CUDA_GRID(nbatch)>>>(c->bptr, ot__dptr(x), n, nbatch);
        if (cudaGetLastError() != cudaSuccess)
            return OT__SUNLS_EXT_FAIL;
        if (cublasDgetrsBatched(c->handle, CUBLAS_OP_N, (int)n, 1, c->aptr, (int)n,
                                c->ipiv, c->bptr, (int)n, &info,
                                (int)nbatch) != CUBLAS_STATUS_SUCCESS ||
            info != 0)
            return OT__SUNLS_EXT_FAIL;
    } else {
        lu_solve<<<OT_CUDA_GRID(nbatch)>>>(bc(A)->data, c->piv, ot__dptr(x), n, nbatch);
    }
    return cudaGetLastError() == cudaSuccess ? OT__SUN_SUCCESS : OT__SUNLS_EXT_FAIL;
}

int ls_free(SUNLinearSolver S)
{
    if (S && S->content) {
        solver_content *c = sc(S);
        void *owned[] = {c->piv, c->fail, c->ipiv, c->info, c->aptr, c->bptr};
        for (void *d : owned) /* device memory; cudaFree(NULL) does nothing */
            cudaFree(d);
        if (c->handle)
            cublasDestroy(c->handle);
    }
    return ot__block_solver_free(S);
}

const ot__block_solver_ops device_solver = {sizeof(solver_content), ls_setup, ls_solve,
                                            ls_free};

} // namespace

SUNMatrix ot__cuda_block_matrix_new(int64_t n, int64_t nbatch, SUNContext ctx)
{
    return ot__block_matrix_new(n, nbatch, &device_matrix, ctx, 0);
}

SUNLinearSolver ot__cuda_block_solver_new(int64_t n, int64_t nbatch, int use_cublas,
                                          SUNContext ctx)
{
    SUNLinearSolver S = ot__block_solver_new(n, nbatch, &device_solver, ctx);
    if (S == NULL)
        return NULL;
    solver_content *c = sc(S);
    const size_t npiv = (size_t)(n * nbatch);
    bool ok = cudaMalloc((void **)&c->fail, sizeof(int)) == cudaSuccess;
    if (ok && use_cublas)
        ok = cudaMalloc((void **)&c->ipiv, npiv * sizeof(int)) == cudaSuccess &&
             cudaMalloc((void **)&c->info, (size_t)nbatch * sizeof(int)) == cudaSuccess &&
             cudaMalloc((void **)&c->aptr, (size_t)nbatch * sizeof(double *)) ==
                 cudaSuccess &&
             cudaMalloc((void **)&c->bptr, (size_t)nbatch * sizeof(double *)) ==
                 cudaSuccess &&
             cublasCreate(&c->handle) == CUBLAS_STATUS_SUCCESS;
    else if (ok)
        ok = cudaMalloc((void **)&c->piv, npiv * sizeof *c->piv) == cudaSuccess;
    if (!ok) {
        ls_free(S);
        return NULL;
    }
    return S;
}

/* Block-diagonal matrix and batched LU on the device. The own kernel gives
 * each lane one thread that factors (partial pivoting) or solves its n x n
 * block with lockstep's arithmetic (lockstep/block_lu.h); cuBLAS'
 * getrf/getrsBatched is the alternative for comparison
 * (bench/gpu_robertson measures both). */
#include <cublas_v2.h>
#include <stdlib.h>

#include "cuda/cuda_impl.h"
#include "kit/sun_compat.h"
#include "lockstep/block_lu.h"

namespace
{

struct block_content {
    int64_t n, nbatch;
    double *a; /* device, n * n * nbatch */
};

block_content *bc(SUNMatrix A) { return (block_content *)A->content; }
size_t total(SUNMatrix A) { return (size_t)(bc(A)->n * bc(A)->n * bc(A)->nbatch); }

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

SUNMatrix_ID get_id(SUNMatrix) { return SUNMATRIX_CUSTOM; }

void destroy(SUNMatrix A)
{
    if (A == NULL)
        return;
    if (A->content)
        cudaFree(bc(A)->a);
    free(A->content);
    A->content = NULL;
    SUNMatFreeEmpty(A);
}

int zero(SUNMatrix A)
{
    return cudaMemsetAsync(bc(A)->a, 0, total(A) * sizeof(double)) == cudaSuccess ? 0
                                                                                  : -1;
}

int copy(SUNMatrix A, SUNMatrix B)
{
    return cudaMemcpyAsync(bc(B)->a, bc(A)->a, total(A) * sizeof(double),
                           cudaMemcpyDeviceToDevice) == cudaSuccess
               ? 0
               : -1;
}

int scaleaddi(sunrealtype c, SUNMatrix A)
{
    scale_add_i<<<grid_for(total(A)), 256>>>(bc(A)->a, c, bc(A)->n, (int64_t)total(A));
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

int scaleadd(sunrealtype c, SUNMatrix A, SUNMatrix B)
{
    scale_add<<<grid_for(total(A)), 256>>>(bc(A)->a, c, bc(B)->a, (int64_t)total(A));
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

int mv(SUNMatrix A, N_Vector x, N_Vector y)
{
    matvec<<<OT_CUDA_GRID(bc(A)->nbatch)>>>(bc(A)->a, ot__dptr(x), ot__dptr(y), bc(A)->n,
                                            bc(A)->nbatch);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

int space(SUNMatrix A, long *lrw, long *liw)
{
    *lrw = (long)total(A);
    *liw = 2;
    return 0;
}

SUNMatrix clone(SUNMatrix A)
{
    return ot__cuda_block_matrix_new(bc(A)->n, bc(A)->nbatch, A->sunctx);
}

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
    int64_t n, nbatch;
    sunindextype *piv;     /* device n * nbatch (own kernels) */
    int *fail;             /* device word */
    int *ipiv, *info;      /* device n * nbatch, nbatch (cuBLAS) */
    double **aptr, **bptr; /* device nbatch each (cuBLAS) */
    cublasHandle_t handle; /* NULL: own kernels */
    long last_flag;
};

solver_content *sc(SUNLinearSolver S) { return (solver_content *)S->content; }

SUNLinearSolver_Type ls_type(SUNLinearSolver) { return SUNLINEARSOLVER_DIRECT; }
SUNLinearSolver_ID ls_id(SUNLinearSolver) { return SUNLINEARSOLVER_CUSTOM; }

int ls_initialize(SUNLinearSolver S)
{
    sc(S)->last_flag = 0;
    return 0;
}

/* A singular block is a recoverable failure, as with SUNDIALS' dense LU. */
int ls_setup(SUNLinearSolver S, SUNMatrix A)
{
    solver_content *c = sc(S);
    int fail = 0;
    if (cudaMemsetAsync(c->fail, 0, sizeof(int)) != cudaSuccess)
        return OT__SUNLS_MEM_FAIL;
    if (c->handle) {
        block_pointers<<<OT_CUDA_GRID(c->nbatch)>>>(c->aptr, bc(A)->a, c->n * c->n,
                                                    c->nbatch);
        if (cudaGetLastError() != cudaSuccess)
            return OT__SUNLS_EXT_FAIL;
        if (cublasDgetrfBatched(c->handle, (int)c->n, c->aptr, (int)c->n, c->ipiv,
                                c->info, (int)c->nbatch) != CUBLAS_STATUS_SUCCESS)
            return OT__SUNLS_EXT_FAIL;
        any_nonzero<<<OT_CUDA_GRID(c->nbatch)>>>(c->info, c->nbatch, c->fail);
    } else {
        lu_factor<<<OT_CUDA_GRID(c->nbatch)>>>(bc(A)->a, c->piv, c->n, c->nbatch,
                                               c->fail);
    }
    /* A failed launch leaves fail at 0: "factored" with nothing done. */
    if (cudaGetLastError() != cudaSuccess ||
        cudaMemcpy(&fail, c->fail, sizeof fail, cudaMemcpyDeviceToHost) != cudaSuccess)
        return OT__SUNLS_EXT_FAIL;
    c->last_flag = fail;
    return fail ? SUNLS_LUFACT_FAIL : OT__SUN_SUCCESS;
}

int ls_solve(SUNLinearSolver S, SUNMatrix A, N_Vector x, N_Vector b, sunrealtype tol)
{
    (void)tol;
    solver_content *c = sc(S);
    N_VScale(1.0, b, x);
    if (c->handle) {
        int info = 0;
        block_pointers<<<OT_CUDA_GRID(c->nbatch)>>>(c->bptr, ot__dptr(x), c->n,
                                                    c->nbatch);
        if (cudaGetLastError() != cudaSuccess)
            return OT__SUNLS_EXT_FAIL;
        if (cublasDgetrsBatched(c->handle, CUBLAS_OP_N, (int)c->n, 1, c->aptr, (int)c->n,
                                c->ipiv, c->bptr, (int)c->n, &info,
                                (int)c->nbatch) != CUBLAS_STATUS_SUCCESS ||
            info != 0)
            return OT__SUNLS_EXT_FAIL;
    } else {
        lu_solve<<<OT_CUDA_GRID(c->nbatch)>>>(bc(A)->a, c->piv, ot__dptr(x), c->n,
                                              c->nbatch);
    }
    return cudaGetLastError() == cudaSuccess ? OT__SUN_SUCCESS : OT__SUNLS_EXT_FAIL;
}

sunindextype ls_last_flag(SUNLinearSolver S) { return sc(S)->last_flag; }

int ls_free(SUNLinearSolver S)
{
    if (S == NULL)
        return 0;
    if (S->content) {
        solver_content *c = sc(S);
        cudaFree(c->piv);
        cudaFree(c->fail);
        cudaFree(c->ipiv);
        cudaFree(c->info);
        cudaFree(c->aptr);
        cudaFree(c->bptr);
        if (c->handle)
            cublasDestroy(c->handle);
        free(c);
        S->content = NULL;
    }
    SUNLinSolFreeEmpty(S);
    return 0;
}

} // namespace

SUNMatrix ot__cuda_block_matrix_new(int64_t n, int64_t nbatch, SUNContext ctx)
{
    SUNMatrix A = SUNMatNewEmpty(ctx);
    block_content *c = A ? (block_content *)calloc(1, sizeof *c) : NULL;
    if (c == NULL) {
        SUNMatFreeEmpty(A);
        return NULL;
    }
    A->content = c;
    c->n = n;
    c->nbatch = nbatch;
    if (cudaMalloc((void **)&c->a, (size_t)(n * n * nbatch) * sizeof(double)) !=
        cudaSuccess) {
        c->a = NULL;
        destroy(A);
        return NULL;
    }
    A->ops->getid = get_id;
    A->ops->clone = clone;
    A->ops->destroy = destroy;
    A->ops->zero = zero;
    A->ops->copy = copy;
    A->ops->scaleadd = scaleadd;
    A->ops->scaleaddi = scaleaddi;
    A->ops->matvec = mv;
    A->ops->space = space;
    return A;
}

double *ot__cuda_block_data(SUNMatrix A) { return bc(A)->a; }

SUNLinearSolver ot__cuda_block_solver_new(int64_t n, int64_t nbatch, int use_cublas,
                                          SUNContext ctx)
{
    SUNLinearSolver S = SUNLinSolNewEmpty(ctx);
    solver_content *c = S ? (solver_content *)calloc(1, sizeof *c) : NULL;
    if (c == NULL) {
        SUNLinSolFreeEmpty(S);
        return NULL;
    }
    S->content = c;
    c->n = n;
    c->nbatch = nbatch;
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
    S->ops->gettype = ls_type;
    S->ops->getid = ls_id;
    S->ops->initialize = ls_initialize;
    S->ops->setup = ls_setup;
    S->ops->solve = ls_solve;
    S->ops->lastflag = ls_last_flag;
    S->ops->free = ls_free;
    return S;
}

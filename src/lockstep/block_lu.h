/* Private: what lockstep's block-diagonal matrix and block LU solver share
 * between the CPU (block_dense.c, host memory) and CUDA (cuda/block_lu.cu,
 * device memory): the contents, the constructors that wire the SUNDIALS ops
 * (block_dense.c) around each backend's own ops, and one block's LU, inline
 * for the host in C and for host and device under nvcc. */
#ifndef OT_SRC_LOCKSTEP_BLOCK_LU_H
#define OT_SRC_LOCKSTEP_BLOCK_LU_H

#include <math.h>
#include <stddef.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>

#ifdef __CUDACC__
#define OT__HOST_DEVICE __host__ __device__
#else
#define OT__HOST_DEVICE
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The ops of a block matrix that depend on where its data lives. */
typedef struct {
    struct {
        sunrealtype *(*alloc)(size_t count, int counted); /* NULL: out of memory */
        void (*free)(sunrealtype *data);
    } data; /* the blocks' memory */
    int (*zero)(SUNMatrix A);
    int (*copy)(SUNMatrix A, SUNMatrix B);
    int (*scale_add)(sunrealtype c, SUNMatrix A, SUNMatrix B); /* A = c A + B */
    int (*scale_add_i)(sunrealtype c, SUNMatrix A);            /* A = c A + I */
    int (*matvec)(SUNMatrix A, N_Vector x, N_Vector y);        /* y = A x per block */
} ot__block_matrix_ops;

/* A block matrix's content: nbatch dense n x n blocks, [n, n, nbatch]
 * column-major (the layout of the jac callback's view). */
typedef struct {
    sunindextype n, nbatch;
    sunrealtype *data; /* n * n * nbatch, host or device memory */
    const ot__block_matrix_ops *ops;
} ot__block_content;

/* A new block matrix with the backend's ops (and the shared getid, clone,
 * destroy, space), its data from ops->data.alloc; counted: through alloc.h's
 * failure points (clones are not, see clone in block_dense.c). Ownership: the
 * caller's (SUNMatDestroy). NULL when out of memory. */
SUNMatrix ot__block_matrix_new(sunindextype n, sunindextype nbatch,
                               const ot__block_matrix_ops *ops, SUNContext ctx,
                               int counted);

static inline ot__block_content *ot__block(SUNMatrix A)
{
    return (ot__block_content *)A->content;
}

static inline size_t ot__block_count(SUNMatrix A)
{
    return (size_t)(ot__block(A)->n * ot__block(A)->n * ot__block(A)->nbatch);
}

/* The head of a block LU solver's content; the backend's own follows it. */
typedef struct {
    sunindextype n, nbatch, last_flag;
} ot__block_solver_head;

/* The ops of a block solver that are the backend's. */
typedef struct {
    size_t size; /* of the backend's content, which starts with the head */
    int (*setup)(SUNLinearSolver S, SUNMatrix A);
    int (*solve)(SUNLinearSolver S, SUNMatrix A, N_Vector x, N_Vector b, sunrealtype tol);
    int (*free)(SUNLinearSolver S); /* its arrays, then ot__block_solver_free */
} ot__block_solver_ops;

/* A new direct solver with the backend's ops (and the shared gettype, getid,
 * initialize, lastflag, space) and a zeroed content of ops->size bytes whose
 * head is set; the backend allocates the rest. Ownership: the caller's
 * (SUNLinSolFree). NULL when out of memory. */
SUNLinearSolver ot__block_solver_new(sunindextype n, sunindextype nbatch,
                                     const ot__block_solver_ops *ops, SUNContext ctx);
/* Frees S's content and S: the last step of a backend's free. @return 0 */
int ot__block_solver_free(SUNLinearSolver S);

#ifdef __cplusplus
}
#endif

/* LU with partial pivoting of one column-major n x n block a, in place, and
 * the solve with it: the operations of SUNDlsMat_denseGETRF/GETRS (which
 * lanes mode's SUNLinSol_Dense calls) in the same order, so one lane of
 * lockstep stays bit-identical to lanes mode. Returns 0, or k + 1 when pivot
 * k is zero. */
static inline OT__HOST_DEVICE sunindextype ot__lu_factor(sunrealtype *a, sunindextype n,
                                                         sunindextype *p)
{
    for (sunindextype k = 0; k < n; k++) {
        sunrealtype *col_k = a + k * n;
        sunindextype l = k;
        for (sunindextype i = k + 1; i < n; i++)
            if (fabs(col_k[i]) > fabs(col_k[l]))
                l = i;
        p[k] = l;
        if (col_k[l] == 0)
            return k + 1;
        if (l != k)
            for (sunindextype i = 0; i < n; i++) {
                const sunrealtype t = a[i * n + l];
                a[i * n + l] = a[i * n + k];
                a[i * n + k] = t;
            }
        const sunrealtype mult = 1.0 / col_k[k];
        for (sunindextype i = k + 1; i < n; i++)
            col_k[i] *= mult;
        for (sunindextype j = k + 1; j < n; j++) {
            sunrealtype *col_j = a + j * n;
            const sunrealtype a_kj = col_j[k];
            if (a_kj != 0)
                for (sunindextype i = k + 1; i < n; i++)
                    col_j[i] -= a_kj * col_k[i];
        }
    }
    return 0;
}

/* b = A^-1 b with the factors and pivots p of ot__lu_factor. */
static inline OT__HOST_DEVICE void ot__lu_solve(const sunrealtype *a, sunindextype n,
                                                const sunindextype *p, sunrealtype *b)
{
    for (sunindextype k = 0; k < n; k++) {
        const sunindextype pk = p[k];
        if (pk != k) {
            const sunrealtype t = b[k];
            b[k] = b[pk];
            b[pk] = t;
        }
    }
    for (sunindextype k = 0; k < n - 1; k++) {
        const sunrealtype *col_k = a + k * n;
        for (sunindextype i = k + 1; i < n; i++)
            b[i] -= col_k[i] * b[k];
    }
    for (sunindextype k = n - 1; k > 0; k--) {
        const sunrealtype *col_k = a + k * n;
        b[k] /= col_k[k];
        for (sunindextype i = 0; i < k; i++)
            b[i] -= col_k[i] * b[k];
    }
    b[0] /= a[0];
}

#endif

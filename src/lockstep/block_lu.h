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

#include "kit/lu.h"

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

#endif

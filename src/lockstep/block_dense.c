/* Lockstep: a block-diagonal SUNMatrix (one dense n x n block per lane, laid
 * out [n, n, nbatch] column-major, the layout of the jac callback's view) and
 * a direct SUNLinearSolver that LU-factors and solves every block in one
 * loop, with the arithmetic of SUNDIALS' dense GETRF/GETRS; and the
 * constructors both these and CUDA's (cuda/block_lu.cu) are made by. */
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_dense.h>

#include "core/alloc.h"
#include "core/sun_memory.h"
#include "lockstep/block_lu.h"
#include "lockstep/lockstep.h"
#include "kit/sun_compat.h"

/* ---- The ops both backends share ----------------------------------------- */

static ot__block_content *bc(SUNMatrix A) { return ot__block(A); }

static SUNMatrix_ID get_id(SUNMatrix A)
{
    (void)A;
    return SUNMATRIX_CUSTOM;
}

static void destroy(SUNMatrix A)
{
    if (A == NULL)
        return;
    if (A->content)
        bc(A)->ops->data.free(bc(A)->data);
    OT__SUN_FREE(A->content);
    A->content = NULL;
    SUNMatFreeEmpty(A);
}

/* CVODE clones the matrix through SUNMatClone, which in SUNDIALS 6.4.1
 * crashes on a NULL clone, so clones allocate outside alloc.h's injection
 * points (see nv_clone.h). */
static SUNMatrix clone(SUNMatrix A)
{
    return ot__block_matrix_new(bc(A)->n, bc(A)->nbatch, bc(A)->ops, A->sunctx, 0);
}

static int space(SUNMatrix A, long *lrw, long *liw)
{
    *lrw = (long)ot__block_count(A);
    *liw = 2;
    return 0;
}

SUNMatrix ot__block_matrix_new(sunindextype n, sunindextype nbatch,
                               const ot__block_matrix_ops *ops, SUNContext ctx,
                               int counted)
{
    SUNMatrix A = counted ? OT__SUN_NEW(SUNMatNewEmpty(ctx)) : SUNMatNewEmpty(ctx);
    if (A == NULL)
        return NULL;
    *A->ops = (struct _generic_SUNMatrix_Ops){.getid = get_id,
                                              .clone = clone,
                                              .destroy = destroy,
                                              .space = space,
                                              .zero = ops->zero,
                                              .copy = ops->copy,
                                              .scaleadd = ops->scale_add,
                                              .scaleaddi = ops->scale_add_i,
                                              .matvec = ops->matvec};
    ot__block_content *c = A->content =
        counted ? OT__SUN_CALLOC(1, sizeof *c) : OT__SUN_RAW_CALLOC(1, sizeof *c);
    if (c)
        *c = (ot__block_content){n, nbatch,
                                 ops->data.alloc((size_t)(n * n * nbatch), counted), ops};
    if (c == NULL || c->data == NULL) {
        destroy(A);
        return NULL;
    }
    return A;
}

sunrealtype *ot__lockstep_block_data(SUNMatrix A) { return bc(A)->data; }

static ot__block_solver_head *head(SUNLinearSolver S)
{
    return (ot__block_solver_head *)S->content;
}

static SUNLinearSolver_Type ls_type(SUNLinearSolver S)
{
    (void)S;
    return SUNLINEARSOLVER_DIRECT;
}

static SUNLinearSolver_ID ls_id(SUNLinearSolver S)
{
    (void)S;
    return SUNLINEARSOLVER_CUSTOM;
}

static int ls_initialize(SUNLinearSolver S)
{
    head(S)->last_flag = 0;
    return 0;
}

static sunindextype ls_last_flag(SUNLinearSolver S) { return head(S)->last_flag; }

static int ls_space(SUNLinearSolver S, long *lrw, long *liw)
{
    *lrw = 0;
    *liw = (long)(head(S)->n * head(S)->nbatch); /* the pivots */
    return 0;
}

SUNLinearSolver ot__block_solver_new(sunindextype n, sunindextype nbatch,
                                     const ot__block_solver_ops *ops, SUNContext ctx)
{
    SUNLinearSolver S = OT__SUN_NEW(SUNLinSolNewEmpty(ctx));
    ot__block_solver_head *c = S ? OT__SUN_CALLOC(1, ops->size) : NULL;
    if (c == NULL) {
        SUNLinSolFreeEmpty(S);
        return NULL;
    }
    S->content = c;
    c->n = n;
    c->nbatch = nbatch;
    *S->ops = (struct _generic_SUNLinearSolver_Ops){.gettype = ls_type,
                                                    .getid = ls_id,
                                                    .initialize = ls_initialize,
                                                    .setup = ops->setup,
                                                    .solve = ops->solve,
                                                    .lastflag = ls_last_flag,
                                                    .space = ls_space,
                                                    .free = ops->free};
    return S;
}

int ot__block_solver_free(SUNLinearSolver S)
{
    if (S == NULL)
        return 0;
    OT__SUN_FREE(S->content);
    S->content = NULL;
    SUNLinSolFreeEmpty(S);
    return 0;
}

/* ---- The CPU matrix ------------------------------------------------------- */

static sunrealtype *alloc_data(size_t count, int counted)
{
    return counted ? OT__SUN_CALLOC(count, sizeof(sunrealtype))
                   : OT__SUN_RAW_CALLOC(count, sizeof(sunrealtype));
}

static void free_data(sunrealtype *data) { OT__SUN_FREE(data); }

static int zero(SUNMatrix A)
{
    memset(bc(A)->data, 0, ot__block_count(A) * sizeof(sunrealtype));
    return 0;
}

static int copy(SUNMatrix A, SUNMatrix B)
{
    memcpy(bc(B)->data, bc(A)->data, ot__block_count(A) * sizeof(sunrealtype));
    return 0;
}

static int scale_add_i(sunrealtype c, SUNMatrix A)
{
    const sunindextype n = bc(A)->n;
    sunrealtype *a = bc(A)->data;
    const size_t total = ot__block_count(A);
    for (size_t k = 0; k < total; k++)
        a[k] *= c;
    for (sunindextype b = 0; b < bc(A)->nbatch; b++)
        for (sunindextype i = 0; i < n; i++)
            a[(b * n + i) * n + i] += 1;
    return 0;
}

static int scale_add(sunrealtype c, SUNMatrix A, SUNMatrix B)
{
    sunrealtype *a = bc(A)->data;
    const sunrealtype *b = bc(B)->data;
    const size_t total = ot__block_count(A);
    for (size_t k = 0; k < total; k++)
        a[k] = c * a[k] + b[k];
    return 0;
}

static int matvec(SUNMatrix A, N_Vector x, N_Vector y)
{
    const sunindextype n = bc(A)->n;
    const sunrealtype *a = bc(A)->data, *xd = N_VGetArrayPointer(x);
    sunrealtype *yd = N_VGetArrayPointer(y);
    for (sunindextype b = 0; b < bc(A)->nbatch; b++) {
        const sunrealtype *blk = a + b * n * n, *xb = xd + b * n;
        sunrealtype *yb = yd + b * n;
        for (sunindextype i = 0; i < n; i++)
            yb[i] = 0;
        for (sunindextype j = 0; j < n; j++)
            for (sunindextype i = 0; i < n; i++)
                yb[i] += blk[j * n + i] * xb[j];
    }
    return 0;
}

static const ot__block_matrix_ops host_matrix = {
    {alloc_data, free_data}, zero, copy, scale_add, scale_add_i, matvec};

SUNMatrix ot__lockstep_block_matrix_new(sunindextype n, sunindextype nbatch,
                                        SUNContext ctx)
{
    return ot__block_matrix_new(n, nbatch, &host_matrix, ctx, 1);
}

/* ---- The CPU block LU solver ---------------------------------------------- */

typedef struct {
    ot__block_solver_head head;
    sunindextype *pivots; /* n * nbatch */
    sunrealtype **cols;   /* n > 4: n column pointers, refilled per block */
} solver_content;

/* Calling SUNDIALS' generic GETRF/GETRS per block cost a call, n column
 * pointers and loops of unknown length each time: a quarter of lockstep's
 * instructions at n = 3. Up to n = 4 every block is done by ot__lu_factor
 * and ot__lu_solve (block_lu.h) in one loop, with n a constant the compiler
 * unrolls: 20 % fewer instructions in all at n = 3. From n = 5 on the loops
 * are long enough for SUNDIALS' own (built -O3, vectorised), which measured
 * faster at n = 64. */

/* Every block of a factored in place (x NULL), or x solved with the factors;
 * the first singular block's flag (b n + k + 1), or 0. */
static inline sunindextype blocks(sunrealtype *a, sunindextype n, sunindextype nbatch,
                                  sunindextype *p, sunrealtype *x)
{
    if (x != NULL) {
        for (sunindextype b = 0; b < nbatch; b++)
            ot__lu_solve(a + b * n * n, n, p + b * n, x + b * n);
        return 0;
    }
    for (sunindextype b = 0; b < nbatch; b++) {
        const sunindextype f = ot__lu_factor(a + b * n * n, n, p + b * n);
        if (f != 0)
            return b * n + f;
    }
    return 0;
}

static sunindextype factor_or_solve(solver_content *c, sunrealtype *a, sunrealtype *x)
{
    const sunindextype n = c->head.n, nbatch = c->head.nbatch;
    sunindextype *p = c->pivots;
    switch (n) { /* a constant n: loops the compiler can unroll */
    case 1:
        return blocks(a, 1, nbatch, p, x);
    case 2:
        return blocks(a, 2, nbatch, p, x);
    case 3:
        return blocks(a, 3, nbatch, p, x);
    case 4:
        return blocks(a, 4, nbatch, p, x);
    }
    for (sunindextype b = 0; b < nbatch; b++) {
        for (sunindextype j = 0; j < n; j++)
            c->cols[j] = a + b * n * n + j * n;
        if (x != NULL) {
            SUNDlsMat_denseGETRS(c->cols, n, p + b * n, x + b * n);
            continue;
        }
        const sunindextype f = SUNDlsMat_denseGETRF(c->cols, n, n, p + b * n);
        if (f != 0)
            return b * n + f;
    }
    return 0;
}

static solver_content *sc(SUNLinearSolver S) { return (solver_content *)S->content; }

/* Factors every block; a singular block is a recoverable failure (CVODE
 * retries with a smaller step), as with SUNDIALS' dense solver. */
static int ls_setup(SUNLinearSolver S, SUNMatrix A)
{
    solver_content *c = sc(S);
    c->head.last_flag = factor_or_solve(c, bc(A)->data, NULL);
    return c->head.last_flag ? SUNLS_LUFACT_FAIL : OT__SUN_SUCCESS;
}

static int ls_solve(SUNLinearSolver S, SUNMatrix A, N_Vector x, N_Vector b,
                    sunrealtype tol)
{
    (void)tol;
    solver_content *c = sc(S);
    N_VScale(1.0, b, x);
    factor_or_solve(c, bc(A)->data, N_VGetArrayPointer(x));
    c->head.last_flag = 0;
    return OT__SUN_SUCCESS;
}

static int ls_free(SUNLinearSolver S)
{
    if (S && S->content) {
        OT__SUN_FREE(sc(S)->pivots);
        OT__SUN_FREE(sc(S)->cols);
    }
    return ot__block_solver_free(S);
}

static const ot__block_solver_ops host_solver = {sizeof(solver_content), ls_setup,
                                                 ls_solve, ls_free};

SUNLinearSolver ot__lockstep_block_solver_new(sunindextype n, sunindextype nbatch,
                                              SUNContext ctx)
{
    SUNLinearSolver S = ot__block_solver_new(n, nbatch, &host_solver, ctx);
    if (S == NULL)
        return NULL;
    solver_content *c = sc(S);
    c->pivots = OT__SUN_MALLOC((size_t)(n * nbatch) * sizeof *c->pivots);
    c->cols = c->pivots ? OT__SUN_MALLOC((size_t)n * sizeof *c->cols) : NULL;
    if (c->cols == NULL) {
        ls_free(S);
        return NULL;
    }
    return S;
}

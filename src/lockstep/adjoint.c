/* Lockstep on the CPU: what the adjoint's backward problem
 * (run/adjoint_back.c) takes from a block: rhs with lockstep's rules (a
 * lane whose rhs fails leaves the block), lane vectors with the per-lane
 * norm (lambda [n, nbatch], the quadratures [np, nbatch], the integral
 * term [1, nbatch]), and the block-diagonal matrix of -J_b^T with its
 * block LU. Lanes fail alone there too (run/adjoint.c, adjoint_back.c): a
 * lane whose integrand fails leaves the block, and so does one that
 * blame names for a failure of the forward or the backward pass, whose
 * record of lambda's norms is kept here. One backward problem per block,
 * made for its pass. */
#include <stdio.h>
#include <stdlib.h>

#include "core/alloc.h"

#include "lockstep/lockstep.h"
#include "run/adjoint.h"

static int call_rhs(ot__run_adj *a, double t, const double *y, const double *p, double *f)
{
    return ot__lockstep_call_rhs(a->mode, 0, t, y, p, f);
}

static N_Vector vector(ot__run_adj *a, int64_t rows)
{
    const ot__lockstep *L = a->mode;
    return ot__lockstep_vector_new(rows, a->k, 0, L->stopped, a->ctx);
}

static SUNLinearSolver block_lu(ot__run_adj *a, SUNMatrix *A)
{
    *A = ot__lockstep_block_matrix_new(a->n, a->k, a->ctx);
    return *A ? ot__lockstep_block_solver_new(a->n, a->k, a->ctx) : NULL;
}

static const double *dy0dp(ot__unit *u, int64_t j)
{
    ot__lockstep *L = u->mode;
    return N_VGetArrayPointer(L->yS[j]);
}

static const ot__run_adj_ops block_adj = {.rhs = call_rhs,
                                          .vector = vector,
                                          .linear = block_lu,
                                          .matrix_data = ot__lockstep_block_data,
                                          .dy0dp = dy0dp};

void ot__lockstep_adjoint(ot__lockstep *L, const ot__sink *sk)
{
    L->back.last = -1;
    /* The scope's, as L->adj: both go with it if memory runs out inside
     * SUNDIALS (core/sun_memory.h). */
    L->back.count = OT__SUN_CALLOC((size_t)L->nbatch, sizeof *L->back.count);
    if (L->back.count == NULL ||
        ot__run_adj_new(&L->adj, &block_adj, L, L->plan, L->nbatch, L->y, L->ctx,
                        L->ig.mem, L->be->callbacks->quad, &L->dq_rhs_evals) != OT_OK) {
        snprintf(L->cb.msg, sizeof L->cb.msg, "cannot allocate the adjoint's arrays");
        ot__lockstep_fail_batch(L, sk->sol, OT_ERR_NOMEM, L->plan->t0, L->cb.msg);
        L->unit.ops->stats(&L->unit);
    } else {
        /* lambda's norms, and its clones' in CVODES' backward problem, are
         * the backward steps' (blame, loops.c). As the forward problem's
         * record, it leaves out the quadratures: their norms compare the
         * lanes' quadratures among themselves, not with the state's errors
         * that set the steps. */
        ot__lockstep_vector_blame(L->adj->yB, &L->back);
        ot__run_adjoint(&L->unit, L->adj);
        ot__run_adj_free(L->adj, 1);
        L->adj = NULL;
    }
    OT__SUN_FREE(L->back.count);
    L->back.count = NULL;
}

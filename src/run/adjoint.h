/* Private: ot_solve_adjoint once for every mode, over a unit of the run
 * loop (run/unit.h). adjoint.c holds the two passes: forward with CVODES'
 * checkpoints (CVodeF) to each output time, the outputs stored and each
 * lane's loss terms taken (kit/adjoint.c); then backward from the last
 * output time, lambda jumping by dg_i/dy at each, and the gradients
 * assembled. adjoint_back.c holds the backward problem over the unit's k
 * lanes: lambda' = -J^T lambda - dq/dy, q' = -lambda^T df/dp - dq/dp, J the
 * user's or central differences of rhs (state j of every lane at once),
 * df/dp the user's or central differences in p, and its CVODES setup. A
 * mode supplies only what differs (ot__run_adj_ops): rhs with its callback
 * rules, its vectors, the matrix and linear solver. Where the unit blames
 * single lanes (its ops->blame: lockstep) a lane whose integrand fails
 * leaves the unit alone, its derivatives zero from then on; where it fails
 * as a whole (lanes mode, where the lane is the unit) the failure is the
 * step's, and so the unit's. Lanes mode's unit is one
 * lane with its own output times (the worker keeps one backward problem
 * and re-initialises it for each lane), lockstep's a block sharing them
 * (a backward problem per block). */
#ifndef OT_SRC_RUN_ADJOINT_H
#define OT_SRC_RUN_ADJOINT_H

#include <cvodes/cvodes.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nonlinearsolver.h>

#include "kit/adjoint.h"
#include "run/unit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ot__run_adj ot__run_adj;

/* What a mode supplies; every hook is required. */
typedef struct {
    /* rhs of the k lanes at (t, y [n, k], p [np, k]) into f [n, k], with
     * the mode's callback rules: 0, > 0 to retry, < 0 failed (lockstep: a
     * lane whose own call fails has left the unit, the others' columns are
     * written and the call returns 0). */
    int (*rhs)(ot__run_adj *a, double t, const double *y, const double *p, double *f);
    /* A vector of `rows` per lane over the k lanes, with the mode's norm
     * (the quadratures [np, k], the integral term [1, k]). Ownership: the
     * caller's (N_VDestroy); NULL when out of memory. */
    N_Vector (*vector)(ot__run_adj *a, int64_t rows);
    /* BDF: the direct solver of -J^T for the k lanes on a->yB, on its
     * matrix, made into *A; NULL when out of memory (*A may be made). And
     * where the matrix keeps lane b's n x n block: data + b n n,
     * column-major. Ownership of both: the caller's. */
    SUNLinearSolver (*linear)(ot__run_adj *a, SUNMatrix *A);
    sunrealtype *(*matrix_data)(SUNMatrix A);
    /* d y0 / d p_j of every lane, [n, k] (init computes y0). */
    const double *(*dy0dp)(ot__unit *u, int64_t j);
} ot__run_adj_ops;

/* The adjoint's parts of a unit of k lanes (ot__run_adj_new). Each array
 * is its own allocation: callbacks write into some of them, and a write
 * past one must land outside any allocation for the sanitizers to see it. */
struct ot__run_adj {
    const ot__run_adj_ops *ops;
    void *mode;  /* the mode's state (its worker or block), for the hooks */
    ot__unit *u; /* the unit being solved (set by ot__run_adjoint) */
    const ot__plan *plan;
    SUNContext ctx;
    int64_t n, np, k;
    int64_t *dq_evals;   /* the mode's count of rhs calls by difference quotients */
    int which;           /* CVODES' index of the backward problem; -1 before */
    int64_t max_steps_b; /* the backward problem's steps between outputs, this pass */
    int64_t steps_b;     /* the steps it took, this pass */
    N_Vector yB;         /* lambda [n, k], a clone of the mode's state vector */
    N_Vector qB;         /* the quadratures [np, k] (NULL without parameters) */
    N_Vector yQ;         /* the integral term [1, k] (a forward quadrature), or NULL */
    SUNMatrix AB;        /* BDF: the backward Jacobian -J^T */
    SUNLinearSolver LSB;
    SUNNonlinearSolver NLSB;   /* Adams: fixed point */
    double *loss;              /* [k]: each lane's loss */
    double *gp;                /* [np, k]: the sum of dg_i/dp, then dL/dp */
    double *dgdy;              /* [n, k, nt]: dg_i/dy of each lane at each output */
    ot__adj_scratch point;     /* ot__adj_point's scratch (kit/adjoint.h) */
    double *J, *D;             /* [n, n, k] and [n, np, k]: J and df/dp at (t, y) */
    double *f0, *f1, *yw;      /* [n, k] each: difference quotients of rhs */
    double *pp;                /* [np, k]: perturbed parameters */
    double *inc;               /* [k]: the lanes' steps for state j */
    double *dqy, *dqp;         /* [n], [np]: one lane's integrand derivatives, each its
                                  own allocation (the user's views end with them) */
    int jac_first, dfdp_first; /* the unit's first jac, dfdp call is to come */
    int inited, quad_inited, configured; /* steps of making the backward problem */
};

/* The adjoint's parts for units of k lanes of plan on the CVODES instance
 * cv (after CVodeInit), lambda a clone of `like`; with an integral term
 * its forward quadrature, fQ (the mode's, which hands its user data's
 * ot__run_adj to ot__run_adj_quad). The backward problem itself is made at
 * the first backward pass (CVODES wants a forward pass first) and
 * re-initialised at each later one on the same cv. dq_evals: the mode's
 * counter of difference-quotient rhs calls. Ownership: *out is the
 * caller's (ot__run_adj_free, after the integrator's CVodeFree); on
 * failure nothing is left allocated and *out is untouched. @return OT_OK,
 * OT_ERR_NOMEM, or OT_ERR_SOLVER when CVODES refuses the quadrature. */
int ot__run_adj_new(ot__run_adj **out, const ot__run_adj_ops *ops, void *mode,
                    const ot__plan *plan, int64_t k, N_Vector like, SUNContext ctx,
                    void *cv, CVQuadRhsFn fQ, int64_t *dq_evals);
/* Frees a's parts and a; NULL is a no-op. sundials_alive 0: memory ran
 * out inside SUNDIALS (core/sun_memory.h), whose objects the owner's scope
 * frees; only odetensor's own arrays are freed here. */
void ot__run_adj_free(ot__run_adj *a, int sundials_alive);

/* The forward quadrature of the integral term (each running lane's
 * integrand) at (t, y) into yQdot: the integrator's code. */
int ot__run_adj_quad(ot__run_adj *a, double t, N_Vector y, N_Vector yQdot);

/* Makes (at the first backward pass on this cv) or re-initialises the
 * backward problem at tB0 from lambda in a->yB and q = 0. A step that
 * failed (out of memory) is taken again at the next pass, never twice (a
 * second CVodeCreateB would add a second backward problem). @return
 * CVODE's flag. */
int ot__run_adj_backward(ot__run_adj *a, double tB0);

/* Both passes of a set-up unit (its integrator with CVodeAdjInit, started
 * at t_restart): outputs, loss and gradients into the sink; failures are
 * the lanes' (a lane whose loss fails fails alone). */
void ot__run_adjoint(ot__unit *u, ot__run_adj *a);

/* ---- For the adjoint through events (run/adjoint_events.c) ------------- */

/* A pass's start at u->t_restart: loss terms zero, h0 the problem's, the
 * integral term's quadrature zero. @return CVODE's flag. */
int ot__run_adj_begin(ot__unit *u, ot__run_adj *a);
/* Lane b's loss term at output i (time t, state y [n]): the loss into
 * a->loss[b], dg/dy into a->dgdy, dg/dp added to dgdp [np]; a loss that
 * fails fails the lane alone. */
void ot__run_adj_point(ot__unit *u, ot__run_adj *a, int64_t i, int64_t b, double t,
                       const double *y, double *dgdp);
/* The backward problem from *tcur to target (adjoint.c's segment rules:
 * restart from a->yB and a->qB first where restart; lanes the unit blames
 * fail alone). @return 1 at target, 0 every lane stopped, -1 failed. */
int ot__run_adj_segment(ot__unit *u, ot__run_adj *a, int f, int restart, double *tcur,
                        double target);
/* Each lane's checkpoint bytes for nst forward steps between restarts. */
void ot__run_adj_bytes(ot__unit *u, int64_t nst);
/* dL/dp = gp + mu(t0) (+ (dy0/dp)^T lambda(t0) through init) and dL/dy0
 * = lambda(t0) of every running lane into the solution. */
void ot__run_adj_finish(ot__unit *u, ot__run_adj *a);

#ifdef __cplusplus
}
#endif

#endif

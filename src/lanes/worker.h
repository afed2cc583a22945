/* Private: the lanes-mode worker, shared by its setup (worker.c), its
 * per-lane solve (lane.c) and the pool (pool.c). */
#ifndef OT_SRC_LANES_WORKER_H
#define OT_SRC_LANES_WORKER_H

#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nonlinearsolver.h>
#include <sundials/sundials_nvector.h>

#include "core/sun_memory.h"
#include "run/unit.h"
#include "kit/callback.h"
#include "kit/integ.h"
#include "solve/solve.h"

typedef struct {
    const ot__plan *plan;
    const ot__sink *sink; /* where its lanes go (set by lanes.c) */
    int64_t n;
    int64_t lane; /* the lane being solved, for messages */
    /* The SUNDIALS part (ctx to adj): every object under scope; when
     * memory runs out inside SUNDIALS it is dropped and made again
     * (ot__lanes_worker_renew). */
    ot__sun_scope scope;
    int broken; /* it could not be made again: its lanes fail (OT_ERR_NOMEM) */
    SUNContext ctx;
    ot__ig ig;   /* CVODE(S) or ARKStep, per the problem's method */
    N_Vector y;  /* no own data: points at an output column or ys_scratch */
    N_Vector y0; /* no own data: points at the lane's y0 column or y0_scratch */
    N_Vector atolv;
    SUNMatrix A;
    SUNLinearSolver LS;
    SUNNonlinearSolver NLS, NLSsens;
    N_Vector *yS;    /* [np], no own data */
    N_Vector *atolS; /* [np] with dfdp: the lane's sensitivity tolerances */
    double *pbuf;    /* [2 np + 1]: the lane's params (CVODES perturbs them), then a
                        perturbed copy for output sensitivities */
    double *pbar;    /* [np] parameter scales for CVODES' difference quotients */
    int *plist;      /* [ns]: the parameter each sensitivity perturbs (sens_initial) */
    /* Scratch, each its own allocation (owned): init and out write into
     * y0_scratch and out_scratch, and a write past the end of one must land
     * outside any allocation for the sanitizers to see it, not in the next
     * slice (issue 13: it silently changed sensitivity outputs). */
    double *ys_scratch, *out_scratch, *y0_scratch, *yp_scratch, *ym_scratch,
        *diff_scratch, *sens_scratch, *yS0;
    double *jac_scratch, *dfdp_scratch; /* [n, n], [n, np]: with dfdp (else 1 each) */
    /* Through events without dfdp (run/sens_jump.h): the sensitivity rhs's
     * central differences, y+, y-, f(-) [n] and p+- [np] (else 1 each). */
    double *sdq[4];
    double *pwork;    /* [pwork + 1]: the preconditioner's work for the lane (owned) */
    int sens_first;   /* the lane's first call of sens_rhs_wrap is still to come */
    int64_t dq_evals; /* the lane's rhs calls for our DQ Jacobian */
    ot_lane_stats before;    /* the lane's counters before its last restart at an event */
    double t_restart;        /* the lane's start, or its last restart (an event) */
    double *y_restart;       /* its state then (n values) */
    ot_view p;               /* the lane's params as the callbacks see them */
    ot__cb cb;               /* the lane's callback problems and CVODE's messages */
    ot__record steps;        /* ot_solve: this lane's steps, handed to the sink */
    struct ot__run_adj *adj; /* ot_solve_adjoint's parts (run/adjoint.h), or NULL */
    /* The lane as the run loop's unit (lane.c), and its one-lane arrays. */
    ot__unit unit;
    unsigned char lane_state;
    int64_t lane_at, lane_next, lane_knext;
    int *rootsfound;    /* [nroots] (owned) */
    double *ev_scratch; /* [n]: the state before handlers (owned) */
} ot__lanes_worker;

/* One CVODE(S) instance configured for plan, reused for every lane this
 * worker solves. Ownership: *out is the caller's (ot__lanes_worker_free).
 * @return OT_OK, OT_ERR_NOMEM or OT_ERR_SOLVER. */
int ot__lanes_worker_new(ot__lanes_worker **out, const ot__plan *plan);
void ot__lanes_worker_free(ot__lanes_worker *w);

/* After memory ran out inside SUNDIALS during a lane (w->scope.failed):
 * drops the worker's SUNDIALS objects and makes them again for its next
 * lane. @return OT_OK, or OT_ERR_NOMEM with w->broken set. */
int ot__lanes_worker_renew(ot__lanes_worker *w);

/* Solves lane b into the sink; the lane's status, message, count, root and
 * statistics go into sink->sol. Never fails as a whole: a lane that cannot
 * be solved records why. */
void ot__lanes_solve_lane(ot__lanes_worker *w, int64_t b, const ot__sink *sink);

/* ---- The adjoint (adjoint.c) ---------------------------------------------- */

/* The worker's parts for ot_solve_adjoint (after CVodeInit): w->adj, the
 * forward quadrature of an integral term, CVodeAdjInit. The backward
 * problem itself is made at the first lane's backward pass (CVODES wants
 * a forward pass first). w->adj is the worker's (ot__run_adj_free in
 * ot__lanes_worker_free). @return OT_OK, OT_ERR_NOMEM or OT_ERR_SOLVER. */
int ot__lanes_adjoint_setup(ot__lanes_worker *w);

#endif

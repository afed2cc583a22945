/* Private: lockstep mode, one integrator over a block of lanes. The
 * backend-neutral setup (setup.c) and loops (loops.c) drive a backend
 * (cpu.c, or src/cuda/) through
 * ot__lockstep_backend; the CPU backend's callbacks are in callbacks.c, its
 * per-lane norm in lane_vector.c, its block LU in block_dense.c.
 *
 * Lanes fail alone on the CPU (alone.c, blame in loops.c, the run loop): a
 * lane that fails leaves its block with its status, message and the
 * outputs it reached, and stands still. What the other lanes get:
 * - a callback's failure (< 0, NaN/Inf for good; rhs, jac, root, out, an
 *   event handler, the adjoint's loss or integrand): the block goes on in
 *   the same step; their results are those of a block that held the lane
 *   until then (within tolerance, not bit for bit a block without it);
 * - the integrator giving up (error test, Newton, max steps, retries)
 *   where blame names one lane: the block resumes from its last good step
 *   without it, the same (within tolerance). In ot_solve_adjoint's
 *   backward pass likewise: the lane's lambda and quadratures are zeroed,
 *   the backward problem resumes from its last good time;
 * - ot_solve_adjoint's forward pass giving up where blame names a lane:
 *   the block's forward pass starts again from t0 without it, so theirs
 *   are bit for bit a block without that lane;
 * - a lane whose own inputs are not finite: left out from the start, bit
 *   for bit a block without it.
 * A failure no lane explains still stops the block's running lanes; on
 * CUDA every failure does. */
#ifndef OT_SRC_LOCKSTEP_LOCKSTEP_H
#define OT_SRC_LOCKSTEP_LOCKSTEP_H

#include <cvodes/cvodes.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nonlinearsolver.h>

#include "core/sun_memory.h"
#include "run/unit.h"
#include "kit/callback.h"
#include "kit/integ.h"
#include "solve/solve.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ot__lockstep ot__lockstep;

/* Which lane a block's norms were made of: the worst lane of the last
 * norm, and how often each lane was the worst since the last output. A
 * step that fails is blamed on the lane it was waiting for. */
typedef struct {
    int64_t last;   /* the worst lane of the last norm (-1: none yet) */
    int64_t *count; /* [nbatch] */
} ot__lane_blame;

/* The first call of each of these, per batch, gets an output filled with
 * the unwritten NaN (kit/callback.h): a callback that writes only column 0
 * fails there, naming the lane it left. Only the first: a pass over every
 * output at every call would cost as much as writing it. (The Jacobian
 * arrives zeroed by contract and is not poisoned; an rhs written for one
 * lane is caught at its first call anyway.) */
enum {
    OT__POISONED_RHS = 1,
    OT__POISONED_ROOT = 2,
    OT__POISONED_OUT = 4,
    OT__POISONED_INIT = 8,
    OT__POISONED_RHS_EXPLICIT = 16
};

/* Poisons v ([count]) when callback `which` has not been checked yet. */
static inline void ot__lockstep_poison_first(unsigned *poisoned, unsigned which,
                                             double *v, int64_t count)
{
    if (*poisoned & which)
        return;
    *poisoned |= which;
    ot__cb_poison(v, count);
}

/* A backend's integrator callbacks, user_data = the ot__lockstep
 * (rhs_explicit: an IMEX split's explicit part, NULL where the backend
 * refuses IMEX methods; quad: the adjoint's integral term as a forward
 * quadrature, NULL where it refuses the adjoint). */
typedef struct {
    CVRhsFn rhs;
    CVLsJacFn jac;
    CVRootFn root;
    CVSensRhsFn sens_rhs;
    CVRhsFn rhs_explicit;
    CVQuadRhsFn quad;
} ot__lockstep_callbacks;

/* What differs between lockstep backends (CPU, CUDA): where the vectors
 * live, the CVODE callbacks, and moving results out. Filled with designated
 * initializers; stopped_changed and host_state may be NULL. */
typedef struct {
    /* Stores output L->at[b] at time t from state y (and sensitivities in
     * L->yS) for every lane b with L->at[b] >= 0 (the run loop counts
     * them); OT_ERR_CALLBACK when the out callback fails. */
    int (*emit)(ot__lockstep *L, ot_solution *sol, double t, N_Vector y);
    /* Writes the recorded rows of every lane at (t, y) into host dst
     * [rows, nbatch]. */
    int (*host_rows)(ot__lockstep *L, double t, N_Vector y, double *dst);
    /* The CVODE callbacks on this backend's vectors. */
    const ot__lockstep_callbacks *callbacks;
    /* Copies host values [n, nbatch] into v, one of this backend's lane
     * vectors (tolerances made on the host). */
    int (*upload)(ot__lockstep *L, N_Vector v, const double *host);
    /* The block matrix and solver into L->A, L->LS (NULL: no memory). */
    void (*make_linear)(ot__lockstep *L);
    /* Lanes were just added to L->stopped (NULL: the backend reads it as is). */
    void (*stopped_changed)(ot__lockstep *L);
    /* y's data in host memory, writable, for event handlers (NULL hook:
     * the backend keeps y elsewhere and records no events). */
    double *(*host_state)(ot__lockstep *L, N_Vector y);
    /* y0 of every lane into L->y and the initial sensitivities into L->yS;
     * OT_ERR_CALLBACK when init fails (message in L->cb.msg). */
    int (*initial_state)(ot__lockstep *L);
} ot__lockstep_backend;

struct ot__lockstep {
    const ot__lockstep_backend *be;
    void *dev;            /* backend state (CUDA) */
    const ot__plan *plan; /* this block's plan: nbatch lanes, views at lane0 */
    int64_t lane0;        /* the block's first lane in the solution */
    int64_t n, nbatch, np, rows;
    ot__sun_scope scope; /* every SUNDIALS object of the block (core/sun_memory.h) */
    SUNContext ctx;
    ot__ig ig;             /* CVODE(S) or ARKStep, per the problem's method */
    N_Vector y, yout, ewt; /* lane vectors [n, nbatch] */
    N_Vector atolv;
    N_Vector *atolS; /* [np] lane vectors: per-lane sensitivity tolerances */
    SUNMatrix A;
    SUNLinearSolver LS;
    SUNNonlinearSolver NLS, NLSsens;
    N_Vector *yS; /* [nsv] lane vectors */
    int64_t nsv;  /* sensitivities (plan ns), or np for the adjoint's dy0/dp, or 0 */
    double *p;    /* [np, nbatch]: the params every callback sees (broadcast expanded) */
    double *pp;   /* [np, nbatch]: perturbed params for difference quotients */
    double *o, *o2;          /* [rows, nbatch]: out scratch */
    double *yp, *ym;         /* [n, nbatch]: perturbed states */
    double *inc;             /* [nbatch]: per-lane increments */
    double *jb, *db;         /* with dfdp: [n, n, nbatch] and [n, np, nbatch] */
    struct ot__run_adj *adj; /* ot_solve_adjoint's parts (run/adjoint.h), during it */
    int sens_first;          /* with dfdp: the block's first sensitivity rhs is to come */
    unsigned char *stopped;  /* [nbatch]: lanes stopped by a root (1) or failed (2) */
    int *rootsfound;         /* [nroots * nbatch] */
    int64_t dq_rhs_evals;    /* rhs calls made by our difference quotients */
    ot__cb cb;               /* the batch's callback problems and CVODE's messages */
    unsigned poisoned;    /* OT__POISONED_*: callbacks whose first output was poisoned */
    ot_lane_stats before; /* the batch's counters before its last restart at an event */
    N_Vector y_restart;   /* the state at the unit's last restart: L->y or L->yr */
    N_Vector yr;          /* the restart state after an event or stop (owned) */
    ot__unit unit;        /* the block as the run loop's unit (loops.c) */
    int64_t *at, *next, *knext; /* [nbatch] each: the unit's (owned) */
    double *scratch;            /* [n, nbatch] for ot_solve: the unit's (owned) */
    ot__lane_blame blame;       /* CPU: the norms' worst lanes (count owned) */
    ot__lane_blame back;        /* CPU adjoint: lambda's norms' (adjoint.c's) */
    int64_t *retries;           /* CPU: [nbatch] each lane's retry requests (owned) */
};

/* ---- The CPU solver (cpu.c) ---------------------------------------------- */

/* Runs a checked plan in lockstep on the CPU into sink: one integrator over
 * every lane, or with plan->block < nbatch one per block of lanes, the
 * blocks dealt to plan->threads threads (a block that cannot be set up
 * fails its own lanes). @return OT_OK (lane failures are in the solution),
 * or for one block of every lane OT_ERR_NOMEM, OT_ERR_SOLVER when CVODE
 * cannot be set up. */
int ot__lockstep_cpu_run(const ot__plan *plan, const ot__sink *sink);

/* ---- SUNDIALS parts of the CPU backend ----------------------------------- */

/* A serial vector of length n * nbatch whose WRMS norms are the maximum over
 * lanes of each lane's norm, leaving out lanes with stopped[b] set (stopped
 * is read at every norm; NULL: none). plain_norm: CVODE's ordinary norm, for
 * tests that show the difference. Its clones keep all three properties.
 * Ownership: the caller's (N_VDestroy). NULL when out of memory. */
N_Vector ot__lockstep_vector_new(sunindextype n, sunindextype nbatch, int plain_norm,
                                 const unsigned char *stopped, SUNContext ctx);

/* Makes v (and its clones from now on) record its norms' worst lanes in
 * blame (NULL: not). */
void ot__lockstep_vector_blame(N_Vector v, ot__lane_blame *blame);

/* Makes v's WRMS norms (nvwrmsnorm, nvwrmsnormmask) the given per-lane ones
 * and removes the fused and local variants that would bypass them; both
 * backends' lane vectors use it. */
void ot__lockstep_set_norm(N_Vector v, sunrealtype (*wrms)(N_Vector, N_Vector),
                           sunrealtype (*wrms_mask)(N_Vector, N_Vector, N_Vector));

/* Block-diagonal matrix, nbatch dense n x n blocks as [n, n, nbatch]
 * column-major. Ownership: the caller's (SUNMatDestroy). */
SUNMatrix ot__lockstep_block_matrix_new(sunindextype n, sunindextype nbatch,
                                        SUNContext ctx);
/* The blocks of this matrix or of CUDA's (device memory). */
sunrealtype *ot__lockstep_block_data(SUNMatrix A);

/* Direct solver factoring each block (partial pivoting). Ownership: the
 * caller's (SUNLinSolFree). */
SUNLinearSolver ot__lockstep_block_solver_new(sunindextype n, sunindextype nbatch,
                                              SUNContext ctx);

/* The user's rhs (explicit_part: an IMEX split's explicit part) of every lane
 * at (t, y, p) into dydt [n, nbatch], with lockstep's rules: stopped lanes
 * zero, a lane whose rhs fails leaves the block (alone.c). Returns the
 * integrator's code. */
int ot__lockstep_call_rhs(ot__lockstep *L, int explicit_part, double t, const double *y,
                          const double *p, double *dydt);

/* The CPU backend's CVODE callbacks (callbacks.c). */
extern const ot__lockstep_callbacks ot__lockstep_cpu_callbacks;

/* ---- Backend-neutral setup (setup.c) ------------------------------------- */

/* Fills L's sizes and backend for plan (everything else zero). */
void ot__lockstep_init(ot__lockstep *L, const ot__plan *plan,
                       const ot__lockstep_backend *be);
/* After the backend made L->y: its clones (yout, ewt, yS), the initial
 * state, CVodeCreate and every CVODE setting through L->be's callbacks.
 * @return OT_OK, OT_ERR_NOMEM, OT_ERR_CALLBACK (init failed) or
 * OT_ERR_SOLVER. */
int ot__lockstep_finish_setup(ot__lockstep *L);
/* Frees the CVODE(S) objects, vectors, context and the host lane arrays
 * (stopped, rootsfound); the backend frees its own scratch. */
void ot__lockstep_free_common(ot__lockstep *L);

/* ---- Lanes that fail alone (alone.c) ------------------------------------- */

/* Lane b (of the block) fails with status and msg and leaves the block: it
 * stands still from now on, with the outputs it reached. */
void ot__lockstep_lane_fails(ot__lockstep *L, int64_t b, int status, const char *msg);
/* A callback's call over lanes [b0, b0 + len) of the block (their columns
 * of every view); returns the user's code. */
typedef int (*ot__lockstep_run_fn)(ot__lockstep *L, int64_t b0, int64_t len, void *ctx);
/* Calls a callback through run() for every lane that has not failed (one
 * call for the block until a lane failed; then one per run of lanes
 * between failed ones, whose columns the caller zeroes). A retry (> 0,
 * kind OT__CB_RETRY) is the block's, the lanes that asked counted; a
 * failure is made again lane by lane, and each lane whose own call fails
 * leaves the block (the others' columns are then written by their own
 * calls). @return the code for the integrator: 0, or 1 to retry; -1 when no
 * lane failed alone (as ot__cb_returned: the block stops) or none is left. */
int ot__lockstep_call(ot__lockstep *L, const char *name, double t, ot__cb_kind kind,
                      ot__lockstep_run_fn run, void *ctx);
/* A block call of one of the callbacks shaped (t, y [n, k], p [np, k],
 * out [rows, k]) (rhs, out, root), or jac with out its [n, n, k] blocks;
 * ot__lockstep_run_call is its run() for ot__lockstep_call. */
typedef struct {
    int (*fn)(double t, ot_view y, ot_view p, ot_view_mut out, void *user);
    double t;
    const double *y, *p;
    double *out;
    int64_t rows; /* out's rows per lane (n * n for jac) */
    int blocks;   /* out is jac's [n, n, k] */
} ot__lockstep_cb_call;
int ot__lockstep_run_call(ot__lockstep *L, int64_t b, int64_t len, void *ctx);

/* ot__cb_finite over v [rows, nbatch]; when its verdict is fatal, every
 * running lane whose column holds NaN/Inf leaves the block instead (its
 * column zeroed) and the block's callbacks go on. A column left unwritten
 * still stops the block. @return the integrator's code. */
int ot__lockstep_isolate_nonfinite(ot__lockstep *L, const char *name, const char *target,
                                   double *v, int64_t rows, double t, ot__cb_kind kind);

/* ---- Backend-neutral loops (loops.c) ------------------------------------- */

/* Every running lane fails with status: the batch stopped at t; what: the
 * cause (a callback that made CVODE give up takes its place). */
void ot__lockstep_fail_batch(ot__lockstep *L, ot_solution *sol, int status, double t,
                             const char *what);
/* ot_solve_adjoint on a set-up CPU block (adjoint.c): outputs, loss and
 * gradients into sk; failures are the lanes'. */
void ot__lockstep_adjoint(ot__lockstep *L, const ot__sink *sk);

/* Solves a set-up batch (dense, sens or steps) into sk, or, when setup
 * ended in OT_ERR_CALLBACK (init failed), fails every lane with L->cb.msg;
 * then the statistics and progress. setup_st: what setup returned.
 * @return OT_OK, or setup_st for any other setup failure, with the message
 * naming `what` (the solver). */
int ot__lockstep_solve(ot__lockstep *L, const ot__sink *sk, int setup_st,
                       const char *what);

#ifdef __cplusplus
}
#endif

#endif

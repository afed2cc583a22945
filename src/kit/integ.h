/* Private: one interface over the two SUNDIALS integrators the drivers run:
 * CVODE(S) (OT_BDF, OT_ADAMS; the only one with sensitivities and the
 * adjoint) and ARKODE's ARKStep (the Runge-Kutta methods of ot_method).
 * The loops of lanes mode and lockstep call these and never an integrator
 * directly, so a rule about stepping, outputs, roots or statistics is
 * written once for every method. CVODES-only work (sensitivities, the
 * adjoint) uses ig.mem with CVODES' own calls. */
#ifndef OT_SRC_SOLVE_INTEG_H
#define OT_SRC_SOLVE_INTEG_H

#include <cvodes/cvodes.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nonlinearsolver.h>

#include "kit/callback.h"
#include "solve/solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the drivers need to know of a method. */
typedef struct {
    const char *name;  /* as the user names it: "OT_ERK_DP54" */
    int ark;           /* 1: ARKStep; 0: CVODE(S) */
    int implicit;      /* Newton iterations with a linear solver (the Jacobian) */
    int imex;          /* needs the explicit part (ot_ode_set_rhs_explicit) */
    int order;         /* the method's order (CVODE: its highest) */
    int stages;        /* Runge-Kutta stages (0 for CVODE) */
    int exact_outputs; /* steps onto each output time instead of interpolating */
    int erk, dirk;     /* ARKODE's table ids (-1: none) */
    int kernel;        /* odetensor's own (src/kernel/): the kernel solver runs it */
} ot__method_info;

/* The method's facts; method is a valid ot_method (ot_ode_set_method). */
const ot__method_info *ot__method(int method);

/* An integrator instance: CVODE(S) or ARKStep memory. */
typedef struct {
    void *mem;
    int ark;
    const ot__method_info *m;
    CVRhsFn fe, fi; /* ARKStep's explicit and implicit parts, for ARKStepReInit */
    double tstop;   /* the last stop time set, kept across ot__ig_reinit */
    int has_tstop;
    CVRootFn root; /* the root function and its count (all lanes'), from setup */
    int nroots;
} ot__ig;

/* The callbacks an integrator calls, user_data = the driver's state. rhs
 * is the whole rhs, or for IMEX its implicit part; rhs_explicit the IMEX
 * explicit part (NULL otherwise). */
typedef struct {
    CVRhsFn rhs, rhs_explicit;
    CVLsJacFn jac;
    CVRootFn root;
} ot__ig_callbacks;

/* Creates and initialises the problem's integrator at (t0, y): CVodeCreate
 * and CVodeInit, or ARKStepCreate with the method's tables. Ownership: *ig's
 * memory is the caller's (ot__ig_free). @return 0, or CV_MEM_FAIL. */
int ot__ig_create(ot__ig *ig, const ot_ode *ode, const ot__ig_callbacks *cb, double t0,
                  N_Vector y, SUNContext ctx);
void ot__ig_free(ot__ig *ig);

/* What a driver made for its integrator (any may be NULL). */
typedef struct {
    N_Vector *yS, *atolS; /* ns sensitivity vectors and their tolerances */
    int ns;
    SUNLinearSolver LS;
    SUNMatrix A;
    SUNNonlinearSolver NLS, NLSsens;
} ot__ig_parts;

/* Frees the integrator (ot__ig_free) and the parts it used. */
void ot__ig_free_all(ot__ig *ig, const ot__ig_parts *parts);

/* "CVODE" or "ARKODE", for messages. */
const char *ot__ig_name(const ot__ig *ig);

/* Every setting the drivers make the same way, after ot__ig_create: user
 * data, CVODE's error handler (6.4), step limits (none for ot_solve, which
 * counts its own), first and largest step, max order and stability limit
 * detection (CVODE), tolerances (scalar atol, or atolv filled with the
 * per-state values when the problem has an atol vector), the state solver
 * (implicit methods: the linear solver A/LS the caller made, with jac; for
 * Adams a fixed-point iteration stored in *nls, the caller frees it), and
 * the roots (nroots functions; dir: their directions or NULL). Returns the
 * integrator's flag (CV_MEM_FAIL: no memory). */
int ot__ig_setup(ot__ig *ig, const ot__plan *plan, void *user, ot__cb *cb, N_Vector atolv,
                 SUNMatrix A, SUNLinearSolver LS, CVLsJacFn jac, N_Vector y,
                 SUNContext ctx, SUNNonlinearSolver *nls, int64_t nroots, CVRootFn root,
                 const int *dir);

/* As CVodeReInit: a fresh start at (t, y0), counters zeroed, the stop time
 * kept (ARKStepReInit clears it; it is set again when still ahead). */
int ot__ig_reinit(const ot__ig *ig, double t, N_Vector y0);
/* As CVode(ig, tout, yout, tret, CV_NORMAL or CV_ONE_STEP). */
int ot__ig_evolve(const ot__ig *ig, double tout, N_Vector yout, double *tret,
                  int one_step);
/* y(t) by the integrator's interpolation, within its last step. */
int ot__ig_dky(const ot__ig *ig, double t, N_Vector dky);
int ot__ig_set_stop_time(ot__ig *ig, double tstop);
/* CVODE(S) only: quiet 1 swaps the root functions for ones that never
 * reach zero (the adjoint's forward re-runs of segments between events,
 * whose roots were taken already: CVODES' stored steps have no room for
 * root returns), quiet 0 puts them back. Same count: CVODES keeps its
 * root memory and directions. @return CVODE's flag (0 without roots). */
int ot__ig_roots_quiet(ot__ig *ig, int quiet);
int ot__ig_root_info(const ot__ig *ig, int *rootsfound);
/* The current time, the last step taken and the next step to try. */
int ot__ig_times(const ot__ig *ig, double *tn, double *hlast, double *hcur);
/* What a difference-quotient Jacobian needs: the current step size and the
 * error weights (into ewt). */
int ot__ig_dq_inputs(const ot__ig *ig, double *h, N_Vector ewt);
/* Sets the Krylov solver's preconditioner (OT_LINSOL_GMRES). */
int ot__ig_set_preconditioner(const ot__ig *ig, CVLsPrecSetupFn setup,
                              CVLsPrecSolveFn solve);
/* The counters into *s (final_time untouched); with_ls: the linear
 * solver's too. */
void ot__ig_stats(const ot__ig *ig, int with_ls, ot_lane_stats *s);

/* The flags the drivers test have one value in both integrators. */
#define OT__IG_ROOT_RETURN CV_ROOT_RETURN
/* ARKODE's value too: a return at the stop time, before tout. */
#define OT__IG_TSTOP_RETURN CV_TSTOP_RETURN

#ifdef __cplusplus
}
#endif

#endif

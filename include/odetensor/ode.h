/* odetensor problem layer: an ODE system, its callbacks and its options.
 *
 * An ot_ode holds nstates n, nparams np, optional outputs and roots, the
 * callbacks and the solver options. It holds no lane data: the same problem
 * is solved for any batch of y0/params.
 *
 * Callbacks get views over the k lanes they are asked for, pointing straight
 * into solver storage and valid only during the call: k = 1 in OT_LANES mode,
 * k = the lanes of a block in OT_LOCKSTEP mode (ot_ode_set_lockstep_block; a
 * column left unwritten fails the block, naming the lane). Loop over the
 * columns b < y.layout.shape[1]
 * and one callback serves both modes; read with ot_view_col_f64(y, b, 0),
 * write with ot_view_mut_col_f64(dydt, b, 0) (columns are contiguous doubles;
 * the Jacobian's block for lane b starts at ot_view_mut_col_f64(J, 0, b),
 * n x n column-major, and arrives zeroed). Return 0 on success, > 0 for a
 * recoverable failure (the solver retries with a smaller step; not for root
 * functions, where any nonzero stops), < 0 to stop the lane (in lockstep:
 * its block). NaN or Inf written by a callback counts as
 * recoverable a few times, then stops the lane. In OT_LANES mode callbacks
 * run on several worker threads at once (one lane per thread), so user data
 * they write must be per-lane or synchronised.
 *
 * Thread safety: set everything up first (ot_ode_new, every ot_ode_set_*).
 * While any solve uses the problem, treat it as read-only: no setter and no
 * ot_ode_free until every solve on it has returned; then any number of
 * threads may solve it at once, with any entry point and mode, and each gets
 * exactly what it would get alone. The callbacks' user pointer (and the
 * progress one) is shared by all of those solves, so what they write through
 * it must be synchronised. ot_last_error is per thread. Separate problems
 * need no coordination at all. (tests/check_concurrency.c) */
#ifndef ODETENSOR_ODE_H
#define ODETENSOR_ODE_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dydt[n, k] = f(t, y[n, k], p[np, k]). */
typedef int (*ot_rhs_fn)(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user);
/* J[i, j, b] = d f_i / d y_j for lane b, into a zeroed [n, n, k] view. With
 * OT_LINSOL_BAND the view is the band instead, [mupper + mlower + 1, n, 1]:
 * J[mupper + i - j, j, 0] = d f_i / d y_j for i - j in [-mupper, mlower]
 * (LAPACK's band storage; its column stride is not the row count). */
typedef int (*ot_jac_fn)(double t, ot_view y, ot_view p, ot_view_mut J, void *user);
/* A preconditioner for OT_LINSOL_GMRES, one lane a call ([n, 1] views; p
 * [np, 1]): setup prepares P ~ I - gamma J into the lane's work [nwork, 1]
 * (ot_ode_set_preconditioner), reusing the Jacobian data it kept there when
 * jok is 1, and sets *jcur to 1 when it recomputed them; solve writes z with
 * P z = r, reading work. The work is the lane's from setup to solve (lanes
 * mode solves a lane on one thread). Return 0, > 0 to ask for a smaller step,
 * < 0 to fail the lane. */
typedef int (*ot_psetup_fn)(double t, ot_view y, ot_view p, double gamma, int jok,
                            int *jcur, ot_view_mut work, void *user);
typedef int (*ot_psolve_fn)(double t, ot_view y, ot_view p, double gamma, ot_view r,
                            ot_view_mut z, ot_view_mut work, void *user);
/* y0[n, k] from p[np, k]: called when a solve gets an absent y0. */
typedef int (*ot_init_fn)(ot_view p, ot_view_mut y0, void *user);
/* o[nout, k] = g(t, y, p): what the solution records instead of y. */
typedef int (*ot_out_fn)(double t, ot_view y, ot_view p, ot_view_mut o, void *user);
/* g[nroots, k]: a sign change of any g_i is an event (by default it stops
 * the lane there; ot_ode_set_event_actions, ot_ode_set_root_directions). */
typedef int (*ot_root_fn)(double t, ot_view y, ot_view p, ot_view_mut g, void *user);
/* An event handler: root `root` of lane `lane` fired at t. y [n, 1] and
 * p [np, 1] are that lane's state and parameters, writable: the lane goes on
 * from what the handler leaves there (the integrator restarts at t: order 1,
 * a new first step). Called once per lane and event, in every mode
 * (lockstep too: [n, 1] views of that lane; in lanes mode from the worker
 * threads). Return 0, or < 0 to fail the lane (NaN/Inf left in y or p fails
 * it too). */
typedef int (*ot_event_fn)(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                           void *user);
/* The event handler's derivatives, for forward sensitivities through
 * events (ot_solve_fwd_sens_with): at the state before the event, y [n, 1]
 * and p [np, 1] (read-only), into dz [n + np, n + np] = d (y+, p+) /
 * d (y-, p-), column-major, arriving as the identity (write only what the
 * handler changes: a bolus y[gut] += p[F] * amount has dz[gut, n + F] =
 * amount), and dzdt [n + np, 1] = d (y+, p+) / d t, arriving zeroed (for a
 * handler that reads t). Return 0, or < 0 to fail the lane. */
typedef int (*ot_event_jac_fn)(double t, int root, int64_t lane, ot_view y, ot_view p,
                               ot_view_mut dz, ot_view_mut dzdt, void *user);
/* dfdp[n, np, k] = d f_i / d p_j for lane b in block (j, b), i.e. column j
 * of lane b at ot_view_mut_col_f64(dfdp, j, b); arrives zeroed. */
typedef int (*ot_dfdp_fn)(double t, ot_view y, ot_view p, ot_view_mut dfdp, void *user);
/* Progress: done of total lanes, called one call at a time (from worker
 * threads), done never decreasing. Lanes mode calls it after each lane;
 * lockstep as each block advances, counting its lanes in proportion to the
 * output times it reached (ot_solve: to the time it covered; whole lanes,
 * rounded down); the last call has done = total. While lanes run it is also
 * called every 20 ms or so with done as it was, so that a cancel reaches a
 * long lane between its outputs (measured: the call returned 0.3 ms after
 * the cancel). Return 0 to go on, nonzero to cancel: no new lane or block
 * starts, running ones stop at their next callback, and every lane that did
 * not finish reports OT_ERR_CANCELLED with its results so far (ot_solution_lane_count
 * outputs or steps); the call then returns OT_ERR_CANCELLED with the
 * solution. Not called by the MPI layer, nor by a solve whose
 * ot_solve_options replace it (solution.h). */
typedef int (*ot_progress_fn)(int64_t done, int64_t total, void *user);

/* The lane index of the callback running on the calling thread: the index,
 * in the batch the caller passed to the solve (the solution's lanes), of the
 * first lane in the callback's views. In OT_LANES mode that is the lane
 * itself; in OT_LOCKSTEP mode the first lane of the block the views cover
 * (column b of the views is lane ot_callback_lane() + b), and for the
 * one-lane calls (the event handler, the adjoint's loss and integrand) that
 * lane. A solve given ot_solve_options' lane_offset (solution.h) adds it: the
 * lane's index in the caller's larger batch. So under libodetensor_mpi it is
 * the lane's index in the whole batch of ot_mpi_solve_*, whichever rank
 * solves it. Valid in every callback the
 * library calls (rhs, the explicit rhs, jac, dfdp, init, out, root, the
 * event handler, the preconditioner's setup and solve, the loss and its
 * integrand); not in the progress callback.
 *
 * Thread safety: per thread (a thread-local set by the library when a lane
 * or block starts on a thread and restored after), so callbacks on several
 * worker threads each read their own; a solve started inside a callback
 * leaves the value as it was once it returns.
 *
 * @return the lane index (>= 0) inside a callback; -1 outside any callback
 * (and in the progress callback). */
OT_API int64_t ot_callback_lane(void);

/* The integrator. OT_BDF and OT_ADAMS are CVODE(S)'s variable-order
 * multistep methods and the only ones with forward sensitivities and the
 * adjoint. The others are ARKODE's Runge-Kutta pairs (ARKStep), named
 * order(embedded order):
 * - explicit, for non-stiff problems: OT_ERK_BS32 (Bogacki-Shampine
 *   3(2), loose tolerances), OT_ERK_DP54 (Dormand-Prince 5(4), the usual
 *   choice, as ode45), OT_ERK_VERNER65 (Verner 6(5), tight tolerances);
 * - diagonally implicit (ESDIRK: Newton with the same Jacobian and linear
 *   solvers as OT_BDF), for moderately stiff problems: OT_ESDIRK32,
 *   OT_ESDIRK43, OT_ESDIRK54 (Kennedy and Carpenter's, L-stable);
 * - IMEX additive Runge-Kutta, for a stiff part plus a non-stiff part: the
 *   rhs of ot_ode_new is the implicit (stiff) part, ot_ode_set_rhs_explicit
 *   gives the explicit part, the Jacobian is the implicit part's:
 *   OT_IMEX_ARK32, OT_IMEX_ARK43, OT_IMEX_ARK54 (Kennedy and Carpenter's).
 * OT_ERK_BS32 and OT_ERK_DP54 reach output times by ARKODE's quintic
 * Hermite interpolation; OT_ERK_VERNER65 and the implicit methods step onto
 * each output time (no interpolant kept their accuracy there), so many
 * output times cost them steps. max_order and stability limit detection
 * are OT_BDF/OT_ADAMS options (refused with the others). */
typedef enum ot_method {
    OT_BDF = 1,   /* stiff: BDF, Newton, dense direct linear solver */
    OT_ADAMS = 2, /* non-stiff: Adams-Moulton, fixed-point iteration */
    OT_ERK_BS32 = 3,
    OT_ERK_DP54 = 4,
    OT_ERK_VERNER65 = 5,
    OT_ESDIRK32 = 6,
    OT_ESDIRK43 = 7,
    OT_ESDIRK54 = 8,
    OT_IMEX_ARK32 = 9,
    OT_IMEX_ARK43 = 10,
    OT_IMEX_ARK54 = 11,
    /* The kernel methods: odetensor's own integrators, each lane its own
     * steps (its own t and h), stepped a lane at a time or in lane groups
     * of ot_ode_set_lane_group lanes whose loops the compiler vectorises;
     * OT_LANES mode, CPU. Embedded error estimates, per-lane step control
     * and a dense output of the method's own order at output times (no
     * step lands on them):
     * - Rosenbrock (linearly implicit: one LU of I/(h gamma) - J per step,
     *   J the user's Jacobian or difference quotients of rhs, df/dt by a
     *   difference quotient unless ot_ode_set_autonomous), for stiff
     *   problems: OT_ROS23 (Shampine and Reichelt's 2(3), ode23s: loose
     *   tolerances), OT_RODAS4 (Hairer and Wanner's 4(3)), OT_RODAS5P
     *   (Steinebach's 5(4), tighter tolerances), all L-stable;
     * - explicit, for non-stiff problems: OT_TSIT5 (Tsitouras's 5(4)),
     *   OT_VERN7 (Verner's 7(6), tight tolerances).
     * Scheduled stops (doses, and ot_dose_solve_dense's event tables) and
     * roots with directions and every event action as in every mode (roots
     * located on the dense output); no sensitivities, adjoint or
     * every-step solves yet (the planner refuses them); OT_LINSOL_DENSE
     * only. A model compiled into them (odetensor/kernel.h) also runs one
     * lane a CUDA thread. */
    OT_ROS23 = 12,
    OT_RODAS4 = 13,
    OT_RODAS5P = 14,
    OT_TSIT5 = 15,
    OT_VERN7 = 16,
    /* The highest method, for range checks: a new method is the next value
     * and this names it. */
    OT_METHOD_LAST = OT_VERN7
} ot_method;

/* The rhs and Jacobian with each lane's own time, for the kernel methods'
 * lane groups, whose lanes stand at different times: t is a [k] view of
 * the k lanes' times, column b of y (and of dydt, and J[:, :, b]) at time
 * t[b]; otherwise as ot_rhs_fn and ot_jac_fn (views straight into solver
 * storage, the same return codes and rules). A problem with neither these
 * nor ot_ode_set_autonomous is stepped a lane at a time, through the
 * ot_rhs_fn and ot_jac_fn it has. The other methods call rhs and jac. */
typedef int (*ot_rhs_lanes_fn)(ot_view t, ot_view y, ot_view p, ot_view_mut dydt,
                               void *user);
typedef int (*ot_jac_lanes_fn)(ot_view t, ot_view y, ot_view p, ot_view_mut J,
                               void *user);

/* The linear solver of the implicit methods' Newton iterations (OT_BDF,
 * OT_ESDIRK*, OT_IMEX_ARK*), lanes mode only (lockstep's block LU is
 * dense; it refuses the others):
 * - OT_LINSOL_DENSE (default): dense LU, cost ~ n^3 per factorization;
 * - OT_LINSOL_BAND: banded LU (ot_ode_set_bandwidths), ~ n (mu + ml)^2; the
 *   Jacobian in band storage (ot_jac_fn), or difference quotients of
 *   mupper + mlower + 1 rhs calls;
 * - OT_LINSOL_GMRES: matrix-free GMRES (Jacobian-vector products by
 *   difference quotients of rhs, no Jacobian), with an optional
 *   preconditioner (ot_ode_set_preconditioner); ot_ode_set_krylov_dim.
 * Sensitivities from df/dp and the adjoint need OT_LINSOL_DENSE. */
typedef enum ot_linsol {
    OT_LINSOL_DENSE = 1,
    OT_LINSOL_BAND = 2,
    OT_LINSOL_GMRES = 3
} ot_linsol;

typedef enum ot_mode {
    /* One CVODE per lane on a thread pool (default): each lane has its own
     * steps, statistics and failures. */
    OT_LANES = 1,
    /* One CVODE per block of lanes (ot_ode_set_lockstep_block) as one
     * [n, lanes] vector: callbacks run once for the block's lanes,
     * block-diagonal linear algebra, and a norm that is the maximum of the
     * lanes' own WRMS norms, so every lane meets its own tolerance. A
     * block's lanes share steps and statistics; a root stops its own lane
     * only, and lanes fail alone, as in OT_LANES: a lane whose callback
     * returns < 0 or writes NaN/Inf that does not recover (the failing call
     * is made again lane by lane to find it), whose own inputs are not
     * finite, or whose error the block's steps waited for when the
     * integrator gives up (error test, Newton, max steps, a lane that keeps
     * returning > 0) gets its status and message and keeps the outputs it
     * reached; it stands still from then on and no callback sees it again.
     * The other lanes go on in the same step (a callback failure) or from
     * the block's last good step (a solver failure), so their results are
     * those of a block that held the failed lane until then: within their
     * tolerance, not bit for bit a solve without it (except for inputs that
     * were not finite: those lanes are left out from the start). In
     * ot_solve_adjoint a lane whose forward pass fails so leaves and the
     * block's forward pass starts again from t0 without it (the others bit
     * for bit a block without it); one whose backward pass fails so (max
     * steps, say) leaves, and the others' backward pass goes on from its
     * last good time (within tolerance). A failure
     * no single lane explains (every lane's call succeeds alone, a column
     * left unwritten, a time too coarse for the steps) still stops the
     * whole block. Fastest for small systems with many alike lanes: measured
     * (BENCHMARKS.md, 2 cores, default blocks) against OT_LANES on 2
     * threads: Robertson 10,000 lanes 7x (4.4x with a rate spread over 2
     * decades, 3.7x over 4); a 1-D reaction-diffusion system 2.7x at n = 4
     * but 0.8x at n = 16, 0.7x at n = 64, 0.3x at n = 256: use OT_LANES
     * from about n = 16 on. */
    OT_LOCKSTEP = 2
} ot_mode;

typedef struct ot_ode ot_ode;

/* A new problem with n >= 1 states, np >= 0 parameters and a required rhs.
 * Defaults: OT_BDF, rtol 1e-6, atol 1e-8, t0 0, CVODE's first step, 100,000
 * max steps per output interval, all cores, f64 outputs, OT_LANES.
 * Ownership: *out is the caller's; free it with ot_ode_free().
 * @return OT_OK, OT_ERR_ARG (naming nstates, nparams or rhs), OT_ERR_NOMEM. */
OT_API int ot_ode_new(ot_ode **out, int64_t nstates, int64_t nparams, ot_rhs_fn rhs,
                      void *user);

/* Frees the problem; NULL is a no-op. */
OT_API void ot_ode_free(ot_ode *ode);

OT_API int64_t ot_ode_nstates(const ot_ode *ode);
OT_API int64_t ot_ode_nparams(const ot_ode *ode);

/* Optional callbacks; NULL removes one. Each returns OT_OK or OT_ERR_ARG. */
OT_API int ot_ode_set_jac(ot_ode *ode, ot_jac_fn jac);
OT_API int ot_ode_set_init(ot_ode *ode, ot_init_fn init);
/* nout >= 1 with an out function; nout 0 and NULL remove it. */
OT_API int ot_ode_set_out(ot_ode *ode, int64_t nout, ot_out_fn out);
OT_API int ot_ode_set_roots(ot_ode *ode, int64_t nroots, ot_root_fn root);
OT_API int ot_ode_set_progress(ot_ode *ode, ot_progress_fn progress, void *user);
/* Forward sensitivities from derivatives instead of difference quotients:
 * with df/dp here and the Jacobian (ot_ode_set_jac; a solve with dfdp and no
 * jac is refused), each sensitivity's rhs is J s_j + df/dp_j, no extra rhs
 * calls. CPU modes (the CUDA solver refuses it). NULL removes it. */
OT_API int ot_ode_set_dfdp(ot_ode *ode, ot_dfdp_fn dfdp);
/* The explicit (non-stiff) part of an IMEX split, for the OT_IMEX_ARK*
 * methods: dydt = rhs_explicit(t, y) + rhs(t, y), with the rhs of
 * ot_ode_new the implicit part (and the Jacobian, if any, its Jacobian).
 * Same signature and contract as the rhs. A solve with an IMEX method and
 * no explicit part, or with an explicit part and another method, is
 * refused. NULL removes it. */
OT_API int ot_ode_set_rhs_explicit(ot_ode *ode, ot_rhs_fn rhs_explicit);

/* Which crossings of root function i count: rising (g_i goes from < 0 to
 * > 0), falling, or both (the default). */
typedef enum ot_root_direction {
    OT_ROOT_FALLING = -1,
    OT_ROOT_BOTH = 0,
    OT_ROOT_RISING = 1
} ot_root_direction;
/* What an event (a root that fires) does to its lane. */
typedef enum ot_event_action {
    OT_EVENT_STOP = 0,   /* the lane stops there (the default; ot_solution_lane_root) */
    OT_EVENT_RECORD = 1, /* recorded; the lane goes on */
    OT_EVENT_HANDLE = 2, /* recorded, the event handler changes the lane, it goes on */
    OT_EVENT_ACTION_LAST = OT_EVENT_HANDLE /* the highest, for range checks */
} ot_event_action;
/* One direction per root function (nroots ints from ot_ode_set_roots,
 * copied); NULL restores OT_ROOT_BOTH. Set after ot_ode_set_roots, which
 * resets them. Every mode. @return OT_OK, OT_ERR_ARG (no roots) or
 * OT_ERR_VALUE (naming the entry). */
OT_API int ot_ode_set_root_directions(ot_ode *ode, const int *directions);
/* One action per root function (nroots ints, copied); NULL restores
 * OT_EVENT_STOP for all. Recorded events come back in the solution
 * (ot_solution_event_tensor). Set after ot_ode_set_roots, which resets
 * them. @return OT_OK, OT_ERR_ARG (no roots) or OT_ERR_VALUE. */
OT_API int ot_ode_set_event_actions(ot_ode *ode, const int *actions);
/* The handler OT_EVENT_HANDLE roots call (NULL removes it; a solve with
 * OT_EVENT_HANDLE and no handler is refused). */
OT_API int ot_ode_set_event_handler(ot_ode *ode, ot_event_fn handler);
/* The handler's derivatives (above) for sensitivities through events (NULL
 * removes them). Without them the sensitivities' jump takes central
 * differences of the handler: 2 more handler calls per sensitivity and
 * event (4 with a root or a stop that moves with p), on copies of the
 * lane's state, so the handler must depend on its arguments alone; their
 * error is about cbrt(eps)^2 = 4e-11 relative times the handler's third
 * derivative, none for a handler linear in (y, p) (a bolus, a switched
 * rate) beyond rounding. */
OT_API int ot_ode_set_event_jac(ot_ode *ode, ot_event_jac_fn jac);
/* At most max_events recorded events per lane (>= 1; default 10,000); a
 * lane with more fails alone (OT_ERR_SOLVER), keeping what it recorded. */
OT_API int ot_ode_set_max_events(ot_ode *ode, int64_t max_events);
/* Where an output at a scheduled stop's time stands (ot_solve_dense_with's stops):
 * 0 (the default): after the stop (its handler's changes show); 1: before it (the
 * state the handler gets; NONMEM's pre-dose observation at a dose time).
 * With 1, a stop at t0 is taken after outputs at t0, and a stop at a lane's
 * last output time comes after that output, past its outputs: it is not
 * taken (nor recorded), as stops after it. Every mode, forward
 * sensitivities (the output's sensitivities before the jump) and the adjoint
 * (an output's loss term before the stop's jump). Handled roots are not
 * stops: an output at a root's time shows the state after its handler
 * either way. @return OT_OK, OT_ERR_ARG (ode NULL) or OT_ERR_VALUE (before
 * not 0 or 1). */
OT_API int ot_ode_set_outputs_before_stops(ot_ode *ode, int before);

/* The kernel methods' per-lane-time rhs and Jacobian (above; NULL removes
 * one). A Jacobian of the ordinary kind (ot_ode_set_jac) serves a lane
 * group only when the problem is autonomous, so with a group rhs of this
 * kind and ot_ode_set_jac alone the solve runs a lane at a time.
 * @return OT_OK or OT_ERR_ARG (ode NULL). */
OT_API int ot_ode_set_rhs_lanes(ot_ode *ode, ot_rhs_lanes_fn rhs);
OT_API int ot_ode_set_jac_lanes(ot_ode *ode, ot_jac_lanes_fn jac);
/* Declares that rhs and jac do not depend on t (0, the default: they may).
 * The kernel methods then call the ordinary rhs and jac for a whole lane
 * group, with its first lane's time, and the Rosenbrock methods take df/dt
 * as 0 (no difference quotient in t). A problem declared autonomous whose
 * rhs reads t gets wrong answers from them. @return OT_OK, OT_ERR_ARG or
 * OT_ERR_VALUE (not 0 or 1). */
OT_API int ot_ode_set_autonomous(ot_ode *ode, int autonomous);
/* The kernel methods' lane group: how many lanes one thread steps
 * together, each its own t and h, in loops over the group's lanes (1: a
 * lane at a time). 0 (the default): 8 when the callbacks serve a group
 * (ot_ode_set_rhs_lanes, or ot_ode_set_autonomous), else 1. A lane's
 * result does not depend on its group (bit for bit: its arithmetic is its
 * own, whatever the group holds, as long as the callbacks compute each
 * column from that column alone). @return OT_OK or OT_ERR_VALUE (< 0). */
OT_API int ot_ode_set_lane_group(ot_ode *ode, int64_t lanes);

/* Options. Each checks its value and returns OT_OK, or OT_ERR_ARG /
 * OT_ERR_VALUE with a message naming the option and the rule. */
OT_API int ot_ode_set_method(ot_ode *ode, ot_method method);
OT_API int ot_ode_set_linear_solver(ot_ode *ode, ot_linsol linsol);
/* OT_LINSOL_BAND's half-bandwidths: d f_i / d y_j may be nonzero only for
 * j - i <= mupper and i - j <= mlower; each >= 0 here, and < n when a solve
 * starts. */
OT_API int ot_ode_set_bandwidths(ot_ode *ode, int64_t mupper, int64_t mlower);
/* OT_LINSOL_GMRES: Krylov vectors per linear solve, >= 1; 0 (default) is
 * SUNDIALS' 5. */
OT_API int ot_ode_set_krylov_dim(ot_ode *ode, int maxl);
/* OT_LINSOL_GMRES's preconditioner (both callbacks, or both NULL to remove
 * it), applied on the right, so that GMRES's convergence test measures the
 * true residual whatever the preconditioner's scale, and the doubles of
 * work each lane gets for it (nwork >= 0; owned by the library, one block
 * per worker thread). */
OT_API int ot_ode_set_preconditioner(ot_ode *ode, ot_psetup_fn setup, ot_psolve_fn solve,
                                     int64_t nwork);
OT_API int ot_ode_set_mode(ot_ode *ode, ot_mode mode);
/* rtol in [0, 1); atol >= 0 and finite, one value for all states; rtol and
 * atol may not both be 0 for any state (the error test would divide by 0):
 * the setter that would make them so is refused. atol has no upper bound:
 * it is in the states' own units. */
OT_API int ot_ode_set_rtol(ot_ode *ode, double rtol);
OT_API int ot_ode_set_atol(ot_ode *ode, double atol);
/* One absolute tolerance per state: a [n] view (copied). */
OT_API int ot_ode_set_atol_vector(ot_ode *ode, ot_view atol);
OT_API int ot_ode_set_t0(ot_ode *ode, double t0);
/* First step size; 0 lets CVODE estimate it. */
OT_API int ot_ode_set_first_step(ot_ode *ode, double h0);
/* Largest step size; 0 means no limit. */
OT_API int ot_ode_set_max_step(ot_ode *ode, double hmax);
/* The step limit (> 0): steps per output interval in ot_solve_dense and
 * ot_solve_fwd_sens, steps in all in ot_solve; a lane that needs more fails
 * alone with a message. Default 100,000 (CVODE's own 500 stops the standard
 * stiff problems on sparse output grids). */
OT_API int ot_ode_set_max_steps(ot_ode *ode, int64_t max_steps);
/* The integrator's highest order: 1 to 5 for OT_BDF, 1 to 12 for OT_ADAMS
 * (checked when a solve starts); 0 (the default) is the method's own
 * maximum. A lower BDF order (2) is more stable on stiff oscillatory
 * problems. @return OT_OK, OT_ERR_ARG (ode NULL) or OT_ERR_VALUE. */
OT_API int ot_ode_set_max_order(ot_ode *ode, int max_order);
/* CVODE's BDF stability limit detection (off by default; OT_BDF only: a
 * solve with OT_ADAMS and this on is refused): lowers the order when a step
 * of order >= 3 nears its stability limit, for problems with eigenvalues
 * near the imaginary axis. @return OT_OK or OT_ERR_ARG (ode NULL). */
OT_API int ot_ode_set_stability_limit_detection(ot_ode *ode, int on);
/* Worker threads for OT_LANES, and for OT_LOCKSTEP on the CPU when it runs
 * in blocks (ot_ode_set_lockstep_block); 0 means one per online core. */
OT_API int ot_ode_set_threads(ot_ode *ode, int threads);
/* OT_LOCKSTEP on the CPU: solve the lanes in blocks of `block` lanes, each
 * block one lockstep integrator over its lanes, the blocks dealt to the
 * worker threads. A block takes as many steps as its hardest lane, so
 * smaller blocks follow the lanes more closely and stay in cache; larger
 * ones share more work per step. Results depend on the block size, never on
 * the thread count: lanes [k block, (k + 1) block) give the same bits as a
 * lockstep solve of those lanes alone, and a failing lane leaves its own
 * block (OT_LOCKSTEP above). 0 (the default) picks a size from n alone, by measurement:
 * about 256 KiB of working set a block, a power of two in [16, 4096] (n = 1: 1024, n = 3
 * or 4: 256, n = 16: 32, n >= 64: 16); a block of nbatch or more lanes is one block of
 * every lane. The CUDA solver runs the whole batch as one block and refuses a smaller
 * one. @return OT_OK, OT_ERR_ARG (ode NULL) or OT_ERR_VALUE (block < 0). */
OT_API int ot_ode_set_lockstep_block(ot_ode *ode, int64_t block);
OT_API int ot_ode_set_output_dtype(ot_ode *ode, ot_dtype dtype);
/* Where a lockstep solve runs: {OT_CPU, 0} (the default) or {OT_CUDA, id},
 * which needs mode OT_LOCKSTEP and a build with the CUDA backend (make cuda).
 * On CUDA every callback gets views of device memory (layout.device is
 * {OT_CUDA, id}) and launches its own kernels on the default stream; y0 and
 * params may be host or device views (device ones must be f64 and are not
 * scanned for NaN). @return OT_OK, OT_ERR_DEVICE for another device type or a
 * negative id. The solve itself returns OT_ERR_NO_CUDA when no device or no
 * CUDA backend is there. */
OT_API int ot_ode_set_device(ot_ode *ode, ot_device device);
/* On CUDA: keep ys and the sensitivities in device memory (CUDA tensors,
 * exportable with ot_dlpack_export as kDLCUDA) instead of copying them to the
 * host (the default). ts stays on the host. */
OT_API int ot_ode_set_outputs_on_device(ot_ode *ode, int on_device);
/* The number of CUDA devices odetensor can use, in *count.
 * @return OT_OK, or OT_ERR_NO_CUDA (count 0) with a message saying why: no
 * device, no driver, or a build without the CUDA backend. */
OT_API int ot_cuda_device_count(int *count);
/* The adjoint's backward problem (ot_solve_adjoint): the steps it may take
 * between two output times (CVodeB's limit), max_steps >= 0; 0 (the
 * default) is 10 times the steps of the lane's forward pass (its block's
 * in lockstep), at least 500 and at most ot_ode_set_max_steps', so that a
 * lane whose backward pass runs away fails in a time like its forward
 * pass's instead of after 100,000 steps. The steps taken and the limit
 * used are each lane's adj_steps and adj_max_steps (solution.h). */
OT_API int ot_ode_set_adjoint_steps(ot_ode *ode, int64_t max_steps);
/* The backward problem's tolerances (lambda and the quadratures): rtol in
 * (0, 1) and atol > 0, or both 0 (the default): the forward rtol and the
 * smallest forward atol. */
OT_API int ot_ode_set_adjoint_tolerances(ot_ode *ode, double rtol, double atol);
/* Sensitivity tolerances: rtol >= 0, atol >= 0; both 0 (the default) lets
 * CVODES estimate them from the state tolerances and the parameter scales. */
OT_API int ot_ode_set_sens_tolerances(ot_ode *ode, double rtol, double atol);
/* With on != 0, ot_solve_fwd_sens also returns the sensitivities to the
 * initial values: sens(np + i) = d ys / d y0_i for i < n, after the np
 * parameters' (np may then be 0). y0_i counts as its own input even when
 * init computes y0. Their rhs is J s by the same rule as the parameters'
 * (difference quotients, or J s with ot_ode_set_dfdp), their initial
 * value e_i, their estimated tolerances the states' (a scale of 1). CPU
 * modes; the CUDA solver refuses it. */
OT_API int ot_ode_set_sens_initial(ot_ode *ode, int on);

/* ---- What a layer built on odetensor may read of a problem --------------- */

/* A problem's description (ot_ode_describe), for code that schedules or
 * moves its lanes without the problem's struct: a binding, a scheduler,
 * libodetensor_mpi. It may grow: `size` comes first and says how many bytes
 * of it the caller's header has; the library fills only those and reports
 * how many it filled, so a caller built against an older or newer header
 * than the library's still works (fields the library does not know keep the
 * caller's values). */
typedef struct ot_ode_info {
    size_t size;                            /* set by the caller: sizeof(ot_ode_info) */
    int64_t nstates, nparams, nout, nroots; /* nout 0 without an out function */
    int64_t nsens; /* ot_solve_fwd_sens' sensitivity tensors: nparams, plus
                      nstates with ot_ode_set_sens_initial */
    int64_t rows;  /* rows of an output: nout with an out function, else nstates */
    int mode;      /* ot_mode */
    int threads;   /* ot_ode_set_threads' value (0: one per core) */
    int out_dtype; /* ot_dtype of the outputs */
    int has_init;  /* 1: init computes y0, so y0 may be absent */
    ot_device device;
    int outputs_on_device; /* 1: ys and sens stay on a CUDA device */
    int records_events;    /* 1: a root records or handles events (its action
                              is OT_EVENT_RECORD or OT_EVENT_HANDLE) */
    double t0;             /* ot_ode_set_t0's start, the same for every lane */
    /* A hash of every option that can change a lane's result: sizes,
     * method (max order, stability limit detection), mode, lockstep block,
     * device, output dtype and place, tolerances (the atol vector and the
     * sensitivities' too), t0, first and largest step, step and event
     * limits, linear solver (bandwidths, Krylov dimension, preconditioner
     * work), sensitivities to initial values, root directions and event
     * actions, and which callbacks are set (by presence: their addresses
     * differ between processes). Two problems built the same way, in one
     * process or in two of one build, hash the same; threads and the
     * progress callback change no result and do not enter it. */
    uint64_t fingerprint;
} ot_ode_info;

/* Describes ode into *info. Set info->size = sizeof *info first (at least
 * the size of this first version, up to fingerprint); on return it holds
 * the bytes filled, min(the caller's size, the library's). Thread safety:
 * as any read of the problem (above).
 * @return OT_OK; OT_ERR_ARG when ode or info is NULL or info->size is
 * smaller than the first version's (info untouched). */
OT_API int ot_ode_describe(const ot_ode *ode, ot_ode_info *info);

#ifdef __cplusplus
}
#endif

#endif /* ODETENSOR_ODE_H */

/* odetensor solution layer: owned output tensors plus per-lane status and
 * statistics, and the solve entry points that make them.
 *
 * Shapes (n states, or nout outputs when the problem has an out function):
 *   ot_solve_dense:    ts [nt], ys [n|nout, nt, nbatch]
 *   ot_solve:          ts [nt_max, nbatch], ys [n|nout, nt_max, nbatch],
 *                      NaN-padded past each lane's count
 *   ot_solve_fwd_sens: as dense, plus sens(j) [n|nout, nt, nbatch] per parameter
 *   ot_solve_adjoint:  as dense, plus a loss and its gradients per lane:
 *                      L [nbatch], dL/dp [np, nbatch], dL/dy0 [n, nbatch]
 * A lane that fails or stops at a root holds NaN after its last good time.
 *
 * Thread safety: a solution may be read from many threads; take and free from
 * one. */
#ifndef ODETENSOR_SOLUTION_H
#define ODETENSOR_SOLUTION_H

#include "ode.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ot_solution ot_solution;

/* Per-lane statistics, from CVODE's counters. */
typedef struct ot_lane_stats {
    int64_t steps;
    int64_t rhs_evals;     /* by the integrator */
    int64_t jac_rhs_evals; /* by difference-quotient Jacobians (0 with a user jac) */
    int64_t jac_evals;
    int64_t lin_setups;
    int64_t err_test_fails;
    int64_t nonlin_iters;
    int64_t nonlin_fails;
    int64_t lin_iters; /* OT_LINSOL_GMRES's Krylov iterations (0 for direct solvers) */
    double final_time; /* the time the lane reached */
    /* ot_solve_adjoint: the backward problem's steps (its block's in
     * lockstep) and the limit between two output times it had
     * (ot_ode_set_adjoint_steps); 0 for other solves. */
    int64_t adj_steps, adj_max_steps;
} ot_lane_stats;

/* Solves every lane at the times t_eval.
 * y0: [n], [n, 1] or [n, nbatch], f32 or f64; absent: the init callback
 * computes it from params. params: [np], [np, 1] or [np, nbatch] (absent
 * when np is 0). t_eval: [nt], nt >= 1, strictly increasing, finite, with
 * t_eval[0] >= t0; or [nt, nbatch] (not CUDA, not the MPI layer): each lane
 * its own times, a column each, NaN-padded at the end, ts then [nt, nbatch]
 * (lanes mode: each lane bit for bit its solve alone; lockstep: a block
 * steps through the union of its lanes' times). nbatch is the lane count of
 * y0 or params (1 if both are one lane); one-lane inputs are broadcast.
 * Values must be finite: a non-finite value in one lane's own column of y0
 * or params fails that lane alone (OT_ERR_VALUE, the message naming the
 * argument and element; the other lanes are bit for bit a solve without
 * it), one in a broadcast input (or on CUDA) refuses the call.
 * Ownership: on OT_OK and OT_ERR_LANES_FAILED, *out is the caller's, freed
 * with ot_solution_free(); on any other status *out is untouched.
 * @return OT_OK; OT_ERR_LANES_FAILED when some lanes failed (read them with
 * ot_solution_lane_status); or an input error (OT_ERR_ARG, OT_ERR_SHAPE,
 * OT_ERR_VALUE, OT_ERR_DEVICE, ...); OT_ERR_OVERFLOW when the bytes the
 * solve needs overflow int64, OT_ERR_NOMEM when they exceed the physical
 * memory (or a lower RLIMIT_AS / RLIMIT_DATA): both found from the shapes
 * before anything is allocated or any value read, the message naming the
 * arrays and their sizes; OT_ERR_NOMEM also when an allocation fails. */
OT_API int ot_solve_dense(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                          ot_solution **out);

/* The inputs of ot_solve_dense_with: ot_solve_dense's three, and per lane
 *   t0     [nbatch] (or [1]): each lane's start (OT_LANES only); absent: the
 *          problem's t0;
 *   stops  [nstops] (every lane) or [nstops, nbatch], increasing, NaN-padded
 *          at the end: scheduled discontinuities (doses). The integrator stops
 *          exactly at each (never steps across), the event handler runs with
 *          root -1 - k for a lane's stop k (its y and p writable: a bolus
 *          y[gut] += amount, an infusion rate in p switched), and the lane
 *          restarts there. A stop at t0 is taken before the start; a stop at
 *          an output time is taken before that output, which shows the state
 *          after it (with ot_ode_set_outputs_before_stops: after the output,
 *          which shows the state before it, NONMEM's pre-dose observation).
 *          Each stop is recorded as an event (root -1 - k). Needs an event
 *          handler;
 *   stops_dp [np, nstops] (every lane) or [np, nstops, nbatch]
 *          (ot_solve_fwd_sens_with, ot_solve_adjoint_with): d stop_k / d p_j, for stop
 * times that move with a parameter (a dose lag: stop = t_dose + p[lag] has 1 in row lag);
 * absent: the stops are fixed. All f64 host views; absent ones (ot_view_absent()) are not
 * used. Make one with ot_solve_inputs_make, then set what you need. */
typedef struct ot_solve_inputs {
    ot_view y0, params, t_eval, t0, stops, stops_dp;
} ot_solve_inputs;
OT_API ot_solve_inputs ot_solve_inputs_make(ot_view y0, ot_view params, ot_view t_eval);
/* As ot_solve_dense, with per-lane starts and scheduled stops (above).
 * @return as ot_solve_dense; OT_ERR_ARG for in NULL. */
OT_API int ot_solve_dense_with(const ot_ode *ode, const ot_solve_inputs *in,
                               ot_solution **out);

/* Solves every lane from t0 to final_time (> t0), recording each internal
 * step: ts [nt_max, nbatch] and ys [n|nout, nt_max, nbatch], where lane b has
 * ot_solution_lane_count(b) entries (t0 included) and NaN after them.
 * Otherwise as ot_solve_dense. */
OT_API int ot_solve(const ot_ode *ode, ot_view y0, ot_view params, double final_time,
                    ot_solution **out);

/* As ot_solve_dense, plus forward sensitivities d ys / d p_j (CVODES,
 * difference quotients of rhs) for every parameter j: sens(j) is
 * [n|nout, nt, nbatch]. With an out function, output sensitivities are
 * central differences of out along (dy/dp_j, e_j). Needs np >= 1. */
OT_API int ot_solve_fwd_sens(const ot_ode *ode, ot_view y0, ot_view params,
                             ot_view t_eval, ot_solution **out);

/* As ot_solve_fwd_sens, with ot_solve_dense_with's inputs: per-lane
 * starts, per-lane t_eval, and scheduled stops and handled roots that the
 * sensitivities go through. At an event the handler maps z- = (y-, p-) to
 * z+ = (y+, p+) (p: the lane's current parameters, which a handler may
 * change), and the sensitivities jump:
 *   Z_j+ = DH Z_j- + (DH (f-, 0) + dH/dt - (f+, 0)) dtau/dp_j,
 * Z_j = (dy/dp_j, dp/dp_j), f- and f+ the rhs before and after, dtau/dp_j
 * the event time's derivative: -(Dg Z_j) / (dg/dt + g_y f-) for a root g
 * (the first that fired), stops_dp for a stop (0 when absent). DH is the
 * user's event Jacobian (ot_ode_set_event_jac) or central differences of
 * the handler. Between events, dy/dp_j' = f_y dy/dp_j + f_p dp/dp_j: a
 * handler that sets a parameter to a constant (an infusion switched off)
 * ends that parameter's effect, one that sets it from another (a rate
 * from a fitted one) carries the other's. Through events the sensitivity
 * rhs is central differences along (dy/dp_j, dp/dp_j) in every mode (or
 * J s + df/dp dp/dp_j with dfdp), not CVODES' own. A root crossed
 * tangentially (dg/dt along the solution 0) fails its lane: the event
 * time has no derivative there. Solvers without it (CUDA) refuse events
 * with sensitivities.
 * @return as ot_solve_fwd_sens; OT_ERR_ARG for in NULL. */
OT_API int ot_solve_fwd_sens_with(const ot_ode *ode, const ot_solve_inputs *in,
                                  ot_solution **out);

/* Frees the solution and every tensor it still owns; NULL is a no-op. */
OT_API void ot_solution_free(ot_solution *sol);

OT_API int64_t ot_solution_nbatch(const ot_solution *sol);
/* Number of lanes whose status is not OT_OK. */
OT_API int64_t ot_solution_nfailed(const ot_solution *sol);
/* Number of sensitivity tensors (np for ot_solve_fwd_sens, else 0). */
OT_API int64_t ot_solution_nsens(const ot_solution *sol);

/* The output tensors, still owned by the solution (NULL once taken). */
OT_API const ot_tensor *ot_solution_ts(const ot_solution *sol);
OT_API const ot_tensor *ot_solution_ys(const ot_solution *sol);
OT_API const ot_tensor *ot_solution_sens(const ot_solution *sol, int64_t j);

/* Takes ownership of an output tensor: the caller frees it (or exports it
 * with ot_dlpack_export); the solution then returns NULL for it. Returns NULL
 * when already taken or out of range. */
OT_API ot_tensor *ot_solution_take_ts(ot_solution *sol);
OT_API ot_tensor *ot_solution_take_ys(ot_solution *sol);
OT_API ot_tensor *ot_solution_take_sens(ot_solution *sol, int64_t j);

/* Lane b's status: OT_OK, OT_ERR_CALLBACK (a callback returned < 0 or wrote
 * NaN/Inf), OT_ERR_SOLVER (CVODE gave up, or t was too coarse for the steps:
 * shift time), OT_ERR_VALUE (a value beyond f32's range in f32 outputs; the
 * inf stays), OT_ERR_NOMEM (ot_solve: the lane recorded so many steps that
 * the padded outputs would not fit in memory; it keeps its first ones);
 * OT_ERR_ARG for b out of range. */
OT_API int ot_solution_lane_status(const ot_solution *sol, int64_t b);
/* Lane b's message ("" when it succeeded; for OT_ERR_NOMEM without one,
 * because memory ran out while storing it too, a fixed text); valid while
 * sol lives. */
OT_API const char *ot_solution_lane_message(const ot_solution *sol, int64_t b);
/* Lane b's number of valid time points (nt for dense solves unless it failed
 * or stopped at a root). */
OT_API int64_t ot_solution_lane_count(const ot_solution *sol, int64_t b);
/* Lane b's root: the index of the first root function that fired and the
 * event time; -1 and NaN when none fired. @return OT_OK or OT_ERR_ARG. */
OT_API int ot_solution_lane_root(const ot_solution *sol, int64_t b, int *index,
                                 double *time);
/* Events, for problems with root functions: every event (OT_EVENT_STOP
 * ones too, with the state at the root), except on the CUDA solver, whose
 * roots only stop lanes. Which tensor, NaN past each lane's count, m the
 * largest count (1 at least):
 *   OT_EVENT_TIMES   [m, nbatch]     the event times
 *   OT_EVENT_ROOTS   [m, nbatch]     which root function fired (as f64)
 *   OT_EVENT_BEFORE  [n, m, nbatch]  the state at the event
 *   OT_EVENT_AFTER   [n, m, nbatch]  the state the lane went on from (the
 *                                    handler's; = before for RECORD)
 * Simultaneous roots of a lane are separate events, in root order. Still
 * owned by the solution (NULL without root functions, on CUDA, or once
 * taken). */
typedef enum ot_event_tensor {
    OT_EVENT_TIMES = 0,
    OT_EVENT_ROOTS = 1,
    OT_EVENT_BEFORE = 2,
    OT_EVENT_AFTER = 3
} ot_event_tensor;
OT_API const ot_tensor *ot_solution_event_tensor(const ot_solution *sol, int which);
/* Takes ownership of an event tensor (NULL when taken or none). */
OT_API ot_tensor *ot_solution_take_event_tensor(ot_solution *sol, int which);
/* Lane b's number of recorded events (0 when none or b out of range). */
OT_API int64_t ot_solution_lane_event_count(const ot_solution *sol, int64_t b);
/* Lane b's statistics. @return OT_OK or OT_ERR_ARG. */
OT_API int ot_solution_lane_stats(const ot_solution *sol, int64_t b, ot_lane_stats *out);

/* ---- Gradients by the adjoint method ------------------------------------- */

/* A loss term of the user's at output i (time t) of lane `lane`, one lane a
 * call in every mode: y [n, 1], p [np, 1], and into g [1, 1], dgdy [n, 1] =
 * d g / d y(t_i), dgdp [np, 1] = d g / d p (explicit dependence only), all
 * three arriving zeroed. Return 0, or < 0 to fail the lane (NaN/Inf fails
 * it too). */
typedef int (*ot_loss_fn)(double t, int64_t i, int64_t lane, ot_view y, ot_view p,
                          ot_view_mut g, ot_view_mut dgdy, ot_view_mut dgdp, void *user);

/* An integral term of the loss, q(t, y, p) of lane `lane` (one lane a
 * call): q [1, 1], dqdy [n, 1], dqdp [np, 1] arrive zeroed. Return 0, or
 * < 0 to fail the lane. */
typedef int (*ot_integrand_fn)(double t, int64_t lane, ot_view y, ot_view p,
                               ot_view_mut q, ot_view_mut dqdy, ot_view_mut dqdp,
                               void *user);

/* The loss L = sum_i g_i over a lane's output times, one of:
 * - a sum of squares (ot_loss_squares): g_i = sum_r w[r, i] (o_r(t_i) -
 *   data[r, i])^2, o = y, or out's rows when the problem has an out
 *   function (out's derivatives then by central differences). data and
 *   weights are f64 [rows, nt] (every lane) or [rows, nt, nbatch]; a NaN
 *   datum adds no term; weights absent: 1;
 * - the user's g_i (ot_loss_custom);
 * plus, with integrand set (NULL: none), the integral of q from t0 to the
 * lane's last output time (a quadrature of the forward pass, in its error
 * test; its user is `user`). */
typedef struct ot_loss {
    ot_view data, weights;
    ot_loss_fn fn;
    void *user;
    ot_integrand_fn integrand;
} ot_loss;
OT_API ot_loss ot_loss_squares(ot_view data, ot_view weights);
OT_API ot_loss ot_loss_custom(ot_loss_fn fn, void *user);

/* As ot_solve_dense, plus for each lane the loss L and its gradients by
 * CVODES' adjoint method: forward with checkpoints (every 100 steps, Hermite
 * interpolation between), then backward from the last output time with
 * lambda' = -J^T lambda, lambda jumping by dg_i/dy at each output time, and
 * dL/dp = sum_i dg_i/dp + integral of lambda^T df/dp dt (quadratures in
 * the error test), dL/dy0 = lambda(t0); an integral term q adds -dq/dy to
 * lambda' and the integral of dq/dp to dL/dp (and through init, when init
 * computes y0, dL/dp gets (dy0/dp)^T lambda(t0) by central differences).
 * J is the user's Jacobian, or CVODE's difference quotients of rhs;
 * df/dp the user's dfdp, or central differences of rhs in p. The backward
 * problem uses the forward one's method, rtol and atol. Lanes mode, or
 * OT_LOCKSTEP on the CPU (one backward problem per block, the per-lane
 * norm and block-diagonal LU; the CUDA solver refuses); roots handled or
 * recorded and stops as ot_solve_adjoint_with says; t_eval per lane in
 * lanes mode only. The gradient tensors: below.
 * @return as ot_solve_dense; OT_ERR_ARG for a NULL loss or one not made
 * above, OT_ERR_SHAPE for data or weights of another shape. */
OT_API int ot_solve_adjoint(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                            const ot_loss *loss, ot_solution **out);

/* As ot_solve_adjoint, with ot_solve_dense_with's inputs (per-lane
 * starts, per-lane t_eval in lanes mode, scheduled stops with stops_dp)
 * and root functions whose events are handled or recorded (OT_EVENT_STOP
 * is refused: a lane stopped there has no loss past it). Through an event
 * the handler maps z- = (y-, p-) to z+ = (y+, p+) (p: the lane's current
 * parameters) and the adjoint (lambda, mu) = (dL/dy, dL/dp) jumps back
 * with the transpose of ot_solve_fwd_sens_with's map:
 *   (lambda, mu)- = (DH + B dtau/dz)^T (lambda, mu)+,
 *   B = DH (f-, 0) + dH/dt - (f+, 0), dtau/dz = -Dg / (dg/dt + g_y f-)
 * for a root (0 for a stop), and a stop that moves with p adds
 * (B . (lambda, mu)+) stops_dp to dL/dp. DH is the user's event Jacobian
 * (ot_ode_set_event_jac) or central differences of the handler along each
 * of z's n + np unit vectors. Between events the backward problem is
 * ot_solve_adjoint's, with mu' = -lambda^T df/dp and dg_i/dp added to mu
 * at output i, so dL/dp = mu(t0). CVODES' checkpoints span one segment
 * between events at a time: the backward pass runs each segment forward
 * again from the state the forward pass logged after its event (the
 * forward work about doubles). A root crossed tangentially fails its
 * lane, as with sensitivities.
 * @return as ot_solve_adjoint; OT_ERR_ARG for in NULL. */
OT_API int ot_solve_adjoint_with(const ot_ode *ode, const ot_solve_inputs *in,
                                 const ot_loss *loss, ot_solution **out);

/* The adjoint results, NaN for a failed lane; still owned by the solution
 * (NULL unless from ot_solve_adjoint, or once taken):
 *   OT_GRAD_LOSS    [nbatch]      the loss L of each lane
 *   OT_GRAD_PARAMS  [np, nbatch]  dL/dp
 *   OT_GRAD_Y0      [n, nbatch]   dL/dy0 */
typedef enum ot_grad_tensor {
    OT_GRAD_LOSS = 0,
    OT_GRAD_PARAMS = 1,
    OT_GRAD_Y0 = 2
} ot_grad_tensor;
OT_API const ot_tensor *ot_solution_grad_tensor(const ot_solution *sol, int which);
/* Takes ownership of a gradient tensor (NULL when taken or none). */
OT_API ot_tensor *ot_solution_take_grad_tensor(ot_solution *sol, int which);
/* Lane b's checkpoint memory in bytes (CVODES' checkpoints and the stored
 * interpolation data of its forward pass; 0 without the adjoint). */
OT_API int64_t ot_solution_lane_adjoint_bytes(const ot_solution *sol, int64_t b);

/* ---- For layers built on odetensor ----------------------------------------
 * A binding, a scheduler or libodetensor_mpi solves parts of a batch and
 * puts solutions together from lanes solved elsewhere through these (with
 * ot_ode_describe and ot_set_error), never through the library's structs. */

/* Checks output times by ot_solve_dense's rules, before any solve: t_eval
 * [nt] (nt >= 1; f32 or f64, host memory), finite, strictly increasing,
 * t_eval[0] >= t0 (a problem's t0: ot_ode_info). Per-lane times
 * [nt, nbatch] are the solve's own to check.
 * @return OT_OK; OT_ERR_ARG (t_eval absent), OT_ERR_SHAPE (not [nt]),
 * OT_ERR_DEVICE (not host memory), OT_ERR_VALUE naming the first time that
 * breaks a rule; the messages are ot_solve_dense's ("t_eval: t_eval[2] = 1
 * is not after t_eval[1] = 1; times must increase strictly"). */
OT_API int ot_times_check(ot_view t_eval, double t0);

/* How ot_solve_dense_opts, ot_solve_fwd_sens_opts and ot_solve_adjoint_opts
 * run, for a layer that solves a part of a batch of its own (a scheduler's
 * block, an MPI rank's share) and follows progress itself. Zero it, set
 * size, then what you need: every field 0 is the plain entry point. It may
 * grow as ot_ode_info does: the library reads only the caller's size bytes,
 * later fields counting as 0. */
typedef struct ot_solve_options {
    size_t size;          /* set by the caller: sizeof(ot_solve_options) */
    int replace_progress; /* 1: progress (NULL: none) is called instead of the
                             problem's callback (ot_ode_set_progress), done and
                             total counting this call's lanes; 0: the problem's */
    ot_progress_fn progress;
    void *progress_user;
    /* The caller's index of this call's lane 0 (>= 0): callbacks' views of
     * lane b report ot_callback_lane() = lane_offset + b, as if the call were
     * a slice of a larger batch. Only that: the solution's lanes, its
     * messages and the lane argument of the event handler, the loss and
     * its integrand count from 0 in this call. */
    int64_t lane_offset;
} ot_solve_options;

/* As ot_solve_dense, ot_solve_fwd_sens and ot_solve_adjoint, run as *opts
 * says; opts NULL is the plain call. Results do not depend on the options:
 * a lane's bits are those of the plain call.
 * @return as those; OT_ERR_ARG for opts->size below the first version's
 * (through lane_offset), replace_progress other than 0 or 1, or progress
 * (or progress_user) set while replace_progress is 0; OT_ERR_VALUE for
 * lane_offset < 0; OT_ERR_OVERFLOW when lane_offset + nbatch overflows
 * int64. */
OT_API int ot_solve_dense_opts(const ot_ode *ode, ot_view y0, ot_view params,
                               ot_view t_eval, const ot_solve_options *opts,
                               ot_solution **out);
OT_API int ot_solve_fwd_sens_opts(const ot_ode *ode, ot_view y0, ot_view params,
                                  ot_view t_eval, const ot_solve_options *opts,
                                  ot_solution **out);
OT_API int ot_solve_adjoint_opts(const ot_ode *ode, ot_view y0, ot_view params,
                                 ot_view t_eval, const ot_loss *loss,
                                 const ot_solve_options *opts, ot_solution **out);
/* As ot_solve_dense_with, ot_solve_fwd_sens_with and ot_solve_adjoint_with
 * (per-lane starts, stops and their derivatives in p), run as *opts says;
 * opts NULL is the plain call. @return as those and the _opts calls. */
OT_API int ot_solve_dense_with_opts(const ot_ode *ode, const ot_solve_inputs *in,
                                    const ot_solve_options *opts, ot_solution **out);
OT_API int ot_solve_fwd_sens_with_opts(const ot_ode *ode, const ot_solve_inputs *in,
                                       const ot_solve_options *opts, ot_solution **out);
OT_API int ot_solve_adjoint_with_opts(const ot_ode *ode, const ot_solve_inputs *in,
                                      const ot_loss *loss, const ot_solve_options *opts,
                                      ot_solution **out);

/* ---- Assembling a solution from lanes solved elsewhere ----------------------
 * A layer that solves lanes in other calls, threads or processes (an MPI
 * rank's blocks, a scheduler's) puts them together into one ot_solution
 * that reads as a solve's: make it, attach its output tensors and set each
 * lane's results. Every setter checks its lane and value (status and
 * message naming the function, the argument and the rule), so a solution
 * never holds what no solve could give; event tensors are not offered
 * (a solve's own only). Lanes may be set from several threads at once, one
 * thread a lane; attach from one thread. */

/* A solution of nbatch >= 0 lanes with room for nsens >= 0 sensitivity
 * tensors and, with_roots 1, a root per lane: every lane OT_OK with no
 * message, count 0, no root (-1, NaN), statistics and checkpoint bytes 0;
 * no tensors. Ownership: *out is the caller's (ot_solution_free).
 * @return OT_OK; OT_ERR_ARG (out NULL, with_roots not 0 or 1), OT_ERR_VALUE
 * (nbatch or nsens < 0), OT_ERR_OVERFLOW (per-lane arrays beyond size_t),
 * OT_ERR_NOMEM. */
OT_API int ot_solution_new(ot_solution **out, int64_t nbatch, int64_t nsens,
                           int with_roots);

/* Attach an output tensor, which the solution owns once attached (freed with
 * it, handed out by ot_solution_take_*; the caller may keep writing its
 * data, through the pointer it holds, while the solution lives):
 *   ts       [nt] (every lane) or [nt, nbatch] (per lane), f64, host;
 *   ys       [rows, nt, nbatch], f32 or f64, host or device;
 *   sens j   (0 <= j < nsens) the same shape, dtype and device as ys and
 *            the other sensitivities held;
 *   gradient OT_GRAD_LOSS [nbatch], OT_GRAD_PARAMS [np, nbatch],
 *            OT_GRAD_Y0 [n, nbatch], f64, host.
 * nt must agree between ts, ys and the sensitivities held, and be at least
 * every lane's count. @return OT_OK; OT_ERR_ARG (sol or the tensor NULL,
 * its slot holding one already, j or which out of range), OT_ERR_SHAPE,
 * OT_ERR_DTYPE, OT_ERR_DEVICE. On failure the tensor stays the caller's. */
OT_API int ot_solution_attach_ts(ot_solution *sol, ot_tensor *ts);
OT_API int ot_solution_attach_ys(ot_solution *sol, ot_tensor *ys);
OT_API int ot_solution_attach_sens(ot_solution *sol, int64_t j, ot_tensor *sens);
OT_API int ot_solution_attach_grad_tensor(ot_solution *sol, int which, ot_tensor *grad);
/* An event tensor (which: ot_event_tensor), as ot_solution_attach_ts: f64,
 * host, OT_EVENT_TIMES and OT_EVENT_ROOTS [m, nbatch], OT_EVENT_BEFORE and
 * OT_EVENT_AFTER [n, m, nbatch], m (and n) agreeing among those held; NaN
 * past each lane's event count (ot_solution_set_lane_event_count, 0 until
 * set). @return as ot_solution_attach_ts; OT_ERR_NOMEM when the first one's
 * per-lane counts cannot be made. */
OT_API int ot_solution_attach_event_tensor(ot_solution *sol, int which, ot_tensor *ev);

/* Lane b's results, as ot_solution_lane_* read them. Each returns OT_OK, or
 * OT_ERR_ARG for sol NULL or b outside 0..nbatch-1, and leaves the lane as
 * it was on any failure but OT_ERR_NOMEM:
 *   status   a code of status.h, with message (copied, up to 255 bytes;
 *            NULL or "" for none); OT_OK clears the message, and refuses
 *            one (OT_ERR_ARG, as an unknown code); OT_ERR_NOMEM: the status
 *            set, the message "";
 *   count    valid outputs, 0..nt (ys' nt once attached; OT_ERR_VALUE);
 *   root     index >= 0 of the root function that fired and its finite
 *            time, or -1 and NaN for none (OT_ERR_VALUE); OT_ERR_ARG for a
 *            solution made without roots;
 *   stats    copied from *stats (OT_ERR_ARG for NULL);
 *   adjoint bytes  >= 0 (OT_ERR_VALUE), OT_ERR_NOMEM at the first nonzero
 *            when the per-lane array cannot be made. */
OT_API int ot_solution_set_lane_status(ot_solution *sol, int64_t b, int status,
                                       const char *message);
OT_API int ot_solution_set_lane_count(ot_solution *sol, int64_t b, int64_t count);
OT_API int ot_solution_set_lane_root(ot_solution *sol, int64_t b, int index, double time);
OT_API int ot_solution_set_lane_stats(ot_solution *sol, int64_t b,
                                      const ot_lane_stats *stats);
OT_API int ot_solution_set_lane_adjoint_bytes(ot_solution *sol, int64_t b, int64_t bytes);
/* Lane b's recorded events: 0..m, the event tensors' m (OT_ERR_VALUE);
 * OT_ERR_ARG before an event tensor is attached. */
OT_API int ot_solution_set_lane_event_count(ot_solution *sol, int64_t b, int64_t count);

#ifdef __cplusplus
}
#endif

#endif /* ODETENSOR_SOLUTION_H */

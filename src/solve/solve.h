/* Private: a solve request as every solver sees it. solve.c owns a
 * request's life (plan, outputs, run, finish); a solver is one entry of the
 * table in solvers.c plus its own files, and only runs. */
#ifndef OT_SRC_SOLVE_SOLVE_H
#define OT_SRC_SOLVE_SOLVE_H

#include "ode/ode_impl.h"
#include "solution/output.h"
#include "solution/solution_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { OT__DENSE = 1, OT__STEPS = 2, OT__SENS = 3, OT__ADJ = 4 } ot__kind;

typedef struct ot__solver ot__solver;

/* Everything a solver needs, checked once: f64 views (f32 inputs converted
 * into owned tensors), sizes and times. */
typedef struct {
    const ot_ode *ode;
    const ot__solver *solver; /* chosen from the problem's mode and device */
    ot__kind kind;
    int64_t n, np, nbatch, nt, rows; /* rows: nout, or n without out */
    int64_t ns;      /* OT__SENS: the sensitivities, np (+ n with sens_initial); else 0 */
    int64_t threads; /* worker threads, at most the units they share */
    int64_t block;   /* lanes one solver instance runs: 1 (lanes mode), or
                        a lockstep block (the whole batch by default) */
    int has_y0;
    ot_view y0;          /* [n, 1|nbatch] f64 when has_y0 */
    ot_view p;           /* [np, 1|nbatch] f64 (np may be 0) */
    const double *t;     /* [nt] host times for dense and sens: lane 0's when per lane */
    int t_lanes;         /* t_eval is per lane: [nt, nbatch], NaN-padded at the end */
    int64_t t_stride;    /* per lane: doubles from one lane's times to the next */
    const double *t0s;   /* per-lane starts (ot_solve_dense_with), or NULL */
    int64_t t0_stride;   /* 0: one start for every lane */
    const double *stops; /* scheduled stops [nstops, 1|nbatch], or NULL */
    int64_t nstops, stop_stride;
    /* OT__SENS: d stop / d p [np, nstops, 1|nbatch] (strides in doubles), or NULL */
    const double *stops_dp;
    int64_t stops_dp_kstride, stops_dp_bstride;
    double t0, t_final;      /* t_final for steps */
    int64_t step_limit;      /* steps: total steps allowed per lane */
    ot_progress_fn progress; /* the problem's, unless the caller replaced it */
    void *progress_user;
    struct ot__progress_state
        *prog;           /* during the run: progress and cancel (progress.h) */
    ot_tensor *owned[3]; /* f32 conversions of y0, params, t_eval */
    unsigned char *bad;  /* [nbatch] (owned) or NULL: lanes whose own y0 (1) or
                            params (2) are not finite; they fail alone */
    ot_loss loss;        /* OT__ADJ: the checked loss (kit/adjoint.h) */
    int64_t lane_offset; /* the caller's index of lane 0: 0, or a sub-solve's
                            first lane (the MPI layer); for ot_callback_lane */
} ot__plan;

/* Where a solver puts results. Dense and sens: sol's tensors, allocated
 * before the run where the solver said. Steps: one step record per solver
 * instance, records[k] for lanes [k block, (k + 1) block) (plan->block):
 * each step holds [rows, lanes] with lane b at column b - k block (in
 * lanes mode one lane a record). Each lane's count says how many entries
 * are its own; solve.c pads the rest with NaN. */
typedef struct {
    ot_solution *sol;
    ot__record *records;
    ot__record *events; /* [nbatch] when roots record events (kit/events.h), else NULL */
} ot__sink;

/* How a solver's working memory grows (size_limits.c): per worker thread
 * (one integrator of n states each, re-initialised per lane), or per lane
 * of the blocks that run at once (an integrator over [n, lanes]). */
typedef enum { OT__WORK_PER_THREAD = 1, OT__WORK_PER_LANE = 2 } ot__work_model;

/* The linear solvers a solver has, as a mask of 1 << ot_linsol. */
#define OT__LINSOL_BIT(ls) (1u << (unsigned)(ls))

/* A solver: what it can do, how it runs a checked plan, and where its
 * inputs and outputs live. Entries are filled with designated initializers
 * in solvers.c (unset capabilities are 0: not supported); NULL hooks mean
 * host memory. The planner (plan.c), solve.c, size_limits.c and events.h
 * ask these fields, never the problem's mode or device: a new solver
 * declares here what it supports and every refusal follows (as GSL's step
 * types carry what a method can do). */
struct ot__solver {
    const char *name; /* "the %s solver" in messages; tests */

    /* -- how it runs -- */
    /* Lanes run in lockstep blocks (plan->block lanes each), not one at a
     * time. */
    int lockstep;
    /* Runs the whole batch as one block: refuses a smaller lockstep block. */
    int whole_batch;

    /* -- times -- */
    /* t_eval [nt, nbatch]: each lane its own output times. */
    int per_lane_times;
    /* ot_solve_dense_with's t0: each lane its own start (a lockstep block
     * starts its lanes together). */
    int per_lane_starts;
    /* ot_solve_dense_with's scheduled stops (the event handler at each). */
    int stops;

    /* -- roots and events -- */
    /* Roots may record or handle events (OT_EVENT_RECORD, OT_EVENT_HANDLE),
     * and every root of a solve is recorded (the state at it); 0: roots
     * only stop their lane (OT_EVENT_STOP) and nothing is recorded. */
    int recorded_events;

    /* -- sensitivities and the adjoint -- */
    /* ot_solve_fwd_sens (by difference quotients at least). */
    int fwd_sens;
    /* Forward sensitivities from the user's df/dp (ot_ode_set_dfdp). */
    int sens_dfdp;
    /* Sensitivities to initial values (ot_ode_set_sens_initial). */
    int sens_initial;
    /* Forward sensitivities through scheduled stops and handled events
     * (their jumps, run/sens_jump.h; the mode's sens_state hook). */
    int sens_events;
    /* ot_solve_adjoint. */
    int adjoint;
    /* The adjoint through scheduled stops and handled or recorded roots
     * (run/adjoint_events.h; the mode's host_state, reinit and
     * restart_state serve its segments). */
    int adjoint_events;
    /* A lane whose own y0 or params are not finite fails alone (the plan
     * marks it; the solver leaves it out); 0: the call is refused. */
    int bad_inputs_alone;
    /* ot_solve_adjoint with per-lane output times (a lockstep block's
     * backward pass restarts at the union of its lanes' times). */
    int adjoint_per_lane_times;

    /* Root functions (ot_ode_set_roots); 0: refused. */
    int roots;
    /* ot_solve, every step's output; 0: refused. */
    int every_step;

    /* -- methods and linear solvers -- */
    /* The kernel methods (OT_ROS23 ... OT_VERN7, src/kernel/), and only
     * those: ot__solver_for chooses this row for them. */
    int kernel_methods;
    /* Lanes run in lane groups, each lane its own t and h: plan->block is
     * the group (ot_ode_set_lane_group, or chosen from the callbacks). */
    int lane_groups;
    /* ARKODE's methods (ARKStep: OT_ERK_*, OT_ESDIRK_*, OT_IMEX_ARK*); 0:
     * CVODE's OT_BDF and OT_ADAMS only. */
    int arkode_methods;
    /* The linear solvers of implicit methods: OT__LINSOL_BIT(OT_LINSOL_*)
     * or'ed. */
    unsigned linsols;

    /* -- where data lives -- */
    /* y0 and params may be device memory, read in place. */
    int device_inputs;
    /* Dense outputs stay on the device when the problem asks
     * (ot_ode_set_outputs_on_device; alloc_output puts them there). */
    int device_outputs;

    /* -- memory estimate (size_limits.c) -- */
    ot__work_model working_memory;
    /* The working memory is device memory: not counted against the host's. */
    int working_on_device;

    /* -- hooks -- */
    /* A host f64 copy of a device input the plan must read (t_eval).
     * NULL: device inputs are refused. Ownership: *out is the caller's. */
    int (*host_copy)(ot_view v, ot_tensor **out, const char *name);
    /* One [rows, nt, nbatch] output tensor where the solver keeps outputs.
     * NULL: host memory. Ownership: *out is the caller's. */
    int (*alloc_output)(ot_tensor **out, const ot__plan *plan, const char *name);
    /* NaN past each lane's count in outputs alloc_output put on a device. */
    int (*pad_device_outputs)(const ot__plan *plan, ot_solution *sol);
    /* Solves every lane of plan into sink. @return OT_OK (lane failures are
     * in the solution) or an error of the whole call. */
    int (*run)(const ot__plan *plan, const ot__sink *sink);
};

/* The solver for a problem's mode and device (solvers.c): the only place
 * that looks at them to choose. A device always names its row, also in a
 * mode that row does not run: ot__solver_check refuses that. */
const ot__solver *ot__solver_for(const ot_ode *ode);
/* What refusals of a capability say chooses the solver. */
#define OT__SOLVER_CHOICE                                                                \
    "ot_ode_set_method, ot_ode_set_mode and ot_ode_set_device choose the solver"

/* Whether the problem's mode and device select a solver. @return OT_OK, or
 * OT_ERR_ARG naming the option. */
int ot__solver_check(const ot_ode *ode);
/* The table's rows, i = 0, 1, ...; NULL past the last (tests walk them). */
const ot__solver *ot__solver_row(int i);

/* Checks the arguments of a solve and fills *plan (t_eval absent for
 * OT__STEPS). Ownership: plan->owned is freed by ot__plan_free, also after a
 * failure. @return OT_OK or the input error, message naming the argument. */
int ot__plan_make(ot__plan *plan, const ot_ode *ode, ot_view y0, ot_view params,
                  ot_view t_eval, double t_final, ot__kind kind);
/* As ot__plan_make, with per-lane starts, scheduled stops and (OT__SENS)
 * their derivatives in p (ot_solve_inputs; absent views: none). */
int ot__plan_make_with(ot__plan *plan, const ot_ode *ode, const ot_solve_inputs *in,
                       ot__kind kind);
void ot__plan_free(ot__plan *plan);
/* Why lane b (pl->bad[b] set) fails: its first value that is not finite,
 * named as the argument check names it, into msg. */
int ot__plan_bad_message(const ot__plan *pl, int64_t b, char *msg, size_t len);
/* The lockstep block a CPU solve of n states uses when none is set. */
int64_t ot__lockstep_auto_block(int64_t n);

/* Lane b's output times (pl->nt of them, NaN past its own count when per
 * lane). */
static inline const double *ot__plan_times(const ot__plan *pl, int64_t b)
{
    return pl->t_lanes ? pl->t + b * pl->t_stride : pl->t;
}

/* How many of lane b's output times are real (not NaN padding). */
static inline int64_t ot__plan_nt(const ot__plan *pl, int64_t b)
{
    if (!pl->t_lanes)
        return pl->nt;
    const double *t = ot__plan_times(pl, b);
    int64_t k = pl->nt;
    while (k > 0 && t[k - 1] != t[k - 1])
        k--;
    return k;
}

/* Lane b's start. */
static inline double ot__plan_t0(const ot__plan *pl, int64_t b)
{
    return pl->t0s ? pl->t0s[b * pl->t0_stride] : pl->t0;
}

/* Lane b's scheduled stops (pl->nstops, NaN past its own), and how many. */
static inline const double *ot__plan_stops(const ot__plan *pl, int64_t b)
{
    return pl->stops + b * pl->stop_stride;
}

/* d (lane b's stop k) / d p: np values. */
static inline const double *ot__plan_stop_dp(const ot__plan *pl, int64_t b, int64_t k)
{
    return pl->stops_dp + k * pl->stops_dp_kstride + b * pl->stops_dp_bstride;
}

static inline int64_t ot__plan_nstops(const ot__plan *pl, int64_t b)
{
    const double *s = pl->stops ? ot__plan_stops(pl, b) : NULL;
    int64_t k = s ? pl->nstops : 0;
    while (k > 0 && s[k - 1] != s[k - 1])
        k--;
    return k;
}

#ifdef __cplusplus
}
#endif

#endif

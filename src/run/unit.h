/* Private: the run loop (run/loop.c) and the unit of work it drives. The
 * time loop of every mode exists once, over a unit: one lane (lanes mode)
 * or a block of lanes (lockstep, CPU or CUDA) on one integrator. It walks
 * the output times (the union of the unit's lanes'), takes scheduled stops
 * and roots (recorded, handled or stopping) on the way, records every step
 * for ot_solve, and reports progress and honours cancel. A mode supplies
 * only what differs (ot__unit_ops): where the integrator writes the state,
 * the host copy event handlers change, how the integrator restarts, how
 * outputs are stored and how the unit fails. The loop makes the same
 * integrator calls in the same order whatever the mode, so one lane of
 * lockstep is lanes mode bit for bit, and lanes mode stays raw CVODE. */
#ifndef OT_SRC_RUN_UNIT_H
#define OT_SRC_RUN_UNIT_H

#include "kit/callback.h"
#include "kit/integ.h"
#include "solve/solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A lane's state in its unit (unit->stopped[b]). A lane that is not
 * running stands still: its derivative and Jacobian block are zero, its
 * root functions held away from zero, and it has no say in the norm. */
enum {
    OT__LANE_RUNNING = 0,
    OT__LANE_ROOT = 1,   /* stopped at a root (OT_EVENT_STOP) */
    OT__LANE_FAILED = 2, /* failed: status and message are in the solution */
    OT__LANE_DONE = 3    /* past its own last output time */
};

/* Targets of ops->target besides an output index. */
enum { OT__TARGET_STOP = -1, OT__TARGET_STEP = -2 };

typedef struct ot__unit ot__unit;

/* What a mode supplies. Every hook is required unless said otherwise. */
typedef struct {
    /* The vector the integrator writes the state into on its way to output
     * i (>= 0), a scheduled stop (OT__TARGET_STOP) or the next step
     * (OT__TARGET_STEP). */
    N_Vector (*target)(ot__unit *u, int64_t i);
    /* The state at the unit's last restart (u->t_restart), put in target
     * when the mode keeps outputs there; returns the vector holding it. */
    N_Vector (*restart_state)(ot__unit *u, N_Vector target);
    /* After an advance to t: the sensitivities there (OT__SENS only).
     * Returns the integrator's flag. */
    int (*sens_at)(ot__unit *u, double t);
    /* Host memory [n, k] of sensitivity j at the unit's time (after
     * sens_at, or at the last restart), writable: the jump at an event
     * (run/sens_jump.h) changes it, and reinit restarts the sensitivities
     * from it (OT__SENS with events only; NULL hook: the mode has none). */
    double *(*sens_state)(ot__unit *u, int64_t j);
    /* Writable host memory [n, k] holding y's state, for event handlers
     * (NULL hook: the mode cannot show handlers the state; roots only stop
     * lanes there). */
    double *(*host_state)(ot__unit *u, N_Vector y);
    /* Restarts the integrator at t from host (the state host_state gave,
     * maybe changed by handlers): afterwards restart_state gives it. With
     * OT__SENS the sensitivities restart too, from sens_state's. Returns
     * the integrator's flag. */
    int (*reinit)(ot__unit *u, double t, double *host);
    /* Stores output u->at[b] from state y at t for every lane b with
     * u->at[b] >= 0 (outputs, sensitivities, out's rows). OT_OK, or a
     * status with the message in u->cb->msg. */
    int (*emit)(ot__unit *u, double t, N_Vector y);
    /* The recorded rows of every lane at (t, y) into host dst [rows, k]
     * (ot_solve). OT_OK, or a status with the message in u->cb->msg. */
    int (*rows)(ot__unit *u, double t, N_Vector y, double *dst);
    /* Lanes just left the running state (NULL: the mode reads stopped as
     * it is). */
    void (*stopped_changed)(ot__unit *u);
    /* The unit's statistics (its integrator's counters) into the solution,
     * once its run, or the adjoint's forward pass, is over. */
    void (*stats)(ot__unit *u);
    /* The unit's integrator or output failed at t: its running lanes fail
     * with status and `what` (solver: an integrator failure, whose cause
     * may be a callback that kept failing, ot__cb_cause). */
    void (*fail)(ot__unit *u, int status, double t, const char *what, int solver);
    /* The integrator failed (flag, message what): the lane it failed for,
     * when one lane's steps or retries explain it, with that lane's status
     * and message in *status and msg; -1 when none does (NULL hook: never
     * one; a one-lane unit fails as a whole). */
    int64_t (*blame)(ot__unit *u, int flag, const char *what, int *status, char *msg,
                     size_t len);
    /* Goes on from the last good step at t without the lanes that just
     * left: the state and sensitivities there, and a restart (at the last
     * restart itself: its state). Returns the integrator's flag. Required
     * with blame. */
    int (*resume)(ot__unit *u, double t);
    /* A new stretch of steps begins (a backward segment of the adjoint):
     * what blame keeps of the steps so far is forgotten (NULL: it keeps
     * nothing; a mode forgets at its outputs itself). */
    void (*forget)(ot__unit *u);
} ot__unit_ops;

/* A unit of work: k lanes [lane0, lane0 + k) of the plan on one
 * integrator. The mode fills it (arrays of k entries it owns) before
 * ot__run_dense or ot__run_steps. */
struct ot__unit {
    const ot__unit_ops *ops;
    void *mode; /* the mode's state (its worker or block) */
    const ot__plan *plan;
    const ot__sink *sink;
    ot__ig *ig;
    ot__cb *cb; /* the unit's callback state; cv_msg gets the integrator's */
    int64_t lane0, k, n, np;
    int has_ls;              /* the integrator has a linear solver (statistics) */
    int report;              /* report progress as it goes (lockstep blocks) */
    unsigned char *stopped;  /* [k]: OT__LANE_* */
    int *rootsfound;         /* [nroots * k] */
    double *p;               /* [np, k]: the lanes' params, a copy handlers may change */
    int64_t *at;             /* [k]: for emit, each lane's output index or -1 */
    int64_t *next;           /* [k]: each lane's next output */
    int64_t *knext;          /* [k]: each lane's next scheduled stop */
    double *scratch;         /* [n, k] host: the state before handlers (steps) */
    ot_lane_stats *before;   /* counters before the last restart (CVODE zeroes them) */
    ot__record *steps;       /* ot_solve: the unit's record (width rows * k) */
    double t_restart;        /* the unit's start, or its last restart */
    int64_t reported;        /* progress reported so far (progress.h units) */
    int64_t nfailed;         /* lanes OT__LANE_FAILED so far */
    struct ot__guard *guard; /* the run loop's, during a run (run/guard.h) */
    /* During ot__run_dense: the union of the lanes' times and stops (NULL
     * when they share them); the unit's, so that a run abandoned in
     * flight (ot__run_unit_abandon) leaves nothing allocated. */
    double *times_owned, *stops_owned;
    /* OT__SENS through events (run/sens_jump.h), the run's: each lane's
     * d q / d p_j [np, k] for sensitivity j (q: its current parameters),
     * and the jump's scratch; NULL without events. */
    double *psens;
    struct ot__sens_jump *jump;
    /* The adjoint through events, during its forward pass: the log of
     * segments, events and loss terms (run/adjoint_events.h); else NULL. */
    struct ot__adj_ev *adj_ev;
};

/* A unit of k lanes from lane0 on integrator ig, the rest (arrays, flags)
 * zero for the mode to fill; it starts at the plan's t0 for lane0. */
void ot__run_unit_init(ot__unit *u, const ot__unit_ops *ops, void *mode,
                       const ot__plan *plan, const ot__sink *sink, ot__ig *ig, ot__cb *cb,
                       int64_t lane0, int64_t k, int has_ls);

/* The unit's arrays, the mode's (see struct ot__unit). */
void ot__run_unit_arrays(ot__unit *u, unsigned char *stopped, int *rootsfound, double *p,
                         int64_t *at, int64_t *next, int64_t *knext, double *scratch,
                         ot_lane_stats *before, ot__record *steps);

/* The dense (and sensitivity) loop: every output time of the unit's lanes,
 * stops and roots on the way. Counts, roots, final times, statistics and
 * failures go into the sink's solution. The unit starts at u->t_restart. */
void ot__run_dense(ot__unit *u);
/* Every step from the start to plan->t_final into u->steps (counts,
 * statistics and failures into the solution). */
void ot__run_steps(ot__unit *u);

/* Output i of the unit's times at t from state y (shared: every lane's
 * times are the unit's, else each lane stores its own next output when it
 * is t): ops->emit for the lanes due, their counts and final times; a lane
 * past its own last output is done. OT_OK, or the emit's status (the
 * unit's running lanes then failed). */
int ot__run_emit(ot__unit *u, int64_t i, double t, N_Vector y, int shared);
/* Whether every lane of the unit has stopped (root, done or failed). */
int ot__run_all_stopped(const ot__unit *u);
/* out of one lane (its [n, 1] and [np, 1] columns) into o [nout], checked
 * into cb (lane: for messages): OT_OK or OT_ERR_CALLBACK. */
int ot__run_call_out(const ot_ode *ode, ot__cb *cb, int64_t lane, double t,
                     const double *y, const double *p, double *o);
/* Lane b fails alone with status and msg; it stands still from now on. */
void ot__run_lane_fails(ot__unit *u, int64_t b, int status, const char *msg);
/* Every running lane fails (ops->fail). */
void ot__run_unit_fails(ot__unit *u, int status, double t, const char *what, int solver);

/* A run of u cut short inside SUNDIALS (memory ran out under its scope,
 * core/sun_memory.h): frees what the run loop had allocated for it. */
void ot__run_unit_abandon(ot__unit *u);

/* Lane `lane` of sol fails with OT_ERR_NOMEM because memory ran out inside
 * its integrator (the problem's method names it), keeping what it reached:
 * the one message of every mode. */
void ot__run_lane_out_of_memory(ot_solution *sol, int64_t lane, int method);
/* The integrator failed (flag, message what): when one lane explains it
 * (ops->blame), that lane fails alone with its own status and message;
 * else every running lane fails, at t. @return 1 a lane left and others
 * run (the caller resumes them), 0 every lane stopped, -1 the unit
 * failed. */
int ot__run_blame_lane(ot__unit *u, int flag, double t, const char *what);

/* The integrator's counters so far added to u->before (before a restart,
 * which zeroes them). */
void ot__run_keep_counters(ot__unit *u);

#ifdef __cplusplus
}
#endif

#endif

/* Private: the kernel solver (src/kernel/): odetensor's own per-lane
 * integrators, Rosenbrock and explicit Runge-Kutta, each lane its own t
 * and h. One thread steps a lane group (plan->block lanes, a pool unit) in
 * loops over the group's [n, k] columns; every lane's arithmetic is its own
 * (nothing is shared or reduced across lanes, and C11 compiles without FMA
 * contraction), so a lane's bits do not depend on its group or thread.
 *
 * Why a loop of its own and not the run loop (run/loop.c): the run loop's
 * unit is k lanes on one integrator at one time; a group's lanes stand at
 * k different times, and the CUDA form of these methods (one thread a lane)
 * must run its loop inside the kernel. What the run loop holds beyond
 * stepping (stops, roots, sensitivities) the row declares it lacks
 * (entry/solvers.c), so the planner refuses it. */
#ifndef OT_SRC_KERNEL_KERNEL_H
#define OT_SRC_KERNEL_KERNEL_H

#include <sundials/sundials_types.h>

#include "kernel/tables.h"
#include "kit/callback.h"
#include "solve/solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Solves every lane of plan into sink: groups of plan->block lanes dealt to
 * plan->threads threads by the pool. @return OT_OK (lane failures are in the
 * solution) or OT_ERR_NOMEM (a thread's group could not be allocated). */
int ot__kernel_run(const ot__plan *plan, const ot__sink *sink);

/* A compiled model's solve (model.c, odetensor/kernel.h): its lanes in
 * chunks on the CPU threads (OT_KM_WIDTH stepped at once), or all on the
 * CUDA device. Returns as
 * ot__kernel_run; OT_ERR_NO_CUDA when the device cannot run them. */
int ot__kmodel_run(const ot__plan *plan, const ot__sink *sink);
int ot__kmodel_run_cuda(const ot__plan *plan, const ot__sink *sink);

/* Lane b's parameters (np) and state at t0 (n: y0's column, or init on p,
 * checked by cb's rules) into p and y, compact. @return OT_OK or
 * OT_ERR_CALLBACK (init failed: cb's message). */
int ot__kernel_lane_inputs(const ot__plan *plan, ot__cb *cb, int64_t b, double *p,
                           double *y);

/* Lane b's output i at t, state y, parameters p: through the out function
 * (its row into row, [rows]) if any, into the solution's ys, and the lane's
 * count. The lane groups' and the compiled models' one store. @return
 * OT_OK, or out's failure (cb's message). */
int ot__kernel_store(const ot__plan *plan, const ot__sink *sink, ot__cb *cb, int64_t b,
                     int64_t i, double t, const double *y, const double *p, double *row);

/* The lane group when the problem sets none and its callbacks serve one. */
#define OT__KERNEL_GROUP 8

enum { OT__KL_RUN = 0, OT__KL_DONE = 1, OT__KL_FAILED = 2 };

/* One lane of a group. */
typedef struct {
    int64_t b;             /* the lane in the solve */
    double t;              /* where it stands */
    ot_kernel_ctrl ctl;    /* its step (ctl.h, the next) and its step control */
    double t1;             /* where its attempt would take it */
    double t_end;          /* its last output time */
    int64_t next;          /* its next output */
    int64_t nt;            /* its output times */
    int64_t since;         /* steps since its last output */
    const double *stops;   /* its scheduled stops (nstops, increasing), or NULL */
    int64_t nstops, knext; /* and the next one to take */
    int state;             /* OT__KL_* */
    int fresh;             /* f0 (and J, f_t) at (t, y) are to be made */
    int want;              /* the running call is for it */
    int rc;                /* this attempt's callback result: 0, 1 retry, -1 stop */
    int jrc;               /* the Jacobian's difference quotients' result */
    double errn;           /* this attempt's error norm */
    ot_lane_stats st;
    ot__cb cb; /* the callback rules, per lane */
} ot__klane;

/* A thread's group: storage for cap lanes, holding k of them at a time. */
typedef struct {
    const ot__plan *pl;
    const ot__sink *sink;
    const ot_ode *ode;
    const ot__ros_table *ros; /* one of ros and erk */
    const ot__erk_table *erk;
    int64_t n, np, cap, k;
    int lanes_call; /* a callback call may cover the whole group */
    /* [n, cap] columns */
    double *y, *y1, *err, *arg, *f0, *ft, *fs, *tmp;
    double *kst; /* stage vectors, kst + i n cap; ERK: dense_stages of them */
    double *jac; /* [n, n, cap] */
    double *lu;  /* [n, n, cap] */
    sunindextype *piv;
    double *p;     /* [np, cap]: the group's parameters, compact */
    double *tv;    /* [cap]: each lane's time for a call */
    double *dense; /* [rows + n]: an output's state and its out row */
    /* Roots (roots.c), with nroots > 0: each lane's g at its reference
     * point and which roots are active ([nroots, cap]); scratch for one
     * lane's search: g at a piece's end and at a trial point, the roots
     * found, the state at an event. */
    double *groot, *ghi, *gmid, *yev;
    unsigned char *gact;
    int *rootsfound;
    ot__klane *lane;
} ot__kgroup;

/* Allocates a group for plan (ownership: the caller's, ot__kgroup_free).
 * @return OT_OK or OT_ERR_NOMEM. */
int ot__kgroup_new(ot__kgroup **out, const ot__plan *pl, const ot__sink *sink);
void ot__kgroup_free(ot__kgroup *g);

/* Why a lane failed, as a message into msg, for a lane that ended with
 * OT_KERNEL_LANE_RETRIES, _SMALL or _MAX_STEPS at t with step h (the lane
 * groups' and the compiled models' words alike). @return OT_ERR_SOLVER. */
int ot__kernel_fail_message(const ot_ode *ode, const char *method, int why, double t,
                            double h, char *msg, size_t len);

/* Lane c's root functions at its time and state (its start, or a restart
 * after a stop or a handled event): the reference its next step's search
 * starts from; a root exactly zero there is inactive until it leaves zero.
 * @return 0, or -1 the root function failed (the lane's cb message). */
int ot__kernel_roots_restart(ot__kgroup *g, int64_t c);

/* The first event of lane c's accepted attempt from t to t1 (y1, and the
 * dense output: ERK's extra stages made), CVODE's rules (roots.c). Events
 * whose roots all record are recorded on the way. @return 0: none (the
 * reference is now g at t1); 1: a stopping or handled event at *t_ev, its
 * roots in g->rootsfound (+1 rising, -1 falling, 0), the state there in
 * g->yev; -1: the root function failed (cb's message); -2: recording
 * failed, the lane failed already. */
int ot__kernel_roots_scan(ot__kgroup *g, int64_t c, double *t_ev);

/* Which of a lane's counters a call adds to. */
enum { OT__KC_RHS = 0, OT__KC_JAC = 1 };

/* f = rhs at the lanes' times tv and states y ([n, k] columns). For each
 * lane whose `want` is set: its rc (0; 1: a smaller step may help, the rhs
 * returned > 0 or wrote NaN or Inf; -1: stopped), by the callback rules of
 * kit/callback.h with the lane's own ot__cb, and one evaluation on the
 * counter. A call over the group that fails is made again lane by lane, so
 * each lane gets its own result; columns of lanes not wanted are computed
 * too (a group call covers them) and ignored. */
void ot__kernel_rhs(ot__kgroup *g, const double *tv, const double *y, double *f,
                    int counter);

/* J = df/dy at the lanes' (t, y) into g->jac for the lanes wanted, with
 * their rc as ot__kernel_rhs's: the user's Jacobian, or difference
 * quotients of rhs (f0 = rhs at (t, y) given) with increments that depend
 * on y alone, so that a lane's J is the same whenever it is made. */
void ot__kernel_jac(ot__kgroup *g, const double *f0);

/* f_t = df/dt at the lanes' (t, y) into g->ft for the lanes wanted: 0 for
 * an autonomous problem, else a forward difference in t (f0 given). */
void ot__kernel_ft(ot__kgroup *g, const double *f0);

#ifdef __cplusplus
}
#endif

#endif

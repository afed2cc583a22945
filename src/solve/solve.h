/* Private: a checked solve request (the plan) and the lanes-mode worker. */
#ifndef OT_SRC_SOLVE_IMPL_H
#define OT_SRC_SOLVE_IMPL_H

#include "ode/ode_impl.h"
#include "solve/solution_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { OT__DENSE = 1, OT__STEPS = 2, OT__SENS = 3 } ot__kind;

/* Everything a lane needs, checked once: f64 views (f32 inputs converted
 * into owned tensors), sizes and times. */
typedef struct {
    const ot_ode *ode;
    ot__kind kind;
    int64_t n, np, nbatch, nt, rows; /* rows: nout, or n without out */
    int has_y0;
    ot_view y0;          /* [n, 1|nbatch] f64 when has_y0 */
    ot_view p;           /* [np, 1|nbatch] f64 (np may be 0) */
    const double *t;     /* [nt] for dense and sens */
    double t0, t_final;  /* t_final for steps */
    int64_t step_limit;  /* steps: total steps allowed per lane */
    ot_tensor *owned[3]; /* f32 conversions of y0, params, t_eval */
} ot__plan;

/* Checks the arguments of a solve and fills *plan (t_eval absent for
 * OT__STEPS). Ownership: plan->owned is freed by ot__plan_free, also after a
 * failure. @return OT_OK or the input error, message naming the argument. */
int ot__plan_make(ot__plan *plan, const ot_ode *ode, ot_view y0, ot_view params,
                  ot_view t_eval, double t_final, ot__kind kind);
void ot__plan_free(ot__plan *plan);

/* Output buffers a worker writes lane results into. For dense and sens the
 * tensors of the solution; for steps the worker hands back per-lane arrays. */
typedef struct {
    ot_solution *sol;
    double **lane_ts; /* steps: [nbatch] owned arrays of count[b] times */
    double **lane_ys; /* steps: [nbatch] owned arrays of rows * count[b] */
} ot__sink;

typedef struct ot__worker ot__worker;

/* One CVODE(S) instance configured for plan, reused for every lane this
 * worker solves. Ownership: *out is the caller's (ot__worker_free).
 * @return OT_OK, OT_ERR_NOMEM or OT_ERR_SOLVER. */
int ot__worker_new(ot__worker **out, const ot__plan *plan);
void ot__worker_free(ot__worker *w);

/* Solves lane b into the sink; the lane's status, message, count, root and
 * statistics go into sink->sol. Never fails as a whole: a lane that cannot
 * be solved records why. */
void ot__worker_solve_lane(ot__worker *w, int64_t b, const ot__sink *sink);

#ifdef __cplusplus
}
#endif

#endif

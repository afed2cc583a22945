/* Private: the parts of ot_solve_adjoint every solver shares: checking the
 * loss, its value and derivatives at an output time, the backward rhs and
 * quadrature arithmetic, and the gradient tensors. A solver runs the forward
 * and backward passes with CVODES (lanes/adjoint.c). */
#ifndef OT_SRC_SOLVE_ADJOINT_H
#define OT_SRC_SOLVE_ADJOINT_H

#include <float.h>
#include <math.h>
#include <stddef.h>

#include <cvodes/cvodes.h>

#include "kit/callback.h"
#include "solve/solve.h"

/* Forward steps between CVODES checkpoints (CVodeAdjInit). */
#define OT__ADJ_STEPS 100

/* Checks loss against the plan: made by ot_loss_squares or ot_loss_custom,
 * data and weights f64 [rows, nt] or [rows, nt, nbatch]. Stores it in the
 * plan. @return OT_OK or the error, message naming the argument. */
int ot__adj_check(ot__plan *plan, const ot_loss *loss);

/* Lane b's state at output i evaluates out (when the problem has one): a
 * solver's way of calling it for one lane, y [n] and p [np] into o [nout].
 * @return OT_OK or OT_ERR_CALLBACK (message in the solver's ot__cb). */
typedef int (*ot__adj_out_fn)(void *ctx, double t, const double *y, const double *p,
                              double *o);

/* Scratch of ot__adj_point, each its own allocation: work, rows * 3 + n +
 * np doubles (ot__adj_point_scratch); dgdy [n] and dgdp [np] (at least 1),
 * where the user's loss writes, so that its views end where their
 * allocations end (a write past one is an ASan/valgrind error). */
typedef struct {
    double *work, *dgdy, *dgdp;
} ot__adj_scratch;

static inline int64_t ot__adj_point_scratch(const ot__plan *pl)
{
    return 3 * pl->rows + pl->n + pl->np;
}

/* g_i of lane b at output i (time t, state y [n], params p [np]) added to
 * *g, d g_i / d y into dgdy [n] (overwritten) and d g_i / d p added to dgdp
 * [np]. out: the solver's out call (used with an out function).
 * @return OT_OK or OT_ERR_CALLBACK (message in cb). */
int ot__adj_point(const ot__plan *pl, ot__cb *cb, ot__adj_out_fn out, void *ctx,
                  int64_t i, int64_t b, double t, const double *y, const double *p,
                  const ot__adj_scratch *scratch, double *g, double *dgdy, double *dgdp);

/* The loss's integrand q of lane b at (t, y [n], p [np]) into *q, dqdy [n]
 * and dqdp [np], with the callback rules of rhs (a return > 0 or NaN asks
 * for a smaller step). @return 0, 1 or -1. */
int ot__adj_integrand(const ot__plan *pl, ot__cb *cb, int64_t b, double t,
                      const double *y, const double *p, double *q, double *dqdy,
                      double *dqdp);

/* The backward rhs lambda' = -J^T lambda for one lane: J [n, n]
 * column-major. */
static inline void ot__adj_rhs(const double *J, const double *lam, double *out, int64_t n)
{
    for (int64_t j = 0; j < n; j++) {
        const double *col = J + j * n;
        double s = 0;
        for (int64_t i = 0; i < n; i++)
            s += col[i] * lam[i];
        out[j] = -s;
    }
}

/* The backward Jacobian -J^T into JB [n, n] column-major. */
static inline void ot__adj_jac(const double *J, double *JB, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++)
            JB[i + j * n] = -J[j + i * n];
}

/* The quadrature rhs q'_j = -lambda^T df/dp_j for one lane: D [n, np]. */
static inline void ot__adj_quad(const double *D, const double *lam, double *out,
                                int64_t n, int64_t np)
{
    for (int64_t j = 0; j < np; j++) {
        double s = 0;
        for (int64_t i = 0; i < n; i++)
            s += D[i + j * n] * lam[i];
        out[j] = -s;
    }
}

/* The step for state j (value y) in the backward problem's central
 * differences of rhs: cbrt(eps) max(|y|, rtol |y| + atol_j). Both solvers'
 * Jacobians use it (J enters the backward rhs, so forward differences are
 * too coarse there). */
static inline double ot__adj_dq_step(const ot_ode *ode, int64_t j, double y)
{
    const double atol = ode->atol_vec ? ode->atol_vec[j] : ode->atol, ay = fabs(y);
    return cbrt(DBL_EPSILON) * fmax(ay, ode->rtol * ay + atol);
}

/* The absolute tolerance of lambda, its quadratures and the integral term:
 * the problem's scalar atol, or the smallest entry of its atol vector. */
double ot__adj_atol(const ot_ode *ode);

/* The backward problem's settings after CVodeInitB: user data, the
 * problem's rtol with ot__adj_atol, its step limit. @return CVODE's flag. */
int ot__adj_settings_b(void *cv, int which, const ot_ode *ode, void *user);

/* Error control of the backward quadratures (after CVodeQuadInitB).
 * @return CVODE's flag. */
int ot__adj_quad_settings_b(void *cv, int which, const ot_ode *ode);

/* The steps the backward problem may take between two output times after
 * a forward pass of forward_steps (ot_ode_set_adjoint_steps). */
int64_t ot__adj_max_steps_b(const ot_ode *ode, int64_t forward_steps);

/* The loss's integral term as a forward quadrature of fQ from yQ (zeroed
 * here), in the error test. @return CVODE's flag (CV_MEM_FAIL: no memory). */
int ot__adj_integral_init(void *cv, CVQuadRhsFn fQ, N_Vector yQ, const ot_ode *ode);

/* The gradient tensors of sol, NaN-filled (a lane's results replace the
 * NaN when it succeeds), and the per-lane byte counts. @return OT_OK or
 * OT_ERR_NOMEM. */
int ot__adj_alloc(const ot__plan *pl, ot_solution *sol);

/* Stores lane b's results: loss, dL/dp [np], dL/dy0 [n]. */
void ot__adj_store(const ot__plan *pl, ot_solution *sol, int64_t b, double loss,
                   const double *gp, const double *gy0);

#endif

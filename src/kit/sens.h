/* Private: forward sensitivities from derivatives (ot_ode_set_dfdp), shared
 * by lanes mode and lockstep. Each sensitivity's rhs is J s_j + df/dp_j,
 * with the user's Jacobian and df/dp evaluated once per CVODES call for all
 * sensitivities: np matrix-vector products instead of the 2 np rhs calls of
 * central differences, and derivatives exact to rounding. */
#ifndef OT_SRC_SOLVE_SENS_H
#define OT_SRC_SOLVE_SENS_H

#include <math.h>
#include <stdint.h>

#include "odetensor/ode.h"
#include "kit/callback.h"
#include "kit/dq.h"

/* The user's Jacobian into J [n, n, lanes] and df/dp into D [n, np, lanes]
 * at (t, y, p), for lanes lane0.. of the solution. Both arrive zeroed by
 * contract: entries a callback leaves alone are zero. On the first call
 * (*first nonzero; cleared here) they arrive poisoned instead, and a lane
 * whose whole block stays unwritten stops the call (a lockstep callback
 * written for lane 0 would otherwise give the other lanes zero derivatives
 * and wrong sensitivities with status OK); later calls get zeros, which
 * costs one pass instead of three. A nonzero return or a NaN/Inf follows
 * callback.c's rules. @return 0, 1 (retry with a smaller step) or -1. */
int ot__sens_derivatives(ot__cb *cb, const ot_ode *ode, double t, ot_view y, ot_view p,
                         double *J, double *D, int64_t lanes, int64_t lane0, int *first);
/* Each half of ot__sens_derivatives, with the same rules (the adjoint's
 * backward problem wants them apart). */
int ot__derivs_jac(ot__cb *cb, const ot_ode *ode, double t, ot_view y, ot_view p,
                   double *J, int64_t lanes, int64_t lane0, int *first);
int ot__derivs_dfdp(ot__cb *cb, const ot_ode *ode, double t, ot_view y, ot_view p,
                    double *D, int64_t lanes, int64_t lane0, int *first);

/* A parameter's scale in CVODES' estimated sensitivity tolerances: |p|, or
 * 1 for p = 0 (lanes mode gives CVODES these as pbar). */
static inline double ot__sens_pbar(double p) { return p != 0 ? fabs(p) : 1.0; }

/* The central-difference step along sensitivity j: the parameter's
 * (ot__fd_step) for j < np, a unit scale's for an initial value's. */
static inline double ot__sens_step(const double *p, int64_t np, int64_t j)
{
    return ot__fd_step(j < np ? p[j] : 1.0);
}

/* A callback over k lanes at (t, y, p) into out [rows, k]: y [n, k] (NULL
 * for init, which takes only p), p [np, k]. @return OT_OK or a status. */
typedef int (*ot__central_fn)(void *ctx, double t, const double *y, const double *p,
                              double *out);

/* The scratch of ot__central for k lanes (each its own array). */
typedef struct {
    int64_t k, n, np, rows;
    double *yp, *ym; /* [n, k]; unused without y */
    double *pp;      /* [np, k] */
    double *minus;   /* [rows, k]: f(-); may be yp (no longer read then) */
} ot__central_space;

/* Sensitivity j of fn's output, for k lanes at once, by central
 * differences into out [rows, k]: along (s_j, e_j) from (y, p) with the
 * step ot__sens_step of each lane, along e_j alone without y (init), along
 * s_j alone for an initial value's (j >= np). init's initial sensitivities
 * out's output sensitivities and lockstep's sensitivity rhs, in every
 * mode: out = f(+), then (f(+) - f(-)) / (2 h). dir [np, k], when not
 * NULL, replaces e_j (and the initial value's 0): the lanes' current
 * parameters' derivative d p / d p_j, which an event handler that changes
 * parameters moves (run/sens_jump.h); e_j as dir gives e_j's bits.
 * @return OT_OK or fn's status. */
int ot__central(ot__central_fn fn, void *ctx, const ot__central_space *sp, double t,
                const double *y, const double *s, const double *p, int64_t j,
                const double *dir, double *out);

/* out += D d for one lane: D [n, np] column-major (df/dp), d [np] (the
 * parameters' direction of a sensitivity, as dir above). */
static inline void ot__sens_dp_plus(const double *D, const double *d, double *out,
                                    int64_t n, int64_t np)
{
    for (int64_t k = 0; k < np; k++) {
        const double dk = d[k], *col = D + k * n;
        for (int64_t i = 0; dk != 0 && i < n; i++)
            out[i] += col[i] * dk;
    }
}

/* CVODES' estimated sensitivity tolerances (CVodeSensEEtolerances: the
 * states' tolerances with atol / pbar_j) take one pbar_j for all lanes of
 * a lockstep vector, so they are given as vectors instead
 * (CVodeSensSVtolerances): into out [n, lanes], sensitivity j's atol for
 * every state of every lane, atol_i / pbar(p_bj); p [np, lanes]. The same
 * values in lanes mode with derivatives keep one lane of lockstep equal to
 * lanes mode bit for bit. */
int ot__sens_estimated(const ot_ode *ode); /* no ot_ode_set_sens_tolerances */
void ot__sens_atol(const ot_ode *ode, const double *p, int64_t np, int64_t j, int64_t n,
                   int64_t lanes, double *out);

/* out = J s + d for one lane: J [n, n] column-major; s, d, out [n]; d NULL
 * for a sensitivity to an initial value (J s alone). */
static inline void ot__sens_jv_plus(const double *J, const double *s, const double *d,
                                    double *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = d ? d[i] : 0.0;
    for (int64_t k = 0; k < n; k++) {
        const double sk = s[k], *col = J + k * n;
        for (int64_t i = 0; i < n; i++)
            out[i] += col[i] * sk;
    }
}

#endif

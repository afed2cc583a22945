/* Private: what the two halves of the JS shim share (shim.c: the problem,
 * its callbacks and options; shim_solve.c: the solves and the solution's
 * accessors). See shim.c for the calling conventions. */
#ifndef OTW_SHIM_H
#define OTW_SHIM_H

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <odetensor.h>

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#define OTW_API EMSCRIPTEN_KEEPALIVE
#else
#define OTW_API
#endif

typedef int (*otw_eval_fn)(double t, const double *y, const double *p, double *out, int k,
                           int lane, void *user);
typedef int (*otw_init_fn)(const double *p, double *y0, int k, int lane, void *user);
/* A loss term at output i: g [1, k], dgdy [n, k], dgdp [np, k], zeroed. */
typedef int (*otw_loss_fn)(double t, int i, const double *y, const double *p, double *g,
                           double *dgdy, double *dgdp, int k, int lane, void *user);
/* A loss's integrand for one lane: q [1], dqdy [n], dqdp [np], zeroed. */
typedef int (*otw_integrand_fn)(double t, const double *y, const double *p, double *q,
                                double *dqdy, double *dqdp, int lane, void *user);
/* OT_LINSOL_GMRES's preconditioner, one lane a call: setup prepares work
 * [nwork] for P ~ I - gamma J (the Jacobian data reused when jok is 1);
 * solve writes z [n] with P z = r. */
typedef int (*otw_psetup_fn)(double t, const double *y, const double *p, double gamma,
                             int jok, double *work, int lane, void *user);
typedef int (*otw_psolve_fn)(double t, const double *y, const double *p, double gamma,
                             const double *r, double *z, double *work, int lane,
                             void *user);
/* Progress: done of total lanes; nonzero cancels the solve. */
typedef int (*otw_progress_fn)(double done, double total, void *user);
/* An event handler: y [n] and p [np] of one lane, writable. */
typedef int (*otw_event_fn)(double t, int root, int lane, double *y, double *p,
                            void *user);
/* The handler's derivatives: dz [(n + np)^2] column-major, dzdt [n + np]. */
typedef int (*otw_event_jac_fn)(double t, int root, int lane, const double *y,
                                const double *p, double *dz, double *dzdt, void *user);

typedef struct otw_problem {
    ot_ode *ode;
    otw_eval_fn rhs, rhs_explicit, jac, dfdp, out, root;
    otw_init_fn init;
    otw_event_fn event;
    otw_event_jac_fn event_jac;
    otw_psetup_fn psetup;
    otw_psolve_fn psolve;
    /* The adjoint's loss (otw_set_loss): data [rows, nt, loss_lanes] and
     * weights as it, or NULL; loss or integrand, or NULL. */
    otw_loss_fn loss;
    otw_integrand_fn integrand;
    const double *loss_data, *loss_weights;
    int loss_lanes;
    int nout; /* out's rows (0 without out) */
    void *user;
    int t_cols; /* t_eval's columns: > 1 per-lane times [nt, t_cols] (otw_set_t_cols) */
    otw_progress_fn progress; /* JS onProgress, or NULL */
} otw_problem;

/* otw_set_loss's loss as the library's, with nt output times (shim_solve.c;
 * the dosing solves' too). @return OT_OK or a view's error. */
int otw_make_loss(otw_problem *P, ot_ode *ode, int nt, ot_loss *l);

/* The problem's ot_ode, or NULL (the library then fails with its message). */
static inline ot_ode *ode_of(const otw_problem *P) { return P ? P->ode : NULL; }

#endif

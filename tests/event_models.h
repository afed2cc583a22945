/* The models with doses and events that the gradient tests share
 * (check_sens_events.c, check_adjoint_events.c), each with its closed
 * form in complex arithmetic for the complex-step derivative: an oral
 * one-compartment model with lag and bioavailability, an oral
 * two-compartment one, an infusion whose rate a handler sets from a
 * parameter, and the bouncing ball. */
#ifndef OT_TESTS_EVENT_MODELS_H
#define OT_TESTS_EVENT_MODELS_H

#include <complex.h>
#include <math.h>

#include "solve_common.h"

/* Tight tolerances (the references are exact) and the mode. */
static inline void em_settings(ot_ode *ode, int lockstep)
{
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, lockstep ? OT_LOCKSTEP : OT_LANES), OT_OK,
                     NULL);
}

/* ---- Oral one-compartment PK: p = [ka, CL, V, F, lag, amt] ----------------- */

enum { PK_NP = 6, PK_NDOSE = 3, PK_NT = 9 };
static const double pk_doses[PK_NDOSE] = {0, 12, 24};
static const double pk_t[PK_NT] = {0.5, 1, 2, 6, 12.25, 13, 20, 25, 36};

static inline int pk_rhs(double t, ot_view y, ot_view p, ot_view_mut dy, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *yb = ot_view_col_f64(y, b, 0), *pb = ot_view_col_f64(p, b, 0);
        double *d = ot_view_mut_col_f64(dy, b, 0);
        d[0] = -pb[0] * yb[0];
        d[1] = pb[0] * yb[0] - pb[1] / pb[2] * yb[1];
    }
    return 0;
}

/* The concentration: central amount / V. */
static inline int pk_out(double t, ot_view y, ot_view p, ot_view_mut o, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        *ot_view_mut_col_f64(o, b, 0) =
            ot_view_col_f64(y, b, 0)[1] / ot_view_col_f64(p, b, 0)[2];
    return 0;
}

/* J[i, j, b] = d f_i / d y_j. */
static inline int pk_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *pb = ot_view_col_f64(p, b, 0);
        ot_view_mut_set(J, 0, 0, b, -pb[0]);
        ot_view_mut_set(J, 1, 0, b, pb[0]);
        ot_view_mut_set(J, 1, 1, b, -pb[1] / pb[2]);
    }
    return 0;
}

/* dfdp[i, j, b] = d f_i / d p_j. */
static inline int pk_dfdp(double t, ot_view y, ot_view p, ot_view_mut D, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *pb = ot_view_col_f64(p, b, 0), *yb = ot_view_col_f64(y, b, 0);
        ot_view_mut_set(D, 0, 0, b, -yb[0]);
        ot_view_mut_set(D, 1, 0, b, yb[0]);
        ot_view_mut_set(D, 1, 1, b, -yb[1] / pb[2]);
        ot_view_mut_set(D, 1, 2, b, pb[1] / (pb[2] * pb[2]) * yb[1]);
    }
    return 0;
}

/* Each stop is a dose of F amt into the gut. */
static inline int pk_dose(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                   void *user)
{
    (void)t, (void)root, (void)lane, (void)user;
    const double *pb = ot_view_mut_col_f64(p, 0, 0);
    ot_view_mut_col_f64(y, 0, 0)[0] += pb[3] * pb[5];
    return 0;
}

/* Its derivatives: d gut+ / d F = amt, d gut+ / d amt = F. */
static inline int pk_dose_jac(double t, int root, int64_t lane, ot_view y, ot_view p,
                       ot_view_mut dz, ot_view_mut dzdt, void *user)
{
    (void)t, (void)root, (void)lane, (void)y, (void)dzdt, (void)user;
    const double *pb = ot_view_col_f64(p, 0, 0);
    const int64_t n = 2;
    ot_view_mut_col_f64(dz, n + 3, 0)[0] = pb[5];
    ot_view_mut_col_f64(dz, n + 5, 0)[0] = pb[3];
    return 0;
}

/* The superposition of the doses at t_d + lag, with complex parameters
 * for the complex step. */
static inline double complex pk_closed(double t, const double complex *p)
{
    const double complex ka = p[0], ke = p[1] / p[2];
    double complex c = 0;
    for (int k = 0; k < PK_NDOSE; k++) {
        const double complex s = t - (pk_doses[k] + p[4]);
        if (creal(s) < 0)
            continue;
        c += p[3] * p[5] * ka / (p[2] * (ka - ke)) * (cexp(-ke * s) - cexp(-ka * s));
    }
    return c;
}

/* d C(t) / d p_j by the complex step (exact to rounding). */
static inline double pk_closed_dp(double t, const double *p, int j)
{
    double complex pc[PK_NP];
    for (int i = 0; i < PK_NP; i++)
        pc[i] = p[i];
    pc[j] += I * 1e-30;
    return cimag(pk_closed(t, pc)) / 1e-30;
}

static inline ot_ode *pk_ode(int lockstep, int with_jac, int derivs)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, PK_NP, pk_rhs, NULL), OT_OK, NULL);
    if (derivs) {
        ck_assert_status(ot_ode_set_jac(ode, pk_jac), OT_OK, NULL);
        ck_assert_status(ot_ode_set_dfdp(ode, pk_dfdp), OT_OK, NULL);
    }
    ck_assert_status(ot_ode_set_out(ode, 1, pk_out), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, pk_dose), OT_OK, NULL);
    if (with_jac)
        ck_assert_status(ot_ode_set_event_jac(ode, pk_dose_jac), OT_OK, NULL);
    em_settings(ode, lockstep);
    return ode;
}

enum { PK_NB = 3 };
/* Three patients' parameters, column-major [PK_NP, PK_NB]. */
static const double pk_params[PK_NP * PK_NB] = {
    1.2, 3.0, 20.0, 0.8, 0.5,  100.0, /* */
    0.7, 5.0, 35.0, 0.6, 0.25, 250.0, /* */
    2.5, 1.5, 12.0, 1.0, 1.0,  50.0,
};

/* ---- Oral two-compartment PK: p = [ka, CL, V1, Q, V2, F, lag] --------------- */

enum { P2_NP = 7, P2_NT = 8 };
static const double p2_doses[2] = {0, 24};
static const double p2_t[P2_NT] = {0.75, 2, 4, 8, 16, 25, 30, 48};

/* gut, central and peripheral amounts. */
static inline int p2_rhs(double t, ot_view y, ot_view p, ot_view_mut dy, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *z = ot_view_col_f64(y, b, 0), *q = ot_view_col_f64(p, b, 0);
        double *d = ot_view_mut_col_f64(dy, b, 0);
        const double k10 = q[1] / q[2], k12 = q[3] / q[2], k21 = q[3] / q[4];
        d[0] = -q[0] * z[0];
        d[1] = q[0] * z[0] - (k10 + k12) * z[1] + k21 * z[2];
        d[2] = k12 * z[1] - k21 * z[2];
    }
    return 0;
}

static inline int p2_out(double t, ot_view y, ot_view p, ot_view_mut o, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        *ot_view_mut_col_f64(o, b, 0) =
            ot_view_col_f64(y, b, 0)[1] / ot_view_col_f64(p, b, 0)[2];
    return 0;
}

static inline int p2_dose(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                   void *user)
{
    (void)t, (void)root, (void)lane, (void)user;
    ot_view_mut_col_f64(y, 0, 0)[0] += 100 * ot_view_mut_col_f64(p, 0, 0)[5];
    return 0;
}

/* The central concentration after oral doses of F 100 (Gibaldi's
 * biexponential with absorption), complex for the complex step. */
static inline double complex p2_closed(double t, const double complex *p)
{
    const double complex ka = p[0], k10 = p[1] / p[2], k12 = p[3] / p[2],
                         k21 = p[3] / p[4], sum = k10 + k12 + k21,
                         root = csqrt(sum * sum - 4 * k10 * k21), al = (sum + root) / 2,
                         be = (sum - root) / 2;
    double complex c = 0;
    for (int k = 0; k < 2; k++) {
        const double complex s = t - (p2_doses[k] + p[6]);
        if (creal(s) < 0)
            continue;
        c += p[5] * 100 * ka / p[2] *
             ((k21 - al) * cexp(-al * s) / ((ka - al) * (be - al)) +
              (k21 - be) * cexp(-be * s) / ((ka - be) * (al - be)) +
              (k21 - ka) * cexp(-ka * s) / ((al - ka) * (be - ka)));
    }
    return c;
}

/* ---- An infusion whose rate a handler sets: p = [k, R, rate] --------------- */

/* y' = rate - k y; the stop at 1 sets rate = R, the one at 3 rate = 0. */
static inline int inf_rhs(double t, ot_view y, ot_view p, ot_view_mut dy, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *pb = ot_view_col_f64(p, b, 0);
        ot_view_mut_col_f64(dy, b, 0)[0] = pb[2] - pb[0] * ot_view_col_f64(y, b, 0)[0];
    }
    return 0;
}

static inline int inf_switch(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                      void *user)
{
    (void)t, (void)lane, (void)y, (void)user;
    double *pb = ot_view_mut_col_f64(p, 0, 0);
    pb[2] = root == -1 ? pb[1] : 0.0;
    return 0;
}

static inline double complex inf_closed(double t, const double complex *p, double complex y0)
{
    const double complex k = p[0];
    const double complex y1 = y0 * cexp(-k) + p[2] * (1 - cexp(-k)) / k;
    if (t <= 1)
        return y0 * cexp(-k * t) + p[2] * (1 - cexp(-k * t)) / k;
    const double complex y3 = y1 * cexp(-2 * k) + p[1] * (1 - cexp(-2 * k)) / k;
    if (t <= 3)
        return y1 * cexp(-k * (t - 1)) + p[1] * (1 - cexp(-k * (t - 1))) / k;
    return y3 * cexp(-k * (t - 3));
}

/* ---- The bouncing ball: y = [h, v], p = [g, e] ----------------------------- */

static inline int ball_rhs(double t, ot_view y, ot_view p, ot_view_mut dy, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        double *d = ot_view_mut_col_f64(dy, b, 0);
        d[0] = ot_view_col_f64(y, b, 0)[1];
        d[1] = -ot_view_col_f64(p, b, 0)[0];
    }
    return 0;
}

static inline int ball_floor(double t, ot_view y, ot_view p, ot_view_mut g, void *user)
{
    (void)t, (void)p, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        *ot_view_mut_col_f64(g, b, 0) = ot_view_col_f64(y, b, 0)[0];
    return 0;
}

static inline int ball_bounce(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                       void *user)
{
    (void)t, (void)root, (void)lane, (void)user;
    double *yb = ot_view_mut_col_f64(y, 0, 0);
    yb[1] = -ot_view_mut_col_f64(p, 0, 0)[1] * yb[1];
    return 0;
}

/* h(T) after the first bounce, from rest at h0: the flight formula. */
static inline double complex ball_closed(double T, double complex g, double complex e,
                                  double complex h0)
{
    const double complex t1 = csqrt(2 * h0 / g), s = T - t1;
    return e * g * t1 * s - g / 2 * s * s;
}

static inline ot_ode *p2_ode(int lockstep)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 3, P2_NP, p2_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_out(ode, 1, p2_out), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, p2_dose), OT_OK, NULL);
    em_settings(ode, lockstep);
    return ode;
}

static inline ot_ode *inf_ode(int lockstep)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, 3, inf_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, inf_switch), OT_OK, NULL);
    em_settings(ode, lockstep);
    return ode;
}

/* The ball bounces at its falling roots (handled). */
static inline ot_ode *ball_ode(int lockstep)
{
    static const int falling = OT_ROOT_FALLING, handle = OT_EVENT_HANDLE;
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 2, ball_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 1, ball_floor), OT_OK, NULL);
    ck_assert_status(ot_ode_set_root_directions(ode, &falling), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(ode, &handle), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, ball_bounce), OT_OK, NULL);
    em_settings(ode, lockstep);
    return ode;
}

/* ---- For the gradients' checks ------------------------------------------- */

static inline const double *tensor_data(const ot_tensor *t)
{
    return (const double *)ot_tensor_layout(t)->data;
}

/* Entry k of lane b's gradient tensor `which`. */
static inline double grad_at(const ot_solution *s, int which, int64_t k, int64_t b)
{
    const ot_tensor *t = ot_solution_grad_tensor(s, which);
    const int64_t rows = which == OT_GRAD_LOSS ? 1 : ot_tensor_layout(t)->shape[0];
    return tensor_data(t)[b * rows + k];
}

/* got within rel of want, or abs_floor. */
static inline void near(double got, double want, double rel, double abs_floor, const char *what,
                 int b, int j)
{
    if (!(fabs(got - want) <= rel * fabs(want) + abs_floor))
        ck_abort_msg("lane %d %s %d: %.12g, reference %.12g", b, what, j, got, want);
}

/* L = sum_i h(T_i) for the ball. */
static inline int height_loss(double t, int64_t i, int64_t lane, ot_view y, ot_view p,
                       ot_view_mut g, ot_view_mut dgdy, ot_view_mut dgdp, void *user)
{
    (void)t, (void)i, (void)lane, (void)p, (void)dgdp, (void)user;
    ot_view_mut_col_f64(g, 0, 0)[0] = ot_view_col_f64(y, 0, 0)[0];
    ot_view_mut_col_f64(dgdy, 0, 0)[0] = 1.0;
    return 0;
}

#endif

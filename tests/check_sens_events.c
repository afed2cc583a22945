/* Forward sensitivities through doses and events (ot_solve_fwd_sens_with,
 * run/sens_jump.c), against the complex-step derivatives of closed forms
 * (exact to rounding, independent of the solver) and central differences
 * of the solver itself: a dosed oral one-compartment model with a lag
 * and bioavailability, a two-compartment one, an infusion whose rate a
 * handler sets from a fitted parameter, and the bouncing ball's
 * restitution and drop height.
 * Both modes; lanes mode against one lane of lockstep and thread counts
 * bit for bit. */
#include <complex.h>
#include <math.h>

#include "solve_common.h"

/* ---- Oral one-compartment PK: p = [ka, CL, V, F, lag, amt] ----------------- */

enum { PK_NP = 6, PK_NDOSE = 3, PK_NT = 9 };
static const double pk_doses[PK_NDOSE] = {0, 12, 24};
static const double pk_t[PK_NT] = {0.5, 1, 2, 6, 12.25, 13, 20, 25, 36};

static int pk_rhs(double t, ot_view y, ot_view p, ot_view_mut dy, void *user)
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
static int pk_out(double t, ot_view y, ot_view p, ot_view_mut o, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        *ot_view_mut_col_f64(o, b, 0) =
            ot_view_col_f64(y, b, 0)[1] / ot_view_col_f64(p, b, 0)[2];
    return 0;
}

/* J[i, j, b] = d f_i / d y_j. */
static int pk_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *user)
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
static int pk_dfdp(double t, ot_view y, ot_view p, ot_view_mut D, void *user)
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
static int pk_dose(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                   void *user)
{
    (void)t, (void)root, (void)lane, (void)user;
    const double *pb = ot_view_mut_col_f64(p, 0, 0);
    ot_view_mut_col_f64(y, 0, 0)[0] += pb[3] * pb[5];
    return 0;
}

/* Its derivatives: d gut+ / d F = amt, d gut+ / d amt = F. */
static int pk_dose_jac(double t, int root, int64_t lane, ot_view y, ot_view p,
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
static double complex pk_closed(double t, const double complex *p)
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
static double pk_closed_dp(double t, const double *p, int j)
{
    double complex pc[PK_NP];
    for (int i = 0; i < PK_NP; i++)
        pc[i] = p[i];
    pc[j] += I * 1e-30;
    return cimag(pk_closed(t, pc)) / 1e-30;
}

static ot_ode *pk_ode(int lockstep, int with_jac, int derivs)
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
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, lockstep ? OT_LOCKSTEP : OT_LANES), OT_OK,
                     NULL);
    return ode;
}

enum { PK_NB = 3 };
/* Three patients' parameters, column-major [PK_NP, PK_NB]. */
static const double pk_params[PK_NP * PK_NB] = {
    1.2, 3.0, 20.0, 0.8, 0.5,  100.0, /* */
    0.7, 5.0, 35.0, 0.6, 0.25, 250.0, /* */
    2.5, 1.5, 12.0, 1.0, 1.0,  50.0,
};

/* Solves the patients with their stops t_d + lag and d stop / d lag = 1. */
static ot_solution *pk_solve(ot_ode *ode, const double *params)
{
    static double stops[PK_NDOSE * PK_NB], dp[PK_NP * PK_NDOSE * PK_NB];
    for (int b = 0; b < PK_NB; b++)
        for (int k = 0; k < PK_NDOSE; k++) {
            stops[b * PK_NDOSE + k] = pk_doses[k] + params[b * PK_NP + 4];
            for (int j = 0; j < PK_NP; j++)
                dp[(b * PK_NDOSE + k) * PK_NP + j] = j == 4 ? 1.0 : 0.0;
        }
    const double y0[2] = {0, 0};
    ot_solve_inputs in = ot_solve_inputs_make(st_vec(y0, 2), st_mat(params, PK_NP, PK_NB),
                                              st_vec(pk_t, PK_NT));
    in.stops = st_mat(stops, PK_NDOSE, PK_NB);
    const int64_t shape[3] = {PK_NP, PK_NDOSE, PK_NB};
    ck_assert_status(ot_view_make(&in.stops_dp, dp, OT_F64, ST_CPU, 3, shape, NULL),
                     OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &s), OT_OK, NULL);
    return s;
}

/* Every patient's concentration and its 6 sensitivities within 1e-6 of
 * the closed form's (relative to the largest of each), in both modes,
 * with the handler's central differences and with its Jacobian, with
 * the sensitivity rhs by differences and from J and df/dp. */
START_TEST(dosed_pk_gradients_match_the_closed_form)
{
    const int lockstep = _i & 1, with_jac = (_i >> 1) & 1, derivs = _i >> 2;
    ot_ode *ode = pk_ode(lockstep, with_jac, derivs);
    ot_solution *s = pk_solve(ode, pk_params);
    for (int b = 0; b < PK_NB; b++) {
        const double *p = pk_params + b * PK_NP;
        double complex pc[PK_NP];
        for (int i = 0; i < PK_NP; i++)
            pc[i] = p[i];
        for (int i = 0; i < PK_NT; i++)
            ck_assert_double_eq_tol(st_y(s, 0, i, b), creal(pk_closed(pk_t[i], pc)),
                                    1e-7 * p[5] / p[2]);
        for (int j = 0; j < PK_NP; j++) {
            double scale = 0;
            for (int i = 0; i < PK_NT; i++)
                scale = fmax(scale, fabs(pk_closed_dp(pk_t[i], p, j)));
            for (int i = 0; i < PK_NT; i++) {
                const double got = st_at(ot_solution_sens(s, j), 0, i, b),
                             want = pk_closed_dp(pk_t[i], p, j);
                if (fabs(got - want) > 1e-6 * scale)
                    ck_abort_msg("lane %d d C(%g) / d p%d = %.10g, closed form %.10g", b,
                                 pk_t[i], j, got, want);
            }
        }
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* The solver's own central differences in each parameter (stops moved
 * with the lag) agree with its sensitivities. */
START_TEST(dosed_pk_gradients_match_central_differences)
{
    ot_ode *ode = pk_ode(_i, 0, 0);
    ot_solution *s = pk_solve(ode, pk_params);
    for (int j = 0; j < PK_NP; j++) {
        double pp[PK_NP * PK_NB], pm[PK_NP * PK_NB];
        memcpy(pp, pk_params, sizeof pp);
        memcpy(pm, pk_params, sizeof pm);
        /* steps large enough that the solves' own error (rtol 1e-10) stays
         * below 1e-7 of the difference, small enough for h^2 */
        const double h[PK_NB] = {1e-3 * fmax(fabs(pk_params[j]), 1),
                                 1e-3 * fmax(fabs(pk_params[PK_NP + j]), 1),
                                 1e-3 * fmax(fabs(pk_params[2 * PK_NP + j]), 1)};
        for (int b = 0; b < PK_NB; b++) {
            pp[b * PK_NP + j] += h[b];
            pm[b * PK_NP + j] -= h[b];
        }
        ot_solution *sp = pk_solve(ode, pp), *sm = pk_solve(ode, pm);
        for (int b = 0; b < PK_NB; b++)
            for (int i = 0; i < PK_NT; i++) {
                /* an output at a dose (lane 0's first) has only one side */
                int at_dose = 0;
                for (int k = 0; k < PK_NDOSE; k++)
                    at_dose |=
                        fabs(pk_t[i] - pk_doses[k] - pk_params[b * PK_NP + 4]) < 2 * h[b];
                if (at_dose)
                    continue;
                const double fd = (st_y(sp, 0, i, b) - st_y(sm, 0, i, b)) / (2 * h[b]),
                             got = st_at(ot_solution_sens(s, j), 0, i, b);
                if (fabs(got - fd) > 1e-5 * fmax(fabs(fd), 1e-3))
                    ck_abort_msg("lane %d d C(%g) / d p%d = %.10g, differences %.10g", b,
                                 pk_t[i], j, got, fd);
            }
        ot_solution_free(sp);
        ot_solution_free(sm);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

static int same_bits(const ot_tensor *a, const ot_tensor *b, int64_t rows, int64_t nt,
                     int64_t nb)
{
    for (int64_t k = 0; k < nb; k++)
        for (int64_t i = 0; i < nt; i++)
            for (int64_t r = 0; r < rows; r++) {
                const double x = st_at(a, r, i, k), y = st_at(b, r, i, k);
                if (memcmp(&x, &y, sizeof x) != 0)
                    return 0;
            }
    return 1;
}

/* Lanes mode on 1 and 2 threads, and lockstep in blocks of one lane: the
 * same bits (one sensitivity rhs, one jump, the same tolerances). */
START_TEST(dosed_pk_gradients_are_the_same_bits_in_every_layout)
{
    ot_ode *ode = pk_ode(0, 0, 0);
    ot_solution *one = pk_solve(ode, pk_params);
    ck_assert_status(ot_ode_set_threads(ode, 2), OT_OK, NULL);
    ot_solution *two = pk_solve(ode, pk_params);
    ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    ck_assert_status(ot_ode_set_lockstep_block(ode, 1), OT_OK, NULL);
    ot_solution *ls = pk_solve(ode, pk_params);
    for (int j = -1; j < PK_NP; j++) {
        const ot_tensor *a = j < 0 ? ot_solution_ys(one) : ot_solution_sens(one, j);
        const ot_tensor *b = j < 0 ? ot_solution_ys(two) : ot_solution_sens(two, j);
        const ot_tensor *c = j < 0 ? ot_solution_ys(ls) : ot_solution_sens(ls, j);
        ck_assert_msg(same_bits(a, b, 1, PK_NT, PK_NB), "threads differ at %d", j);
        ck_assert_msg(same_bits(a, c, 1, PK_NT, PK_NB), "lockstep differs at %d", j);
    }
    ot_solution_free(one);
    ot_solution_free(two);
    ot_solution_free(ls);
    ot_ode_free(ode);
}
END_TEST

/* ---- Oral two-compartment PK: p = [ka, CL, V1, Q, V2, F, lag] --------------- */

enum { P2_NP = 7, P2_NT = 8 };
static const double p2_doses[2] = {0, 24};
static const double p2_t[P2_NT] = {0.75, 2, 4, 8, 16, 25, 30, 48};

/* gut, central and peripheral amounts. */
static int p2_rhs(double t, ot_view y, ot_view p, ot_view_mut dy, void *user)
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

static int p2_out(double t, ot_view y, ot_view p, ot_view_mut o, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        *ot_view_mut_col_f64(o, b, 0) =
            ot_view_col_f64(y, b, 0)[1] / ot_view_col_f64(p, b, 0)[2];
    return 0;
}

static int p2_dose(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                   void *user)
{
    (void)t, (void)root, (void)lane, (void)user;
    ot_view_mut_col_f64(y, 0, 0)[0] += 100 * ot_view_mut_col_f64(p, 0, 0)[5];
    return 0;
}

/* The central concentration after oral doses of F 100 (Gibaldi's
 * biexponential with absorption), complex for the complex step. */
static double complex p2_closed(double t, const double complex *p)
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

/* Every parameter of a dosed two-compartment model, the lag through
 * stops_dp, against the complex-step derivative of the closed form. */
START_TEST(two_compartment_gradients_match_the_closed_form)
{
    const double params[P2_NP * 2] = {1.1, 4.0, 25.0, 6.0, 60.0, 0.7, 0.4,
                                      0.6, 2.5, 15.0, 2.0, 40.0, 0.9, 0.8};
    double stops[4], dp[P2_NP * 2 * 2] = {0};
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < 2; k++) {
            stops[2 * b + k] = p2_doses[k] + params[P2_NP * b + 6];
            dp[(2 * b + k) * P2_NP + 6] = 1.0;
        }
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 3, P2_NP, p2_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_out(ode, 1, p2_out), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, p2_dose), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, _i ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
    const double y0[3] = {0, 0, 0};
    ot_solve_inputs in = ot_solve_inputs_make(st_vec(y0, 3), st_mat(params, P2_NP, 2),
                                              st_vec(p2_t, P2_NT));
    in.stops = st_mat(stops, 2, 2);
    const int64_t shape[3] = {P2_NP, 2, 2};
    ck_assert_status(ot_view_make(&in.stops_dp, dp, OT_F64, ST_CPU, 3, shape, NULL),
                     OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &s), OT_OK, NULL);
    for (int b = 0; b < 2; b++) {
        double complex pc[P2_NP];
        for (int j = 0; j < P2_NP; j++)
            pc[j] = params[P2_NP * b + j];
        for (int i = 0; i < P2_NT; i++)
            ck_assert_double_eq_tol(st_y(s, 0, i, b), creal(p2_closed(p2_t[i], pc)),
                                    1e-8);
        for (int j = 0; j < P2_NP; j++) {
            double want[P2_NT], scale = 0;
            for (int i = 0; i < P2_NT; i++) {
                pc[j] += I * 1e-30;
                want[i] = cimag(p2_closed(p2_t[i], pc)) / 1e-30;
                pc[j] = params[P2_NP * b + j];
                scale = fmax(scale, fabs(want[i]));
            }
            for (int i = 0; i < P2_NT; i++) {
                const double got = st_at(ot_solution_sens(s, j), 0, i, b);
                if (fabs(got - want[i]) > 1e-6 * scale)
                    ck_abort_msg("lane %d d C(%g) / d p%d = %.10g, closed form %.10g", b,
                                 p2_t[i], j, got, want[i]);
            }
        }
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- An infusion whose rate a handler sets: p = [k, R, rate] --------------- */

/* y' = rate - k y; the stop at 1 sets rate = R, the one at 3 rate = 0. */
static int inf_rhs(double t, ot_view y, ot_view p, ot_view_mut dy, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *pb = ot_view_col_f64(p, b, 0);
        ot_view_mut_col_f64(dy, b, 0)[0] = pb[2] - pb[0] * ot_view_col_f64(y, b, 0)[0];
    }
    return 0;
}

static int inf_switch(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                      void *user)
{
    (void)t, (void)lane, (void)y, (void)user;
    double *pb = ot_view_mut_col_f64(p, 0, 0);
    pb[2] = root == -1 ? pb[1] : 0.0;
    return 0;
}

static double complex inf_closed(double t, const double complex *p, double complex y0)
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

/* d y / d R comes only through the rate the handler copies from R (P's
 * row), d y / d rate0 only before the switch, d y / d y0 through all. */
START_TEST(a_rate_set_from_a_parameter_carries_its_sensitivity)
{
    const double p[3] = {0.4, 2.0, 0.3}, y0 = 1.5, stops[2] = {1, 3},
                 t[6] = {0.5, 1, 2, 3, 4, 6};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, 3, inf_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, inf_switch), OT_OK, NULL);
    ck_assert_status(ot_ode_set_sens_initial(ode, 1), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, _i ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
    ot_solve_inputs in = ot_solve_inputs_make(st_vec(&y0, 1), st_vec(p, 3), st_vec(t, 6));
    in.stops = st_vec(stops, 2);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &s), OT_OK, NULL);
    ck_assert_int_eq(ot_solution_nsens(s), 4);
    for (int i = 0; i < 6; i++) {
        double complex pc[3] = {p[0], p[1], p[2]};
        ck_assert_double_eq_tol(st_y(s, 0, i, 0), creal(inf_closed(t[i], pc, y0)), 1e-8);
        for (int j = 0; j < 4; j++) {
            double complex yc = y0;
            if (j < 3)
                pc[j] += I * 1e-30;
            else
                yc += I * 1e-30;
            const double want = cimag(inf_closed(t[i], pc, yc)) / 1e-30;
            pc[j < 3 ? j : 0] = p[j < 3 ? j : 0];
            const double got = st_at(ot_solution_sens(s, j), 0, i, 0);
            if (fabs(got - want) > 1e-6 * fmax(fabs(want), 1e-2))
                ck_abort_msg("d y(%g) / d z%d = %.10g, closed form %.10g", t[i], j, got,
                             want);
        }
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- The bouncing ball: y = [h, v], p = [g, e] ----------------------------- */

static int ball_rhs(double t, ot_view y, ot_view p, ot_view_mut dy, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        double *d = ot_view_mut_col_f64(dy, b, 0);
        d[0] = ot_view_col_f64(y, b, 0)[1];
        d[1] = -ot_view_col_f64(p, b, 0)[0];
    }
    return 0;
}

static int ball_floor(double t, ot_view y, ot_view p, ot_view_mut g, void *user)
{
    (void)t, (void)p, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        *ot_view_mut_col_f64(g, b, 0) = ot_view_col_f64(y, b, 0)[0];
    return 0;
}

static int ball_bounce(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                       void *user)
{
    (void)t, (void)root, (void)lane, (void)user;
    double *yb = ot_view_mut_col_f64(y, 0, 0);
    yb[1] = -ot_view_mut_col_f64(p, 0, 0)[1] * yb[1];
    return 0;
}

/* h(T) after the first bounce, from rest at h0: the flight formula. */
static double complex ball_closed(double T, double complex g, double complex e,
                                  double complex h0)
{
    const double complex t1 = csqrt(2 * h0 / g), s = T - t1;
    return e * g * t1 * s - g / 2 * s * s;
}

/* d h(T) / d g, d e and d h0 against the flight formula's complex step,
 * both modes, with two lanes of other drops. */
START_TEST(bouncing_ball_gradients_match_the_flight_formula)
{
    /* per-lane times, each after the lane's first bounce and before its second */
    const double p[4] = {9.81, 0.8, 9.81, 0.9}, y0[4] = {2.0, 0, 1.0, 0},
                 T[6] = {0.9, 1.2, 1.4, 0.6, 0.9, 1.2};
    static const int falling = OT_ROOT_FALLING, handle = OT_EVENT_HANDLE;
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 2, ball_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 1, ball_floor), OT_OK, NULL);
    ck_assert_status(ot_ode_set_root_directions(ode, &falling), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(ode, &handle), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, ball_bounce), OT_OK, NULL);
    ck_assert_status(ot_ode_set_sens_initial(ode, 1), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, _i ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
    ot_solve_inputs in =
        ot_solve_inputs_make(st_mat(y0, 2, 2), st_mat(p, 2, 2), st_mat(T, 3, 2));
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &s), OT_OK, NULL);
    for (int b = 0; b < 2; b++) {
        const double g = p[2 * b], e = p[2 * b + 1], h0 = y0[2 * b];
        ck_assert_int_eq(ot_solution_lane_event_count(s, b), 1);
        for (int i = 0; i < 3; i++) {
            const double Ti = T[3 * b + i];
            ck_assert_double_eq_tol(st_y(s, 0, i, b), creal(ball_closed(Ti, g, e, h0)),
                                    1e-8);
            const double d = 1e-30,
                         want[3] = {cimag(ball_closed(Ti, g + I * d, e, h0)) / d,
                                    cimag(ball_closed(Ti, g, e + I * d, h0)) / d,
                                    cimag(ball_closed(Ti, g, e, h0 + I * d)) / d};
            const int sens[3] = {0, 1, 2}; /* g, e, then h0 (the first initial value) */
            for (int j = 0; j < 3; j++) {
                const double got = st_at(ot_solution_sens(s, sens[j]), 0, i, b);
                if (fabs(got - want[j]) > 1e-6 * fmax(fabs(want[j]), 1e-2))
                    ck_abort_msg("lane %d d h(%g) / d %s = %.10g, flight formula %.10g",
                                 b, Ti, (const char *[]){"g", "e", "h0"}[j], got,
                                 want[j]);
            }
        }
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- What is refused -------------------------------------------------------- */

START_TEST(stop_derivatives_are_checked)
{
    ot_ode *ode = pk_ode(0, 0, 0);
    const double y0[2] = {0, 0}, stops[2] = {0, 12}, bad[PK_NP * 2] = {0}, nan = NAN;
    double dp[PK_NP * 2] = {0};
    ot_solve_inputs in = ot_solve_inputs_make(st_vec(y0, 2), st_vec(pk_params, PK_NP),
                                              st_vec(pk_t, PK_NT));
    in.stops = st_vec(stops, 2);
    in.stops_dp = st_mat(bad, PK_NP, 1);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_fwd_sens_with(ode, &in, &s), OT_ERR_SHAPE,
        "stops_dp: needs shape [np, nstops] or [np, nstops, nbatch] = [6, 2, 1]");
    in.stops_dp = st_mat(dp, PK_NP, 2);
    ck_assert_status(
        ot_solve_dense_with(ode, &in, &s), OT_ERR_ARG,
        "stops_dp: the stops' derivatives in p are for ot_solve_fwd_sens_with");
    dp[PK_NP + 4] = nan;
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &s), OT_ERR_VALUE,
                     "stops_dp: [4, 1, 0] is nan");
    in.stops = ot_view_absent();
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &s), OT_ERR_ARG,
                     "stops_dp: given, but there are no stops");
    ck_assert_status(ot_solve_fwd_sens_with(ode, NULL, &s), OT_ERR_ARG, "in: NULL");
    ot_ode_free(ode);
}
END_TEST

Suite *sens_events_suite(void)
{
    Suite *s = suite_create("sens_events");
    TCase *tc = ot_test_tcase(s, "through doses", 60);
    tcase_add_loop_test(tc, dosed_pk_gradients_match_the_closed_form, 0, 8);
    tcase_add_loop_test(tc, dosed_pk_gradients_match_central_differences, 0, 2);
    tcase_add_test(tc, dosed_pk_gradients_are_the_same_bits_in_every_layout);
    tcase_add_loop_test(tc, two_compartment_gradients_match_the_closed_form, 0, 2);
    tcase_add_loop_test(tc, a_rate_set_from_a_parameter_carries_its_sensitivity, 0, 2);
    tc = ot_test_tcase(s, "through roots", 30);
    tcase_add_loop_test(tc, bouncing_ball_gradients_match_the_flight_formula, 0, 2);
    tc = ot_test_tcase(s, "refusals", 30);
    tcase_add_test(tc, stop_derivatives_are_checked);
    return s;
}

/* The integrators (issue 16): ARKODE's explicit, diagonally implicit and
 * IMEX Runge-Kutta methods through the same drivers as CVODE's. Measured
 * orders of convergence against an analytic solution, the Arenstorf orbit
 * against its period, Robertson against a tight BDF solve, an IMEX
 * Brusselator against BDF on the whole rhs; lanes mode against lockstep;
 * roots, events, every-step output and per-lane failures; refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solve_common.h"
#include "suites.h"

static const int ARK_METHODS[] = {OT_ERK_BS32,   OT_ERK_DP54,   OT_ERK_VERNER65,
                                  OT_ESDIRK32,   OT_ESDIRK43,   OT_ESDIRK54,
                                  OT_IMEX_ARK32, OT_IMEX_ARK43, OT_IMEX_ARK54};
static const int ORDERS[] = {3, 5, 6, 3, 4, 5, 3, 4, 5};
enum { NMETHODS = sizeof ARK_METHODS / sizeof ARK_METHODS[0] };

static int is_imex(int m) { return m >= OT_IMEX_ARK32; }

/* ---- The oscillator y1' = y2, y2' = -y1: y = (sin t, cos t) from (0, 1);
 * for IMEX the first equation is the explicit part, the second the
 * implicit one. ---------------------------------------------------------- */

/* The whole rhs: st_sine_rhs (solve_common.h). */

static int osc_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        ot_view_mut_col_f64(J, 1, b)[0] = 1.0;
        ot_view_mut_col_f64(J, 0, b)[1] = -1.0;
    }
    return 0;
}

static int osc_expl(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        double *F = ot_view_mut_col_f64(f, b, 0);
        F[0] = ot_view_col_f64(y, b, 0)[1];
        F[1] = 0.0;
    }
    return 0;
}

static int osc_impl(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        double *F = ot_view_mut_col_f64(f, b, 0);
        F[0] = 0.0;
        F[1] = -ot_view_col_f64(y, b, 0)[0];
    }
    return 0;
}

static int osc_impl_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(J, 0, b)[1] = -1.0;
    return 0;
}

static ot_ode *oscillator(int method, int mode)
{
    ot_ode *ode = NULL;
    ck_assert_status(
        ot_ode_new(&ode, 2, 0, is_imex(method) ? osc_impl : st_sine_rhs, NULL), OT_OK,
        NULL);
    ck_assert_status(ot_ode_set_method(ode, (ot_method)method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, (ot_mode)mode), OT_OK, NULL);
    ck_assert_status(ot_ode_set_jac(ode, is_imex(method) ? osc_impl_jac : osc_jac), OT_OK,
                     NULL);
    if (is_imex(method))
        ck_assert_status(ot_ode_set_rhs_explicit(ode, osc_expl), OT_OK, NULL);
    return ode;
}

/* Max error at t = 10 with every step h: first and largest step h, and
 * tolerances so loose that no step is rejected or shortened. */
static double fixed_step_error(int method, double h)
{
    ot_ode *ode = oscillator(method, OT_LANES);
    ck_assert_status(ot_ode_set_first_step(ode, h), OT_OK, NULL);
    ck_assert_status(ot_ode_set_max_step(ode, h), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 0.5), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e6), OT_OK, NULL);
    const double y0[2] = {0.0, 1.0}, T[1] = {10.0};
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), ot_view_absent(), st_vec(T, 1), &sol), OT_OK,
        NULL);
    const double e =
        fmax(fabs(st_y(sol, 0, 0, 0) - sin(10.0)), fabs(st_y(sol, 1, 0, 0) - cos(10.0)));
    ot_solution_free(sol);
    ot_ode_free(ode);
    return e;
}

START_TEST(every_method_converges_at_its_order)
{
    for (int k = 0; k < NMETHODS; k++) {
        /* Steps where the error is far above rounding and far below 1. */
        const double h = ORDERS[k] >= 5 ? 0.2 : 0.1;
        const double e1 = fixed_step_error(ARK_METHODS[k], h);
        const double e2 = fixed_step_error(ARK_METHODS[k], h / 2);
        const double e3 = fixed_step_error(ARK_METHODS[k], h / 4);
        const double s1 = log2(e1 / e2), s2 = log2(e2 / e3);
        ck_assert_msg(fabs(s1 - ORDERS[k]) <= 0.2 && fabs(s2 - ORDERS[k]) <= 0.2,
                      "method %d: slopes %g and %g, order %d", ARK_METHODS[k], s1, s2,
                      ORDERS[k]);
    }
}
END_TEST

/* ---- The Arenstorf orbit: back at its start after one period ------------ */

static const double AR_MU = 0.012277471;
static const double AR_T = 17.0652165601579625588917206249;
static const double AR_Y0[4] = {0.994, 0.0, 0.0, -2.00158510637908252240537862224};

static int arenstorf(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)p, (void)u;
    const double mu = AR_MU, nu = 1 - AR_MU;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *Y = ot_view_col_f64(y, b, 0);
        double *F = ot_view_mut_col_f64(f, b, 0);
        const double d1 = pow((Y[0] + mu) * (Y[0] + mu) + Y[1] * Y[1], 1.5),
                     d2 = pow((Y[0] - nu) * (Y[0] - nu) + Y[1] * Y[1], 1.5);
        F[0] = Y[2];
        F[1] = Y[3];
        F[2] = Y[0] + 2 * Y[3] - nu * (Y[0] + mu) / d1 - mu * (Y[0] - nu) / d2;
        F[3] = Y[1] - 2 * Y[2] - nu * Y[1] / d1 - mu * Y[1] / d2;
    }
    return 0;
}

/* The largest distance from the start after one period, lanes of the same
 * orbit (their results must agree, all lanes are returned in *sol). */
static double arenstorf_error(int method, int mode, double tol, int64_t lanes,
                              ot_solution **out)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 4, 0, arenstorf, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, (ot_method)method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, (ot_mode)mode), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, tol), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, tol), OT_OK, NULL);
    double y0[4 * 8];
    for (int64_t b = 0; b < lanes; b++)
        memcpy(y0 + 4 * b, AR_Y0, sizeof AR_Y0);
    const double t[2] = {AR_T / 2, AR_T};
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_mat(y0, 4, lanes), ot_view_absent(), st_vec(t, 2), &sol),
        OT_OK, NULL);
    double e = 0;
    for (int i = 0; i < 2; i++)
        e = fmax(e, fabs(st_y(sol, i, 1, 0) - AR_Y0[i]));
    ot_ode_free(ode);
    if (out)
        *out = sol;
    else
        ot_solution_free(sol);
    return e;
}

/* Explicit pairs at their usual tolerances reach the start again: the
 * error shrinks with the tolerance, and the higher-order pairs need fewer
 * steps for the same tolerance. */
START_TEST(explicit_pairs_close_the_arenstorf_orbit)
{
    const int methods[3] = {OT_ERK_BS32, OT_ERK_DP54, OT_ERK_VERNER65};
    const double tol[3] = {1e-8, 1e-10, 1e-12}, bound[3] = {1e-3, 1e-5, 1e-8};
    int64_t steps[3];
    for (int k = 0; k < 3; k++) {
        ot_solution *sol = NULL;
        const double e = arenstorf_error(methods[k], OT_LANES, tol[k], 1, &sol);
        ot_lane_stats st;
        ck_assert_status(ot_solution_lane_stats(sol, 0, &st), OT_OK, NULL);
        steps[k] = st.steps;
        ck_assert_msg(e < bound[k], "method %d: %g from the start", methods[k], e);
        ot_solution_free(sol);
    }
    /* Dormand-Prince against Verner at 1e-10 both: Verner takes fewer steps. */
    ot_solution *a = NULL, *b = NULL;
    arenstorf_error(OT_ERK_DP54, OT_LANES, 1e-10, 1, &a);
    arenstorf_error(OT_ERK_VERNER65, OT_LANES, 1e-10, 1, &b);
    ot_lane_stats sa, sb;
    ot_solution_lane_stats(a, 0, &sa);
    ot_solution_lane_stats(b, 0, &sb);
    ck_assert_int_lt(sb.steps, sa.steps);
    (void)steps;
    ot_solution_free(a);
    ot_solution_free(b);
}
END_TEST

/* One lane of lockstep is lanes mode bit for bit (the per-lane norm of one
 * lane is the serial norm), and 5 identical lanes equal one. */
START_TEST(lockstep_equals_lanes_mode_for_runge_kutta)
{
    const int methods[3] = {OT_ERK_DP54, OT_ERK_VERNER65, OT_ERK_BS32};
    for (int k = 0; k < 3; k++) {
        ot_solution *a = NULL, *b = NULL;
        arenstorf_error(methods[k], OT_LANES, 1e-9, 1, &a);
        arenstorf_error(methods[k], OT_LOCKSTEP, 1e-9, 5, &b);
        for (int64_t lane = 0; lane < 5; lane++)
            for (int i = 0; i < 2; i++)
                for (int r = 0; r < 4; r++)
                    ck_assert_msg(st_y(a, r, i, 0) == st_y(b, r, i, lane),
                                  "method %d lane %lld: %.17g against %.17g", methods[k],
                                  (long long)lane, st_y(b, r, i, lane), st_y(a, r, i, 0));
        st_assert_stats_equal(a, 0, b, 4);
        ot_solution_free(a);
        ot_solution_free(b);
    }
}
END_TEST

/* ---- Robertson by ESDIRK against a tight BDF solve ------------------------ */

static ot_solution *robertson(int method, int mode, double rtol, int64_t lanes, int jac)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 3, 3, st_rober_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, (ot_method)method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, (ot_mode)mode), OT_OK, NULL);
    if (jac)
        ck_assert_status(ot_ode_set_jac(ode, st_rober_jac), OT_OK, NULL);
    const double atol[3] = {1e-8 * rtol / 1e-4, 1e-14 * rtol / 1e-4, 1e-6 * rtol / 1e-4};
    ck_assert_status(ot_ode_set_rtol(ode, rtol), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol_vector(ode, st_vec(atol, 3)), OT_OK, NULL);
    double y0[3 * 4];
    for (int64_t b = 0; b < lanes; b++) {
        y0[3 * b] = 1;
        y0[3 * b + 1] = y0[3 * b + 2] = 0;
    }
    static const double t[6] = {0.4, 4, 40, 400, 4e3, 4e5};
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_dense(ode, st_mat(y0, 3, lanes), st_vec(ST_ROBER_K, 3),
                                    st_vec(t, 6), &sol),
                     OT_OK, NULL);
    ot_ode_free(ode);
    return sol;
}

/* Each state within 1e-5 of its scale (y2 ~ 1e-5 is scaled by its own
 * largest value) at rtol 1e-7, with the user's Jacobian and without;
 * lockstep's one lane equals lanes mode bit for bit. */
START_TEST(esdirk_solves_robertson_like_bdf)
{
    ot_solution *ref = robertson(OT_BDF, OT_LANES, 1e-11, 1, 1);
    const double scale[3] = {1, 3.7e-5, 1};
    const int methods[3] = {OT_ESDIRK32, OT_ESDIRK43, OT_ESDIRK54};
    for (int k = 0; k < 3; k++)
        for (int jac = 0; jac < 2; jac++) {
            ot_solution *s = robertson(methods[k], OT_LANES, 1e-7, 1, jac);
            double worst = 0;
            for (int i = 0; i < 6; i++)
                for (int r = 0; r < 3; r++)
                    worst = fmax(worst,
                                 fabs(st_y(s, r, i, 0) - st_y(ref, r, i, 0)) / scale[r]);
            ot_lane_stats st;
            ot_solution_lane_stats(s, 0, &st);
            ck_assert_msg(worst < 1e-5, "method %d jac %d: %g", methods[k], jac, worst);
            ck_assert_int_gt(st.jac_evals, 0);
            ck_assert_int_gt(st.nonlin_iters, 0);
            if (jac) {
                ot_solution *l = robertson(methods[k], OT_LOCKSTEP, 1e-7, 3, 1);
                for (int64_t b = 0; b < 3; b++)
                    ck_assert(st_lane_equal(ot_solution_ys(s), 0, ot_solution_ys(l), b));
                ot_solution_free(l);
            }
            ot_solution_free(s);
        }
    ot_solution_free(ref);
}
END_TEST

/* ---- An IMEX split: the 1-D Brusselator, diffusion implicit -------------- */

/* u_t = 1 + u^2 v - 4 u + a u_xx, v_t = 3 u - u^2 v + a v_xx on (0, 1), a =
 * 0.02, u = 1 and v = 3 at both ends, BR_N points, states interleaved (u_i,
 * v_i). Diffusion (stiff: a (N + 1)^2 = 33.6 per unit time) is the
 * implicit part, the reaction the explicit one. */
enum { BR_N = 40, BR_NS = 2 * BR_N };
static const double BR_A = 0.02;

static void br_diffusion(const double *y, double *f)
{
    const double c = BR_A * (BR_N + 1) * (BR_N + 1), ends[2] = {1.0, 3.0};
    for (int i = 0; i < BR_N; i++)
        for (int s = 0; s < 2; s++) {
            const double left = i > 0 ? y[2 * (i - 1) + s] : ends[s],
                         right = i < BR_N - 1 ? y[2 * (i + 1) + s] : ends[s];
            f[2 * i + s] = c * (left - 2 * y[2 * i + s] + right);
        }
}

static void br_reaction(const double *y, double *f)
{
    for (int i = 0; i < BR_N; i++) {
        const double u = y[2 * i], v = y[2 * i + 1];
        f[2 * i] = 1 + u * u * v - 4 * u;
        f[2 * i + 1] = 3 * u - u * u * v;
    }
}

static int br_impl(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        br_diffusion(ot_view_col_f64(y, b, 0), ot_view_mut_col_f64(f, b, 0));
    return 0;
}

static int br_expl(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        br_reaction(ot_view_col_f64(y, b, 0), ot_view_mut_col_f64(f, b, 0));
    return 0;
}

static int br_full(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        double r[BR_NS], *F = ot_view_mut_col_f64(f, b, 0);
        br_diffusion(ot_view_col_f64(y, b, 0), F);
        br_reaction(ot_view_col_f64(y, b, 0), r);
        for (int k = 0; k < BR_NS; k++)
            F[k] += r[k];
    }
    return 0;
}

/* The implicit part's Jacobian: constant, tridiagonal per species. */
static int br_impl_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)p, (void)u;
    const double c = BR_A * (BR_N + 1) * (BR_N + 1);
    for (int64_t b = 0; b < ST_LANES(y); b++)
        for (int k = 0; k < BR_NS; k++) {
            double *col = ot_view_mut_col_f64(J, k, b); /* d f / d y_k */
            col[k] = -2 * c;
            if (k >= 2)
                col[k - 2] = c;
            if (k + 2 < BR_NS)
                col[k + 2] = c;
        }
    return 0;
}

static const double BR_T[3] = {1, 5, 10};

static ot_solution *brusselator(int method, int mode, double rtol, int64_t lanes)
{
    const int imex = is_imex(method);
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, BR_NS, 0, imex ? br_impl : br_full, NULL), OT_OK,
                     NULL);
    ck_assert_status(ot_ode_set_method(ode, (ot_method)method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, (ot_mode)mode), OT_OK, NULL);
    if (imex) {
        ck_assert_status(ot_ode_set_rhs_explicit(ode, br_expl), OT_OK, NULL);
        ck_assert_status(ot_ode_set_jac(ode, br_impl_jac), OT_OK, NULL);
    }
    ck_assert_status(ot_ode_set_rtol(ode, rtol), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, rtol * 1e-2), OT_OK, NULL);
    static double y0[BR_NS * 2];
    for (int64_t b = 0; b < lanes; b++)
        for (int i = 0; i < BR_N; i++) {
            const double x = (i + 1.0) / (BR_N + 1);
            y0[b * BR_NS + 2 * i] = 1 + sin(2 * 3.14159265358979323846 * x);
            y0[b * BR_NS + 2 * i + 1] = 3;
        }
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_dense(ode, st_mat(y0, BR_NS, lanes), ot_view_absent(),
                                    st_vec(BR_T, 3), &sol),
                     OT_OK, NULL);
    ot_ode_free(ode);
    return sol;
}

/* Each IMEX pair against BDF on the whole rhs at rtol 1e-10: every state
 * at every output within 1e-5 at rtol 1e-7; the explicit part costs no
 * Jacobian; two lockstep lanes equal lanes mode bit for bit. */
START_TEST(imex_splits_the_brusselator_like_bdf_on_the_whole)
{
    ot_solution *ref = brusselator(OT_BDF, OT_LANES, 1e-10, 1);
    const int methods[3] = {OT_IMEX_ARK32, OT_IMEX_ARK43, OT_IMEX_ARK54};
    for (int k = 0; k < 3; k++) {
        ot_solution *s = brusselator(methods[k], OT_LANES, 1e-7, 1);
        double worst = 0;
        for (int i = 0; i < 3; i++)
            for (int r = 0; r < BR_NS; r++)
                worst = fmax(worst, fabs(st_y(s, r, i, 0) - st_y(ref, r, i, 0)));
        ot_lane_stats st;
        ot_solution_lane_stats(s, 0, &st);
        ck_assert_msg(worst < 1e-5, "method %d: %g", methods[k], worst);
        ot_solution *l = brusselator(methods[k], OT_LOCKSTEP, 1e-7, 2);
        for (int64_t b = 0; b < 2; b++)
            ck_assert(st_lane_equal(ot_solution_ys(s), 0, ot_solution_ys(l), b));
        ot_solution_free(l);
        ot_solution_free(s);
    }
    ot_solution_free(ref);
}
END_TEST

/* ---- Every feature, every method ------------------------------------------ */

/* The oscillator's rhs, failing (returning -1) for a lane whose p[0] is 1
 * once t passes 2. */
static int osc_failing(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    for (int64_t b = 0; b < ST_LANES(y); b++)
        if (ot_view_col_f64(p, b, 0)[0] == 1 && t > 2)
            return -1;
    return st_sine_rhs(t, y, p, f, u);
}

static int osc_energy(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *Y = ot_view_col_f64(y, b, 0);
        ot_view_mut_col_f64(o, b, 0)[0] = Y[0] * Y[0] + Y[1] * Y[1];
    }
    return 0;
}

static ot_ode *plain_oscillator(int method, ot_rhs_fn rhs, int64_t np)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, np, rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, (ot_method)method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-9), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-11), OT_OK, NULL);
    return ode;
}

/* A lane whose rhs fails fails alone, with the rhs named; the others equal
 * their solves alone; 1 and 2 threads give the same bits. */
START_TEST(a_failing_lane_fails_alone_for_every_method)
{
    const double y0[2] = {0, 1}, p[3] = {0, 1, 0}, t[3] = {1, 3, 5};
    for (int k = 0; k < NMETHODS; k++) {
        if (is_imex(ARK_METHODS[k]))
            continue;
        ot_ode *ode = plain_oscillator(ARK_METHODS[k], osc_failing, 1);
        ot_solution *s = NULL, *one = NULL;
        ck_assert_status(
            ot_solve_dense(ode, st_vec(y0, 2), st_mat(p, 1, 3), st_vec(t, 3), &s),
            OT_ERR_LANES_FAILED, "1 of 3 lanes failed");
        ck_assert_int_eq(ot_solution_lane_status(s, 1), OT_ERR_CALLBACK);
        ck_assert_msg(strstr(ot_solution_lane_message(s, 1), "rhs returned -1"), "%s",
                      ot_solution_lane_message(s, 1));
        ck_assert_int_eq(ot_solution_lane_count(s, 1), 1);
        ck_assert_status(ot_ode_set_threads(ode, 1), OT_OK, NULL);
        ck_assert_status(
            ot_solve_dense(ode, st_vec(y0, 2), st_mat(p, 1, 1), st_vec(t, 3), &one),
            OT_OK, NULL);
        for (int64_t b = 0; b < 3; b += 2) {
            ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
            ck_assert(st_lane_equal(ot_solution_ys(s), b, ot_solution_ys(one), 0));
            st_assert_stats_equal(s, b, one, 0);
            ck_assert_double_eq_tol(st_y(s, 0, 2, b), sin(5.0), 1e-7);
        }
        ot_solution_free(s);
        ot_solution_free(one);
        ot_ode_free(ode);
    }
}
END_TEST

/* ot_solve records every step to the final time, on the solution; an out
 * function and f32 outputs go through the same path; the statistics count
 * what the methods do. */
START_TEST(every_step_output_functions_f32_and_statistics)
{
    const double y0[2] = {0, 1};
    for (int k = 0; k < NMETHODS; k++) {
        const int m = ARK_METHODS[k];
        ot_ode *ode = oscillator(m, _i ? OT_LOCKSTEP : OT_LANES);
        ck_assert_status(ot_ode_set_rtol(ode, 1e-9), OT_OK, NULL);
        ck_assert_status(ot_ode_set_atol(ode, 1e-11), OT_OK, NULL);
        ot_solution *s = NULL;
        ck_assert_status(ot_solve(ode, st_vec(y0, 2), ot_view_absent(), 6.0, &s), OT_OK,
                         NULL);
        const int64_t c = ot_solution_lane_count(s, 0);
        ot_lane_stats st;
        ck_assert_status(ot_solution_lane_stats(s, 0, &st), OT_OK, NULL);
        ck_assert_int_eq(c, st.steps + 1); /* t0 and every step */
        const ot_tensor *ts = ot_solution_ts(s);
        ck_assert(st_at(ts, c - 1, 0, 0) == 6.0);
        for (int64_t i = 0; i < c; i++) {
            const double ti = st_at(ts, i, 0, 0);
            ck_assert(i == 0 || ti > st_at(ts, i - 1, 0, 0));
            ck_assert_double_eq_tol(st_y(s, 0, i, 0), sin(ti), 1e-7);
        }
        /* Explicit stages: at least stages - 1 rhs calls a step (FSAL). */
        ck_assert_int_ge(st.rhs_evals, st.steps * 3);
        if (m >= OT_ESDIRK32) {
            ck_assert_int_gt(st.jac_evals, 0);
            ck_assert_int_ge(st.nonlin_iters, st.steps);
            ck_assert_int_gt(st.lin_setups, 0);
        } else {
            ck_assert_int_eq(st.jac_evals + st.nonlin_iters + st.lin_setups, 0);
        }
        ot_solution_free(s);
        /* The out function's energy stays 1, in f32. */
        ck_assert_status(ot_ode_set_out(ode, 1, osc_energy), OT_OK, NULL);
        ck_assert_status(ot_ode_set_output_dtype(ode, OT_F32), OT_OK, NULL);
        const double t[3] = {1, 2, 30};
        ck_assert_status(
            ot_solve_dense(ode, st_vec(y0, 2), ot_view_absent(), st_vec(t, 3), &s), OT_OK,
            NULL);
        ck_assert_int_eq(ot_tensor_layout(ot_solution_ys(s))->dtype, OT_F32);
        for (int i = 0; i < 3; i++)
            ck_assert_double_eq_tol(st_y(s, 0, i, 0), 1.0, 1e-6);
        ot_solution_free(s);
        ot_ode_free(ode);
    }
}
END_TEST

static int no_loss(double t, int64_t i, int64_t lane, ot_view y, ot_view p, ot_view_mut g,
                   ot_view_mut dgdy, ot_view_mut dgdp, void *u)
{
    (void)t, (void)i, (void)lane, (void)y, (void)p, (void)g, (void)dgdy, (void)dgdp,
        (void)u;
    return 0;
}

/* What the Runge-Kutta methods cannot do is refused, naming the method. */
START_TEST(runge_kutta_methods_refuse_what_they_lack)
{
    const double y0[2] = {0, 1}, p[1] = {0}, t[2] = {1, 2};
    ot_ode *ode = plain_oscillator(OT_ERK_DP54, osc_failing, 1);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_fwd_sens(ode, st_vec(y0, 2), st_vec(p, 1), st_vec(t, 2), &s), OT_ERR_ARG,
        "OT_ERK_DP54 has no forward sensitivities");
    ot_loss loss = ot_loss_custom(no_loss, NULL);
    ck_assert_status(
        ot_solve_adjoint(ode, st_vec(y0, 2), st_vec(p, 1), st_vec(t, 2), &loss, &s),
        OT_ERR_ARG, "OT_ERK_DP54 has no adjoint");
    ck_assert_status(ot_ode_set_max_order(ode, 3), OT_OK, NULL);
    ck_assert_status(ot_solve_dense(ode, st_vec(y0, 2), st_vec(p, 1), st_vec(t, 2), &s),
                     OT_ERR_VALUE, "OT_ERK_DP54 has a fixed order (5)");
    ck_assert_status(ot_ode_set_max_order(ode, 0), OT_OK, NULL);
    ck_assert_status(ot_ode_set_stability_limit_detection(ode, 1), OT_OK, NULL);
    ck_assert_status(ot_solve_dense(ode, st_vec(y0, 2), st_vec(p, 1), st_vec(t, 2), &s),
                     OT_ERR_ARG, "turn it off for OT_ERK_DP54");
    ck_assert_status(ot_ode_set_stability_limit_detection(ode, 0), OT_OK, NULL);
    const ot_device cuda = {OT_CUDA, 0};
    ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    ck_assert_status(ot_ode_set_device(ode, cuda), OT_OK, NULL);
    ck_assert_status(ot_solve_dense(ode, st_vec(y0, 2), st_vec(p, 1), st_vec(t, 2), &s),
                     OT_ERR_ARG,
                     "the lockstep on CUDA solver runs OT_BDF and OT_ADAMS only");
    ck_assert_status(ot_ode_set_device(ode, (ot_device){OT_CPU, 0}), OT_OK, NULL);
    /* The split: IMEX without its explicit part, an explicit part without IMEX. */
    ck_assert_status(ot_ode_set_method(ode, OT_IMEX_ARK43), OT_OK, NULL);
    ck_assert_status(ot_solve_dense(ode, st_vec(y0, 2), st_vec(p, 1), st_vec(t, 2), &s),
                     OT_ERR_ARG, "OT_IMEX_ARK43 splits the rhs");
    ck_assert_status(ot_ode_set_method(ode, OT_BDF), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rhs_explicit(ode, osc_expl), OT_OK, NULL);
    ck_assert_status(ot_solve_dense(ode, st_vec(y0, 2), st_vec(p, 1), st_vec(t, 2), &s),
                     OT_ERR_ARG, "OT_BDF does not split the rhs");
    ot_ode_free(ode);
}
END_TEST

Suite *methods_suite(void)
{
    Suite *s = suite_create("methods");
    TCase *tc = ot_test_tcase(s, "orders", 60);
    tcase_add_test(tc, every_method_converges_at_its_order);
    tc = ot_test_tcase(s, "references", 120);
    tcase_add_test(tc, explicit_pairs_close_the_arenstorf_orbit);
    tcase_add_test(tc, lockstep_equals_lanes_mode_for_runge_kutta);
    tcase_add_test(tc, esdirk_solves_robertson_like_bdf);
    tcase_add_test(tc, imex_splits_the_brusselator_like_bdf_on_the_whole);
    tc = ot_test_tcase(s, "features", 60);
    tcase_add_test(tc, a_failing_lane_fails_alone_for_every_method);
    tcase_add_loop_test(tc, every_step_output_functions_f32_and_statistics, 0, 2);
    tcase_add_test(tc, runge_kutta_methods_refuse_what_they_lack);
    return s;
}

/* Lockstep mode on the CPU: one CVODE over all lanes. Every lane must agree
 * with its lanes-mode solve and with tight references; the per-lane norm must
 * keep a hard lane within its tolerance where CVODE's plain norm does not. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "suites.h"

#include "core/test_hooks.h"

static const ot_device CPU = {OT_CPU, 0};

static ot_view view1(const double *d, int64_t n)
{
    ot_view v;
    ck_assert_int_eq(ot_view_make(&v, d, OT_F64, CPU, 1, &n, NULL), OT_OK);
    return v;
}

static ot_view view2(const double *d, int64_t rows, int64_t cols)
{
    ot_view v;
    const int64_t shape[2] = {rows, cols};
    ck_assert_int_eq(ot_view_make(&v, d, OT_F64, CPU, 2, shape, NULL), OT_OK);
    return v;
}

static int64_t lanes_of(ot_view y) { return y.layout.shape[1]; }

/* ---- Models: callbacks loop over the k lanes they get, so one callback
 * serves both modes. ---------------------------------------------------- */

static int rober_rhs(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < lanes_of(y); b++) {
        const double *Y = ot_view_col_f64(y, b, 0), *k = ot_view_col_f64(p, b, 0);
        double *D = ot_view_mut_col_f64(d, b, 0);
        D[0] = -k[0] * Y[0] + k[1] * Y[1] * Y[2];
        D[2] = k[2] * Y[1] * Y[1];
        D[1] = -D[0] - D[2];
    }
    return 0;
}

static int rober_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < lanes_of(y); b++) {
        const double *Y = ot_view_col_f64(y, b, 0), *k = ot_view_col_f64(p, b, 0);
        double *a = ot_view_mut_col_f64(J, 0, b); /* block b, 3 x 3 column-major */
        a[0] = -k[0];
        a[1] = k[0];
        a[3] = k[1] * Y[2];
        a[4] = -k[1] * Y[2] - 2 * k[2] * Y[1];
        a[5] = 2 * k[2] * Y[1];
        a[6] = k[1] * Y[1];
        a[7] = -k[1] * Y[1];
    }
    return 0;
}

/* Brusselator (SUNDIALS' stiff test 3): p = (a, b, ep). */
static int bruss_rhs(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < lanes_of(y); b++) {
        const double *Y = ot_view_col_f64(y, b, 0), *k = ot_view_col_f64(p, b, 0);
        double *D = ot_view_mut_col_f64(d, b, 0);
        D[0] = k[0] - (Y[2] + 1) * Y[0] + Y[1] * Y[0] * Y[0];
        D[1] = Y[2] * Y[0] - Y[1] * Y[0] * Y[0];
        D[2] = (k[1] - Y[2]) / k[2] - Y[2] * Y[0];
    }
    return 0;
}

static int decay_rhs(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < lanes_of(y); b++)
        ot_view_mut_col_f64(d, b, 0)[0] =
            -ot_view_col_f64(p, b, 0)[0] * ot_view_col_f64(y, b, 0)[0];
    return 0;
}

/* Harmonic oscillator x'' = -w^2 x as (x, v), p = (w). */
static int osc_rhs(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < lanes_of(y); b++) {
        const double *Y = ot_view_col_f64(y, b, 0), w = ot_view_col_f64(p, b, 0)[0];
        double *D = ot_view_mut_col_f64(d, b, 0);
        D[0] = Y[1];
        D[1] = -w * w * Y[0];
    }
    return 0;
}

/* ---- Helpers ------------------------------------------------------------- */

static ot_solution *solve_mode(ot_ode *ode, ot_mode mode, ot_view y0, ot_view p,
                               ot_view t)
{
    ot_solution *sol = NULL;
    ck_assert_int_eq(ot_ode_set_mode(ode, mode), OT_OK);
    const int st = ot_solve_dense(ode, y0, p, t, &sol);
    ck_assert_msg(st == OT_OK, "%s: %s", ot_status_name(st), ot_last_error());
    return sol;
}

/* Largest |a - b| / (rtol |ref| + atol_i) over every lane and output. */
static double worst_gap(const ot_solution *a, const ot_solution *b,
                        const ot_solution *ref, double rtol, const double *atol)
{
    const ot_view A = ot_tensor_view(ot_solution_ys(a)),
                  B = ot_tensor_view(ot_solution_ys(b));
    const ot_view R = ot_tensor_view(ot_solution_ys(ref));
    const int64_t n = A.layout.shape[0], nt = A.layout.shape[1], nb = A.layout.shape[2];
    double worst = 0;
    for (int64_t l = 0; l < nb; l++)
        for (int64_t i = 0; i < nt; i++)
            for (int64_t c = 0; c < n; c++) {
                const double x = ot_view_col_f64(A, i, l)[c],
                             y = ot_view_col_f64(B, i, l)[c];
                const double tol = rtol * fabs(ot_view_col_f64(R, i, l)[c]) + atol[c];
                ck_assert_msg(isfinite(x) && isfinite(y),
                              "lane %lld output %lld not finite", (long long)l,
                              (long long)i);
                worst = fmax(worst, fabs(x - y) / tol);
            }
    return worst;
}

/* Rates varied +-10 % around base, deterministic. */
static double *vary(const double *base, int np, int nb, unsigned seed)
{
    double *p = malloc(sizeof *p * (size_t)(np * nb));
    srand(seed);
    for (int b = 0; b < nb; b++)
        for (int j = 0; j < np; j++)
            p[b * np + j] = base[j] * (0.9 + 0.2 * rand() / (double)RAND_MAX);
    return p;
}

/* Lanes mode, lockstep, and a lanes-mode reference 1e5 times tighter: every
 * lane of each within `budget` tolerance units of the reference and of the
 * other mode. */
static void agree(ot_ode *ode, ot_view y0, ot_view p, ot_view t, double rtol,
                  const double *atol, double budget)
{
    ot_solution *lanes = solve_mode(ode, OT_LANES, y0, p, t);
    ot_solution *lock = solve_mode(ode, OT_LOCKSTEP, y0, p, t);
    double tight[3];
    for (int c = 0; c < 3; c++)
        tight[c] = atol[c] * 1e-5;
    ck_assert_int_eq(ot_ode_set_rtol(ode, rtol * 1e-5), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol_vector(ode, view1(tight, 3)), OT_OK);
    ck_assert_int_eq(ot_ode_set_max_steps(ode, 1000000), OT_OK);
    ot_solution *ref = solve_mode(ode, OT_LANES, y0, p, t);
    const double lane_err = worst_gap(lanes, ref, ref, rtol, atol);
    const double lock_err = worst_gap(lock, ref, ref, rtol, atol);
    const double gap = worst_gap(lanes, lock, ref, rtol, atol);
    /* Lockstep is at least as accurate as lanes mode (its steps follow the
     * hardest lane), and the two agree within the global-error budget CVODE
     * itself shows on the problem. */
    ck_assert_msg(
        lock_err <= 1.5 * fmax(lane_err, 1.0) && lane_err < budget && gap < budget,
        "errors in tolerance units: lanes %.2f, lockstep %.2f, gap %.2f (budget %g)",
        lane_err, lock_err, gap, budget);
    ot_solution_free(lanes);
    ot_solution_free(lock);
    ot_solution_free(ref);
}

/* ---- Tests --------------------------------------------------------------- */

START_TEST(robertson_agrees_with_lanes)
{
    const double base[3] = {0.04, 1e4, 3e7}, y0[3] = {1, 0, 0};
    const double atol[3] = {1e-8, 1e-14, 1e-6};
    double t[40];
    for (int i = 0; i < 40; i++)
        t[i] = pow(10, -5 + 10.0 * i / 39);
    const int nb = 200;
    double *p = vary(base, 3, nb, 7);
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 3, 3, rober_rhs, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, 1e-6), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol_vector(ode, view1(atol, 3)), OT_OK);
    if (_i == 0) /* user Jacobian; else the all-lanes difference quotients */
        ck_assert_int_eq(ot_ode_set_jac(ode, rober_jac), OT_OK);
    /* CVODE's global error runs to ~20 local tolerances on Robertson. */
    agree(ode, view1(y0, 3), view2(p, 3, nb), view1(t, 40), 1e-6, atol, 40);
    ot_ode_free(ode);
    free(p);
}
END_TEST

START_TEST(brusselator_agrees_with_lanes)
{
    const double base[3] = {1.2, 2.5, 1e-5}, y0[3] = {3.9, 1.1, 2.8};
    const double atol[3] = {1e-10, 1e-10, 1e-10};
    double t[20];
    for (int i = 0; i < 20; i++)
        t[i] = 0.5 * (i + 1);
    const int nb = 64;
    double *p = vary(base, 3, nb, 11);
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 3, 3, bruss_rhs, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, 1e-5), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol_vector(ode, view1(atol, 3)), OT_OK);
    ck_assert_int_eq(ot_ode_set_max_steps(ode, 20000), OT_OK);
    /* Lanes mode's own global error reaches ~110 local tolerance units here
     * (atol 1e-10 on components that pass near zero). */
    agree(ode, view1(y0, 3), view2(p, 3, nb), view1(t, 20), 1e-5, atol, 150);
    ot_ode_free(ode);
    free(p);
}
END_TEST

/* Max error of lane `lane` of s in tolerance units against cos(w t). */
static double osc_error(const ot_solution *s, int64_t lane, double w, const double *t,
                        int nt, double rtol, double atol)
{
    const ot_view ys = ot_tensor_view(ot_solution_ys(s));
    double worst = 0;
    for (int i = 0; i < nt; i++) {
        const double x = ot_view_col_f64(ys, i, lane)[0], exact = cos(w * t[i]);
        worst = fmax(worst, fabs(x - exact) / (rtol * fabs(exact) + atol));
    }
    return worst;
}

/* 199 slow oscillators and one 40x faster. "Within its tolerance" means: as
 * accurate as CVODE makes that lane when it is solved alone. With CVODE's
 * plain norm the fast lane's error is averaged over all lanes and ends far
 * outside that; with the per-lane norm it stays inside. */
START_TEST(per_lane_norm_keeps_the_hard_lane_in_tolerance)
{
    const int nb = 200, hard = 137, nt = 10;
    double w[200], y0[2] = {1, 0}, t[10];
    for (int b = 0; b < nb; b++)
        w[b] = b == hard ? 40.0 : 1.0;
    for (int i = 0; i < nt; i++)
        t[i] = 0.1 * (i + 1);
    const double rtol = 1e-6, atol = 1e-9;
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 2, 1, osc_rhs, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, rtol), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol(ode, atol), OT_OK);
    ck_assert_int_eq(ot_ode_set_method(ode, OT_ADAMS), OT_OK);
    ck_assert_int_eq(ot_ode_set_max_steps(ode, 100000), OT_OK);
    ot_solution *alone =
        solve_mode(ode, OT_LANES, view1(y0, 2), view1(&w[hard], 1), view1(t, nt));
    const double own = osc_error(alone, 0, w[hard], t, nt, rtol, atol);
    ot_solution_free(alone);
    double err[2]; /* [per-lane, plain]: the hard lane in lockstep */
    for (int plain = 0; plain <= 1; plain++) {
        ot__lockstep_plain_norm(plain);
        ot_solution *s =
            solve_mode(ode, OT_LOCKSTEP, view1(y0, 2), view2(w, 1, nb), view1(t, nt));
        ot__lockstep_plain_norm(0);
        err[plain] = osc_error(s, hard, w[hard], t, nt, rtol, atol);
        for (int b = 0; b < nb; b++) /* the easy lanes are fine either way */
            ck_assert(b == hard || osc_error(s, b, w[b], t, nt, rtol, atol) < own);
        ot_solution_free(s);
    }
    ck_assert_msg(err[0] <= 2 * own,
                  "per-lane norm: hard lane %.1f tolerance units, "
                  "alone %.1f",
                  err[0], own);
    ck_assert_msg(err[1] > 5 * own,
                  "plain norm: hard lane %.1f tolerance units, alone %.1f", err[1], own);
    ot_ode_free(ode);
}
END_TEST

static int fail_after_1(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    if (t > 1.0)
        return -1;
    return decay_rhs(t, y, p, d, u);
}

/* A callback that fails for every lane: each lane leaves its block alone
 * (a failing call is made again lane by lane), reports OT_ERR_CALLBACK
 * with lanes mode's message, and NaN after its last good output. */
START_TEST(callback_failure_stops_the_batch)
{
    double k[8], y0 = 1, t[5] = {0.5, 1.0, 1.5, 2.0, 2.5};
    for (int b = 0; b < 8; b++)
        k[b] = 0.1 * (b + 1);
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 1, 1, fail_after_1, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense(ode, view1(&y0, 1), view2(k, 1, 8), view1(t, 5), &s),
                     OT_ERR_LANES_FAILED,
                     "8 of 8 lanes failed; lane 0: rhs returned -1 at t = ");
    ck_assert_int_eq(ot_solution_nfailed(s), 8);
    const ot_view ys = ot_tensor_view(ot_solution_ys(s));
    for (int b = 0; b < 8; b++) {
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_ERR_CALLBACK);
        ck_assert_ptr_nonnull(strstr(ot_solution_lane_message(s, b), "rhs returned -1"));
        const int64_t c = ot_solution_lane_count(s, b);
        ck_assert_int_ge(c, 1);
        ck_assert_int_le(c, 2); /* t = 1.0 may be reached before the failing step */
        ck_assert_int_eq(c, ot_solution_lane_count(s, 0));
        ck_assert_double_eq_tol(ot_view_col_f64(ys, 0, b)[0], exp(-k[b] * 0.5), 1e-4);
        for (int i = (int)c; i < 5; i++)
            ck_assert(isnan(ot_view_col_f64(ys, i, b)[0]));
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

static int fall_rhs(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < lanes_of(y); b++) {
        double *D = ot_view_mut_col_f64(d, b, 0);
        D[0] = ot_view_col_f64(y, b, 0)[1];
        D[1] = -9.81;
    }
    return 0;
}

static int ground(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < lanes_of(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0];
    return 0;
}

/* A root stops its own lane only; the others run on to theirs. */
START_TEST(roots_stop_each_lane_at_its_event)
{
    const int nb = 6;
    double y0[12], t[30];
    for (int b = 0; b < nb; b++) {
        y0[2 * b] = 1.0 + 2.0 * b;
        y0[2 * b + 1] = 0;
    }
    for (int i = 0; i < 30; i++)
        t[i] = 0.05 * (i + 1);
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 2, 0, fall_rhs, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_roots(ode, 1, ground), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, 1e-10), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol(ode, 1e-12), OT_OK);
    ck_assert_int_eq(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK);
    for (int steps = 0; steps <= 1; steps++) {
        ot_solution *s = NULL;
        const int st = steps ? ot_solve(ode, view2(y0, 2, nb), ot_view_absent(), 10.0, &s)
                             : ot_solve_dense(ode, view2(y0, 2, nb), ot_view_absent(),
                                              view1(t, 30), &s);
        ck_assert_msg(st == OT_OK, "%s", ot_last_error());
        const ot_view ys = ot_tensor_view(ot_solution_ys(s));
        const ot_view ts = ot_tensor_view(ot_solution_ts(s));
        for (int b = 0; b < nb; b++) {
            const double hit = sqrt(2 * y0[2 * b] / 9.81);
            int idx;
            double when;
            ck_assert_int_eq(ot_solution_lane_root(s, b, &idx, &when), OT_OK);
            ck_assert_int_eq(idx, 0);
            ck_assert_double_eq_tol(when, hit, 1e-6);
            const int64_t c = ot_solution_lane_count(s, b);
            if (steps) { /* the last entry is the event */
                ck_assert_double_eq_tol(ot_view_col_f64(ts, b, 0)[c - 1], hit, 1e-6);
                ck_assert_double_eq_tol(ot_view_col_f64(ys, c - 1, b)[0], 0, 1e-6);
            } else {
                ck_assert_int_eq(c, (int64_t)floor(hit / 0.05 + 1e-9));
                for (int i = 0; i < 30; i++) {
                    const double h = ot_view_col_f64(ys, i, b)[0];
                    if (i < c)
                        ck_assert_double_eq_tol(h, y0[2 * b] - 0.5 * 9.81 * t[i] * t[i],
                                                1e-7);
                    else
                        ck_assert(isnan(h));
                }
            }
        }
        ot_solution_free(s);
    }
    ot_ode_free(ode);
}
END_TEST

static int half_life(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0] - 0.5;
    return 0;
}

/* A stopped lane stands still with its old step history; it must not hold
 * back the others at a tight tolerance (it once failed them at rtol 1e-10
 * with "error test failed repeatedly"). */
START_TEST(stopped_lanes_leave_the_norm)
{
    double k[4] = {1, 2, 2, 4}, y0 = 1, t[4] = {0.1, 0.5, 1.0, 2.0};
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 1, 1, decay_rhs, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_roots(ode, 1, half_life), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, 1e-10), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol(ode, 1e-12), OT_OK);
    ot_solution *s =
        solve_mode(ode, OT_LOCKSTEP, view1(&y0, 1), view2(k, 1, 4), view1(t, 4));
    for (int b = 0; b < 4; b++) {
        double when;
        int idx;
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
        ck_assert_int_eq(ot_solution_lane_root(s, b, &idx, &when), OT_OK);
        ck_assert_double_eq_tol(when, log(2.0) / k[b], 1e-8);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* Forward sensitivities in lockstep (own all-lanes difference quotients)
 * against the analytic dy/dk = -t y0 exp(-k t). */
START_TEST(sensitivities_match_analytic)
{
    const int nb = 16, nt = 8;
    double k[16], y0 = 2.0, t[8];
    for (int b = 0; b < nb; b++)
        k[b] = 0.2 + 0.1 * b;
    for (int i = 0; i < nt; i++)
        t[i] = 0.5 * (i + 1);
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 1, 1, decay_rhs, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, 1e-8), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol(ode, 1e-12), OT_OK);
    ck_assert_int_eq(ot_ode_set_mode(ode, _i ? OT_LOCKSTEP : OT_LANES), OT_OK);
    ot_solution *s = NULL;
    const int st =
        ot_solve_fwd_sens(ode, view1(&y0, 1), view2(k, 1, nb), view1(t, nt), &s);
    ck_assert_msg(st == OT_OK, "%s", ot_last_error());
    const ot_view sv = ot_tensor_view(ot_solution_sens(s, 0));
    const ot_view ys = ot_tensor_view(ot_solution_ys(s));
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < nt; i++) {
            const double want = -t[i] * y0 * exp(-k[b] * t[i]);
            ck_assert_double_eq_tol(ot_view_col_f64(sv, i, b)[0], want,
                                    1e-5 * fabs(want));
            ck_assert_double_eq_tol(ot_view_col_f64(ys, i, b)[0], y0 * exp(-k[b] * t[i]),
                                    1e-6);
        }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* Adams in lockstep: oscillators against cos(w t). */
START_TEST(adams_matches_analytic)
{
    const int nb = 32, nt = 12;
    double w[32], y0[2] = {1, 0}, t[12];
    for (int b = 0; b < nb; b++)
        w[b] = 0.5 + 0.05 * b;
    for (int i = 0; i < nt; i++)
        t[i] = 0.5 * i;
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 2, 1, osc_rhs, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_method(ode, OT_ADAMS), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, 1e-8), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol(ode, 1e-10), OT_OK);
    ot_solution *s =
        solve_mode(ode, OT_LOCKSTEP, view1(y0, 2), view2(w, 1, nb), view1(t, nt));
    const ot_view ys = ot_tensor_view(ot_solution_ys(s));
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < nt; i++) {
            const double *y = ot_view_col_f64(ys, i, b);
            ck_assert_double_eq_tol(y[0], cos(w[b] * t[i]), 1e-6);
            ck_assert_double_eq_tol(y[1], -w[b] * sin(w[b] * t[i]), 1e-6);
        }
    ot_lane_stats s0, s9;
    ot_solution_lane_stats(s, 0, &s0);
    ot_solution_lane_stats(s, 9, &s9);
    ck_assert_int_eq(s0.steps, s9.steps); /* one integrator: shared counters */
    ck_assert_int_eq(s0.jac_evals, 0);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* The device options are checked when set and when solving; this build has
 * no CUDA backend (make check links src/cuda/none.c), so a CUDA solve says
 * so with OT_ERR_NO_CUDA and returns no solution. */
START_TEST(device_requests_without_cuda)
{
    double k = 0.5, y0 = 1, t[2] = {0.5, 1};
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 1, 1, decay_rhs, NULL), OT_OK);
    ck_assert_status(ot_ode_set_device(ode, (ot_device){4, 0}), OT_ERR_DEVICE,
                     "device: (4, 0)");
    ck_assert_status(ot_ode_set_device(ode, (ot_device){OT_CUDA, -1}), OT_ERR_DEVICE,
                     "id >= 0");
    ck_assert_int_eq(ot_ode_set_device(ode, (ot_device){OT_CUDA, 0}), OT_OK);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense(ode, view1(&y0, 1), view1(&k, 1), view1(t, 2), &s),
                     OT_ERR_ARG, "OT_LOCKSTEP");
    ck_assert_int_eq(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK);
    ck_assert_status(ot_solve_dense(ode, view1(&y0, 1), view1(&k, 1), view1(t, 2), &s),
                     OT_ERR_NO_CUDA, "without the CUDA backend");
    ck_assert_ptr_null(s);
    int count = 7;
    ck_assert_status(ot_cuda_device_count(&count), OT_ERR_NO_CUDA, "make cuda");
    ck_assert_int_eq(count, 0);
    /* Device memory on a CPU solve is refused before anything runs. */
    ck_assert_int_eq(ot_ode_set_device(ode, (ot_device){OT_CPU, 0}), OT_OK);
    ot_view dev;
    const int64_t one = 1;
    ck_assert_int_eq(ot_view_make(&dev, (void *)(uintptr_t)0x1000, OT_F64,
                                  (ot_device){OT_CUDA, 0}, 1, &one, NULL),
                     OT_OK);
    ck_assert_status(ot_solve_dense(ode, dev, view1(&k, 1), view1(t, 2), &s),
                     OT_ERR_DEVICE, "y0: device memory");
    ot_ode_free(ode);
}
END_TEST

/* One init and one out callback serve both modes and agree. */
static int init_from_k(ot_view p, ot_view_mut y0, void *u)
{
    (void)u;
    for (int64_t b = 0; b < p.layout.shape[1]; b++)
        ot_view_mut_col_f64(y0, b, 0)[0] = 1.0 / ot_view_col_f64(p, b, 0)[0];
    return 0;
}

static int out_double(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        ot_view_mut_col_f64(o, b, 0)[0] = 2 * ot_view_col_f64(y, b, 0)[0];
    return 0;
}

START_TEST(init_and_out_match_analytic)
{
    double k[24], t[6];
    for (int b = 0; b < 24; b++)
        k[b] = 0.5 + 0.1 * b;
    for (int i = 0; i < 6; i++)
        t[i] = 0.5 * i;
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 1, 1, decay_rhs, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_init(ode, init_from_k), OT_OK);
    ck_assert_int_eq(ot_ode_set_out(ode, 1, out_double), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, 1e-9), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol(ode, 1e-12), OT_OK);
    ot_solution *s =
        solve_mode(ode, OT_LOCKSTEP, ot_view_absent(), view2(k, 1, 24), view1(t, 6));
    const ot_view ys = ot_tensor_view(ot_solution_ys(s));
    for (int b = 0; b < 24; b++)
        for (int i = 0; i < 6; i++)
            ck_assert_double_eq_tol(ot_view_col_f64(ys, i, b)[0],
                                    2 / k[b] * exp(-k[b] * t[i]), 1e-7);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

Suite *lockstep_suite(void)
{
    Suite *s = suite_create("lockstep");
    TCase *tc = tcase_create("accuracy");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, robertson_agrees_with_lanes, 0, 2);
    tcase_add_test(tc, brusselator_agrees_with_lanes);
    tcase_add_test(tc, per_lane_norm_keeps_the_hard_lane_in_tolerance);
    tcase_add_test(tc, adams_matches_analytic);
    tcase_add_loop_test(tc, sensitivities_match_analytic, 0, 2);
    suite_add_tcase(s, tc);
    tc = tcase_create("events");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, callback_failure_stops_the_batch);
    tcase_add_test(tc, roots_stop_each_lane_at_its_event);
    tcase_add_test(tc, stopped_lanes_leave_the_norm);
    tcase_add_test(tc, device_requests_without_cuda);
    tcase_add_test(tc, init_and_out_match_analytic);
    suite_add_tcase(s, tc);
    return s;
}

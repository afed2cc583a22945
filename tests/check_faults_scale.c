/* Numerical faults at the extremes (issue 6, item 5), both modes: a lane
 * that blows up in finite time, output times from 1e-300 to 1e300, and one
 * faulty lane among 100,000. Contracts as in check_faults_numeric.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solve_common.h"
#include "solve/solve.h" /* ot__lockstep_auto_block */

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

/* Lane b of a is lane bb of b, counting mismatches instead of asserting
 * per lane (Check marks every assertion, too slow for 100,000 lanes). */
static int64_t stats_differ(const ot_solution *a, int64_t ba, const ot_solution *b,
                            int64_t bb)
{
    ot_lane_stats x, y;
    if (ot_solution_lane_stats(a, ba, &x) != OT_OK ||
        ot_solution_lane_stats(b, bb, &y) != OT_OK)
        return 1;
    return x.steps != y.steps || x.rhs_evals != y.rhs_evals ||
           x.jac_rhs_evals != y.jac_rhs_evals || x.jac_evals != y.jac_evals ||
           x.lin_setups != y.lin_setups || x.err_test_fails != y.err_test_fails ||
           x.nonlin_iters != y.nonlin_iters || x.nonlin_fails != y.nonlin_fails ||
           memcmp(&x.final_time, &y.final_time, sizeof x.final_time) != 0 ||
           ot_solution_lane_count(a, ba) != ot_solution_lane_count(b, bb);
}

/* ---- A lane that blows up: y' = p y^2, y(0) = 1, y = 1 / (1 - p t) -------- */

static int blowup_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double yb = ot_view_col_f64(y, b, 0)[0];
        ot_view_mut_col_f64(f, b, 0)[0] = ot_view_col_f64(p, b, 0)[0] * yb * yb;
    }
    return 0;
}

enum { LB = 8, FB = 3, NTB = 9 };

static int blowup_solve(ot_mode mode, const double *p, int64_t nb, ot_solution **out)
{
    static const double y0 = 1.0;
    double t[NTB];
    for (int i = 0; i < NTB; i++)
        t[i] = 0.25 * i;
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, 1, blowup_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-8), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-10), OT_OK, NULL);
    /* CVODE's 500: the lane stops at the step limit before overflowing. */
    ck_assert_status(ot_ode_set_max_steps(ode, 500), OT_OK, NULL);
    const int st =
        ot_solve_dense(ode, st_vec(&y0, 1), st_mat(p, 1, nb), st_vec(t, NTB), out);
    ot_ode_free(ode);
    return st;
}

/* Lane FB (p = 1) blows up at t = 1, inside [0, 2]; the others (p <= 0.45)
 * only after t = 2.2. Lanes mode: that lane fails alone (OT_ERR_SOLVER, with
 * CVODE's reason) after its outputs up to t = 0.75 (right to 1e-5); the
 * others are what they are without it. Lockstep: the same lane fails alone
 * (its error set the block's steps), the others finish and are right. */
START_TEST(exploding_lane)
{
    const int lock = _i;
    double p[LB], rest[LB - 1];
    for (int64_t b = 0, r = 0; b < LB; b++) {
        p[b] = b == FB ? 1.0 : 0.1 + 0.05 * (double)b;
        if (b != FB)
            rest[r++] = p[b];
    }
    ot_solution *s, *sr;
    ck_assert_status(blowup_solve(lock ? OT_LOCKSTEP : OT_LANES, p, LB, &s),
                     OT_ERR_LANES_FAILED, "1 of 8 lanes failed; lane 3: ");
    ck_assert_status(blowup_solve(lock ? OT_LOCKSTEP : OT_LANES, rest, LB - 1, &sr),
                     OT_OK, NULL);
    const char *msg = ot_solution_lane_message(s, FB);
    const int st = ot_solution_lane_status(s, FB);
    const int64_t c = ot_solution_lane_count(s, FB);
    /* y grows as 1 / (1 - t): ever shorter steps, until max_steps runs out
     * just short of t = 1. */
    ck_assert_msg(st == OT_ERR_SOLVER &&
                      strstr(msg, "mxstep steps taken before reaching"),
                  "%s: %s", ot_status_name(st), msg);
    ck_assert_msg(c == 4, "%lld outputs: %s", (long long)c, msg); /* t <= 0.75 */
    if (lock)
        ck_assert_msg(strstr(msg, "its error set the block's steps"), "%s", msg);
    for (int64_t b = 0; b < LB; b++) {
        ot_lane_stats ls;
        ck_assert_status(ot_solution_lane_stats(s, b, &ls), OT_OK, NULL);
        if (b != FB && lock) {
            ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
            ck_assert_int_eq(ot_solution_lane_count(s, b), NTB);
        } else if (b == FB) {
            ck_assert_int_eq(ot_solution_lane_status(s, b), st);
            ck_assert_str_eq(ot_solution_lane_message(s, b), msg);
            ck_assert_int_eq(ot_solution_lane_count(s, b), c);
            ck_assert(ls.final_time >= 0.75 && ls.final_time < 1.0);
        } else {
            ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
            ck_assert(
                st_lane_equal(ot_solution_ys(s), b, ot_solution_ys(sr), b - (b > FB)));
            ck_assert_int_eq(stats_differ(s, b, sr, b - (b > FB)), 0);
        }
        for (int64_t i = 0; i < NTB; i++) {
            const double y = st_y(s, 0, i, b),
                         exact = 1.0 / (1.0 - p[b] * 0.25 * (double)i);
            if (i < ot_solution_lane_count(s, b))
                ck_assert_msg(fabs(y - exact) <= 1e-5 * exact, "lane %lld y(%g) = %.10g",
                              (long long)b, 0.25 * (double)i, y);
            else
                ck_assert(isnan(y));
        }
    }
    ot_solution_free(s);
    ot_solution_free(sr);
}
END_TEST

/* ---- Output times 1e-300 .. 1e300 ------------------------------------------
 * y1' = -k (y1 - e), y2' = -k y2, y(0) = (1, 1): y1 = e + (1 - e) exp(-k t),
 * y2 = exp(-k t). Rates 1e5, 1 and 1e-100 change at t = 1e-5, 1 and 1e100;
 * rate 1e100 changes at t = 1e-100, and later its steps h make h k overflow
 * (near t = 1e208), so that lane fails there. */

static int relax_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *yb = ot_view_col_f64(y, b, 0), *pb = ot_view_col_f64(p, b, 0);
        double *fb = ot_view_mut_col_f64(f, b, 0);
        fb[0] = -pb[0] * (yb[0] - pb[1]);
        fb[1] = -pb[0] * yb[1];
    }
    return 0;
}

static int relax_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double k = ot_view_col_f64(p, b, 0)[0];
        ot_view_mut_col_f64(J, 0, b)[0] = -k;
        ot_view_mut_col_f64(J, 1, b)[1] = -k;
    }
    return 0;
}

enum { NTL = 121, LL = 4 }; /* t = 10^j, j = -300, -295, .., 300 */

static int relax_solve(ot_mode mode, const double *p, int64_t nb, ot_solution **out)
{
    static const double y0[2] = {1, 1};
    double t[NTL];
    for (int i = 0; i < NTL; i++)
        t[i] = pow(10.0, -300.0 + 5.0 * i);
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 2, relax_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_jac(ode, relax_jac), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-8), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    const int st =
        ot_solve_dense(ode, st_vec(y0, 2), st_mat(p, 2, nb), st_vec(t, NTL), out);
    ot_ode_free(ode);
    return st;
}

/* Every output of lane b before its count within 1e-6 of the exact value,
 * the first (t = 1e-300, long before any change) the initial state exactly,
 * NaN after the count. */
static void relax_assert(const ot_solution *s, int64_t b, double k, double e)
{
    const int64_t c = ot_solution_lane_count(s, b);
    for (int i = 0; i < NTL; i++) {
        const double t = pow(10.0, -300.0 + 5.0 * i), x = exp(-k * t);
        const double want[2] = {e + (1 - e) * x, x};
        for (int r = 0; r < 2; r++)
            ck_assert_msg(i < c ? fabs(st_y(s, r, i, b) - want[r]) <= 1e-6
                                : isnan(st_y(s, r, i, b)),
                          "lane %lld (k %g, %lld outputs): y%d(%g) = %.12g, exact %.12g",
                          (long long)b, k, (long long)c, r + 1, t, st_y(s, r, i, b),
                          want[r]);
    }
    ck_assert(c == 0 || (st_y(s, 0, 0, b) == 1.0 && st_y(s, 1, 0, b) == 1.0));
}

START_TEST(times_from_1e_minus_300_to_1e300)
{
    static const double p[2 * LL] = {1e5, 2.0, 1.0, -1.0, 1e-100, 0.5, 1e100, 3.0};
    const ot_mode mode = _i ? OT_LOCKSTEP : OT_LANES;
    ot_solution *s, *sr;
    ck_assert_status(relax_solve(mode, p, LL, &s), OT_ERR_LANES_FAILED,
                     "1 of 4 lanes failed; lane 3: rhs wrote NaN or Inf at t = ");
    ck_assert_status(relax_solve(mode, p, LL - 1, &sr), OT_OK, NULL);
    /* The stiff lane got through its change at 1e-100 and far beyond. */
    const int64_t c = ot_solution_lane_count(s, LL - 1);
    ck_assert_int_ge(c, 100); /* t >= 1e195 */
    ck_assert_int_lt(c, NTL);
    for (int64_t b = 0; b < LL; b++) {
        relax_assert(s, b, p[2 * b], p[2 * b + 1]);
        if (b < LL - 1)
            relax_assert(sr, b, p[2 * b], p[2 * b + 1]);
        if (b < LL - 1 && !_i) { /* lanes mode: the others as without it */
            ck_assert_int_eq(ot_solution_lane_count(s, b), NTL);
            ck_assert(st_lane_equal(ot_solution_ys(s), b, ot_solution_ys(sr), b));
            ck_assert_int_eq(stats_differ(s, b, sr, b), 0);
        } else if (b < LL - 1) { /* lockstep: they finish, right (relax_assert) */
            ck_assert_int_eq(ot_solution_lane_count(s, b), NTL);
            ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
        } else {
            ck_assert_int_eq(ot_solution_lane_count(s, b), c);
            ck_assert_int_eq(ot_solution_lane_status(s, b), OT_ERR_CALLBACK);
        }
    }
    ot_lane_stats ls;
    ck_assert_status(ot_solution_lane_stats(sr, 0, &ls), OT_OK, NULL);
    ck_assert(ls.final_time == 1e300 && ot_solution_lane_count(sr, 0) == NTL);
    ot_solution_free(s);
    ot_solution_free(sr);
}
END_TEST

/* ---- One faulty lane among 100,000 ----------------------------------------
 * y' = -k y; params (k, fault): from t > 0.5 the lane with fault 1 returns
 * -1 from rhs, with fault 2 writes NaN. */

static int decay1_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *pb = ot_view_col_f64(p, b, 0);
        double *fb = ot_view_mut_col_f64(f, b, 0);
        fb[0] = -pb[0] * ot_view_col_f64(y, b, 0)[0];
        if (pb[1] != 0 && t > 0.5) {
            if (pb[1] == 1)
                return -1;
            fb[0] = NAN;
        }
    }
    return 0;
}

/* 100,000 lanes; 10,000 under valgrind, where they would take minutes. The
 * faulty lane sits at 73.161 % of the batch. */
static int64_t lanes_m(void) { return RUNNING_ON_VALGRIND ? 10000 : 100000; }
static int64_t faulty_m(void) { return lanes_m() * 73161 / 100000; }

static int decay1_solve(ot_mode mode, const double *p, int64_t nb, ot_solution **out)
{
    static const double y0 = 1.0, t[2] = {0.25, 1.0};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, 2, decay1_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, OT_ADAMS), OT_OK, NULL);
    /* Loose in lanes mode, where the 100,000 lanes cost most. */
    ck_assert_status(ot_ode_set_rtol(ode, mode == OT_LANES ? 1e-3 : 1e-4), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, 2), OT_OK, NULL);
    const int st =
        ot_solve_dense(ode, st_vec(&y0, 1), st_mat(p, 2, nb), st_vec(t, 2), out);
    ot_ode_free(ode);
    return st;
}

/* Lanes mode: lane `bad` returns -1 from rhs; every other lane's outputs are,
 * byte for byte, those of the 99,999 lanes solved without it, and so are
 * their counts and statistics. */
START_TEST(one_bad_lane_in_100000)
{
    const int64_t nl = lanes_m(), bad = faulty_m();
    double *p = malloc(2 * nl * sizeof *p), *rest = malloc(2 * (nl - 1) * sizeof *p);
    ck_assert(p && rest);
    for (int64_t b = 0, r = 0; b < nl; b++) {
        p[2 * b] = 0.5 + 1e-5 * (double)b;
        p[2 * b + 1] = b == bad;
        if (b != bad) {
            rest[2 * r] = p[2 * b];
            rest[2 * r++ + 1] = 0;
        }
    }
    ot_solution *s, *sr;
    char want[96];
    snprintf(want, sizeof want,
             "1 of %lld lanes failed; lane %lld: rhs returned -1 at t = ", (long long)nl,
             (long long)bad);
    ck_assert_status(decay1_solve(OT_LANES, p, nl, &s), OT_ERR_LANES_FAILED, want);
    ck_assert_status(decay1_solve(OT_LANES, rest, nl - 1, &sr), OT_OK, NULL);
    ck_assert_int_eq(ot_solution_nfailed(s), 1);
    ck_assert_int_eq(ot_solution_lane_status(s, bad), OT_ERR_CALLBACK);
    const char *msg = ot_solution_lane_message(s, bad);
    ck_assert_msg(strstr(msg, "rhs returned -1 at t = ") == msg &&
                      strtod(msg + 23, NULL) > 0.5,
                  "%s", msg);
    const int64_t c = ot_solution_lane_count(s, bad);
    ck_assert(c <= 1 && isnan(st_y(s, 0, 1, bad)) &&
              (c == 1 || isnan(st_y(s, 0, 0, bad))));
    const ot_layout *a = ot_tensor_layout(ot_solution_ys(s)),
                    *r = ot_tensor_layout(ot_solution_ys(sr));
    const size_t lane = (size_t)a->strides[2];
    ck_assert(memcmp(a->data, r->data, (size_t)bad * lane) == 0);
    ck_assert(memcmp((char *)a->data + (size_t)(bad + 1) * lane,
                     (char *)r->data + (size_t)bad * lane,
                     (size_t)(nl - bad - 1) * lane) == 0);
    int64_t differ = 0;
    for (int64_t b = 0; b < nl; b++)
        if (b != bad)
            differ += stats_differ(s, b, sr, b - (b > bad)) ||
                      ot_solution_lane_status(s, b) != OT_OK;
    ck_assert_int_eq(differ, 0);
    ot_solution_free(s);
    ot_solution_free(sr);
    free(p);
    free(rest);
}
END_TEST

/* Lockstep: lane `bad` writes NaN. It leaves its block (the default for
 * n = 1: 1,024 lanes) alone, the message naming it; the other 99,999 lanes
 * finish and are right. */
START_TEST(one_nan_lane_stops_its_block_of_100000_in_lockstep)
{
    const int64_t nl = lanes_m(), bad = faulty_m();
    double *p = malloc(2 * nl * sizeof *p);
    ck_assert_ptr_nonnull(p);
    for (int64_t b = 0; b < nl; b++) {
        p[2 * b] = 0.5 + 1e-5 * (double)b;
        p[2 * b + 1] = b == bad ? 2 : 0;
    }
    ot_solution *s;
    char want[96], cause[64];
    snprintf(want, sizeof want, "1 of %lld lanes failed; lane %lld: rhs wrote NaN",
             (long long)nl, (long long)bad);
    snprintf(cause, sizeof cause, "to dydt[0] of lane %lld", (long long)bad);
    ck_assert_status(decay1_solve(OT_LOCKSTEP, p, nl, &s), OT_ERR_LANES_FAILED, want);
    const char *msg = ot_solution_lane_message(s, bad);
    ck_assert_msg(strstr(msg, cause), "%s", msg);
    const double *ys = ot_tensor_layout(ot_solution_ys(s))->data; /* [1, 2, nl] */
    int64_t differ = 0;
    for (int64_t b = 0; b < nl; b++) {
        const double y = ys[2 * b], exact = exp(-p[2 * b] * 0.25);
        if (b != bad) /* both outputs right */
            differ += ot_solution_lane_status(s, b) != OT_OK ||
                      !(fabs(y - exact) < 1e-3) ||
                      !(fabs(ys[2 * b + 1] - exp(-p[2 * b] * 1.0)) < 1e-3);
        else
            differ += ot_solution_lane_status(s, b) != OT_ERR_CALLBACK ||
                      ot_solution_lane_count(s, b) > 1 || !isnan(ys[2 * b + 1]);
    }
    ck_assert_int_eq(differ, 0);
    ot_solution_free(s);
    free(p);
}
END_TEST

Suite *faults_scale_suite(void)
{
    Suite *s = suite_create("faults_scale");
    TCase *tc = tcase_create("extremes");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, exploding_lane, 0, 2);
    tcase_add_loop_test(tc, times_from_1e_minus_300_to_1e300, 0, 2);
    tcase_add_test(tc, one_bad_lane_in_100000);
    tcase_add_test(tc, one_nan_lane_stops_its_block_of_100000_in_lockstep);
    suite_add_tcase(s, tc);
    return s;
}

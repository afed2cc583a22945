/* Solver suite, part 2: forward sensitivities (analytic, chain rule through
 * out functions, Robertson against finite differences), step records
 * (ot_solve) and roots, in dense, step and sensitivity solves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solve_common.h"

/* ---- Forward sensitivities ------------------------------------------------ */

/* Loop 0: params (k), y0 given; 1: params (k, a) with init y0 = (a, 2a);
 * 2: as 1 with out = 3 y (chain rule: 3 times the sensitivities). */
START_TEST(sens_decay_analytic)
{
    enum { L = 12, NT = 9 };
    const int64_t np = _i == 0 ? 1 : 2;
    double p[2 * L], y0[2 * L], t[NT];
    for (int64_t b = 0; b < L; b++) {
        p[np * b] = decay_k(2 * b);
        if (np == 2)
            p[np * b + 1] = 1.0 + 0.5 * (double)b;
        y0[2 * b] = np == 2 ? p[np * b + 1] : 1.0 + 0.5 * (double)b;
        y0[2 * b + 1] = 2.0 * y0[2 * b];
    }
    for (int i = 0; i < NT; i++)
        t[i] = 0.5 * i;
    ot_ode *ode = decay_ode(np, 1e-8, 1e-10);
    const double scale = _i == 2 ? 3.0 : 1.0;
    if (np == 2)
        ck_assert_status(ot_ode_set_init(ode, st_decay_init), OT_OK, NULL);
    if (_i == 2)
        ck_assert_status(ot_ode_set_out(ode, 2, triple_out), OT_OK, NULL);
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_fwd_sens(ode, np == 2 ? ot_view_absent() : st_mat(y0, 2, L),
                                       st_mat(p, np, L), st_vec(t, NT), &sol),
                     OT_OK, NULL);
    ck_assert_int_eq(ot_solution_nsens(sol), np);
    ck_assert_ptr_null(ot_solution_sens(sol, np));
    for (int64_t j = 0; j < np; j++)
        st_assert_shape(ot_solution_sens(sol, j), 3, 2, NT, L);
    for (int64_t b = 0; b < L; b++)
        for (int i = 0; i < NT; i++)
            for (int r = 0; r < 2; r++) {
                const double k = p[np * b], e = exp(-(r + 1) * k * t[i]);
                const double y = st_y(sol, r, i, b);
                ck_assert(fabs(y - scale * y0[2 * b + r] * e) <=
                          1e-7 * scale * y0[2 * b + r]);
                const double dk = -(r + 1) * t[i] * y0[2 * b + r] * e * scale;
                const double gk = st_at(ot_solution_sens(sol, 0), r, i, b);
                ck_assert_msg(fabs(gk - dk) <= 1e-6 * (fabs(dk) + 1e-3),
                              "lane %d r %d t %g: dy/dk %.12g, exact %.12g", (int)b, r,
                              t[i], gk, dk);
                if (np == 2) {
                    const double da = (r + 1) * e * scale;
                    const double ga = st_at(ot_solution_sens(sol, 1), r, i, b);
                    ck_assert_msg(fabs(ga - da) <= 1e-6 * (fabs(da) + 1e-3),
                                  "lane %d r %d t %g: dy/da %.12g, exact %.12g", (int)b,
                                  r, t[i], ga, da);
                }
            }
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* With out = 3 y, the output sensitivities are 3 times those of the states. */
START_TEST(sens_out_chain_rule)
{
    enum { L = 5, NT = 6 };
    double p[3 * L], t[NT] = {0, 0.4, 4, 40, 400, 4000};
    rober_rates(p, L);
    const double y0[3] = {1, 0, 0};
    ot_ode *ode = st_rober_ode();
    ot_solution *plain = NULL, *out = NULL;
    ck_assert_status(
        ot_solve_fwd_sens(ode, st_vec(y0, 3), st_mat(p, 3, L), st_vec(t, NT), &plain),
        OT_OK, NULL);
    ck_assert_status(ot_ode_set_out(ode, 3, triple_out), OT_OK, NULL);
    ck_assert_status(
        ot_solve_fwd_sens(ode, st_vec(y0, 3), st_mat(p, 3, L), st_vec(t, NT), &out),
        OT_OK, NULL);
    for (int64_t j = 0; j < 3; j++)
        for (int64_t b = 0; b < L; b++)
            for (int i = 0; i < NT; i++)
                for (int r = 0; r < 3; r++) {
                    const double s = st_at(ot_solution_sens(plain, j), r, i, b);
                    const double o = st_at(ot_solution_sens(out, j), r, i, b);
                    ck_assert_msg(fabs(o - 3.0 * s) <= 1e-6 * fabs(3.0 * s) + 1e-300,
                                  "sens %d lane %d y%d(%g): %.17g vs 3 * %.17g", (int)j,
                                  (int)b, r, t[i], o, s);
                }
    ot_solution_free(plain);
    ot_solution_free(out);
    ot_ode_free(ode);
}
END_TEST

/* Robertson sensitivities against central differences of two extra solves
 * per parameter. CVODES' difference-quotient sensitivities stall below rtol
 * 1e-6 here (a raw CVODES program stalls at the same step), so rtol 1e-6 with
 * 1 % parameter steps: measured agreement 8e-4 of each component's scale. */
START_TEST(sens_robertson_vs_finite_differences)
{
    enum { NT = 6 };
    const double t[NT] = {0.4, 4, 40, 400, 4000, 40000}, y0[3] = {1, 0, 0};
    const double atol[3] = {1e-10, 1e-16, 1e-8}, hrel = 1e-2;
    double p[3];
    memcpy(p, ST_ROBER_K, sizeof p);
    ot_ode *ode = st_rober_ode();
    ck_assert_status(ot_ode_set_rtol(ode, 1e-6), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol_vector(ode, st_vec(atol, 3)), OT_OK, NULL);
    ck_assert_status(ot_ode_set_max_steps(ode, 5000), OT_OK, NULL);
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve_fwd_sens(ode, st_vec(y0, 3), st_vec(p, 3), st_vec(t, NT), &sol), OT_OK,
        NULL);
    /* Perturbed parameter sets as lanes: (p + h e_j, p - h e_j) for each j. */
    double pp[3 * 6];
    for (int j = 0; j < 3; j++)
        for (int s = 0; s < 2; s++) {
            memcpy(pp + 3 * (2 * j + s), p, sizeof p);
            pp[3 * (2 * j + s) + j] = p[j] * (s == 0 ? 1.0 + hrel : 1.0 - hrel);
        }
    ot_solution *fd = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 3), st_mat(pp, 3, 6), st_vec(t, NT), &fd), OT_OK,
        NULL);
    for (int j = 0; j < 3; j++)
        for (int r = 0; r < 3; r++) {
            /* Scaled sensitivities p_j dy_r/dp_j, compared relative to the
             * component's largest one over time. */
            double d[NT], big = 0;
            for (int i = 0; i < NT; i++) {
                d[i] = (st_y(fd, r, i, 2 * j) - st_y(fd, r, i, 2 * j + 1)) / (2 * hrel);
                big = fmax(big, fabs(d[i]));
            }
            ck_assert(big > 0);
            for (int i = 0; i < NT; i++) {
                const double s = p[j] * st_at(ot_solution_sens(sol, j), r, i, 0);
                ck_assert_msg(fabs(s - d[i]) <= 2e-3 * big,
                              "p%d y%d(%g): sens %.10g, differences %.10g (scale %g)", j,
                              r, t[i], s, d[i], big);
            }
        }
    ot_solution_free(sol);
    ot_solution_free(fd);
    ot_ode_free(ode);
}
END_TEST

/* ---- Step records (ot_solve) ---------------------------------------------- */

START_TEST(steps_decay)
{
    enum { L = 16 };
    double k[L], y0[2 * L];
    decay_inputs(k, y0, L);
    for (int64_t b = 0; b < L; b++)
        k[b] = 0.2 * (double)(1 + b * b); /* 0.2 .. 45: very different step counts */
    const double rtol = 1e-8, atol = 1e-11, tf = 4.0;
    ot_ode *ode = decay_ode(1, rtol, atol);
    ck_assert_status(ot_ode_set_t0(ode, 0.5), OT_OK, NULL);
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve(ode, st_mat(y0, 2, L), st_mat(k, 1, L), tf, &sol), OT_OK,
                     NULL);
    const ot_tensor *ts = ot_solution_ts(sol);
    const int64_t ntmax = ot_tensor_layout(ts)->shape[0];
    st_assert_shape(ts, 2, ntmax, L, 0);
    st_assert_shape(ot_solution_ys(sol), 3, 2, ntmax, L);
    int64_t cmin = INT64_MAX, cmax = 0;
    for (int64_t b = 0; b < L; b++) {
        const int64_t c = ot_solution_lane_count(sol, b);
        ot_lane_stats s;
        ot_solution_lane_stats(sol, b, &s);
        ck_assert_int_eq(c, s.steps + 1); /* t0 and every step */
        ck_assert(s.final_time == tf);
        cmin = c < cmin ? c : cmin;
        cmax = c > cmax ? c : cmax;
        ck_assert(st_at(ts, 0, b, 0) == 0.5);
        ck_assert(st_at(ts, c - 1, b, 0) == tf);
        for (int64_t i = 0; i < ntmax; i++) {
            const double ti = st_at(ts, i, b, 0);
            if (i >= c) {
                ck_assert(isnan(ti) && isnan(st_y(sol, 0, i, b)) &&
                          isnan(st_y(sol, 1, i, b)));
                continue;
            }
            if (i > 0)
                ck_assert(ti > st_at(ts, i - 1, b, 0));
            for (int r = 0; r < 2; r++) {
                const double ex = st_decay_exact(r, y0[2 * b + r], k[b], ti - 0.5);
                ck_assert_msg(fabs(st_y(sol, r, i, b) - ex) <=
                                  20 * (rtol * y0[2 * b + r] + atol),
                              "lane %d y%d(%g) = %.17g, exact %.17g", (int)b, r, ti,
                              st_y(sol, r, i, b), ex);
            }
        }
    }
    ck_assert_int_eq(cmax, ntmax);
    ck_assert_int_gt(cmax, cmin + 10);
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* ---- Roots ---------------------------------------------------------------- */

static const double GRAV = 9.81;

/* Falling ball, states (h, v), params (g, tc). */
static int ball_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        ot_view_mut_col_f64(f, b, 0)[0] = ot_view_col_f64(y, b, 0)[1];
        ot_view_mut_col_f64(f, b, 0)[1] = -ot_view_col_f64(p, b, 0)[0];
    }
    return 0;
}

/* g0 = h (the floor), g1 = t - tc (a clock). */
static int ball_root(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0];
        ot_view_mut_col_f64(g, b, 0)[1] = t - ot_view_col_f64(p, b, 0)[1];
    }
    return 0;
}

enum { BALL_L = 8, BALL_CLOCK = 5 }; /* lane 5's clock fires first */

static ot_ode *ball_problem(double *y0, double *p)
{
    for (int64_t b = 0; b < BALL_L; b++) {
        y0[2 * b] = 1.0 + 0.5 * (double)b;
        y0[2 * b + 1] = 0.0;
        p[2 * b] = GRAV;
        p[2 * b + 1] = b == BALL_CLOCK ? 0.35 : 100.0;
    }
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 2, ball_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 2, ball_root), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    return ode;
}

/* The event lane b should report: (index, time). */
static double ball_event(int64_t b, const double *y0, int *index)
{
    *index = b == BALL_CLOCK ? 1 : 0;
    return b == BALL_CLOCK ? 0.35 : sqrt(2.0 * y0[2 * b] / GRAV);
}

/* How many of the output times t[0 .. nt) come before when. */
static int64_t times_before(const double *t, int64_t nt, double when)
{
    int64_t k = 0;
    while (k < nt && t[k] < when)
        k++;
    return k;
}

/* Asserts that lane b of a solve at times t reported its event (index, and
 * time within 1e-6 of the exact one) and holds the outputs before it;
 * returns their count, and the reported time in *when. */
static int64_t assert_ball_event(const ot_solution *sol, int64_t b, const double *y0,
                                 const double *t, int64_t nt, double *when)
{
    int want_idx, idx;
    const double want = ball_event(b, y0, &want_idx);
    ck_assert_status(ot_solution_lane_root(sol, b, &idx, when), OT_OK, NULL);
    ck_assert_int_eq(idx, want_idx);
    ck_assert_msg(fabs(*when - want) <= 1e-6, "lane %d root %.12g, exact %.12g", (int)b,
                  *when, want);
    const int64_t before = times_before(t, nt, want);
    ck_assert_int_eq(ot_solution_lane_count(sol, b), before);
    return before;
}

START_TEST(roots_dense_stop_lanes)
{
    enum { NT = 31 };
    double y0[2 * BALL_L], p[2 * BALL_L], t[NT];
    for (int i = 0; i < NT; i++)
        t[i] = 0.1 * i;
    ot_ode *ode = ball_problem(y0, p);
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_dense(ode, st_mat(y0, 2, BALL_L), st_mat(p, 2, BALL_L),
                                    st_vec(t, NT), &sol),
                     OT_OK, NULL);
    for (int64_t b = 0; b < BALL_L; b++) {
        ck_assert_int_eq(ot_solution_lane_status(sol, b), OT_OK);
        double when;
        const int64_t before = assert_ball_event(sol, b, y0, t, NT, &when);
        for (int64_t i = 0; i < NT; i++) {
            const double h = st_y(sol, 0, i, b);
            if (i < before)
                ck_assert_msg(fabs(h - (y0[2 * b] - 0.5 * GRAV * t[i] * t[i])) < 1e-8,
                              "lane %d t %g h %.17g exact %.17g", (int)b, t[i], h,
                              y0[2 * b] - 0.5 * GRAV * t[i] * t[i]);
            else
                ck_assert(isnan(h) && isnan(st_y(sol, 1, i, b)));
        }
        ot_lane_stats s;
        ot_solution_lane_stats(sol, b, &s);
        ck_assert(s.final_time == when);
    }
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

START_TEST(roots_steps_end_at_event)
{
    double y0[2 * BALL_L], p[2 * BALL_L];
    ot_ode *ode = ball_problem(y0, p);
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve(ode, st_mat(y0, 2, BALL_L), st_mat(p, 2, BALL_L), 10.0, &sol), OT_OK,
        NULL);
    for (int64_t b = 0; b < BALL_L; b++) {
        int want_idx, idx;
        const double want = ball_event(b, y0, &want_idx);
        double when;
        ot_solution_lane_root(sol, b, &idx, &when);
        ck_assert_int_eq(idx, want_idx);
        ck_assert(fabs(when - want) <= 1e-6);
        const int64_t c = ot_solution_lane_count(sol, b);
        ck_assert_int_gt(c, 2);
        ck_assert(st_at(ot_solution_ts(sol), c - 1, b, 0) == when);
        const double h = st_y(sol, 0, c - 1, b);
        if (idx == 0)
            ck_assert(fabs(h) < 1e-6);
        else
            ck_assert(fabs(h - (y0[2 * b] - 0.5 * GRAV * when * when)) < 1e-8);
    }
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* Roots stop sensitivity solves too, in both modes (lanes mode once kept
 * integrating: reading the sensitivities replaced CV_ROOT_RETURN). Before
 * the event h = h0 - g t^2 / 2, so dh/dg = -t^2 / 2 and dv/dg = -t. */
START_TEST(roots_stop_sensitivity_solves)
{
    enum { NT = 31 };
    double y0[2 * BALL_L], p[2 * BALL_L], t[NT];
    for (int i = 0; i < NT; i++)
        t[i] = 0.1 * i;
    ot_ode *ode = ball_problem(y0, p);
    ck_assert_status(ot_ode_set_mode(ode, _i == 0 ? OT_LANES : OT_LOCKSTEP), OT_OK, NULL);
    /* CVODES' own difference-quotient sensitivities (lanes mode) cannot
     * meet ball_problem's 1e-10: their round-off alone is larger. */
    ck_assert_status(ot_ode_set_rtol(ode, 1e-8), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-10), OT_OK, NULL);
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_fwd_sens(ode, st_mat(y0, 2, BALL_L), st_mat(p, 2, BALL_L),
                                       st_vec(t, NT), &sol),
                     OT_OK, NULL);
    for (int64_t b = 0; b < BALL_L; b++) {
        double when;
        const int64_t before = assert_ball_event(sol, b, y0, t, NT, &when);
        for (int64_t i = 0; i < NT; i++) {
            const double dh = st_at(ot_solution_sens(sol, 0), 0, i, b);
            const double dv = st_at(ot_solution_sens(sol, 0), 1, i, b);
            if (i < before) {
                ck_assert_msg(fabs(dh + 0.5 * t[i] * t[i]) < 1e-6,
                              "lane %d t %g dh/dg %.17g", (int)b, t[i], dh);
                ck_assert_msg(fabs(dv + t[i]) < 1e-6, "lane %d t %g dv/dg %.17g", (int)b,
                              t[i], dv);
            } else {
                ck_assert(isnan(dh) && isnan(dv) && isnan(st_y(sol, 0, i, b)));
            }
        }
    }
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* A root function has no recoverable failure: a positive return stops the
 * lane like a negative one, in both modes (in lockstep the lane leaves its
 * block), and the message gives the value it returned. */
static int root_asks_retry(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    ball_root(t, y, p, g, u);
    int rc = 0; /* the lane whose clock is 0.35 */
    for (int64_t b = 0; b < ST_LANES(y); b++)
        if (t > 0.2 && ot_view_col_f64(p, b, 0)[1] < 1.0)
            rc = 7;
    return rc;
}

START_TEST(root_positive_return_stops)
{
    enum { NT = 11 };
    double y0[2 * BALL_L], p[2 * BALL_L], t[NT];
    for (int i = 0; i < NT; i++)
        t[i] = 0.05 * i;
    ot_ode *ode = ball_problem(y0, p);
    ck_assert_status(ot_ode_set_roots(ode, 2, root_asks_retry), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, _i == 0 ? OT_LANES : OT_LOCKSTEP), OT_OK, NULL);
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_dense(ode, st_mat(y0, 2, BALL_L), st_mat(p, 2, BALL_L),
                                    st_vec(t, NT), &sol),
                     OT_ERR_LANES_FAILED, NULL);
    for (int64_t b = 0; b < BALL_L; b++) {
        const int bad = b == BALL_CLOCK;
        ck_assert_int_eq(ot_solution_lane_status(sol, b), bad ? OT_ERR_CALLBACK : OT_OK);
        if (bad) {
            const char *m = ot_solution_lane_message(sol, b);
            ck_assert_msg(strstr(m, "root returned 7 (a root function cannot ask for a "
                                    "retry)") != NULL,
                          "lane %d: %s", (int)b, m);
            ck_assert_int_lt(ot_solution_lane_count(sol, b), NT);
        } else { /* stops at its floor event only, as without the retry */
            int idx;
            ck_assert_int_eq(ot_solution_lane_count(sol, b),
                             times_before(t, NT, ball_event(b, y0, &idx)));
        }
    }
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

Suite *sens_roots_suite(void)
{
    Suite *s = suite_create("sens_roots");
    TCase *tc = ot_test_tcase(s, "sensitivities", 60);
    tcase_add_loop_test(tc, sens_decay_analytic, 0, 3);
    tcase_add_test(tc, sens_out_chain_rule);
    tcase_add_test(tc, sens_robertson_vs_finite_differences);

    tc = ot_test_tcase(s, "steps and roots", 60);
    tcase_add_test(tc, steps_decay);
    tcase_add_test(tc, roots_dense_stop_lanes);
    tcase_add_test(tc, roots_steps_end_at_event);
    tcase_add_loop_test(tc, roots_stop_sensitivity_solves, 0, 2);
    tcase_add_loop_test(tc, root_positive_return_stops, 0, 2);
    return s;
}

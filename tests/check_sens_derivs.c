/* Forward sensitivities from user derivatives (ot_ode_set_dfdp): against
 * central differences of extra solves and CVODES' difference quotients, in
 * lanes mode and lockstep; one lane of lockstep bit for bit lanes mode;
 * thread counts; what a wrong or missing derivative callback gets. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solve_common.h"

/* ---- SEIR with waning immunity: p = (beta, sigma, gamma, omega) ---------- */

static void seir_f(const double *y, const double *p, double *f)
{
    const double inf = p[0] * y[0] * y[2];
    f[0] = -inf + p[3] * y[3];
    f[1] = inf - p[1] * y[1];
    f[2] = p[1] * y[1] - p[2] * y[2];
    f[3] = p[2] * y[2] - p[3] * y[3];
}

static int seir_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t;
    if (u)
        (*(int64_t *)u)++; /* rhs calls, for the counting test */
    for (int64_t b = 0; b < ST_LANES(y); b++)
        seir_f(ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0),
               ot_view_mut_col_f64(f, b, 0));
    return 0;
}

/* Only the nonzero entries: the rest arrive zeroed. */
static int seir_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *x = ot_view_col_f64(y, b, 0), *k = ot_view_col_f64(p, b, 0);
        double *cs = ot_view_mut_col_f64(J, 0, b), *ce = ot_view_mut_col_f64(J, 1, b);
        double *ci = ot_view_mut_col_f64(J, 2, b), *cr = ot_view_mut_col_f64(J, 3, b);
        cs[0] = -k[0] * x[2], cs[1] = k[0] * x[2];
        ce[1] = -k[1], ce[2] = k[1];
        ci[0] = -k[0] * x[0], ci[1] = k[0] * x[0], ci[2] = -k[2], ci[3] = k[2];
        cr[0] = k[3], cr[3] = -k[3];
    }
    return 0;
}

static int seir_dfdp(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *x = ot_view_col_f64(y, b, 0);
        double *db = ot_view_mut_col_f64(d, 0, b), *ds = ot_view_mut_col_f64(d, 1, b);
        double *dg = ot_view_mut_col_f64(d, 2, b), *dw = ot_view_mut_col_f64(d, 3, b);
        db[0] = -x[0] * x[2], db[1] = x[0] * x[2];
        ds[1] = -x[1], ds[2] = x[1];
        dg[2] = -x[2], dg[3] = x[2];
        dw[0] = x[3], dw[3] = -x[3];
    }
    return 0;
}

enum { SEIR_NT = 8 };
static const double SEIR_T[SEIR_NT] = {1, 5, 10, 20, 40, 60, 100, 150};
static const double SEIR_Y0[4] = {0.99, 0.01, 0, 0};

/* Lane b's parameters. */
static void seir_params(double *p, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++) {
        p[4 * b + 0] = 0.6 + 0.05 * (double)b;
        p[4 * b + 1] = 0.2 + 0.01 * (double)(b % 3);
        p[4 * b + 2] = 0.1 + 0.005 * (double)(b % 4);
        p[4 * b + 3] = 0.01 * (1.0 + (double)(b % 2));
    }
}

static ot_ode *seir_ode(double rtol, ot_mode mode, int with_dfdp, void *user)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 4, 4, seir_rhs, user), OT_OK, NULL);
    ck_assert_status(ot_ode_set_jac(ode, seir_jac), OT_OK, NULL);
    if (with_dfdp)
        ck_assert_status(ot_ode_set_dfdp(ode, seir_dfdp), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, rtol), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, rtol * 1e-2), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    return ode;
}

/* Central differences of extra solves: lane 2j of the result is p + h e_j,
 * lane 2j + 1 p - h e_j, h = hrel |p_j|, for np parameters of one lane.
 * They run in lockstep, mode restored after: all 2 np lanes then take the
 * same steps, so the differences carry no noise from step selection (solved
 * apart, two solves differ by about rtol, and that over 2 h is 1e-5 of the
 * sensitivity at rtol 1e-10, h = 1e-5 p: measured). */
static ot_solution *perturbed(ot_ode *ode, ot_mode mode, ot_view y0, const double *p,
                              int np, const double *t, int nt, double hrel)
{
    double *pp = malloc((size_t)(2 * np * np) * sizeof *pp);
    for (int j = 0; j < np; j++)
        for (int s = 0; s < 2; s++) {
            memcpy(pp + np * (2 * j + s), p, (size_t)np * sizeof *p);
            pp[np * (2 * j + s) + j] = p[j] * (s == 0 ? 1.0 + hrel : 1.0 - hrel);
        }
    ot_solution *fd = NULL;
    ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    ck_assert_status(ot_solve_dense(ode, y0, st_mat(pp, np, 2 * np), st_vec(t, nt), &fd),
                     OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    free(pp);
    return fd;
}

/* Largest gap between sens(j) of lane b and the differences, relative to
 * the largest |d y_r / d p_j| of that state over time. */
static double worst_vs_differences(const ot_solution *sol, int64_t b,
                                   const ot_solution *fd, const double *p, int np, int n,
                                   int nt, double hrel)
{
    double worst = 0;
    for (int j = 0; j < np; j++)
        for (int r = 0; r < n; r++) {
            double d[16], big = 0;
            for (int i = 0; i < nt; i++) {
                d[i] = (st_y(fd, r, i, 2 * j) - st_y(fd, r, i, 2 * j + 1)) /
                       (2 * hrel * p[j]);
                big = fmax(big, fabs(d[i]));
            }
            for (int i = 0; big > 0 && i < nt; i++) {
                const double s = st_at(ot_solution_sens(sol, j), r, i, b);
                worst = fmax(worst, fabs(s - d[i]) / big);
            }
        }
    return worst;
}

/* Loop 0: lanes mode, 1: lockstep. Each lane's sensitivities from df/dp
 * match central differences of extra solves of that lane (measured 1e-8 to
 * 3.5e-8 of each state's scale), as CVODES' difference-quotient ones do at
 * rtol 1e-8 (6e-8 to 2.5e-7; at 1e-10 they stall at the step limit). */
START_TEST(dfdp_seir_matches_central_differences)
{
    enum { L = 6 };
    const ot_mode mode = _i == 0 ? OT_LANES : OT_LOCKSTEP;
    double p[4 * L];
    seir_params(p, L);
    ot_ode *ode = seir_ode(1e-10, mode, 1, NULL);
    ot_ode *dq = seir_ode(1e-8, mode, 0, NULL); /* at 1e-10 it stalls (mxstep) */
    ot_solution *sol = NULL, *ref = NULL;
    ck_assert_status(ot_solve_fwd_sens(ode, st_vec(SEIR_Y0, 4), st_mat(p, 4, L),
                                       st_vec(SEIR_T, SEIR_NT), &sol),
                     OT_OK, NULL);
    ck_assert_status(ot_solve_fwd_sens(dq, st_vec(SEIR_Y0, 4), st_mat(p, 4, L),
                                       st_vec(SEIR_T, SEIR_NT), &ref),
                     OT_OK, NULL);
    const double hrel = 1e-5;
    for (int64_t b = 0; b < L; b++) {
        ot_solution *fd =
            perturbed(ode, mode, st_vec(SEIR_Y0, 4), p + 4 * b, 4, SEIR_T, SEIR_NT, hrel);
        const double w = worst_vs_differences(sol, b, fd, p + 4 * b, 4, 4, SEIR_NT, hrel);
        const double wq =
            worst_vs_differences(ref, b, fd, p + 4 * b, 4, 4, SEIR_NT, hrel);
        ck_assert_msg(w < 1e-6 && wq < 1e-5,
                      "lane %d: df/dp sensitivities %.3g, difference quotients %.3g from "
                      "central differences",
                      (int)b, w, wq);
        ot_solution_free(fd);
    }
    ot_solution_free(sol);
    ot_solution_free(ref);
    ot_ode_free(ode);
    ot_ode_free(dq);
}
END_TEST

/* ---- Robertson's rate constants ------------------------------------------- */

static int rober_dfdp(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *x = ot_view_col_f64(y, b, 0);
        double *d1 = ot_view_mut_col_f64(d, 0, b), *d2 = ot_view_mut_col_f64(d, 1, b);
        double *d3 = ot_view_mut_col_f64(d, 2, b);
        d1[0] = -x[0], d1[1] = x[0];
        d2[0] = x[1] * x[2], d2[1] = -x[1] * x[2];
        d3[1] = -x[1] * x[1], d3[2] = x[1] * x[1];
    }
    return 0;
}

/* Loop 0: lanes, 1: lockstep. Robertson at rtol 1e-8 (where CVODES'
 * difference-quotient sensitivities stall, sens_robertson_vs_finite_
 * differences): scaled sensitivities within 1e-5 of central differences. */
START_TEST(dfdp_robertson_rates_match_central_differences)
{
    enum { L = 3, NT = 6 };
    const double t[NT] = {0.4, 4, 40, 400, 4000, 40000}, y0[3] = {1, 0, 0};
    const double atol[3] = {1e-14, 1e-20, 1e-12}, hrel = 1e-5;
    double p[3 * L];
    rober_rates(p, L);
    ot_ode *ode = st_rober_ode();
    ck_assert_status(ot_ode_set_dfdp(ode, rober_dfdp), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol_vector(ode, st_vec(atol, 3)), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, _i == 0 ? OT_LANES : OT_LOCKSTEP), OT_OK, NULL);
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve_fwd_sens(ode, st_vec(y0, 3), st_mat(p, 3, L), st_vec(t, NT), &sol),
        OT_OK, NULL);
    for (int64_t b = 0; b < L; b++) {
        ot_solution *fd = perturbed(ode, _i == 0 ? OT_LANES : OT_LOCKSTEP, st_vec(y0, 3),
                                    p + 3 * b, 3, t, NT, hrel);
        const double w = worst_vs_differences(sol, b, fd, p + 3 * b, 3, 3, NT, hrel);
        ck_assert_msg(w < 1e-5, "lane %d: %.3g from central differences", (int)b, w);
        ot_solution_free(fd);
    }
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* ---- Equalities ----------------------------------------------------------- */

static void assert_sens_equal(const ot_solution *a, int64_t ba, const ot_solution *b,
                              int64_t bb, int np)
{
    ck_assert(st_lane_equal(ot_solution_ys(a), ba, ot_solution_ys(b), bb));
    for (int j = 0; j < np; j++)
        ck_assert_msg(
            st_lane_equal(ot_solution_sens(a, j), ba, ot_solution_sens(b, j), bb),
            "sens %d of lanes %d and %d differ", j, (int)ba, (int)bb);
    st_assert_stats_equal(a, ba, b, bb);
}

/* The same J s + df/dp arithmetic in both modes: one lane of lockstep is
 * lanes mode bit for bit, states, sensitivities and counters. */
START_TEST(dfdp_one_lockstep_lane_is_lanes_mode_bit_for_bit)
{
    double p[4 * 3];
    seir_params(p, 3);
    ot_ode *lanes = seir_ode(1e-8, OT_LANES, 1, NULL);
    ot_ode *lock = seir_ode(1e-8, OT_LOCKSTEP, 1, NULL);
    for (int64_t b = 0; b < 3; b++) {
        ot_solution *x = NULL, *y = NULL;
        ck_assert_status(ot_solve_fwd_sens(lanes, st_vec(SEIR_Y0, 4),
                                           st_vec(p + 4 * b, 4), st_vec(SEIR_T, SEIR_NT),
                                           &x),
                         OT_OK, NULL);
        ck_assert_status(ot_solve_fwd_sens(lock, st_vec(SEIR_Y0, 4), st_vec(p + 4 * b, 4),
                                           st_vec(SEIR_T, SEIR_NT), &y),
                         OT_OK, NULL);
        assert_sens_equal(x, 0, y, 0, 4);
        ot_solution_free(x);
        ot_solution_free(y);
    }
    ot_ode_free(lanes);
    ot_ode_free(lock);
}
END_TEST

/* Loop 0: lanes mode, 1: lockstep in blocks of 4. 1 and 2 threads give the
 * same bits. */
START_TEST(dfdp_thread_count_changes_no_bit)
{
    enum { L = 16 };
    double p[4 * L];
    seir_params(p, L);
    ot_solution *sol[2] = {NULL, NULL};
    for (int th = 0; th < 2; th++) {
        ot_ode *ode = seir_ode(1e-8, _i == 0 ? OT_LANES : OT_LOCKSTEP, 1, NULL);
        ck_assert_status(ot_ode_set_threads(ode, th + 1), OT_OK, NULL);
        if (_i == 1)
            ck_assert_status(ot_ode_set_lockstep_block(ode, 4), OT_OK, NULL);
        ck_assert_status(ot_solve_fwd_sens(ode, st_vec(SEIR_Y0, 4), st_mat(p, 4, L),
                                           st_vec(SEIR_T, SEIR_NT), &sol[th]),
                         OT_OK, NULL);
        ot_ode_free(ode);
    }
    for (int64_t b = 0; b < L; b++)
        assert_sens_equal(sol[0], b, sol[1], b, 4);
    ot_solution_free(sol[0]);
    ot_solution_free(sol[1]);
}
END_TEST

/* Loop 0: lanes, 1: lockstep. df/dp replaces the 2 np rhs calls per
 * sensitivity evaluation: far fewer rhs calls in all (counted by the rhs). */
START_TEST(dfdp_saves_rhs_calls)
{
    enum { L = 4 };
    double p[4 * L];
    seir_params(p, L);
    int64_t calls[2] = {0, 0};
    for (int d = 0; d < 2; d++) {
        ot_ode *ode = seir_ode(1e-8, _i == 0 ? OT_LANES : OT_LOCKSTEP, d, &calls[d]);
        ot_solution *sol = NULL;
        ck_assert_status(ot_solve_fwd_sens(ode, st_vec(SEIR_Y0, 4), st_mat(p, 4, L),
                                           st_vec(SEIR_T, SEIR_NT), &sol),
                         OT_OK, NULL);
        ot_solution_free(sol);
        ot_ode_free(ode);
    }
    ck_assert_msg(calls[1] * 3 < calls[0], "rhs calls: %lld with df/dp, %lld without",
                  (long long)calls[1], (long long)calls[0]);
}
END_TEST

/* ---- What a wrong or missing derivative gets ------------------------------ */

static int dfdp_lane0_only(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)p, (void)u;
    const double *x = ot_view_col_f64(y, 0, 0);
    double *db = ot_view_mut_col_f64(d, 0, 0);
    db[0] = -x[0] * x[2], db[1] = x[0] * x[2];
    return 0;
}

static int jac_lane0_only(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    const double *x = ot_view_col_f64(y, 0, 0), *k = ot_view_col_f64(p, 0, 0);
    double *ci = ot_view_mut_col_f64(J, 2, 0);
    ci[0] = -k[0] * x[0], ci[1] = k[0] * x[0], ci[2] = -k[2], ci[3] = k[2];
    return 0;
}

/* Lane 2 (beta = 0.7 by seir_params) fails its df/dp: loop 0 returns -1,
 * loop 1 writes NaN. */
static int fail_how; /* 0: return -1, 1: write NaN */

static int dfdp_fails_lane2(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)u;
    const int how = fail_how;
    for (int64_t b = 0; how == 0 && b < ST_LANES(y); b++)
        if (ot_view_col_f64(p, b, 0)[0] == 0.7)
            return -1;
    const int rc = seir_dfdp(t, y, p, d, NULL);
    for (int64_t b = 0; b < ST_LANES(y); b++)
        if (ot_view_col_f64(p, b, 0)[0] == 0.7)
            ot_view_mut_col_f64(d, 0, b)[0] = NAN;
    return rc;
}

/* A lockstep df/dp or Jacobian written for lane 0 only stops the batch
 * naming lane 1, instead of zero derivatives in lanes 1..k. */
START_TEST(dfdp_written_for_one_lane_fails_in_lockstep)
{
    enum { L = 3 };
    double p[4 * L];
    seir_params(p, L);
    ot_ode *ode = seir_ode(1e-8, OT_LOCKSTEP, 1, NULL);
    if (_i == 0)
        ck_assert_status(ot_ode_set_dfdp(ode, dfdp_lane0_only), OT_OK, NULL);
    else
        ck_assert_status(ot_ode_set_jac(ode, jac_lane0_only), OT_OK, NULL);
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_fwd_sens(ode, st_vec(SEIR_Y0, 4), st_mat(p, 4, L),
                                       st_vec(SEIR_T, SEIR_NT), &sol),
                     OT_ERR_LANES_FAILED, NULL);
    for (int64_t b = 0; b < L; b++) {
        ck_assert_int_eq(ot_solution_lane_status(sol, b), OT_ERR_CALLBACK);
        const char *m = ot_solution_lane_message(sol, b);
        ck_assert_msg(strstr(m, _i == 0 ? "dfdp wrote nothing for lane 1"
                                        : "jac wrote nothing for lane 1") != NULL,
                      "message: %s", m);
    }
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* Loop (lanes, lockstep in blocks of 1) x (returns -1, writes NaN): lane 2
 * fails alone, naming df/dp; the others equal a solve without lane 2. */
START_TEST(dfdp_failure_fails_its_lane_alone)
{
    enum { L = 4 };
    const int how = _i % 2;
    double p[4 * L];
    seir_params(p, L);
    ck_assert(p[4 * 2] == 0.7);
    fail_how = how;
    ot_ode *ode = seir_ode(1e-8, _i < 2 ? OT_LANES : OT_LOCKSTEP, 1, NULL);
    ck_assert_status(ot_ode_set_dfdp(ode, dfdp_fails_lane2), OT_OK, NULL);
    if (_i >= 2)
        ck_assert_status(ot_ode_set_lockstep_block(ode, 1), OT_OK, NULL);
    ot_ode *good = seir_ode(1e-8, _i < 2 ? OT_LANES : OT_LOCKSTEP, 1, NULL);
    if (_i >= 2)
        ck_assert_status(ot_ode_set_lockstep_block(good, 1), OT_OK, NULL);
    ot_solution *sol = NULL, *ref = NULL;
    ck_assert_status(ot_solve_fwd_sens(ode, st_vec(SEIR_Y0, 4), st_mat(p, 4, L),
                                       st_vec(SEIR_T, SEIR_NT), &sol),
                     OT_ERR_LANES_FAILED, NULL);
    ck_assert_status(ot_solve_fwd_sens(good, st_vec(SEIR_Y0, 4), st_mat(p, 4, L),
                                       st_vec(SEIR_T, SEIR_NT), &ref),
                     OT_OK, NULL);
    ck_assert_int_eq(ot_solution_nfailed(sol), 1);
    ck_assert_int_eq(ot_solution_lane_status(sol, 2), OT_ERR_CALLBACK);
    const char *m = ot_solution_lane_message(sol, 2);
    ck_assert_msg(strstr(m, how == 0 ? "dfdp returned -1" : "dfdp wrote NaN") != NULL,
                  "message: %s", m);
    for (int64_t b = 0; b < L; b++)
        if (b != 2)
            assert_sens_equal(sol, b, ref, b, 4);
    ot_solution_free(sol);
    ot_solution_free(ref);
    ot_ode_free(ode);
    ot_ode_free(good);
}
END_TEST

/* df/dp without a Jacobian is refused, naming both; a dense solve ignores
 * df/dp (it has no sensitivities). */
START_TEST(dfdp_without_jacobian_is_refused)
{
    double p[4];
    seir_params(p, 1);
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 4, 4, seir_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_dfdp(ode, seir_dfdp), OT_OK, NULL);
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_fwd_sens(ode, st_vec(SEIR_Y0, 4), st_vec(p, 4),
                                       st_vec(SEIR_T, SEIR_NT), &sol),
                     OT_ERR_ARG, "ot_ode_set_jac");
    ck_assert_ptr_null(sol);
    ck_assert_status(ot_solve_dense(ode, st_vec(SEIR_Y0, 4), st_vec(p, 4),
                                    st_vec(SEIR_T, SEIR_NT), &sol),
                     OT_OK, NULL);
    ot_solution_free(sol);
    ck_assert_status(ot_ode_set_dfdp(NULL, seir_dfdp), OT_ERR_ARG, "ot_ode_set_dfdp");
    ot_ode_free(ode);
}
END_TEST

/* ---- Sensitivities to initial values (ot_ode_set_sens_initial) ------------ */

static int decay_dfdp(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *x = ot_view_col_f64(y, b, 0);
        double *c = ot_view_mut_col_f64(d, 0, b);
        c[0] = -x[0], c[1] = -2.0 * x[1];
    }
    return 0;
}

/* Loop (lanes, lockstep) x (difference quotients, J s with df/dp), with
 * an out function 3 y in the last two: decay y_r' = -(r + 1) k y_r has
 * sens(0) = dy/dk and sens(1 + r) = dy/dy0_r = e_r exp(-(r + 1) k t). */
START_TEST(sens_initial_decay_analytic)
{
    enum { L = 5, NT = 6 };
    const int lock = _i % 2, derivs = (_i / 2) % 2, out = _i >= 4;
    double k[L], y0[2 * L], t[NT];
    for (int64_t b = 0; b < L; b++) {
        k[b] = 0.2 + 0.15 * (double)b;
        y0[2 * b] = 1.0 + 0.1 * (double)b, y0[2 * b + 1] = 2.0;
    }
    for (int i = 0; i < NT; i++)
        t[i] = 0.5 * (i + 1);
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_jac(ode, st_decay_jac), OT_OK, NULL);
    if (derivs)
        ck_assert_status(ot_ode_set_dfdp(ode, decay_dfdp), OT_OK, NULL);
    if (out)
        ck_assert_status(ot_ode_set_out(ode, 2, triple_out), OT_OK, NULL);
    ck_assert_status(ot_ode_set_sens_initial(ode, 1), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-9), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-11), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, lock ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve_fwd_sens(ode, st_mat(y0, 2, L), st_mat(k, 1, L), st_vec(t, NT), &sol),
        OT_OK, NULL);
    ck_assert_int_eq(ot_solution_nsens(sol), 3);
    const double scale = out ? 3.0 : 1.0;
    for (int64_t b = 0; b < L; b++)
        for (int i = 0; i < NT; i++)
            for (int r = 0; r < 2; r++) {
                const double e = exp(-(r + 1) * k[b] * t[i]);
                const double dk = -(r + 1) * t[i] * y0[2 * b + r] * e * scale;
                const double gk = st_at(ot_solution_sens(sol, 0), r, i, b);
                ck_assert_msg(fabs(gk - dk) <= 1e-6 * fabs(dk),
                              "lane %d: dy%d/dk %.10g vs %.10g", (int)b, r, gk, dk);
                for (int q = 0; q < 2; q++) {
                    const double want = q == r ? e * scale : 0.0;
                    const double got = st_at(ot_solution_sens(sol, 1 + q), r, i, b);
                    ck_assert_msg(fabs(got - want) <= 1e-6 * (fabs(want) + 1e-3),
                                  "loop %d lane %d t %g: dy%d/dy0_%d %.10g vs %.10g", _i,
                                  (int)b, t[i], r, q, got, want);
                }
            }
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

static int decay1(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(f, b, 0)[0] = -ot_view_col_f64(y, b, 0)[0];
    return 0;
}

/* No parameters at all: sens(0) = dy/dy0 = exp(-t), in both modes; without
 * sens_initial the same solve is refused (nothing to differentiate). */
START_TEST(sens_initial_without_parameters)
{
    const double y0[3] = {1, 2, 3}, t[3] = {0.5, 1, 2};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, 0, decay1, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-9), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-11), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, _i ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve_fwd_sens(ode, st_mat(y0, 1, 3), ot_view_absent(), st_vec(t, 3), &sol),
        OT_ERR_ARG, "ot_ode_set_sens_initial");
    ck_assert_status(ot_ode_set_sens_initial(ode, 1), OT_OK, NULL);
    ck_assert_status(
        ot_solve_fwd_sens(ode, st_mat(y0, 1, 3), ot_view_absent(), st_vec(t, 3), &sol),
        OT_OK, NULL);
    for (int64_t b = 0; b < 3; b++)
        for (int i = 0; i < 3; i++)
            ck_assert(fabs(st_at(ot_solution_sens(sol, 0), 0, i, b) - exp(-t[i])) <=
                      1e-7);
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* The same derivative two ways: y0 through init as parameters (u, v), or
 * sens_initial; SEIR in both modes, with df/dp. */
static int seir_init(ot_view p, ot_view_mut y0, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(p); b++) {
        const double *k = ot_view_col_f64(p, b, 0);
        double *y = ot_view_mut_col_f64(y0, b, 0);
        y[0] = k[4], y[1] = k[5], y[2] = 0, y[3] = 0;
    }
    return 0;
}

static int seir6_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    return seir_rhs(t, y, p, f, u); /* reads p[0..3] of each lane's 6 */
}

START_TEST(sens_initial_equals_init_parameters)
{
    enum { L = 3 };
    double p[4 * L], p6[6 * L], y0[4 * L];
    seir_params(p, L);
    for (int64_t b = 0; b < L; b++) {
        memcpy(p6 + 6 * b, p + 4 * b, 4 * sizeof *p);
        p6[6 * b + 4] = SEIR_Y0[0], p6[6 * b + 5] = SEIR_Y0[1];
        memcpy(y0 + 4 * b, SEIR_Y0, sizeof SEIR_Y0);
    }
    const ot_mode mode = _i ? OT_LOCKSTEP : OT_LANES;
    ot_ode *a = seir_ode(1e-10, mode, 1, NULL), *b6 = NULL;
    ck_assert_status(ot_ode_set_sens_initial(a, 1), OT_OK, NULL);
    ck_assert_status(ot_ode_new(&b6, 4, 6, seir6_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_init(b6, seir_init), OT_OK, NULL);
    ck_assert_status(ot_ode_set_jac(b6, seir_jac), OT_OK, NULL);
    ck_assert_status(ot_ode_set_dfdp(b6, seir_dfdp), OT_OK, NULL); /* columns 4, 5: 0 */
    ck_assert_status(ot_ode_set_rtol(b6, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(b6, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(b6, mode), OT_OK, NULL);
    ot_solution *x = NULL, *y = NULL;
    ck_assert_status(ot_solve_fwd_sens(a, st_mat(y0, 4, L), st_mat(p, 4, L),
                                       st_vec(SEIR_T, SEIR_NT), &x),
                     OT_OK, NULL);
    ck_assert_status(ot_solve_fwd_sens(b6, ot_view_absent(), st_mat(p6, 6, L),
                                       st_vec(SEIR_T, SEIR_NT), &y),
                     OT_OK, NULL);
    ck_assert_int_eq(ot_solution_nsens(x), 8);
    for (int64_t lane = 0; lane < L; lane++)
        for (int q = 0; q < 2; q++) /* d/dS0 and d/dE0 */
            for (int r = 0; r < 4; r++) {
                double big = 0, gap = 0;
                for (int i = 0; i < SEIR_NT; i++) {
                    const double u = st_at(ot_solution_sens(x, 4 + q), r, i, lane);
                    const double v = st_at(ot_solution_sens(y, 4 + q), r, i, lane);
                    big = fmax(big, fabs(v));
                    gap = fmax(gap, fabs(u - v));
                }
                ck_assert_msg(gap <= 1e-5 * big + 1e-12,
                              "lane %d y%d/y0_%d: %.3g of %.3g", (int)lane, r, q, gap,
                              big);
            }
    ot_solution_free(x);
    ot_solution_free(y);
    ot_ode_free(a);
    ot_ode_free(b6);
}
END_TEST

Suite *sens_derivs_suite(void)
{
    Suite *s = suite_create("sens_derivs");
    TCase *tc = ot_test_tcase(s, "against references", 120);
    tcase_add_loop_test(tc, dfdp_seir_matches_central_differences, 0, 2);
    tcase_add_loop_test(tc, dfdp_robertson_rates_match_central_differences, 0, 2);
    tc = ot_test_tcase(s, "equalities", 60);
    tcase_add_test(tc, dfdp_one_lockstep_lane_is_lanes_mode_bit_for_bit);
    tcase_add_loop_test(tc, dfdp_thread_count_changes_no_bit, 0, 2);
    tcase_add_loop_test(tc, dfdp_saves_rhs_calls, 0, 2);
    tc = ot_test_tcase(s, "failures", 60);
    tcase_add_loop_test(tc, dfdp_written_for_one_lane_fails_in_lockstep, 0, 2);
    tcase_add_loop_test(tc, dfdp_failure_fails_its_lane_alone, 0, 4);
    tcase_add_test(tc, dfdp_without_jacobian_is_refused);
    tc = ot_test_tcase(s, "initial values", 60);
    tcase_add_loop_test(tc, sens_initial_decay_analytic, 0, 6);
    tcase_add_loop_test(tc, sens_initial_without_parameters, 0, 2);
    tcase_add_loop_test(tc, sens_initial_equals_init_parameters, 0, 2);
    return s;
}

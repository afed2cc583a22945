/* Check suite: events that pile up (issue 23, item 1). The README's
 * bouncing ball solved past its accumulation time returned OT_OK with the
 * ball 4.9 m below the floor: once the bounces are shorter than the steps,
 * a restart leaves it just past the floor and no later sign change is
 * seen. Such a lane now fails saying so, in every method and both modes;
 * a ball modelled at rest solves on; a threshold a lane stays beyond, or
 * comes back from, raises no alarm. */
#include <math.h>

#include "solve_common.h"

static const double E = 0.5, H0 = 1.0;

/* The ball's handler: v = -e v; with p[1] > 0, a ball slower than p[1]
 * after the bounce comes to rest (h = 0, v = 0, gravity p[2] off). */
static int bounce(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p, void *u)
{
    (void)t, (void)root, (void)lane, (void)u;
    double *z = ot_view_mut_col_f64(y, 0, 0), *q = ot_view_mut_col_f64(p, 0, 0);
    z[1] = -q[0] * z[1];
    if (q[1] > 0 && fabs(z[1]) < q[1])
        z[0] = z[1] = q[2] = 0;
    return 0;
}

/* h' = v, v' = -g p[2] (p[2]: 1 falling, 0 at rest). */
static int ball(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        double *F = ot_view_mut_col_f64(f, b, 0);
        F[0] = ot_view_col_f64(y, b, 0)[1];
        F[1] = -ST_G * ot_view_col_f64(p, b, 0)[2];
    }
    return 0;
}

static int height(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0];
    return 0;
}

/* The bounces accumulate at t_inf = t_1 (1 + 2 e / (1 - e)), t_1 the first
 * fall's time. */
static double t_inf(void) { return sqrt(2 * H0 / ST_G) * (1 + 2 * E / (1 - E)); }

static ot_ode *ball_ode(int method, int mode)
{
    ot_ode *ode = NULL;
    const int falling = OT_ROOT_FALLING, handle = OT_EVENT_HANDLE;
    ck_assert_status(ot_ode_new(&ode, 2, 3, ball, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, (ot_method)method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, (ot_mode)mode), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 1, height), OT_OK, NULL);
    ck_assert_status(ot_ode_set_root_directions(ode, &falling), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(ode, &handle), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, bounce), OT_OK, NULL);
    ck_assert_status(ot_ode_set_max_events(ode, 100000), OT_OK, NULL);
    return ode;
}

static const int METHODS[4] = {OT_BDF, OT_ADAMS, OT_ERK_DP54, OT_ESDIRK43};

/* Two balls (the README's, e = 0.5), every method, both modes: each fails
 * with a message that says it went through the floor or that its events
 * pile up; before that, its outputs are the analytic ones. */
START_TEST(the_readme_ball_past_its_accumulation_time_fails_instead_of_falling_through)
{
    ot_ode *ode = ball_ode(METHODS[_i / 2], _i % 2 ? OT_LOCKSTEP : OT_LANES);
    const double y0[4] = {H0, 0, H0, 0}, p[6] = {E, 0, 1, E, 0, 1};
    const double t[3] = {0.25, 1.0, t_inf() + 1};
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_mat(y0, 2, 2), st_mat(p, 3, 2), st_vec(t, 3), &s),
        OT_ERR_LANES_FAILED, "2 of 2 lanes failed");
    for (int64_t b = 0; b < 2; b++) {
        const char *msg = ot_solution_lane_message(s, b);
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_ERR_SOLVER);
        ck_assert_msg(strstr(msg, "surface") || strstr(msg, "pile up"), "%s", msg);
        ck_assert_int_lt(ot_solution_lane_count(s, b), 3); /* no ball below the floor */
        ck_assert_int_ge(ot_solution_lane_count(s, b), 1);
        ck_assert_double_eq_tol(st_y(s, 0, 0, b), H0 - 0.5 * ST_G * 0.25 * 0.25, 1e-5);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* Modelled at rest (a bounce slower than 0.05 m/s stops the ball and its
 * gravity): it solves past t_inf, at h = 0 on the floor. */
START_TEST(a_ball_modelled_at_rest_solves_past_the_accumulation_time)
{
    ot_ode *ode = ball_ode(METHODS[_i / 2], _i % 2 ? OT_LOCKSTEP : OT_LANES);
    const double y0[4] = {H0, 0, H0, 0}, p[6] = {E, 0.05, 1, E, 0.05, 1};
    const double t[3] = {0.25, 1.0, t_inf() + 1};
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_mat(y0, 2, 2), st_mat(p, 3, 2), st_vec(t, 3), &s), OT_OK,
        NULL);
    for (int64_t b = 0; b < 2; b++) {
        ck_assert_int_eq(ot_solution_lane_count(s, b), 3);
        ck_assert_double_eq_tol(st_y(s, 0, 2, b), 0, 1e-12);
        ck_assert_int_lt(ot_solution_lane_event_count(s, b), 40);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* y' = p[0] from 0, a rising root at y = 1 whose handler sets p[0] to
 * p[1]: 0.5 (the lane stays beyond the threshold, moving on), 0 (it stops
 * there) or -0.5 (it comes back): no alarm, the analytic y. */
static int drift(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)y, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(f, b, 0)[0] = ot_view_col_f64(p, b, 0)[0];
    return 0;
}

static int above_one(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0] - 1;
    return 0;
}

static int switch_rate(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                       void *u)
{
    (void)t, (void)root, (void)lane, (void)y, (void)u;
    double *q = ot_view_mut_col_f64(p, 0, 0);
    q[0] = q[1];
    return 0;
}

START_TEST(a_threshold_a_lane_stays_beyond_or_comes_back_from_raises_no_alarm)
{
    ot_ode *ode = NULL;
    const int rising = OT_ROOT_RISING, handle = OT_EVENT_HANDLE;
    ck_assert_status(ot_ode_new(&ode, 1, 2, drift, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, _i ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 1, above_one), OT_OK, NULL);
    ck_assert_status(ot_ode_set_root_directions(ode, &rising), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(ode, &handle), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, switch_rate), OT_OK, NULL);
    const double y0[1] = {0}, p[6] = {1, 0.5, 1, 0, 1, -0.5}, t[4] = {0.5, 2, 3, 4};
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 1), st_mat(p, 2, 3), st_vec(t, 4), &s), OT_OK,
        NULL);
    for (int64_t b = 0; b < 3; b++) {
        const double after = p[2 * b + 1];
        ck_assert_int_eq(ot_solution_lane_event_count(s, b), 1);
        for (int i = 1; i < 4; i++)
            ck_assert_double_eq_tol(st_y(s, 0, i, b), 1 + after * (t[i] - 1), 1e-6);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

Suite *zeno_suite(void)
{
    Suite *s = suite_create("zeno");
    TCase *tc = ot_test_tcase(s, "events that pile up", 60);
    tcase_add_loop_test(
        tc, the_readme_ball_past_its_accumulation_time_fails_instead_of_falling_through,
        0, 8);
    tcase_add_loop_test(tc, a_ball_modelled_at_rest_solves_past_the_accumulation_time, 0,
                        8);
    tcase_add_loop_test(
        tc, a_threshold_a_lane_stays_beyond_or_comes_back_from_raises_no_alarm, 0, 2);
    return s;
}

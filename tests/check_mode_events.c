/* Issue 22, item 5: a lane gets the same events in lanes mode and in
 * lockstep, for every action, with per-lane output times, a root at an
 * output time, a root at t0 and scheduled stops; and (issue 27) in the
 * kernel solver, whose roots are its own (kernel/roots.c). Each case is
 * solved in every mode (_i % NMODES: lanes, lockstep, the kernel's Rodas5P
 * and Vern7) against its analytic event list. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "solve_common.h"
#include "suites.h"

/* ---- Models --------------------------------------------------------------- */

/* y' = 1 (n = 1, np = 1 unused): y = y0 + t. */
static int ramp_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(f, b, 0)[0] = 1.0;
    return 0;
}

/* g = y - 2: the ramp from 0 crosses it at t = 2. */
static int at_two(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0] - 2.0;
    return 0;
}

/* g = t - 1: a root exactly at the output time 1. */
static int at_one(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = t - 1.0;
    return 0;
}

/* Handled roots subtract 1.5 from y (the ramp crosses 2 again 1.5 later);
 * scheduled stops add p[0]. */
static int handler(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                   void *u)
{
    (void)t, (void)lane, (void)u;
    double *Y = ot_view_mut_col_f64(y, 0, 0);
    Y[0] += root < 0 ? ot_view_mut_col_f64(p, 0, 0)[0] : -1.5;
    return 0;
}

enum { NMODES = 4 };

/* Mode m of NMODES: lanes mode (BDF), lockstep, the kernel's Rodas5P, its
 * Vern7 (whose dense output has stages of its own). */
static void set_mode(ot_ode *ode, int m)
{
    static const ot_method methods[NMODES] = {OT_BDF, OT_BDF, OT_RODAS5P, OT_VERN7};
    ck_assert_status(ot_ode_set_mode(ode, m == 1 ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, methods[m]), OT_OK, NULL);
}

static ot_ode *ramp_ode(int mode, ot_root_fn root, int action)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, 1, ramp_rhs, NULL), OT_OK, NULL);
    set_mode(ode, mode);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, handler), OT_OK, NULL);
    if (root) {
        ck_assert_status(ot_ode_set_roots(ode, 1, root), OT_OK, NULL);
        ck_assert_status(ot_ode_set_event_actions(ode, &action), OT_OK, NULL);
    }
    return ode;
}

/* Lane b's event count and, for each, its time within tol of want[k]. */
static void assert_events(const ot_solution *s, int64_t b, int64_t count,
                          const double *want, double tol)
{
    ck_assert_msg(ot_solution_lane_event_count(s, b) == count,
                  "lane %lld: %lld events, expected %lld", (long long)b,
                  (long long)ot_solution_lane_event_count(s, b), (long long)count);
    const ot_tensor *times = ot_solution_event_tensor(s, OT_EVENT_TIMES);
    for (int64_t k = 0; k < count; k++)
        ck_assert_msg(fabs(st_at(times, k, b, 0) - want[k]) <= tol,
                      "lane %lld event %lld at %.17g, expected %.17g", (long long)b,
                      (long long)k, st_at(times, k, b, 0), want[k]);
}

/* ---- Per-lane output times -------------------------------------------------- */

/* y' = 1 from 0, root y = 2. Lane 0 asks for {0, 1}, lane 1 for {0, 3}: lane
 * 0 never reaches the root (no event, no handler, not stopped), lane 1
 * meets it at t = 2. Loop: the mode, then the action (stop, record,
 * handle). Lockstep used to record lane 0's event at t = 2, run its
 * handler and make a STOP root its lane_root. */
START_TEST(a_lane_has_no_events_past_its_own_last_output)
{
    const int mode = _i % NMODES, action = _i / NMODES;
    const double nan = NAN;
    double t[4] = {0, 1, 0, 3}, y0 = 0, p[2] = {0, 0};
    ot_ode *ode = ramp_ode(mode, at_two, action);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(&y0, 1), st_mat(p, 1, 2), st_mat(t, 2, 2), &s), OT_OK,
        NULL);
    int root = 7;
    double when = nan;
    ck_assert_int_eq(ot_solution_lane_status(s, 0), OT_OK);
    ck_assert_int_eq(ot_solution_lane_count(s, 0), 2);
    ck_assert_double_eq_tol(st_y(s, 0, 1, 0), 1.0, 1e-9);
    assert_events(s, 0, 0, NULL, 0);
    ot_solution_lane_root(s, 0, &root, &when);
    ck_assert_int_eq(root, -1);
    ot_lane_stats ls;
    ot_solution_lane_stats(s, 0, &ls);
    ck_assert(ls.final_time == 1.0);
    /* lane 1: the root at 2; a STOP ends it there, before its output 3 */
    const double two = 2.0;
    ck_assert_int_eq(ot_solution_lane_status(s, 1), OT_OK);
    assert_events(s, 1, 1, &two, 1e-8);
    ot_solution_lane_root(s, 1, &root, &when);
    if (action == OT_EVENT_STOP) {
        ck_assert_int_eq(root, 0);
        ck_assert_double_eq_tol(when, 2.0, 1e-8);
        ck_assert_int_eq(ot_solution_lane_count(s, 1), 1);
    } else {
        ck_assert_int_eq(root, -1);
        ck_assert_int_eq(ot_solution_lane_count(s, 1), 2);
        ck_assert_double_eq_tol(st_y(s, 0, 1, 1), action == OT_EVENT_HANDLE ? 1.5 : 3.0,
                                1e-8);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- A root at an output time, a root at t0 ------------------------------ */

/* g = t - 1 with t_eval {0, 1, 2}: one event at t = 1 for each of 3 lanes,
 * recorded once (lockstep recorded it until max_events, then failed every
 * lane; with a large max_events it hung), the output at 1 shows the state
 * after it. Loop: the mode, then record or handle. */
START_TEST(a_root_at_an_output_time_is_taken_once)
{
    const int mode = _i % NMODES,
              action = _i / NMODES ? OT_EVENT_HANDLE : OT_EVENT_RECORD;
    double t[3] = {0, 1, 2}, y0[3] = {0, 0.5, 1}, p = 0;
    ot_ode *ode = ramp_ode(mode, at_one, action);
    ck_assert_status(ot_ode_set_max_events(ode, 1000000), OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_mat(y0, 1, 3), st_vec(&p, 1), st_vec(t, 3), &s), OT_OK,
        NULL);
    const double one = 1.0, drop = action == OT_EVENT_HANDLE ? 1.5 : 0.0;
    for (int64_t b = 0; b < 3; b++) {
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
        ck_assert_int_eq(ot_solution_lane_count(s, b), 3);
        assert_events(s, b, 1, &one, 1e-9);
        ck_assert_double_eq_tol(st_y(s, 0, 1, b), y0[b] + 1.0 - drop, 1e-8);
        ck_assert_double_eq_tol(st_y(s, 0, 2, b), y0[b] + 2.0 - drop, 1e-8);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* g = y with y0 = 0 for lane 0 (a root at t0, which SUNDIALS does not
 * report: g only leaves zero) and y0 = -0.5 for lane 1 (a root at 0.5):
 * both modes give lane 0 no event and lane 1 one at 0.5 (handled: y drops
 * to -1.5, which is back at zero only after the last output, 1.9). Loop:
 * the mode, then the action. */
START_TEST(a_root_at_t0_is_no_event_in_either_mode)
{
    const int mode = _i % NMODES, action = _i / NMODES;
    double t[2] = {0, 1.9}, y0[2] = {0, -0.5}, p = 0;
    ot_ode *ode = ramp_ode(mode, st_first_state_root, action);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_mat(y0, 1, 2), st_vec(&p, 1), st_vec(t, 2), &s), OT_OK,
        NULL);
    const double half = 0.5;
    ck_assert_int_eq(ot_solution_lane_status(s, 0), OT_OK);
    ck_assert_int_eq(ot_solution_lane_count(s, 0), 2);
    assert_events(s, 0, 0, NULL, 0);
    ck_assert_double_eq_tol(st_y(s, 0, 1, 0), 1.9, 1e-8);
    assert_events(s, 1, 1, &half, 1e-8);
    ck_assert_int_eq(ot_solution_lane_count(s, 1), action == OT_EVENT_STOP ? 1 : 2);
    if (action != OT_EVENT_STOP)
        ck_assert_double_eq_tol(st_y(s, 0, 1, 1), action == OT_EVENT_HANDLE ? -0.1 : 1.4,
                                1e-8);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- Scheduled stops ------------------------------------------------------ */

/* Doses of p[0] = 1 into the ramp. Lane 0: times {0, 1, 2}, stops {0, 1.5,
 * 5}; lane 1: times {0, 1, 2, 3, 4, 6}, stops {0.5, 3, 5}. Lane 0's stop at
 * 5 is past its last output and is never taken (lockstep took it while its
 * block went on to lane 1's 6). Outputs: y0 + t + the doses given at or
 * before t. */
START_TEST(stops_give_the_same_events_in_both_modes)
{
    const int mode = _i;
    const double nan = NAN;
    double t[12] = {0, 1, 2, nan, nan, nan, 0, 1, 2, 3, 4, 6};
    double stops[6] = {0, 1.5, 5, 0.5, 3, 5}, y0 = 0, p[2] = {1, 1};
    ot_ode *ode = ramp_ode(mode, NULL, 0);
    ot_solve_inputs in =
        ot_solve_inputs_make(st_vec(&y0, 1), st_mat(p, 1, 2), st_mat(t, 6, 2));
    in.stops = st_mat(stops, 3, 2);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_OK, NULL);
    const double want0[2] = {0, 1.5}, want1[3] = {0.5, 3, 5};
    assert_events(s, 0, 2, want0, 0);
    assert_events(s, 1, 3, want1, 0);
    for (int64_t b = 0; b < 2; b++) {
        const int64_t nt = b ? 6 : 3;
        ck_assert_int_eq(ot_solution_lane_count(s, b), nt);
        for (int64_t i = 0; i < nt; i++) {
            const double ti = t[6 * b + i];
            double doses = 0;
            for (int k = 0; k < 3; k++)
                doses += stops[3 * b + k] <= ti ? 1.0 : 0.0;
            ck_assert_double_eq_tol(st_y(s, 0, i, b), ti + doses, 1e-8);
        }
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- Bouncing balls with their own output times ---------------------------- */

/* 64 balls dropped from 1 with restitution 0.8, each lane's output times
 * ending at its own 0.6 + 0.04 b (before the balls' endless bouncing at
 * 0.9 * 0.4516 * 9 = 4.06): each lane has exactly the bounces before its end,
 * at their analytic times, in both modes (lockstep gave them 1,693 to 4,531
 * extra events: those of the block's longest lane). */
START_TEST(bouncing_balls_bounce_only_within_their_own_times)
{
    enum { NB = 64, NT = 3 };
    static const int falling = OT_ROOT_FALLING, handle = OT_EVENT_HANDLE;
    double y0[2] = {1, 0}, e[NB], t[NT * NB];
    for (int b = 0; b < NB; b++) {
        e[b] = 0.8;
        const double end = 0.6 + 0.04 * b;
        t[NT * b] = 0;
        t[NT * b + 1] = end / 2;
        t[NT * b + 2] = end;
    }
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_ball_rhs, NULL), OT_OK, NULL);
    set_mode(ode, _i);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 1, st_first_state_root), OT_OK, NULL);
    ck_assert_status(ot_ode_set_root_directions(ode, &falling), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(ode, &handle), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, st_ball_bounce), OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_mat(e, 1, NB), st_mat(t, NT, NB), &s),
        OT_OK, NULL);
    const double t0 = sqrt(2.0 / ST_G);
    for (int b = 0; b < NB; b++) {
        double want[64];
        int64_t count = 0;
        for (double tk = t0, ek = e[b]; tk < t[NT * b + 2] && count < 64; ek *= e[b]) {
            want[count++] = tk;
            tk += 2 * ek * ST_G * t0 / ST_G;
        }
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
        assert_events(s, b, count, want, 1e-7);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

Suite *mode_events_suite(void)
{
    Suite *s = suite_create("mode_events");
    TCase *tc = ot_test_tcase(s, "same events in both modes", 60);
    tcase_add_loop_test(tc, a_lane_has_no_events_past_its_own_last_output, 0, 3 * NMODES);
    tcase_add_loop_test(tc, a_root_at_an_output_time_is_taken_once, 0, 2 * NMODES);
    tcase_add_loop_test(tc, a_root_at_t0_is_no_event_in_either_mode, 0, 3 * NMODES);
    tcase_add_loop_test(tc, stops_give_the_same_events_in_both_modes, 0, NMODES);
    tcase_add_loop_test(tc, bouncing_balls_bounce_only_within_their_own_times, 0, NMODES);
    return s;
}

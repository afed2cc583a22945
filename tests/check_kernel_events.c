/* The kernel solver's roots and events (issue 27; kernel/roots.c): every
 * kernel method finds crossings in the directions asked for at their
 * analytic times, records, handles and stops as the other modes do
 * (check_mode_events.c runs the shared cases in every mode), a lane group's
 * events are a lane's own bit for bit, and a failing root function or an
 * event past max_events fails its lane alone. */
#include <math.h>
#include <string.h>

#include "solve_common.h"
#include "suites.h"

static const int METHODS[] = {OT_ROS23, OT_RODAS4, OT_RODAS5P, OT_TSIT5, OT_VERN7};
static const double PI = 3.14159265358979323846;
enum { NMETHODS = 5 };

/* g0 = sin t - p0 (rising at asin p0 + 2 pi k, falling at pi - asin p0 +
 * 2 pi k), g1 = cos t (zero at pi/2 + pi k). Lane p1 > 0 fails (returns
 * -1) once t > p1. */
static int circle_roots(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *Y = ot_view_col_f64(y, b, 0), *P = ot_view_col_f64(p, b, 0);
        if (P[1] > 0 && t > P[1])
            return -1;
        double *G = ot_view_mut_col_f64(g, b, 0);
        G[0] = Y[0] - P[0];
        G[1] = Y[1];
    }
    return 0;
}

/* The circle (st_sine_rhs: y = (sin t, cos t) from (0, 1)) with roots (directions dir,
 * actions record) for method m. */
static ot_ode *circle_ode(int method, const int *dir, double rtol)
{
    static const int record[2] = {OT_EVENT_RECORD, OT_EVENT_RECORD};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 2, st_sine_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, (ot_method)method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_autonomous(ode, 1), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, rtol), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, rtol * 1e-2), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 2, circle_roots), OT_OK, NULL);
    ck_assert_status(ot_ode_set_root_directions(ode, dir), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(ode, record), OT_OK, NULL);
    return ode;
}

/* Over t in [0, 4 pi + 0.1], lane b with p0 = 0.1 b: g0's crossings in its
 * direction and g1's, in time order, recorded with their root index; the
 * outputs untouched by the recording (sin and cos at the times). Loop:
 * method, then g0's direction (rising, falling, both). */
START_TEST(roots_fire_in_their_directions_at_their_analytic_times)
{
    enum { NB = 6, NT = 5 };
    const int method = METHODS[_i % NMETHODS], d0 = _i / NMETHODS - 1;
    const int dir[2] = {d0, OT_ROOT_BOTH};
    /* ros23 is order 2: its dense output is too, at a looser tolerance. */
    const double rtol = method == OT_ROS23 ? 1e-7 : 1e-9,
                 ttol = method == OT_ROS23 ? 1e-4 : 1e-6;
    double p[2 * NB], y0[2] = {0, 1}, t[NT];
    for (int b = 0; b < NB; b++) {
        p[2 * b] = 0.1 * b;
        p[2 * b + 1] = -1; /* never fails */
    }
    for (int i = 0; i < NT; i++)
        t[i] = (4 * PI + 0.1) * i / (NT - 1);
    ot_ode *ode = circle_ode(method, dir, rtol);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_mat(p, 2, NB), st_vec(t, NT), &s), OT_OK,
        NULL);
    const ot_tensor *times = ot_solution_event_tensor(s, OT_EVENT_TIMES),
                    *roots = ot_solution_event_tensor(s, OT_EVENT_ROOTS);
    for (int b = 0; b < NB; b++) {
        /* The analytic list, sorted: g0's crossings then g1's, merged. */
        double want[16];
        int which[16], m = 0;
        const double a = asin(p[2 * b]);
        const double end = t[NT - 1];
        for (int k = 0; k < 3; k++) {
            const double up = a + 2 * PI * k, down = PI - a + 2 * PI * k;
            if (d0 >= 0 && up > 0 && up <= end) {
                want[m] = up;
                which[m++] = 0;
            }
            if (d0 <= 0 && down <= end) {
                want[m] = down;
                which[m++] = 0;
            }
        }
        for (int k = 0; PI / 2 + PI * k <= end; k++) {
            want[m] = PI / 2 + PI * k;
            which[m++] = 1;
        }
        for (int x = 1; x < m; x++) /* insertion sort by time */
            for (int y = x; y > 0 && want[y] < want[y - 1]; y--) {
                const double tw = want[y];
                const int iw = which[y];
                want[y] = want[y - 1];
                want[y - 1] = tw;
                which[y] = which[y - 1];
                which[y - 1] = iw;
            }
        /* Lane 0's g0 starts at zero (sin 0 - 0): inactive at t0, no event
         * there (the list starts after 0). */
        ck_assert_msg(ot_solution_lane_event_count(s, b) == m,
                      "method %d dir %d lane %d: %lld events, expected %d", method, d0, b,
                      (long long)ot_solution_lane_event_count(s, b), m);
        for (int k = 0; k < m; k++) {
            ck_assert_msg(fabs(st_at(times, k, b, 0) - want[k]) <= ttol,
                          "method %d dir %d lane %d event %d at %.12g, expected %.12g",
                          method, d0, b, k, st_at(times, k, b, 0), want[k]);
            ck_assert_int_eq((int)st_at(roots, k, b, 0), which[k]);
        }
        for (int i = 0; i < NT; i++) /* 100 units; ros23's order 2, 4000 */
            ck_assert_double_eq_tol(st_y(s, 0, i, b), sin(t[i]),
                                    (method == OT_ROS23 ? 4000 : 100) * rtol);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- Groups ---------------------------------------------------------------- */

/* Balls with their own restitution (0.8 .. 0.895: the bounces' Zeno
 * point, t0 (1 + e) / (1 - e), lies past 4), handled bounces to t = 2, in
 * lane groups of `group` lanes on `threads` threads. */
static ot_solution *balls(int method, int group, int threads)
{
    enum { NB = 20, NT = 9 };
    static const int falling = OT_ROOT_FALLING, handle = OT_EVENT_HANDLE;
    double y0[2] = {1, 0}, e[NB], t[NT];
    for (int b = 0; b < NB; b++)
        e[b] = 0.8 + 0.005 * b;
    for (int i = 0; i < NT; i++)
        t[i] = 0.25 * i;
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_ball_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, (ot_method)method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_autonomous(ode, 1), OT_OK, NULL);
    ck_assert_status(ot_ode_set_lane_group(ode, group), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, threads), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 1, st_first_state_root), OT_OK, NULL);
    ck_assert_status(ot_ode_set_root_directions(ode, &falling), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(ode, &handle), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, st_ball_bounce), OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_mat(e, 1, NB), st_vec(t, NT), &s), OT_OK,
        NULL);
    /* The bounces at their analytic times: t0 = sqrt(2 / g), then each
     * flight 2 e^k t0 long. */
    const double t0 = sqrt(2.0 / ST_G);
    const ot_tensor *times = ot_solution_event_tensor(s, OT_EVENT_TIMES);
    for (int b = 0; b < NB; b++) {
        int64_t k = 0;
        double tk = t0, ek = e[b];
        for (; tk < t[NT - 1]; tk += 2 * ek * t0, ek *= e[b], k++)
            ck_assert_msg(fabs(st_at(times, k, b, 0) - tk) <= 1e-7,
                          "method %d lane %d bounce %lld at %.12g, expected %.12g",
                          method, b, (long long)k, st_at(times, k, b, 0), tk);
        ck_assert_int_eq(ot_solution_lane_event_count(s, b), k);
    }
    ot_ode_free(ode);
    return s;
}

/* Whether two tensors hold the same shape and bytes (compact, host). */
static int same_tensor(const ot_tensor *a, const ot_tensor *b)
{
    const ot_layout *la = ot_tensor_layout(a), *lb = ot_tensor_layout(b);
    size_t bytes = sizeof(double);
    if (la->ndim != lb->ndim)
        return 0;
    for (int d = 0; d < la->ndim; d++) {
        if (la->shape[d] != lb->shape[d])
            return 0;
        bytes *= (size_t)la->shape[d];
    }
    return memcmp(la->data, lb->data, bytes) == 0;
}

/* A lane's events and outputs do not depend on its group or thread. */
START_TEST(a_groups_events_are_each_lanes_own_bit_for_bit)
{
    const int method = METHODS[_i];
    ot_solution *one = balls(method, 1, 1), *grp = balls(method, 8, 1),
                *two = balls(method, 8, 2);
    ck_assert(same_tensor(ot_solution_ys(one), ot_solution_ys(grp)));
    ck_assert(same_tensor(ot_solution_ys(one), ot_solution_ys(two)));
    for (int w = OT_EVENT_TIMES; w <= OT_EVENT_AFTER; w++) {
        ck_assert(same_tensor(ot_solution_event_tensor(one, w),
                              ot_solution_event_tensor(grp, w)));
        ck_assert(same_tensor(ot_solution_event_tensor(one, w),
                              ot_solution_event_tensor(two, w)));
    }
    for (int64_t b = 0; b < 20; b++) {
        st_assert_stats_equal(one, b, grp, b);
        st_assert_stats_equal(one, b, two, b);
    }
    ot_solution_free(one);
    ot_solution_free(grp);
    ot_solution_free(two);
}
END_TEST

/* ---- Lanes failing alone ----------------------------------------------------- */

/* Lane 2's root function fails at t > 1; lane 4 runs to 4 pi + 0.1 and
 * meets 8 crossings where max_events allows 4; the others, to 2 pi + 0.1,
 * finish with their 4 (pi/6, pi/2, 5 pi/6, 3 pi/2) and every output. */
START_TEST(a_failing_root_function_or_too_many_events_fail_their_lane_alone)
{
    enum { NB = 5, NT = 3 };
    const int dir[2] = {OT_ROOT_BOTH, OT_ROOT_BOTH};
    double p[2 * NB], y0[2] = {0, 1}, t[NT * NB];
    for (int b = 0; b < NB; b++) {
        p[2 * b] = 0.5;
        p[2 * b + 1] = b == 2 ? 1.0 : -1;
        t[NT * b] = 0;
        t[NT * b + 1] = 1.5;
        t[NT * b + 2] = (b == 4 ? 4 : 2) * PI + 0.1;
    }
    for (int k = 0; k < NMETHODS; k++) {
        ot_ode *ode = circle_ode(METHODS[k], dir, 1e-8);
        ck_assert_status(ot_ode_set_max_events(ode, 4), OT_OK, NULL);
        ot_solution *s = NULL;
        ck_assert_status(
            ot_solve_dense(ode, st_vec(y0, 2), st_mat(p, 2, NB), st_mat(t, NT, NB), &s),
            OT_ERR_LANES_FAILED, NULL);
        for (int b = 0; b < NB; b++) {
            const int want = b == 2 ? OT_ERR_CALLBACK : b == 4 ? OT_ERR_SOLVER : OT_OK;
            ck_assert_msg(ot_solution_lane_status(s, b) == want,
                          "method %d lane %d: %s (%s)", METHODS[k], b,
                          ot_status_name(ot_solution_lane_status(s, b)),
                          ot_solution_lane_message(s, b));
        }
        ck_assert_ptr_nonnull(strstr(ot_solution_lane_message(s, 2), "root"));
        ck_assert_ptr_nonnull(strstr(ot_solution_lane_message(s, 4), "max_events"));
        /* Lane 2 kept its outputs before the failure (t = 0, maybe not 1.5:
         * the root function is called past 1 before that output is made). */
        ck_assert_int_ge(ot_solution_lane_count(s, 2), 1);
        ck_assert_double_eq_tol(st_y(s, 0, 0, 2), 0.0, 1e-12);
        ck_assert_int_eq(ot_solution_lane_event_count(s, 4), 4);
        for (int b = 0; b < 4; b += b == 1 ? 2 : 1) {
            ck_assert_int_eq(ot_solution_lane_event_count(s, b), 4);
            ck_assert_int_eq(ot_solution_lane_count(s, b), NT);
            /* 100 tolerance units; ros23 (order 2) is far off at 1e-8 */
            ck_assert_double_eq_tol(st_y(s, 0, 2, b), sin(t[NT * b + 2]),
                                    METHODS[k] == OT_ROS23 ? 1e-4 : 1e-6);
        }
        ot_solution_free(s);
        ot_ode_free(ode);
    }
}
END_TEST

/* ---- Roots between doses ------------------------------------------------------ */

/* st_decay1_rhs, y' = -p0 y; a dose adds p1 (stops); g = y - 0.6, falling,
 * recorded. */
static int below(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0] - 0.6;
    return 0;
}

static int dose(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p, void *u)
{
    (void)t, (void)lane, (void)u;
    if (root < 0) /* a stop: the dose; a root only records */
        ot_view_mut_col_f64(y, 0, 0)[0] += ot_view_mut_col_f64(p, 0, 0)[1];
    return 0;
}

/* Lanes with rates 0.5 .. 2 and doses of 1 at t = 1 and 2, outputs at 0,
 * 1, 2, 3 (stops at output times: the outputs show the dose, or not with
 * outputs before stops). Each lane's events: its doses (roots -1, -2) and
 * the falling crossings of 0.6 between them, at their closed-form times,
 * in time order; a dose that lifts y over 0.6 is no crossing (the roots
 * restart after a stop, as in every mode). Loop: method, outputs before
 * stops or not. */
START_TEST(roots_between_doses_fire_at_their_closed_form_times)
{
    enum { NB = 7, NT = 4 };
    const int method = METHODS[_i / 2], before = _i % 2;
    static const int falling = OT_ROOT_FALLING, record = OT_EVENT_RECORD;
    double p[2 * NB], y0 = 1, t[NT] = {0, 1, 2, 3}, stops[2] = {1, 2};
    for (int b = 0; b < NB; b++) {
        p[2 * b] = 0.5 + 0.25 * b;
        p[2 * b + 1] = 1;
    }
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, 2, st_decay1_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, (ot_method)method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_autonomous(ode, 1), OT_OK, NULL);
    const double rtol = method == OT_ROS23 ? 1e-6 : 1e-9;
    ck_assert_status(ot_ode_set_rtol(ode, rtol), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 1, below), OT_OK, NULL);
    ck_assert_status(ot_ode_set_root_directions(ode, &falling), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(ode, &record), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, dose), OT_OK, NULL);
    ck_assert_status(ot_ode_set_outputs_before_stops(ode, before), OT_OK, NULL);
    ot_solve_inputs in =
        ot_solve_inputs_make(st_vec(&y0, 1), st_mat(p, 2, NB), st_vec(t, NT));
    in.stops = st_vec(stops, 2);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_OK, NULL);
    const ot_tensor *times = ot_solution_event_tensor(s, OT_EVENT_TIMES),
                    *roots = ot_solution_event_tensor(s, OT_EVENT_ROOTS);
    const double ttol = method == OT_ROS23 ? 1e-4 : 1e-7;
    for (int b = 0; b < NB; b++) {
        const double k = p[2 * b];
        double want[8], y = y0, seg = 0;
        int which[8], m = 0;
        for (int j = 0; j <= 2; j++) { /* segments [0, 1], [1, 2], [2, 3] */
            const double cross = seg + log(y / 0.6) / k;
            if (y > 0.6 && cross < seg + 1) {
                want[m] = cross;
                which[m++] = 0;
            }
            y *= exp(-k);
            if (j < 2) { /* the dose at seg + 1, recorded as root -1 - j */
                want[m] = seg + 1;
                which[m++] = -1 - j;
                y += 1;
            }
            seg += 1;
        }
        ck_assert_msg(ot_solution_lane_event_count(s, b) == m,
                      "method %d lane %d: %lld events, expected %d", method, b,
                      (long long)ot_solution_lane_event_count(s, b), m);
        for (int e = 0; e < m; e++) {
            ck_assert_msg(fabs(st_at(times, e, b, 0) - want[e]) <= ttol,
                          "method %d lane %d event %d at %.12g, expected %.12g", method,
                          b, e, st_at(times, e, b, 0), want[e]);
            ck_assert_int_eq((int)st_at(roots, e, b, 0), which[e]);
        }
        /* The output at 3, and at the dose times by the output rule. */
        const double y3 = ((exp(-k) + 1) * exp(-k) + 1) * exp(-k);
        ck_assert_double_eq_tol(st_y(s, 0, 3, b), y3, 1e3 * rtol);
        const double y1 = exp(-k) + (before ? 0 : 1);
        ck_assert_double_eq_tol(st_y(s, 0, 1, b), y1, 1e3 * rtol);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

Suite *kernel_events_suite(void)
{
    Suite *s = suite_create("kernel_events");
    TCase *tc = ot_test_tcase(s, "roots", 120);
    tcase_add_loop_test(tc, roots_fire_in_their_directions_at_their_analytic_times, 0,
                        3 * NMETHODS);
    tcase_add_loop_test(tc, a_groups_events_are_each_lanes_own_bit_for_bit, 0, NMETHODS);
    tcase_add_test(tc, a_failing_root_function_or_too_many_events_fail_their_lane_alone);
    tcase_add_loop_test(tc, roots_between_doses_fire_at_their_closed_form_times, 0,
                        2 * NMETHODS);
    return s;
}

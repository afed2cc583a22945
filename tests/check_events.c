/* Events (issue 14): root directions, recorded events, event handlers that
 * change a lane's state, in both modes, against analytic event times. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "solve_common.h"
#include "suites.h"

#include "core/test_hooks.h"

static const double PI = 3.14159265358979323846;

/* ---- Models --------------------------------------------------------------- */

/* st_sine_rhs (solve_common.h): y1 = sin t from (0, 1), zero at k pi,
 * falling at odd k, rising at even k. */

static int first_state(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0];
    return 0;
}

/* A ball: h' = v, v' = -9.81; the root h = 0 on the way down; the handler
 * reverses v with restitution p[0] (0.8). */
/* st_ball_rhs (solve_common.h): v' = -ST_G. */

static int bounce(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p, void *u)
{
    (void)t, (void)u, (void)lane;
    ck_assert_int_eq(root, 0);
    double *Y = ot_view_mut_col_f64(y, 0, 0);
    Y[1] = -ot_view_mut_col_f64(p, 0, 0)[0] * Y[1];
    return 0;
}

/* A ball dropped from h0 at rest bounces (k from 0) at
 * t_k = t_0 + sum_{j < k} 2 e^{j+1} v_0 / ST_G, v_0 = ST_G t_0, t_0 = sqrt(2 h0 / ST_G),
 * and would bounce without end by T = t_0 (1 + e) / (1 - e). */
static double bounce_time(double h0, double e, int k)
{
    const double t0 = sqrt(2 * h0 / ST_G), v0 = ST_G * t0;
    double t = t0, ej = 1;
    for (int j = 0; j < k; j++) {
        ej *= e;
        t += 2 * ej * v0 / ST_G;
    }
    return t;
}

/* The tests that loop over modes and methods: _i & 1 is lockstep, _i >> 1
 * picks CVODE's BDF, ARKODE's explicit Dormand-Prince or an ESDIRK, so
 * roots, handlers and stops are tested for each kind of integrator. */
static const int EV_METHODS[3] = {OT_BDF, OT_ERK_DP54, OT_ESDIRK43};
#define EV_MODE(i) (((i)&1) ? OT_LOCKSTEP : OT_LANES)
#define EV_METHOD(i) ((ot_method)EV_METHODS[(i) >> 1])

static ot_ode *ball_ode(int lockstep, int threads, ot_method method)
{
    static const int falling = OT_ROOT_FALLING, handle = OT_EVENT_HANDLE;
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_ball_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, lockstep ? OT_LOCKSTEP : OT_LANES), OT_OK,
                     NULL);
    ck_assert_status(ot_ode_set_threads(ode, threads), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 1, first_state), OT_OK, NULL);
    ck_assert_status(ot_ode_set_root_directions(ode, &falling), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(ode, &handle), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, bounce), OT_OK, NULL);
    return ode;
}

enum { NBALL = 6, BOUNCES = 20 };
static const double T_END = 4; /* every ball's endless-bouncing time */

/* Lane b: restitution e = 0.7 + 0.02 b, dropped from the height whose T is
 * T_END; solved to just before T_END (0.9995 T_END), past every lane's
 * 20th bounce (at most 0.9991 T_END) and short of the endless bouncing. */
static double ball_e(int b) { return 0.7 + 0.02 * b; }
static double ball_h0(int b)
{
    const double e = ball_e(b), t0 = T_END * (1 - e) / (1 + e);
    return ST_G * t0 * t0 / 2;
}

/* Every lane: at least 20 bounces with their analytic times and velocities. */
static ot_solution *balls(int lockstep, int threads, ot_method method)
{
    double y0[2 * NBALL], e[NBALL], t[2] = {0, 0.9995 * T_END};
    for (int b = 0; b < NBALL; b++) {
        y0[2 * b] = ball_h0(b);
        y0[2 * b + 1] = 0;
        e[b] = ball_e(b);
    }
    ot_ode *ode = ball_ode(lockstep, threads, method);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_mat(y0, 2, NBALL), st_mat(e, 1, NBALL), st_vec(t, 2), &s),
        OT_OK, NULL);
    ot_ode_free(ode);
    return s;
}

/* ---- Tests ------------------------------------------------------------------ */

/* sin t from 0: the first falling zero is pi, the first rising one 2 pi;
 * both directions: pi. (Directions were missing: a root on dI/dt fired on
 * the rising crossing.) Both modes, the default action (stop). */
START_TEST(root_direction_picks_the_crossing)
{
    static const double y0[2] = {0, 1}, t[2] = {0, 10};
    const int dirs[3] = {OT_ROOT_FALLING, OT_ROOT_RISING, OT_ROOT_BOTH};
    const double want[3] = {PI, 2 * PI, PI};
    for (int d = 0; d < 3; d++) {
        ot_ode *ode = NULL;
        ck_assert_status(ot_ode_new(&ode, 2, 0, st_sine_rhs, NULL), OT_OK, NULL);
        ck_assert_status(ot_ode_set_mode(ode, EV_MODE(_i)), OT_OK, NULL);
        ck_assert_status(ot_ode_set_method(ode, EV_METHOD(_i)), OT_OK, NULL);
        ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
        ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
        ck_assert_status(ot_ode_set_roots(ode, 1, first_state), OT_OK, NULL);
        ck_assert_status(ot_ode_set_root_directions(ode, &dirs[d]), OT_OK, NULL);
        ot_solution *s = NULL;
        /* Two lanes: one starting at (0, 1), one at (0, -1) (mirror: rising first). */
        const double y2[4] = {y0[0], y0[1], 0, -1};
        ck_assert_status(
            ot_solve_dense(ode, st_mat(y2, 2, 2), ot_view_absent(), st_vec(t, 2), &s),
            OT_OK, NULL);
        int idx;
        double tr;
        ck_assert_status(ot_solution_lane_root(s, 0, &idx, &tr), OT_OK, NULL);
        ck_assert_int_eq(idx, 0);
        ck_assert_double_eq_tol(tr, want[d], 1e-7);
        /* The mirrored lane: its falling zero is 2 pi, rising pi. */
        ck_assert_status(ot_solution_lane_root(s, 1, &idx, &tr), OT_OK, NULL);
        ck_assert_double_eq_tol(tr, d == 0 ? 2 * PI : PI, 1e-7);
        /* The stop is an event too, with the state at the root (it was not
         * returned): y1 = 0, y2 = cos(root) = -1 or +1. */
        ck_assert_int_eq(ot_solution_lane_event_count(s, 0), 1);
        ck_assert(st_at(ot_solution_event_tensor(s, OT_EVENT_TIMES), 0, 0, 0) == want[d]
                      ? 1
                      : fabs(st_at(ot_solution_event_tensor(s, OT_EVENT_TIMES), 0, 0, 0) -
                             want[d]) < 1e-7);
        ck_assert_double_eq_tol(
            st_at(ot_solution_event_tensor(s, OT_EVENT_BEFORE), 1, 0, 0), cos(want[d]),
            1e-6);
        ot_solution_free(s);
        ot_ode_free(ode);
    }
}
END_TEST

/* Recorded events: every zero of sin t in (0, 10 pi) + 0.5, the lane going
 * on; state before = after. 1,000 zeros in one lane too. */
START_TEST(recorded_events_let_the_lane_go_on)
{
    static const int record = OT_EVENT_RECORD;
    const int many = _i >> 1;
    const int nz = many ? 1000 : 10;
    static const double y0[2] = {0, 1};
    const double t[2] = {0, nz * PI + 0.5};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 0, st_sine_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, (_i & 1) ? OT_LOCKSTEP : OT_LANES), OT_OK,
                     NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 1, first_state), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(ode, &record), OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), ot_view_absent(), st_vec(t, 2), &s), OT_OK,
        NULL);
    ck_assert_int_eq(ot_solution_lane_event_count(s, 0), nz);
    ck_assert_int_eq(ot_solution_lane_count(s, 0), 2); /* it reached the end */
    ck_assert_double_eq_tol(st_y(s, 0, 1, 0), sin(t[1]),
                            1e-5); /* 1e-10 over 500 periods */
    const ot_tensor *et = ot_solution_event_tensor(s, OT_EVENT_TIMES),
                    *er = ot_solution_event_tensor(s, OT_EVENT_ROOTS),
                    *eb = ot_solution_event_tensor(s, OT_EVENT_BEFORE),
                    *ea = ot_solution_event_tensor(s, OT_EVENT_AFTER);
    st_assert_shape(et, 2, nz, 1, 0);
    st_assert_shape(eb, 3, 2, nz, 1);
    for (int k = 0; k < nz; k++) {
        ck_assert_double_eq_tol(st_at(et, k, 0, 0), (k + 1) * PI, 1e-5);
        ck_assert_double_eq(st_at(er, k, 0, 0), 0);
        ck_assert_double_eq_tol(st_at(eb, 1, k, 0), (k % 2) ? 1 : -1, 1e-5);
        ck_assert(st_at(ea, 1, k, 0) == st_at(eb, 1, k, 0));
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* A bouncing ball that keeps bouncing (restitution 0.8): 20 bounces per lane
 * at their analytic times, v before -e^k v0, after +e^{k+1} v0. Both modes. */
START_TEST(a_handler_changes_the_state_and_the_lane_goes_on)
{
    ot_solution *s = balls(_i & 1, 1, EV_METHOD(_i));
    const ot_tensor *et = ot_solution_event_tensor(s, OT_EVENT_TIMES),
                    *eb = ot_solution_event_tensor(s, OT_EVENT_BEFORE),
                    *ea = ot_solution_event_tensor(s, OT_EVENT_AFTER);
    for (int b = 0; b < NBALL; b++) {
        const double h0 = ball_h0(b), e = ball_e(b), v0 = sqrt(2 * ST_G * h0);
        const int64_t c = ot_solution_lane_event_count(s, b);
        ck_assert_int_ge(c, BOUNCES);
        double ek = 1;
        for (int k = 0; k < BOUNCES; k++) {
            const double tk = bounce_time(h0, e, k);
            ck_assert_msg(fabs(st_at(et, k, b, 0) - tk) < 1e-6,
                          "lane %d bounce %d at %.10g, exact %.10g", b, k,
                          st_at(et, k, b, 0), tk);
            ck_assert_double_eq_tol(st_at(eb, 1, k, b), -ek * v0, 1e-5 * v0);
            ck_assert_double_eq_tol(st_at(ea, 1, k, b), e * ek * v0, 1e-5 * v0);
            ck_assert_double_eq_tol(st_at(eb, 0, k, b), 0, 1e-8);
            ek *= e;
        }
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
    }
    ot_solution_free(s);
}
END_TEST

/* Lanes mode with events: bit for bit the same for 1 and 2 threads. */
START_TEST(events_are_bit_identical_for_any_thread_count)
{
    ot_solution *a = balls(0, 1, OT_BDF), *b = balls(0, 2, OT_BDF);
    for (int k = 0; k < 4; k++) {
        const ot_tensor *x = ot_solution_event_tensor(a, k),
                        *y = ot_solution_event_tensor(b, k);
        ck_assert(st_bytes(x) == st_bytes(y));
        ck_assert(memcmp(ot_tensor_layout(x)->data, ot_tensor_layout(y)->data,
                         st_bytes(x)) == 0);
    }
    ck_assert(memcmp(ot_tensor_layout(ot_solution_ys(a))->data,
                     ot_tensor_layout(ot_solution_ys(b))->data,
                     st_bytes(ot_solution_ys(a))) == 0);
    for (int64_t lane = 0; lane < NBALL; lane++)
        st_assert_stats_equal(a, lane, b, lane);
    ot_solution_free(a);
    ot_solution_free(b);
}
END_TEST

/* A handler that fails (returns -1, or writes NaN) fails its lane alone;
 * the others bounce on. Both modes. */
static int failing_bounce(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                          void *u)
{
    (void)u;
    double *Y = ot_view_mut_col_f64(y, 0, 0);
    const double e = ot_view_mut_col_f64(p, 0, 0)[0];
    if (e > 0.85 && e < 0.95) /* lane 1: e = 0.9 */
        return -1;
    if (e > 0.95 && t > 1) /* lane 2: e = 0.99, from its second bounce */
        Y[1] = NAN;
    ck_assert_int_eq(lane, e > 0.95 ? 2 : 0);
    return bounce(t, root, lane, y, p, u);
}

START_TEST(a_failing_handler_fails_its_lane_alone)
{
    const double y0[2] = {1, 0}, e[3] = {0.8, 0.9, 0.99}, t[2] = {0, 3};
    ot_ode *ode = ball_ode(_i & 1, 1, EV_METHOD(_i));
    ck_assert_status(ot_ode_set_event_handler(ode, failing_bounce), OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_mat(e, 1, 3), st_vec(t, 2), &s),
        OT_ERR_LANES_FAILED, "2 of 3 lanes failed");
    ck_assert_int_eq(ot_solution_lane_status(s, 0), OT_OK);
    ck_assert_int_eq(ot_solution_lane_status(s, 1), OT_ERR_CALLBACK);
    ck_assert_msg(strstr(ot_solution_lane_message(s, 1), "event handler returned -1"),
                  "%s", ot_solution_lane_message(s, 1));
    ck_assert_int_eq(ot_solution_lane_status(s, 2), OT_ERR_CALLBACK);
    ck_assert_msg(
        strstr(ot_solution_lane_message(s, 2), "event handler wrote NaN or Inf"), "%s",
        ot_solution_lane_message(s, 2));
    ck_assert_int_eq(ot_solution_lane_event_count(s, 2), 2); /* the second one failed */
    /* Lane 0 is what it is alone. */
    ck_assert_double_eq_tol(st_y(s, 1, 1, 0), 0, 10); /* finite */
    ck_assert(isfinite(st_y(s, 0, 1, 0)));
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* More events than max_events: the lane fails alone, keeping the first. */
START_TEST(max_events_fails_the_lane_and_keeps_its_events)
{
    static const int record = OT_EVENT_RECORD;
    const double y0[2] = {0, 1}, t[2] = {0, 20};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 0, st_sine_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 1, first_state), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(ode, &record), OT_OK, NULL);
    ck_assert_status(ot_ode_set_max_events(ode, 5), OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), ot_view_absent(), st_vec(t, 2), &s),
        OT_ERR_LANES_FAILED, "more than max_events = 5 events");
    ck_assert_int_eq(ot_solution_lane_event_count(s, 0), 5);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

START_TEST(event_options_are_checked)
{
    const int bad_dir = 2, bad_action = 3, handle = OT_EVENT_HANDLE, dir = OT_ROOT_RISING;
    const double y0[2] = {0, 1}, t[2] = {0, 1}, k = 1;
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_sine_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_root_directions(ode, &dir), OT_ERR_ARG,
                     "no root functions");
    ck_assert_status(ot_ode_set_roots(ode, 1, first_state), OT_OK, NULL);
    ck_assert_status(ot_ode_set_root_directions(ode, &bad_dir), OT_ERR_VALUE,
                     "root_directions: entry 0 is 2; must be -1 to 1");
    ck_assert_status(ot_ode_set_event_actions(ode, &bad_action), OT_ERR_VALUE,
                     "event_actions: entry 0 is 3; must be 0 to 2");
    ck_assert_status(ot_ode_set_max_events(ode, 0), OT_ERR_VALUE, "max_events");
    ck_assert_status(ot_ode_set_event_actions(ode, &handle), OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense(ode, st_vec(y0, 2), st_vec(&k, 1), st_vec(t, 2), &s),
                     OT_ERR_ARG, "no event handler");
    ck_assert_status(ot_ode_set_event_handler(ode, bounce), OT_OK, NULL);
    /* A new set of roots forgets the old directions and actions. */
    ck_assert_status(ot_ode_set_roots(ode, 1, first_state), OT_OK, NULL);
    ck_assert_status(ot_solve_dense(ode, st_vec(y0, 2), st_vec(&k, 1), st_vec(t, 2), &s),
                     OT_OK, NULL);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- Per-lane output times ------------------------------------------------ */

/* t_eval [nt, nbatch]: each lane its own sampling times, NaN-padded at the
 * end. Lanes mode: each lane is bit for bit its solve alone with its times.
 * Lockstep: the block steps through the union of the times; every output
 * right to the tolerance. ts is [nt, nbatch], the times given. */
START_TEST(per_lane_output_times)
{
    enum { NB = 5, NT = 4 };
    const double nan = NAN;
    double t[NT * NB], k[NB];
    for (int b = 0; b < NB; b++) {
        k[b] = 0.3 + 0.2 * b;
        for (int i = 0; i < NT; i++) /* lane b has NT - (b % 3) times */
            t[b * NT + i] = i < NT - b % 3 ? 0.37 * (b + 1) * (i + 1) : nan;
    }
    const double y0[2] = {1, 1};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, _i ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_mat(k, 1, NB), st_mat(t, NT, NB), &s),
        OT_OK, NULL);
    st_assert_shape(ot_solution_ts(s), 2, NT, NB, 0);
    for (int b = 0; b < NB; b++) {
        const int nt = NT - b % 3;
        ck_assert_int_eq(ot_solution_lane_count(s, b), nt);
        for (int i = 0; i < NT; i++) {
            const double tt = st_at(ot_solution_ts(s), i, b, 0);
            ck_assert(i < nt ? tt == t[b * NT + i] : isnan(tt));
            if (i >= nt) {
                ck_assert(isnan(st_y(s, 0, i, b)));
                continue;
            }
            ck_assert_double_eq_tol(st_y(s, 0, i, b), exp(-k[b] * tt), 1e-8);
            ck_assert_double_eq_tol(st_y(s, 1, i, b), exp(-2 * k[b] * tt), 1e-8);
        }
        if (_i)
            continue;
        ot_solution *alone = NULL;
        ck_assert_status(ot_solve_dense(ode, st_vec(y0, 2), st_vec(k + b, 1),
                                        st_vec(t + b * NT, nt), &alone),
                         OT_OK, NULL);
        ck_assert(memcmp(ot_tensor_layout(ot_solution_ys(alone))->data,
                         (const char *)ot_tensor_layout(ot_solution_ys(s))->data +
                             b * ot_tensor_layout(ot_solution_ys(s))->strides[2],
                         (size_t)(2 * nt) * sizeof(double)) == 0);
        st_assert_stats_equal(s, b, alone, 0);
        ot_solution_free(alone);
    }
    ot_solution_free(s);
    /* A NaN in the middle, a lane with no time, a time before t0. */
    t[1] = nan;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_mat(k, 1, NB), st_mat(t, NT, NB), &s),
        OT_ERR_VALUE, "(lane 0; per-lane times are NaN-padded at the end only)");
    for (int i = 0; i < NT; i++)
        t[i] = nan;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_mat(k, 1, NB), st_mat(t, NT, NB), &s),
        OT_ERR_VALUE, "t_eval: lane 0 has no output time");
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_mat(k, 1, NB), st_mat(t, NT, 2), &s),
        OT_ERR_SHAPE, "expected [nt], [nt, 1] or [nt, 5]");
    ot_ode_free(ode);
}
END_TEST

/* ---- Scheduled stops (doses) and per-lane starts ----------------------- */

/* One compartment: y' = -ke y, p = (ke, dose). The handler adds the lane's
 * dose at each of its scheduled stops (root -1 - k). Closed form: the
 * superposition of the doses given at or before t. */
static int elim_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(f, b, 0)[0] =
            -ot_view_col_f64(p, b, 0)[0] * ot_view_col_f64(y, b, 0)[0];
    return 0;
}

static int dose(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p, void *u)
{
    (void)t, (void)lane, (void)u;
    ck_assert_int_lt(root, 0); /* a scheduled stop */
    ot_view_mut_col_f64(y, 0, 0)[0] += ot_view_mut_col_f64(p, 0, 0)[1];
    return 0;
}

/* The dosed one-compartment problem in test variant i's mode and method. */
static ot_ode *elim_ode(int i)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, 2, elim_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, EV_MODE(i)), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, EV_METHOD(i)), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, dose), OT_OK, NULL);
    return ode;
}

static double dosed(double t, double t0, double y0, double ke, double amount,
                    const double *stops, int n)
{
    double y = y0 * exp(-ke * (t - t0));
    for (int k = 0; k < n && stops[k] <= t; k++)
        y += amount * exp(-ke * (t - stops[k]));
    return y;
}

/* Per-lane dose times (NaN-padded), a dose at t0 (lane 0) and one exactly at
 * an output time (lane 1: the output shows the state after it), per-lane
 * sampling times; against the closed form in both modes, and each dose
 * recorded as an event (root -1 - k, before and after). */
START_TEST(scheduled_doses_match_the_superposition)
{
    enum { NB = 3, NS = 3, NT = 4 };
    const double nan = NAN;
    const double stops[NS * NB] = {0,   2,   5,   /* lane 0: a dose at t0 */
                                   1,   3,   nan, /* lane 1: at t = 3, an output time */
                                   0.5, nan, nan};
    const double t[NT * NB] = {0, 1, 2.5, 6, 0.5, 3, 4, nan, 0.25, 0.75, 2, 8};
    const double p[2 * NB] = {0.3, 1.0, 0.5, 2.0, 1.0, 0.5}, y0 = 0.2;
    ot_ode *ode = elim_ode(_i);
    ot_solve_inputs in =
        ot_solve_inputs_make(st_vec(&y0, 1), st_mat(p, 2, NB), st_mat(t, NT, NB));
    in.stops = st_mat(stops, NS, NB);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_OK, NULL);
    const int nstops[NB] = {3, 2, 1}, nts[NB] = {4, 3, 4};
    for (int b = 0; b < NB; b++) {
        ck_assert_int_eq(ot_solution_lane_count(s, b), nts[b]);
        for (int i = 0; i < nts[b]; i++) {
            const double want = dosed(t[b * NT + i], 0, y0, p[2 * b], p[2 * b + 1],
                                      stops + b * NS, nstops[b]);
            ck_assert_msg(fabs(st_y(s, 0, i, b) - want) < 1e-8,
                          "lane %d t = %g: %.12g, exact %.12g", b, t[b * NT + i],
                          st_y(s, 0, i, b), want);
        }
        ck_assert_int_eq(ot_solution_lane_event_count(s, b), nstops[b]);
        for (int k = 0; k < nstops[b]; k++) {
            ck_assert_double_eq(
                st_at(ot_solution_event_tensor(s, OT_EVENT_TIMES), k, b, 0),
                stops[b * NS + k]);
            ck_assert_double_eq(
                st_at(ot_solution_event_tensor(s, OT_EVENT_ROOTS), k, b, 0), -1 - k);
            ck_assert_double_eq_tol(
                st_at(ot_solution_event_tensor(s, OT_EVENT_AFTER), 0, k, b) -
                    st_at(ot_solution_event_tensor(s, OT_EVENT_BEFORE), 0, k, b),
                p[2 * b + 1], 1e-12);
        }
    }
    ot_solution_free(s);
    /* Per-lane starts (lanes mode): lane b starts at 0.5 b. */
    const double t0s[NB] = {0, 0.5, 1.0};
    in.t0 = st_vec(t0s, NB);
    const double tl[NT * NB] = {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4};
    const double sl[NS * NB] = {1.5, nan, nan, 1.5, nan, nan, 1.5, nan, nan};
    in.t_eval = st_mat(tl, NT, NB);
    in.stops = st_mat(sl, NS, NB);
    const int st = ot_solve_dense_with(ode, &in, &s);
    if (_i & 1) {
        ck_assert_status(st, OT_ERR_ARG, "t0: per-lane starts need OT_LANES");
    } else {
        ck_assert_status(st, OT_OK, NULL);
        for (int b = 0; b < NB; b++)
            for (int i = 0; i < NT; i++)
                ck_assert_double_eq_tol(
                    st_y(s, 0, i, b),
                    dosed(tl[i], t0s[b], y0, p[2 * b], p[2 * b + 1], sl + b * NS, 1),
                    1e-8);
        ot_solution_free(s);
    }
    /* Refusals: a stop before the lane's start; no handler. */
    const double bad[NS] = {2, 1, nan};
    in.t0 = ot_view_absent();
    in.stops = st_vec(bad, NS);
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_ERR_VALUE,
                     "stops: lane 0's stop 1 is 1");
    ck_assert_status(ot_ode_set_event_handler(ode, NULL), OT_OK, NULL);
    in.stops = st_vec(stops, 1);
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_ERR_ARG,
                     "the problem has none");
    ot_ode_free(ode);
}
END_TEST

/* A stop no lane takes: lane 0's last stop (9) lies past its last output,
 * so its integrator (lanes mode on one thread: lane 1's next; lockstep:
 * the block's) is left aimed at it while lane 1 runs on to 10 with no
 * stops of its own; lane 2, in lockstep, stands still past 0.5 while its
 * stop at 6 stops the block. Lane 1 is the closed form's, through 9 and 6. */
START_TEST(a_stop_no_lane_takes_leaves_the_others_outputs_alone)
{
    enum { NB = 3, NS = 2, NT = 3 };
    const double nan = NAN;
    const double stops[NS * NB] = {1, 9, nan, nan, 0.25, 6};
    const double t[NT * NB] = {0.5, 2, 4, 5, 7, 10, 0.1, 0.5, nan};
    const double p[2 * NB] = {0.3, 1.0, 0.5, 2.0, 1.0, 0.5}, y0 = 0.2;
    ot_ode *ode = elim_ode(_i);
    ck_assert_status(ot_ode_set_threads(ode, 1), OT_OK, NULL);
    ot_solve_inputs in =
        ot_solve_inputs_make(st_vec(&y0, 1), st_mat(p, 2, NB), st_mat(t, NT, NB));
    in.stops = st_mat(stops, NS, NB);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_OK, NULL);
    const int nstops[NB] = {2, 0, 2}, nts[NB] = {3, 3, 2};
    for (int b = 0; b < NB; b++)
        for (int i = 0; i < nts[b]; i++) {
            const double want = dosed(t[b * NT + i], 0, y0, p[2 * b], p[2 * b + 1],
                                      stops + b * NS, nstops[b]);
            ck_assert_msg(fabs(st_y(s, 0, i, b) - want) < 1e-8,
                          "lane %d t = %g: %.12g, exact %.12g", b, t[b * NT + i],
                          st_y(s, 0, i, b), want);
        }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* Every-step output (ot_solve) with handled events: the same bounces as the
 * dense solve, and each bounce's state after the handler is a step of its
 * own at the bounce time. Both modes. */
START_TEST(every_step_output_records_the_events_too)
{
    ot_ode *ode = ball_ode(_i & 1, 1, EV_METHOD(_i));
    double y0[2] = {ball_h0(0), 0}, e = ball_e(0);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve(ode, st_vec(y0, 2), st_vec(&e, 1), 0.9995 * T_END, &s),
                     OT_OK, NULL);
    const int64_t c = ot_solution_lane_event_count(s, 0);
    ck_assert_int_ge(c, BOUNCES);
    const ot_tensor *et = ot_solution_event_tensor(s, OT_EVENT_TIMES);
    for (int k = 0; k < BOUNCES; k++)
        ck_assert_double_eq_tol(st_at(et, k, 0, 0), bounce_time(y0[0], e, k), 1e-6);
    /* None past the final time (ARKStepReInit cleared the stop time: the
     * integrator stepped past it and found a 22nd bounce). */
    ck_assert_double_le(st_at(et, c - 1, 0, 0), 0.9995 * T_END);
    ck_assert(st_at(ot_solution_ts(s), ot_solution_lane_count(s, 0) - 1, 0, 0) ==
              0.9995 * T_END);
    /* Two steps at each bounce time: before and after. */
    const ot_tensor *ts = ot_solution_ts(s);
    int64_t pairs = 0;
    for (int64_t i = 1; i < ot_solution_lane_count(s, 0); i++)
        pairs += st_at(ts, i, 0, 0) == st_at(ts, i - 1, 0, 0);
    ck_assert_int_eq(pairs, c);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* The event tensors [m, nbatch] are counted against memory before they are
 * allocated: under a small limit the lane with 1,000 events is cut to what
 * fits and fails alone, the others keep theirs. */
START_TEST(event_tensors_that_would_not_fit_fail_their_lane)
{
    static const int record = OT_EVENT_RECORD;
    enum { NB = 64 };
    double y0[2 * NB], t[2] = {0, 1000 * PI + 0.5};
    for (int b = 0; b < NB; b++) {
        y0[2 * b] = 0;
        y0[2 * b + 1] = b == 7 ? 1 : 0; /* only lane 7 oscillates: 1,000 zeros */
    }
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 0, st_sine_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 1, first_state), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(ode, &record), OT_OK, NULL);
    /* 1,000 events x 64 lanes x 6 doubles = 3 MB of tensors; allow 1 MB. */
    ot__size_set_limit(UINT64_C(1) << 20);
    ot_solution *s = NULL;
    const int st =
        ot_solve_dense(ode, st_mat(y0, 2, NB), ot_view_absent(), st_vec(t, 2), &s);
    ot__size_set_limit(0);
    ck_assert_status(st, OT_ERR_LANES_FAILED,
                     "1 of 64 lanes failed; lane 7: recorded 1000 events");
    ck_assert_int_eq(ot_solution_lane_status(s, 7), OT_ERR_NOMEM);
    ck_assert_int_lt(ot_solution_lane_event_count(s, 7), 1000);
    ck_assert_int_gt(ot_solution_lane_event_count(s, 7), 0);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

Suite *events_suite(void)
{
    Suite *s = suite_create("events");
    TCase *tc = ot_test_tcase(s, "events", 120);
    tcase_add_loop_test(tc, root_direction_picks_the_crossing, 0, 6);
    tcase_add_loop_test(tc, recorded_events_let_the_lane_go_on, 0, 4);
    tcase_add_loop_test(tc, a_handler_changes_the_state_and_the_lane_goes_on, 0, 6);
    tcase_add_test(tc, events_are_bit_identical_for_any_thread_count);
    tcase_add_loop_test(tc, a_failing_handler_fails_its_lane_alone, 0, 6);
    tcase_add_test(tc, max_events_fails_the_lane_and_keeps_its_events);
    tcase_add_test(tc, event_options_are_checked);
    tcase_add_loop_test(tc, per_lane_output_times, 0, 2);
    tcase_add_loop_test(tc, scheduled_doses_match_the_superposition, 0, 6);
    tcase_add_loop_test(tc, a_stop_no_lane_takes_leaves_the_others_outputs_alone, 0, 6);
    tcase_add_loop_test(tc, every_step_output_records_the_events_too, 0, 6);
    tcase_add_test(tc, event_tensors_that_would_not_fit_fail_their_lane);
    return s;
}

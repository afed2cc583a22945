/* ot_callback_lane (issue 22): every callback the library calls reads the
 * index of the first lane of its views, in lanes mode on several threads,
 * in lockstep blocks dealt to threads and in one block, for the forward
 * callbacks, events (roots and scheduled stops), sensitivities and the
 * adjoint's one-lane loss and integrand; -1 outside callbacks and in the
 * progress callback; a solve nested in a callback leaves it as it was.
 *
 * Each lane's params hold its own index (p[0] of lane b is b), so a
 * callback checks ot_callback_lane() + column == p[0] of that column.
 * Callbacks count (atomically: lanes mode calls them on worker threads)
 * rather than assert, and the test asserts the counts after the solve. */
#include <math.h>
#include <pthread.h>

#include "solve_common.h"
#include "suites.h"

enum {
    K_RHS,
    K_JAC,
    K_INIT,
    K_OUT,
    K_ROOT,
    K_EVENT,
    K_DFDP,
    K_LOSS,
    K_INTEGRAND,
    NKINDS
};
static const char *const KIND[NKINDS] = {"rhs",   "jac",  "init", "out",      "root",
                                         "event", "dfdp", "loss", "integrand"};

typedef struct {
    int calls[NKINDS];
    int bad[NKINDS];       /* calls whose lane index disagreed with p[0] */
    int64_t first_bad_got; /* what one of them read */
    double first_bad_want;
} lane_log;

static void count(lane_log *g, int kind, int ok, int64_t got, double want)
{
    __atomic_fetch_add(&g->calls[kind], 1, __ATOMIC_RELAXED);
    if (!ok && __atomic_fetch_add(&g->bad[kind], 1, __ATOMIC_RELAXED) == 0) {
        g->first_bad_got = got;
        g->first_bad_want = want;
    }
}

/* p[0] of column b is lane ot_callback_lane() + b, for every column (to
 * within the difference quotients' steps in p: sensitivities and the
 * adjoint move p by ~1e-8 |p|). */
static void check_cols(void *u, int kind, ot_view p)
{
    const int64_t lane = ot_callback_lane();
    int ok = lane >= 0;
    double want = -1;
    for (int64_t b = 0; ok && b < ST_LANES(p); b++)
        ok = fabs((want = ot_view_col_f64(p, b, 0)[0]) - (double)(lane + b)) < 0.25;
    count(u, kind, ok, lane, want);
}

/* The oscillator (st_sine_rhs), params (lane index, 0). */
static int rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    check_cols(u, K_RHS, p);
    return st_sine_rhs(t, y, p, f, u);
}

static int jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t;
    check_cols(u, K_JAC, p);
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        ot_view_mut_col_f64(J, 1, b)[0] = 1;  /* d f0 / d y1 */
        ot_view_mut_col_f64(J, 0, b)[1] = -1; /* d f1 / d y0 */
    }
    return 0;
}

static int init(ot_view p, ot_view_mut y0, void *u)
{
    check_cols(u, K_INIT, p);
    for (int64_t b = 0; b < ST_LANES(y0); b++) {
        double *y = ot_view_mut_col_f64(y0, b, 0);
        y[0] = 0;
        y[1] = 1 + ot_view_col_f64(p, b, 0)[1];
    }
    return 0;
}

static int out(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t;
    check_cols(u, K_OUT, p);
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(o, b, 0)[0] = ot_view_col_f64(y, b, 0)[0];
    return 0;
}

/* y1 = sin t: a root at every multiple of pi. */
static int root(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t;
    check_cols(u, K_ROOT, p);
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0];
    return 0;
}

/* Changes nothing; checks the lane argument too. */
static int event(double t, int r, int64_t lane, ot_view_mut y, ot_view_mut p, void *u)
{
    (void)t, (void)r, (void)y;
    const int64_t got = ot_callback_lane();
    const double want = ot_view_mut_col_f64(p, 0, 0)[0];
    count(u, K_EVENT, got == lane && (double)got == want && ST_LANES(p) == 1, got, want);
    return 0;
}

static int dfdp(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t; /* f does not depend on p: zeros, written (as lockstep demands) */
    check_cols(u, K_DFDP, p);
    for (int64_t b = 0; b < ST_LANES(y); b++)
        for (int64_t j = 0; j < 2; j++)
            ot_view_mut_col_f64(d, j, b)[0] = ot_view_mut_col_f64(d, j, b)[1] = 0;
    return 0;
}

static int loss(double t, int64_t i, int64_t lane, ot_view y, ot_view p, ot_view_mut g,
                ot_view_mut dgdy, ot_view_mut dgdp, void *u)
{
    (void)t, (void)i, (void)dgdp;
    const int64_t got = ot_callback_lane();
    const double want = ot_view_col_f64(p, 0, 0)[0];
    count(u, K_LOSS, got == lane && (double)got == want, got, want);
    const double y0 = ot_view_col_f64(y, 0, 0)[0];
    ot_view_mut_col_f64(g, 0, 0)[0] = y0 * y0;
    ot_view_mut_col_f64(dgdy, 0, 0)[0] = 2 * y0;
    return 0;
}

static int integrand(double t, int64_t lane, ot_view y, ot_view p, ot_view_mut q,
                     ot_view_mut dqdy, ot_view_mut dqdp, void *u)
{
    (void)t, (void)dqdp;
    const int64_t got = ot_callback_lane();
    const double want = ot_view_col_f64(p, 0, 0)[0];
    count(u, K_INTEGRAND, got == lane && (double)got == want, got, want);
    const double y1 = ot_view_col_f64(y, 0, 0)[1];
    ot_view_mut_col_f64(q, 0, 0)[0] = y1 * y1;
    ot_view_mut_col_f64(dqdy, 0, 0)[1] = 2 * y1;
    return 0;
}

/* Progress is no lane's callback: -1 there. */
static int progress(int64_t done, int64_t total, void *u)
{
    (void)done, (void)total;
    if (ot_callback_lane() != -1)
        __atomic_fetch_add((int *)u, 1, __ATOMIC_RELAXED);
    return 0;
}

/* ---- Configurations ------------------------------------------------------ */

enum { NB = 23, NT = 4 };

/* _i: 0 lanes mode on 2 threads, 1 lockstep blocks of 4 on 2 threads, 2
 * lockstep blocks of 5 on 1 thread, 3 lockstep in one block. */
static ot_ode *problem(int config, void *user)
{
    static const int blocks[4] = {0, 4, 5, 0};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 2, rhs, user), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, config == 2 ? 1 : 2), OT_OK, NULL);
    if (config > 0) {
        ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
        ck_assert_status(ot_ode_set_lockstep_block(ode, blocks[config]), OT_OK, NULL);
    }
    ck_assert_status(ot_ode_set_rtol(ode, 1e-8), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-10), OT_OK, NULL);
    return ode;
}

static void lane_params(double *p)
{
    for (int b = 0; b < NB; b++) {
        p[2 * b] = b;
        p[2 * b + 1] = 0.01 * b;
    }
}

/* Every kind in `kinds` was called and always saw the right lane. */
static void assert_log(const lane_log *g, unsigned kinds, int config)
{
    for (int k = 0; k < NKINDS; k++) {
        if (!(kinds & (1u << k)))
            continue;
        ck_assert_msg(g->calls[k] > 0, "config %d: %s never called", config, KIND[k]);
        ck_assert_msg(g->bad[k] == 0,
                      "config %d: %d of %d %s calls read the wrong lane (one read %lld, "
                      "its p[0] is %g)",
                      config, g->bad[k], g->calls[k], KIND[k],
                      (long long)g->first_bad_got, g->first_bad_want);
    }
}

#define BIT(k) (1u << (k))

/* ---- Tests --------------------------------------------------------------- */

START_TEST(forward_callbacks_and_events_see_their_lane)
{
    lane_log g = {{0}, {0}, 0, 0};
    int bad_progress = 0;
    double p[2 * NB];
    lane_params(p);
    const double t[NT] = {1, 4, 7, 10}; /* three roots per lane on the way */
    ot_ode *ode = problem(_i, &g);
    const int handle[1] = {OT_EVENT_HANDLE};
    ck_assert_status(ot_ode_set_jac(ode, jac), OT_OK, NULL);
    ck_assert_status(ot_ode_set_init(ode, init), OT_OK, NULL);
    ck_assert_status(ot_ode_set_out(ode, 1, out), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 1, root), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(ode, handle), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, event), OT_OK, NULL);
    ck_assert_status(ot_ode_set_progress(ode, progress, &bad_progress), OT_OK, NULL);
    ck_assert_int_eq(ot_callback_lane(), -1);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, ot_view_absent(), st_mat(p, 2, NB), st_vec(t, NT), &s), OT_OK,
        NULL);
    ck_assert_int_eq(ot_callback_lane(), -1);
    assert_log(&g,
               BIT(K_RHS) | BIT(K_JAC) | BIT(K_INIT) | BIT(K_OUT) | BIT(K_ROOT) |
                   BIT(K_EVENT),
               _i);
    ck_assert_int_eq(bad_progress, 0);
    for (int b = 0; b < NB; b++) /* the solve itself is unchanged: y1 = (1 + a) sin t */
        ck_assert_double_eq_tol(st_y(s, 0, NT - 1, b), (1 + 0.01 * b) * sin(10.0), 1e-5);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* Scheduled stops call the handler from the stop loop (root -1 - k), and
 * an every-step solve takes the same paths as a dense one. */
START_TEST(stops_and_steps_see_their_lane)
{
    lane_log g = {{0}, {0}, 0, 0};
    double p[2 * NB], y0[2] = {0, 1}, stops[2] = {0.5, 1.5};
    lane_params(p);
    const double t[NT] = {0.25, 1, 2, 3};
    ot_ode *ode = problem(_i, &g);
    ck_assert_status(ot_ode_set_event_handler(ode, event), OT_OK, NULL);
    ot_solve_inputs in =
        ot_solve_inputs_make(st_vec(y0, 2), st_mat(p, 2, NB), st_vec(t, NT));
    in.stops = st_vec(stops, 2);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_OK, NULL);
    ck_assert_int_eq(ot_solution_lane_event_count(s, NB - 1), 2);
    ot_solution_free(s);
    assert_log(&g, BIT(K_RHS) | BIT(K_EVENT), _i);
    ck_assert_status(ot_solve(ode, st_vec(y0, 2), st_mat(p, 2, NB), 3.0, &s), OT_OK,
                     NULL);
    ot_solution_free(s);
    assert_log(&g, BIT(K_RHS), _i);
    ck_assert_int_eq(ot_callback_lane(), -1);
    ot_ode_free(ode);
}
END_TEST

START_TEST(sensitivity_callbacks_see_their_lane)
{
    lane_log g = {{0}, {0}, 0, 0};
    double p[2 * NB], y0[2] = {0, 1};
    lane_params(p);
    const double t[NT] = {0.5, 1, 2, 3};
    ot_ode *ode = problem(_i, &g);
    ck_assert_status(ot_ode_set_jac(ode, jac), OT_OK, NULL);
    ck_assert_status(ot_ode_set_dfdp(ode, dfdp), OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_fwd_sens(ode, st_vec(y0, 2), st_mat(p, 2, NB), st_vec(t, NT), &s), OT_OK,
        NULL);
    ot_solution_free(s);
    assert_log(&g, BIT(K_RHS) | BIT(K_JAC) | BIT(K_DFDP), _i);
    ot_ode_free(ode);
}
END_TEST

/* The loss and integrand get one lane a call in lockstep too: their index
 * is that lane, not the block's first. */
START_TEST(adjoint_callbacks_see_their_lane)
{
    lane_log g = {{0}, {0}, 0, 0};
    double p[2 * NB], y0[2] = {0, 1};
    lane_params(p);
    const double t[NT] = {0.5, 1, 2, 3};
    ot_ode *ode = problem(_i, &g);
    ck_assert_status(ot_ode_set_jac(ode, jac), OT_OK, NULL);
    ot_loss l = ot_loss_custom(loss, &g);
    l.integrand = integrand;
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_adjoint(ode, st_vec(y0, 2), st_mat(p, 2, NB), st_vec(t, NT), &l, &s),
        OT_OK, NULL);
    ot_solution_free(s);
    assert_log(&g, BIT(K_RHS) | BIT(K_JAC) | BIT(K_LOSS) | BIT(K_INTEGRAND), _i);
    ck_assert_int_eq(ot_callback_lane(), -1);
    ot_ode_free(ode);
}
END_TEST

/* ---- Nesting and other threads ------------------------------------------- */

typedef struct {
    lane_log outer; /* first: rhs reads the user pointer as a lane_log */
    lane_log inner;
    ot_ode *inner_ode;
    int restored_bad;
} nest;

static int inner_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    nest *n = u;
    check_cols(&n->inner, K_RHS, p);
    return st_sine_rhs(t, y, p, f, u);
}

/* Each lane (block) starts with a solve of 3 lanes of its own: their
 * callbacks see 0..2, and this one its own index again after it. */
static int nesting_init(ot_view p, ot_view_mut y0, void *u)
{
    nest *n = u;
    const int64_t before = ot_callback_lane();
    const double ip[6] = {0, 0, 1, 0, 2, 0}, iy0[2] = {0, 1}, it[1] = {1};
    ot_solution *s = NULL;
    const int st =
        ot_solve_dense(n->inner_ode, st_vec(iy0, 2), st_mat(ip, 2, 3), st_vec(it, 1), &s);
    ot_solution_free(s);
    if (st != OT_OK || ot_callback_lane() != before)
        __atomic_fetch_add(&n->restored_bad, 1, __ATOMIC_RELAXED);
    check_cols(&n->outer, K_INIT, p);
    for (int64_t b = 0; b < ST_LANES(y0); b++) {
        ot_view_mut_col_f64(y0, b, 0)[0] = 0;
        ot_view_mut_col_f64(y0, b, 0)[1] = 1;
    }
    return 0;
}

START_TEST(a_nested_solve_restores_the_lane)
{
    nest n = {{{0}, {0}, 0, 0}, {{0}, {0}, 0, 0}, NULL, 0};
    double p[2 * NB];
    lane_params(p);
    const double t[2] = {0.5, 1};
    ot_ode *ode = problem(_i, &n);
    ck_assert_status(ot_ode_set_init(ode, nesting_init), OT_OK, NULL);
    ck_assert_status(ot_ode_new(&n.inner_ode, 2, 2, inner_rhs, &n), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(n.inner_ode, 1), OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, ot_view_absent(), st_mat(p, 2, NB), st_vec(t, 2), &s), OT_OK,
        NULL);
    ot_solution_free(s);
    ck_assert_int_eq(n.restored_bad, 0);
    assert_log(&n.outer, BIT(K_INIT), _i);
    assert_log(&n.inner, BIT(K_RHS), _i);
    ot_ode_free(n.inner_ode);
    ot_ode_free(ode);
}
END_TEST

static void *read_lane(void *out)
{
    *(int64_t *)out = ot_callback_lane();
    return NULL;
}

START_TEST(minus_one_outside_callbacks)
{
    ck_assert_int_eq(ot_callback_lane(), -1);
    int64_t other = 0;
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, read_lane, &other), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_int_eq(other, -1);
    /* a refused solve leaves it too */
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(NULL, ot_view_absent(), ot_view_absent(), ot_view_absent(), &s),
        OT_ERR_ARG, NULL);
    ck_assert_int_eq(ot_callback_lane(), -1);
}
END_TEST

Suite *callback_lane_suite(void)
{
    Suite *s = suite_create("callback_lane");
    TCase *tc = ot_test_tcase(s, "callback_lane", 60);
    tcase_add_loop_test(tc, forward_callbacks_and_events_see_their_lane, 0, 4);
    tcase_add_loop_test(tc, stops_and_steps_see_their_lane, 0, 4);
    tcase_add_loop_test(tc, sensitivity_callbacks_see_their_lane, 0, 4);
    tcase_add_loop_test(tc, adjoint_callbacks_see_their_lane, 0, 4);
    tcase_add_loop_test(tc, a_nested_solve_restores_the_lane, 0, 4);
    tcase_add_test(tc, minus_one_outside_callbacks);
    return s;
}

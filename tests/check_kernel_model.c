/* Compiled models (odetensor/kernel.h, kernel_model.inc; issue 27): a
 * model's rhs and Jacobian compiled into the kernel methods' lane loop, one
 * lane a CPU thread at a time. Its one source with the lane groups shows in
 * bits: every method, per-lane starts and times, the out function, thread
 * counts, lanes failing alone, all equal to the lane groups solving the
 * same model through its callbacks. And the refusals. */
#include <math.h>
#include <string.h>

#include "kmodels.h"
#include "solve_common.h"
#include "suites.h"

extern const ot_kernel_model km_rober_model, km_vdp_model, km_decay_model;

static const int KM_METHODS[] = {OT_ROS23, OT_RODAS4, OT_RODAS5P, OT_TSIT5, OT_VERN7};
enum { KM_NMETHODS = 5, KB = 12, KT = 9 };

/* A problem of model m's callbacks (lane groups of 8: per-lane times). */
static ot_ode *model_ode(const ot_kernel_model *m, int method, double rtol, double atol)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, m->n, m->np, m->rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rhs_lanes(ode, m->rhs_lanes), OT_OK, NULL);
    if (m->jac_lanes)
        ck_assert_status(ot_ode_set_jac_lanes(ode, m->jac_lanes), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, (ot_method)method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, rtol), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, atol), OT_OK, NULL);
    return ode;
}

/* Solves in, once through the callbacks (lane groups) and once compiled,
 * and asserts every lane's bits, count, statistics and status equal.
 * @return the compiled solve (the caller's). */
static ot_solution *assert_groups_equal(ot_ode *ode, const ot_kernel_model *m,
                                        const ot_solve_inputs *in, int64_t nb,
                                        int threads)
{
    ot_solution *groups = NULL, *compiled = NULL;
    const int sg = ot_solve_dense_with(ode, in, &groups);
    ck_assert_status(ot_ode_set_kernel_model(ode, m), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, threads), OT_OK, NULL);
    const int sc = ot_solve_dense_with(ode, in, &compiled);
    ck_assert_status(ot_ode_set_kernel_model(ode, NULL), OT_OK, NULL);
    ck_assert_int_eq(sg, sc);
    for (int64_t b = 0; b < nb; b++) {
        ck_assert_msg(
            st_lane_equal(ot_solution_ys(groups), b, ot_solution_ys(compiled), b),
            "lane %lld's outputs differ", (long long)b);
        ck_assert_int_eq(ot_solution_lane_count(groups, b),
                         ot_solution_lane_count(compiled, b));
        ck_assert_int_eq(ot_solution_lane_status(groups, b),
                         ot_solution_lane_status(compiled, b));
        if (ot_solution_lane_status(groups, b) == OT_OK)
            st_assert_stats_equal(groups, b, compiled, b);
    }
    ot_solution_free(groups);
    return compiled;
}

/* Van der Pol (it reads t; difference-quotient Jacobian), every method,
 * each lane its own mu, start and times. */
START_TEST(a_compiled_model_is_bit_for_bit_the_lane_groups_in_every_method)
{
    double mu[KB], y0[2 * KB], t0[KB], t[KT * KB];
    for (int b = 0; b < KB; b++) {
        mu[b] = 0.5 + 0.4 * b;
        y0[2 * b] = 2.0 - 0.1 * b;
        y0[2 * b + 1] = 0.0;
        t0[b] = 0.1 * b;
        for (int i = 0; i < KT; i++)
            t[b * KT + i] = t0[b] + 0.7 * i * (1 + b % 3);
    }
    for (int k = 0; k < KM_NMETHODS; k++) {
        ot_ode *ode = model_ode(&km_vdp_model, KM_METHODS[k], 1e-7, 1e-9);
        ot_solve_inputs in =
            ot_solve_inputs_make(st_mat(y0, 2, KB), st_mat(mu, 1, KB), st_mat(t, KT, KB));
        in.t0 = st_vec(t0, KB);
        ot_solution *s = assert_groups_equal(ode, &km_vdp_model, &in, KB, 1);
        for (int b = 0; b < KB; b++) {
            ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
            ck_assert_int_eq(ot_solution_lane_count(s, b), KT);
            ck_assert(st_y(s, 0, 0, b) == y0[2 * b]); /* t0 is the first output */
        }
        ot_solution_free(s);
        ot_ode_free(ode);
    }
}
END_TEST

/* Robertson (stiff; the model's Jacobian; autonomous), the Rosenbrock
 * methods, rates spread over lanes, at 1 and 2 threads; and its values
 * against a tight CVODE solve. */
START_TEST(a_compiled_stiff_model_matches_the_groups_at_any_thread_count)
{
    double p[3 * KB], y0[3] = {1, 0, 0}, t[KT];
    for (int b = 0; b < KB; b++) {
        p[3 * b] = 0.04 * (1 + 0.02 * b);
        p[3 * b + 1] = 1e4 * (1 - 0.01 * b);
        p[3 * b + 2] = 3e7;
    }
    for (int i = 0; i < KT; i++)
        t[i] = 1e-3 * pow(10, i * 0.75);
    ot_ode *ref = NULL;
    ck_assert_status(ot_ode_new(&ref, 3, 3, km_rober_model.rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ref, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ref, 1e-20), OT_OK, NULL);
    ot_solution *r = NULL;
    ck_assert_status(
        ot_solve_dense(ref, st_vec(y0, 3), st_mat(p, 3, KB), st_vec(t, KT), &r), OT_OK,
        NULL);
    for (int k = 0; k < 3; k++)
        for (int threads = 1; threads <= 2; threads++) {
            ot_ode *ode = model_ode(&km_rober_model, KM_METHODS[k], 1e-6, 1e-10);
            ck_assert_status(ot_ode_set_autonomous(ode, 1), OT_OK, NULL);
            ot_solve_inputs in =
                ot_solve_inputs_make(st_vec(y0, 3), st_mat(p, 3, KB), st_vec(t, KT));
            ot_solution *s = assert_groups_equal(ode, &km_rober_model, &in, KB, threads);
            for (int b = 0; b < KB; b++)
                for (int i = 0; i < KT; i++)
                    for (int e = 0; e < 3; e++) {
                        const double want = st_y(r, e, i, b), got = st_y(s, e, i, b);
                        /* 100 tolerance units; ros23 is order 2 (check_kernel's bound).
                         */
                        const double units = k == 0 ? 4000 : 100;
                        ck_assert_msg(fabs(got - want) <=
                                          units * (1e-10 + 1e-6 * fabs(want)),
                                      "%s lane %d y%d at %g: %.10g, want %.10g",
                                      k == 0 ? "ros23" : "rodas", b, e, t[i], got, want);
                    }
            ot_solution_free(s);
            ot_ode_free(ode);
        }
    ot_solution_free(r);
    ot_ode_free(ref);
}
END_TEST

/* An out function sees the compiled lanes' states as the groups'. */
static int sum_out(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *Y = ot_view_col_f64(y, b, 0);
        double *O = ot_view_mut_col_f64(o, b, 0);
        O[0] = Y[0] + Y[1] + Y[2];
        O[1] = 1e4 * Y[1];
    }
    return 0;
}

START_TEST(a_compiled_model_writes_its_outputs_through_the_out_function)
{
    double p[3 * KB], y0[3] = {1, 0, 0}, t[KT];
    for (int b = 0; b < KB; b++) {
        p[3 * b] = 0.04 * (1 + 0.05 * b);
        p[3 * b + 1] = 1e4;
        p[3 * b + 2] = 3e7;
    }
    for (int i = 0; i < KT; i++)
        t[i] = 0.5 * i;
    ot_ode *ode = model_ode(&km_rober_model, OT_RODAS5P, 1e-8, 1e-12);
    ck_assert_status(ot_ode_set_out(ode, 2, sum_out), OT_OK, NULL);
    ot_solve_inputs in =
        ot_solve_inputs_make(st_vec(y0, 3), st_mat(p, 3, KB), st_vec(t, KT));
    ot_solution *s = assert_groups_equal(ode, &km_rober_model, &in, KB, 2);
    st_assert_shape(ot_solution_ys(s), 3, 2, KT, KB);
    for (int b = 0; b < KB; b++)
        for (int i = 0; i < KT; i++) /* mass is conserved */
            ck_assert_double_eq_tol(st_y(s, 0, i, b), 1.0, 1e-9);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* km_decay in five roles, repeated with their own rates so that more lanes
 * than a thread steps at once (OT_KM_WIDTH) end at different times and
 * their slots take the next: role 0 and 3 free (y0 exp(-k t)), role 1 meets
 * its retry wall (y < p1), role 2 its failing time (t > p2), role 4 a NaN
 * in y0. The others solve as alone, bit for bit the groups, with the
 * reasons. */
START_TEST(compiled_lanes_fail_alone_with_the_reason)
{
    enum { REP = 5, DB = 5 * REP, DT = 6 };
    double p[3 * DB], y0[DB], t[DT];
    for (int b = 0; b < DB; b++) {
        const int role = b % 5;
        p[3 * b] = (role == 3 ? 2 : 1) * (1 + 0.1 * (b / 5));
        p[3 * b + 1] = role == 1 ? 0.3 : -1;
        p[3 * b + 2] = role == 2 ? 2.5 : 1e9;
        y0[b] = role == 3 ? 2 : role == 4 ? NAN : 1;
    }
    for (int i = 0; i < DT; i++)
        t[i] = 0.8 * i;
    for (int k = 0; k < KM_NMETHODS; k++) {
        ot_ode *ode = model_ode(&km_decay_model, KM_METHODS[k], 1e-8, 1e-12);
        ot_solve_inputs in =
            ot_solve_inputs_make(st_mat(y0, 1, DB), st_mat(p, 3, DB), st_vec(t, DT));
        ot_solution *s = assert_groups_equal(ode, &km_decay_model, &in, DB, 2);
        const int want[5] = {OT_OK, OT_ERR_CALLBACK, OT_ERR_CALLBACK, OT_OK,
                             OT_ERR_VALUE};
        for (int b = 0; b < DB; b++) {
            const int role = b % 5, st = ot_solution_lane_status(s, b);
            const double k0 = p[3 * b];
            if (role == 1) {
                /* It creeps up to its wall, y = 0.3 at t = ln(1 / 0.3) / k: it
                 * fails there, on the rhs's retry at its own point, or by a
                 * step below the time resolution (ros23 takes the last steps
                 * short). It keeps its outputs before the wall. */
                ck_assert_msg(st == OT_ERR_CALLBACK || st == OT_ERR_SOLVER,
                              "method %d: lane %d %s", KM_METHODS[k], b,
                              ot_status_name(st));
                ot_lane_stats st1;
                ck_assert_status(ot_solution_lane_stats(s, b, &st1), OT_OK, NULL);
                ck_assert_double_eq_tol(st1.final_time, log(1 / 0.3) / k0, 1e-3);
                ck_assert_int_eq(ot_solution_lane_count(s, b),
                                 1 + (int)floor(log(1 / 0.3) / k0 / 0.8));
            } else {
                ck_assert_msg(st == want[role], "method %d lane %d: %s (%s)",
                              KM_METHODS[k], b, ot_status_name(st),
                              ot_solution_lane_message(s, b));
            }
            if (role == 2) { /* the rhs's failure past 2.5, named */
                ck_assert_ptr_nonnull(strstr(ot_solution_lane_message(s, b), "km_decay"));
                ck_assert_ptr_nonnull(strstr(ot_solution_lane_message(s, b), "< 0"));
                /* to 1.6, and 2.4 unless the step past it reached t > 2.5 */
                ck_assert_int_ge(ot_solution_lane_count(s, b), 3);
                ck_assert_int_le(ot_solution_lane_count(s, b), 4);
            }
            if (role == 4)
                ck_assert_ptr_nonnull(strstr(ot_solution_lane_message(s, b), "y0"));
            if (role == 0 || role == 3)
                ck_assert_int_eq(ot_solution_lane_count(s, b), DT);
            /* What each lane output is right: 100 tolerance units (ros23,
             * order 2: 4000, check_kernel's), 1e-4 for the failing ones. */
            const double units = KM_METHODS[k] == OT_ROS23 ? 4000 : 100;
            for (int i = 0; role != 4 && i < ot_solution_lane_count(s, b); i++) {
                const double exact = y0[b] * exp(-k0 * t[i]);
                const double tol =
                    role == 0 || role == 3 ? units * (1e-8 * exact + 1e-12) : 1e-4;
                ck_assert_msg(fabs(st_y(s, 0, i, b) - exact) <= tol,
                              "method %d lane %d at %g: %.12g, want %.12g", KM_METHODS[k],
                              b, t[i], st_y(s, 0, i, b), exact);
            }
        }
        ot_solution_free(s);
        ot_ode_free(ode);
    }
}
END_TEST

static int one_root(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0] - 0.5;
    return 0;
}

static int no_handler(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                      void *u)
{
    (void)t, (void)root, (void)lane, (void)y, (void)p, (void)u;
    return 0;
}

static void assert_refused(const ot_ode *ode, const ot_solve_inputs *in, int status,
                           const char *words)
{
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense_with(ode, in, &s), status, words);
    ck_assert_ptr_null(s);
}

START_TEST(what_a_compiled_model_lacks_is_refused_by_name)
{
    const double p[3] = {1, -1, 1e9}, y0[1] = {1}, t[3] = {0, 1, 2}, stops[1] = {0.5};
    ot_ode *ode = model_ode(&km_decay_model, OT_RODAS4, 1e-6, 1e-9);
    ck_assert_status(ot_ode_set_kernel_model(ode, &km_decay_model), OT_OK, NULL);
    ot_solve_inputs in = ot_solve_inputs_make(st_vec(y0, 1), st_vec(p, 3), st_vec(t, 3));
    ck_assert_status(ot_ode_set_roots(ode, 1, one_root), OT_OK, NULL);
    assert_refused(ode, &in, OT_ERR_ARG, "kernel_model");
    ck_assert_status(ot_ode_set_roots(ode, 0, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, no_handler), OT_OK, NULL);
    in.stops = st_vec(stops, 1);
    assert_refused(ode, &in, OT_ERR_ARG, "stops");
    in.stops = ot_view_absent();
    const ot_device cuda = {OT_CUDA, 0};
    ck_assert_status(ot_ode_set_device(ode, cuda), OT_OK, NULL);
    assert_refused(ode, &in, OT_ERR_ARG, "built without nvcc");
    ck_assert_status(ot_ode_set_kernel_model(ode, NULL), OT_OK, NULL);
    assert_refused(ode, &in, OT_ERR_ARG, "compiled model");
    /* A model of another shape or build. */
    ck_assert_status(ot_ode_set_kernel_model(ode, &km_vdp_model), OT_ERR_SHAPE, "n = 2");
    ot_kernel_model other = km_decay_model;
    other.abi = OT_KERNEL_ABI + 1;
    ck_assert_status(ot_ode_set_kernel_model(ode, &other), OT_ERR_VERSION, "ABI");
    ck_assert_status(ot_ode_set_kernel_model(NULL, &km_decay_model), OT_ERR_ARG, "NULL");
    ot_ode_free(ode);
}
END_TEST

/* ---- The Jacobian's contract, which compiled models rely on --------------- */

/* Robertson's Jacobian that writes its nonzeros alone, as ode.h allows ("a
 * zeroed view"), and counts the calls whose view arrived with a nonzero. */
static int dirty_views;

static int nonzeros_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        for (int64_t j = 0; j < 3; j++)
            for (int64_t i = 0; i < 3; i++)
                dirty_views += ot_view_mut_col_f64(J, j, b)[i] != 0;
        robertson_jac(0, ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0),
                      ot_view_mut_col_f64(J, 0, b));
    }
    return 0;
}

/* In every CPU mode the Jacobian's view arrives zeroed at every call (the
 * kernel groups once handed it the last step's J: a Jacobian writing its
 * nonzeros alone then solved with stale entries), and the answers agree. */
START_TEST(a_jacobian_arrives_zeroed_in_every_mode)
{
    double p[3 * KB], y0[3] = {1, 0, 0}, t[KT];
    rober_rates(p, KB);
    for (int i = 0; i < KT; i++)
        t[i] = 1e-3 * pow(10, i * 0.75);
    const struct {
        ot_mode mode;
        ot_method method;
    } runs[] = {{OT_LANES, OT_BDF},
                {OT_LOCKSTEP, OT_BDF},
                {OT_LANES, OT_RODAS4},
                {OT_LANES, OT_ROS23}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        ot_ode *ode = NULL;
        ck_assert_status(ot_ode_new(&ode, 3, 3, st_rober_rhs, NULL), OT_OK, NULL);
        ck_assert_status(ot_ode_set_jac(ode, nonzeros_jac), OT_OK, NULL);
        ck_assert_status(ot_ode_set_mode(ode, runs[r].mode), OT_OK, NULL);
        ck_assert_status(ot_ode_set_method(ode, runs[r].method), OT_OK, NULL);
        ck_assert_status(ot_ode_set_rtol(ode, 1e-6), OT_OK, NULL);
        ck_assert_status(ot_ode_set_atol(ode, 1e-10), OT_OK, NULL);
        dirty_views = 0;
        ot_solution *s = NULL;
        ck_assert_status(
            ot_solve_dense(ode, st_vec(y0, 3), st_mat(p, 3, KB), st_vec(t, KT), &s),
            OT_OK, NULL);
        ck_assert_msg(dirty_views == 0, "run %d: %d Jacobian entries arrived nonzero",
                      (int)r, dirty_views);
        /* Mass is conserved to the tolerance, and no lane took CVODE's
         * hundreds of steps more than a few times over (stale entries made
         * Rodas4 take 9,449 where it takes 116). */
        for (int b = 0; b < KB; b++) {
            ot_lane_stats st;
            ck_assert_status(ot_solution_lane_stats(s, b, &st), OT_OK, NULL);
            ck_assert_int_lt(st.steps, 1000);
            for (int i = 0; i < KT; i++)
                ck_assert_double_eq_tol(
                    st_y(s, 0, i, b) + st_y(s, 1, i, b) + st_y(s, 2, i, b), 1.0, 1e-8);
        }
        ot_solution_free(s);
        ot_ode_free(ode);
    }
}
END_TEST

Suite *kernel_model_suite(void)
{
    Suite *s = suite_create("kernel_model");
    TCase *tc = tcase_create("compiled");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_compiled_model_is_bit_for_bit_the_lane_groups_in_every_method);
    tcase_add_test(tc, a_compiled_stiff_model_matches_the_groups_at_any_thread_count);
    tcase_add_test(tc, a_compiled_model_writes_its_outputs_through_the_out_function);
    tcase_add_test(tc, compiled_lanes_fail_alone_with_the_reason);
    tcase_add_test(tc, what_a_compiled_model_lacks_is_refused_by_name);
    tcase_add_test(tc, a_jacobian_arrives_zeroed_in_every_mode);
    suite_add_tcase(s, tc);
    return s;
}

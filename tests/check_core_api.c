/* The core's small internal API (src/ode/ode_info.h, src/solve/solve_api.h)
 * that libodetensor_mpi uses instead of the private structs, and the solver
 * table that picks a solver from a problem. */
#include <math.h>

#include "solve_common.h"
#include "suites.h"

#include "ode/ode_info.h"
#include "solve/solve.h"
#include "solve/solve_api.h"

static uint64_t fingerprint(const ot_ode *ode)
{
    ot__ode_info d;
    ck_assert_status(ot__ode_describe(ode, &d), OT_OK, NULL);
    return d.fingerprint;
}

static int root_fn(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)y, (void)p, (void)g, (void)u;
    return 0;
}

static int dfdp_fn(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)y, (void)p, (void)d, (void)u;
    return 0;
}

static int event_fn(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                    void *u)
{
    (void)t, (void)root, (void)lane, (void)y, (void)p, (void)u;
    return 0;
}

/* Each change below can alter a lane's result, so each must change the
 * fingerprint that ranks compare. */
enum { NCHANGES = 23 };

static void change(ot_ode *ode, int which)
{
    const double atol[2] = {1e-9, 1e-10};
    const ot_device cuda = {OT_CUDA, 0};
    int st = OT_ERR_ARG;
    switch (which) {
    case 0:
        st = ot_ode_set_rtol(ode, 1e-7);
        break;
    case 1:
        st = ot_ode_set_atol(ode, 1e-11);
        break;
    case 2:
        st = ot_ode_set_atol_vector(ode, st_vec(atol, 2));
        break;
    case 3:
        st = ot_ode_set_t0(ode, -1.0);
        break;
    case 4:
        st = ot_ode_set_first_step(ode, 1e-6);
        break;
    case 5:
        st = ot_ode_set_max_step(ode, 0.5);
        break;
    case 6:
        st = ot_ode_set_max_steps(ode, 77);
        break;
    case 7:
        st = ot_ode_set_method(ode, OT_ADAMS);
        break;
    case 8:
        st = ot_ode_set_mode(ode, OT_LOCKSTEP);
        break;
    case 9:
        st = ot_ode_set_output_dtype(ode, OT_F32);
        break;
    case 10:
        st = ot_ode_set_jac(ode, st_decay_jac);
        break;
    case 11:
        st = ot_ode_set_init(ode, st_decay_init);
        break;
    case 12:
        st = ot_ode_set_out(ode, 2, triple_out);
        break;
    case 13:
        st = ot_ode_set_roots(ode, 1, root_fn);
        break;
    case 14:
        st = ot_ode_set_sens_tolerances(ode, 1e-5, 1e-7);
        break;
    case 15:
        st = ot_ode_set_device(ode, cuda);
        break;
    case 16:
        st = ot_ode_set_lockstep_block(ode, 64);
        break;
    case 17:
        st = ot_ode_set_max_order(ode, 2);
        break;
    case 18:
        st = ot_ode_set_stability_limit_detection(ode, 1);
        break;
    case 19:
        st = ot_ode_set_max_events(ode, 7);
        break;
    case 20:
        st = ot_ode_set_event_handler(ode, event_fn);
        break;
    case 21:
        st = ot_ode_set_dfdp(ode, dfdp_fn);
        break;
    case 22:
        st = ot_ode_set_sens_initial(ode, 1);
        break;
    default:
        break;
    }
    ck_assert_status(st, OT_OK, NULL);
}

START_TEST(every_option_that_changes_results_changes_the_fingerprint)
{
    ot_ode *a = decay_ode(2, 1e-6, 1e-9), *b = decay_ode(2, 1e-6, 1e-9);
    const uint64_t base = fingerprint(a);
    ck_assert_uint_eq(fingerprint(b), base); /* built the same way: equal */
    change(b, _i);
    ck_assert_msg(fingerprint(b) != base, "change %d kept the fingerprint", _i);
    ot_ode_free(a);
    ot_ode_free(b);
}
END_TEST

/* Root directions and event actions are per root function: each entry
 * enters the fingerprint. */
START_TEST(root_directions_and_event_actions_change_the_fingerprint)
{
    ot_ode *a = decay_ode(2, 1e-6, 1e-9);
    ck_assert_status(ot_ode_set_roots(a, 1, root_fn), OT_OK, NULL);
    const uint64_t base = fingerprint(a);
    const int rising = OT_ROOT_RISING, record = OT_EVENT_RECORD;
    ck_assert_status(ot_ode_set_root_directions(a, &rising), OT_OK, NULL);
    const uint64_t dir = fingerprint(a);
    ck_assert(dir != base);
    ck_assert_status(ot_ode_set_event_actions(a, &record), OT_OK, NULL);
    ck_assert(fingerprint(a) != dir && fingerprint(a) != base);
    ot_ode_free(a);
}
END_TEST

START_TEST(threads_and_progress_leave_the_fingerprint_alone)
{
    /* Neither changes a lane's result (lanes are bit-identical for any
     * thread count), so ranks may differ in them. */
    ot_ode *a = decay_ode(2, 1e-6, 1e-9);
    const uint64_t base = fingerprint(a);
    ck_assert_status(ot_ode_set_threads(a, 3), OT_OK, NULL);
    ck_assert_uint_eq(fingerprint(a), base);
    ot__ode_info d;
    ck_assert_status(ot__ode_describe(a, &d), OT_OK, NULL);
    ck_assert_int_eq(d.n, 2);
    ck_assert_int_eq(d.np, 2);
    ck_assert_int_eq(d.rows, 2);
    ck_assert_int_eq(d.threads, 3);
    ck_assert(!d.has_init && !d.outputs_on_device);
    ck_assert_status(ot__ode_describe(NULL, &d), OT_ERR_ARG, "ode: NULL");
    ot_ode_free(a);
}
END_TEST

START_TEST(time_checks_name_the_time_that_breaks_a_rule)
{
    const double ok[3] = {0, 1, 2}, same[3] = {0, 1, 1}, early[2] = {-1, 1};
    const double bad[2] = {0, NAN};
    ck_assert_status(ot__times_check_values(ok, 3, 0), OT_OK, NULL);
    ck_assert_status(ot__times_check_values(same, 3, 0), OT_ERR_VALUE,
                     "t_eval: t_eval[2] = 1 is not after t_eval[1] = 1");
    ck_assert_status(ot__times_check_values(early, 2, 0), OT_ERR_VALUE,
                     "t_eval: t_eval[0] = -1 is before t0 = 0");
    ck_assert_status(ot__times_check_values(bad, 2, 0), OT_ERR_VALUE,
                     "t_eval: t_eval[1] is nan; times must be finite");
    ck_assert_status(ot__times_check_shape(ot_view_absent()), OT_ERR_ARG,
                     "t_eval: absent");
    ck_assert_status(ot__times_check_shape(st_mat(ok, 3, 1)), OT_ERR_SHAPE,
                     "t_eval: needs shape [nt]");
    ck_assert_status(ot__times_check_shape(st_vec(ok, 3)), OT_OK, NULL);
}
END_TEST

typedef struct {
    int64_t calls, last_done, last_total;
} progress_log;

static int log_progress(int64_t done, int64_t total, void *user)
{
    progress_log *l = user;
    l->calls++;
    l->last_done = done;
    l->last_total = total;
    return 0;
}

START_TEST(a_solve_reports_to_the_progress_hook_it_is_given)
{
    enum { NB = 6 };
    double k[NB], y0[2 * NB];
    decay_inputs(k, y0, NB);
    const double t[2] = {0.5, 1.0};
    progress_log own = {0, 0, 0}, given = {0, 0, 0};
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    ck_assert_status(ot_ode_set_progress(ode, log_progress, &own), OT_OK, NULL);
    if (_i)
        ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    ot_solution *a = NULL, *b = NULL;
    ck_assert_status(ot__solve_at_times(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB),
                                        st_vec(t, 2), 0,
                                        (ot__progress){log_progress, &given}, 0, &a),
                     OT_OK, NULL);
    ck_assert_int_eq(own.calls, 0);
    ck_assert_int_eq(given.last_done, NB);
    ck_assert_int_eq(given.last_total, NB);
    ck_assert_int_eq(given.calls, _i ? 2 : NB); /* lockstep: at each output time */
    /* The same answer as the public entry, bit for bit. */
    ck_assert_status(
        ot_solve_dense(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB), st_vec(t, 2), &b), OT_OK,
        NULL);
    ck_assert_int_eq(own.last_done, NB);
    ck_assert(memcmp(ot_tensor_layout(ot_solution_ys(a))->data,
                     ot_tensor_layout(ot_solution_ys(b))->data,
                     st_bytes(ot_solution_ys(a))) == 0);
    ot_solution_free(a);
    ot_solution_free(b);
    ot_ode_free(ode);
}
END_TEST

START_TEST(the_solver_table_picks_by_mode_and_device)
{
    ot_ode *ode = decay_ode(1, 1e-6, 1e-9);
    const ot__solver *s = ot__solver_for(ode);
    ck_assert_str_eq(s->name, "lanes");
    ck_assert(s->run != NULL && !s->lockstep && !s->device_inputs);
    ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    s = ot__solver_for(ode);
    ck_assert_str_eq(s->name, "lockstep");
    ck_assert(s->lockstep && !s->device_inputs && s->host_copy == NULL);
    const ot_device cuda = {OT_CUDA, 0};
    ck_assert_status(ot_ode_set_device(ode, cuda), OT_OK, NULL);
    s = ot__solver_for(ode);
    ck_assert_str_eq(s->name, "lockstep on CUDA");
    ck_assert(s->device_inputs && s->host_copy && s->alloc_output &&
              s->pad_device_outputs);
    ot_ode_free(ode);
}
END_TEST

Suite *core_api_suite(void)
{
    Suite *s = suite_create("core_api");
    TCase *tc = ot_test_tcase(s, "core_api", 30);
    tcase_add_loop_test(tc, every_option_that_changes_results_changes_the_fingerprint, 0,
                        NCHANGES);
    tcase_add_test(tc, threads_and_progress_leave_the_fingerprint_alone);
    tcase_add_test(tc, root_directions_and_event_actions_change_the_fingerprint);
    tcase_add_test(tc, time_checks_name_the_time_that_breaks_a_rule);
    tcase_add_loop_test(tc, a_solve_reports_to_the_progress_hook_it_is_given, 0, 2);
    tcase_add_test(tc, the_solver_table_picks_by_mode_and_device);
    return s;
}

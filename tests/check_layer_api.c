/* The public API for layers built on odetensor (libodetensor_mpi, bindings,
 * schedulers), which use the public headers only: messages set from above
 * (ot_set_error), a problem's description and fingerprint
 * (ot_ode_describe), the output-time check (ot_times_check); solves of a
 * part of a batch: check_solve_options.c; assembled solutions:
 * check_assemble.c. Each function's
 * refusals (status and message) and its results. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "solve_common.h"
#include "suites.h"

/* ---- ot_set_error ------------------------------------------------------- */

START_TEST(a_layer_above_sets_the_message_and_gets_its_status_back)
{
    ot_clear_error();
    ck_assert_int_eq(ot_set_error(OT_ERR_MPI, "comm: rank %d of %d", 3, 4), OT_ERR_MPI);
    ck_assert_str_eq(ot_last_error(), "comm: rank 3 of 4");
    ck_assert_int_eq(ot_set_error(OT_ERR_VALUE, "plain"), OT_ERR_VALUE);
    ck_assert_str_eq(ot_last_error(), "plain");
}
END_TEST

START_TEST(the_message_may_quote_the_last_one)
{
    /* "...: %s", ot_last_error(): formatted before the old one is replaced. */
    ot_set_error(OT_ERR_SHAPE, "y0: shape [2, 3]");
    ck_assert_int_eq(ot_set_error(OT_ERR_SHAPE, "block 4 on rank 1: %s", ot_last_error()),
                     OT_ERR_SHAPE);
    ck_assert_str_eq(ot_last_error(), "block 4 on rank 1: y0: shape [2, 3]");
}
END_TEST

START_TEST(a_long_message_is_cut_at_511_bytes)
{
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ck_assert_int_eq(ot_set_error(OT_ERR_ARG, "%s", big), OT_ERR_ARG);
    ck_assert_uint_eq(strlen(ot_last_error()), 511);
}
END_TEST

START_TEST(set_error_refuses_success_unknown_codes_and_a_null_format)
{
    ck_assert_status(ot_set_error(OT_OK, "fine"), OT_ERR_ARG,
                     "ot_set_error: status is 0; give a failure code");
    ck_assert_status(ot_set_error(-77, "what"), OT_ERR_ARG,
                     "ot_set_error: status is -77");
    const char *none = NULL;
    ck_assert_status(ot_set_error(OT_ERR_VALUE, none, 0), OT_ERR_ARG,
                     "ot_set_error: fmt is NULL");
}
END_TEST

/* ---- ot_ode_describe --------------------------------------------------- */

static uint64_t fingerprint(const ot_ode *ode)
{
    ot_ode_info d = {.size = sizeof d};
    ck_assert_status(ot_ode_describe(ode, &d), OT_OK, NULL);
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
enum { NCHANGES = 24 };

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
    case 23:
        st = ot_ode_set_outputs_before_stops(ode, 1);
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
    ot_ode_free(a);
}
END_TEST

START_TEST(a_description_gives_the_sizes_and_options)
{
    ot_ode *a = decay_ode(1, 1e-6, 1e-9);
    ot_ode_info d = {.size = sizeof d};
    ck_assert_status(ot_ode_describe(a, &d), OT_OK, NULL);
    ck_assert_uint_eq(d.size, sizeof d);
    ck_assert_int_eq(d.nstates, 2);
    ck_assert_int_eq(d.nparams, 1);
    ck_assert_int_eq(d.nout, 0);
    ck_assert_int_eq(d.nroots, 0);
    ck_assert_int_eq(d.nsens, 1);
    ck_assert_int_eq(d.rows, 2);
    ck_assert_int_eq(d.mode, OT_LANES);
    ck_assert_int_eq(d.threads, 0);
    ck_assert_int_eq(d.out_dtype, OT_F64);
    ck_assert(!d.has_init && !d.outputs_on_device && !d.records_events);
    ck_assert_int_eq(d.device.type, OT_CPU);
    ck_assert(d.t0 == 0.0);
    /* Each setter shows in its field. */
    const int record = OT_EVENT_RECORD;
    ck_assert_status(ot_ode_set_out(a, 3, triple_out), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(a, 1, root_fn), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_actions(a, &record), OT_OK, NULL);
    ck_assert_status(ot_ode_set_init(a, st_decay_init), OT_OK, NULL);
    ck_assert_status(ot_ode_set_sens_initial(a, 1), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(a, OT_LOCKSTEP), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(a, 3), OT_OK, NULL);
    ck_assert_status(ot_ode_set_output_dtype(a, OT_F32), OT_OK, NULL);
    ck_assert_status(ot_ode_set_t0(a, -2.5), OT_OK, NULL);
    ck_assert_status(ot_ode_describe(a, &d), OT_OK, NULL);
    ck_assert_int_eq(d.nout, 3);
    ck_assert_int_eq(d.rows, 3);
    ck_assert_int_eq(d.nroots, 1);
    ck_assert_int_eq(d.nsens, 1 + 2);
    ck_assert_int_eq(d.mode, OT_LOCKSTEP);
    ck_assert_int_eq(d.threads, 3);
    ck_assert_int_eq(d.out_dtype, OT_F32);
    ck_assert(d.has_init && d.records_events && !d.outputs_on_device);
    ck_assert(d.t0 == -2.5);
    ot_ode_free(a);
}
END_TEST

START_TEST(a_description_fills_only_the_bytes_the_caller_has)
{
    ot_ode *a = decay_ode(1, 1e-6, 1e-9);
    /* An older caller's struct, up to the fingerprint: nothing past it is
     * written. */
    const size_t v1 = offsetof(ot_ode_info, fingerprint) + sizeof(uint64_t);
    unsigned char buf[sizeof(ot_ode_info) + 16];
    memset(buf, 0xab, sizeof buf);
    ot_ode_info *d = (ot_ode_info *)(void *)buf;
    d->size = v1;
    ck_assert_status(ot_ode_describe(a, d), OT_OK, NULL);
    ck_assert_uint_eq(d->size, v1);
    ck_assert_int_eq(d->nstates, 2);
    ck_assert_uint_eq(d->fingerprint, fingerprint(a));
    for (size_t k = v1; k < sizeof buf; k++)
        ck_assert_uint_eq(buf[k], 0xab);
    /* A newer caller's, larger: the library's bytes filled, the rest kept. */
    memset(buf, 0xab, sizeof buf);
    d->size = sizeof buf;
    ck_assert_status(ot_ode_describe(a, d), OT_OK, NULL);
    ck_assert_uint_eq(d->size, sizeof(ot_ode_info));
    for (size_t k = sizeof(ot_ode_info); k < sizeof buf; k++)
        ck_assert_uint_eq(buf[k], 0xab);
    ot_ode_free(a);
}
END_TEST

START_TEST(describe_refuses_null_and_a_size_too_small)
{
    ot_ode *a = decay_ode(1, 1e-6, 1e-9);
    ot_ode_info d = {.size = sizeof d};
    ck_assert_status(ot_ode_describe(NULL, &d), OT_ERR_ARG, "ode: NULL");
    ck_assert_status(ot_ode_describe(a, NULL), OT_ERR_ARG, "info: NULL");
    d.size = 0; /* forgotten */
    d.nstates = -7;
    ck_assert_status(ot_ode_describe(a, &d), OT_ERR_ARG,
                     "info: size is 0 bytes; set info->size = sizeof(ot_ode_info) first");
    ck_assert_int_eq(d.nstates, -7); /* untouched */
    d.size = offsetof(ot_ode_info, fingerprint);
    ck_assert_status(ot_ode_describe(a, &d), OT_ERR_ARG, "bytes at least");
    ot_ode_free(a);
}
END_TEST

/* ---- ot_times_check ---------------------------------------------------- */

START_TEST(time_checks_name_the_time_that_breaks_a_rule)
{
    const double ok[3] = {0, 1, 2}, same[3] = {0, 1, 1}, early[2] = {-1, 1};
    const double bad[2] = {0, NAN}, both[2] = {-1, NAN};
    ck_assert_status(ot_times_check(st_vec(ok, 3), 0), OT_OK, NULL);
    ck_assert_status(ot_times_check(st_vec(ok + 2, 1), 2), OT_OK, NULL); /* at t0 */
    ck_assert_status(ot_times_check(st_vec(same, 3), 0), OT_ERR_VALUE,
                     "t_eval: t_eval[2] = 1 is not after t_eval[1] = 1");
    ck_assert_status(ot_times_check(st_vec(early, 2), 0), OT_ERR_VALUE,
                     "t_eval: t_eval[0] = -1 is before t0 = 0");
    ck_assert_status(ot_times_check(st_vec(ok, 3), 0.5), OT_ERR_VALUE,
                     "t_eval: t_eval[0] = 0 is before t0 = 0.5");
    ck_assert_status(ot_times_check(st_vec(bad, 2), 0), OT_ERR_VALUE,
                     "t_eval: t_eval[1] is nan; times must be finite");
    /* Finite and increasing come first, then the start. */
    ck_assert_status(ot_times_check(st_vec(both, 2), 0), OT_ERR_VALUE,
                     "t_eval[1] is nan");
}
END_TEST

START_TEST(time_checks_read_f32_times)
{
    const float ok[3] = {0.5f, 1, 2}, same[2] = {1, 1};
    ck_assert_status(ot_times_check(st_view_t(ok, OT_F32, 3, -1), 0), OT_OK, NULL);
    ck_assert_status(ot_times_check(st_view_t(same, OT_F32, 2, -1), 0), OT_ERR_VALUE,
                     "t_eval: t_eval[1] = 1 is not after t_eval[0] = 1");
}
END_TEST

START_TEST(time_checks_refuse_an_absent_view_other_shapes_and_device_memory)
{
    const double ok[3] = {0, 1, 2};
    ck_assert_status(ot_times_check(ot_view_absent(), 0), OT_ERR_ARG,
                     "t_eval: absent; give the output times");
    ck_assert_status(ot_times_check(st_mat(ok, 3, 1), 0), OT_ERR_SHAPE,
                     "t_eval: needs shape [nt] with nt >= 1 (ndim 2)");
    ck_assert_status(ot_times_check(st_vec(ok, 0), 0), OT_ERR_SHAPE,
                     "t_eval: needs shape [nt] with nt >= 1");
    const ot_device cuda = {OT_CUDA, 0};
    const int64_t nt = 3;
    ot_view dev;
    ck_assert_status(ot_view_make(&dev, ok, OT_F64, cuda, 1, &nt, NULL), OT_OK, NULL);
    ck_assert_status(ot_times_check(dev, 0), OT_ERR_DEVICE,
                     "t_eval: must be in host memory");
}
END_TEST

START_TEST(time_checks_give_the_solves_own_message)
{
    const double same[3] = {0, 1, 1}, k = 0.5, y0[2] = {1, 1};
    ot_ode *ode = decay_ode(1, 1e-6, 1e-9);
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_vec(&k, 1), st_vec(same, 3), &sol),
        OT_ERR_VALUE, "t_eval");
    char solve_msg[512];
    snprintf(solve_msg, sizeof solve_msg, "%s", ot_last_error());
    ck_assert_status(ot_times_check(st_vec(same, 3), 0), OT_ERR_VALUE, NULL);
    ck_assert_str_eq(ot_last_error(), solve_msg);
    ot_ode_free(ode);
}
END_TEST

Suite *layer_api_suite(void)
{
    Suite *s = suite_create("layer_api");
    TCase *tc = ot_test_tcase(s, "layer_api", 30);
    tcase_add_test(tc, a_layer_above_sets_the_message_and_gets_its_status_back);
    tcase_add_test(tc, the_message_may_quote_the_last_one);
    tcase_add_test(tc, a_long_message_is_cut_at_511_bytes);
    tcase_add_test(tc, set_error_refuses_success_unknown_codes_and_a_null_format);
    tcase_add_test(tc, a_description_gives_the_sizes_and_options);
    tcase_add_test(tc, a_description_fills_only_the_bytes_the_caller_has);
    tcase_add_test(tc, describe_refuses_null_and_a_size_too_small);
    tcase_add_loop_test(tc, every_option_that_changes_results_changes_the_fingerprint, 0,
                        NCHANGES);
    tcase_add_test(tc, root_directions_and_event_actions_change_the_fingerprint);
    tcase_add_test(tc, threads_and_progress_leave_the_fingerprint_alone);
    tcase_add_test(tc, time_checks_name_the_time_that_breaks_a_rule);
    tcase_add_test(tc, time_checks_read_f32_times);
    tcase_add_test(tc, time_checks_refuse_an_absent_view_other_shapes_and_device_memory);
    tcase_add_test(tc, time_checks_give_the_solves_own_message);
    return s;
}

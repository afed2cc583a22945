/* Check suite: messages that name the argument and the rule, and inputs of
 * one lane read as a batch of one would be (issue 23, item 11). Each case
 * was a message that misread its input, or a refusal of a valid one. */
#include <math.h>

#include "solve_common.h"

/* Two lanes (or one) of the decay problem, both modes. */
static ot_ode *decay_in(int mode)
{
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    return ode;
}

static const int MODES[2] = {OT_LANES, OT_LOCKSTEP};

static int no_change(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                     void *user)
{
    (void)t, (void)root, (void)lane, (void)y, (void)p, (void)user;
    return 0;
}

START_TEST(stops_without_entries_are_refused_with_their_shape)
{
    ot_ode *ode = decay_in(MODES[_i]);
    ck_assert_status(ot_ode_set_event_handler(ode, no_change), OT_OK, NULL);
    double k[2], y0[4], t[3] = {0, 1, 2}, none[1] = {0};
    decay_inputs(k, y0, 2);
    ot_solve_inputs in =
        ot_solve_inputs_make(st_mat(y0, 2, 2), st_mat(k, 1, 2), st_vec(t, 3));
    const int64_t zero[1] = {0};
    ck_assert_status(ot_view_make(&in.stops, none, OT_F64, ST_CPU, 1, zero, NULL), OT_OK,
                     NULL);
    ot_solution *s = NULL;
    /* It said "needs shape [n]": [0] has that shape, with n = 0. */
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_ERR_SHAPE,
                     "stops: shape [0]; needs [n], [n, 1] or [n, nbatch], n >= 1");
    ck_assert_ptr_null(s);
    ot_ode_free(ode);
}
END_TEST

START_TEST(a_lane_that_starts_after_the_shared_times_is_named)
{
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    double k[3], y0[6], t[3] = {1, 2, 3}, t0[3] = {0, 0.5, 2};
    decay_inputs(k, y0, 3);
    ot_solve_inputs in =
        ot_solve_inputs_make(st_mat(y0, 2, 3), st_mat(k, 1, 3), st_vec(t, 3));
    in.t0 = st_vec(t0, 3);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_ERR_VALUE,
                     "t_eval: t_eval[0] = 1 is before lane 2's t0 = 2");
    /* Values wrong elsewhere still get their own message. */
    t[2] = NAN;
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_ERR_VALUE,
                     "t_eval[2] is nan; times must be finite");
    ot_ode_free(ode);
}
END_TEST

START_TEST(a_wrong_time_shape_for_one_lane_names_the_two_it_takes)
{
    ot_ode *ode = decay_in(MODES[_i]);
    double k[1] = {0.3}, y0[2] = {1, 2}, t[4] = {0, 1, 2, 3};
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_vec(k, 1), st_mat(t, 2, 2), &s),
        OT_ERR_SHAPE,
        "t_eval: shape [2, 2]; expected [nt] or [nt, 1] (nt >= 1) for one lane");
    ck_assert_msg(strstr(ot_last_error(), "[nt, 1] or [nt, 1]") == NULL, "%s",
                  ot_last_error());
    ot_ode_free(ode);
}
END_TEST

/* One lane's column of times [nt, 1], NaN-padded like any lane's in a
 * batch: it was refused ("times must be finite") where [nt] was solved.
 * Now its real times give the bits of the [nt] solve and NaN after. */
START_TEST(one_lane_times_may_be_nan_padded_like_a_batch_column)
{
    ot_ode *ode = decay_in(MODES[_i]);
    double k[1] = {0.3}, y0[2] = {1, 2}, t[4] = {0, 1, 2.5, NAN};
    ot_solution *padded = NULL, *plain = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_vec(k, 1), st_mat(t, 4, 1), &padded), OT_OK,
        NULL);
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_vec(k, 1), st_vec(t, 3), &plain), OT_OK,
        NULL);
    ck_assert_int_eq(ot_solution_lane_count(padded, 0), 3);
    for (int64_t i = 0; i < 3; i++)
        for (int64_t r = 0; r < 2; r++) {
            ck_assert(st_y(padded, r, i, 0) == st_y(plain, r, i, 0));
            ck_assert_double_eq_tol(st_y(padded, r, i, 0),
                                    st_decay_exact(r, y0[r], k[0], t[i]), 1e-6);
        }
    ck_assert(isnan(st_y(padded, 0, 3, 0)) && isnan(st_y(padded, 1, 3, 0)));
    st_assert_shape(ot_solution_ts(padded), 2, 4, 1, 1);
    ot_solution_free(padded);
    ot_solution_free(plain);
    ot_ode_free(ode);
}
END_TEST

/* loss.data of shape [3] was described as "[3, 0] ... [0] (1 axes)"; f32
 * data got OT_ERR_ARG where f32 stops and t0 get OT_ERR_DTYPE. */
START_TEST(loss_data_refusals_show_its_shape_and_dtype)
{
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    double k[2], y0[4], t[3] = {0, 1, 2}, d[12] = {0};
    float df[12] = {0};
    decay_inputs(k, y0, 2);
    ot_solution *s = NULL;
    ot_loss loss = ot_loss_squares(st_vec(d, 3), ot_view_absent());
    ck_assert_status(
        ot_solve_adjoint(ode, st_mat(y0, 2, 2), st_mat(k, 1, 2), st_vec(t, 3), &loss, &s),
        OT_ERR_SHAPE,
        "loss.data: shape [3] (1 axis); expected [n = 2, nt = 3] or [2, 3, nbatch = 2]");
    loss = ot_loss_squares(st_view_t(df, OT_F32, 2, 3), ot_view_absent());
    ck_assert_status(
        ot_solve_adjoint(ode, st_mat(y0, 2, 2), st_mat(k, 1, 2), st_vec(t, 3), &loss, &s),
        OT_ERR_DTYPE, "loss.data: must be f64");
    ck_assert_ptr_null(s);
    ot_ode_free(ode);
}
END_TEST

Suite *messages_suite(void)
{
    Suite *s = suite_create("messages");
    TCase *tc = ot_test_tcase(s, "shapes", 30);
    tcase_add_loop_test(tc, stops_without_entries_are_refused_with_their_shape, 0, 2);
    tcase_add_test(tc, a_lane_that_starts_after_the_shared_times_is_named);
    tcase_add_loop_test(tc, a_wrong_time_shape_for_one_lane_names_the_two_it_takes, 0, 2);
    tcase_add_loop_test(tc, one_lane_times_may_be_nan_padded_like_a_batch_column, 0, 2);
    tcase_add_test(tc, loss_data_refusals_show_its_shape_and_dtype);
    return s;
}

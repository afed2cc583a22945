/* The adjoint through events on the other models of event_models.h,
 * against the complex step of their closed forms, both modes: the dosed
 * oral two-compartment model (the lag through stops_dp), an infusion whose
 * rate a handler sets from a parameter (mu's jump), and the bouncing
 * ball's restitution, gravity and drop height (a root: the event time's
 * term). */
#include "event_models.h"

/* ---- Two compartments, an infusion, the ball -------------------------------- */

/* Which state a row loss reads, scaled. */
typedef struct {
    int64_t row;
    double scale;
} row_of;

/* sum_i (scale y_row(t_i) - 0.1 i)^2, custom, for any model. */
static int row_loss(double t, int64_t i, int64_t lane, ot_view y, ot_view p,
                    ot_view_mut g, ot_view_mut dgdy, ot_view_mut dgdp, void *user)
{
    (void)t, (void)lane, (void)p, (void)dgdp;
    const row_of *r = user;
    const double res = ot_view_col_f64(y, 0, 0)[r->row] * r->scale - 0.1 * (double)i;
    ot_view_mut_col_f64(g, 0, 0)[0] = res * res;
    ot_view_mut_col_f64(dgdy, 0, 0)[r->row] = 2 * res * r->scale;
    return 0;
}

/* Every parameter of the dosed two-compartment model, the lag through
 * stops_dp: the loss on the central amount / 10. */
START_TEST(two_compartment_adjoint_matches_the_closed_form)
{
    const double params[P2_NP * 2] = {1.1, 4.0, 25.0, 6.0, 60.0, 0.7, 0.4,
                                      0.6, 2.5, 15.0, 2.0, 40.0, 0.9, 0.8};
    double stops[4], dp[P2_NP * 2 * 2] = {0};
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < 2; k++) {
            stops[2 * b + k] = p2_doses[k] + params[P2_NP * b + 6];
            dp[(2 * b + k) * P2_NP + 6] = 1.0;
        }
    ot_ode *ode = p2_ode(_i);
    const double y0[3] = {0, 0, 0}, scale = 0.1;
    const row_of central = {1, scale};
    ot_solve_inputs in = ot_solve_inputs_make(st_vec(y0, 3), st_mat(params, P2_NP, 2),
                                              st_vec(p2_t, P2_NT));
    in.stops = st_mat(stops, 2, 2);
    const int64_t shape[3] = {P2_NP, 2, 2};
    ck_assert_status(ot_view_make(&in.stops_dp, dp, OT_F64, ST_CPU, 3, shape, NULL),
                     OT_OK, NULL);
    ck_assert_status(ot_ode_set_out(ode, 0, NULL), OT_OK, NULL); /* loss on y */
    const ot_loss loss = ot_loss_custom(row_loss, (void *)&central);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_adjoint_with(ode, &in, &loss, &s), OT_OK, NULL);
    for (int b = 0; b < 2; b++) {
        double complex pc[P2_NP];
        for (int j = 0; j < P2_NP; j++)
            pc[j] = params[P2_NP * b + j];
        for (int j = 0; j < P2_NP; j++) {
            pc[j] += I * 1e-30;
            double complex L = 0; /* central amount = C V1 */
            for (int i = 0; i < P2_NT; i++) {
                const double complex r = p2_closed(p2_t[i], pc) * pc[2] * scale - 0.1 * i;
                L += r * r;
            }
            pc[j] = params[P2_NP * b + j];
            near(grad_at(s, OT_GRAD_PARAMS, j, b), cimag(L) / 1e-30, 1e-6, 1e-9, "dL/dp",
                 b, j);
        }
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* The rate the handler copies from R at t = 1 and zeroes at 3: dL/dR
 * comes only through mu's jump (the handler's p row), dL/d rate0 only
 * before it, dL/dy0 through both. */
START_TEST(an_adjoint_follows_a_rate_set_from_a_parameter)
{
    const double p[3] = {0.4, 2.0, 0.3}, y0 = 1.5, stops[2] = {1, 3},
                 t[6] = {0.5, 1, 2, 3, 4, 6};
    const row_of only = {0, 1.0};
    ot_ode *ode = inf_ode(_i);
    ot_solve_inputs in = ot_solve_inputs_make(st_vec(&y0, 1), st_vec(p, 3), st_vec(t, 6));
    in.stops = st_vec(stops, 2);
    const ot_loss loss = ot_loss_custom(row_loss, (void *)&only);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_adjoint_with(ode, &in, &loss, &s), OT_OK, NULL);
    for (int j = 0; j < 4; j++) {
        double complex pc[3] = {p[0], p[1], p[2]}, yc = y0, L = 0;
        if (j < 3)
            pc[j] += I * 1e-30;
        else
            yc += I * 1e-30;
        for (int i = 0; i < 6; i++) {
            const double complex r = inf_closed(t[i], pc, yc) - 0.1 * i;
            L += r * r;
        }
        const double got =
            j < 3 ? grad_at(s, OT_GRAD_PARAMS, j, 0) : grad_at(s, OT_GRAD_Y0, 0, 0);
        near(got, cimag(L) / 1e-30, 1e-6, 1e-9, "dL/dz", 0, j);
        if (j == 0)
            near(grad_at(s, OT_GRAD_LOSS, 0, 0), creal(L), 1e-8, 1e-12, "loss", 0, 0);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* dL/dg, dL/de and dL/dh0 across the bounce (a root: the event time's
 * term) against the flight formula, both modes, two drops. */
START_TEST(bouncing_ball_adjoint_matches_the_flight_formula)
{
    const double p[4] = {9.81, 0.8, 9.81, 0.9}, y0[4] = {2.0, 0, 1.0, 0},
                 T[2] = {0.9, 1.2};
    ot_ode *ode = ball_ode(_i);
    ot_solve_inputs in =
        ot_solve_inputs_make(st_mat(y0, 2, 2), st_mat(p, 2, 2), st_vec(T, 2));
    const ot_loss loss = ot_loss_custom(height_loss, NULL);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_adjoint_with(ode, &in, &loss, &s), OT_OK, NULL);
    for (int b = 0; b < 2; b++) {
        const double g = p[2 * b], e = p[2 * b + 1], h0 = y0[2 * b], d = 1e-30;
        ck_assert_int_eq(ot_solution_lane_event_count(s, b), 1);
        double want[3] = {0, 0, 0}, L = 0;
        for (int i = 0; i < 2; i++) {
            L += creal(ball_closed(T[i], g, e, h0));
            want[0] += cimag(ball_closed(T[i], g + I * d, e, h0)) / d;
            want[1] += cimag(ball_closed(T[i], g, e + I * d, h0)) / d;
            want[2] += cimag(ball_closed(T[i], g, e, h0 + I * d)) / d;
        }
        near(grad_at(s, OT_GRAD_LOSS, 0, b), L, 1e-8, 1e-10, "loss", b, 0);
        near(grad_at(s, OT_GRAD_PARAMS, 0, b), want[0], 1e-6, 1e-9, "dL/dg", b, 0);
        near(grad_at(s, OT_GRAD_PARAMS, 1, b), want[1], 1e-6, 1e-9, "dL/de", b, 1);
        near(grad_at(s, OT_GRAD_Y0, 0, b), want[2], 1e-6, 1e-9, "dL/dh0", b, 2);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

Suite *adjoint_models_suite(void)
{
    Suite *s = suite_create("adjoint_models");
    TCase *tc = ot_test_tcase(s, "through doses", 60);
    tcase_add_loop_test(tc, two_compartment_adjoint_matches_the_closed_form, 0, 2);
    tcase_add_loop_test(tc, an_adjoint_follows_a_rate_set_from_a_parameter, 0, 2);
    tc = ot_test_tcase(s, "through roots", 60);
    tcase_add_loop_test(tc, bouncing_ball_adjoint_matches_the_flight_formula, 0, 2);
    return s;
}

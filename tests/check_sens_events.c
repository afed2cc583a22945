/* Forward sensitivities through doses and events (ot_solve_fwd_sens_with,
 * run/sens_jump.c), against the complex-step derivatives of closed forms
 * (exact to rounding, independent of the solver) and central differences
 * of the solver itself: a dosed oral one-compartment model with a lag
 * and bioavailability, a two-compartment one, an infusion whose rate a
 * handler sets from a fitted parameter, and the bouncing ball's
 * restitution and drop height.
 * Both modes; lanes mode against one lane of lockstep and thread counts
 * bit for bit. */
#include "event_models.h"

/* Solves the patients with their stops t_d + lag and d stop / d lag = 1. */
static ot_solution *pk_solve(ot_ode *ode, const double *params)
{
    static double stops[PK_NDOSE * PK_NB], dp[PK_NP * PK_NDOSE * PK_NB];
    for (int b = 0; b < PK_NB; b++)
        for (int k = 0; k < PK_NDOSE; k++) {
            stops[b * PK_NDOSE + k] = pk_doses[k] + params[b * PK_NP + 4];
            for (int j = 0; j < PK_NP; j++)
                dp[(b * PK_NDOSE + k) * PK_NP + j] = j == 4 ? 1.0 : 0.0;
        }
    const double y0[2] = {0, 0};
    ot_solve_inputs in = ot_solve_inputs_make(st_vec(y0, 2), st_mat(params, PK_NP, PK_NB),
                                              st_vec(pk_t, PK_NT));
    in.stops = st_mat(stops, PK_NDOSE, PK_NB);
    const int64_t shape[3] = {PK_NP, PK_NDOSE, PK_NB};
    ck_assert_status(ot_view_make(&in.stops_dp, dp, OT_F64, ST_CPU, 3, shape, NULL),
                     OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &s), OT_OK, NULL);
    return s;
}

/* Every patient's concentration and its 6 sensitivities within 1e-6 of
 * the closed form's (relative to the largest of each), in both modes,
 * with the handler's central differences and with its Jacobian, with
 * the sensitivity rhs by differences and from J and df/dp. */
START_TEST(dosed_pk_gradients_match_the_closed_form)
{
    const int lockstep = _i & 1, with_jac = (_i >> 1) & 1, derivs = _i >> 2;
    ot_ode *ode = pk_ode(lockstep, with_jac, derivs);
    ot_solution *s = pk_solve(ode, pk_params);
    for (int b = 0; b < PK_NB; b++) {
        const double *p = pk_params + b * PK_NP;
        double complex pc[PK_NP];
        for (int i = 0; i < PK_NP; i++)
            pc[i] = p[i];
        for (int i = 0; i < PK_NT; i++)
            ck_assert_double_eq_tol(st_y(s, 0, i, b), creal(pk_closed(pk_t[i], pc)),
                                    1e-7 * p[5] / p[2]);
        for (int j = 0; j < PK_NP; j++) {
            double scale = 0;
            for (int i = 0; i < PK_NT; i++)
                scale = fmax(scale, fabs(pk_closed_dp(pk_t[i], p, j)));
            for (int i = 0; i < PK_NT; i++) {
                const double got = st_at(ot_solution_sens(s, j), 0, i, b),
                             want = pk_closed_dp(pk_t[i], p, j);
                if (fabs(got - want) > 1e-6 * scale)
                    ck_abort_msg("lane %d d C(%g) / d p%d = %.10g, closed form %.10g", b,
                                 pk_t[i], j, got, want);
            }
        }
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* The solver's own central differences in each parameter (stops moved
 * with the lag) agree with its sensitivities. */
START_TEST(dosed_pk_gradients_match_central_differences)
{
    ot_ode *ode = pk_ode(_i, 0, 0);
    ot_solution *s = pk_solve(ode, pk_params);
    for (int j = 0; j < PK_NP; j++) {
        double pp[PK_NP * PK_NB], pm[PK_NP * PK_NB];
        memcpy(pp, pk_params, sizeof pp);
        memcpy(pm, pk_params, sizeof pm);
        /* steps large enough that the solves' own error (rtol 1e-10) stays
         * below 1e-7 of the difference, small enough for h^2 */
        const double h[PK_NB] = {1e-3 * fmax(fabs(pk_params[j]), 1),
                                 1e-3 * fmax(fabs(pk_params[PK_NP + j]), 1),
                                 1e-3 * fmax(fabs(pk_params[2 * PK_NP + j]), 1)};
        for (int b = 0; b < PK_NB; b++) {
            pp[b * PK_NP + j] += h[b];
            pm[b * PK_NP + j] -= h[b];
        }
        ot_solution *sp = pk_solve(ode, pp), *sm = pk_solve(ode, pm);
        for (int b = 0; b < PK_NB; b++)
            for (int i = 0; i < PK_NT; i++) {
                /* an output at a dose (lane 0's first) has only one side */
                int at_dose = 0;
                for (int k = 0; k < PK_NDOSE; k++)
                    at_dose |=
                        fabs(pk_t[i] - pk_doses[k] - pk_params[b * PK_NP + 4]) < 2 * h[b];
                if (at_dose)
                    continue;
                const double fd = (st_y(sp, 0, i, b) - st_y(sm, 0, i, b)) / (2 * h[b]),
                             got = st_at(ot_solution_sens(s, j), 0, i, b);
                if (fabs(got - fd) > 1e-5 * fmax(fabs(fd), 1e-3))
                    ck_abort_msg("lane %d d C(%g) / d p%d = %.10g, differences %.10g", b,
                                 pk_t[i], j, got, fd);
            }
        ot_solution_free(sp);
        ot_solution_free(sm);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

static int same_bits(const ot_tensor *a, const ot_tensor *b, int64_t rows, int64_t nt,
                     int64_t nb)
{
    for (int64_t k = 0; k < nb; k++)
        for (int64_t i = 0; i < nt; i++)
            for (int64_t r = 0; r < rows; r++) {
                const double x = st_at(a, r, i, k), y = st_at(b, r, i, k);
                if (memcmp(&x, &y, sizeof x) != 0)
                    return 0;
            }
    return 1;
}

/* Lanes mode on 1 and 2 threads, and lockstep in blocks of one lane: the
 * same bits (one sensitivity rhs, one jump, the same tolerances). */
START_TEST(dosed_pk_gradients_are_the_same_bits_in_every_layout)
{
    ot_ode *ode = pk_ode(0, 0, 0);
    ot_solution *one = pk_solve(ode, pk_params);
    ck_assert_status(ot_ode_set_threads(ode, 2), OT_OK, NULL);
    ot_solution *two = pk_solve(ode, pk_params);
    ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    ck_assert_status(ot_ode_set_lockstep_block(ode, 1), OT_OK, NULL);
    ot_solution *ls = pk_solve(ode, pk_params);
    for (int j = -1; j < PK_NP; j++) {
        const ot_tensor *a = j < 0 ? ot_solution_ys(one) : ot_solution_sens(one, j);
        const ot_tensor *b = j < 0 ? ot_solution_ys(two) : ot_solution_sens(two, j);
        const ot_tensor *c = j < 0 ? ot_solution_ys(ls) : ot_solution_sens(ls, j);
        ck_assert_msg(same_bits(a, b, 1, PK_NT, PK_NB), "threads differ at %d", j);
        ck_assert_msg(same_bits(a, c, 1, PK_NT, PK_NB), "lockstep differs at %d", j);
    }
    ot_solution_free(one);
    ot_solution_free(two);
    ot_solution_free(ls);
    ot_ode_free(ode);
}
END_TEST

/* Every parameter of a dosed two-compartment model, the lag through
 * stops_dp, against the complex-step derivative of the closed form. */
START_TEST(two_compartment_gradients_match_the_closed_form)
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
    const double y0[3] = {0, 0, 0};
    ot_solve_inputs in = ot_solve_inputs_make(st_vec(y0, 3), st_mat(params, P2_NP, 2),
                                              st_vec(p2_t, P2_NT));
    in.stops = st_mat(stops, 2, 2);
    const int64_t shape[3] = {P2_NP, 2, 2};
    ck_assert_status(ot_view_make(&in.stops_dp, dp, OT_F64, ST_CPU, 3, shape, NULL),
                     OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &s), OT_OK, NULL);
    for (int b = 0; b < 2; b++) {
        double complex pc[P2_NP];
        for (int j = 0; j < P2_NP; j++)
            pc[j] = params[P2_NP * b + j];
        for (int i = 0; i < P2_NT; i++)
            ck_assert_double_eq_tol(st_y(s, 0, i, b), creal(p2_closed(p2_t[i], pc)),
                                    1e-8);
        for (int j = 0; j < P2_NP; j++) {
            double want[P2_NT], scale = 0;
            for (int i = 0; i < P2_NT; i++) {
                pc[j] += I * 1e-30;
                want[i] = cimag(p2_closed(p2_t[i], pc)) / 1e-30;
                pc[j] = params[P2_NP * b + j];
                scale = fmax(scale, fabs(want[i]));
            }
            for (int i = 0; i < P2_NT; i++) {
                const double got = st_at(ot_solution_sens(s, j), 0, i, b);
                if (fabs(got - want[i]) > 1e-6 * scale)
                    ck_abort_msg("lane %d d C(%g) / d p%d = %.10g, closed form %.10g", b,
                                 p2_t[i], j, got, want[i]);
            }
        }
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* d y / d R comes only through the rate the handler copies from R (P's
 * row), d y / d rate0 only before the switch, d y / d y0 through all. */
START_TEST(a_rate_set_from_a_parameter_carries_its_sensitivity)
{
    const double p[3] = {0.4, 2.0, 0.3}, y0 = 1.5, stops[2] = {1, 3},
                 t[6] = {0.5, 1, 2, 3, 4, 6};
    ot_ode *ode = inf_ode(_i);
    ck_assert_status(ot_ode_set_sens_initial(ode, 1), OT_OK, NULL);
    ot_solve_inputs in = ot_solve_inputs_make(st_vec(&y0, 1), st_vec(p, 3), st_vec(t, 6));
    in.stops = st_vec(stops, 2);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &s), OT_OK, NULL);
    ck_assert_int_eq(ot_solution_nsens(s), 4);
    for (int i = 0; i < 6; i++) {
        double complex pc[3] = {p[0], p[1], p[2]};
        ck_assert_double_eq_tol(st_y(s, 0, i, 0), creal(inf_closed(t[i], pc, y0)), 1e-8);
        for (int j = 0; j < 4; j++) {
            double complex yc = y0;
            if (j < 3)
                pc[j] += I * 1e-30;
            else
                yc += I * 1e-30;
            const double want = cimag(inf_closed(t[i], pc, yc)) / 1e-30;
            pc[j < 3 ? j : 0] = p[j < 3 ? j : 0];
            const double got = st_at(ot_solution_sens(s, j), 0, i, 0);
            if (fabs(got - want) > 1e-6 * fmax(fabs(want), 1e-2))
                ck_abort_msg("d y(%g) / d z%d = %.10g, closed form %.10g", t[i], j, got,
                             want);
        }
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* d h(T) / d g, d e and d h0 against the flight formula's complex step,
 * both modes, with two lanes of other drops. */
START_TEST(bouncing_ball_gradients_match_the_flight_formula)
{
    /* per-lane times, each after the lane's first bounce and before its second */
    const double p[4] = {9.81, 0.8, 9.81, 0.9}, y0[4] = {2.0, 0, 1.0, 0},
                 T[6] = {0.9, 1.2, 1.4, 0.6, 0.9, 1.2};
    ot_ode *ode = ball_ode(_i);
    ck_assert_status(ot_ode_set_sens_initial(ode, 1), OT_OK, NULL);
    ot_solve_inputs in =
        ot_solve_inputs_make(st_mat(y0, 2, 2), st_mat(p, 2, 2), st_mat(T, 3, 2));
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &s), OT_OK, NULL);
    for (int b = 0; b < 2; b++) {
        const double g = p[2 * b], e = p[2 * b + 1], h0 = y0[2 * b];
        ck_assert_int_eq(ot_solution_lane_event_count(s, b), 1);
        for (int i = 0; i < 3; i++) {
            const double Ti = T[3 * b + i];
            ck_assert_double_eq_tol(st_y(s, 0, i, b), creal(ball_closed(Ti, g, e, h0)),
                                    1e-8);
            const double d = 1e-30,
                         want[3] = {cimag(ball_closed(Ti, g + I * d, e, h0)) / d,
                                    cimag(ball_closed(Ti, g, e + I * d, h0)) / d,
                                    cimag(ball_closed(Ti, g, e, h0 + I * d)) / d};
            const int sens[3] = {0, 1, 2}; /* g, e, then h0 (the first initial value) */
            for (int j = 0; j < 3; j++) {
                const double got = st_at(ot_solution_sens(s, sens[j]), 0, i, b);
                if (fabs(got - want[j]) > 1e-6 * fmax(fabs(want[j]), 1e-2))
                    ck_abort_msg("lane %d d h(%g) / d %s = %.10g, flight formula %.10g",
                                 b, Ti, (const char *[]){"g", "e", "h0"}[j], got,
                                 want[j]);
            }
        }
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- What is refused -------------------------------------------------------- */

START_TEST(stop_derivatives_are_checked)
{
    ot_ode *ode = pk_ode(0, 0, 0);
    const double y0[2] = {0, 0}, stops[2] = {0, 12}, bad[PK_NP * 2] = {0}, nan = NAN;
    double dp[PK_NP * 2] = {0};
    ot_solve_inputs in = ot_solve_inputs_make(st_vec(y0, 2), st_vec(pk_params, PK_NP),
                                              st_vec(pk_t, PK_NT));
    in.stops = st_vec(stops, 2);
    in.stops_dp = st_mat(bad, PK_NP, 1);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_fwd_sens_with(ode, &in, &s), OT_ERR_SHAPE,
        "stops_dp: needs shape [np, nstops] or [np, nstops, nbatch] = [6, 2, 1]");
    in.stops_dp = st_mat(dp, PK_NP, 2);
    ck_assert_status(
        ot_solve_dense_with(ode, &in, &s), OT_ERR_ARG,
        "stops_dp: the stops' derivatives in p are for ot_solve_fwd_sens_with");
    dp[PK_NP + 4] = nan;
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &s), OT_ERR_VALUE,
                     "stops_dp: [4, 1, 0] is nan");
    in.stops = ot_view_absent();
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &s), OT_ERR_ARG,
                     "stops_dp: given, but there are no stops");
    ck_assert_status(ot_solve_fwd_sens_with(ode, NULL, &s), OT_ERR_ARG, "in: NULL");
    ot_ode_free(ode);
}
END_TEST

Suite *sens_events_suite(void)
{
    Suite *s = suite_create("sens_events");
    TCase *tc = ot_test_tcase(s, "through doses", 60);
    tcase_add_loop_test(tc, dosed_pk_gradients_match_the_closed_form, 0, 8);
    tcase_add_loop_test(tc, dosed_pk_gradients_match_central_differences, 0, 2);
    tcase_add_test(tc, dosed_pk_gradients_are_the_same_bits_in_every_layout);
    tcase_add_loop_test(tc, two_compartment_gradients_match_the_closed_form, 0, 2);
    tcase_add_loop_test(tc, a_rate_set_from_a_parameter_carries_its_sensitivity, 0, 2);
    tc = ot_test_tcase(s, "through roots", 30);
    tcase_add_loop_test(tc, bouncing_ball_gradients_match_the_flight_formula, 0, 2);
    tc = ot_test_tcase(s, "refusals", 30);
    tcase_add_test(tc, stop_derivatives_are_checked);
    return s;
}

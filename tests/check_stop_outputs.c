/* Outputs at a scheduled stop's time (ot_ode_set_outputs_before_stops):
 * the state after the stop (the default) or before it (NONMEM's pre-dose
 * observation), against the closed form of a bolus model in both modes
 * and for CVODE's BDF and two ARKODE methods; a stop at t0 and one at a
 * lane's last output; forward sensitivities and the adjoint's gradient
 * through the doses; lockstep's per-lane times and stops lane by lane as
 * lanes mode; the setter's refusals. */
#include <math.h>

#include "solve_common.h"

/* ---- The bolus model ------------------------------------------------------- */

/* y' = -k y, p = (k, D): each scheduled stop adds the dose D to y. */
enum { NP = 2 };

static int bolus(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p, void *u)
{
    (void)t, (void)lane, (void)u;
    ck_assert_int_lt(root, 0); /* a scheduled stop */
    ot_view_mut_col_f64(y, 0, 0)[0] += ot_view_mut_col_f64(p, 0, 0)[1];
    return 0;
}

/* The closed form at t and its derivatives in k, D and y0 (d may be NULL):
 * y0 e^{-k t} plus D e^{-k (t - s)} for each stop s before t, and at t
 * itself unless outputs stand before the stops. ns stops, NaN-padded. */
static double closed(double t, double y0, const double *p, const double *stops, int ns,
                     int before, double d[3])
{
    const double k = p[0], D = p[1];
    double y = y0 * exp(-k * t), dk = -t * y, dD = 0;
    for (int j = 0; j < ns && !isnan(stops[j]); j++)
        if (stops[j] < t || (!before && stops[j] == t)) {
            const double e = exp(-k * (t - stops[j]));
            y += D * e;
            dk -= (t - stops[j]) * D * e;
            dD += e;
        }
    if (d) {
        d[0] = dk;
        d[1] = dD;
        d[2] = exp(-k * t);
    }
    return y;
}

/* The variants: _i & 1 lockstep, (_i >> 1) & 1 the option, _i >> 2 the
 * method (BDF, ARKODE's explicit DP54 and its ESDIRK, which steps onto
 * each output time). */
static const ot_method METHODS[3] = {OT_BDF, OT_ERK_DP54, OT_ESDIRK43};
#define V_LOCKSTEP(i) ((i)&1)
#define V_BEFORE(i) (((i) >> 1) & 1)
#define V_METHOD(i) (METHODS[(i) >> 2])

static ot_ode *bolus_ode(int lockstep, int before, ot_method method)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, NP, st_decay1_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, lockstep ? OT_LOCKSTEP : OT_LANES), OT_OK,
                     NULL);
    ck_assert_status(ot_ode_set_method(ode, method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-8), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_event_handler(ode, bolus), OT_OK, NULL);
    ck_assert_status(ot_ode_set_outputs_before_stops(ode, before), OT_OK, NULL);
    return ode;
}

/* |got - want| within a few 1e-6 relative (1e-9 absolute near zero). */
static void near(double got, double want, const char *what, int b, int i)
{
    ck_assert_msg(fabs(got - want) <= 3e-6 * fabs(want) + 1e-9,
                  "%s, lane %d, output %d: %.12g, closed form %.12g", what, b, i, got,
                  want);
}

enum { NB = 3 };
/* The lanes' (k, D), [NP, NB], and their starts. */
static const double PARAMS[NP * NB] = {0.7, 2.0, 1.3, 0.5, 0.4, 1.0};
static const double Y0[NB] = {1.0, 0.5, 2.0};

/* Lane b's ys against the closed form; its events are the stops it took,
 * each recorded with the state before the dose and D more after. */
static void check_lane(const ot_solution *s, int b, const double *t, int nt,
                       const double *stops, int ns, int before, int nevents)
{
    const double *p = PARAMS + b * NP;
    ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
    ck_assert_int_eq(ot_solution_lane_count(s, b), nt);
    for (int i = 0; i < nt; i++)
        near(st_y(s, 0, i, b), closed(t[i], Y0[b], p, stops, ns, before, NULL), "y", b,
             i);
    ck_assert_int_eq(ot_solution_lane_event_count(s, b), nevents);
    for (int e = 0; e < nevents; e++) {
        const double te = st_at(ot_solution_event_tensor(s, OT_EVENT_TIMES), e, b, 0);
        ck_assert_double_eq(te, stops[e]);
        const double ym = st_at(ot_solution_event_tensor(s, OT_EVENT_BEFORE), 0, e, b);
        const double yp = st_at(ot_solution_event_tensor(s, OT_EVENT_AFTER), 0, e, b);
        near(ym, closed(te, Y0[b], p, stops, ns, 1, NULL), "before the dose", b, e);
        ck_assert_double_eq_tol(yp - ym, p[1], 1e-12);
    }
}

/* ---- Dense outputs --------------------------------------------------------- */

/* Doses at 1 and 2, outputs at 0.5, 1, 2, 3: with the option the outputs at
 * 1 and 2 are the troughs y0 e^{-k} and (y0 e^{-k} + D) e^{-k}, at 3 the
 * state after both doses; without, every output after the doses at or
 * before it (today's rule, unchanged). */
START_TEST(outputs_at_doses_show_the_state_before_them_with_the_option)
{
    const int before = V_BEFORE(_i);
    enum { NT = 4, NS = 2 };
    const double t[NT] = {0.5, 1, 2, 3}, stops[NS] = {1, 2};
    ot_ode *ode = bolus_ode(V_LOCKSTEP(_i), before, V_METHOD(_i));
    ot_solve_inputs in =
        ot_solve_inputs_make(st_mat(Y0, 1, NB), st_mat(PARAMS, NP, NB), st_vec(t, NT));
    in.stops = st_vec(stops, NS);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_OK, NULL);
    for (int b = 0; b < NB; b++) {
        check_lane(s, b, t, NT, stops, NS, before, NS);
        const double k = PARAMS[b * NP], D = PARAMS[b * NP + 1], y0 = Y0[b];
        const double at1 = before ? y0 * exp(-k) : y0 * exp(-k) + D;
        ck_assert_double_eq_tol(st_y(s, 0, 1, b), at1, 3e-6 * at1);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* A dose at t0 = 0 with an output there: y0 with the option (the stop comes
 * after it), y0 + D without. A dose at the last output time (2): before it
 * with the option, and then past the lane's outputs, so not taken (one
 * event); after it without (two events). */
START_TEST(a_dose_at_t0_and_at_the_last_output)
{
    const int before = V_BEFORE(_i);
    enum { NT = 3, NS = 2 };
    const double t[NT] = {0, 1, 2}, stops[NS] = {0, 2};
    ot_ode *ode = bolus_ode(V_LOCKSTEP(_i), before, V_METHOD(_i));
    ot_solve_inputs in =
        ot_solve_inputs_make(st_mat(Y0, 1, NB), st_mat(PARAMS, NP, NB), st_vec(t, NT));
    in.stops = st_vec(stops, NS);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_OK, NULL);
    for (int b = 0; b < NB; b++) {
        check_lane(s, b, t, NT, stops, NS, before, before ? 1 : 2);
        const double D = PARAMS[b * NP + 1];
        ck_assert_double_eq_tol(st_y(s, 0, 0, b), before ? Y0[b] : Y0[b] + D, 1e-12);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- Lockstep's per-lane times and stops ------------------------------------ */

enum { PL_NB = 4, PL_NT = 4, PL_NS = 2 };
static const double PL_T[PL_NT * PL_NB] = {
    0.5,  1, 2,   3,   /* lane 0: outputs at its doses */
    0,    1, 2,   NAN, /* lane 1: at lane 0's doses; its own dose at 2.5 past its last */
    0,    1, 3,   NAN, /* lane 2: a dose at t0 and one at its last output */
    0.25, 2, 2.5, NAN, /* lane 3: its last at lane 1's dose that no lane takes */
};
static const double PL_STOPS[PL_NS * PL_NB] = {1, 2, 0.5, 2.5, 0, 3, 2, NAN};
static const double PL_PARAMS[NP * PL_NB] = {0.7, 2.0, 1.3, 0.5, 0.4, 1.0, 0.9, 3.0};
static const double PL_Y0[PL_NB] = {1.0, 0.5, 2.0, 0.25};

static ot_solution *per_lane_solve(int lockstep, int before, ot_method method)
{
    ot_ode *ode = bolus_ode(lockstep, before, method);
    ot_solve_inputs in =
        ot_solve_inputs_make(st_mat(PL_Y0, 1, PL_NB), st_mat(PL_PARAMS, NP, PL_NB),
                             st_mat(PL_T, PL_NT, PL_NB));
    in.stops = st_mat(PL_STOPS, PL_NS, PL_NB);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_OK, NULL);
    ot_ode_free(ode);
    return s;
}

/* Each lane of a lockstep block with its own times and stops (the block
 * steps through their union) as the lane solved in lanes mode, within
 * tolerance, and both as the closed form: a lane's output at another
 * lane's stop time is the same either way; its own stops as its option
 * says; the same events. */
START_TEST(lockstep_per_lane_times_and_stops_as_lanes_mode)
{
    const int before = _i & 1;
    const ot_method method = METHODS[_i >> 1];
    ot_solution *const both[2] = {per_lane_solve(0, before, method),
                                  per_lane_solve(1, before, method)};
    const ot_solution *lanes = both[0], *lock = both[1];
    const int nt[PL_NB] = {4, 3, 3, 3};
    /* Events: the stops before each lane's last output, and at it without
     * the option. */
    const int nev[PL_NB] = {2, 1, before ? 1 : 2, 1};
    for (int b = 0; b < PL_NB; b++) {
        const double *p = PL_PARAMS + b * NP, *stops = PL_STOPS + b * PL_NS;
        for (int m = 0; m < 2; m++) {
            const ot_solution *s = both[m];
            ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
            ck_assert_int_eq(ot_solution_lane_count(s, b), nt[b]);
            ck_assert_int_eq(ot_solution_lane_event_count(s, b), nev[b]);
            for (int i = 0; i < nt[b]; i++)
                near(st_y(s, 0, i, b),
                     closed(PL_T[b * PL_NT + i], PL_Y0[b], p, stops, PL_NS, before, NULL),
                     m ? "lockstep" : "lanes", b, i);
        }
        for (int i = 0; i < nt[b]; i++)
            near(st_y(lock, 0, i, b), st_y(lanes, 0, i, b), "lockstep vs lanes", b, i);
        for (int e = 0; e < nev[b]; e++)
            ck_assert_double_eq(
                st_at(ot_solution_event_tensor(lock, OT_EVENT_TIMES), e, b, 0),
                st_at(ot_solution_event_tensor(lanes, OT_EVENT_TIMES), e, b, 0));
    }
    ot_solution_free(both[0]);
    ot_solution_free(both[1]);
}
END_TEST

/* ---- Gradients through the doses --------------------------------------------- */

/* Shared output times, the first at t0; per-lane doses: lane 0 at two
 * output times and the last, lane 1 at t0 and an output time, lane 2
 * between outputs. */
enum { G_NT = 5, G_NS = 3 };
static const double G_T[G_NT] = {0, 0.5, 1, 2, 3};
static const double G_STOPS[G_NS * NB] = {1, 2, 3, 0, 2, NAN, 0.75, NAN, NAN};

static ot_solve_inputs gradient_inputs(void)
{
    ot_solve_inputs in = ot_solve_inputs_make(st_mat(Y0, 1, NB), st_mat(PARAMS, NP, NB),
                                              st_vec(G_T, G_NT));
    in.stops = st_mat(G_STOPS, G_NS, NB);
    return in;
}

/* d y / d k and d y / d D at every output against the closed form's: at a
 * dose with the option the sensitivities before its jump (d y / d D
 * without that dose's e^0 = 1). Both modes, BDF and Adams. */
START_TEST(forward_sensitivities_at_doses_are_those_before_the_jump)
{
    const int before = V_BEFORE(_i);
    const ot_method method = (_i >> 2) ? OT_ADAMS : OT_BDF;
    ot_ode *ode = bolus_ode(V_LOCKSTEP(_i), before, method);
    ck_assert_status(ot_ode_set_sens_tolerances(ode, 1e-8, 1e-10), OT_OK, NULL);
    const ot_solve_inputs in = gradient_inputs();
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &s), OT_OK, NULL);
    for (int b = 0; b < NB; b++) {
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
        for (int i = 0; i < G_NT; i++) {
            double d[3];
            const double y = closed(G_T[i], Y0[b], PARAMS + b * NP, G_STOPS + b * G_NS,
                                    G_NS, before, d);
            near(st_y(s, 0, i, b), y, "y", b, i);
            near(st_at(ot_solution_sens(s, 0), 0, i, b), d[0], "dy/dk", b, i);
            near(st_at(ot_solution_sens(s, 1), 0, i, b), d[1], "dy/dD", b, i);
        }
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* Data for the loss, away from the solution (rows 1, [1, G_NT]). */
static const double G_DATA[G_NT] = {1.5, 0.4, 1.2, 0.9, 0.3};

static double grad_at(const ot_solution *s, int which, int64_t j, int64_t b)
{
    const ot_tensor *g = ot_solution_grad_tensor(s, which);
    return which == OT_GRAD_LOSS ? st_at(g, b, 0, 0) : st_at(g, j, b, 0);
}

/* L = sum_i (y(t_i) - d_i)^2 on the outputs as the option places them, and
 * dL/dk, dL/dD, dL/dy0 from the closed form's derivatives: the adjoint
 * takes an output's term before the dose's jump with the option (the
 * output at t0 before the dose at t0 too), after it without. Both
 * modes. */
START_TEST(the_adjoint_takes_outputs_at_doses_before_their_jump)
{
    const int before = V_BEFORE(_i);
    ot_ode *ode = bolus_ode(V_LOCKSTEP(_i), before, OT_BDF);
    const ot_solve_inputs in = gradient_inputs();
    const ot_loss loss = ot_loss_squares(st_mat(G_DATA, 1, G_NT), ot_view_absent());
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_adjoint_with(ode, &in, &loss, &s), OT_OK, NULL);
    for (int b = 0; b < NB; b++) {
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
        double L = 0, dL[3] = {0, 0, 0};
        for (int i = 0; i < G_NT; i++) {
            double d[3];
            const double r = closed(G_T[i], Y0[b], PARAMS + b * NP, G_STOPS + b * G_NS,
                                    G_NS, before, d) -
                             G_DATA[i];
            L += r * r;
            for (int j = 0; j < 3; j++)
                dL[j] += 2 * r * d[j];
        }
        near(grad_at(s, OT_GRAD_LOSS, 0, b), L, "L", b, -1);
        near(grad_at(s, OT_GRAD_PARAMS, 0, b), dL[0], "dL/dk", b, -1);
        near(grad_at(s, OT_GRAD_PARAMS, 1, b), dL[1], "dL/dD", b, -1);
        near(grad_at(s, OT_GRAD_Y0, 0, b), dL[2], "dL/dy0", b, -1);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- The setter ------------------------------------------------------------- */

START_TEST(the_option_takes_0_or_1)
{
    ot_ode *ode = bolus_ode(0, 0, OT_BDF);
    ck_assert_status(ot_ode_set_outputs_before_stops(ode, 2), OT_ERR_VALUE,
                     "outputs_before_stops: 2");
    ck_assert_status(ot_ode_set_outputs_before_stops(ode, -1), OT_ERR_VALUE,
                     "outputs_before_stops: -1");
    ck_assert_status(ot_ode_set_outputs_before_stops(NULL, 1), OT_ERR_ARG, "ode is NULL");
    /* A refused value leaves the option as it was: off, the output at the
     * dose after it. */
    const double t[2] = {0.5, 1}, stop = 1, y0 = 1, p[NP] = {0.7, 2.0};
    ot_solve_inputs in =
        ot_solve_inputs_make(st_vec(&y0, 1), st_vec(p, NP), st_vec(t, 2));
    in.stops = st_vec(&stop, 1);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_OK, NULL);
    near(st_y(s, 0, 1, 0), exp(-0.7) + 2.0, "y", 0, 1);
    ot_solution_free(s);
    ck_assert_status(ot_ode_set_outputs_before_stops(ode, 1), OT_OK, NULL);
    ck_assert_status(ot_solve_dense_with(ode, &in, &s), OT_OK, NULL);
    near(st_y(s, 0, 1, 0), exp(-0.7), "y", 0, 1);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

Suite *stop_outputs_suite(void)
{
    Suite *s = suite_create("stop_outputs");
    TCase *tc = ot_test_tcase(s, "stop_outputs", 120);
    tcase_add_loop_test(tc, outputs_at_doses_show_the_state_before_them_with_the_option,
                        0, 12);
    tcase_add_loop_test(tc, a_dose_at_t0_and_at_the_last_output, 0, 12);
    tcase_add_loop_test(tc, lockstep_per_lane_times_and_stops_as_lanes_mode, 0, 6);
    tcase_add_loop_test(tc, forward_sensitivities_at_doses_are_those_before_the_jump, 0,
                        8);
    tcase_add_loop_test(tc, the_adjoint_takes_outputs_at_doses_before_their_jump, 0, 4);
    tcase_add_test(tc, the_option_takes_0_or_1);
    return s;
}

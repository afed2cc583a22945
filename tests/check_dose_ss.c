/* Steady state (SS 1 and SS 2) from a dosing plan against the closed forms:
 * the geometric series of one interval's map, y* = (I - e^{A II})^-1 P(0),
 * for boluses, oral doses with F and ALAG, infusions (one still running at
 * the record's time: the wrap) and a constant infusion's equilibrium
 * -A^-1 u; in lanes mode and lockstep. */
#include <math.h>
#include <string.h>

#include "dose_ref.h"

static const int MODES[2] = {OT_LANES, OT_LOCKSTEP};

/* y* = (I - Phi)^-1 P0 for the model's Phi over ii. */
static void fixed_point(const lin *m, double ii, const double *P0, double *y)
{
    double Phi[4], Gam[4];
    lin_prop(m, ii, Phi, Gam);
    if (m->n == 1) {
        y[0] = P0[0] / (1 - Phi[0]);
        return;
    }
    const double a = 1 - Phi[0], c = -Phi[1], b = -Phi[2], d = 1 - Phi[3];
    const double det = a * d - b * c;
    y[0] = (d * P0[0] - b * P0[1]) / det;
    y[1] = (-c * P0[0] + a * P0[1]) / det;
}

/* One solve of csv's plan for each mode against want [n, nobs, nsubj]. */
static void solve_both(const char *csv, int64_t ncmt, int64_t n, int64_t np,
                       ot_rhs_fn rhs, const double *p, int64_t nsubj,
                       const ot_dose_model *m, const double *want, int64_t nobs,
                       double rel)
{
    ot_records *r;
    ot_dose_plan *pl = plan_csv(csv, ncmt, &r);
    const double y0[2] = {0, 0};
    for (int mi = 0; mi < 2; mi++) {
        ot_ode *o = dose_ode(n, np, rhs, MODES[mi]);
        ot_view vp, vy;
        ot_view_f64(&vp, p, np, nsubj);
        ot_view_f64(&vy, y0, n, 1);
        ot_solution *s = NULL;
        const int st = ot_dose_solve_dense(o, pl, m, vy, vp, &s);
        ck_assert_msg(st == OT_OK, "%s: %s", ot_status_name(st),
                      st == OT_ERR_LANES_FAILED ? ot_solution_lane_message(s, 0)
                                                : ot_last_error());
        for (int64_t b = 0; b < nsubj; b++)
            for (int64_t j = 0; j < nobs; j++)
                for (int64_t i = 0; i < n; i++)
                    near_ref(ys_at(s, i, j, b), want[(b * nobs + j) * n + i], rel, 1e-2);
        ot_solution_free(s);
        ot_ode_free(o);
    }
    ot_dose_plan_free(pl);
    ot_records_free(r);
}

/* SS 1 bolus every 12: the trough D Phi / (1 - Phi) at the record's time,
 * then the doses; SS 2 at 6 adds the same steady state to what is there. */
START_TEST(a_bolus_at_steady_state_starts_from_the_geometric_series_trough)
{
    static const char *csv = "ID,TIME,EVID,AMT,CMT,II,ADDL,SS\n"
                             "1,0,1,100,1,12,1,1\n1,0,0,.,1,.,.,.\n1,6,0,.,1,.,.,.\n"
                             "1,12,0,.,1,.,.,.\n1,18,0,.,1,.,.,.\n";
    const double p[4] = {2, 10, 3, 20};
    double want[8];
    {
        const lin m = pk1_lin(p);
        const double Phi = exp(-0.2 * 12), trough = 100 * Phi / (1 - Phi);
        const ref_ev ev[2] = {{0, 0, 0, 100}, {12, 0, 0, 100}};
        const double tout[4] = {0, 6, 12, 18};
        ref_sim(&m, &trough, ev, 2, tout, 4, 1, want);
        near_ref(want[0], trough, 1e-15, 1);
    }
    {
        const lin m = pk1_lin(p + 2);
        const double Phi = exp(-0.15 * 12), trough = 100 * Phi / (1 - Phi), y0 = 0;
        const ref_ev ev[3] = {{0, 0, 0, 50}, {6, 0, 0, trough}, {6, 0, 0, 100}};
        const double tout[3] = {3, 6, 9};
        ref_sim(&m, &y0, ev, 3, tout, 3, 1, want + 4);
        want[5] += trough; /* the trough at 6: the steady state added, not the dose */
    }
    ot_dose_model m = ot_dose_model_make();
    solve_both(csv, 1, 1, 2, pk1_rhs, p, 1, &m, want, 4, 1e-7);
    /* a trough alone: the subject's last output is at the stop, not taken */
    solve_both("ID,TIME,EVID,AMT,CMT,II,SS\n1,0,1,100,1,12,1\n1,0,0,.,1,.,.\n", 1, 1, 2,
               pk1_rhs, p, 1, &m, want, 1, 1e-7);
    static const char *csv2 = "ID,TIME,EVID,AMT,CMT,II,ADDL,SS\n"
                              "2,0,1,50,1,.,.,.\n2,3,0,.,1,.,.,.\n2,6,1,100,1,12,0,2\n"
                              "2,6,0,.,1,.,.,.\n2,9,0,.,1,.,.,.\n";
    solve_both(csv2, 1, 1, 2, pk1_rhs, p + 2, 1, &m, want + 4, 3, 1e-7);
}
END_TEST

/* Oral doses at steady state with F and a lag: the interval's map from 0
 * gives P(0); y* = (I - Phi)^-1 P(0) in both compartments. */
START_TEST(an_oral_dose_at_steady_state_with_f_and_lag_matches_the_fixed_point)
{
    static const char *csv = "ID,TIME,EVID,AMT,CMT,II,ADDL,SS\n"
                             "1,0,1,100,1,12,1,1\n1,0,0,.,2,.,.,.\n1,0.5,0,.,2,.,.,.\n"
                             "1,3,0,.,2,.,.,.\n1,14,0,.,2,.,.,.\n";
    const double p[5] = {1.2, 3, 30, 0.7, 0.5}, zero[2] = {0, 0};
    const lin m = oral_lin(p);
    /* the interval [-12, 0]: the dose arrives at -12 + 0.5 */
    const ref_ev wev[1] = {{0.5, 0, 0, 70}};
    const double wend = 12;
    double P0[2], ys[2];
    ref_sim(&m, zero, wev, 1, &wend, 1, 1, P0);
    fixed_point(&m, 12, P0, ys);
    const ref_ev ev[2] = {{0.5, 0, 0, 70}, {12.5, 0, 0, 70}};
    const double tout[4] = {0, 0.5, 3, 14};
    double want[8];
    ref_sim(&m, ys, ev, 2, tout, 4, 1, want);
    ot_dose_model md = ot_dose_model_make();
    const int64_t f[2] = {3, -1}, lag[2] = {4, -1};
    md.f = f;
    md.lag = lag;
    solve_both(csv, 2, 2, 5, oral_rhs, p, 1, &md, want, 4, 1e-7);
}
END_TEST

/* Infusions at steady state: subject 1 within its interval (RATE 10, AMT
 * 60, II 24); subject 2 with a lag of 3 and II 8, so the interval before's
 * infusion still runs at the record's time (until 3 + 6 - 8 = 1). */
START_TEST(infusions_at_steady_state_include_the_one_still_running)
{
    static const char *csv = "ID,TIME,EVID,AMT,RATE,CMT,II,SS\n"
                             "1,0,1,60,10,1,24,1\n1,0,0,.,.,1,.,.\n1,3,0,.,.,1,.,.\n"
                             "1,6,0,.,.,1,.,.\n1,10,0,.,.,1,.,.\n";
    static const char *csv2 = "ID,TIME,EVID,AMT,RATE,CMT,II,SS\n"
                              "2,0,1,60,10,1,8,1\n2,0,0,.,.,1,.,.\n2,0.5,0,.,.,1,.,.\n"
                              "2,2,0,.,.,1,.,.\n2,5,0,.,.,1,.,.\n2,10,0,.,.,1,.,.\n";
    const double p1[2] = {2, 10}, p2[3] = {2, 10, 3}, zero = 0;
    double want[5];
    {
        const lin m = pk1_lin(p1);
        const ref_ev wev[2] = {{0, 1, 0, 10}, {6, 1, 0, -10}};
        const double wend = 24;
        double P0, ys;
        ref_sim(&m, &zero, wev, 2, &wend, 1, 1, &P0);
        fixed_point(&m, 24, &P0, &ys);
        const ref_ev ev[2] = {{0, 1, 0, 10}, {6, 1, 0, -10}};
        const double tout[4] = {0, 3, 6, 10};
        ref_sim(&m, &ys, ev, 2, tout, 4, 1, want);
        ot_dose_model md = ot_dose_model_make();
        solve_both(csv, 1, 1, 2, pk1_rhs, p1, 1, &md, want, 4, 1e-7);
    }
    {
        const lin m = pk1_lin(p2);
        /* the window [-8, 0]: on until -7, off until -5, on after */
        const ref_ev wev[3] = {{0, 1, 0, 10}, {1, 1, 0, -10}, {3, 1, 0, 10}};
        const double wend = 8;
        double P0, ys;
        ref_sim(&m, &zero, wev, 3, &wend, 1, 1, &P0);
        fixed_point(&m, 8, &P0, &ys);
        const ref_ev ev[4] = {
            {0, 1, 0, 10}, {1, 1, 0, -10}, {3, 1, 0, 10}, {9, 1, 0, -10}};
        const double tout[5] = {0, 0.5, 2, 5, 10};
        ref_sim(&m, &ys, ev, 4, tout, 5, 1, want);
        ot_dose_model md = ot_dose_model_make();
        const int64_t lag[1] = {2};
        md.lag = lag;
        solve_both(csv2, 1, 1, 3, pk1_rhs, p2, 1, &md, want, 5, 1e-7);
    }
}
END_TEST

/* A constant infusion at steady state (SS 1, RATE 5, AMT 0, II 0) at t = 2
 * after a bolus: the state becomes the equilibrium 5 V / CL and stays (the
 * observation at 2 sees the steady state, as every trough at one). */
START_TEST(a_constant_infusion_at_steady_state_is_its_equilibrium)
{
    static const char *csv = "ID,TIME,EVID,AMT,RATE,CMT,II,SS\n"
                             "1,0,1,100,.,1,.,.\n1,1,0,.,.,1,.,.\n1,2,1,0,5,1,0,1\n"
                             "1,2,0,.,.,1,.,.\n1,3,0,.,.,1,.,.\n1,20,0,.,.,1,.,.\n";
    const double p[2] = {2, 10};
    const double want[4] = {100 * exp(-0.2), 25, 25, 25};
    for (int k = 0; k < 2; k++) {
        ot_dose_model md = ot_dose_model_make();
        md.ss_interval = k == 0 ? 0 : 50; /* the default 1, or 50: the same point */
        solve_both(csv, 1, 1, 2, pk1_rhs, p, 1, &md, want, 4, 1e-7);
    }
}
END_TEST

/* The fixed point's accuracy: its intervals are solved at 1/100 of the
 * problem's tolerances, so the trough lands within one tolerance unit of
 * the geometric series from rtol 1e-4 to 1e-8 and k II from 0.6 to 9.6
 * (measured: at most 0.32 units). */
START_TEST(the_steady_state_is_within_one_tolerance_unit_of_the_series)
{
    static const char *csv =
        "ID,TIME,EVID,AMT,CMT,II,SS\n1,0,1,100,1,12,1\n1,0,0,.,1,.,.\n"
        "1,6,0,.,1,.,.\n";
    ot_records *r;
    ot_dose_plan *pl = plan_csv(csv, 1, &r);
    const double rtols[3] = {1e-4, 1e-6, 1e-8}, cls[3] = {0.5, 2, 8}, y0 = 0;
    for (int it = 0; it < 3; it++)
        for (int kk = 0; kk < 3; kk++) {
            const double p[2] = {cls[kk], 10}, rtol = rtols[it], atol = rtol * 1e-3;
            ot_ode *o = dose_ode(1, 2, pk1_rhs, OT_LANES);
            ck_assert_int_eq(ot_ode_set_rtol(o, rtol), OT_OK);
            ck_assert_int_eq(ot_ode_set_atol(o, atol), OT_OK);
            ot_view vp, vy;
            ot_view_f64(&vp, p, 2, 1);
            ot_view_f64(&vy, &y0, 1, 1);
            ot_dose_model m = ot_dose_model_make();
            ot_solution *s = NULL;
            ck_assert_int_eq(ot_dose_solve_dense(o, pl, &m, vy, vp, &s), OT_OK);
            const double phi = exp(-p[0] / p[1] * 12), trough = 100 * phi / (1 - phi);
            const double units =
                fabs(ys_at(s, 0, 0, 0) - trough) / (rtol * trough + atol);
            ck_assert_msg(units <= 1, "rtol %g, k II %g: the trough is %g units off",
                          rtol, p[0] / p[1] * 12, units);
            ot_solution_free(s);
            ot_ode_free(o);
        }
    ot_dose_plan_free(pl);
    ot_records_free(r);
}
END_TEST

/* A steady state needs forward sensitivities (the Newton map's Jacobian):
 * a method without them (ARKODE's DP54, the kernel solver's Rodas5P) makes
 * the solve fail with that reason, never a trough of 0 with status OK (the
 * failed sensitivity solve once read as "iterate again", and the Newton
 * loop ran out with its zero start). */
START_TEST(a_method_without_sensitivities_refuses_a_steady_state)
{
    static const char *csv =
        "ID,TIME,EVID,AMT,CMT,II,SS\n1,0,1,100,1,12,1\n1,6,0,.,1,.,.\n";
    ot_records *r;
    ot_dose_plan *pl = plan_csv(csv, 1, &r);
    const double p[2] = {2, 10}, y0 = 0;
    for (int v = 0; v < 2; v++) {
        ot_ode *o = dose_ode(1, 2, pk1_rhs, v ? DOSE_KERNEL : OT_LANES);
        if (!v)
            ck_assert_int_eq(ot_ode_set_method(o, OT_ERK_DP54), OT_OK);
        ot_view vp, vy;
        ot_view_f64(&vp, p, 2, 1);
        ot_view_f64(&vy, &y0, 1, 1);
        ot_dose_model m = ot_dose_model_make();
        ot_solution *s = NULL;
        const int st = ot_dose_solve_dense(o, pl, &m, vy, vp, &s);
        ck_assert_msg(st == OT_ERR_ARG, "%s: %s", ot_status_name(st), ot_last_error());
        ck_assert_ptr_null(s);
        ck_assert_msg(strstr(ot_last_error(), "steady states' solve failed") &&
                          strstr(ot_last_error(), "no forward sensitivities"),
                      "%s", ot_last_error());
        ot_ode_free(o);
    }
    ot_dose_plan_free(pl);
    ot_records_free(r);
}
END_TEST

Suite *dose_ss_suite(void)
{
    Suite *s = suite_create("dose_ss");
    TCase *tc = ot_test_tcase(s, "steady_state", 60);
    tcase_add_test(tc, a_bolus_at_steady_state_starts_from_the_geometric_series_trough);
    tcase_add_test(tc,
                   an_oral_dose_at_steady_state_with_f_and_lag_matches_the_fixed_point);
    tcase_add_test(tc, infusions_at_steady_state_include_the_one_still_running);
    tcase_add_test(tc, a_constant_infusion_at_steady_state_is_its_equilibrium);
    tcase_add_test(tc, the_steady_state_is_within_one_tolerance_unit_of_the_series);
    tcase_add_test(tc, a_method_without_sensitivities_refuses_a_steady_state);
    return s;
}

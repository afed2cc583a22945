/* Solving from a dosing plan (dosing.h's ot_dose_solve_dense) against
 * closed forms, in lanes mode and lockstep: boluses through II/ADDL with
 * pre- and post-dose observations, oral doses with F and ALAG, zero-order
 * infusions by RATE and DUR (overlapping, with F), modelled rates and
 * durations, resets, coincident doses (also on the kernel solver's
 * Rodas5P); and the refusals. */
#include <math.h>
#include <stdio.h>

#include "dose_ref.h"

/* Lanes mode, lockstep, and the kernel solver (Rodas5P) in lanes mode. */
static const int MODES[3] = {OT_LANES, OT_LOCKSTEP, DOSE_KERNEL};

/* Every subject's outputs against the reference (states 0..n). */
static void check_lanes(const ot_solution *s, const ot_dose_plan *pl, int64_t n,
                        const double *want, int64_t nobs, double rel, double scale)
{
    for (int64_t b = 0; b < ot_dose_plan_subjects(pl); b++) {
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
        for (int64_t j = 0; j < nobs; j++)
            for (int64_t i = 0; i < n; i++)
                near_ref(ys_at(s, i, j, b), want[(b * nobs + j) * n + i], rel, scale);
    }
}

/* Boluses at 0, 12, 24 (II 12, ADDL 2) into one compartment; observations
 * at the dose times 0 and 12 show the trough (pre-dose) by default and the
 * peak with post_dose; the event tensors hold both. */
START_TEST(boluses_through_addl_show_the_trough_at_a_dose_time)
{
    static const char *csv = "ID,TIME,EVID,AMT,CMT,II,ADDL\n"
                             "1,0,1,100,1,12,2\n1,0,0,.,1,.,.\n1,6,0,.,1,.,.\n"
                             "1,12,0,.,1,.,.\n1,30,0,.,1,.,.\n"
                             "2,0,1,50,1,12,2\n2,0,0,.,1,.,.\n2,6,0,.,1,.,.\n"
                             "2,12,0,.,1,.,.\n2,30,0,.,1,.,.\n";
    ot_records *r;
    ot_dose_plan *pl = plan_csv(csv, 1, &r);
    const double p[4] = {2, 10, 3, 20}; /* [CL, V] per subject */
    const double tout[4] = {0, 6, 12, 30}, y0 = 0;
    for (int post = 0; post < 2; post++) {
        double want[8];
        for (int b = 0; b < 2; b++) {
            const lin m = pk1_lin(p + 2 * b);
            const double d = b == 0 ? 100 : 50;
            const ref_ev ev[3] = {{0, 0, 0, d}, {12, 0, 0, d}, {24, 0, 0, d}};
            ref_sim(&m, &y0, ev, 3, tout, 4, !post, want + 4 * b);
        }
        ck_assert_double_eq(want[0], post ? 100 : 0);
        for (int mi = 0; mi < 3; mi++) {
            ot_ode *o = dose_ode(1, 2, pk1_rhs, MODES[mi]);
            ot_dose_model m = ot_dose_model_make();
            m.post_dose = post;
            ot_view vp, vy;
            ot_view_f64(&vp, p, 2, 2);
            ot_view_f64(&vy, &y0, 1, 1);
            ot_solution *s = NULL;
            ck_assert_int_eq(ot_dose_solve_dense(o, pl, &m, vy, vp, &s), OT_OK);
            check_lanes(s, pl, 1, want, 4, 1e-7, 1e-2);
            /* the event at t = 12 (the second stop): before and after */
            const ot_view eb =
                ot_tensor_view(ot_solution_event_tensor(s, OT_EVENT_BEFORE));
            const ot_view ea =
                ot_tensor_view(ot_solution_event_tensor(s, OT_EVENT_AFTER));
            double before, after;
            ck_assert_int_eq(ot_view_get(eb, 0, 1, 0, &before), OT_OK);
            ck_assert_int_eq(ot_view_get(ea, 0, 1, 0, &after), OT_OK);
            near_ref(before, post ? want[2] - 100 : want[2], 1e-7, 1e-6);
            near_ref(after - before, 100, 1e-12, 1);
            ot_solution_free(s);
            ot_ode_free(o);
        }
    }
    ot_dose_plan_free(pl);
    ot_records_free(r);
}
END_TEST

/* Oral doses into the gut (CMT 1) with bioavailability F = p[3] and lag
 * ALAG = p[4]; the central compartment is CMT 2. An observation at the
 * nominal dose time sees nothing yet; one at the lagged time is pre-dose. */
START_TEST(oral_doses_take_f_and_the_lag_from_the_parameters)
{
    static const char *csv = "ID,TIME,EVID,AMT,CMT\n"
                             "1,0,1,100,1\n1,0.25,0,.,2\n1,2,0,.,2\n1,8,1,80,1\n"
                             "1,8,0,.,2\n1,8.5,0,.,2\n1,12,0,.,2\n1,24,0,.,2\n"
                             "2,0,1,100,1\n2,0.25,0,.,2\n2,2,0,.,2\n2,8,1,80,1\n"
                             "2,8,0,.,2\n2,8.6,0,.,2\n2,12,0,.,2\n2,24,0,.,2\n";
    ot_records *r;
    ot_dose_plan *pl = plan_csv(csv, 2, &r);
    /* [ka, CL, V, F, ALAG] per subject */
    const double p[10] = {1.2, 3, 30, 0.7, 0.5, 0.8, 2, 25, 0.9, 0.6};
    const double y0[2] = {0, 0};
    double want[2 * 6 * 2];
    for (int b = 0; b < 2; b++) {
        const double *q = p + 5 * b;
        const lin m = oral_lin(q);
        const ref_ev ev[2] = {{q[4], 0, 0, 100 * q[3]}, {8 + q[4], 0, 0, 80 * q[3]}};
        const double tout[6] = {0.25, 2, 8, b == 0 ? 8.5 : 8.6, 12, 24};
        ref_sim(&m, y0, ev, 2, tout, 6, 1, want + 12 * b);
    }
    ck_assert_double_eq(want[0], 0); /* the first dose not there at 0.25 */
    const int64_t f[2] = {3, -1}, lag[2] = {4, -1};
    for (int mi = 0; mi < 3; mi++) {
        ot_ode *o = dose_ode(2, 5, oral_rhs, MODES[mi]);
        ot_dose_model m = ot_dose_model_make();
        m.f = f;
        m.lag = lag;
        ot_view vp, vy;
        ot_view_f64(&vp, p, 5, 2);
        ot_view_f64(&vy, y0, 2, 1);
        ot_solution *s = NULL;
        ck_assert_int_eq(ot_dose_solve_dense(o, pl, &m, vy, vp, &s), OT_OK);
        check_lanes(s, pl, 2, want, 6, 1e-7, 1e-2);
        ot_solution_free(s);
        ot_ode_free(o);
    }
    ot_dose_plan_free(pl);
    ot_records_free(r);
}
END_TEST

/* pk1_rhs reading p as compact columns np apart, as bindings do (the
 * library's views of the user's p must be compact, though the solve's own
 * p has a rate parameter more). */
static int pk1_rhs_flat(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t;
    (void)u;
    const double *pd = p.layout.data;
    ck_assert_int_eq(p.layout.shape[0], 5);
    for (int64_t b = 0; b < f.layout.shape[1]; b++) {
        const double *pb = pd + (p.layout.shape[1] == 1 ? 0 : 5 * b);
        ot_view_mut_col_f64(f, b, 0)[0] = -pb[0] / pb[1] * ot_view_col_f64(y, b, 0)[0];
    }
    return 0;
}

/* Infusions: RATE 20 of AMT 100 from t = 1 and DUR 2 of AMT 50 from t = 3,
 * overlapping, with F = p[2]: as in NONMEM F stretches the RATE infusion
 * (F AMT / RATE) and raises the DUR one's rate (F AMT / DUR). Subject 2:
 * a modelled rate (RATE -1, p[3]) and a modelled duration (RATE -2, p[4]). */
START_TEST(infusions_by_rate_and_duration_add_their_rates_with_f)
{
    static const char *csv = "ID,TIME,EVID,AMT,RATE,DUR,CMT\n"
                             "1,1,1,100,20,.,1\n1,2,0,.,.,.,1\n1,3,1,50,.,2,1\n"
                             "1,3,0,.,.,.,1\n1,4,0,.,.,.,1\n1,5.5,0,.,.,.,1\n"
                             "1,7,0,.,.,.,1\n1,12,0,.,.,.,1\n"
                             "2,1,1,100,-1,.,1\n2,2,0,.,.,.,1\n2,3,1,50,-2,.,1\n"
                             "2,3,0,.,.,.,1\n2,4,0,.,.,.,1\n2,5.5,0,.,.,.,1\n"
                             "2,7,0,.,.,.,1\n2,12,0,.,.,.,1\n";
    ot_records *r;
    ot_dose_plan *pl = plan_csv(csv, 1, &r);
    /* [CL, V, F, rate, duration] */
    const double p[10] = {2, 10, 0.8, 0, 0, 3, 12, 0.9, 15, 4};
    const double tout[6] = {2, 3, 4, 5.5, 7, 12}, y0 = 0;
    double want[12];
    { /* subject 1: 20 over [1, 1 + 80/20 = 5]; 0.8*50/2 = 20 over [3, 5] */
        const lin m = pk1_lin(p);
        const ref_ev ev[4] = {
            {1, 1, 0, 20}, {3, 1, 0, 20}, {5, 1, 0, -20}, {5, 1, 0, -20}};
        ref_sim(&m, &y0, ev, 4, tout, 6, 1, want);
    }
    { /* subject 2: 15 over [1, 1 + 90/15 = 7]; 0.9*50/4 = 11.25 over [3, 7] */
        const lin m = pk1_lin(p + 5);
        const ref_ev ev[4] = {
            {1, 1, 0, 15}, {3, 1, 0, 11.25}, {7, 1, 0, -15}, {7, 1, 0, -11.25}};
        ref_sim(&m, &y0, ev, 4, tout, 6, 1, want + 6);
    }
    const int64_t f[1] = {2}, rate[1] = {3}, dur[1] = {4};
    for (int mi = 0; mi < 3; mi++) {
        ot_ode *o = dose_ode(1, 5, pk1_rhs_flat, MODES[mi]);
        ot_dose_model m = ot_dose_model_make();
        m.f = f;
        m.rate = rate;
        m.duration = dur;
        ot_view vp, vy;
        ot_view_f64(&vp, p, 5, 2);
        ot_view_f64(&vy, &y0, 1, 1);
        ot_solution *s = NULL;
        ck_assert_int_eq(ot_dose_solve_dense(o, pl, &m, vy, vp, &s), OT_OK);
        check_lanes(s, pl, 1, want, 6, 1e-7, 1e-2);
        ot_solution_free(s);
        ot_ode_free(o);
    }
    ot_dose_plan_free(pl);
    ot_records_free(r);
}
END_TEST

/* Two boluses at one time (into each compartment of the two-compartment
 * model, one twice) are one stop in record order, not refused; a reset
 * (EVID 3) at 10 returns to y0 and ends the infusion started at 8; EVID 4
 * at 20 resets and doses. */
START_TEST(coincident_doses_merge_and_resets_return_to_y0)
{
    static const char *csv = "ID,TIME,EVID,AMT,RATE,CMT\n"
                             "1,0,1,100,.,1\n1,0,1,30,.,2\n1,0,1,20,.,1\n"
                             "1,4,0,.,.,1\n1,8,1,60,5,1\n1,9,0,.,.,1\n1,10,3,.,.,.\n"
                             "1,10,0,.,.,1\n1,15,0,.,.,1\n1,20,4,40,.,1\n1,22,0,.,.,1\n";
    ot_records *r;
    ot_dose_plan *pl = plan_csv(csv, 2, &r);
    const double p[3] = {0.3, 0.2, 0.1}, y0[2] = {0, 0};
    const lin m = pk2_lin(p);
    /* the reset's zero state is y0 here; pre-dose outputs: at 10 the value
     * before the reset, after it from y0 */
    const ref_ev ev[6] = {{0, 0, 0, 120}, {0, 0, 1, 30}, {8, 1, 0, 5},
                          {10, 2, 0, 0},  {20, 2, 0, 0}, {20, 0, 0, 40}};
    const double tout[5] = {4, 9, 10, 15, 22};
    double want[10];
    ref_sim(&m, y0, ev, 6, tout, 5, 1, want);
    ck_assert_double_eq(want[6], 0); /* 15: after the reset, nothing */
    for (int mi = 0; mi < 3; mi++) {
        ot_ode *o = dose_ode(2, 3, pk2_rhs, MODES[mi]);
        ot_dose_model md = ot_dose_model_make();
        ot_view vp, vy;
        ot_view_f64(&vp, p, 3, 1);
        ot_view_f64(&vy, y0, 2, 1);
        ot_solution *s = NULL;
        ck_assert_int_eq(ot_dose_solve_dense(o, pl, &md, vy, vp, &s), OT_OK);
        check_lanes(s, pl, 2, want, 5, 1e-7, 1e-2);
        /* stops: 0 (three doses), 8, 10, 20 */
        ck_assert_int_eq(ot_solution_lane_event_count(s, 0), 4);
        ot_solution_free(s);
        ot_ode_free(o);
    }
    ot_dose_plan_free(pl);
    ot_records_free(r);
}
END_TEST

/* Refusals name the argument and the rule; an impossible dose fails its
 * lane alone. */
START_TEST(bad_models_and_plans_are_refused_and_bad_subjects_fail_alone)
{
    ot_records *r;
    ot_dose_plan *pl = plan_csv("ID,TIME,EVID,AMT,RATE,CMT\n1,0,1,10,-1,1\n1,1,0,.,.,1\n"
                                "2,0,1,10,.,1\n2,1,0,.,.,1\n",
                                1, &r);
    ot_ode *o = dose_ode(1, 3, pk1_rhs, OT_LANES);
    const double p[3] = {1, 2, 5}, y0 = 0;
    ot_view vp, vy;
    ot_view_f64(&vp, p, 3, 1);
    ot_view_f64(&vy, &y0, 1, 1);
    ot_solution *s = NULL;
    ot_dose_model m = ot_dose_model_make();
    ck_assert_int_eq(ot_dose_solve_dense(o, pl, &m, vy, vp, &s), OT_ERR_ARG);
    ck_assert_str_eq(ot_last_error(),
                     "ot_dose_solve_dense: row 1 (ID 1), RATE: -1 models the rate, and "
                     "model->rate[0] (CMT 1) names no parameter");
    const int64_t bad[1] = {3};
    m.rate = bad;
    ck_assert_int_eq(ot_dose_solve_dense(o, pl, &m, vy, vp, &s), OT_ERR_ARG);
    ck_assert_str_eq(ot_last_error(),
                     "ot_dose_solve_dense: model->rate[0] (CMT 1) is 3; a parameter "
                     "index is in [0, np = 3), or -1 for none");
    ck_assert_ptr_null(s);
    m.rate = NULL;
    ot_dose_plan_free(pl);
    ot_records_free(r);
    /* a subject without observations; a record before t0 */
    pl = plan_csv("ID,TIME,EVID,AMT,CMT\n1,0,1,10,1\n1,1,0,.,1\n2,0,1,5,1\n", 1, &r);
    ck_assert_int_eq(ot_dose_solve_dense(o, pl, &m, vy, vp, &s), OT_ERR_ARG);
    ck_assert_str_eq(ot_last_error(),
                     "ot_dose_solve_dense: ID 2 has no observation (EVID "
                     "0 with MDV 0); each subject is a lane with output "
                     "times");
    ck_assert_int_eq(ot_ode_set_t0(o, 0.5), OT_OK);
    ot_dose_plan_free(pl);
    ot_records_free(r);
    pl = plan_csv("ID,TIME,EVID,AMT,CMT\n1,1,1,10,1\n1,2,0,.,1\n7,0,1,5,1\n7,1,0,.,1\n",
                  1, &r);
    ck_assert_int_eq(ot_dose_solve_dense(o, pl, &m, vy, vp, &s), OT_ERR_ARG);
    ck_assert_str_eq(ot_last_error(), "ot_dose_solve_dense: row 3 (ID 7), TIME: 0 is "
                                      "before the problem's t0 0.5, where every subject "
                                      "starts");
    ck_assert_int_eq(ot_ode_set_t0(o, 0), OT_OK);
    /* F < 0 for subject 7 alone: it fails, subject 1 is solved */
    const int64_t f[1] = {2};
    m.f = f;
    const double p2[6] = {1, 2, 1, 1, 2, -0.5};
    ot_view_f64(&vp, p2, 3, 2);
    ck_assert_int_eq(ot_dose_solve_dense(o, pl, &m, vy, vp, &s), OT_ERR_LANES_FAILED);
    ck_assert_int_eq(ot_solution_lane_status(s, 0), OT_OK);
    near_ref(ys_at(s, 0, 0, 0), 10 * exp(-0.5), 1e-7, 1e-6);
    ck_assert_int_eq(ot_solution_lane_status(s, 1), OT_ERR_VALUE);
    ck_assert_str_eq(ot_solution_lane_message(s, 1),
                     "ID 7, row 3: F p[2] is -0.5; it must be >= 0");
    ot_solution_free(s);
    ot_ode_free(o);
    ot_dose_plan_free(pl);
    ot_records_free(r);
}
END_TEST

Suite *dose_solve_suite(void)
{
    Suite *s = suite_create("dose_solve");
    TCase *tc = ot_test_tcase(s, "dense", 60);
    tcase_add_test(tc, boluses_through_addl_show_the_trough_at_a_dose_time);
    tcase_add_test(tc, oral_doses_take_f_and_the_lag_from_the_parameters);
    tcase_add_test(tc, infusions_by_rate_and_duration_add_their_rates_with_f);
    tcase_add_test(tc, coincident_doses_merge_and_resets_return_to_y0);
    tcase_add_test(tc, bad_models_and_plans_are_refused_and_bad_subjects_fail_alone);
    return s;
}

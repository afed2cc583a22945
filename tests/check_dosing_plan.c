/* The dosing layer's plan (include/odetensor/dosing.h): II/ADDL,
 * infusions from RATE and DUR, modelled rates, coincident records, resets,
 * steady state, observations and the dose-coincidence flag, checked against
 * hand arithmetic; columns and CSV give the same plan; the shipped dataset. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dosing_common.h"

/* ---- the plan ------------------------------------------------------------ */

START_TEST(additional_doses_come_every_interval)
{
    ot_records *r =
        parse("ID,TIME,AMT,II,ADDL,CMT\n1,2,100,12,3,1\n1,30,.,.,.,2\n2,0,5,0.1,10,1\n");
    ot_dose_plan *p = plan_of(r, 2);
    int64_t n = 0;
    const ot_dose_action *a = acts_of(p, 0, &n);
    ck_assert_int_eq(n, 5);
    const double t1[] = {2, 14, 26, 30, 38};
    for (int64_t i = 0; i < n; i++)
        ck_assert_double_eq(a[i].time, t1[i]);
    ck_assert_int_eq(a[3].kind, OT_DOSE_OBSERVATION);
    ck_assert_int_eq(a[3].row, 2);
    ck_assert_int_eq(a[4].kind, OT_DOSE_BOLUS);
    ck_assert_int_eq(a[4].row, 1);
    ck_assert_int_eq(a[4].addl, 3);
    ck_assert_int_eq(a[4].dose, 3);
    ck_assert_double_eq(a[4].amount, 100);
    ck_assert_double_eq(a[4].ii, 12);
    a = acts_of(p, 1, &n);
    ck_assert_int_eq(n, 11);
    for (int64_t k = 0; k <= 10; k++) {
        ck_assert_double_eq(a[k].time, 0 + (double)k * 0.1); /* not summed: k * II */
        ck_assert_int_eq(a[k].addl, k);
        ck_assert_int_eq(a[k].state, 0);
    }
    ot_dose_plan_free(p);
    ot_records_free(r);
}
END_TEST

START_TEST(an_infusion_ends_after_amt_over_rate_or_dur)
{
    ot_records *r = parse("ID,TIME,AMT,RATE,DUR,CMT\n1,1,100,25,.,2\n1,3,100,.,2,2\n");
    ot_dose_plan *p = plan_of(r, 2);
    int64_t n = 0;
    const ot_dose_action *a = acts_of(p, 0, &n);
    ck_assert_int_eq(n, 4);
    /* row 1: 1 .. 1 + 100/25 = 5; row 2: 3 .. 3 + 2 = 5 at 50 an hour */
    const double t[] = {1, 3, 5, 5};
    const int32_t kind[] = {OT_DOSE_INFUSION_START, OT_DOSE_INFUSION_START,
                            OT_DOSE_INFUSION_END, OT_DOSE_INFUSION_END};
    const int64_t row[] = {1, 2, 1, 2}, dose[] = {0, 1, 0, 1};
    const double rate[] = {25, 50, 25, 50}, dur[] = {4, 2, 4, 2};
    for (int64_t i = 0; i < n; i++) {
        ck_assert_double_eq(a[i].time, t[i]);
        ck_assert_int_eq(a[i].kind, kind[i]);
        ck_assert_int_eq(a[i].row, row[i]);
        ck_assert_int_eq(a[i].dose, dose[i]);
        ck_assert_double_eq(a[i].rate, rate[i]);
        ck_assert_double_eq(a[i].duration, dur[i]);
        ck_assert_int_eq(a[i].rate_kind, row[i] == 1 ? OT_RATE_DATA : OT_DURATION_DATA);
        ck_assert_int_eq(a[i].state, 1);
        ck_assert_int_eq(a[i].cmt, 2);
    }
    ot_dose_plan_free(p);
    ot_records_free(r);
}
END_TEST

START_TEST(a_modelled_rate_or_duration_has_a_start_and_no_end)
{
    ot_records *r = parse("ID,TIME,AMT,RATE,II,ADDL\n1,0,100,-1,.,.\n1,6,100,-2,6,1\n");
    ot_dose_plan *p = plan_of(r, 1);
    int64_t n = 0;
    const ot_dose_action *a = acts_of(p, 0, &n);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(a[0].kind, OT_DOSE_INFUSION_START);
    ck_assert_int_eq(a[0].rate_kind, OT_RATE_MODELLED);
    ck_assert(isnan(a[0].rate) && isnan(a[0].duration));
    ck_assert_double_eq(a[0].amount, 100);
    ck_assert_int_eq(a[1].rate_kind, OT_DURATION_MODELLED);
    ck_assert_double_eq(a[2].time, 12);
    ck_assert_int_eq(a[2].kind, OT_DOSE_INFUSION_START);
    ck_assert_int_eq(a[2].rate_kind, OT_DURATION_MODELLED);
    ot_dose_plan_free(p);
    ot_records_free(r);
}
END_TEST

START_TEST(coincident_records_keep_record_order)
{
    /* row 1's dose at 12 (its additional dose) comes before row 3's; an
     * infusion's end at 4 before a bolus of a later row at 4; two boluses at
     * 0 in their rows' order whatever their compartments. */
    ot_records *r = parse("ID,TIME,AMT,CMT,II,ADDL,RATE\n"
                          "1,0,10,2,12,1,.\n" /* row 1 */
                          "1,0,20,1,.,.,5\n"  /* row 2: infusion 0..4 */
                          "1,0,30,1,.,.,.\n"  /* row 3 */
                          "1,4,40,2,.,.,.\n"  /* row 4 */
                          "1,12,50,1,.,.,.\n" /* row 5 */
                          "1,12,.,2,.,.,.\n"  /* row 6: observation */
                          "1,12,60,2,.,.,.\n" /* row 7 */);
    ot_dose_plan *p = plan_of(r, 2);
    int64_t n = 0;
    const ot_dose_action *a = acts_of(p, 0, &n);
    ck_assert_int_eq(n, 9);
    const double t[] = {0, 0, 0, 4, 4, 12, 12, 12, 12};
    const int64_t row[] = {1, 2, 3, 2, 4, 1, 5, 6, 7};
    const int32_t kind[] = {OT_DOSE_BOLUS,        OT_DOSE_INFUSION_START, OT_DOSE_BOLUS,
                            OT_DOSE_INFUSION_END, OT_DOSE_BOLUS,          OT_DOSE_BOLUS,
                            OT_DOSE_BOLUS,        OT_DOSE_OBSERVATION,    OT_DOSE_BOLUS};
    const int64_t dose[] = {0, 1, 2, 1, 3, 4, 5, -1, 6}; /* numbered in plan order */
    for (int64_t i = 0; i < n; i++) {
        ck_assert_double_eq(a[i].time, t[i]);
        ck_assert_int_eq(a[i].row, row[i]);
        ck_assert_int_eq(a[i].kind, kind[i]);
        ck_assert_int_eq(a[i].dose, dose[i]);
    }
    ck_assert_int_eq(a[5].addl, 1);
    ot_dose_plan_free(p);
    ot_records_free(r);
}
END_TEST

START_TEST(a_reset_ends_running_infusions_and_evid_4_resets_before_its_dose)
{
    ot_records *r = parse("ID,TIME,EVID,AMT,RATE\n"
                          "1,0,1,100,10\n" /* infusion 0..10, cut by the reset at 5 */
                          "1,5,3,.,.\n"
                          "1,8,4,50,.\n"
                          "1,9,1,20,10\n" /* 9..11, cut by row 5 */
                          "1,10,4,5,.\n");
    ot_dose_plan *p = plan_of(r, 1);
    int64_t n = 0;
    const ot_dose_action *a = acts_of(p, 0, &n);
    ck_assert_int_eq(n, 7);
    const double t[] = {0, 5, 8, 8, 9, 10, 10};
    const int32_t kind[] = {OT_DOSE_INFUSION_START, OT_DOSE_RESET,          OT_DOSE_RESET,
                            OT_DOSE_BOLUS,          OT_DOSE_INFUSION_START, OT_DOSE_RESET,
                            OT_DOSE_BOLUS};
    const int64_t row[] = {1, 2, 3, 3, 4, 5, 5};
    for (int64_t i = 0; i < n; i++) {
        ck_assert_double_eq(a[i].time, t[i]);
        ck_assert_int_eq(a[i].kind, kind[i]);
        ck_assert_int_eq(a[i].row, row[i]);
    }
    ck_assert_int_eq(a[1].state, -1);
    ck_assert_int_eq(a[2].dose, -1);
    ck_assert_int_eq(a[3].dose, 1);
    ot_dose_plan_free(p);
    ot_records_free(r);
    /* an infusion that ends before the reset keeps its end */
    r = parse("ID,TIME,EVID,AMT,RATE\n1,0,1,10,10\n1,1,3,.,.\n");
    p = plan_of(r, 1);
    a = acts_of(p, 0, &n);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(a[1].kind, OT_DOSE_INFUSION_END);
    ck_assert_int_eq(a[2].kind, OT_DOSE_RESET);
    ot_dose_plan_free(p);
    ot_records_free(r);
}
END_TEST

START_TEST(steady_state_comes_before_its_dose_and_not_before_additional_ones)
{
    ot_records *r = parse("ID,TIME,AMT,SS,II,ADDL,CMT\n1,0,100,2,24,1,2\n");
    ot_dose_plan *p = plan_of(r, 2);
    int64_t n = 0;
    const ot_dose_action *a = acts_of(p, 0, &n);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(a[0].kind, OT_DOSE_STEADY_STATE);
    ck_assert_int_eq(a[0].ss, 2);
    ck_assert_double_eq(a[0].ii, 24);
    ck_assert_double_eq(a[0].amount, 100);
    ck_assert_int_eq(a[0].state, 1);
    ck_assert_int_eq(a[0].dose, 0);
    ck_assert_int_eq(a[1].kind, OT_DOSE_BOLUS);
    ck_assert_int_eq(a[1].dose, 0);
    ck_assert_double_eq(a[2].time, 24);
    ck_assert_int_eq(a[2].kind, OT_DOSE_BOLUS);
    ck_assert_int_eq(a[2].addl, 1);
    ot_dose_plan_free(p);
    ot_records_free(r);
}
END_TEST

START_TEST(observations_give_output_times_flagged_at_dose_times)
{
    ot_records *r = parse("ID,TIME,EVID,AMT,RATE,II,ADDL,MDV,CMT\n"
                          "1,0,0,.,.,.,.,0,2\n"   /* row 1: before the dose at 0 */
                          "1,0,1,10,.,12,1,.,1\n" /* row 2: doses at 0 and 12 */
                          "1,1,0,.,.,.,.,.,2\n"
                          "1,2,0,.,.,.,.,1,2\n" /* MDV 1: no output */
                          "1,3,2,.,.,.,.,.,.\n"
                          "1,6,1,4,2,.,.,.,2\n" /* infusion 6..8 */
                          "1,8,0,.,.,.,.,.,2\n" /* at the end: no jump */
                          "1,12,0,.,.,.,.,.,2\n"
                          "2,5,0,.,.,.,.,.,.\n");
    int64_t cmt_state[] = {3, 0};
    ot_dose_plan *p = NULL;
    ck_assert_int_eq(ot_dose_plan_new(r, 2, cmt_state, &p), OT_OK);
    int64_t n = 0;
    const double *t = NULL;
    const int32_t *at = NULL;
    const int64_t *rows = NULL;
    ck_assert_int_eq(ot_dose_plan_observations(p, 0, &n, &t, &at, &rows), OT_OK);
    ck_assert_int_eq(n, 4);
    const double want_t[] = {0, 1, 8, 12};
    const int32_t want_at[] = {1, 0, 0, 1};
    const int64_t want_rows[] = {1, 3, 7, 8};
    for (int64_t i = 0; i < n; i++) {
        ck_assert_double_eq(t[i], want_t[i]);
        ck_assert_int_eq(at[i], want_at[i]);
        ck_assert_int_eq(rows[i], want_rows[i]);
    }
    const ot_dose_action *a = acts_of(p, 0, &n);
    ck_assert_int_eq(a[0].kind, OT_DOSE_OBSERVATION); /* row 1 before row 2's dose */
    ck_assert_int_eq(a[0].state, 0);                  /* CMT 2 -> state 0 */
    ck_assert_int_eq(a[1].state, 3);                  /* the dose: CMT 1 -> state 3 */
    ck_assert_int_eq(a[3].kind, OT_DOSE_OTHER);       /* MDV 1 */
    ck_assert_int_eq(a[4].kind, OT_DOSE_OTHER);       /* EVID 2 */
    ck_assert_int_eq(ot_dose_plan_observations(p, 1, &n, &t, NULL, NULL), OT_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_double_eq(t[0], 5);
    ck_assert_status(ot_dose_plan_observations(p, 2, &n, &t, NULL, NULL), OT_ERR_ARG,
                     "ot_dose_plan_observations: subject 2 of 2; subjects are 0 to 1");
    ot_dose_plan_free(p);
    ot_records_free(r);
}
END_TEST

/* The plan of the same table from CSV and from columns: the same bits. */
START_TEST(columns_give_the_plan_csv_gives)
{
    const char *csv = "ID,TIME,EVID,AMT,RATE,DUR,CMT,II,ADDL,SS,DV,MDV,WT\n"
                      "1,0,1,100,.,.,1,12,2,0,.,1,70\n"
                      "1,1,0,.,.,.,2,.,.,.,3.2,0,70\n"
                      "1,12,0,.,.,.,2,.,.,.,1.1,0,70\n"
                      "1,30,1,50,-2,.,2,.,.,.,.,1,70\n"
                      "2,0,1,80,.,4,2,24,0,1,.,1,55\n"
                      "2,0,0,.,.,.,2,.,.,.,0.5,0,55\n"
                      "2,5,3,.,.,.,.,.,.,.,.,1,55\n"
                      "2,5,4,10,20,.,1,.,.,.,.,1,55\n";
    const char *names[] = {"ID", "TIME", "EVID", "AMT", "RATE", "DUR", "CMT",
                           "II", "ADDL", "SS",   "DV",  "MDV",  "WT"};
    const double M = NAN;
    const double rows[8][13] = {{1, 0, 1, 100, M, M, 1, 12, 2, 0, M, 1, 70},
                                {1, 1, 0, M, M, M, 2, M, M, M, 3.2, 0, 70},
                                {1, 12, 0, M, M, M, 2, M, M, M, 1.1, 0, 70},
                                {1, 30, 1, 50, -2, M, 2, M, M, M, M, 1, 70},
                                {2, 0, 1, 80, M, 4, 2, 24, 0, 1, M, 1, 55},
                                {2, 0, 0, M, M, M, 2, M, M, M, 0.5, 0, 55},
                                {2, 5, 3, M, M, M, M, M, M, M, M, 1, 55},
                                {2, 5, 4, 10, 20, M, 1, M, M, M, M, 1, 55}};
    double data[13][8];
    const double *cols[13];
    for (int j = 0; j < 13; j++) {
        for (int i = 0; i < 8; i++)
            data[j][i] = rows[i][j];
        cols[j] = data[j];
    }
    ot_records *a = parse(csv), *b = NULL;
    ck_assert_int_eq(ot_records_from_columns(8, 13, names, cols, &b), OT_OK);
    ot_dose_plan *pa = plan_of(a, 2), *pb = plan_of(b, 2);
    ck_assert_int_eq(ot_dose_plan_subjects(pa), 2);
    ck_assert_int_eq(ot_dose_plan_subjects(pb), 2);
    int64_t total = 0;
    for (int64_t s = 0; s < 2; s++) {
        int64_t na = 0, nb = 0, oa = 0, ob = 0;
        const ot_dose_action *xa = acts_of(pa, s, &na), *xb = acts_of(pb, s, &nb);
        ck_assert_int_eq(na, nb);
        ck_assert_int_eq(memcmp(xa, xb, (size_t)na * sizeof *xa), 0);
        const double *ta = NULL, *tb = NULL;
        ck_assert_int_eq(ot_dose_plan_observations(pa, s, &oa, &ta, NULL, NULL), OT_OK);
        ck_assert_int_eq(ot_dose_plan_observations(pb, s, &ob, &tb, NULL, NULL), OT_OK);
        ck_assert_int_eq(oa, ob);
        ck_assert_int_eq(memcmp(ta, tb, (size_t)oa * sizeof *ta), 0);
        total += na;
    }
    /* subject 1: 3 boluses, 2 observations, a modelled start; subject 2: SS
     * marker, start, end (cut? no: it ends at 4, before the reset at 5),
     * observation, reset, reset, start, end */
    ck_assert_int_eq(total, 6 + 8);
    double wa[2], wb[2];
    ck_assert_int_eq(ot_records_covariate(a, "WT", wa), OT_OK);
    ck_assert_int_eq(ot_records_covariate(b, "WT", wb), OT_OK);
    ck_assert(wa[0] == wb[0] && wa[1] == wb[1] && wa[1] == 55);
    ot_dose_plan_free(pa);
    ot_dose_plan_free(pb);
    ot_records_free(a);
    ot_records_free(b);
}
END_TEST

/* examples/data/pk_small.csv, read by its path from the repository root
 * (where make test-c runs). */
START_TEST(the_shipped_dataset_reads_into_ten_subjects)
{
    ot_records *r = NULL;
    ck_assert_int_eq(ot_records_read_csv("examples/data/pk_small.csv", &r), OT_OK);
    ck_assert_int_eq(ot_records_subjects(r), 10);
    ck_assert_int_eq(ot_records_rows(r), 128);
    double wt[10], age[10];
    ck_assert_int_eq(ot_records_covariate(r, "WT", wt), OT_OK);
    ck_assert_int_eq(ot_records_covariate(r, "AGE", age), OT_OK);
    for (int s = 0; s < 10; s++) {
        ck_assert(wt[s] > 50 && wt[s] < 100);
        ck_assert(age[s] >= 18 && age[s] < 90);
    }
    ot_dose_plan *p = plan_of(r, 2);
    for (int64_t s = 0; s < 9; s++) { /* oral: 6 doses into the depot, 12 samples */
        int64_t n = 0, nobs = 0, doses = 0;
        const ot_dose_action *a = acts_of(p, s, &n);
        const int32_t *at = NULL;
        ck_assert_int_eq(ot_dose_plan_observations(p, s, &nobs, NULL, &at, NULL), OT_OK);
        ck_assert_int_eq(nobs, 12);
        for (int64_t i = 0; i < n; i++)
            if (a[i].kind == OT_DOSE_BOLUS) {
                ck_assert_double_eq(a[i].time, 12.0 * (double)doses++);
                ck_assert_int_eq(a[i].state, 0);
            }
        ck_assert_int_eq(doses, 6);
        int64_t flagged = 0; /* troughs at 12, 24, 36, 60 */
        for (int64_t i = 0; i < nobs; i++)
            flagged += at[i];
        ck_assert_int_eq(flagged, 4);
    }
    int64_t n = 0;
    const ot_dose_action *a = acts_of(p, 9, &n);
    int64_t starts = 0, ends = 0;
    for (int64_t i = 0; i < n; i++) {
        if (a[i].kind == OT_DOSE_INFUSION_START)
            ck_assert_double_eq(a[i].time, 24.0 * (double)starts++);
        if (a[i].kind == OT_DOSE_INFUSION_END)
            ck_assert_double_eq(a[i].time, 24.0 * (double)ends++ + 2);
    }
    ck_assert_int_eq(starts, 3);
    ck_assert_int_eq(ends, 3);
    double id = 0;
    ck_assert_int_eq(ot_dose_plan_subject_id(p, 9, &id), OT_OK);
    ck_assert_double_eq(id, 10);
    ot_dose_plan_free(p);
    ot_records_free(r);
}
END_TEST

Suite *dosing_plan_suite(void)
{
    Suite *s = suite_create("dosing_plan");
    TCase *tc = ot_test_tcase(s, "plan", 10);
    tcase_add_test(tc, additional_doses_come_every_interval);
    tcase_add_test(tc, an_infusion_ends_after_amt_over_rate_or_dur);
    tcase_add_test(tc, a_modelled_rate_or_duration_has_a_start_and_no_end);
    tcase_add_test(tc, coincident_records_keep_record_order);
    tcase_add_test(tc, a_reset_ends_running_infusions_and_evid_4_resets_before_its_dose);
    tcase_add_test(tc, steady_state_comes_before_its_dose_and_not_before_additional_ones);
    tcase_add_test(tc, observations_give_output_times_flagged_at_dose_times);
    tcase_add_test(tc, columns_give_the_plan_csv_gives);
    tcase_add_test(tc, the_shipped_dataset_reads_into_ten_subjects);
    return s;
}

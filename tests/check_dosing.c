/* The dosing layer (include/odetensor/dosing.h): NONMEM-style records read
 * from CSV and from columns, every refusal with its message (row and
 * column named), and the plan expanded from them (II/ADDL, infusions from
 * RATE and DUR, modelled rates, coincident records, resets, steady state,
 * observations and the dose-coincidence flag), checked against hand
 * arithmetic. Rows are 1-based data records (the header not counted). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "suites.h"

/* Records from CSV text that must parse. */
static ot_records *parse(const char *csv)
{
    ot_records *r = NULL;
    const int st = ot_records_parse_csv(csv, strlen(csv), &r);
    ck_assert_msg(st == OT_OK, "parse: %s (%s)", ot_status_name(st), ot_last_error());
    return r;
}

/* CSV text refused with status want and exactly the message msg. */
static void refused(const char *csv, int want, const char *msg)
{
    ot_records *r = (ot_records *)(void *)&want; /* a failure sets it to NULL */
    ck_assert_int_eq(ot_records_parse_csv(csv, strlen(csv), &r), want);
    ck_assert_ptr_null(r);
    ck_assert_str_eq(ot_last_error(), msg);
}

/* The plan of records that must expand (ncmt compartments, identity map). */
static ot_dose_plan *plan_of(const ot_records *r, int64_t ncmt)
{
    ot_dose_plan *p = NULL;
    const int st = ot_dose_plan_new(r, ncmt, NULL, &p);
    ck_assert_msg(st == OT_OK, "plan: %s (%s)", ot_status_name(st), ot_last_error());
    return p;
}

/* Subject s's actions. */
static const ot_dose_action *acts_of(const ot_dose_plan *p, int64_t s, int64_t *n)
{
    const ot_dose_action *a = NULL;
    ck_assert_int_eq(ot_dose_plan_actions(p, s, &a, n), OT_OK);
    return a;
}

static const double *col(const ot_records *r, const char *name)
{
    const double *v = NULL;
    ck_assert_int_eq(ot_records_column(r, name, &v), OT_OK);
    return v;
}

/* ---- reading ------------------------------------------------------------ */

START_TEST(headers_are_read_in_any_case)
{
    ot_records *r = parse("id,Time,amt,EvId,cmt,Wt\n1,0,100,1,1,70\n1,2,.,0,2,70\n");
    ck_assert_int_eq(ot_records_rows(r), 2);
    ck_assert_int_eq(ot_records_columns(r), 6);
    ck_assert_str_eq(ot_records_column_name(r, 1), "Time");
    ck_assert_ptr_null(ot_records_column_name(r, 6));
    ck_assert_double_eq(col(r, "TIME")[1], 2);
    ck_assert_double_eq(col(r, "time")[1], 2);
    ck_assert_double_eq(col(r, "AMT")[0], 100);
    ck_assert_double_eq(col(r, "wT")[0], 70);
    ot_dose_plan *p = plan_of(r, 2);
    int64_t n = 0;
    const ot_dose_action *a = acts_of(p, 0, &n);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(a[0].kind, OT_DOSE_BOLUS);
    ck_assert_int_eq(a[1].kind, OT_DOSE_OBSERVATION);
    ck_assert_int_eq(a[1].state, 1);
    ot_dose_plan_free(p);
    ot_records_free(r);
}
END_TEST

START_TEST(a_dot_or_an_empty_cell_is_missing)
{
    ot_records *r = parse("ID,TIME,AMT,DV\n1,0,100,.\n1,1,,3.5\n1,2, . ,  \n");
    const double *amt = col(r, "AMT"), *dv = col(r, "DV");
    ck_assert_double_eq(amt[0], 100);
    ck_assert(isnan(amt[1]) && isnan(amt[2]));
    ck_assert(isnan(dv[0]) && isnan(dv[2]));
    ck_assert_double_eq(dv[1], 3.5);
    ot_records_free(r);
}
END_TEST

START_TEST(comments_blank_lines_crlf_and_a_byte_order_mark_are_skipped)
{
    const char csv[] = "\xEF\xBB\xBF# a study\r\n\r\n  # indented comment\r\n"
                       "ID,TIME,AMT\r\n1,0,10\r\n# between records\r\n\r\n1,1.5,.\r\n"
                       "2,0,20";
    ot_records *r = parse(csv);
    ck_assert_int_eq(ot_records_rows(r), 3);
    ck_assert_double_eq(col(r, "TIME")[1], 1.5);
    ck_assert_double_eq(col(r, "AMT")[2], 20);
    ot_records_free(r);
}
END_TEST

START_TEST(only_len_bytes_of_the_text_are_read)
{
    const char csv[] = "ID,TIME\n1,0\n1,1\ngarbage past the end";
    ot_records *r = NULL;
    ck_assert_int_eq(ot_records_parse_csv(csv, strlen("ID,TIME\n1,0\n1,1\n"), &r), OT_OK);
    ck_assert_int_eq(ot_records_rows(r), 2);
    ot_records_free(r);
}
END_TEST

START_TEST(subjects_come_in_order_of_first_appearance)
{
    ot_records *r = parse("ID,TIME\n10,0\n10,1\n2,0\n7,0\n7,3\n7,4\n");
    ck_assert_int_eq(ot_records_subjects(r), 3);
    const double ids[] = {10, 2, 7};
    const int64_t first[] = {1, 3, 4}, count[] = {2, 1, 3};
    for (int64_t s = 0; s < 3; s++) {
        double id = 0;
        int64_t f = 0, c = 0;
        ck_assert_int_eq(ot_records_subject(r, s, &id, &f, &c), OT_OK);
        ck_assert_double_eq(id, ids[s]);
        ck_assert_int_eq(f, first[s]);
        ck_assert_int_eq(c, count[s]);
    }
    ck_assert_status(ot_records_subject(r, 3, NULL, NULL, NULL), OT_ERR_ARG,
                     "ot_records_subject: subject 3 of 3; subjects are 0 to 2");
    ot_dose_plan *p = plan_of(r, 1);
    ck_assert_int_eq(ot_dose_plan_subjects(p), 3);
    double id = 0;
    ck_assert_int_eq(ot_dose_plan_subject_id(p, 2, &id), OT_OK);
    ck_assert_double_eq(id, 7);
    ot_dose_plan_free(p);
    ot_records_free(r);
}
END_TEST

START_TEST(a_covariate_per_subject_is_its_first_given_value)
{
    ot_records *r =
        parse("ID,TIME,WT,AGE\n1,0,.,40\n1,1,72,41\n1,2,80,41\n2,0,55,.\n2,1,.,.\n");
    double wt[2] = {0, 0};
    ck_assert_int_eq(ot_records_covariate(r, "wt", wt), OT_OK);
    ck_assert_double_eq(wt[0], 72); /* row 1 is missing; row 3's 80 is not read */
    ck_assert_double_eq(wt[1], 55);
    ck_assert_status(
        ot_records_covariate(r, "AGE", wt), OT_ERR_VALUE,
        "ot_records_covariate: AGE is missing on every row of ID 2 (rows 4 to "
        "5)");
    ck_assert_status(
        ot_records_covariate(r, "CRCL", wt), OT_ERR_ARG,
        "ot_records_covariate: no column \"CRCL\"; the columns are ID, TIME, "
        "WT, AGE");
    const double *v = NULL;
    ck_assert_status(ot_records_column(r, "SEX", &v), OT_ERR_ARG,
                     "ot_records_column: no column \"SEX\"");
    ot_records_free(r);
}
END_TEST

START_TEST(a_missing_evid_is_a_dose_where_amt_is_given)
{
    ot_records *r = parse("ID,TIME,AMT,EVID\n1,0,50,.\n1,1,.,.\n1,2,0,.\n");
    ot_dose_plan *p = plan_of(r, 1);
    int64_t n = 0;
    const ot_dose_action *a = acts_of(p, 0, &n);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(a[0].kind, OT_DOSE_BOLUS);
    ck_assert_double_eq(a[0].amount, 50);
    ck_assert_int_eq(a[1].kind, OT_DOSE_OBSERVATION);
    ck_assert_int_eq(a[2].kind, OT_DOSE_OBSERVATION);
    ot_dose_plan_free(p);
    ot_records_free(r);
}
END_TEST

/* ---- refusals ------------------------------------------------------------ */

START_TEST(a_negative_amount_is_refused)
{
    refused("ID,TIME,AMT\n3,0,10\n3,1,-5\n", OT_ERR_VALUE,
            "row 2 (ID 3), AMT: -5 is negative; a dose amount must be >= 0");
}
END_TEST

START_TEST(an_interval_without_additional_doses_is_refused)
{
    refused("ID,TIME,AMT,II\n1,0,10,12\n", OT_ERR_VALUE,
            "row 1 (ID 1), II: 12 without ADDL; II > 0 needs ADDL > 0 or SS 1 or 2");
    refused("ID,TIME,AMT,II,ADDL\n1,0,10,12,0\n", OT_ERR_VALUE,
            "row 1 (ID 1), II: 12 without ADDL; II > 0 needs ADDL > 0 or SS 1 or 2");
}
END_TEST

START_TEST(additional_doses_without_an_interval_are_refused)
{
    refused("ID,TIME,AMT,ADDL\n1,0,10,3\n", OT_ERR_VALUE,
            "row 1 (ID 1), ADDL: 3 without II; additional doses need II > 0");
    refused("ID,TIME,AMT,ADDL\n1,0,10,1.5\n", OT_ERR_VALUE,
            "row 1 (ID 1), ADDL: 1.5 is not a whole number >= 0");
}
END_TEST

START_TEST(steady_state_without_an_interval_is_refused)
{
    refused("ID,TIME,AMT,SS\n1,0,10,1\n", OT_ERR_VALUE,
            "row 1 (ID 1), SS: 1 without II; steady state needs II > 0 (or, for SS 1, "
            "RATE > 0 and AMT 0: a constant infusion)");
    refused("ID,TIME,AMT,RATE,SS\n1,0,0,5,2\n", OT_ERR_VALUE,
            "row 1 (ID 1), SS: 2 without II; steady state needs II > 0 (or, for SS 1, "
            "RATE > 0 and AMT 0: a constant infusion)");
    refused("ID,TIME,AMT,SS,II\n1,0,10,3,12\n", OT_ERR_VALUE,
            "row 1 (ID 1), SS: 3 is not 0, 1 or 2");
}
END_TEST

START_TEST(a_constant_infusion_at_steady_state_is_accepted)
{
    ot_records *r = parse("ID,TIME,AMT,RATE,SS,II,CMT\n1,0,0,5,1,0,2\n1,4,.,.,.,.,2\n");
    ot_dose_plan *p = plan_of(r, 2);
    int64_t n = 0;
    const ot_dose_action *a = acts_of(p, 0, &n);
    ck_assert_int_eq(n, 3); /* the marker, the start (no end), the observation */
    ck_assert_int_eq(a[0].kind, OT_DOSE_STEADY_STATE);
    ck_assert_int_eq(a[0].ss, 1);
    ck_assert_double_eq(a[0].ii, 0);
    ck_assert_double_eq(a[0].rate, 5);
    ck_assert_int_eq(a[1].kind, OT_DOSE_INFUSION_START);
    ck_assert_int_eq(a[1].state, 1);
    ck_assert(isinf(a[1].duration));
    ck_assert_int_eq(a[0].dose, a[1].dose);
    ck_assert_int_eq(a[2].kind, OT_DOSE_OBSERVATION);
    ot_dose_plan_free(p);
    ot_records_free(r);
}
END_TEST

START_TEST(an_unknown_compartment_is_refused_at_plan_time)
{
    ot_records *r = parse("ID,TIME,AMT,CMT\n1,0,10,1\n2,0,10,3\n");
    ot_dose_plan *p = (ot_dose_plan *)r;
    ck_assert_status(ot_dose_plan_new(r, 2, NULL, &p), OT_ERR_VALUE, NULL);
    ck_assert_str_eq(
        ot_last_error(),
        "row 2 (ID 2), CMT: 3 is not a compartment; the model has 2 (CMT 1 to 2)");
    ck_assert_ptr_null(p);
    ot_records_free(r);
    r = parse("ID,TIME,AMT,CMT\n1,0,10,0\n");
    ck_assert_status(ot_dose_plan_new(r, 2, NULL, &p), OT_ERR_VALUE,
                     "row 1 (ID 1), CMT: 0 is not a compartment");
    ck_assert_status(ot_dose_plan_new(r, 0, NULL, &p), OT_ERR_ARG,
                     "ot_dose_plan_new: ncmt is 0; a model has >= 1 compartment");
    const int64_t bad[] = {0, -1};
    ck_assert_status(
        ot_dose_plan_new(r, 2, bad, &p), OT_ERR_ARG,
        "ot_dose_plan_new: cmt_state[1] (CMT 2) is -1; a state index is >= 0");
    ot_records_free(r);
    refused("ID,TIME,AMT,CMT\n1,0,10,1.5\n", OT_ERR_VALUE,
            "row 1 (ID 1), CMT: 1.5 is not a whole number");
}
END_TEST

START_TEST(times_that_decrease_within_an_id_are_refused)
{
    refused(
        "ID,TIME,AMT\n1,0,10\n1,4,.\n1,4,.\n1,2,.\n", OT_ERR_VALUE,
        "row 4 (ID 1), TIME: 2 is before the previous row's 4; times must not decrease "
        "within an ID (equal times apply in record order)");
    ot_records_free(parse("ID,TIME\n1,5\n2,0\n")); /* a new ID starts again */
}
END_TEST

START_TEST(a_cell_that_is_no_number_is_refused_with_its_text)
{
    refused("ID,TIME,AMT\n1,0,10\n# note\n1,1,ten\n", OT_ERR_ARG,
            "row 2 (line 4), AMT: \"ten\" is not a number");
    refused("ID,TIME,AMT\n1,0,1e400\n", OT_ERR_ARG,
            "row 1 (line 2), AMT: \"1e400\" is not a finite number");
    refused("ID,TIME,AMT\n1,0,nan\n", OT_ERR_ARG,
            "row 1 (line 2), AMT: \"nan\" is not a finite number");
    refused("ID,TIME,AMT\n1,0,\"10\"\n", OT_ERR_ARG,
            "row 1 (line 2), AMT: \"\"10\"\" is not a number");
    refused("ID,TIME,AMT\n1,0,10 mg\n", OT_ERR_ARG,
            "row 1 (line 2), AMT: \"10 mg\" is not a number");
}
END_TEST

START_TEST(an_evid_outside_0_to_4_is_refused)
{
    const char *rule =
        "is not 0 (observation), 1 (dose), 2 (other), 3 (reset) or 4 (reset "
        "and dose)";
    char want[256];
    snprintf(want, sizeof want, "row 1 (ID 1), EVID: 5 %s", rule);
    refused("ID,TIME,EVID,AMT\n1,0,5,10\n", OT_ERR_VALUE, want);
    snprintf(want, sizeof want, "row 2 (ID 1), EVID: 1.5 %s", rule);
    refused("ID,TIME,EVID,AMT\n1,0,1,10\n1,1,1.5,10\n", OT_ERR_VALUE, want);
}
END_TEST

START_TEST(a_rate_other_than_positive_0_minus_1_or_minus_2_is_refused)
{
    refused("ID,TIME,AMT,RATE\n1,0,10,-3\n", OT_ERR_VALUE,
            "row 1 (ID 1), RATE: -3 is not > 0 (a rate), 0, -1 (modelled rate) or -2 "
            "(modelled duration)");
}
END_TEST

START_TEST(a_duration_with_a_positive_rate_is_refused)
{
    refused(
        "ID,TIME,AMT,RATE,DUR\n1,0,10,5,2\n", OT_ERR_VALUE,
        "row 1 (ID 1), DUR: 2 with RATE 5; a duration is data only with RATE 0 (RATE > "
        "0 gives the duration AMT/RATE; -1 and -2 model it)");
    refused("ID,TIME,AMT,DUR\n1,0,10,-2\n", OT_ERR_VALUE,
            "row 1 (ID 1), DUR: -2 is negative; a duration must be >= 0");
}
END_TEST

START_TEST(a_dose_without_an_amount_is_refused)
{
    refused("ID,TIME,EVID,AMT\n1,0,0,.\n1,1,4,.\n", OT_ERR_VALUE,
            "row 2 (ID 1), AMT: missing on a dose record (EVID 4)");
    refused("ID,TIME,EVID\n1,0,1\n", OT_ERR_VALUE,
            "row 1 (ID 1), AMT: missing on a dose record (EVID 1)");
}
END_TEST

START_TEST(an_id_whose_rows_are_not_contiguous_is_refused)
{
    refused("ID,TIME\n3,0\n3,1\n4,0\n3,2\n5,0\n4,9\n", OT_ERR_VALUE,
            "row 4 (ID 3), ID: ID 3 appears again at row 4 after other IDs (its earlier "
            "rows end at row 2); each ID's rows must be contiguous");
}
END_TEST

START_TEST(a_malformed_table_is_refused)
{
    refused("ID,TIME,AMT\n1,0\n", OT_ERR_ARG,
            "row 1 (line 2): 2 cells; the header has 3");
    refused("ID,AMT\n1,0\n", OT_ERR_ARG, "header: no TIME column");
    refused("TIME,AMT\n1,0\n", OT_ERR_ARG, "header: no ID column");
    refused("ID,TIME,time\n1,0,0\n", OT_ERR_ARG,
            "header: columns 2 and 3 are both called time");
    refused("ID,TIME,,AMT\n1,0,0,0\n", OT_ERR_ARG, "header: column 3 has no name");
    refused("# only a comment\n\n", OT_ERR_ARG,
            "ot_records_parse_csv: no header (the text has no line that is neither blank "
            "nor a # comment)");
    refused("ID,TIME\n.,0\n", OT_ERR_VALUE,
            "row 1, ID: missing; every record needs an ID");
    refused("ID,TIME\n1,.\n", OT_ERR_VALUE,
            "row 1 (ID 1), TIME: missing; every record needs a time");
    refused("ID,TIME,MDV\n1,0,2\n", OT_ERR_VALUE, "row 1 (ID 1), MDV: 2 is not 0 or 1");
    refused("ID,TIME,AMT,II,ADDL\n1,0,1,1,2000000\n", OT_ERR_VALUE,
            "row 1 (ID 1), ADDL: 2000000 is more than 1000000 additional doses");
    ot_records *r = NULL;
    ck_assert_status(ot_records_parse_csv(NULL, 0, &r), OT_ERR_ARG,
                     "ot_records_parse_csv: text is NULL");
    ck_assert_status(ot_records_parse_csv("ID,TIME\n", 8, NULL), OT_ERR_ARG,
                     "ot_records_parse_csv: out is NULL");
}
END_TEST

START_TEST(a_file_that_cannot_be_opened_is_refused_by_path)
{
    ot_records *r = NULL;
    ck_assert_status(ot_records_read_csv("tests/no/such.csv", &r), OT_ERR_ARG,
                     "ot_records_read_csv: cannot open \"tests/no/such.csv\"");
    ck_assert_ptr_null(r);
}
END_TEST

START_TEST(columns_are_refused_as_csv_is)
{
    const double id[] = {1, 1}, t[] = {0, 1}, amt[] = {10, -1}, inf[] = {0, INFINITY};
    const char *names[] = {"id", "time", "amt"};
    const double *cols[] = {id, t, amt};
    ot_records *r = NULL;
    ck_assert_status(ot_records_from_columns(2, 3, names, cols, &r), OT_ERR_VALUE,
                     "row 2 (ID 1), AMT: -1 is negative; a dose amount must be >= 0");
    ck_assert_ptr_null(r);
    const double *cols_inf[] = {id, t, inf};
    ck_assert_status(ot_records_from_columns(2, 3, names, cols_inf, &r), OT_ERR_ARG,
                     "row 2, amt: inf is not a finite number");
    const double *cols_null[] = {id, NULL, amt};
    ck_assert_status(ot_records_from_columns(2, 3, names, cols_null, &r), OT_ERR_ARG,
                     "ot_records_from_columns: columns[1] is NULL");
    ck_assert_status(ot_records_from_columns(2, 0, names, cols, &r), OT_ERR_ARG,
                     "ot_records_from_columns: 2 rows and 0 columns");
    ck_assert_status(ot_dose_plan_new(NULL, 1, NULL, &(ot_dose_plan *){NULL}), OT_ERR_ARG,
                     "ot_dose_plan_new: records is NULL");
    ck_assert_status(ot_dose_plan_actions(NULL, 0, NULL, NULL), OT_ERR_ARG,
                     "ot_dose_plan_actions: plan is NULL");
    ot_records_free(NULL);
    ot_dose_plan_free(NULL);
    ck_assert_int_eq(ot_records_rows(NULL) + ot_records_subjects(NULL), 0);
}
END_TEST

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
        ck_assert_int_eq(a[i].rate_kind, OT_RATE_DATA);
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

Suite *dosing_suite(void)
{
    Suite *s = suite_create("dosing");
    TCase *tc = ot_test_tcase(s, "records", 10);
    tcase_add_test(tc, headers_are_read_in_any_case);
    tcase_add_test(tc, a_dot_or_an_empty_cell_is_missing);
    tcase_add_test(tc, comments_blank_lines_crlf_and_a_byte_order_mark_are_skipped);
    tcase_add_test(tc, only_len_bytes_of_the_text_are_read);
    tcase_add_test(tc, subjects_come_in_order_of_first_appearance);
    tcase_add_test(tc, a_covariate_per_subject_is_its_first_given_value);
    tcase_add_test(tc, a_missing_evid_is_a_dose_where_amt_is_given);
    tc = ot_test_tcase(s, "refusals", 10);
    tcase_add_test(tc, a_negative_amount_is_refused);
    tcase_add_test(tc, an_interval_without_additional_doses_is_refused);
    tcase_add_test(tc, additional_doses_without_an_interval_are_refused);
    tcase_add_test(tc, steady_state_without_an_interval_is_refused);
    tcase_add_test(tc, a_constant_infusion_at_steady_state_is_accepted);
    tcase_add_test(tc, an_unknown_compartment_is_refused_at_plan_time);
    tcase_add_test(tc, times_that_decrease_within_an_id_are_refused);
    tcase_add_test(tc, a_cell_that_is_no_number_is_refused_with_its_text);
    tcase_add_test(tc, an_evid_outside_0_to_4_is_refused);
    tcase_add_test(tc, a_rate_other_than_positive_0_minus_1_or_minus_2_is_refused);
    tcase_add_test(tc, a_duration_with_a_positive_rate_is_refused);
    tcase_add_test(tc, a_dose_without_an_amount_is_refused);
    tcase_add_test(tc, an_id_whose_rows_are_not_contiguous_is_refused);
    tcase_add_test(tc, a_malformed_table_is_refused);
    tcase_add_test(tc, a_file_that_cannot_be_opened_is_refused_by_path);
    tcase_add_test(tc, columns_are_refused_as_csv_is);
    tc = ot_test_tcase(s, "plan", 10);
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

/* The dosing layer (include/odetensor/dosing.h), its records: read from
 * CSV and from columns, and every refusal with its message (row and column
 * named). Rows are 1-based data records (the header not counted). The plan
 * expanded from records is check_dosing_plan.c's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dosing_common.h"

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
    return s;
}

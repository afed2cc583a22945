/* Helpers of the dosing suites (check_dosing.c, check_dosing_plan.c). */
#ifndef OT_TESTS_DOSING_COMMON_H
#define OT_TESTS_DOSING_COMMON_H

#include <string.h>

#include "suites.h"

/* Records from CSV text that must parse. */
static inline ot_records *parse(const char *csv)
{
    ot_records *r = NULL;
    const int st = ot_records_parse_csv(csv, strlen(csv), &r);
    ck_assert_msg(st == OT_OK, "parse: %s (%s)", ot_status_name(st), ot_last_error());
    return r;
}

/* CSV text refused with status want and exactly the message msg. */
static inline void refused(const char *csv, int want, const char *msg)
{
    ot_records *r = (ot_records *)(void *)&want; /* a failure sets it to NULL */
    ck_assert_int_eq(ot_records_parse_csv(csv, strlen(csv), &r), want);
    ck_assert_ptr_null(r);
    ck_assert_str_eq(ot_last_error(), msg);
}

/* The plan of records that must expand (ncmt compartments, identity map). */
static inline ot_dose_plan *plan_of(const ot_records *r, int64_t ncmt)
{
    ot_dose_plan *p = NULL;
    const int st = ot_dose_plan_new(r, ncmt, NULL, &p);
    ck_assert_msg(st == OT_OK, "plan: %s (%s)", ot_status_name(st), ot_last_error());
    return p;
}

/* Subject s's actions. */
static inline const ot_dose_action *acts_of(const ot_dose_plan *p, int64_t s, int64_t *n)
{
    const ot_dose_action *a = NULL;
    ck_assert_int_eq(ot_dose_plan_actions(p, s, &a, n), OT_OK);
    return a;
}

static inline const double *col(const ot_records *r, const char *name)
{
    const double *v = NULL;
    ck_assert_int_eq(ot_records_column(r, name, &v), OT_OK);
    return v;
}

#endif

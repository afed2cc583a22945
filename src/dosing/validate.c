/* The record checks: each ID's rows contiguous (the subjects found on the
 * way), then every row's values and, on dose records, how the dose columns
 * combine. A refusal names the row (1-based), its ID and the column:
 * "row 14 (ID 3), AMT: -5 is negative; a dose amount must be >= 0". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dosing/dosing_impl.h"

/* "row R (ID x), COL" for row i (0-based) and standard column c. */
static void where(char buf[96], const ot_records *r, int64_t i, int c)
{
    char id[32];
    ot__dosing_num(id, ot__dosing_get(r, OT__COL_ID, i));
    snprintf(buf, 96, "row %lld (ID %s), %s", (long long)i + 1, id,
             ot__dosing_std_name(c));
}

/* A refusal of row i's column c: "<where>: <value> <rule>". */
static int refuse(const ot_records *r, int64_t i, int c, const char *rule)
{
    char at[96], num[32];
    where(at, r, i, c);
    ot__dosing_num(num, ot__dosing_get(r, c, i));
    return ot_set_error(OT_ERR_VALUE, "%s: %s %s", at, num, rule);
}

static int whole(double v) { return v == floor(v); }

/* 0 where the cell is missing. */
static double or0(const ot_records *r, int c, int64_t i)
{
    const double v = ot__dosing_get(r, c, i);
    return isnan(v) ? 0 : v;
}

typedef struct {
    double id;
    int64_t first, last; /* 0-based rows */
} run;

static int by_id_then_row(const void *a, const void *b)
{
    const run *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* The subjects: runs of equal IDs; an ID with two runs is refused. */
static int subjects(ot_records *r)
{
    const int64_t n = r->nrows;
    for (int64_t i = 0; i < n; i++)
        if (isnan(ot__dosing_get(r, OT__COL_ID, i)))
            return ot_set_error(OT_ERR_VALUE,
                                "row %lld, ID: missing; every record needs an ID",
                                (long long)i + 1);
    int64_t nrun = 0;
    for (int64_t i = 0; i < n; i++)
        if (i == 0 ||
            ot__dosing_get(r, OT__COL_ID, i) != ot__dosing_get(r, OT__COL_ID, i - 1))
            nrun++;
    r->subj_first = malloc((size_t)(nrun + 1) * sizeof *r->subj_first);
    run *runs = malloc((size_t)(nrun > 0 ? nrun : 1) * sizeof *runs);
    if (r->subj_first == NULL || runs == NULL) {
        free(runs);
        return ot_set_error(OT_ERR_NOMEM, "records: out of memory for %lld subjects",
                            (long long)nrun);
    }
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (i == 0 ||
            ot__dosing_get(r, OT__COL_ID, i) != ot__dosing_get(r, OT__COL_ID, i - 1)) {
            if (k > 0)
                runs[k - 1].last = i - 1;
            runs[k].id = ot__dosing_get(r, OT__COL_ID, i);
            runs[k].first = i;
            r->subj_first[k++] = i;
        }
    if (k > 0)
        runs[k - 1].last = n - 1;
    r->subj_first[nrun] = n;
    r->nsubj = nrun;
    qsort(runs, (size_t)nrun, sizeof *runs, by_id_then_row);
    /* The earliest row at which an ID comes back. */
    int64_t bad = -1;
    for (int64_t j = 1; j < nrun; j++)
        if (runs[j].id == runs[j - 1].id && (bad < 0 || runs[j].first < runs[bad].first))
            bad = j;
    int st = OT_OK;
    if (bad >= 0) {
        char id[32];
        ot__dosing_num(id, runs[bad].id);
        st = ot_set_error(OT_ERR_VALUE,
                          "row %lld (ID %s), ID: ID %s appears again at row %lld after "
                          "other IDs (its earlier rows end at row %lld); each ID's rows "
                          "must be contiguous",
                          (long long)runs[bad].first + 1, id, id,
                          (long long)runs[bad].first + 1,
                          (long long)runs[bad - 1].last + 1);
    }
    free(runs);
    return st;
}

/* Row i's values, column by column. */
static int values(ot_records *r, int64_t i)
{
    char at[96];
    if (isnan(ot__dosing_get(r, OT__COL_TIME, i))) {
        where(at, r, i, OT__COL_TIME);
        return ot_set_error(OT_ERR_VALUE, "%s: missing; every record needs a time", at);
    }
    const double evid = ot__dosing_get(r, OT__COL_EVID, i);
    const double amt = ot__dosing_get(r, OT__COL_AMT, i);
    if (!isnan(evid) && (!whole(evid) || evid < 0 || evid > 4))
        return refuse(r, i, OT__COL_EVID,
                      "is not 0 (observation), 1 (dose), 2 (other), 3 (reset) or 4 "
                      "(reset and dose)");
    const double rate = ot__dosing_get(r, OT__COL_RATE, i);
    r->evid[i] = !isnan(evid) ? (int32_t)evid : amt > 0 || (!isnan(rate) && rate != 0);
    if (amt < 0)
        return refuse(r, i, OT__COL_AMT, "is negative; a dose amount must be >= 0");
    if (rate < 0 && rate != -1 && rate != -2)
        return refuse(r, i, OT__COL_RATE,
                      "is not > 0 (a rate), 0, -1 (modelled rate) or -2 (modelled "
                      "duration)");
    if (ot__dosing_get(r, OT__COL_DUR, i) < 0)
        return refuse(r, i, OT__COL_DUR, "is negative; a duration must be >= 0");
    const double cmt = ot__dosing_get(r, OT__COL_CMT, i);
    if (!isnan(cmt) && !whole(cmt))
        return refuse(r, i, OT__COL_CMT, "is not a whole number");
    if (ot__dosing_get(r, OT__COL_II, i) < 0)
        return refuse(r, i, OT__COL_II, "is negative; an interval must be >= 0");
    const double addl = ot__dosing_get(r, OT__COL_ADDL, i);
    if (!isnan(addl) && (!whole(addl) || addl < 0))
        return refuse(r, i, OT__COL_ADDL, "is not a whole number >= 0");
    if (addl > OT__DOSING_MAX_ADDL)
        return refuse(r, i, OT__COL_ADDL, "is more than 1000000 additional doses");
    const double ss = ot__dosing_get(r, OT__COL_SS, i);
    if (!isnan(ss) && ss != 0 && ss != 1 && ss != 2)
        return refuse(r, i, OT__COL_SS, "is not 0, 1 or 2");
    const double mdv = ot__dosing_get(r, OT__COL_MDV, i);
    if (!isnan(mdv) && mdv != 0 && mdv != 1)
        return refuse(r, i, OT__COL_MDV, "is not 0 or 1");
    return OT_OK;
}

/* How a dose record's columns combine. */
static int dose(const ot_records *r, int64_t i)
{
    char at[96];
    const double amt = ot__dosing_get(r, OT__COL_AMT, i);
    if (isnan(amt)) {
        where(at, r, i, OT__COL_AMT);
        return ot_set_error(OT_ERR_VALUE, "%s: missing on a dose record (EVID %d)", at,
                            (int)r->evid[i]);
    }
    const double rate = or0(r, OT__COL_RATE, i), dur = or0(r, OT__COL_DUR, i);
    const double ii = or0(r, OT__COL_II, i), addl = or0(r, OT__COL_ADDL, i);
    const double ss = or0(r, OT__COL_SS, i);
    if (dur > 0 && rate != 0) {
        char d[32], rt[32];
        where(at, r, i, OT__COL_DUR);
        ot__dosing_num(d, dur);
        ot__dosing_num(rt, rate);
        return ot_set_error(OT_ERR_VALUE,
                            "%s: %s with RATE %s; a duration is data only with RATE 0 "
                            "(RATE > 0 gives the duration AMT/RATE; -1 and -2 model it)",
                            at, d, rt);
    }
    if (addl > 0 && ii == 0)
        return refuse(r, i, OT__COL_ADDL, "without II; additional doses need II > 0");
    if (ii > 0 && addl == 0 && ss == 0)
        return refuse(r, i, OT__COL_II,
                      "without ADDL; II > 0 needs ADDL > 0 or SS 1 or 2");
    if (ss > 0 && ii == 0 && !(ss == 1 && rate > 0 && amt == 0))
        return refuse(r, i, OT__COL_SS,
                      "without II; steady state needs II > 0 (or, for SS 1, RATE > 0 "
                      "and AMT 0: a constant infusion)");
    return OT_OK;
}

int ot__dosing_validate(ot_records *r)
{
    int st = subjects(r);
    for (int64_t i = 0; i < r->nrows && st == OT_OK; i++) {
        st = values(r, i);
        if (st == OT_OK &&
            (r->evid[i] == OT_EVID_DOSE || r->evid[i] == OT_EVID_RESET_DOSE))
            st = dose(r, i);
        if (st == OT_OK && i > 0 &&
            ot__dosing_get(r, OT__COL_ID, i) == ot__dosing_get(r, OT__COL_ID, i - 1)) {
            const double t = ot__dosing_get(r, OT__COL_TIME, i);
            const double prev = ot__dosing_get(r, OT__COL_TIME, i - 1);
            if (t < prev) {
                char p[32];
                ot__dosing_num(p, prev);
                char rule[160];
                snprintf(
                    rule, sizeof rule,
                    "is before the previous row's %s; times must not decrease within "
                    "an ID (equal times apply in record order)",
                    p);
                st = refuse(r, i, OT__COL_TIME, rule);
            }
        }
    }
    return st;
}

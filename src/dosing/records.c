/* Records: their storage, the columns way in (ot_records_from_columns) and
 * the accessors. The CSV reader is csv.c; the checks are validate.c. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dosing/dosing_impl.h"

static const char *const std_names[OT__NCOL_STD] = {
    "ID", "TIME", "EVID", "AMT", "RATE", "DUR", "CMT", "II", "ADDL", "SS", "DV", "MDV"};

const char *ot__dosing_std_name(int c) { return std_names[c]; }

double ot__dosing_get(const ot_records *r, int c, int64_t row)
{
    const int64_t j = r->std[c];
    return j < 0 ? NAN : r->data[j * r->nrows + row];
}

int ot__dosing_name_eq(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++)
        if (toupper((unsigned char)*a) != toupper((unsigned char)*b))
            return 0;
    return *a == *b;
}

void ot__dosing_num(char buf[32], double v) { snprintf(buf, 32, "%.15g", v); }

ot_records *ot__dosing_alloc(int64_t nrows, int64_t ncols, const char *const *names)
{
    if (ncols > 0 &&
        (uint64_t)nrows > (uint64_t)(SIZE_MAX / sizeof(double)) / (uint64_t)ncols)
        return NULL;
    ot_records *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->nrows = nrows;
    r->ncols = ncols;
    const size_t cells = (size_t)nrows * (size_t)ncols;
    r->names = calloc((size_t)ncols, sizeof *r->names);
    r->data = malloc((cells > 0 ? cells : 1) * sizeof *r->data);
    r->evid = malloc((nrows > 0 ? (size_t)nrows : 1) * sizeof *r->evid);
    if (r->names == NULL || r->data == NULL || r->evid == NULL) {
        ot_records_free(r);
        return NULL;
    }
    for (int64_t j = 0; j < ncols; j++) {
        const size_t len = strlen(names[j]);
        r->names[j] = malloc(len + 1);
        if (r->names[j] == NULL) {
            ot_records_free(r);
            return NULL;
        }
        memcpy(r->names[j], names[j], len + 1);
    }
    return r;
}

int ot__dosing_names(ot_records *r)
{
    for (int c = 0; c < OT__NCOL_STD; c++)
        r->std[c] = -1;
    for (int64_t j = 0; j < r->ncols; j++) {
        if (r->names[j][0] == '\0')
            return ot_set_error(OT_ERR_ARG, "header: column %lld has no name",
                                (long long)j + 1);
        for (int64_t i = 0; i < j; i++)
            if (ot__dosing_name_eq(r->names[i], r->names[j]))
                return ot_set_error(OT_ERR_ARG,
                                    "header: columns %lld and %lld are both called %s",
                                    (long long)i + 1, (long long)j + 1, r->names[j]);
        for (int c = 0; c < OT__NCOL_STD; c++)
            if (ot__dosing_name_eq(r->names[j], std_names[c]))
                r->std[c] = j;
    }
    if (r->std[OT__COL_ID] < 0)
        return ot_set_error(OT_ERR_ARG, "header: no ID column");
    if (r->std[OT__COL_TIME] < 0)
        return ot_set_error(OT_ERR_ARG, "header: no TIME column");
    return OT_OK;
}

int ot_records_from_columns(int64_t nrows, int64_t ncols, const char *const *names,
                            const double *const *columns, ot_records **out)
{
    if (out == NULL)
        return ot_set_error(OT_ERR_ARG, "ot_records_from_columns: out is NULL");
    *out = NULL;
    if (nrows < 0 || ncols < 1)
        return ot_set_error(OT_ERR_ARG,
                            "ot_records_from_columns: %lld rows and %lld columns; "
                            "rows must be >= 0 and columns >= 1",
                            (long long)nrows, (long long)ncols);
    if (names == NULL || columns == NULL)
        return ot_set_error(OT_ERR_ARG, "ot_records_from_columns: %s is NULL",
                            names == NULL ? "names" : "columns");
    if ((uint64_t)nrows > (uint64_t)(SIZE_MAX / sizeof(double)) / (uint64_t)ncols)
        return ot_set_error(OT_ERR_OVERFLOW,
                            "ot_records_from_columns: %lld rows of %lld columns overflow",
                            (long long)nrows, (long long)ncols);
    for (int64_t j = 0; j < ncols; j++)
        if (names[j] == NULL || (nrows > 0 && columns[j] == NULL))
            return ot_set_error(OT_ERR_ARG, "ot_records_from_columns: %s[%lld] is NULL",
                                names[j] == NULL ? "names" : "columns", (long long)j);
    ot_records *r = ot__dosing_alloc(nrows, ncols, names);
    if (r == NULL)
        return ot_set_error(OT_ERR_NOMEM,
                            "ot_records_from_columns: out of memory for "
                            "%lld rows",
                            (long long)nrows);
    int st = ot__dosing_names(r);
    for (int64_t j = 0; j < ncols && st == OT_OK; j++)
        for (int64_t i = 0; i < nrows; i++) {
            const double v = columns[j][i];
            if (isinf(v)) {
                char num[32];
                ot__dosing_num(num, v);
                st = ot_set_error(OT_ERR_ARG, "row %lld, %s: %s is not a finite number",
                                  (long long)i + 1, r->names[j], num);
                break;
            }
            r->data[j * nrows + i] = v;
        }
    if (st == OT_OK)
        st = ot__dosing_validate(r);
    if (st != OT_OK) {
        ot_records_free(r);
        return st;
    }
    *out = r;
    return OT_OK;
}

void ot_records_free(ot_records *records)
{
    if (records == NULL)
        return;
    if (records->names != NULL)
        for (int64_t j = 0; j < records->ncols; j++)
            free(records->names[j]);
    free(records->names);
    free(records->data);
    free(records->evid);
    free(records->subj_first);
    free(records);
}

int64_t ot_records_rows(const ot_records *records)
{
    return records == NULL ? 0 : records->nrows;
}

int64_t ot_records_subjects(const ot_records *records)
{
    return records == NULL ? 0 : records->nsubj;
}

int ot_records_subject(const ot_records *records, int64_t s, double *id,
                       int64_t *first_row, int64_t *nrows)
{
    if (records == NULL)
        return ot_set_error(OT_ERR_ARG, "ot_records_subject: records is NULL");
    if (s < 0 || s >= records->nsubj)
        return ot_set_error(OT_ERR_ARG,
                            "ot_records_subject: subject %lld of %lld; subjects are 0 to "
                            "%lld",
                            (long long)s, (long long)records->nsubj,
                            (long long)records->nsubj - 1);
    const int64_t first = records->subj_first[s];
    if (id != NULL)
        *id = ot__dosing_get(records, OT__COL_ID, first);
    if (first_row != NULL)
        *first_row = first + 1;
    if (nrows != NULL)
        *nrows = records->subj_first[s + 1] - first;
    return OT_OK;
}

int64_t ot_records_columns(const ot_records *records)
{
    return records == NULL ? 0 : records->ncols;
}

const char *ot_records_column_name(const ot_records *records, int64_t j)
{
    if (records == NULL || j < 0 || j >= records->ncols)
        return NULL;
    return records->names[j];
}

/* The column index of name, or a refusal listing the columns. */
static int find_column(const ot_records *r, const char *fn, const char *name, int64_t *j)
{
    for (int64_t k = 0; k < r->ncols; k++)
        if (ot__dosing_name_eq(r->names[k], name)) {
            *j = k;
            return OT_OK;
        }
    char list[256];
    size_t used = 0;
    list[0] = '\0';
    for (int64_t k = 0; k < r->ncols && used < sizeof list; k++) {
        const int w = snprintf(list + used, sizeof list - used, "%s%s", k > 0 ? ", " : "",
                               r->names[k]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return ot_set_error(OT_ERR_ARG, "%s: no column \"%s\"; the columns are %s", fn, name,
                        list);
}

int ot_records_column(const ot_records *records, const char *name, const double **values)
{
    if (records == NULL || name == NULL || values == NULL)
        return ot_set_error(OT_ERR_ARG, "ot_records_column: %s is NULL",
                            records == NULL ? "records"
                            : name == NULL  ? "name"
                                            : "values");
    int64_t j = 0;
    const int st = find_column(records, "ot_records_column", name, &j);
    if (st != OT_OK)
        return st;
    *values = records->data + j * records->nrows;
    return OT_OK;
}

int ot_records_covariate(const ot_records *records, const char *name, double *values)
{
    if (records == NULL || name == NULL || values == NULL)
        return ot_set_error(OT_ERR_ARG, "ot_records_covariate: %s is NULL",
                            records == NULL ? "records"
                            : name == NULL  ? "name"
                                            : "values");
    int64_t j = 0;
    const int st = find_column(records, "ot_records_covariate", name, &j);
    if (st != OT_OK)
        return st;
    const double *col = records->data + j * records->nrows;
    for (int64_t s = 0; s < records->nsubj; s++) {
        const int64_t a = records->subj_first[s], b = records->subj_first[s + 1];
        int64_t i = a;
        while (i < b && isnan(col[i]))
            i++;
        if (i == b) {
            char id[32];
            ot__dosing_num(id, ot__dosing_get(records, OT__COL_ID, a));
            return ot_set_error(OT_ERR_VALUE,
                                "ot_records_covariate: %s is missing on every row of ID "
                                "%s (rows %lld to %lld)",
                                records->names[j], id, (long long)a + 1, (long long)b);
        }
        values[s] = col[i];
    }
    return OT_OK;
}

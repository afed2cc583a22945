/* The dosing layer's private parts: the records' contents, shared by the CSV
 * reader (csv.c), the columns and accessors (records.c), the record checks
 * (validate.c) and the plan (plan.c). Public headers only below this. */
#ifndef OT_DOSING_IMPL_H
#define OT_DOSING_IMPL_H

#include <stdint.h>

#include <odetensor/dosing.h>

/* The columns with a meaning; every other column is a covariate. */
enum {
    OT__COL_ID,
    OT__COL_TIME,
    OT__COL_EVID,
    OT__COL_AMT,
    OT__COL_RATE,
    OT__COL_DUR,
    OT__COL_CMT,
    OT__COL_II,
    OT__COL_ADDL,
    OT__COL_SS,
    OT__COL_DV,
    OT__COL_MDV,
    OT__NCOL_STD
};

/* The most additional doses one record may ask for. */
#define OT__DOSING_MAX_ADDL 1000000

struct ot_records {
    int64_t nrows, ncols;
    char **names;              /* [ncols], owned */
    double *data;              /* [ncols * nrows], column j at data + j * nrows */
    int64_t std[OT__NCOL_STD]; /* column index of each, -1 when absent */
    int32_t *evid;             /* [nrows]: EVID with missing ones resolved */
    int64_t nsubj;
    int64_t
        *subj_first; /* [nsubj + 1]: subject s is rows [first[s], first[s+1]) (0-based) */
};

/* The standard column's name (upper case). */
const char *ot__dosing_std_name(int c);

/* Row r's (0-based) value of standard column c; NaN when the column is
 * absent or the cell missing. */
double ot__dosing_get(const ot_records *r, int c, int64_t row);

/* Case-insensitive name equality. */
int ot__dosing_name_eq(const char *a, const char *b);

/* Records of nrows rows and the given column names, values unset (names
 * copied); NULL when out of memory. */
ot_records *ot__dosing_alloc(int64_t nrows, int64_t ncols, const char *const *names);

/* Checks the names (none empty, no duplicates, ID and TIME present) and fills
 * std. */
int ot__dosing_names(ot_records *r);

/* Checks every row and finds the subjects (validate.c); on failure the
 * message names the row, its ID and the column. */
int ot__dosing_validate(ot_records *r);

/* Formats a number for a message, as short as it reads ("3", "-0.5"). */
void ot__dosing_num(char buf[32], double v);

#endif

/* Step records, NaN padding and the gathering of steps into tensors: the
 * parts of finishing a solve that no solver repeats. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "solution/output.h"
#include "tensor/tensor_impl.h"

/* Room for cap entries of width doubles: OT_OK or OT_ERR_NOMEM (the
 * record as it was). */
static int grow(ot__record *r, int64_t cap)
{
    double *nt = OT__REALLOC(r->t, (size_t)cap * sizeof *nt);
    if (nt == NULL)
        return OT_ERR_NOMEM;
    r->t = nt;
    double *ny = OT__REALLOC(r->y, (size_t)(cap * r->width) * sizeof *ny + 1);
    if (ny == NULL)
        return OT_ERR_NOMEM;
    r->y = ny;
    r->cap = cap;
    return OT_OK;
}

int ot__record_reserve(ot__record *r, int64_t entries, int64_t width)
{
    if (r->cap >= entries && r->cap > 0)
        return OT_OK;
    r->width = width;
    return grow(r, entries > OT__RECORD_FIRST ? entries : OT__RECORD_FIRST);
}

double *ot__record_push(ot__record *r, double t)
{
    if (r->count == r->cap) {
        const int64_t cap = r->cap ? 2 * r->cap : OT__RECORD_FIRST;
        if (grow(r, cap) != OT_OK)
            return NULL;
    }
    r->t[r->count] = t;
    return r->y + r->count++ * r->width;
}

void ot__record_free(ot__record *r)
{
    free(r->t);
    free(r->y);
    r->t = r->y = NULL;
    r->count = r->cap = 0;
}

void ot__out_pad_host(ot_tensor *ys, ot_tensor *const *sens, int64_t nsens,
                      const int64_t *count, int64_t rows, int64_t nbatch)
{
    const int64_t nt = ot_tensor_layout(ys)->shape[1];
    for (int64_t b = 0; b < nbatch; b++)
        for (int64_t k = count[b]; k < nt; k++) {
            ot__out_nan(ys, k, b, rows);
            for (int64_t j = 0; j < nsens; j++)
                ot__out_nan(sens[j], k, b, rows);
        }
}

int64_t ot__out_nt_max(const int64_t *count, int64_t nbatch)
{
    int64_t m = 1;
    for (int64_t b = 0; b < nbatch; b++)
        m = count[b] > m ? count[b] : m;
    return m;
}

int ot__out_gather_steps(ot_tensor **ts_out, ot_tensor **ys_out,
                         const ot__record *records, int64_t block, const int64_t *count,
                         int64_t rows, int64_t nbatch, ot_dtype dtype)
{
    const int64_t nt_max = ot__out_nt_max(count, nbatch);
    const int64_t tshape[2] = {nt_max, nbatch}, yshape[3] = {rows, nt_max, nbatch};
    ot_tensor *tst = NULL, *yst = NULL;
    int st = ot__tensor_alloc(&tst, OT_F64, 2, tshape, "ts");
    if (st == OT_OK)
        st = ot__tensor_alloc(&yst, dtype, 3, yshape, "ys");
    if (st != OT_OK) {
        ot_tensor_free(tst);
        return st;
    }
    double *ts = ot_tensor_layout(tst)->data;
    for (int64_t b = 0; b < nbatch; b++) {
        const ot__record *r = &records[b / block];
        const int64_t c = count[b];
        for (int64_t k = 0; k < nt_max; k++) {
            ts[b * nt_max + k] = k < c ? r->t[k] : NAN;
            if (k < c) /* a record with no step has no buffer to offset */
                ot__out_store(yst, k, b, r->y + k * r->width + (b % block) * rows, rows);
            else
                ot__out_nan(yst, k, b, rows);
        }
    }
    *ts_out = tst;
    *ys_out = yst;
    return OT_OK;
}

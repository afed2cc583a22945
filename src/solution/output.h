/* Private: writing lane results into output tensors ([rows, nt, nbatch],
 * f64 or f32) and step records, shared by every solver. */
#ifndef OT_SRC_OUTPUT_H
#define OT_SRC_OUTPUT_H

#include <math.h>
#include <string.h>

#include "odetensor/solution.h"
#include "odetensor/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Pointer to column [:, i, b] of an output tensor. */
static inline void *ot__out_column(const ot_tensor *t, int64_t i, int64_t b)
{
    const ot_layout *l = ot_tensor_layout(t);
    return (char *)l->data + i * l->strides[1] + b * l->strides[2];
}

/* Stores rows values (converted to the tensor's dtype) at [:, i, b]. */
static inline void ot__out_store(const ot_tensor *t, int64_t i, int64_t b,
                                 const double *src, int64_t rows)
{
    void *dst = ot__out_column(t, i, b);
    if (ot_tensor_layout(t)->dtype == OT_F64) {
        if (dst != src)
            memcpy(dst, src, (size_t)rows * sizeof *src);
    } else {
        float *f = (float *)dst;
        for (int64_t r = 0; r < rows; r++)
            f[r] = (float)src[r];
    }
}

/* NaN at [:, i, b]: no result there. */
static inline void ot__out_nan(const ot_tensor *t, int64_t i, int64_t b, int64_t rows)
{
    void *dst = ot__out_column(t, i, b);
    const int f64 = ot_tensor_layout(t)->dtype == OT_F64;
    for (int64_t r = 0; r < rows; r++) {
        if (f64)
            ((double *)dst)[r] = NAN;
        else
            ((float *)dst)[r] = NAN;
    }
}

/* Steps a record holds before it first grows (then it doubles); the size
 * check counts this much per record. */
#define OT__RECORD_FIRST 64
#define OT__STR_(x) #x
#define OT__STR(x) OT__STR_(x) /* a macro's value as text, for messages */

/* A growable record of steps: count times and width values per step. */
typedef struct {
    double *t, *y;
    int64_t count, cap, width;
} ot__record;

/* Room for one more step at time t: returns the width values to fill, or
 * NULL when out of memory (the record is then unchanged). */
double *ot__record_push(ot__record *r, double t);
/* Room for at least entries entries (and OT__RECORD_FIRST) of width
 * doubles now, so that as many pushes allocate nothing. @return OT_OK or
 * OT_ERR_NOMEM (the record as it was). */
int ot__record_reserve(ot__record *r, int64_t entries, int64_t width);
/* Frees the buffers and empties r (width kept). */
void ot__record_free(ot__record *r);

/* NaN at [:, k, b] for k >= count[b], in ys [rows, nt, nbatch] and each of
 * the nsens sensitivity tensors, all in host memory. */
void ot__out_pad_host(ot_tensor *ys, ot_tensor *const *sens, int64_t nsens,
                      const int64_t *count, int64_t rows, int64_t nbatch);

/* The largest of count[0..nbatch), 1 at least: the steps every-step
 * outputs are padded to. */
int64_t ot__out_nt_max(const int64_t *count, int64_t nbatch);

/* NaN-padded ts [nt_max, nbatch] and ys [rows, nt_max, nbatch] (dtype)
 * from the step records: records[k] holds lanes [k block, (k + 1) block),
 * each step [rows, lanes] (block 1: a record per lane). nt_max is the
 * largest count (1 at least). Ownership: *ts and *ys are the caller's.
 * @return OT_OK or OT_ERR_NOMEM / OT_ERR_OVERFLOW. */
int ot__out_gather_steps(ot_tensor **ts, ot_tensor **ys, const ot__record *records,
                         int64_t block, const int64_t *count, int64_t rows,
                         int64_t nbatch, ot_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif

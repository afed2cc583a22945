/* Private: writing lane results into output tensors ([rows, nt, nbatch],
 * f64 or f32), shared by the lanes and lockstep drivers. */
#ifndef OT_SRC_OUTPUT_H
#define OT_SRC_OUTPUT_H

#include <math.h>
#include <string.h>

#include "odetensor/tensor.h"

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

#endif

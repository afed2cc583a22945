/* Private: owned-tensor helpers for the layers above the tensor layer. */
#ifndef OT_SRC_TENSOR_IMPL_H
#define OT_SRC_TENSOR_IMPL_H

#include "odetensor/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* As ot_tensor_new, without zero-filling: for outputs the caller overwrites
 * in full. name starts error messages. Ownership: *out is the caller's. */
int ot__tensor_alloc(ot_tensor **out, ot_dtype dtype, int ndim, const int64_t *shape,
                     const char *name);

/* Views straight over solver storage: compact column-major f64, built
 * without checks because the solver made the storage, so the layout rules
 * hold by construction. Every driver's callback views come from here.
 * ot__layout_compact: [rows, lanes] when cols is 0, else [rows, cols, lanes]
 * (a block per lane), on device. */
ot_layout ot__layout_compact(const double *data, int64_t rows, int64_t cols,
                             int64_t lanes, ot_device device);
/* [rows, lanes] on the CPU (rows may be 0: an empty view, never read). */
ot_view ot__view_compact(const double *data, int64_t rows, int64_t lanes);
ot_view_mut ot__view_mut_compact(double *data, int64_t rows, int64_t lanes);
/* [n, n, lanes]: one column-major n x n block per lane (Jacobians). */
ot_view_mut ot__view_mut_blocks(double *data, int64_t n, int64_t lanes);

#ifdef __cplusplus
}
#endif

#endif

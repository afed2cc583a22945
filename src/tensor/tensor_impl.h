/* Private: owned-tensor helpers for the layers above the tensor layer. */
#ifndef OT_SRC_TENSOR_IMPL_H
#define OT_SRC_TENSOR_IMPL_H

#include <stdint.h>

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
 * hold by construction. Every driver's callback views come from here; they
 * are inline so that a view built for a callback goes straight into the
 * call's arguments. ot__layout_compact: [rows, lanes] when cols is 0, else
 * [rows, cols, lanes] (a block per lane), on device. */
static inline ot_layout ot__layout_compact(const double *data, int64_t rows, int64_t cols,
                                           int64_t lanes, ot_device device)
{
    ot_layout l;
    l.data = (void *)(uintptr_t)data;
    l.dtype = OT_F64;
    l.ndim = cols > 0 ? 3 : 2;
    l.device = device;
    l.shape[0] = rows;
    l.shape[1] = cols > 0 ? cols : lanes;
    l.shape[2] = cols > 0 ? lanes : 1;
    l.strides[0] = (int64_t)sizeof(double);
    l.strides[1] = l.strides[0] * (rows > 0 ? rows : 1);
    l.strides[2] = l.strides[1] * (l.shape[1] > 0 ? l.shape[1] : 1);
    return l;
}

/* [rows, lanes] on the CPU (rows may be 0: an empty view, never read). */
static inline ot_view ot__view_compact(const double *data, int64_t rows, int64_t lanes)
{
    const ot_device cpu = {OT_CPU, 0};
    ot_view v;
    v.layout = ot__layout_compact(data, rows, 0, lanes, cpu);
    return v;
}

static inline ot_view_mut ot__view_mut_compact(double *data, int64_t rows, int64_t lanes)
{
    const ot_device cpu = {OT_CPU, 0};
    ot_view_mut v;
    v.layout = ot__layout_compact(data, rows, 0, lanes, cpu);
    return v;
}

/* [rows, n, 1] over a band matrix's storage: column j at data + j * ldim
 * (ldim >= rows), so the column stride is ldim, not rows. */
static inline ot_view_mut ot__view_mut_band(double *data, int64_t rows, int64_t n,
                                            int64_t ldim)
{
    const ot_device cpu = {OT_CPU, 0};
    ot_view_mut v;
    v.layout = ot__layout_compact(data, rows, n, 1, cpu);
    v.layout.strides[1] = (int64_t)sizeof(double) * ldim;
    v.layout.strides[2] = v.layout.strides[1] * n;
    return v;
}

/* [n, n, lanes]: one column-major n x n block per lane (Jacobians). */
static inline ot_view_mut ot__view_mut_blocks(double *data, int64_t n, int64_t lanes)
{
    const ot_device cpu = {OT_CPU, 0};
    ot_view_mut v;
    v.layout = ot__layout_compact(data, n, n, lanes, cpu);
    return v;
}

#ifdef __cplusplus
}
#endif

#endif

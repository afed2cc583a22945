/* Private: layout validation shared by views, owned tensors and DLPack. */
#ifndef OT_SRC_LAYOUT_H
#define OT_SRC_LAYOUT_H

#include "odetensor/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Checks the fields every layout needs (ndim, dtype, device, shape, data,
 * alignment, stride multiples, int64 overflow of the addressed extent)
 * without the column-major rules, so it accepts row-major and negative
 * strides. Messages start with name. */
int ot__layout_check_raw(const ot_layout *l, const char *name);

/* Full check (raw + column-major rules), then normalizes l in place: axes
 * past ndim get shape 1, axes of extent <= 1 get the compact stride. */
int ot__layout_finish(ot_layout *l, const char *name);

/* Fills a layout from constructor arguments (strides NULL: compact
 * column-major) and finishes it. */
int ot__layout_build(ot_layout *out, void *data, int dtype, ot_device device, int ndim,
                     const int64_t *shape, const int64_t *strides, const char *name);

/* Product of the first ndim extents; the caller has checked for overflow. */
int64_t ot__layout_numel(const ot_layout *l);

#ifdef __cplusplus
}
#endif

#endif

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

#ifdef __cplusplus
}
#endif

#endif

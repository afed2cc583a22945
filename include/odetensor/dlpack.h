/* odetensor DLPack layer: zero-copy exchange of tensors with NumPy, PyTorch,
 * CuPy, JAX and any other DLPack producer or consumer.
 *
 * Uses the system <dlpack/dlpack.h>. Where that header predates DLPack 1.0
 * (Debian's 0.6 does), the 1.x definitions below are added with the exact
 * ABI of the specification: DLPackVersion first, then manager_ctx, deleter,
 * flags and the DLTensor. tests/check_dlpack.c asserts sizes and offsets.
 *
 * DLPack strides count elements; odetensor strides count bytes. The
 * functions here convert. */
#ifndef ODETENSOR_DLPACK_H
#define ODETENSOR_DLPACK_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DLPACK_MAJOR_VERSION
/* The system header predates DLPack 1.0: add the 1.0 ABI. */
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 0

typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    /* Frees the tensor and, as the specification says, self as well. */
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;
#endif

#ifndef DLPACK_FLAG_BITMASK_READ_ONLY
#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#endif
#ifndef DLPACK_FLAG_BITMASK_IS_COPIED
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)
#endif

/* The DLPack version odetensor exports and accepts (major must match). */
#define OT_DLPACK_MAJOR 1
#define OT_DLPACK_MINOR 0

/* Exports an owned tensor without a copy. On success ownership moves into
 * *out: the tensor is consumed, and the consumer's call of (*out)->deleter
 * frees it (calling its release function exactly once). A read-only tensor
 * carries DLPACK_FLAG_BITMASK_READ_ONLY. On failure (OT_ERR_ARG, OT_ERR_NOMEM)
 * the tensor stays the caller's, unchanged. */
OT_API int ot_dlpack_export(ot_tensor *t, DLManagedTensorVersioned **out);

/* As ot_dlpack_export, as a legacy DLManagedTensor (pre-1.0 consumers such as
 * NumPy 1.x). Legacy tensors cannot say "read-only", so a read-only tensor is
 * refused with OT_ERR_READ_ONLY (use ot_dlpack_export). */
OT_API int ot_dlpack_export_legacy(ot_tensor *t, DLManagedTensor **out);

/* Imports a producer's tensor as an owned tensor, without a copy. The managed
 * tensor is always consumed: on success ot_tensor_free() calls its deleter
 * exactly once; on failure its deleter has already been called. A major
 * version other than OT_DLPACK_MAJOR gives OT_ERR_VERSION after calling the
 * deleter and reading nothing else. Also checked: dtype (f32/f64, one lane),
 * device (CPU or CUDA), ndim <= 3, the alignment of data + byte_offset, the
 * layout rules (NULL strides mean compact row-major, accepted only where that
 * is also column-major). DLPACK_FLAG_BITMASK_READ_ONLY makes a read-only
 * tensor. mt may be NULL (OT_ERR_ARG). */
OT_API int ot_dlpack_import(DLManagedTensorVersioned *mt, ot_tensor **out);

/* As ot_dlpack_import, for a legacy DLManagedTensor (no version, no flags). */
OT_API int ot_dlpack_import_legacy(DLManagedTensor *mt, ot_tensor **out);

/* A read-only view of a bare DLTensor, borrowed: the caller keeps the
 * producer's tensor alive while the view is used. Same checks as import. */
OT_API int ot_dlpack_view(const DLTensor *t, ot_view *out);

/* A writable view of a bare DLTensor (which has no read-only flag: the
 * caller vouches that writing is allowed). Same checks as import. */
OT_API int ot_dlpack_view_mut(const DLTensor *t, ot_view_mut *out);

/* The raw layout of a bare DLTensor with any strides (row-major included),
 * for ot_tensor_copy_colmajor(). Checks dtype, device, ndim, alignment and
 * overflow, not the column-major rules. */
OT_API int ot_dlpack_layout(const DLTensor *t, ot_layout *out);

#ifdef __cplusplus
}
#endif

#endif /* ODETENSOR_DLPACK_H */

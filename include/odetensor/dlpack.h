/* odetensor DLPack layer: zero-copy exchange of tensors with NumPy, PyTorch,
 * CuPy, JAX and any other DLPack producer or consumer.
 *
 * Uses the system <dlpack/dlpack.h> where the compiler finds one (Debian's
 * libdlpack-dev). Where it finds none, the DLPack 1.0 ABI below is used,
 * written from the specification, so the installed headers need nothing
 * else; it takes the system header's include guard, so a later
 * #include <dlpack/dlpack.h> of the same ABI adds nothing. Where the system
 * header predates DLPack 1.0 (Debian's 0.6 does), the 1.x definitions are
 * added with the exact ABI of the specification: DLPackVersion first, then
 * manager_ctx, deleter, flags and the DLTensor. tests/check_dlpack.c asserts
 * sizes and offsets of both (OT_DLPACK_OWN_ABI, for the tests, selects the
 * definitions here even where a system header exists).
 *
 * DLPack strides count elements; odetensor strides count bytes. The
 * functions here convert. */
#ifndef ODETENSOR_DLPACK_H
#define ODETENSOR_DLPACK_H

#include <stdint.h>

#if !defined(OT_DLPACK_OWN_ABI) && defined(__has_include)
#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>
#endif
#endif

#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_
/* No system header: DLPack's definitions from before 1.0 (the 1.0 additions
 * follow, as for an old system header), per the specification
 * (https://dmlc.github.io/dlpack/latest/c_api.html). */
typedef enum {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,
    kDLOpenCL = 4,
    kDLVulkan = 7,
    kDLMetal = 8,
    kDLVPI = 9,
    kDLROCM = 10,
    kDLROCMHost = 11,
    kDLExtDev = 12,
    kDLCUDAManaged = 13,
    kDLOneAPI = 14,
    kDLWebGPU = 15,
    kDLHexagon = 16
} DLDeviceType;

typedef struct {
    DLDeviceType device_type;
    int32_t device_id;
} DLDevice;

typedef enum {
    kDLInt = 0,
    kDLUInt = 1,
    kDLFloat = 2,
    kDLOpaqueHandle = 3,
    kDLBfloat = 4,
    kDLComplex = 5,
    kDLBool = 6
} DLDataTypeCode;

typedef struct {
    uint8_t code; /* a DLDataTypeCode */
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL: compact row-major */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
#endif

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

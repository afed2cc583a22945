/* DLPack 1.x (versioned) and legacy import/export. */
#include "core/alloc.h"
#include "odetensor/dlpack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tensor/layout.h"

/* ---- Export -------------------------------------------------------------- */

/* One allocation holds the managed tensor, its shape and strides (in
 * elements) and the tensor it owns; the deleter frees all of it. */
typedef struct {
    DLManagedTensorVersioned mt; /* first: the deleter gets its address */
    int64_t shape[OT_MAX_NDIM];
    int64_t strides[OT_MAX_NDIM];
    ot_tensor *tensor;
} export_versioned;

typedef struct {
    DLManagedTensor mt;
    int64_t shape[OT_MAX_NDIM];
    int64_t strides[OT_MAX_NDIM];
    ot_tensor *tensor;
} export_legacy;

static void delete_versioned(DLManagedTensorVersioned *self)
{
    export_versioned *e = (export_versioned *)self;
    ot_tensor_free(e->tensor);
    free(e);
}

static void delete_legacy(DLManagedTensor *self)
{
    export_legacy *e = (export_legacy *)self;
    ot_tensor_free(e->tensor);
    free(e);
}

static void fill_dltensor(DLTensor *d, int64_t *shape, int64_t *strides,
                          const ot_layout *l)
{
    const int64_t s = (int64_t)ot_dtype_size(l->dtype);
    d->data = l->data;
    d->device.device_type = (DLDeviceType)l->device.type;
    d->device.device_id = l->device.id;
    d->ndim = l->ndim;
    d->dtype.code = kDLFloat;
    d->dtype.bits = (uint8_t)(8 * s);
    d->dtype.lanes = 1;
    for (int k = 0; k < l->ndim; k++) {
        shape[k] = l->shape[k];
        strides[k] = l->strides[k] / s;
    }
    d->shape = shape;
    d->strides = strides;
    d->byte_offset = 0;
}

int ot_dlpack_export(ot_tensor *t, DLManagedTensorVersioned **out)
{
    if (t == NULL || out == NULL)
        return ot__fail(OT_ERR_ARG, "ot_dlpack_export: %s is NULL", t ? "out" : "t");
    export_versioned *e = OT__CALLOC(1, sizeof *e);
    if (e == NULL)
        return ot__fail(OT_ERR_NOMEM,
                        "ot_dlpack_export: cannot allocate the managed tensor");
    e->tensor = t;
    e->mt.version.major = OT_DLPACK_MAJOR;
    e->mt.version.minor = OT_DLPACK_MINOR;
    e->mt.manager_ctx = e;
    e->mt.deleter = delete_versioned;
    e->mt.flags = ot_tensor_is_read_only(t) ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    fill_dltensor(&e->mt.dl_tensor, e->shape, e->strides, ot_tensor_layout(t));
    *out = &e->mt;
    return OT_OK;
}

int ot_dlpack_export_legacy(ot_tensor *t, DLManagedTensor **out)
{
    if (t == NULL || out == NULL)
        return ot__fail(OT_ERR_ARG, "ot_dlpack_export_legacy: %s is NULL",
                        t ? "out" : "t");
    if (ot_tensor_is_read_only(t))
        return ot__fail(OT_ERR_READ_ONLY,
                        "ot_dlpack_export_legacy: the tensor is read-only and legacy "
                        "DLPack cannot say so; use ot_dlpack_export");
    export_legacy *e = OT__CALLOC(1, sizeof *e);
    if (e == NULL)
        return ot__fail(OT_ERR_NOMEM,
                        "ot_dlpack_export_legacy: cannot allocate the managed tensor");
    e->tensor = t;
    e->mt.manager_ctx = e;
    e->mt.deleter = delete_legacy;
    fill_dltensor(&e->mt.dl_tensor, e->shape, e->strides, ot_tensor_layout(t));
    *out = &e->mt;
    return OT_OK;
}

/* ---- Import -------------------------------------------------------------- */

static const char *device_name(int type)
{
    switch (type) {
    case kDLCPU:
        return "CPU";
    case kDLCUDA:
        return "CUDA";
    case kDLCUDAHost:
        return "CUDA host";
    case kDLOpenCL:
        return "OpenCL";
    case kDLVulkan:
        return "Vulkan";
    case kDLMetal:
        return "Metal";
    case kDLROCM:
        return "ROCm";
    case kDLCUDAManaged:
        return "CUDA managed";
    default:
        return "unknown";
    }
}

/* The raw layout of d, named name in messages; no column-major check. */
static int to_layout(const DLTensor *d, ot_layout *out, const char *name)
{
    if (d == NULL)
        return ot__fail(OT_ERR_ARG, "%s: the DLTensor is NULL", name);
    if (d->ndim < 0 || d->ndim > OT_MAX_NDIM)
        return ot__fail(OT_ERR_ARG, "%s: ndim is %d; odetensor tensors have 0 to %d axes",
                        name, d->ndim, OT_MAX_NDIM);
    int dtype = 0;
    if (d->dtype.code == kDLFloat && d->dtype.lanes == 1 && d->dtype.bits == 64)
        dtype = OT_F64;
    else if (d->dtype.code == kDLFloat && d->dtype.lanes == 1 && d->dtype.bits == 32)
        dtype = OT_F32;
    else
        return ot__fail(OT_ERR_DTYPE,
                        "%s: dtype (code %u, %u bits, %u lanes) is not supported; "
                        "odetensor takes float32 or float64 with one lane",
                        name, (unsigned)d->dtype.code, (unsigned)d->dtype.bits,
                        (unsigned)d->dtype.lanes);
    const int dev = (int)d->device.device_type;
    if (dev != kDLCPU && dev != kDLCUDA)
        return ot__fail(OT_ERR_DEVICE,
                        "%s: device type %d (%s) is not supported; odetensor takes "
                        "CPU (1) or CUDA (2)",
                        name, dev, device_name(dev));
    if (d->ndim > 0 && d->shape == NULL)
        return ot__fail(OT_ERR_ARG, "%s: shape is NULL with ndim %d", name, d->ndim);
    if (d->data == NULL && d->byte_offset != 0)
        return ot__fail(OT_ERR_ARG, "%s: data is NULL with byte_offset %llu", name,
                        (unsigned long long)d->byte_offset);
    if (d->byte_offset > UINTPTR_MAX - (uintptr_t)d->data)
        return ot__fail(OT_ERR_OVERFLOW, "%s: data + byte_offset %llu overflows", name,
                        (unsigned long long)d->byte_offset);

    ot_layout l;
    memset(&l, 0, sizeof l);
    /* No arithmetic on NULL (an empty tensor may have no data): UB in C. */
    l.data = d->byte_offset ? (char *)d->data + d->byte_offset : d->data;
    l.dtype = dtype;
    l.ndim = d->ndim;
    l.device.type = dev;
    l.device.id = d->device.device_id;
    const int64_t s = (int64_t)ot_dtype_size(dtype);
    /* An axis of extent <= 1, or any axis of an empty tensor, addresses
     * nothing: its stride may hold any value (tensor.h), so it is not
     * converted, and the item size stands in for it. */
    int empty = 0;
    for (int k = 0; k < d->ndim; k++)
        empty |= d->shape[k] == 0;
    /* NULL strides: compact row-major, the last axis fastest. */
    int64_t compact = 1;
    for (int k = d->ndim - 1; k >= 0; k--) {
        l.shape[k] = d->shape[k];
        if (empty || d->shape[k] <= 1) {
            l.strides[k] = s;
            continue;
        }
        int64_t st = d->strides ? d->strides[k] : compact;
        if (st > INT64_MAX / s || st < INT64_MIN / s)
            return ot__fail(OT_ERR_OVERFLOW,
                            "%s: strides[%d] = %lld elements overflows "
                            "int64 in bytes",
                            name, k, (long long)st);
        l.strides[k] = st * s;
        if (!d->strides) {
            if (compact > INT64_MAX / d->shape[k])
                return ot__fail(OT_ERR_OVERFLOW, "%s: the element count overflows int64",
                                name);
            compact *= d->shape[k];
        }
    }
    int st = ot__layout_check_raw(&l, name);
    if (st == OT_OK)
        *out = l;
    return st;
}

int ot_dlpack_layout(const DLTensor *t, ot_layout *out)
{
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "ot_dlpack_layout: out is NULL");
    return to_layout(t, out, "dlpack");
}

static int to_view_layout(const DLTensor *t, ot_layout *out, const char *fn)
{
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "%s: out is NULL", fn);
    ot_layout l;
    int st = to_layout(t, &l, "dlpack");
    if (st == OT_OK)
        st = ot__layout_finish(&l, "dlpack");
    if (st == OT_OK)
        *out = l;
    return st;
}

int ot_dlpack_view(const DLTensor *t, ot_view *out)
{
    return to_view_layout(t, out ? &out->layout : NULL, "ot_dlpack_view");
}

int ot_dlpack_view_mut(const DLTensor *t, ot_view_mut *out)
{
    return to_view_layout(t, out ? &out->layout : NULL, "ot_dlpack_view_mut");
}

static void release_versioned(void *ctx)
{
    DLManagedTensorVersioned *mt = ctx;
    if (mt->deleter)
        mt->deleter(mt);
}

static void release_legacy(void *ctx)
{
    DLManagedTensor *mt = ctx;
    if (mt->deleter)
        mt->deleter(mt);
}

/* Wraps a producer's tensor; on failure releases it, as the import contract
 * says, after the message is set. */
static int import_common(const DLTensor *d, int read_only, ot_release_fn release,
                         void *ctx, ot_tensor **out, const char *fn)
{
    ot_layout l;
    int st =
        out ? to_view_layout(d, &l, fn) : ot__fail(OT_ERR_ARG, "%s: out is NULL", fn);
    if (st == OT_OK)
        st = ot_tensor_wrap(out, &l, read_only, release, ctx);
    if (st != OT_OK) {
        /* The producer's deleter may call odetensor itself: keep our message. */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", ot_last_error());
        release(ctx);
        ot__fail(st, "%s", msg);
    }
    return st;
}

int ot_dlpack_import(DLManagedTensorVersioned *mt, ot_tensor **out)
{
    if (mt == NULL)
        return ot__fail(OT_ERR_ARG, "ot_dlpack_import: the managed tensor is NULL");
    if (mt->version.major != OT_DLPACK_MAJOR) {
        /* Another major version may lay out everything after the version
         * differently: the deleter is the only field we may touch. */
        const unsigned major = mt->version.major, minor = mt->version.minor;
        if (mt->deleter)
            mt->deleter(mt);
        return ot__fail(OT_ERR_VERSION,
                        "ot_dlpack_import: DLPack version %u.%u; odetensor reads "
                        "major version %d",
                        major, minor, OT_DLPACK_MAJOR);
    }
    const int ro = (mt->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    return import_common(&mt->dl_tensor, ro, release_versioned, mt, out,
                         "ot_dlpack_import");
}

int ot_dlpack_import_legacy(DLManagedTensor *mt, ot_tensor **out)
{
    if (mt == NULL)
        return ot__fail(OT_ERR_ARG,
                        "ot_dlpack_import_legacy: the managed tensor is NULL");
    return import_common(&mt->dl_tensor, 0, release_legacy, mt, out,
                         "ot_dlpack_import_legacy");
}

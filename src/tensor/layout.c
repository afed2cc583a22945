/* The column-major layout rules (see include/odetensor/tensor.h). */
#include "tensor/layout.h"

#include <stdint.h>
#include <string.h>

#include "core/error.h"

size_t ot_dtype_size(int dtype)
{
    switch (dtype) {
    case OT_F32:
        return 4;
    case OT_F64:
        return 8;
    default:
        return 0;
    }
}

/* a * b for a, b >= 0; nonzero when it overflows int64_t. */
static int mul_overflows(int64_t a, int64_t b, int64_t *res)
{
    if (a != 0 && b > INT64_MAX / a)
        return 1;
    *res = a * b;
    return 0;
}

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

int64_t ot__layout_numel(const ot_layout *l)
{
    int64_t n = 1;
    for (int k = 0; k < l->ndim; k++)
        n *= l->shape[k];
    return l->ndim < 0 ? 0 : n;
}

int ot__layout_check_raw(const ot_layout *l, const char *name)
{
    if (l->ndim < 0 || l->ndim > OT_MAX_NDIM)
        return ot__fail(OT_ERR_ARG, "%s: ndim is %d; odetensor tensors have 0 to %d axes",
                        name, (int)l->ndim, OT_MAX_NDIM);
    const int64_t s = (int64_t)ot_dtype_size(l->dtype);
    if (s == 0)
        return ot__fail(OT_ERR_DTYPE, "%s: dtype %d is neither OT_F32 nor OT_F64", name,
                        (int)l->dtype);
    if ((l->device.type != OT_CPU && l->device.type != OT_CUDA) || l->device.id < 0)
        return ot__fail(OT_ERR_DEVICE,
                        "%s: device (%d, %d) is not supported; odetensor "
                        "takes CPU (1) or CUDA (2) with an id >= 0",
                        name, (int)l->device.type, (int)l->device.id);

    int64_t numel = 1, bytes;
    for (int k = 0; k < l->ndim; k++) {
        if (l->shape[k] < 0)
            return ot__fail(OT_ERR_SHAPE, "%s: shape[%d] is %lld; extents must be >= 0",
                            name, k, (long long)l->shape[k]);
        if (mul_overflows(numel, l->shape[k], &numel))
            return ot__fail(OT_ERR_OVERFLOW,
                            "%s: the element count overflows int64 at shape[%d]", name,
                            k);
    }
    if (mul_overflows(numel, s, &bytes))
        return ot__fail(OT_ERR_OVERFLOW, "%s: %lld elements of %lld bytes overflow int64",
                        name, (long long)numel, (long long)s);
    if (numel == 0)
        return OT_OK;
    if (l->data == NULL)
        return ot__fail(OT_ERR_ARG, "%s: data is NULL but the tensor has %lld elements",
                        name, (long long)numel);
    if ((uintptr_t)l->data % (uintptr_t)s != 0)
        return ot__fail(OT_ERR_LAYOUT,
                        "%s: data address %p is not aligned to the %lld-byte item size",
                        name, l->data, (long long)s);

    /* The addressed extent, sum |shape-1| * |stride|, must fit int64 and the
     * address space; strides must keep every element aligned. */
    int64_t extent = s;
    for (int k = 0; k < l->ndim; k++) {
        if (l->shape[k] <= 1)
            continue;
        const int64_t st = l->strides[k];
        if (st % s != 0)
            return ot__fail(OT_ERR_LAYOUT,
                            "%s: strides[%d] is %lld bytes, not a multiple of the "
                            "%lld-byte item size",
                            name, k, (long long)st, (long long)s);
        int64_t part;
        if (st == INT64_MIN || mul_overflows(l->shape[k] - 1, abs64(st), &part) ||
            part > INT64_MAX - extent)
            return ot__fail(OT_ERR_OVERFLOW,
                            "%s: shape[%d] * strides[%d] overflows int64", name, k, k);
        extent += part;
    }
    if ((uint64_t)extent > UINTPTR_MAX / 2)
        return ot__fail(OT_ERR_OVERFLOW,
                        "%s: the tensor spans %lld bytes, more than the address space",
                        name, (long long)extent);
    return OT_OK;
}

/* The message for strides[0] != itemsize: name row-major when it is that. */
static int fail_first_stride(const ot_layout *l, const char *name, int64_t s)
{
    for (int k = 1; k < l->ndim; k++)
        if (l->shape[k] > 1 && l->strides[k] == s)
            return ot__fail(OT_ERR_LAYOUT,
                            "%s: strides[0] is %lld bytes; column-major needs %lld "
                            "(this layout is row-major: make a column-major copy "
                            "with ot_tensor_copy_colmajor)",
                            name, (long long)l->strides[0], (long long)s);
    return ot__fail(OT_ERR_LAYOUT,
                    "%s: strides[0] is %lld bytes; column-major needs %lld", name,
                    (long long)l->strides[0], (long long)s);
}

int ot__layout_finish(ot_layout *l, const char *name)
{
    int st = ot__layout_check_raw(l, name);
    if (st != OT_OK)
        return st;
    const int64_t s = (int64_t)ot_dtype_size(l->dtype);
    if (ot__layout_numel(l) == 0) {
        /* Nothing is addressed: any stride is harmless, store the item size. */
        for (int k = 0; k < OT_MAX_NDIM; k++) {
            if (k >= l->ndim)
                l->shape[k] = 1;
            l->strides[k] = s;
        }
        return OT_OK;
    }
    /* span: bytes covered by one index step of the next axis, at least. */
    int64_t span = s;
    for (int k = 0; k < l->ndim; k++) {
        if (l->shape[k] <= 1) {
            l->strides[k] = span;
            continue;
        }
        const int64_t stk = l->strides[k];
        if (k == 0 && stk != s)
            return fail_first_stride(l, name, s);
        if (stk <= 0)
            return ot__fail(OT_ERR_LAYOUT,
                            "%s: strides[%d] is %lld bytes; strides must be positive",
                            name, k, (long long)stk);
        if (stk < span)
            return ot__fail(OT_ERR_LAYOUT,
                            "%s: strides[%d] is %lld bytes; column-major needs at "
                            "least %lld so that axis %d does not overlap the axes "
                            "before it",
                            name, k, (long long)stk, (long long)span, k);
        span = stk * (l->shape[k] - 1) + span; /* fits: checked by the raw pass */
    }
    for (int k = l->ndim; k < OT_MAX_NDIM; k++) {
        l->shape[k] = 1;
        l->strides[k] = span;
    }
    return OT_OK;
}

int ot__layout_build(ot_layout *out, void *data, int dtype, ot_device device, int ndim,
                     const int64_t *shape, const int64_t *strides, const char *name)
{
    if (ndim < 0 || ndim > OT_MAX_NDIM)
        return ot__fail(OT_ERR_ARG, "%s: ndim is %d; odetensor tensors have 0 to %d axes",
                        name, ndim, OT_MAX_NDIM);
    if (ndim > 0 && shape == NULL)
        return ot__fail(OT_ERR_ARG, "%s: shape is NULL with ndim %d", name, ndim);
    ot_layout l;
    memset(&l, 0, sizeof l);
    l.data = data;
    l.dtype = dtype;
    l.ndim = ndim;
    l.device = device;
    const int64_t s = (int64_t)ot_dtype_size(dtype);
    int64_t compact = s;
    for (int k = 0; k < ndim; k++) {
        l.shape[k] = shape[k];
        l.strides[k] = strides ? strides[k] : compact;
        /* Overflow here is reported by the raw check; keep compact finite. */
        if (!strides && shape[k] > 0 && compact <= INT64_MAX / shape[k])
            compact *= shape[k];
    }
    int st = ot__layout_finish(&l, name);
    if (st == OT_OK)
        *out = l;
    return st;
}

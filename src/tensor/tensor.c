/* Owned tensors: allocation, wrapping of foreign buffers, the copy helper. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/test_hooks.h"
#include "core/error.h"
#include "tensor/layout.h"
#include "tensor/tensor_impl.h"

struct ot_tensor {
    ot_layout layout;
    int read_only;
    ot_release_fn release;
    void *ctx;
};

enum { ALIGN = 64 };

static _Thread_local uint64_t alloc_ceiling; /* test hook; 0: none */

void ot__tensor_set_alloc_ceiling(uint64_t bytes) { alloc_ceiling = bytes; }

int ot__tensor_alloc(ot_tensor **out, ot_dtype dtype, int ndim, const int64_t *shape,
                     const char *name)
{
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "%s: out is NULL", name);
    ot_layout l;
    /* A placeholder address passes the data checks; real data comes below. */
    int st = ot__layout_build(&l, (void *)(uintptr_t)ALIGN, dtype, (ot_device){OT_CPU, 0},
                              ndim, shape, NULL, name);
    if (st != OT_OK)
        return st;
    const int64_t bytes = ot__layout_numel(&l) * (int64_t)ot_dtype_size(dtype);
    /* aligned_alloc wants a multiple of the alignment; never ask for 0 so an
     * empty tensor still has a real address for DLPack consumers. */
    if ((uint64_t)bytes > SIZE_MAX - ALIGN)
        return ot__fail(OT_ERR_OVERFLOW, "%s: %lld bytes do not fit size_t", name,
                        (long long)bytes);
    size_t size = ((size_t)bytes + ALIGN - 1) / ALIGN * ALIGN;
    if (size == 0)
        size = ALIGN;
    ot_tensor *t = OT__MALLOC(sizeof *t);
    void *data = t && !(alloc_ceiling && size > alloc_ceiling)
                     ? OT__ALIGNED_ALLOC(ALIGN, size)
                     : NULL;
    if (data == NULL) {
        free(t);
        return ot__fail(OT_ERR_NOMEM, "%s: cannot allocate %lld bytes", name,
                        (long long)bytes);
    }
    l.data = data;
    t->layout = l;
    t->read_only = 0;
    t->release = free;
    t->ctx = data;
    *out = t;
    return OT_OK;
}

int ot_tensor_new(ot_tensor **out, ot_dtype dtype, int ndim, const int64_t *shape)
{
    int st = ot__tensor_alloc(out, dtype, ndim, shape, "ot_tensor_new");
    if (st == OT_OK)
        memset((*out)->layout.data, 0,
               (size_t)ot__layout_numel(&(*out)->layout) * ot_dtype_size(dtype));
    return st;
}

int ot_tensor_wrap(ot_tensor **out, const ot_layout *layout, int read_only,
                   ot_release_fn release, void *ctx)
{
    if (out == NULL || layout == NULL)
        return ot__fail(OT_ERR_ARG, "ot_tensor_wrap: %s is NULL",
                        out == NULL ? "out" : "layout");
    ot_layout l = *layout;
    int st = ot__layout_finish(&l, "ot_tensor_wrap");
    if (st != OT_OK)
        return st;
    ot_tensor *t = OT__MALLOC(sizeof *t);
    if (t == NULL)
        return ot__fail(OT_ERR_NOMEM, "ot_tensor_wrap: cannot allocate the tensor");
    t->layout = l;
    t->read_only = read_only != 0;
    t->release = release;
    t->ctx = ctx;
    *out = t;
    return OT_OK;
}

void ot_tensor_free(ot_tensor *t)
{
    if (t == NULL)
        return;
    if (t->release)
        t->release(t->ctx);
    free(t);
}

const ot_layout *ot_tensor_layout(const ot_tensor *t) { return t ? &t->layout : NULL; }

int ot_tensor_is_read_only(const ot_tensor *t) { return t ? t->read_only : 0; }

ot_view ot_tensor_view(const ot_tensor *t)
{
    if (t == NULL)
        return ot_view_absent();
    ot_view v;
    v.layout = t->layout;
    return v;
}

int ot_tensor_view_mut(ot_tensor *t, ot_view_mut *out)
{
    if (t == NULL || out == NULL)
        return ot__fail(OT_ERR_ARG, "ot_tensor_view_mut: %s is NULL",
                        t == NULL ? "t" : "out");
    if (t->read_only)
        return ot__fail(OT_ERR_READ_ONLY,
                        "ot_tensor_view_mut: the tensor is read-only (its producer "
                        "set the DLPack READ_ONLY flag); copy it to write");
    out->layout = t->layout;
    return OT_OK;
}

int ot_tensor_copy_colmajor(ot_tensor **out, const ot_layout *src, ot_dtype dtype)
{
    const char *name = "ot_tensor_copy_colmajor";
    if (out == NULL || src == NULL)
        return ot__fail(OT_ERR_ARG, "%s: %s is NULL", name, out ? "src" : "out");
    int st = ot__layout_check_raw(src, "ot_tensor_copy_colmajor: src");
    if (st != OT_OK)
        return st;
    if (src->device.type != OT_CPU)
        return ot__fail(OT_ERR_DEVICE,
                        "%s: src is device memory; copy it to the CPU first", name);
    ot_tensor *t;
    st = ot__tensor_alloc(&t, dtype, src->ndim, src->shape, name);
    if (st != OT_OK)
        return st;
    int64_t sh[OT_MAX_NDIM] = {1, 1, 1}, ss[OT_MAX_NDIM] = {0, 0, 0};
    for (int k = 0; k < src->ndim; k++) {
        sh[k] = src->shape[k];
        ss[k] = src->strides[k];
    }
    /* An empty copy has nothing to read, but its other extents may still be
     * huge (shape [0, 2^62]): without this the loops below would count
     * through all of them doing nothing (found by tests/fuzz/fuzz_view.c). */
    if (ot__layout_numel(&t->layout) == 0)
        sh[0] = sh[1] = sh[2] = 0;
    const char *base = src->data;
    char *dst = t->layout.data;
    const size_t ds = ot_dtype_size(dtype);
    for (int64_t k = 0; k < sh[2]; k++)
        for (int64_t j = 0; j < sh[1]; j++)
            for (int64_t i = 0; i < sh[0]; i++, dst += ds) {
                const char *p = base + i * ss[0] + j * ss[1] + k * ss[2];
                double v;
                if (src->dtype == OT_F32) {
                    float f;
                    memcpy(&f, p, sizeof f);
                    v = f;
                } else {
                    memcpy(&v, p, sizeof v);
                }
                if (dtype == OT_F32) {
                    float f = (float)v;
                    memcpy(dst, &f, sizeof f);
                } else {
                    memcpy(dst, &v, sizeof v);
                }
            }
    *out = t;
    return OT_OK;
}

/* Borrowed views: construction, element access, lane broadcast. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "tensor/layout.h"

ot_view ot_view_absent(void)
{
    ot_view v;
    memset(&v, 0, sizeof v);
    v.layout.ndim = -1;
    v.layout.dtype = OT_F64;
    v.layout.device.type = OT_CPU;
    return v;
}

int ot_view_is_absent(ot_view v) { return v.layout.ndim < 0; }

int ot_view_make(ot_view *out, const void *data, ot_dtype dtype, ot_device device,
                 int ndim, const int64_t *shape, const int64_t *strides)
{
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "ot_view_make: out is NULL");
    /* The cast drops const only to share the layout struct: an ot_view never
     * writes through its pointer. */
    return ot__layout_build(&out->layout, (void *)(uintptr_t)data, dtype, device, ndim,
                            shape, strides, "view");
}

int ot_view_f64(ot_view *out, const double *data, int64_t rows, int64_t cols)
{
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "ot_view_f64: out is NULL");
    const ot_device cpu = {OT_CPU, 0};
    const int64_t shape[2] = {rows, cols};
    return ot__layout_build(&out->layout, (void *)(uintptr_t)data, OT_F64, cpu,
                            cols == 0 ? 1 : 2, shape, NULL, "view");
}

int ot_view_mut_make(ot_view_mut *out, void *data, ot_dtype dtype, ot_device device,
                     int ndim, const int64_t *shape, const int64_t *strides)
{
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "ot_view_mut_make: out is NULL");
    return ot__layout_build(&out->layout, data, dtype, device, ndim, shape, strides,
                            "view");
}

int ot_layout_check(const ot_layout *layout, const char *name)
{
    if (name == NULL)
        name = "layout";
    if (layout == NULL)
        return ot__fail(OT_ERR_ARG, "%s: layout is NULL", name);
    ot_layout copy = *layout;
    return ot__layout_finish(&copy, name);
}

ot_view ot_view_const(ot_view_mut v)
{
    ot_view r;
    r.layout = v.layout;
    return r;
}

int64_t ot_view_numel(ot_view v) { return ot__layout_numel(&v.layout); }

/* Address of [i, j, k], after the checks every element accessor shares. */
static int element(const ot_layout *l, int64_t i, int64_t j, int64_t k, const char *fn,
                   char **addr)
{
    if (l->ndim < 0)
        return ot__fail(OT_ERR_ARG, "%s: the view is absent", fn);
    if (l->device.type != OT_CPU)
        return ot__fail(OT_ERR_DEVICE,
                        "%s: the view holds device memory; read it on the device", fn);
    if (i < 0 || j < 0 || k < 0 || i >= l->shape[0] || j >= l->shape[1] ||
        k >= l->shape[2])
        return ot__fail(OT_ERR_ARG,
                        "%s: index [%lld, %lld, %lld] is outside shape "
                        "[%lld, %lld, %lld]",
                        fn, (long long)i, (long long)j, (long long)k,
                        (long long)l->shape[0], (long long)l->shape[1],
                        (long long)l->shape[2]);
    *addr = (char *)l->data + i * l->strides[0] + j * l->strides[1] + k * l->strides[2];
    return OT_OK;
}

int ot_view_get(ot_view v, int64_t i, int64_t j, int64_t k, double *out)
{
    char *p;
    int st = element(&v.layout, i, j, k, "ot_view_get", &p);
    if (st != OT_OK)
        return st;
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "ot_view_get: out is NULL");
    if (v.layout.dtype == OT_F32) {
        float f;
        memcpy(&f, p, sizeof f);
        *out = f;
    } else {
        memcpy(out, p, sizeof *out);
    }
    return OT_OK;
}

int ot_view_mut_set(ot_view_mut v, int64_t i, int64_t j, int64_t k, double value)
{
    char *p;
    int st = element(&v.layout, i, j, k, "ot_view_mut_set", &p);
    if (st != OT_OK)
        return st;
    if (v.layout.dtype == OT_F32) {
        float f = (float)value;
        memcpy(p, &f, sizeof f);
    } else {
        memcpy(p, &value, sizeof value);
    }
    return OT_OK;
}

int ot_view_check_lanes(ot_view v, int64_t n, int64_t nbatch, const char *name)
{
    const ot_layout *l = &v.layout;
    if (name == NULL)
        name = "view";
    if (l->ndim < 0)
        return ot__fail(OT_ERR_ARG, "%s: the view is absent; it is required here", name);
    int ok =
        (l->ndim == 1 && l->shape[0] == n) ||
        (l->ndim == 2 && l->shape[0] == n && (l->shape[1] == 1 || l->shape[1] == nbatch));
    if (ok)
        return OT_OK;
    char got[96];
    if (l->ndim == 0)
        snprintf(got, sizeof got, "[] (a scalar)");
    else if (l->ndim == 1)
        snprintf(got, sizeof got, "[%lld]", (long long)l->shape[0]);
    else if (l->ndim == 2)
        snprintf(got, sizeof got, "[%lld, %lld]", (long long)l->shape[0],
                 (long long)l->shape[1]);
    else
        snprintf(got, sizeof got, "[%lld, %lld, %lld]", (long long)l->shape[0],
                 (long long)l->shape[1], (long long)l->shape[2]);
    /* [lanes, n] where [n, lanes] was meant: the commonest slip. */
    char hint[128] = "";
    if (l->ndim == 2 && l->shape[1] == n && l->shape[0] != n)
        snprintf(
            hint, sizeof hint,
            " (it looks transposed: lanes are columns, so %lld lanes are [%lld, %lld])",
            (long long)l->shape[0], (long long)n, (long long)l->shape[0]);
    if (nbatch == 1)
        return ot__fail(OT_ERR_SHAPE,
                        "%s: shape is %s; expected [%lld] or [%lld, k] for k lanes%s",
                        name, got, (long long)n, (long long)n, hint);
    return ot__fail(
        OT_ERR_SHAPE, "%s: shape is %s; expected [%lld], [%lld, 1] or [%lld, %lld]%s",
        name, got, (long long)n, (long long)n, (long long)n, (long long)nbatch, hint);
}

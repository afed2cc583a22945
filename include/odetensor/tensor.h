/* odetensor tensor layer: dtypes, devices, layouts, views and owned tensors.
 *
 * Layout rules (column-major). For an axis of extent > 1 with byte stride
 * st[k], let span[k] = itemsize + sum over earlier axes i of
 * (shape[i] - 1) * st[i]. A valid layout has
 *   1. st[0] == itemsize when shape[0] > 1;
 *   2. st[k] >= span[k] when shape[k] > 1 (so st[k] >= st[k-1] * shape[k-1]);
 *   3. positive strides that are multiples of the item size, a data pointer
 *      aligned to the item size, and no int64_t overflow in shape * stride.
 * Hence every column [:, j, k] is one contiguous slice and no two indices
 * address the same element. Strides of axes of extent 0 or 1 carry no
 * information: constructors accept any value there and store the compact one.
 * Row-major input is refused with a message that says so;
 * ot_tensor_copy_colmajor() makes a column-major copy on request.
 *
 * Views (ot_view read-only, ot_view_mut writable) are borrowed and passed by
 * value; they are never freed. A view that exists always obeys the rules:
 * build one only with the constructors below and treat its fields as
 * read-only. Axes past ndim read as shape 1, so a [n] view is also [n, 1, 1]
 * and ot_view_col_f64(v, 0, 0) works on it.
 *
 * Thread safety: views are plain values; an ot_tensor may be read from many
 * threads, and freed by one. */
#ifndef ODETENSOR_TENSOR_H
#define ODETENSOR_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OT_MAX_NDIM 3

typedef enum ot_dtype { OT_F32 = 1, OT_F64 = 2 } ot_dtype;

/* Device type numbers equal DLPack's (kDLCPU = 1, kDLCUDA = 2). */
typedef enum ot_device_type { OT_CPU = 1, OT_CUDA = 2 } ot_device_type;

typedef struct ot_device {
    int32_t type; /* ot_device_type */
    int32_t id;   /* CUDA ordinal; 0 on the CPU */
} ot_device;

/* The raw layout: nothing here is checked by itself. In a view it obeys the
 * layout rules; as input to ot_tensor_copy_colmajor() it may be any strided
 * layout. */
typedef struct ot_layout {
    void *data;    /* first element, any byte offset already applied */
    int32_t dtype; /* ot_dtype */
    int32_t ndim;  /* 0..OT_MAX_NDIM; -1 only in an absent view */
    ot_device device;
    int64_t shape[OT_MAX_NDIM];   /* in a view: 1 past ndim */
    int64_t strides[OT_MAX_NDIM]; /* bytes; in a view: compact past ndim */
} ot_layout;

typedef struct ot_view {
    ot_layout layout;
} ot_view;

typedef struct ot_view_mut {
    ot_layout layout;
} ot_view_mut;

/* Owned tensor (opaque): a layout plus the release function that frees its
 * buffer, so it can own any allocation (malloc, cudaMalloc, a DLPack
 * producer's tensor, a JS-side buffer). */
typedef struct ot_tensor ot_tensor;

/* Frees an owned buffer; called exactly once, with the ctx given at wrap. */
typedef void (*ot_release_fn)(void *ctx);

/* Bytes per element: 4, 8, or 0 for a value that is no ot_dtype. */
OT_API size_t ot_dtype_size(int dtype);

/* ---- Views -------------------------------------------------------------- */

/* The absent view: marks an omitted optional input. Its data is NULL and its
 * ndim -1, so no accessor can read it as data. */
OT_API ot_view ot_view_absent(void);
OT_API int ot_view_is_absent(ot_view v);

/* Builds a read-only view over memory the caller keeps alive.
 * shape: ndim (0..3) extents >= 0. strides: ndim byte strides, or NULL for
 * compact column-major. data may be NULL only when the view has no element.
 * @return OT_OK, or OT_ERR_ARG / OT_ERR_DTYPE / OT_ERR_DEVICE /
 * OT_ERR_LAYOUT / OT_ERR_OVERFLOW with a message naming the broken rule;
 * *out is untouched on failure. */
OT_API int ot_view_make(ot_view *out, const void *data, ot_dtype dtype, ot_device device,
                        int ndim, const int64_t *shape, const int64_t *strides);

/* The common case of ot_view_make: a compact f64 view of host memory,
 * [rows] when cols is 0, else [rows, cols] (y0 [n, nbatch], params
 * [np, nbatch], t_eval [nt]). @return as ot_view_make (rows and cols >= 0). */
OT_API int ot_view_f64(ot_view *out, const double *data, int64_t rows, int64_t cols);

/* As ot_view_make, for a writable view. */
OT_API int ot_view_mut_make(ot_view_mut *out, void *data, ot_dtype dtype,
                            ot_device device, int ndim, const int64_t *shape,
                            const int64_t *strides);

/* Checks a raw layout against the layout rules; messages start with name
 * ("params: strides[0] is 24 bytes; column-major needs 8"). On success
 * ot_view_make() accepts the same fields; the layout itself is not normalized
 * (axes past ndim, strides of extents <= 1), so build the view with
 * ot_view_make() rather than using the layout as one.
 * @return OT_OK or the status of the rule. */
OT_API int ot_layout_check(const ot_layout *layout, const char *name);

/* The read-only view of a writable one. */
OT_API ot_view ot_view_const(ot_view_mut v);

/* Number of elements (product of the shape; 0 for an absent view). */
OT_API int64_t ot_view_numel(ot_view v);

/* Reads element [i, j, k] as a double (f32 widened) into *out.
 * @return OT_OK, OT_ERR_ARG for an absent view or an index out of range,
 * OT_ERR_DEVICE for device memory. */
OT_API int ot_view_get(ot_view v, int64_t i, int64_t j, int64_t k, double *out);

/* Writes element [i, j, k] (rounded to f32 for an f32 view). Errors as
 * ot_view_get. */
OT_API int ot_view_mut_set(ot_view_mut v, int64_t i, int64_t j, int64_t k, double value);

/* Checks that v is a per-lane input of n rows for nbatch lanes: [n], [n, 1]
 * (one lane, broadcast to all) or [n, nbatch]. name is used in the message
 * ("params: shape is [3, 7]; expected [3], [3, 1] or [3, 100]").
 * @return OT_OK or OT_ERR_SHAPE (OT_ERR_ARG for an absent view). */
OT_API int ot_view_check_lanes(ot_view v, int64_t n, int64_t nbatch, const char *name);

/* Pointer to column [:, j, k], which the layout rules make contiguous; NULL
 * when the view is not f64 (resp. f32) or j, k is out of range. No other
 * check: on the hot path of callbacks this is a few compares. */
/* Shared by the column accessors below; not for direct use. */
static inline void *ot__col(const ot_layout *l, int dtype, int64_t j, int64_t k)
{
    /* Unsigned compares catch negative indices too; an absent view has
     * extents 0, so nothing is in range. */
    if (l->dtype != dtype || (uint64_t)j >= (uint64_t)l->shape[1] ||
        (uint64_t)k >= (uint64_t)l->shape[2])
        return NULL;
    return (char *)l->data + j * l->strides[1] + k * l->strides[2];
}

static inline const double *ot_view_col_f64(ot_view v, int64_t j, int64_t k)
{
    return (const double *)ot__col(&v.layout, OT_F64, j, k);
}

static inline double *ot_view_mut_col_f64(ot_view_mut v, int64_t j, int64_t k)
{
    return (double *)ot__col(&v.layout, OT_F64, j, k);
}

static inline const float *ot_view_col_f32(ot_view v, int64_t j, int64_t k)
{
    return (const float *)ot__col(&v.layout, OT_F32, j, k);
}

/* Broadcast helper: the first element of lane b of a view that passed
 * ot_view_check_lanes: column b, or column 0 for a one-lane view. */
static inline const void *ot_view_lane(ot_view v, int64_t b)
{
    const ot_layout *l = &v.layout;
    return (const char *)l->data + (l->shape[1] == 1 ? 0 : b * l->strides[1]);
}

/* ---- Owned tensors ------------------------------------------------------ */

/* A new zero-filled CPU tensor, compact column-major, 64-byte aligned.
 * Ownership: *out belongs to the caller, who frees it with ot_tensor_free().
 * @return OT_OK, OT_ERR_ARG / OT_ERR_DTYPE for bad arguments, OT_ERR_OVERFLOW
 * when the byte size does not fit, OT_ERR_NOMEM. */
OT_API int ot_tensor_new(ot_tensor **out, ot_dtype dtype, int ndim, const int64_t *shape);

/* Wraps a buffer described by layout (which must obey the layout rules) as an
 * owned tensor. On success the tensor owns the buffer: release(ctx) is called
 * exactly once, by ot_tensor_free(); release may be NULL for memory that
 * needs no freeing. On failure release is never called and the buffer stays
 * the caller's. read_only: nonzero refuses every writable view. */
OT_API int ot_tensor_wrap(ot_tensor **out, const ot_layout *layout, int read_only,
                          ot_release_fn release, void *ctx);

/* Frees the tensor and calls its release function; NULL is a no-op. */
OT_API void ot_tensor_free(ot_tensor *t);

/* The tensor's layout, valid while the tensor lives. */
OT_API const ot_layout *ot_tensor_layout(const ot_tensor *t);

OT_API int ot_tensor_is_read_only(const ot_tensor *t);

/* A read-only view of the tensor, valid while it lives. */
OT_API ot_view ot_tensor_view(const ot_tensor *t);

/* A writable view. @return OT_OK, or OT_ERR_READ_ONLY for a read-only tensor
 * (then *out is untouched). */
OT_API int ot_tensor_view_mut(ot_tensor *t, ot_view_mut *out);

/* Copy helper: a new compact column-major CPU tensor of dtype holding the
 * elements of src, which may have any strides (row-major, negative, zero).
 * src must describe CPU memory with its data pointer at element [0, 0, 0];
 * its shape and strides past ndim are ignored.
 * Ownership: *out is the caller's, freed with ot_tensor_free().
 * @return OT_OK, OT_ERR_ARG / OT_ERR_DTYPE / OT_ERR_DEVICE /
 * OT_ERR_OVERFLOW / OT_ERR_NOMEM. */
OT_API int ot_tensor_copy_colmajor(ot_tensor **out, const ot_layout *src, ot_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif /* ODETENSOR_TENSOR_H */

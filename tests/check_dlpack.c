/* Check suite for the DLPack layer: the 1.x ABI, export, import (versioned and
 * legacy), round trips, bare DLTensor views and the row-major copy path. */
#define _DEFAULT_SOURCE /* mmap, mprotect: the version test's guard page */

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "suites.h"

/* ---- Counters, reset before each test ------------------------------------ */

static int g_released; /* calls of count_release */
static int g_deleted;  /* calls of a producer's deleter */
static const void *g_deleted_self;

static void reset_counters(void)
{
    g_released = 0;
    g_deleted = 0;
    g_deleted_self = NULL;
}

/* Release function of the tensors the tests wrap: counts, then frees ctx. */
static void count_release(void *ctx)
{
    g_released++;
    free(ctx);
}

/* ---- A test-made producer ------------------------------------------------- */

/* Both managed-tensor forms and the storage they point at, in one block. The
 * deleters count, remember self and free the block, so ASan reports any use
 * of the producer's tensor after its deleter ran. */
typedef struct {
    DLManagedTensorVersioned mt;
    DLManagedTensor legacy;
    int64_t shape[4], strides[4];
    double data[64];
} producer;

static void note_delete(const void *self, void *block)
{
    g_deleted++;
    g_deleted_self = self;
    free(block);
}

static void producer_delete(DLManagedTensorVersioned *self)
{
    note_delete(self, self->manager_ctx);
}

static void producer_delete_legacy(DLManagedTensor *self)
{
    note_delete(self, self->manager_ctx);
}

/* One DLTensor, as a table row. */
typedef struct {
    const char *name;
    DLDataType dtype;
    DLDevice dev;
    int32_t ndim;
    const int64_t *shape;           /* NULL: a NULL shape pointer */
    const int64_t *strides;         /* elements; NULL: DLPack's compact row-major */
    int64_t eshape[3], estrides[3]; /* accepted: normalized layout, bytes */
    int null_data;
    size_t data_off; /* DLTensor.data is the storage plus data_off bytes */
    uint64_t byte_offset;
    int want;   /* refused: status of import and views */
    int raw_ok; /* refused: ot_dlpack_layout still accepts it */
    const char *needle;
} dl_case;

/* clang-format off */
#define F64 {kDLFloat, 64, 1}
#define F32 {kDLFloat, 32, 1}
#define CPU {kDLCPU, 0}
/* clang-format on */
#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define FAKE_DEVICE_PTR ((void *)(uintptr_t)0x7f0000010000u)

static void fill_dl(DLTensor *d, const dl_case *c, void *base, int64_t *shape,
                    int64_t *strides)
{
    for (int k = 0; k < c->ndim && k < 4; k++) {
        shape[k] = c->shape ? c->shape[k] : 0;
        strides[k] = c->strides ? c->strides[k] : 0;
    }
    memset(d, 0, sizeof *d);
    d->data = c->null_data ? NULL : (char *)base + c->data_off;
    d->device = c->dev;
    d->ndim = c->ndim;
    d->dtype = c->dtype;
    d->shape = c->shape ? shape : NULL;
    d->strides = c->strides ? strides : NULL;
    d->byte_offset = c->byte_offset;
}

/* Where the imported tensor's data must point. */
static const void *case_data(const dl_case *c, const void *base)
{
    return c->null_data ? NULL : (const char *)base + c->data_off + c->byte_offset;
}

static producer *make_producer(const dl_case *c, uint64_t flags)
{
    producer *p = calloc(1, sizeof *p);
    ck_assert_ptr_nonnull(p);
    for (int i = 0; i < 64; i++)
        p->data[i] = i + 0.5;
    fill_dl(&p->mt.dl_tensor, c, p->data, p->shape, p->strides);
    p->legacy.dl_tensor = p->mt.dl_tensor;
    p->mt.version.major = 1;
    p->mt.manager_ctx = p;
    p->mt.deleter = producer_delete;
    p->mt.flags = flags;
    p->legacy.manager_ctx = p;
    p->legacy.deleter = producer_delete_legacy;
    return p;
}

static int import_one(producer *p, int legacy, ot_tensor **out)
{
    return legacy ? ot_dlpack_import_legacy(&p->legacy, out)
                  : ot_dlpack_import(&p->mt, out);
}

static const void *self_of(const producer *p, int legacy)
{
    return legacy ? (const void *)&p->legacy : (const void *)&p->mt;
}

static void assert_layout(const ot_layout *l, const dl_case *c, const void *data)
{
    ck_assert_ptr_eq(l->data, data);
    ck_assert_int_eq(l->dtype, c->dtype.bits == 32 ? OT_F32 : OT_F64);
    ck_assert_int_eq(l->ndim, c->ndim);
    ck_assert_int_eq(l->device.type, c->dev.device_type);
    ck_assert_int_eq(l->device.id, c->dev.device_id);
    for (int k = 0; k < OT_MAX_NDIM; k++) {
        ck_assert_int_eq(l->shape[k], c->eshape[k]);
        ck_assert_int_eq(l->strides[k], c->estrides[k]);
    }
}

/* ---- 1. ABI --------------------------------------------------------------- */

typedef struct {
    char c;
    uint64_t v;
} u64_probe; /* offsetof(v): the alignment of uint64_t inside structs */

typedef DLManagedTensorVersioned MTV;

/* clang-format off */
#define ABI(e) {#e, e}
static const struct {
    const char *what;
    size_t got;
} abi_got[] = {
    ABI(sizeof(void *)), ABI(offsetof(u64_probe, v)), ABI(sizeof(DLTensor)),
    ABI(offsetof(DLTensor, device)), ABI(offsetof(DLTensor, ndim)),
    ABI(offsetof(DLTensor, dtype)), ABI(offsetof(DLTensor, shape)),
    ABI(offsetof(DLTensor, strides)), ABI(offsetof(DLTensor, byte_offset)),
    ABI(sizeof(MTV)), ABI(offsetof(MTV, manager_ctx)), ABI(offsetof(MTV, deleter)),
    ABI(offsetof(MTV, flags)), ABI(offsetof(MTV, dl_tensor)),
    ABI(sizeof(DLManagedTensor)), ABI(offsetof(DLManagedTensor, manager_ctx)),
    ABI(offsetof(DLManagedTensor, deleter)),
    /* The same on every target. */
    ABI(offsetof(DLTensor, data)), ABI(offsetof(MTV, version)),
    ABI(offsetof(DLManagedTensor, dl_tensor)), ABI(sizeof(DLPackVersion)),
    ABI(offsetof(DLPackVersion, minor)), ABI(sizeof(((MTV *)0)->flags)),
    ABI(sizeof(DLDevice)), ABI(sizeof(DLDataType)),
    ABI(DLPACK_FLAG_BITMASK_READ_ONLY), ABI(DLPACK_FLAG_BITMASK_IS_COPIED),
};

/* From DLPack 1.0's field order and C's alignment rules, for LP64, wasm32
 * (4-byte pointers, 8-byte int64 alignment) and i386 (4-byte alignment). */
static const size_t abi_rows[][N(abi_got)] = {
    {8, 8, 48, 8, 16, 20, 24, 32, 40, 80, 8, 16, 24, 32, 64, 48, 56,
     0, 0, 0, 8, 4, 8, 8, 4, 1, 2},
    {4, 8, 40, 4, 12, 16, 20, 24, 32, 64, 8, 12, 16, 24, 48, 40, 44,
     0, 0, 0, 8, 4, 8, 8, 4, 1, 2},
    {4, 4, 36, 4, 12, 16, 20, 24, 28, 60, 8, 12, 16, 24, 44, 36, 40,
     0, 0, 0, 8, 4, 8, 8, 4, 1, 2},
};
/* clang-format on */

START_TEST(abi_sizes_and_offsets)
{
    int matched = 0; /* the row for this pointer size and int64 alignment */
    for (int r = 0; r < N(abi_rows); r++) {
        if (abi_rows[r][0] != abi_got[0].got || abi_rows[r][1] != abi_got[1].got)
            continue;
        matched++;
        for (int i = 0; i < N(abi_got); i++)
            ck_assert_msg(abi_got[i].got == abi_rows[r][i],
                          "%s is %zu; DLPack 1.0 gives %zu", abi_got[i].what,
                          abi_got[i].got, abi_rows[r][i]);
    }
    ck_assert_msg(matched == 1, "no ABI table for %zu-byte pointers", sizeof(void *));
    ck_assert_int_eq(OT_DLPACK_MAJOR, 1);
    ck_assert_int_eq(OT_DLPACK_MINOR, 0);
    ck_assert_int_eq(kDLCPU, OT_CPU);
    ck_assert_int_eq(kDLCUDA, OT_CUDA);
}
END_TEST

/* ---- 2. Export ------------------------------------------------------------ */

typedef struct {
    int dtype, ndim;
    int64_t shape[3], strides[3]; /* bytes, as given to ot_tensor_wrap */
    int64_t dl_strides[3];        /* elements, after normalization */
    int read_only;
    ot_device dev;
} export_case;

static const export_case export_cases[] = {
    {OT_F64, 2, {3, 4}, {8, 40}, {1, 5}, 0, {OT_CPU, 0}},
    {OT_F32, 2, {3, 4}, {4, 12}, {1, 3}, 0, {OT_CPU, 0}},
    {OT_F64, 3, {2, 3, 2}, {8, 16, 64}, {1, 2, 8}, 0, {OT_CPU, 0}},
    {OT_F64, 1, {5}, {8}, {1}, 0, {OT_CPU, 0}},
    {OT_F64, 0, {0}, {0}, {0}, 0, {OT_CPU, 0}},
    {OT_F64, 2, {3, 1}, {8, 8000}, {1, 3}, 0, {OT_CPU, 0}},
    {OT_F64, 2, {2, 2}, {8, 16}, {1, 2}, 1, {OT_CPU, 0}},
    {OT_F32, 2, {0, 4}, {4, 4}, {1, 1}, 0, {OT_CPU, 0}},
    {OT_F64, 2, {2, 3}, {8, 16}, {1, 2}, 0, {OT_CUDA, 1}},
};

/* An owned tensor over a fresh buffer (a fake address on CUDA) whose
 * release is counted. */
static ot_tensor *wrap_case(const export_case *c, void **data)
{
    ot_layout l;
    memset(&l, 0, sizeof l);
    l.dtype = c->dtype;
    l.ndim = c->ndim;
    l.device = c->dev;
    int64_t bytes = (int64_t)ot_dtype_size(c->dtype);
    for (int k = 0; k < c->ndim; k++) {
        l.shape[k] = c->shape[k];
        l.strides[k] = c->strides[k];
        if (c->shape[k] > 1)
            bytes += (c->shape[k] - 1) * c->strides[k];
    }
    void *ctx = c->dev.type == OT_CPU ? calloc(1, (size_t)bytes) : NULL;
    l.data = c->dev.type == OT_CPU ? ctx : FAKE_DEVICE_PTR;
    ck_assert_ptr_nonnull(l.data);
    ot_tensor *t = NULL;
    ck_assert_status(ot_tensor_wrap(&t, &l, c->read_only, count_release, ctx), OT_OK,
                     NULL);
    *data = l.data;
    return t;
}

static void assert_exported(const DLTensor *d, const export_case *c, const void *data,
                            const ot_tensor *t)
{
    ck_assert_ptr_eq(d->data, data);
    ck_assert_uint_eq(d->byte_offset, 0);
    ck_assert_int_eq(d->ndim, c->ndim);
    ck_assert_uint_eq(d->dtype.code, kDLFloat);
    ck_assert_uint_eq(d->dtype.bits, c->dtype == OT_F32 ? 32 : 64);
    ck_assert_uint_eq(d->dtype.lanes, 1);
    ck_assert_int_eq(d->device.device_type, c->dev.type);
    ck_assert_int_eq(d->device.device_id, c->dev.id);
    ck_assert(c->ndim == 0 || (d->shape != NULL && d->strides != NULL));
    for (int k = 0; k < c->ndim; k++) {
        ck_assert_int_eq(d->shape[k], c->shape[k]);
        ck_assert_int_eq(d->strides[k], c->dl_strides[k]);
    }
    /* A consumer reading it back gets the tensor's own byte layout. */
    ot_view v;
    ck_assert_status(ot_dlpack_view(d, &v), OT_OK, NULL);
    ck_assert_ptr_eq(v.layout.data, data);
    for (int k = 0; k < OT_MAX_NDIM; k++)
        ck_assert_int_eq(v.layout.strides[k], ot_tensor_layout(t)->strides[k]);
}

/* A read-only tensor refused by the legacy export stays the caller's. */
static void assert_legacy_refuses(ot_tensor *t, const void *data)
{
    DLManagedTensor *ml = NULL;
    ck_assert_status(ot_dlpack_export_legacy(t, &ml), OT_ERR_READ_ONLY, "read-only");
    ck_assert_ptr_null(ml);
    ck_assert_int_eq(g_released, 0);
    ck_assert_ptr_eq(ot_tensor_layout(t)->data, data);
    ck_assert(ot_tensor_is_read_only(t));
    ck_assert_ptr_eq(ot_tensor_view(t).layout.data, data);
    ot_tensor_free(t);
    ck_assert_int_eq(g_released, 1);
}

START_TEST(export_zero_copy)
{
    const export_case *c = &export_cases[_i];
    for (int legacy = 0; legacy <= 1; legacy++) {
        g_released = 0;
        void *data;
        ot_tensor *t = wrap_case(c, &data);
        if (legacy && c->read_only) {
            assert_legacy_refuses(t, data);
            continue;
        }
        DLManagedTensorVersioned *mv = NULL;
        DLManagedTensor *ml = NULL;
        if (legacy) {
            ck_assert_status(ot_dlpack_export_legacy(t, &ml), OT_OK, NULL);
            assert_exported(&ml->dl_tensor, c, data, t);
        } else {
            ck_assert_status(ot_dlpack_export(t, &mv), OT_OK, NULL);
            ck_assert_uint_eq(mv->version.major, 1);
            ck_assert_uint_eq(mv->version.minor, 0);
            ck_assert_uint_eq(mv->flags,
                              c->read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0);
            assert_exported(&mv->dl_tensor, c, data, t);
        }
        ck_assert_int_eq(g_released, 0);
        if (legacy)
            ml->deleter(ml);
        else
            mv->deleter(mv);
        ck_assert_int_eq(g_released, 1);
    }
}
END_TEST

/* ---- 3. Import and bare views: accepted ----------------------------------- */

/* clang-format off */
#define OK(...) {__VA_ARGS__, .want = OT_OK}
static const dl_case accepted[] = {
    OK("1-D, NULL strides", F64, CPU, 1, I64(5), NULL, {5, 1, 1}, {8, 40, 40}),
    OK("[n,1], NULL strides", F64, CPU, 2, I64(4, 1), NULL, {4, 1, 1}, {8, 32, 32}),
    OK("[1,m], NULL strides", F64, CPU, 2, I64(1, 4), NULL, {1, 4, 1}, {8, 8, 32}),
    OK("compact", F64, CPU, 2, I64(3, 4), I64(1, 3), {3, 4, 1}, {8, 24, 96}),
    OK("padded columns", F64, CPU, 2, I64(3, 4), I64(1, 5), {3, 4, 1}, {8, 40, 144}),
    OK("3-D", F64, CPU, 3, I64(2, 3, 2), I64(1, 2, 6), {2, 3, 2}, {8, 16, 48}),
    OK("f32", F32, CPU, 2, I64(3, 2), I64(1, 3), {3, 2, 1}, {4, 12, 24}),
    OK("scalar", F64, CPU, 0, I64(0), I64(0), {1, 1, 1}, {8, 8, 8}),
    OK("empty, NULL data, odd strides", F64, CPU, 2, I64(0, 5), I64(7, -3), {0, 5, 1},
       {8, 8, 8}, .null_data = 1),
    OK("extent-1 axis, any stride", F64, CPU, 3, I64(3, 1, 2), I64(1, 999, 3), {3, 1, 2},
       {8, 24, 24}),
    OK("extent 1, stride overflows", F64, CPU, 2, I64(3, 1), I64(1, INT64_C(1) << 61),
       {3, 1, 1}, {8, 24, 24}),
    OK("empty, strides overflow", F64, CPU, 2, I64(0, 3), I64(1, INT64_C(1) << 61),
       {0, 3, 1}, {8, 8, 8}),
    OK("byte_offset", F64, CPU, 2, I64(2, 2), I64(1, 2), {2, 2, 1}, {8, 16, 32},
       .byte_offset = 16),
    OK("misaligned data + offset = aligned", F64, CPU, 1, I64(2), I64(1), {2, 1, 1},
       {8, 16, 16}, .data_off = 4, .byte_offset = 4),
    OK("CUDA, id 3", F64, {kDLCUDA, 3}, 2, I64(2, 3), I64(1, 2), {2, 3, 1}, {8, 16, 48}),
};
/* clang-format on */

START_TEST(accepted_views_and_imports)
{
    const dl_case *c = &accepted[_i];
    static double buf[64];
    int64_t shape[4], strides[4];
    DLTensor d;
    fill_dl(&d, c, buf, shape, strides);
    ot_view v;
    ot_view_mut m;
    ot_layout raw;
    ck_assert_status(ot_dlpack_view(&d, &v), OT_OK, NULL);
    assert_layout(&v.layout, c, case_data(c, buf));
    ck_assert_status(ot_dlpack_view_mut(&d, &m), OT_OK, NULL);
    assert_layout(&m.layout, c, case_data(c, buf));
    ck_assert_status(ot_dlpack_layout(&d, &raw), OT_OK, NULL);
    ck_assert_ptr_eq(raw.data, case_data(c, buf));
    ck_assert_int_eq(raw.ndim, c->ndim);

    for (int legacy = 0; legacy <= 1; legacy++) {
        producer *p = make_producer(c, 0);
        const void *data = case_data(c, p->data), *self = self_of(p, legacy);
        ot_tensor *t = NULL;
        ck_assert_status(import_one(p, legacy, &t), OT_OK, NULL);
        ck_assert_int_eq(g_deleted, legacy);
        assert_layout(ot_tensor_layout(t), c, data);
        ck_assert(!ot_tensor_is_read_only(t));
        /* Zero copy: a write through the tensor lands in the producer's
         * storage, at its last element. */
        ot_view_mut w;
        ck_assert_status(ot_tensor_view_mut(t, &w), OT_OK, NULL);
        const int64_t *e = c->eshape;
        if (c->dev.device_type == kDLCPU && e[0] * e[1] * e[2] > 0) {
            ck_assert_status(ot_view_mut_set(w, e[0] - 1, e[1] - 1, e[2] - 1, -7.0),
                             OT_OK, NULL);
            const char *last = (const char *)data + (e[0] - 1) * c->estrides[0] +
                               (e[1] - 1) * c->estrides[1] + (e[2] - 1) * c->estrides[2];
            float f;
            double x;
            memcpy(&f, last, sizeof f);
            memcpy(&x, last, sizeof x);
            ck_assert_double_eq(c->dtype.bits == 32 ? f : x, -7.0);
        }
        ot_tensor_free(t);
        ck_assert_int_eq(g_deleted, legacy + 1);
        ck_assert_ptr_eq(g_deleted_self, self);
    }
}
END_TEST

START_TEST(import_flags_and_minor_version)
{
    /* READ_ONLY: no writable view, a readable one. */
    producer *p = make_producer(&accepted[3], DLPACK_FLAG_BITMASK_READ_ONLY);
    ot_tensor *t = NULL;
    ck_assert_status(ot_dlpack_import(&p->mt, &t), OT_OK, NULL);
    ck_assert(ot_tensor_is_read_only(t));
    ot_view_mut m, m0;
    memset(&m, 0xA5, sizeof m);
    m0 = m;
    ck_assert_status(ot_tensor_view_mut(t, &m), OT_ERR_READ_ONLY, "read-only");
    ck_assert_mem_eq(&m, &m0, sizeof m);
    double x;
    ck_assert_status(ot_view_get(ot_tensor_view(t), 1, 1, 0, &x), OT_OK, NULL);
    ck_assert_double_eq(x, 4.5);
    ot_tensor_free(t);
    ck_assert_int_eq(g_deleted, 1);
    /* IS_COPIED alone and a newer minor version change nothing. */
    p = make_producer(&accepted[3], DLPACK_FLAG_BITMASK_IS_COPIED);
    p->mt.version.minor = 99;
    ck_assert_status(ot_dlpack_import(&p->mt, &t), OT_OK, NULL);
    ck_assert(!ot_tensor_is_read_only(t));
    ck_assert_status(ot_tensor_view_mut(t, &m), OT_OK, NULL);
    ot_tensor_free(t);
    ck_assert_int_eq(g_deleted, 2);
}
END_TEST

START_TEST(null_arguments)
{
    void *data;
    ot_tensor *t = wrap_case(&export_cases[0], &data);
    DLManagedTensorVersioned *mv = NULL;
    DLManagedTensor *ml = NULL;
    ck_assert_status(ot_dlpack_export(NULL, &mv), OT_ERR_ARG, "t is NULL");
    ck_assert_status(ot_dlpack_export(t, NULL), OT_ERR_ARG, "out is NULL");
    ck_assert_status(ot_dlpack_export_legacy(NULL, &ml), OT_ERR_ARG, "t is NULL");
    ck_assert_status(ot_dlpack_export_legacy(t, NULL), OT_ERR_ARG, "out is NULL");
    ck_assert(mv == NULL && ml == NULL && g_released == 0);
    ck_assert_ptr_eq(ot_tensor_layout(t)->data, data); /* still the caller's */
    ot_tensor_free(t);
    ck_assert_int_eq(g_released, 1);

    t = NULL;
    ck_assert_status(ot_dlpack_import(NULL, &t), OT_ERR_ARG, "NULL");
    ck_assert_status(ot_dlpack_import_legacy(NULL, &t), OT_ERR_ARG, "NULL");
    ck_assert_ptr_null(t);
    for (int legacy = 0; legacy <= 1; legacy++) {
        producer *p = make_producer(&accepted[3], 0);
        ck_assert_status(import_one(p, legacy, NULL), OT_ERR_ARG, "out is NULL");
        ck_assert_int_eq(g_deleted, legacy + 1);
    }
    static double buf[16];
    int64_t shape[4], strides[4];
    DLTensor d;
    fill_dl(&d, &accepted[3], buf, shape, strides);
    ot_view v;
    ot_view_mut m;
    ot_layout l;
    ck_assert_status(ot_dlpack_view(NULL, &v), OT_ERR_ARG, "NULL");
    ck_assert_status(ot_dlpack_view_mut(NULL, &m), OT_ERR_ARG, "NULL");
    ck_assert_status(ot_dlpack_layout(NULL, &l), OT_ERR_ARG, "NULL");
    ck_assert_status(ot_dlpack_view(&d, NULL), OT_ERR_ARG, "out is NULL");
    ck_assert_status(ot_dlpack_view_mut(&d, NULL), OT_ERR_ARG, "out is NULL");
    ck_assert_status(ot_dlpack_layout(&d, NULL), OT_ERR_ARG, "out is NULL");
}
END_TEST

/* ---- 3. Import and bare views: refused ------------------------------------ */

/* clang-format off */
#define BAD(nm, st, msg, ...) {nm, __VA_ARGS__, .want = st, .needle = msg}
static const dl_case refused[] = {
    BAD("int64", OT_ERR_DTYPE, "float32 or float64", {kDLInt, 64, 1}, CPU, 1, I64(3),
        I64(1)),
    BAD("float16", OT_ERR_DTYPE, "16 bits", {kDLFloat, 16, 1}, CPU, 1, I64(3), I64(1)),
    BAD("float64x2", OT_ERR_DTYPE, "2 lanes", {kDLFloat, 64, 2}, CPU, 1, I64(3), I64(1)),
    BAD("OpenCL", OT_ERR_DEVICE, "OpenCL", F64, {kDLOpenCL, 0}, 1, I64(3), I64(1)),
    BAD("Vulkan", OT_ERR_DEVICE, "Vulkan", F64, {kDLVulkan, 0}, 1, I64(3), I64(1)),
    BAD("CUDA id -1", OT_ERR_DEVICE, "id >= 0", F64, {kDLCUDA, -1}, 1, I64(3), I64(1)),
    BAD("ndim 4", OT_ERR_ARG, "ndim is 4", F64, CPU, 4, I64(1, 1, 1, 1), I64(1, 1, 1, 1)),
    BAD("ndim -1", OT_ERR_ARG, "ndim is -1", F64, CPU, -1, I64(1), I64(1)),
    BAD("negative extent", OT_ERR_SHAPE, "shape[1] is -1", F64, CPU, 2, I64(3, -1),
        I64(1, 3)),
    BAD("misaligned byte_offset", OT_ERR_LAYOUT, "not aligned", F64, CPU, 1, I64(2),
        I64(1), .byte_offset = 4),
    BAD("misaligned data", OT_ERR_LAYOUT, "not aligned", F32, CPU, 1, I64(2), I64(1),
        .data_off = 2),
    BAD("row-major strides", OT_ERR_LAYOUT, "row-major", F64, CPU, 2, I64(3, 4),
        I64(4, 1), .raw_ok = 1),
    BAD("row-major, NULL strides", OT_ERR_LAYOUT, "row-major", F64, CPU, 2, I64(3, 4),
        NULL, .raw_ok = 1),
    BAD("negative strides[0]", OT_ERR_LAYOUT, "column-major needs 8", F64, CPU, 1,
        I64(3), I64(-1), .data_off = 16, .raw_ok = 1),
    BAD("negative strides[1]", OT_ERR_LAYOUT, "strides must be positive", F64, CPU, 2,
        I64(2, 3), I64(1, -2), .data_off = 32, .raw_ok = 1),
    BAD("zero strides[0]", OT_ERR_LAYOUT, "column-major needs 8", F64, CPU, 1, I64(3),
        I64(0), .raw_ok = 1),
    BAD("zero strides[1]", OT_ERR_LAYOUT, "strides must be positive", F64, CPU, 2,
        I64(2, 3), I64(1, 0), .raw_ok = 1),
    BAD("overlapping columns", OT_ERR_LAYOUT, "overlap", F64, CPU, 2, I64(3, 4),
        I64(1, 2), .raw_ok = 1),
    BAD("shape * stride overflow", OT_ERR_OVERFLOW, "shape[1] * strides[1] overflows",
        F64, CPU, 2, I64(2, INT64_C(1) << 40), I64(1, INT64_C(1) << 30)),
    BAD("stride in bytes overflow", OT_ERR_OVERFLOW, "overflows int64 in bytes", F64,
        CPU, 2, I64(2, 2), I64(1, INT64_C(1) << 61)),
    BAD("element count overflow", OT_ERR_OVERFLOW, "element count", F64, CPU, 2,
        I64(INT64_C(1) << 62, 4), I64(1, 1)),
    BAD("NULL data, 6 elements", OT_ERR_ARG, "data is NULL", F64, CPU, 2, I64(2, 3),
        I64(1, 2), .null_data = 1),
    BAD("NULL data + byte_offset", OT_ERR_ARG, "byte_offset", F64, CPU, 1, I64(0),
        I64(1), .null_data = 1, .byte_offset = 8),
    BAD("NULL shape", OT_ERR_ARG, "shape is NULL", F64, CPU, 2, NULL, I64(1, 2)),
};
/* clang-format on */

START_TEST(refused_views_and_imports)
{
    const dl_case *c = &refused[_i];
    static double buf[64];
    static char sentinel;
    int64_t shape[4], strides[4];
    DLTensor d;
    fill_dl(&d, c, buf, shape, strides);
    ot_view v, v0;
    ot_view_mut m, m0;
    memset(&v, 0xA5, sizeof v);
    memset(&m, 0xA5, sizeof m);
    v0 = v;
    m0 = m;
    ck_assert_status(ot_dlpack_view(&d, &v), c->want, c->needle);
    ck_assert_mem_eq(&v, &v0, sizeof v);
    ck_assert_status(ot_dlpack_view_mut(&d, &m), c->want, c->needle);
    ck_assert_mem_eq(&m, &m0, sizeof m);
    ot_layout l;
    if (c->raw_ok) {
        ck_assert_status(ot_dlpack_layout(&d, &l), OT_OK, NULL);
        ck_assert_ptr_eq(l.data, case_data(c, buf));
    } else {
        ck_assert_status(ot_dlpack_layout(&d, &l), c->want, c->needle);
    }

    for (int legacy = 0; legacy <= 1; legacy++) {
        producer *p = make_producer(c, 0);
        const void *self = self_of(p, legacy);
        ot_tensor *t = (ot_tensor *)(void *)&sentinel;
        ot_clear_error();
        ck_assert_status(import_one(p, legacy, &t), c->want, c->needle);
        ck_assert_ptr_eq(t, (void *)&sentinel);
        ck_assert_int_eq(g_deleted, legacy + 1);
        ck_assert_ptr_eq(g_deleted_self, self);
    }
}
END_TEST

/* Another major version: only the deleter is called. The managed tensor ends
 * at a PROT_NONE page right where flags start, so reading flags or the
 * DLTensor (let alone its shape) would crash this test's process. */
static void guard_delete(DLManagedTensorVersioned *self) { note_delete(self, NULL); }

START_TEST(import_version_mismatch)
{
    const uint32_t major = _i == 0 ? 0 : 2;
    char msg[32];
    const char *needle = msg;
    snprintf(msg, sizeof msg, "version %u.7", (unsigned)major);
    static char sentinel;
    ot_tensor *t = (ot_tensor *)(void *)&sentinel;

    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    char *mem =
        mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(mem != MAP_FAILED);
    ck_assert_int_eq(mprotect(mem + pg, pg, PROT_NONE), 0);
    DLManagedTensorVersioned *mt =
        (void *)(mem + pg - offsetof(DLManagedTensorVersioned, flags));
    mt->version.major = major;
    mt->version.minor = 7;
    mt->manager_ctx = mem;
    mt->deleter = guard_delete;
    ck_assert_status(ot_dlpack_import(mt, &t), OT_ERR_VERSION, needle);
    ck_assert_int_eq(g_deleted, 1);
    ck_assert_ptr_eq(g_deleted_self, mt);
    ck_assert_ptr_eq(t, (void *)&sentinel);
    munmap(mem, 2 * pg);

    /* The same on the heap with a poisoned DLTensor, for ASan's eyes. */
    producer *p = make_producer(&accepted[3], DLPACK_FLAG_BITMASK_READ_ONLY);
    p->mt.version.major = major;
    p->mt.version.minor = 7;
    p->mt.dl_tensor.shape = (int64_t *)(uintptr_t)0x10;
    p->mt.dl_tensor.strides = (int64_t *)(uintptr_t)0x18;
    p->mt.dl_tensor.ndim = 3;
    p->mt.dl_tensor.data = (void *)(uintptr_t)0x1;
    ck_assert_status(ot_dlpack_import(&p->mt, &t), OT_ERR_VERSION, needle);
    ck_assert_int_eq(g_deleted, 2);
    ck_assert_ptr_eq(t, (void *)&sentinel);
}
END_TEST

/* ---- 4. Round trips -------------------------------------------------------- */

START_TEST(round_trip)
{
    /* _i: 0 versioned, 1 legacy, 2 versioned twice, 3 versioned then legacy,
     * 4 read-only versioned. */
    const export_case *c = &export_cases[_i == 4 ? 6 : 0];
    void *data;
    ot_tensor *t = wrap_case(c, &data);
    const ot_layout orig = *ot_tensor_layout(t);
    const int hops = _i == 2 || _i == 3 ? 2 : 1;
    for (int h = 0; h < hops; h++) {
        const int legacy = _i == 1 || (_i == 3 && h == 1);
        ot_tensor *back = NULL;
        if (legacy) {
            DLManagedTensor *mt = NULL;
            ck_assert_status(ot_dlpack_export_legacy(t, &mt), OT_OK, NULL);
            ck_assert_status(ot_dlpack_import_legacy(mt, &back), OT_OK, NULL);
        } else {
            DLManagedTensorVersioned *mt = NULL;
            ck_assert_status(ot_dlpack_export(t, &mt), OT_OK, NULL);
            ck_assert_status(ot_dlpack_import(mt, &back), OT_OK, NULL);
        }
        t = back;
        ck_assert_int_eq(g_released, 0);
    }
    const ot_layout *l = ot_tensor_layout(t);
    ck_assert_ptr_eq(l->data, orig.data);
    ck_assert(l->dtype == orig.dtype && l->ndim == orig.ndim);
    for (int k = 0; k < OT_MAX_NDIM; k++) {
        ck_assert_int_eq(l->shape[k], orig.shape[k]);
        ck_assert_int_eq(l->strides[k], orig.strides[k]);
    }
    ck_assert_int_eq(ot_tensor_is_read_only(t), c->read_only);
    ot_tensor_free(t);
    ck_assert_int_eq(g_released, 1);
}
END_TEST

START_TEST(round_trip_owned_tensor)
{
    /* ot_tensor_new's buffer goes out and back; LSan checks it is freed. */
    ot_tensor *t = NULL;
    ck_assert_status(ot_tensor_new(&t, OT_F32, 3, I64(2, 3, 4)), OT_OK, NULL);
    void *data = ot_tensor_layout(t)->data;
    DLManagedTensorVersioned *mt = NULL;
    ck_assert_status(ot_dlpack_export(t, &mt), OT_OK, NULL);
    ck_assert_int_eq(mt->dl_tensor.strides[2], 6);
    ck_assert_status(ot_dlpack_import(mt, &t), OT_OK, NULL);
    ck_assert_ptr_eq(ot_tensor_layout(t)->data, data);
    ck_assert_int_eq(ot_tensor_layout(t)->strides[2], 24);
    ot_tensor_free(t);
}
END_TEST

/* ---- 5. Row-major and negative strides: the copy path ---------------------- */

typedef struct {
    const char *name;
    int ndim;
    int64_t shape[3];
    int64_t strides[3]; /* elements */
    int64_t first;      /* element index of [0, 0, 0], given as byte_offset */
    int null_strides;   /* strides are compact row-major: pass NULL */
} copy_case;

static const copy_case copy_cases[] = {
    {"row-major", 2, {3, 4, 1}, {4, 1, 0}, 0, 0},
    {"row-major, NULL strides", 2, {3, 4, 1}, {4, 1, 0}, 0, 1},
    {"both negative", 2, {3, 4, 1}, {-1, -3, 0}, 11, 0},
    {"reversed rows, row-major", 2, {3, 4, 1}, {-4, 1, 0}, 8, 0},
    {"3-D mixed", 3, {2, 3, 4}, {12, -4, 1}, 8, 0},
    {"broadcast column", 2, {3, 4, 1}, {1, 0, 0}, 0, 0},
};

START_TEST(copy_colmajor_from_dlpack)
{
    const copy_case *c = &copy_cases[_i];
    double buf[24];
    for (int i = 0; i < 24; i++)
        buf[i] = 100.0 + i;
    int64_t shape[3], strides[3];
    memcpy(shape, c->shape, sizeof shape);
    memcpy(strides, c->strides, sizeof strides);
    DLTensor d = {buf,
                  CPU,
                  c->ndim,
                  F64,
                  shape,
                  c->null_strides ? NULL : strides,
                  (uint64_t)c->first * sizeof(double)};
    ot_view v; /* none of these is column-major */
    ck_assert_status(ot_dlpack_view(&d, &v), OT_ERR_LAYOUT, NULL);
    ot_layout l;
    ck_assert_status(ot_dlpack_layout(&d, &l), OT_OK, NULL);
    ck_assert_ptr_eq(l.data, buf + c->first);
    for (int as = 0; as <= 1; as++) {
        const ot_dtype dt = as ? OT_F32 : OT_F64;
        ot_tensor *t = NULL;
        ck_assert_status(ot_tensor_copy_colmajor(&t, &l, dt), OT_OK, NULL);
        const ot_layout *o = ot_tensor_layout(t);
        ck_assert_int_eq(o->dtype, dt);
        ck_assert_int_eq(o->ndim, c->ndim);
        ck_assert_int_eq(o->strides[0], (int64_t)ot_dtype_size(dt));
        ck_assert_int_eq(o->strides[1], o->strides[0] * c->shape[0]);
        const ot_view ov = ot_tensor_view(t);
        for (int64_t k = 0; k < c->shape[2]; k++)
            for (int64_t j = 0; j < c->shape[1]; j++)
                for (int64_t i = 0; i < c->shape[0]; i++) {
                    const int64_t e =
                        c->first + i * strides[0] + j * strides[1] + k * strides[2];
                    double x;
                    ck_assert_status(ot_view_get(ov, i, j, k, &x), OT_OK, NULL);
                    ck_assert_double_eq(x, buf[e]);
                }
        ot_tensor_free(t);
    }
}
END_TEST

/* ---- 6. CUDA tensors --------------------------------------------------------- */

START_TEST(cuda_import_is_a_view)
{
    /* The accepted table's CUDA row checks the layout and the device id; here a
     * fake device address shows that nothing dereferences it. */
    const dl_case *c = &accepted[N(accepted) - 1];
    ck_assert_int_eq(c->dev.device_type, kDLCUDA);
    int64_t shape[4], strides[4];
    DLTensor d;
    fill_dl(&d, c, FAKE_DEVICE_PTR, shape, strides);
    ot_layout l;
    ot_tensor *t = NULL;
    double x;
    ck_assert_status(ot_dlpack_layout(&d, &l), OT_OK, NULL);
    ck_assert_status(ot_tensor_copy_colmajor(&t, &l, OT_F64), OT_ERR_DEVICE, "device");
    ck_assert_ptr_null(t);
    for (int legacy = 0; legacy <= 1; legacy++) {
        producer *p = make_producer(c, 0);
        p->mt.dl_tensor.data = p->legacy.dl_tensor.data = FAKE_DEVICE_PTR;
        ck_assert_status(import_one(p, legacy, &t), OT_OK, NULL);
        assert_layout(ot_tensor_layout(t), c, FAKE_DEVICE_PTR);
        ck_assert_status(ot_view_get(ot_tensor_view(t), 1, 2, 0, &x), OT_ERR_DEVICE,
                         "device");
        ot_tensor_free(t);
        ck_assert_int_eq(g_deleted, legacy + 1);
    }
}
END_TEST

/* ---- Suite ------------------------------------------------------------------ */

static TCase *new_tcase(Suite *s, const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, reset_counters, NULL);
    tcase_set_timeout(tc, 10);
    suite_add_tcase(s, tc);
    return tc;
}

Suite *dlpack_suite(void)
{
    Suite *s = suite_create("dlpack");
    TCase *tc = new_tcase(s, "abi");
    tcase_add_test(tc, abi_sizes_and_offsets);

    tc = new_tcase(s, "export");
    tcase_add_loop_test(tc, export_zero_copy, 0, N(export_cases));

    tc = new_tcase(s, "import");
    tcase_add_loop_test(tc, accepted_views_and_imports, 0, N(accepted));
    tcase_add_test(tc, import_flags_and_minor_version);
    tcase_add_test(tc, null_arguments);
    tcase_add_loop_test(tc, refused_views_and_imports, 0, N(refused));
    tcase_add_loop_test(tc, import_version_mismatch, 0, 2);
    tcase_add_test(tc, cuda_import_is_a_view);

    tc = new_tcase(s, "round trip");
    tcase_add_loop_test(tc, round_trip, 0, 5);
    tcase_add_test(tc, round_trip_owned_tensor);
    tcase_add_loop_test(tc, copy_colmajor_from_dlpack, 0, N(copy_cases));
    return s;
}

/* Helpers shared by the DLPack suites (check_dlpack.c, check_dlpack_import.c):
 * release and deleter counters, a test-made producer whose deleters free
 * their block (so ASan reports any use after delete), the table row type
 * for DLTensor cases, and the two tables both suites read: the export cases
 * and the layouts import accepts. */
#ifndef OT_TESTS_DLPACK_COMMON_H
#define OT_TESTS_DLPACK_COMMON_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

/* ---- Counters, reset before each test ------------------------------------ */

static int g_released; /* calls of count_release */
static int g_deleted;  /* calls of a producer's deleter */
static const void *g_deleted_self;

static inline void reset_counters(void)
{
    g_released = 0;
    g_deleted = 0;
    g_deleted_self = NULL;
}

/* Release function of the tensors the tests wrap: counts, then frees ctx. */
/* check_dlpack_own.c's tests of odetensor's own DLPack definitions. */
void dlpack_own_abi_tests(TCase *tc);

/* A test case of the DLPack suites: counters reset before each test. */
static inline TCase *dl_tcase(Suite *s, const char *name)
{
    TCase *tc = ot_test_tcase(s, name, 10);
    tcase_add_checked_fixture(tc, reset_counters, NULL);
    return tc;
}

static inline void count_release(void *ctx)
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

static inline void note_delete(const void *self, void *block)
{
    g_deleted++;
    g_deleted_self = self;
    free(block);
}

static inline void producer_delete(DLManagedTensorVersioned *self)
{
    note_delete(self, self->manager_ctx);
}

static inline void producer_delete_legacy(DLManagedTensor *self)
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

static inline void fill_dl(DLTensor *d, const dl_case *c, void *base, int64_t *shape,
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
static inline const void *case_data(const dl_case *c, const void *base)
{
    return c->null_data ? NULL : (const char *)base + c->data_off + c->byte_offset;
}

static inline producer *make_producer(const dl_case *c, uint64_t flags)
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

static inline int import_one(producer *p, int legacy, ot_tensor **out)
{
    return legacy ? ot_dlpack_import_legacy(&p->legacy, out)
                  : ot_dlpack_import(&p->mt, out);
}

static inline const void *self_of(const producer *p, int legacy)
{
    return legacy ? (const void *)&p->legacy : (const void *)&p->mt;
}

static inline void assert_layout(const ot_layout *l, const dl_case *c, const void *data)
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

/* ---- Export cases (both suites) ----------------------------------------- */

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
static inline ot_tensor *wrap_case(const export_case *c, void **data)
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

/* ---- Layouts import and bare views accept (both suites) ------------------ */

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

#endif

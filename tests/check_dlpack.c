/* Check suite for the DLPack layer, part 1: the 1.x ABI, export, and the
 * layouts import and bare views accept. Refusals, version mismatch, round
 * trips, the row-major copy path and CUDA views: check_dlpack_import.c. */
#include <stdio.h>

#include "dlpack_common.h"

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

/* ---- Suite ------------------------------------------------------------------ */

Suite *dlpack_suite(void)
{
    Suite *s = suite_create("dlpack");
    TCase *tc = dl_tcase(s, "abi");
    tcase_add_test(tc, abi_sizes_and_offsets);

    tc = dl_tcase(s, "export");
    tcase_add_loop_test(tc, export_zero_copy, 0, N(export_cases));

    tc = dl_tcase(s, "import");
    tcase_add_loop_test(tc, accepted_views_and_imports, 0, N(accepted));
    tcase_add_test(tc, import_flags_and_minor_version);
    tcase_add_test(tc, null_arguments);
    return s;
}

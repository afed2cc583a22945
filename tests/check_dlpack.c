/* Check suite for the DLPack layer, part 1: the 1.x ABI, export, and the
 * layouts import and bare views accept. Refusals, version mismatch, round
 * trips, the row-major copy path and CUDA views: check_dlpack_import.c. */
#include <stdio.h>

#include "dlpack_abi.h"

/* ---- 1. ABI --------------------------------------------------------------- */

START_TEST(abi_sizes_and_offsets) { assert_dlpack_abi(); }
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
    dlpack_own_abi_tests(tc);

    tc = dl_tcase(s, "export");
    tcase_add_loop_test(tc, export_zero_copy, 0, N(export_cases));

    tc = dl_tcase(s, "import");
    tcase_add_loop_test(tc, accepted_views_and_imports, 0, N(accepted));
    tcase_add_test(tc, import_flags_and_minor_version);
    tcase_add_test(tc, null_arguments);
    return s;
}

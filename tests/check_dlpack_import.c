/* Check suite for the DLPack layer, part 2: what import and bare views
 * refuse, a major-version mismatch read through a guard page, round trips,
 * the row-major / negative-stride copy path and CUDA tensors as views. */
#define _DEFAULT_SOURCE /* mmap, mprotect: the version test's guard page */

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dlpack_common.h"

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

Suite *dlpack_import_suite(void)
{
    Suite *s = suite_create("dlpack_import");
    TCase *tc = dl_tcase(s, "refused");
    tcase_add_loop_test(tc, refused_views_and_imports, 0, N(refused));
    tcase_add_loop_test(tc, import_version_mismatch, 0, 2);
    tcase_add_test(tc, cuda_import_is_a_view);

    tc = dl_tcase(s, "round trip");
    tcase_add_loop_test(tc, round_trip, 0, 5);
    tcase_add_test(tc, round_trip_owned_tensor);
    tcase_add_loop_test(tc, copy_colmajor_from_dlpack, 0, N(copy_cases));
    return s;
}

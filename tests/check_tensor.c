/* Tensor layer: layout rules, views, element access, owned tensors, the copy
 * helper, status codes and the thread-local error message. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "suites.h"

static const ot_device CPU = {OT_CPU, 0};

/* ---- Layout tables ------------------------------------------------------- */

typedef struct {
    const char *what;
    int dtype;
    int ndim;
    int64_t shape[OT_MAX_NDIM];
    int64_t strides[OT_MAX_NDIM]; /* bytes; all zero = pass NULL (compact) */
    int64_t offset;               /* bytes added to the aligned buffer */
    int null_data;
    int want;
    const char *needle; /* in the message when refused */
} layout_case;

static double buf[4096];

static const layout_case layouts[] = {
    {"scalar", OT_F64, 0, {0}, {0}, 0, 0, OT_OK, NULL},
    {"vector compact", OT_F64, 1, {5}, {0}, 0, 0, OT_OK, NULL},
    {"vector explicit", OT_F64, 1, {5}, {8}, 0, 0, OT_OK, NULL},
    {"[n, nbatch] compact", OT_F64, 2, {3, 4}, {0}, 0, 0, OT_OK, NULL},
    {"[n, nbatch] padded columns", OT_F64, 2, {3, 4}, {8, 40}, 0, 0, OT_OK, NULL},
    {"[n, nt, nbatch] compact", OT_F64, 3, {3, 4, 2}, {0}, 0, 0, OT_OK, NULL},
    {"[n, nt, nbatch] padded", OT_F64, 3, {3, 4, 2}, {8, 32, 160}, 0, 0, OT_OK, NULL},
    {"f32 compact", OT_F32, 2, {3, 4}, {0}, 0, 0, OT_OK, NULL},
    {"f32 at 4-byte offset", OT_F32, 1, {3}, {4}, 4, 0, OT_OK, NULL},
    {"extent-1 axis with odd stride", OT_F64, 2, {3, 1}, {8, 7}, 0, 0, OT_OK, NULL},
    {"[1, m] any first stride", OT_F64, 2, {1, 4}, {1000, 8}, 0, 0, OT_OK, NULL},
    {"zero stride on extent 1", OT_F64, 2, {3, 1}, {8, 0}, 0, 0, OT_OK, NULL},
    {"empty with NULL data", OT_F64, 2, {0, 4}, {0}, 0, 1, OT_OK, NULL},
    {"empty, huge other extent",
     OT_F64,
     3,
     {0, INT64_MAX, INT64_MAX},
     {0},
     0,
     1,
     OT_OK,
     NULL},
    {"row-major", OT_F64, 2, {3, 4}, {32, 8}, 0, 0, OT_ERR_LAYOUT, "row-major"},
    {"row-major 3-D",
     OT_F64,
     3,
     {2, 3, 4},
     {96, 32, 8},
     0,
     0,
     OT_ERR_LAYOUT,
     "row-major"},
    {"first stride too big",
     OT_F64,
     2,
     {3, 4},
     {16, 48},
     0,
     0,
     OT_ERR_LAYOUT,
     "column-major needs 8"},
    {"negative first stride",
     OT_F64,
     1,
     {3},
     {-8},
     16,
     0,
     OT_ERR_LAYOUT,
     "strides[0] is -8"},
    {"negative column stride",
     OT_F64,
     2,
     {3, 4},
     {8, -24},
     72,
     0,
     OT_ERR_LAYOUT,
     "must be positive"},
    {"zero column stride (broadcast)",
     OT_F64,
     2,
     {3, 4},
     {8, 0},
     0,
     0,
     OT_ERR_LAYOUT,
     "must be positive"},
    {"overlapping columns",
     OT_F64,
     2,
     {3, 4},
     {8, 16},
     0,
     0,
     OT_ERR_LAYOUT,
     "at least 24"},
    {"overlapping planes",
     OT_F64,
     3,
     {3, 4, 2},
     {8, 24, 88},
     0,
     0,
     OT_ERR_LAYOUT,
     "at least 96"},
    {"stride not a multiple",
     OT_F64,
     2,
     {3, 4},
     {8, 28},
     0,
     0,
     OT_ERR_LAYOUT,
     "not a multiple"},
    {"misaligned data", OT_F64, 1, {3}, {8}, 4, 0, OT_ERR_LAYOUT, "not aligned"},
    {"NULL data, nonzero size", OT_F64, 1, {3}, {0}, 0, 1, OT_ERR_ARG, "data is NULL"},
    {"rank 4", OT_F64, 4, {1, 1, 1}, {0}, 0, 0, OT_ERR_ARG, "ndim is 4"},
    {"rank -1", OT_F64, -1, {0}, {0}, 0, 0, OT_ERR_ARG, "ndim is -1"},
    {"negative extent", OT_F64, 2, {3, -1}, {0}, 0, 0, OT_ERR_SHAPE, "shape[1] is -1"},
    {"bad dtype", 7, 1, {3}, {0}, 0, 0, OT_ERR_DTYPE, "dtype 7"},
    {"element count overflow",
     OT_F64,
     3,
     {INT64_C(1) << 32, INT64_C(1) << 32, 4},
     {0},
     0,
     0,
     OT_ERR_OVERFLOW,
     "overflow"},
    {"byte size overflow",
     OT_F64,
     1,
     {INT64_C(1) << 61},
     {0},
     0,
     0,
     OT_ERR_OVERFLOW,
     "overflow"},
    {"shape * stride overflow",
     OT_F64,
     2,
     {2, 3},
     {8, INT64_C(1) << 62},
     0,
     0,
     OT_ERR_OVERFLOW,
     "overflows int64"},
    {"stride INT64_MIN",
     OT_F64,
     2,
     {2, 3},
     {8, INT64_MIN},
     0,
     0,
     OT_ERR_OVERFLOW,
     "overflows int64"},
};

static int build_case(const layout_case *c, ot_view *v)
{
    const int explicit_strides = c->strides[0] || c->strides[1] || c->strides[2];
    void *data = c->null_data ? NULL : (char *)buf + c->offset;
    return ot_view_make(v, data, (ot_dtype)c->dtype, CPU, c->ndim, c->shape,
                        explicit_strides ? c->strides : NULL);
}

START_TEST(layout_table)
{
    const layout_case *c = &layouts[_i];
    ot_view v = ot_view_absent();
    ot_clear_error();
    const int st = build_case(c, &v);
    ck_assert_msg(st == c->want, "%s: got %s (%s), want %s", c->what, ot_status_name(st),
                  ot_last_error(), ot_status_name(c->want));
    if (c->want != OT_OK) {
        ck_assert_msg(strstr(ot_last_error(), c->needle) != NULL,
                      "%s: message \"%s\" lacks \"%s\"", c->what, ot_last_error(),
                      c->needle);
        ck_assert_msg(ot_view_is_absent(v), "%s: *out changed on failure", c->what);
        return;
    }
    /* An accepted view obeys the rules in normalized form: positive strides,
     * contiguous columns, shape 1 past ndim. */
    const ot_layout *l = &v.layout;
    ck_assert_int_eq(l->ndim, c->ndim);
    for (int k = c->ndim; k < OT_MAX_NDIM; k++)
        ck_assert_int_eq(l->shape[k], 1);
    for (int k = 0; k < OT_MAX_NDIM; k++)
        ck_assert_int_gt(l->strides[k], 0);
    if (ot_view_numel(v) > 0 && l->shape[0] > 1)
        ck_assert_int_eq(l->strides[0], (int64_t)ot_dtype_size(l->dtype));
    ck_assert_int_eq(ot_layout_check(l, "again"), OT_OK);
}
END_TEST

START_TEST(layout_check_names_argument)
{
    ot_layout l;
    memset(&l, 0, sizeof l);
    l.data = buf;
    l.dtype = OT_F64;
    l.ndim = 2;
    l.device = CPU;
    l.shape[0] = 3;
    l.shape[1] = 4;
    l.strides[0] = 24;
    l.strides[1] = 8;
    ck_assert_status(ot_layout_check(&l, "params"), OT_ERR_LAYOUT,
                     "params: strides[0] is 24 bytes; column-major needs 8");
    ck_assert_status(ot_layout_check(NULL, "y0"), OT_ERR_ARG, "y0: layout is NULL");
}
END_TEST

START_TEST(mutable_view_and_cuda_device)
{
    ot_view_mut m;
    int64_t shape[2] = {2, 3};
    ck_assert_status(ot_view_mut_make(&m, buf, OT_F64, CPU, 2, shape, NULL), OT_OK, NULL);
    ot_view v = ot_view_const(m);
    ck_assert_ptr_eq(v.layout.data, buf);
    /* Device memory is described, never dereferenced, by the tensor layer. */
    ot_device gpu = {OT_CUDA, 3};
    ot_view dv;
    ck_assert_status(
        ot_view_make(&dv, (void *)(uintptr_t)0x10000, OT_F64, gpu, 2, shape, NULL), OT_OK,
        NULL);
    ck_assert_int_eq(dv.layout.device.type, OT_CUDA);
    ck_assert_int_eq(dv.layout.device.id, 3);
    double x;
    ck_assert_status(ot_view_get(dv, 0, 0, 0, &x), OT_ERR_DEVICE, "device memory");
    ot_device bad = {4, 0};
    ck_assert_status(ot_view_make(&dv, buf, OT_F64, bad, 2, shape, NULL), OT_ERR_DEVICE,
                     "device (4, 0)");
    ck_assert_status(ot_view_make(NULL, buf, OT_F64, CPU, 2, shape, NULL), OT_ERR_ARG,
                     "out is NULL");
    ck_assert_status(ot_view_make(&dv, buf, OT_F64, CPU, 2, NULL, NULL), OT_ERR_ARG,
                     "shape is NULL");
}
END_TEST

/* ---- Element and column access ------------------------------------------ */

START_TEST(element_and_column_access)
{
    /* [3, 2, 2] with padded columns: 4 doubles per column. */
    double d[16];
    for (int i = 0; i < 16; i++)
        d[i] = i;
    int64_t shape[3] = {3, 2, 2}, strides[3] = {8, 32, 64};
    ot_view_mut m;
    ck_assert_status(ot_view_mut_make(&m, d, OT_F64, CPU, 3, shape, strides), OT_OK,
                     NULL);
    ot_view v = ot_view_const(m);
    double x = -1;
    ck_assert_status(ot_view_get(v, 2, 1, 1, &x), OT_OK, NULL);
    ck_assert_double_eq(x, 2 + 4 + 8);
    ck_assert_status(ot_view_mut_set(m, 1, 0, 1, 42.5), OT_OK, NULL);
    ck_assert_double_eq(d[1 + 8], 42.5);
    ck_assert_status(ot_view_get(v, 3, 0, 0, &x), OT_ERR_ARG, "outside shape");
    ck_assert_status(ot_view_get(v, 0, -1, 0, &x), OT_ERR_ARG, "outside shape");
    ck_assert_status(ot_view_get(ot_view_absent(), 0, 0, 0, &x), OT_ERR_ARG, "absent");

    ck_assert_ptr_eq(ot_view_col_f64(v, 1, 1), d + 12);
    ck_assert_ptr_eq(ot_view_mut_col_f64(m, 0, 1), d + 8);
    ck_assert_ptr_null(ot_view_col_f64(v, 2, 0));
    ck_assert_ptr_null(ot_view_col_f32(v, 0, 0)); /* wrong dtype */
    ck_assert_ptr_null(ot_view_col_f64(ot_view_absent(), 0, 0));
    ck_assert_int_eq(ot_view_numel(v), 12);
    ck_assert_int_eq(ot_view_numel(ot_view_absent()), 0);

    /* f32 is widened on read and rounded on write. */
    float f[4] = {0.5f, 1.5f, 2.5f, 3.5f};
    int64_t n = 4;
    ot_view_mut fm;
    ck_assert_status(ot_view_mut_make(&fm, f, OT_F32, CPU, 1, &n, NULL), OT_OK, NULL);
    ck_assert_status(ot_view_mut_set(fm, 2, 0, 0, 1.0 / 3.0), OT_OK, NULL);
    ck_assert_float_eq(f[2], (float)(1.0 / 3.0));
    ck_assert_status(ot_view_get(ot_view_const(fm), 3, 0, 0, &x), OT_OK, NULL);
    ck_assert_double_eq(x, 3.5);
    ck_assert_ptr_eq(ot_view_col_f32(ot_view_const(fm), 0, 0), f);
}
END_TEST

START_TEST(absent_view)
{
    ot_view a = ot_view_absent();
    ck_assert(ot_view_is_absent(a));
    ck_assert_ptr_null(a.layout.data);
    ck_assert_status(ot_layout_check(&a.layout, "y0"), OT_ERR_ARG, "y0: ndim is -1");
    ck_assert_status(ot_view_check_lanes(a, 3, 10, "y0"), OT_ERR_ARG,
                     "y0: the view is absent");
    ot_view v;
    int64_t n = 3;
    ck_assert_status(ot_view_make(&v, buf, OT_F64, CPU, 1, &n, NULL), OT_OK, NULL);
    ck_assert(!ot_view_is_absent(v));
}
END_TEST

/* ot_view_f64 is ot_view_make's host f64 compact case: the same layout,
 * the same refusals. */
START_TEST(view_f64_is_view_make_for_host_doubles)
{
    const double d[6] = {1, 2, 3, 4, 5, 6};
    ot_view a, b;
    const int64_t shape[2] = {3, 2}, three = 3;
    ck_assert_status(ot_view_f64(&a, d, 3, 2), OT_OK, NULL);
    ck_assert_status(ot_view_make(&b, d, OT_F64, CPU, 2, shape, NULL), OT_OK, NULL);
    ck_assert(memcmp(&a.layout, &b.layout, sizeof a.layout) == 0);
    ck_assert_double_eq(ot_view_col_f64(a, 1, 0)[2], 6);
    ck_assert_status(ot_view_f64(&a, d, 3, 0), OT_OK, NULL);
    ck_assert_status(ot_view_make(&b, d, OT_F64, CPU, 1, &three, NULL), OT_OK, NULL);
    ck_assert(memcmp(&a.layout, &b.layout, sizeof a.layout) == 0);
    ck_assert_status(ot_view_f64(&a, d, -1, 2), OT_ERR_SHAPE, "view: shape[0] is -1");
    ck_assert_status(ot_view_f64(&a, NULL, 3, 0), OT_ERR_ARG, "view: data is NULL");
    ck_assert_status(ot_view_f64(NULL, d, 3, 0), OT_ERR_ARG, "ot_view_f64: out is NULL");
}
END_TEST

/* ---- Broadcast ----------------------------------------------------------- */

START_TEST(lanes_and_broadcast)
{
    double p[12];
    for (int i = 0; i < 12; i++)
        p[i] = i;
    ot_view one, col, full, wrong;
    int64_t s1 = 3, s2[2] = {3, 1}, s3[2] = {3, 4}, s4[2] = {3, 7};
    ck_assert_status(ot_view_make(&one, p, OT_F64, CPU, 1, &s1, NULL), OT_OK, NULL);
    ck_assert_status(ot_view_make(&col, p, OT_F64, CPU, 2, s2, NULL), OT_OK, NULL);
    ck_assert_status(ot_view_make(&full, p, OT_F64, CPU, 2, s3, NULL), OT_OK, NULL);
    ck_assert_status(ot_view_make(&wrong, buf, OT_F64, CPU, 2, s4, NULL), OT_OK, NULL);
    ck_assert_status(ot_view_check_lanes(wrong, 3, 4, "params"), OT_ERR_SHAPE,
                     "params: shape is [3, 7]");
    ck_assert_status(ot_view_check_lanes(one, 3, 4, "params"), OT_OK, NULL);
    ck_assert_status(ot_view_check_lanes(col, 3, 4, "params"), OT_OK, NULL);
    ck_assert_status(ot_view_check_lanes(full, 3, 4, "params"), OT_OK, NULL);
    for (int64_t b = 0; b < 4; b++) {
        ck_assert_ptr_eq(ot_view_lane(one, b), p);
        ck_assert_ptr_eq(ot_view_lane(col, b), p);
        ck_assert_ptr_eq(ot_view_lane(full, b), p + 3 * b);
    }
    ck_assert_status(ot_view_check_lanes(full, 3, 100, "params"), OT_ERR_SHAPE,
                     "params: shape is [3, 4]; expected [3], [3, 1] or [3, 100]");
    /* Transposed [lanes, np] with one-lane y0: no repeated shape, and a hint. */
    const int64_t tshape[2] = {4, 1};
    ot_view tv;
    ck_assert_status(ot_view_make(&tv, p, OT_F64, CPU, 2, tshape, NULL), OT_OK, NULL);
    ck_assert_status(
        ot_view_check_lanes(tv, 1, 1, "params"), OT_ERR_SHAPE,
        "params: shape is [4, 1]; expected [1] or [1, k] for k lanes (it looks "
        "transposed: lanes are columns, so 4 lanes are [1, 4])");
    ck_assert_status(ot_view_check_lanes(full, 2, 4, "y0"), OT_ERR_SHAPE,
                     "y0: shape is [3, 4]");
    ck_assert_status(ot_view_check_lanes(one, 4, 4, "y0"), OT_ERR_SHAPE,
                     "y0: shape is [3]");
}
END_TEST

/* ---- Owned tensors ------------------------------------------------------- */

typedef struct {
    int calls;
    void *seen;
} release_count;

static void count_release(void *ctx) { ((release_count *)ctx)->calls++; }

START_TEST(new_tensor_is_zeroed_compact_aligned)
{
    ot_tensor *t = NULL;
    int64_t shape[3] = {3, 5, 7};
    ck_assert_status(ot_tensor_new(&t, OT_F64, 3, shape), OT_OK, NULL);
    const ot_layout *l = ot_tensor_layout(t);
    ck_assert_int_eq((uintptr_t)l->data % 64, 0);
    ck_assert_int_eq(l->strides[0], 8);
    ck_assert_int_eq(l->strides[1], 24);
    ck_assert_int_eq(l->strides[2], 120);
    ot_view v = ot_tensor_view(t);
    for (int64_t k = 0; k < 7; k++)
        for (int64_t j = 0; j < 5; j++)
            for (int64_t i = 0; i < 3; i++) {
                double x = -1;
                ck_assert_int_eq(ot_view_get(v, i, j, k, &x), OT_OK);
                ck_assert_double_eq(x, 0.0);
            }
    ot_view_mut m;
    ck_assert_status(ot_tensor_view_mut(t, &m), OT_OK, NULL);
    ck_assert_status(ot_view_mut_set(m, 2, 4, 6, 9.0), OT_OK, NULL);
    ck_assert_double_eq(ot_view_col_f64(v, 4, 6)[2], 9.0);
    ot_tensor_free(t);
    ot_tensor_free(NULL);

    /* An empty tensor still gets a real address (DLPack consumers want one). */
    int64_t zero[2] = {0, 4};
    ck_assert_status(ot_tensor_new(&t, OT_F32, 2, zero), OT_OK, NULL);
    ck_assert_ptr_nonnull(ot_tensor_layout(t)->data);
    ot_tensor_free(t);
}
END_TEST

START_TEST(new_tensor_refusals)
{
    ot_tensor *t = NULL;
    int64_t big[3] = {INT64_C(1) << 40, INT64_C(1) << 20, 1 << 10};
    ck_assert_status(ot_tensor_new(&t, OT_F64, 3, big), OT_ERR_OVERFLOW, "overflow");
    int64_t huge[1] = {INT64_C(1) << 58}; /* 2^61 bytes fit int64, not memory */
    ck_assert_status(ot_tensor_new(&t, OT_F64, 1, huge), OT_ERR_NOMEM, "cannot allocate");
    int64_t neg[1] = {-2};
    ck_assert_status(ot_tensor_new(&t, OT_F64, 1, neg), OT_ERR_SHAPE, "shape[0] is -2");
    int64_t ok[1] = {2};
    ck_assert_status(ot_tensor_new(&t, (ot_dtype)0, 1, ok), OT_ERR_DTYPE, "dtype 0");
    ck_assert_status(ot_tensor_new(&t, OT_F64, 5, ok), OT_ERR_ARG, "ndim is 5");
    ck_assert_status(ot_tensor_new(NULL, OT_F64, 1, ok), OT_ERR_ARG, "out is NULL");
    ck_assert_ptr_null(t);
}
END_TEST

START_TEST(wrap_releases_exactly_once)
{
    release_count rc = {0, NULL};
    double *mem = malloc(6 * sizeof *mem);
    ot_layout l;
    memset(&l, 0, sizeof l);
    l.data = mem;
    l.dtype = OT_F64;
    l.ndim = 2;
    l.device = CPU;
    l.shape[0] = 2;
    l.shape[1] = 3;
    l.strides[0] = 8;
    l.strides[1] = 16;
    ot_tensor *t = NULL;
    ck_assert_status(ot_tensor_wrap(&t, &l, 0, count_release, &rc), OT_OK, NULL);
    ck_assert_ptr_eq(ot_tensor_layout(t)->data, mem);
    ck_assert_int_eq(rc.calls, 0);
    ot_tensor_free(t);
    ck_assert_int_eq(rc.calls, 1);

    /* Refused wrap: release never called, the buffer stays the caller's. */
    l.strides[1] = 8;
    ck_assert_status(ot_tensor_wrap(&t, &l, 0, count_release, &rc), OT_ERR_LAYOUT,
                     "ot_tensor_wrap: strides[1]");
    ck_assert_int_eq(rc.calls, 1);
    free(mem);

    /* NULL release: memory that needs no freeing. */
    l.data = buf;
    l.strides[1] = 16;
    ck_assert_status(ot_tensor_wrap(&t, &l, 0, NULL, NULL), OT_OK, NULL);
    ot_tensor_free(t);
}
END_TEST

START_TEST(read_only_tensor_refuses_mutable_view)
{
    ot_layout l;
    int64_t n = 4;
    ot_view v;
    ck_assert_status(ot_view_make(&v, buf, OT_F64, CPU, 1, &n, NULL), OT_OK, NULL);
    l = v.layout;
    ot_tensor *t;
    ck_assert_status(ot_tensor_wrap(&t, &l, 1, NULL, NULL), OT_OK, NULL);
    ck_assert(ot_tensor_is_read_only(t));
    ot_view_mut m;
    memset(&m, 0x5a, sizeof m);
    ot_view_mut before = m;
    ck_assert_status(ot_tensor_view_mut(t, &m), OT_ERR_READ_ONLY, "read-only");
    ck_assert_mem_eq(&m, &before, sizeof m);
    ck_assert_ptr_eq(ot_tensor_view(t).layout.data, buf);
    ot_tensor_free(t);
}
END_TEST

/* ---- Copy helper --------------------------------------------------------- */

START_TEST(copy_row_major_and_negative_strides)
{
    /* A C-ordered [3][4] array: element (i, j) = 10 i + j. */
    double rm[3][4];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            rm[i][j] = 10 * i + j;
    ot_layout src;
    memset(&src, 0, sizeof src);
    src.data = rm;
    src.dtype = OT_F64;
    src.ndim = 2;
    src.device = CPU;
    src.shape[0] = 3;
    src.shape[1] = 4;
    src.strides[0] = 32;
    src.strides[1] = 8;
    ot_view refused;
    ck_assert_status(ot_view_make(&refused, rm, OT_F64, CPU, 2, src.shape, src.strides),
                     OT_ERR_LAYOUT, "row-major");
    for (int dt = OT_F32; dt <= OT_F64; dt++) {
        ot_tensor *t;
        ck_assert_status(ot_tensor_copy_colmajor(&t, &src, (ot_dtype)dt), OT_OK, NULL);
        ot_view v = ot_tensor_view(t);
        ck_assert_int_eq(v.layout.dtype, dt);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++) {
                double x;
                ck_assert_int_eq(ot_view_get(v, i, j, 0, &x), OT_OK);
                ck_assert_double_eq(x, 10 * i + j);
            }
        ot_tensor_free(t);
    }
    /* Reversed rows: data at element [0, 0] = rm[2][0], stride -32. */
    src.data = &rm[2][0];
    src.strides[0] = -32;
    ot_tensor *t;
    ck_assert_status(ot_tensor_copy_colmajor(&t, &src, OT_F64), OT_OK, NULL);
    const double *c0 = ot_view_col_f64(ot_tensor_view(t), 0, 0);
    ck_assert_double_eq(c0[0], 20);
    ck_assert_double_eq(c0[1], 10);
    ck_assert_double_eq(c0[2], 0);
    ot_tensor_free(t);
    /* A zero stride repeats one element (broadcast input). */
    src.data = &rm[1][2];
    src.strides[0] = 0;
    src.strides[1] = 0;
    ck_assert_status(ot_tensor_copy_colmajor(&t, &src, OT_F64), OT_OK, NULL);
    ot_view v = ot_tensor_view(t);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 3; i++)
            ck_assert_double_eq(ot_view_col_f64(v, j, 0)[i], 12);
    ot_tensor_free(t);
    src.device.type = OT_CUDA;
    ck_assert_status(ot_tensor_copy_colmajor(&t, &src, OT_F64), OT_ERR_DEVICE, "device");
    src.device.type = OT_CPU;
    src.strides[1] = 12;
    ck_assert_status(ot_tensor_copy_colmajor(&t, &src, OT_F64), OT_ERR_LAYOUT,
                     "not a multiple");
}
END_TEST

/* ---- Status codes and messages ------------------------------------------- */

START_TEST(status_names_are_stable)
{
    /* Values are ABI: a change here breaks users. */
    ck_assert_int_eq(OT_OK, 0);
    ck_assert_int_eq(OT_ERR_ARG, -1);
    ck_assert_int_eq(OT_ERR_LAYOUT, -2);
    ck_assert_int_eq(OT_ERR_READ_ONLY, -6);
    ck_assert_int_eq(OT_ERR_VERSION, -7);
    ck_assert_int_eq(OT_ERR_NOMEM, -9);
    ck_assert_int_eq(OT_ERR_LANES_FAILED, -11);
    ck_assert_str_eq(ot_status_name(OT_OK), "OT_OK");
    ck_assert_str_eq(ot_status_name(-2), "OT_ERR_LAYOUT");
    ck_assert_str_eq(ot_status_name(-99), "OT_ERR_INTERNAL");
    ck_assert_str_eq(ot_status_name(12345), "OT_UNKNOWN_STATUS");
    ck_assert_str_eq(ot_status_text(OT_ERR_NOMEM), "out of memory");
    ck_assert_int_eq(ot_version_number(), OT_VERSION_NUMBER);
    ck_assert_str_eq(ot_version_string(), "0.1.0");
}
END_TEST

static void *fail_in_thread(void *arg)
{
    (void)arg;
    int64_t n = -1;
    ot_view v;
    ot_view_make(&v, buf, OT_F64, CPU, 1, &n, NULL);
    return strstr(ot_last_error(), "shape[0] is -1") ? (void *)1 : NULL;
}

START_TEST(last_error_is_thread_local)
{
    ot_clear_error();
    ck_assert_str_eq(ot_last_error(), "");
    pthread_t th;
    void *seen = NULL;
    ck_assert_int_eq(pthread_create(&th, NULL, fail_in_thread, NULL), 0);
    ck_assert_int_eq(pthread_join(th, &seen), 0);
    ck_assert_ptr_nonnull(seen);
    ck_assert_str_eq(ot_last_error(), ""); /* this thread's message untouched */
}
END_TEST

/* Regression (fuzz_view): an empty source whose other extent is huge copies
 * at once instead of counting through that extent. */
START_TEST(copy_empty_with_huge_extent_is_quick)
{
    const double one = 1.0;
    ot_layout src;
    memset(&src, 0, sizeof src);
    src.data = (void *)&one;
    src.dtype = OT_F64;
    src.device = (ot_device){OT_CPU, 0};
    src.ndim = 3;
    src.shape[0] = 0, src.shape[1] = INT64_C(1) << 40, src.shape[2] = INT64_C(1) << 20;
    src.strides[0] = 8, src.strides[1] = 0, src.strides[2] = 0;
    ot_tensor *t = NULL;
    ck_assert_status(ot_tensor_copy_colmajor(&t, &src, OT_F64), OT_OK, NULL);
    ck_assert_int_eq(ot_view_numel(ot_tensor_view(t)), 0);
    ot_tensor_free(t);
}
END_TEST

Suite *tensor_suite(void)
{
    Suite *s = suite_create("tensor");
    TCase *tc = tcase_create("layout");
    tcase_add_loop_test(tc, layout_table, 0, (int)(sizeof layouts / sizeof *layouts));
    tcase_add_test(tc, layout_check_names_argument);
    tcase_add_test(tc, mutable_view_and_cuda_device);
    suite_add_tcase(s, tc);
    tc = tcase_create("access");
    tcase_add_test(tc, element_and_column_access);
    tcase_add_test(tc, absent_view);
    tcase_add_test(tc, view_f64_is_view_make_for_host_doubles);
    tcase_add_test(tc, lanes_and_broadcast);
    suite_add_tcase(s, tc);
    tc = tcase_create("owned");
    tcase_add_test(tc, new_tensor_is_zeroed_compact_aligned);
    tcase_add_test(tc, new_tensor_refusals);
    tcase_add_test(tc, wrap_releases_exactly_once);
    tcase_add_test(tc, read_only_tensor_refuses_mutable_view);
    tcase_add_test(tc, copy_row_major_and_negative_strides);
    tcase_add_test(tc, copy_empty_with_huge_extent_is_quick);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_add_test(tc, status_names_are_stable);
    tcase_add_test(tc, last_error_is_thread_local);
    suite_add_tcase(s, tc);
    return s;
}

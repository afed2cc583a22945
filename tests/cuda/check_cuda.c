/* CUDA lockstep backend. Without a device only the "no device" behaviour
 * runs and the GPU tests are reported as skipped; with one, every GPU result
 * is checked against the CPU lockstep solve or an analytic solution. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../examples/cuda/robertson_kernels.h"
#include "../suites.h"
#include "check_cuda_kernel.h"
#include "models.h"

/* Private test hooks (src/core/test_hooks.h): cuBLAS or the own LU kernel. */
#include "core/test_hooks.h"

static const ot_device CPU = {OT_CPU, 0}, GPU = {OT_CUDA, 0};

static ot_view hview(const double *d, int64_t rows, int64_t cols)
{
    ot_view v;
    const int64_t shape[2] = {rows, cols};
    ck_assert_int_eq(ot_view_make(&v, d, OT_F64, CPU, cols ? 2 : 1, shape, NULL), OT_OK);
    return v;
}

static ot_solution *solve(ot_ode *ode, ot_view y0, ot_view p, ot_view t)
{
    ot_solution *s = NULL;
    const int st = ot_solve_dense(ode, y0, p, t, &s);
    ck_assert_msg(st == OT_OK, "%s: %s", ot_status_name(st), ot_last_error());
    return s;
}

/* ys of a solution as host doubles [rows * nt * nb] (copied from the device
 * when it lives there). Ownership: the caller frees it. */
static double *host_ys(const ot_solution *s)
{
    const ot_layout *l = ot_tensor_layout(ot_solution_ys(s));
    const size_t count = (size_t)(l->shape[0] * l->shape[1] * l->shape[2]);
    double *h = malloc(count * sizeof *h);
    if (l->device.type == OT_CUDA)
        ck_assert_int_eq(to_host(h, l->data, count * sizeof *h), 0);
    else
        memcpy(h, l->data, count * sizeof *h);
    return h;
}

/* Robertson, nb lanes, rates +-10 %, 30 log-spaced outputs to 1e5. */
enum { RNB = 1000, RNT = 30 };
static double rk[3 * RNB], rt[RNT];
static const double ry0[3] = {1, 0, 0}, ratol[3] = {1e-8, 1e-14, 1e-6};

static ot_ode *robertson(int gpu, int jac)
{
    srand(3);
    for (int b = 0; b < RNB; b++) {
        rk[3 * b] = 0.04 * (0.9 + 0.2 * rand() / (double)RAND_MAX);
        rk[3 * b + 1] = 1e4 * (0.9 + 0.2 * rand() / (double)RAND_MAX);
        rk[3 * b + 2] = 3e7 * (0.9 + 0.2 * rand() / (double)RAND_MAX);
    }
    for (int i = 0; i < RNT; i++)
        rt[i] = pow(10, -5 + 10.0 * i / (RNT - 1));
    ot_ode *ode;
    ck_assert_int_eq(
        ot_ode_new(&ode, 3, 3, gpu ? robertson_rhs_gpu : robertson_rhs_cpu, NULL), OT_OK);
    if (jac)
        ck_assert_int_eq(ot_ode_set_jac(ode, gpu ? robertson_jac_gpu : robertson_jac_cpu),
                         OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, 1e-6), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol_vector(ode, hview(ratol, 3, 0)), OT_OK);
    ck_assert_int_eq(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK);
    if (gpu)
        ck_assert_int_eq(ot_ode_set_device(ode, GPU), OT_OK);
    return ode;
}

/* Max |a - b| / (rtol |b| + atol) over Robertson outputs. */
static double gap(const double *a, const double *b)
{
    double worst = 0;
    for (size_t k = 0; k < (size_t)3 * RNT * RNB; k++)
        worst = fmax(worst, fabs(a[k] - b[k]) / (1e-6 * fabs(b[k]) + ratol[k % 3]));
    return worst;
}

/* ---- Without a device ---------------------------------------------------- */

START_TEST(no_device_is_a_clean_status)
{
    int count = -1;
    ck_assert_status(ot_cuda_device_count(&count), OT_ERR_NO_CUDA, "no CUDA device");
    ck_assert_int_eq(count, 0);
    ot_ode *ode = robertson(1, 1);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, hview(ry0, 3, 0), hview(rk, 3, RNB), hview(rt, RNT, 0), &s),
        OT_ERR_NO_CUDA, "no CUDA device");
    ck_assert_ptr_null(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- With a device ------------------------------------------------------- */

/* GPU lockstep against CPU lockstep on the same lanes: the same algorithm,
 * so within a few tolerance units (reductions differ in rounding order).
 * _i: 0 user Jacobian, 1 difference quotients, 2 cuBLAS batched LU. */
START_TEST(robertson_gpu_matches_cpu)
{
    ot__cuda_use_cublas(_i == 2);
    ot_ode *g = robertson(1, _i != 1), *c = robertson(0, _i != 1);
    ot_solution *sg = solve(g, hview(ry0, 3, 0), hview(rk, 3, RNB), hview(rt, RNT, 0));
    ot_solution *sc = solve(c, hview(ry0, 3, 0), hview(rk, 3, RNB), hview(rt, RNT, 0));
    ot__cuda_use_cublas(0);
    double *a = host_ys(sg), *b = host_ys(sc);
    const double d = gap(a, b);
    /* The same algorithm; the device fuses multiply-adds, so step choices may
     * part: the budget is the one CPU lanes and lockstep meet. */
    ck_assert_msg(d < 40, "GPU vs CPU lockstep: %.3f tolerance units", d);
    ot_lane_stats st;
    ot_solution_lane_stats(sg, 17, &st);
    ck_assert_int_gt(st.steps, 100);
    free(a);
    free(b);
    ot_solution_free(sg);
    ot_solution_free(sc);
    ot_ode_free(g);
    ot_ode_free(c);
}
END_TEST

/* Outputs left on the device are CUDA tensors, exportable as kDLCUDA, equal
 * bit for bit to the host-output run; device inputs give the same too. */
START_TEST(device_outputs_and_inputs)
{
    ot_ode *g = robertson(1, 1);
    ot_solution *host = solve(g, hview(ry0, 3, 0), hview(rk, 3, RNB), hview(rt, RNT, 0));
    double *dk = dev_alloc(3 * RNB), *dy = dev_alloc(3);
    ck_assert(dk && dy && !to_device(dk, rk, 3 * RNB) && !to_device(dy, ry0, 3));
    ot_view kv, yv;
    const int64_t kshape[2] = {3, RNB}, three = 3;
    ck_assert_int_eq(ot_view_make(&kv, dk, OT_F64, GPU, 2, kshape, NULL), OT_OK);
    ck_assert_int_eq(ot_view_make(&yv, dy, OT_F64, GPU, 1, &three, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_outputs_on_device(g, 1), OT_OK);
    ot_solution *dev = solve(g, yv, kv, hview(rt, RNT, 0));
    const ot_layout *l = ot_tensor_layout(ot_solution_ys(dev));
    ck_assert_int_eq(l->device.type, OT_CUDA);
    double *a = host_ys(host), *b = host_ys(dev);
    ck_assert_mem_eq(a, b, sizeof(double) * 3 * RNT * RNB);
    DLManagedTensorVersioned *mt;
    ck_assert_int_eq(ot_dlpack_export(ot_solution_take_ys(dev), &mt), OT_OK);
    ck_assert_int_eq(mt->dl_tensor.device.device_type, kDLCUDA);
    mt->deleter(mt);
    free(a);
    free(b);
    dev_free(dk);
    dev_free(dy);
    ot_solution_free(host);
    ot_solution_free(dev);
    ot_ode_free(g);
}
END_TEST

START_TEST(f32_outputs)
{
    ot_ode *g = robertson(1, 1);
    ot_solution *d64 = solve(g, hview(ry0, 3, 0), hview(rk, 3, RNB), hview(rt, RNT, 0));
    ck_assert_int_eq(ot_ode_set_output_dtype(g, OT_F32), OT_OK);
    ot_solution *d32 = solve(g, hview(ry0, 3, 0), hview(rk, 3, RNB), hview(rt, RNT, 0));
    const double *a = ot_tensor_layout(ot_solution_ys(d64))->data;
    const float *f = ot_tensor_layout(ot_solution_ys(d32))->data;
    for (size_t k = 0; k < (size_t)3 * RNT * RNB; k++)
        ck_assert_float_eq(f[k], (float)a[k]);
    ot_solution_free(d64);
    ot_solution_free(d32);
    ot_ode_free(g);
}
END_TEST

/* Adams (fixed point) on the device: oscillators against cos(w t). */
START_TEST(adams_oscillators)
{
    enum { NB = 4096, NT = 12 };
    static double w[NB];
    double y0[2] = {1, 0}, t[NT];
    for (int b = 0; b < NB; b++)
        w[b] = 0.5 + 1.5 * b / NB;
    for (int i = 0; i < NT; i++)
        t[i] = 0.5 * i;
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 2, 1, osc_gpu, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_method(ode, OT_ADAMS), OT_OK);
    ck_assert_int_eq(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK);
    ck_assert_int_eq(ot_ode_set_device(ode, GPU), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, 1e-8), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol(ode, 1e-10), OT_OK);
    ot_solution *s = solve(ode, hview(y0, 2, 0), hview(w, 1, NB), hview(t, NT, 0));
    const ot_view ys = ot_tensor_view(ot_solution_ys(s));
    for (int b = 0; b < NB; b += 97)
        for (int i = 0; i < NT; i++)
            ck_assert_double_eq_tol(ot_view_col_f64(ys, i, b)[0], cos(w[b] * t[i]), 1e-6);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* Sensitivities on the device against dy/dk = -t y0 exp(-k t). */
START_TEST(sensitivities_analytic)
{
    enum { NB = 2048, NT = 8 };
    static double k[NB];
    double y0 = 2, t[NT];
    for (int b = 0; b < NB; b++)
        k[b] = 0.2 + 1.8 * b / NB;
    for (int i = 0; i < NT; i++)
        t[i] = 0.5 * (i + 1);
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 1, 1, decay_gpu, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK);
    ck_assert_int_eq(ot_ode_set_device(ode, GPU), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, 1e-8), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol(ode, 1e-12), OT_OK);
    ot_solution *s = NULL;
    const int st =
        ot_solve_fwd_sens(ode, hview(&y0, 1, 0), hview(k, 1, NB), hview(t, NT, 0), &s);
    ck_assert_msg(st == OT_OK, "%s", ot_last_error());
    const ot_view sv = ot_tensor_view(ot_solution_sens(s, 0));
    for (int b = 0; b < NB; b += 31)
        for (int i = 0; i < NT; i++) {
            const double want = -t[i] * y0 * exp(-k[b] * t[i]);
            ck_assert_double_eq_tol(ot_view_col_f64(sv, i, b)[0], want,
                                    1e-5 * fabs(want));
        }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* Roots on the device: each lane stops at its own impact. */
START_TEST(roots_per_lane)
{
    enum { NB = 512, NT = 40 };
    static double y0[2 * NB];
    double t[NT];
    for (int b = 0; b < NB; b++) {
        y0[2 * b] = 1.0 + 10.0 * b / NB;
        y0[2 * b + 1] = 0;
    }
    for (int i = 0; i < NT; i++)
        t[i] = 0.05 * (i + 1);
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 2, 0, fall_gpu, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_roots(ode, 1, ground_gpu), OT_OK);
    ck_assert_int_eq(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK);
    ck_assert_int_eq(ot_ode_set_device(ode, GPU), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, 1e-10), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol(ode, 1e-12), OT_OK);
    ot_solution *s = solve(ode, hview(y0, 2, NB), ot_view_absent(), hview(t, NT, 0));
    const ot_view ys = ot_tensor_view(ot_solution_ys(s));
    for (int b = 0; b < NB; b += 7) {
        const double hit = sqrt(2 * y0[2 * b] / 9.81);
        double when;
        int idx;
        ot_solution_lane_root(s, b, &idx, &when);
        ck_assert_int_eq(idx, 0);
        ck_assert_double_eq_tol(when, hit, 1e-6);
        const int64_t c = ot_solution_lane_count(s, b),
                      want = (int64_t)floor(hit / 0.05 + 1e-9);
        ck_assert_int_eq(c, want < NT ? want : NT);
        if (c < NT)
            ck_assert(isnan(ot_view_col_f64(ys, c, b)[0]));
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ot_solve on the device: shared steps, each lane's record ends at its
 * impact. */
START_TEST(steps_end_at_roots)
{
    enum { NB = 64 };
    static double y0[2 * NB];
    for (int b = 0; b < NB; b++) {
        y0[2 * b] = 1.0 + 0.25 * b;
        y0[2 * b + 1] = 0;
    }
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 2, 0, fall_gpu, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_roots(ode, 1, ground_gpu), OT_OK);
    ck_assert_int_eq(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK);
    ck_assert_int_eq(ot_ode_set_device(ode, GPU), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, 1e-10), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol(ode, 1e-12), OT_OK);
    ot_solution *s = NULL;
    const int st = ot_solve(ode, hview(y0, 2, NB), ot_view_absent(), 100.0, &s);
    ck_assert_msg(st == OT_OK, "%s", ot_last_error());
    const ot_view ts = ot_tensor_view(ot_solution_ts(s)),
                  ys = ot_tensor_view(ot_solution_ys(s));
    for (int b = 0; b < NB; b++) {
        const int64_t c = ot_solution_lane_count(s, b);
        const double hit = sqrt(2 * y0[2 * b] / 9.81);
        ck_assert_double_eq_tol(ot_view_col_f64(ts, b, 0)[c - 1], hit, 1e-6);
        ck_assert_double_eq_tol(ot_view_col_f64(ys, c - 1, b)[0], 0, 1e-6);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* A failing device callback stops the batch with a status, never a crash. */
START_TEST(callback_failure)
{
    double k[64], y0 = 1, t[3] = {0.5, 1.5, 2.5};
    for (int b = 0; b < 64; b++)
        k[b] = 0.1 + 0.01 * b;
    ot_ode *ode;
    ck_assert_int_eq(ot_ode_new(&ode, 1, 1, decay_fail_gpu, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK);
    ck_assert_int_eq(ot_ode_set_device(ode, GPU), OT_OK);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, hview(&y0, 1, 0), hview(k, 1, 64), hview(t, 3, 0), &s),
        OT_ERR_LANES_FAILED, "rhs returned -1");
    ck_assert_int_eq(ot_solution_lane_status(s, 63), OT_ERR_CALLBACK);
    ck_assert_int_eq(ot_solution_lane_count(s, 63), 1);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* The GPU path checks what callbacks write as the CPU path does (issue 13,
 * item 19): NaN from lane 3 names lane 3; a callback written for one lane
 * names lane 1 as never written. The device the caller had comes back. */
START_TEST(device_callbacks_are_checked_like_host_ones)
{
    double k[64], y0 = 1, t[3] = {0.25, 1.5, 2.5};
    for (int b = 0; b < 64; b++)
        k[b] = 0.1 + 0.01 * b;
    for (int which = 0; which < 2; which++) {
        ot_ode *ode;
        ck_assert_int_eq(
            ot_ode_new(&ode, 1, 1, which ? decay_lane0_gpu : decay_nan_gpu, NULL), OT_OK);
        ck_assert_int_eq(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK);
        ck_assert_int_eq(ot_ode_set_device(ode, GPU), OT_OK);
        ot_solution *s = NULL;
        ck_assert_status(
            ot_solve_dense(ode, hview(&y0, 1, 0), hview(k, 1, 64), hview(t, 3, 0), &s),
            OT_ERR_LANES_FAILED,
            which ? "rhs did not write dydt for lane 1" : "rhs wrote NaN or Inf at t = ");
        if (!which)
            ck_assert_msg(strstr(ot_solution_lane_message(s, 0), "to dydt[0] of lane 3"),
                          "%s", ot_solution_lane_message(s, 0));
        ck_assert_int_eq(ot_solution_lane_status(s, 10), OT_ERR_CALLBACK);
        ot_solution_free(s);
        ot_ode_free(ode);
    }
    int dev = -1;
    ck_assert_int_eq(cuda_current_device(&dev), 0);
    ck_assert_int_eq(dev, 0);
}
END_TEST

int main(void)
{
    int count = 0;
    ot_cuda_device_count(&count);
    Suite *s = suite_create("cuda");
    TCase *tc = tcase_create(count ? "gpu" : "no-device");
    tcase_set_timeout(tc, 120);
    int skipped = 0;
    if (count == 0) {
        tcase_add_test(tc, no_device_is_a_clean_status);
        skipped = 11; /* the GPU tests below */
    } else {
        tcase_add_loop_test(tc, robertson_gpu_matches_cpu, 0, 3);
        tcase_add_test(tc, device_outputs_and_inputs);
        tcase_add_test(tc, f32_outputs);
        tcase_add_test(tc, adams_oscillators);
        tcase_add_test(tc, sensitivities_analytic);
        tcase_add_test(tc, roots_per_lane);
        tcase_add_test(tc, callback_failure);
        tcase_add_test(tc, steps_end_at_roots);
        tcase_add_test(tc, device_callbacks_are_checked_like_host_ones);
    }
    skipped += ot_cuda_kernel_tests(tc, count > 0);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    /* CUDA does not survive fork() once initialised (the device count above
     * did that), so GPU tests run in this process. */
    if (count)
        srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    const int run = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (skipped)
        printf("skipped: no CUDA device (%d GPU tests)\n", skipped);
    printf("cuda: %d passed, %d failed, %d skipped\n", run - failed, failed, skipped);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Compiled models on CUDA (odetensor/kernel.h, kernel_model.inc; issue 27):
 * tests/kmodels.h's models built by nvcc (kmodels.cu), one lane a CUDA
 * thread, against the same build's host lane loop (the CPU's: bit for bit
 * the lane groups, check_kernel_model.c). Without a device: the clean
 * status, and the nvcc build's host loop against the closed form. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <odetensor.h>

#include "../suites.h"
#include "check_cuda_kernel.h"

extern const ot_kernel_model km_rober_model, km_vdp_model, km_decay_model;

static const ot_device CPU = {OT_CPU, 0}, GPU = {OT_CUDA, 0};

static ot_view view2(const double *d, int64_t rows, int64_t cols)
{
    ot_view v;
    const int64_t shape[2] = {rows, cols};
    ck_assert_int_eq(ot_view_make(&v, d, OT_F64, CPU, cols ? 2 : 1, shape, NULL), OT_OK);
    return v;
}

/* A problem of compiled model m (its callbacks too), on device. */
static ot_ode *model_ode(const ot_kernel_model *m, int method, double rtol, double atol,
                         ot_device device)
{
    ot_ode *ode = NULL;
    ck_assert_int_eq(ot_ode_new(&ode, m->n, m->np, m->rhs, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_method(ode, (ot_method)method), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(ode, rtol), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol(ode, atol), OT_OK);
    ck_assert_int_eq(ot_ode_set_kernel_model(ode, m), OT_OK);
    ck_assert_int_eq(ot_ode_set_device(ode, device), OT_OK);
    return ode;
}

/* km_decay: y' = -p0 y, lanes free of its walls. */
enum { DB = 16, DT = 5 };
static double dp[3 * DB], dy0[DB], dt[DT];

static void decay_inputs(void)
{
    for (int b = 0; b < DB; b++) {
        dp[3 * b] = 0.5 + 0.1 * b;
        dp[3 * b + 1] = -1;
        dp[3 * b + 2] = 1e9;
        dy0[b] = 1 + 0.25 * b;
    }
    for (int i = 0; i < DT; i++)
        dt[i] = 0.5 * i;
}

START_TEST(a_compiled_model_on_cuda_without_a_device_is_a_clean_status)
{
    decay_inputs();
    ot_ode *ode = model_ode(&km_decay_model, OT_RODAS4, 1e-8, 1e-12, GPU);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, view2(dy0, 1, DB), view2(dp, 3, DB), view2(dt, DT, 0), &s),
        OT_ERR_NO_CUDA, "the CUDA run of compiled model km_decay failed");
    ck_assert_ptr_null(s);
    ot_ode_free(ode);
}
END_TEST

/* The nvcc build's host lane loop: the CPU half of the one source. */
START_TEST(an_nvcc_built_model_solves_on_the_cpu)
{
    decay_inputs();
    static const int methods[] = {OT_RODAS4, OT_RODAS5P, OT_TSIT5, OT_VERN7};
    for (int k = 0; k < 4; k++) {
        ot_ode *ode = model_ode(&km_decay_model, methods[k], 1e-8, 1e-12, CPU);
        ot_solution *s = NULL;
        ck_assert_status(ot_solve_dense(ode, view2(dy0, 1, DB), view2(dp, 3, DB),
                                        view2(dt, DT, 0), &s),
                         OT_OK, NULL);
        const ot_view ys = ot_tensor_view(ot_solution_ys(s));
        for (int b = 0; b < DB; b++)
            for (int i = 0; i < DT; i++) {
                const double want = dy0[b] * exp(-dp[3 * b] * dt[i]);
                ck_assert_double_eq_tol(ot_view_col_f64(ys, i, b)[0], want,
                                        100 * (1e-8 * want + 1e-12));
            }
        ot_solution_free(s);
        ot_ode_free(ode);
    }
}
END_TEST

/* ---- With a device ---------------------------------------------------------- */

/* Solves on the GPU and on the CPU (the same build's host loop) and asserts
 * each lane's status, count, step count (to 2 %: the device's pow and FMA
 * contractions round differently, so the paths part at the last bits) and
 * outputs within `units` tolerance units of each other. */
static void assert_gpu_matches_cpu(const ot_kernel_model *m, int method, double rtol,
                                   double atol, ot_view y0, ot_view p, ot_view t,
                                   int64_t nb, double units)
{
    ot_solution *sol[2] = {NULL, NULL};
    for (int gpu = 0; gpu < 2; gpu++) {
        ot_ode *ode = model_ode(m, method, rtol, atol, gpu ? GPU : CPU);
        const int st = ot_solve_dense(ode, y0, p, t, &sol[gpu]);
        ck_assert_msg(st == OT_OK || st == OT_ERR_LANES_FAILED, "%s: %s",
                      ot_status_name(st), ot_last_error());
        ot_ode_free(ode);
    }
    const ot_view c = ot_tensor_view(ot_solution_ys(sol[0])),
                  g = ot_tensor_view(ot_solution_ys(sol[1]));
    for (int64_t b = 0; b < nb; b++) {
        ck_assert_int_eq(ot_solution_lane_status(sol[0], b),
                         ot_solution_lane_status(sol[1], b));
        const int64_t count = ot_solution_lane_count(sol[0], b);
        ck_assert_int_eq(count, ot_solution_lane_count(sol[1], b));
        ot_lane_stats sc, sg;
        ot_solution_lane_stats(sol[0], b, &sc);
        ot_solution_lane_stats(sol[1], b, &sg);
        ck_assert_msg(fabs((double)(sc.steps - sg.steps)) <= 0.02 * (double)sc.steps + 2,
                      "%s lane %lld: %lld steps on the CPU, %lld on the GPU", m->name,
                      (long long)b, (long long)sc.steps, (long long)sg.steps);
        for (int64_t i = 0; i < count; i++)
            for (int64_t r = 0; r < m->n; r++) {
                const double x = ot_view_col_f64(c, i, b)[r],
                             y = ot_view_col_f64(g, i, b)[r];
                ck_assert_msg(
                    fabs(x - y) <= units * (rtol * fabs(x) + atol),
                    "%s method %d lane %lld y%lld output %lld: CPU %.12g, GPU %.12g",
                    m->name, method, (long long)b, (long long)r, (long long)i, x, y);
            }
    }
    ot_solution_free(sol[0]);
    ot_solution_free(sol[1]);
}

/* Robertson, 4096 lanes with rates +-10 %, the Rosenbrock methods. */
START_TEST(compiled_robertson_on_the_gpu_matches_the_cpu)
{
    enum { RB = 4096, RT = 20 };
    static double p[3 * RB], t[RT];
    static const double y0[3] = {1, 0, 0};
    for (int b = 0; b < RB; b++) {
        p[3 * b] = 0.04 * (1 + 0.1 * sin(1.0 + 0.37 * b));
        p[3 * b + 1] = 1e4 * (1 + 0.1 * sin(2.0 + 0.37 * b));
        p[3 * b + 2] = 3e7 * (1 + 0.1 * sin(3.0 + 0.37 * b));
    }
    for (int i = 0; i < RT; i++)
        t[i] = 1e-4 * pow(10, 0.5 * i);
    static const int methods[] = {OT_ROS23, OT_RODAS4, OT_RODAS5P};
    /* A step accepted on one side and rejected on the other parts the two
     * paths by up to their own errors: ros23's reach tens of units. */
    assert_gpu_matches_cpu(&km_rober_model, methods[_i], 1e-6, 1e-10, view2(y0, 3, 0),
                           view2(p, 3, RB), view2(t, RT, 0), RB, _i == 0 ? 100 : 10);
}
END_TEST

/* Van der Pol (it reads t: per-lane times reach it), the explicit pairs and
 * Rodas5P with difference quotients, each lane its own mu. */
START_TEST(compiled_van_der_pol_on_the_gpu_matches_the_cpu)
{
    enum { VB = 1024, VT = 12 };
    static double mu[VB], y0[2 * VB], t[VT];
    for (int b = 0; b < VB; b++) {
        mu[b] = 0.2 + 0.004 * b;
        y0[2 * b] = 2;
        y0[2 * b + 1] = 0;
    }
    for (int i = 0; i < VT; i++)
        t[i] = 0.5 * i;
    static const int methods[] = {OT_TSIT5, OT_VERN7, OT_RODAS5P};
    assert_gpu_matches_cpu(&km_vdp_model, methods[_i], 1e-7, 1e-9, view2(y0, 2, VB),
                           view2(mu, 1, VB), view2(t, VT, 0), VB, 10);
}
END_TEST

/* km_decay's walls on the device: a lane asking for smaller steps at its
 * wall and one whose rhs fails stop alone, as on the CPU. */
START_TEST(compiled_lanes_fail_alone_on_the_gpu)
{
    decay_inputs();
    dp[3 * 1 + 1] = 0.5; /* lane 1: a wall at y = 0.5 */
    dp[3 * 2 + 2] = 1.2; /* lane 2: fails past t = 1.2 */
    assert_gpu_matches_cpu(&km_decay_model, OT_RODAS4, 1e-8, 1e-12, view2(dy0, 1, DB),
                           view2(dp, 3, DB), view2(dt, DT, 0), DB, 10);
    ot_ode *ode = model_ode(&km_decay_model, OT_RODAS4, 1e-8, 1e-12, GPU);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, view2(dy0, 1, DB), view2(dp, 3, DB), view2(dt, DT, 0), &s),
        OT_ERR_LANES_FAILED, "km_decay");
    ck_assert_int_ne(ot_solution_lane_status(s, 1), OT_OK);
    ck_assert_int_eq(ot_solution_lane_status(s, 2), OT_ERR_CALLBACK);
    ck_assert_int_eq(ot_solution_lane_status(s, 3), OT_OK);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

int ot_cuda_kernel_tests(TCase *tc, int have_gpu)
{
    tcase_add_test(tc, an_nvcc_built_model_solves_on_the_cpu);
    if (!have_gpu) {
        tcase_add_test(tc, a_compiled_model_on_cuda_without_a_device_is_a_clean_status);
        return 7; /* the GPU tests below, loops counted per iteration */
    }
    tcase_add_loop_test(tc, compiled_robertson_on_the_gpu_matches_the_cpu, 0, 3);
    tcase_add_loop_test(tc, compiled_van_der_pol_on_the_gpu_matches_the_cpu, 0, 3);
    tcase_add_test(tc, compiled_lanes_fail_alone_on_the_gpu);
    return 0;
}

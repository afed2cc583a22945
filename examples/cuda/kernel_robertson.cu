/* One model source for the CPU and the GPU (odetensor/kernel.h): Robertson's
 * kinetics written once as host-device functions, compiled into the kernel
 * methods by <odetensor/kernel_model.inc>. nvcc builds this file into a
 * model whose lanes run one a CUDA thread, and whose host half runs them on
 * the CPU's threads; the library itself needs no CUDA backend for it (this
 * example links the plain libodetensor.a and the CUDA runtime).
 *
 * Usage: kernel_robertson [lanes=100000]. Solves the lanes with Rodas5P on
 * the CPU, then on the GPU where there is one (else it says "skipped: no
 * CUDA device" for that half), and checks every output: the mass y1 + y2 +
 * y3 stays 1 to the tolerance, and the GPU's lanes agree with the CPU's.
 * Exit status 0 when the answers are right. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <odetensor.h>
#include <odetensor/kernel.h>

#include "robertson_model.h"

/* Defines `robertson_model`: the lane loop for the CPU and, here, CUDA. */
#define OT_KM_NAME robertson
#define OT_KM_N 3
#define OT_KM_NP 3
#define OT_KM_RHS robertson_rhs
#define OT_KM_JAC robertson_jac
#include <odetensor/kernel_model.inc>

enum { NT = 40 };
static const double RTOL = 1e-6, ATOL = 1e-10;

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Solves every lane on device; NULL on failure (printed). */
static ot_solution *solve(ot_device device, const double *k, int64_t nb, const double *t,
                          double *secs)
{
    static const double y0[3] = {1, 0, 0};
    const ot_device cpu = {OT_CPU, 0};
    const int64_t three = 3, ps[2] = {3, nb}, nt = NT;
    ot_view yv, pv, tv;
    ot_ode *ode = NULL;
    ot_solution *sol = NULL;
    int st = ot_view_make(&yv, y0, OT_F64, cpu, 1, &three, NULL);
    st = st ? st : ot_view_make(&pv, k, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&tv, t, OT_F64, cpu, 1, &nt, NULL);
    /* The model's callbacks serve ot_ode_new; the compiled loop replaces them. */
    st = st ? st : ot_ode_new(&ode, 3, 3, robertson_model.rhs, NULL);
    st = st ? st : ot_ode_set_method(ode, OT_RODAS5P);
    st = st ? st : ot_ode_set_autonomous(ode, 1);
    st = st ? st : ot_ode_set_rtol(ode, RTOL);
    st = st ? st : ot_ode_set_atol(ode, ATOL);
    st = st ? st : ot_ode_set_kernel_model(ode, &robertson_model);
    st = st ? st : ot_ode_set_device(ode, device);
    const double start = seconds();
    st = st ? st : ot_solve_dense(ode, yv, pv, tv, &sol);
    *secs = seconds() - start;
    if (st != OT_OK)
        fprintf(stderr, "%s solve: %s: %s\n", device.type == OT_CUDA ? "GPU" : "CPU",
                ot_status_name(st), ot_last_error());
    ot_ode_free(ode);
    return st == OT_OK ? sol : NULL;
}

/* The worst |y1 + y2 + y3 - 1| over every lane and output. */
static double worst_mass(const ot_solution *s, int64_t nb)
{
    const ot_view ys = ot_tensor_view(ot_solution_ys(s));
    double w = 0;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < NT; i++) {
            const double *y = ot_view_col_f64(ys, i, b);
            w = fmax(w, fabs(y[0] + y[1] + y[2] - 1));
        }
    return w;
}

int main(int argc, char **argv)
{
    const int64_t nb = argc > 1 ? atoll(argv[1]) : 100000;
    if (nb < 1) {
        fprintf(stderr, "usage: kernel_robertson [lanes >= 1]\n");
        return 2;
    }
    double *k = (double *)malloc(sizeof *k * 3 * (size_t)nb), t[NT];
    srand(2026);
    for (int64_t b = 0; b < nb; b++)
        for (int j = 0; j < 3; j++)
            k[3 * b + j] = (j == 0   ? 0.04
                            : j == 1 ? 1e4
                                     : 3e7) *
                           (0.9 + 0.2 * rand() / (double)RAND_MAX);
    for (int i = 0; i < NT; i++)
        t[i] = pow(10, -5 + 10.0 * i / (NT - 1));
    int ok = 1;
    double tc = 0, tg = 0;
    ot_solution *cs = solve((ot_device){OT_CPU, 0}, k, nb, t, &tc);
    ok &= cs != NULL;
    if (cs) {
        const double m = worst_mass(cs, nb);
        printf("CPU (one lane a thread at a time): %lld lanes in %.3f s, %.0f lanes/s; "
               "worst mass error %.2g\n",
               (long long)nb, tc, (double)nb / tc, m);
        ok &= m <= 1e-5;
    }
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("skipped: no CUDA device (the GPU half)\n");
    } else if (cs) {
        ot_solution *gs = solve((ot_device){OT_CUDA, 0}, k, nb, t, &tg);
        ok &= gs != NULL;
        if (gs) {
            const ot_view c = ot_tensor_view(ot_solution_ys(cs)),
                          g = ot_tensor_view(ot_solution_ys(gs));
            double units = 0;
            for (int64_t b = 0; b < nb; b++)
                for (int64_t i = 0; i < NT; i++)
                    for (int r = 0; r < 3; r++) {
                        const double x = ot_view_col_f64(c, i, b)[r],
                                     y = ot_view_col_f64(g, i, b)[r];
                        units = fmax(units, fabs(x - y) / (RTOL * fabs(x) + ATOL));
                    }
            printf("GPU (one lane a CUDA thread): %lld lanes in %.3f s, %.0f lanes/s "
                   "(%.1fx the CPU); worst lane %.2g tolerance units from the CPU's\n",
                   (long long)nb, tg, (double)nb / tg, tc / tg, units);
            ok &= units <= 10;
        }
        ot_solution_free(gs);
    }
    ot_solution_free(cs);
    free(k);
    printf("%s\n", ok ? "kernel_robertson: ok" : "kernel_robertson: WRONG");
    return ok ? 0 : 1;
}

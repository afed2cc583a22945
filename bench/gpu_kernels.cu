/* The kernel methods on the GPU against every host core (issue 27): Robertson
 * (examples/cuda/robertson_model.h, rates +-10 %, 40 log-spaced outputs to
 * 1e5, rtol 1e-6) compiled into Rodas5P and Rodas4, one lane a CUDA thread,
 * against the best CPU modes on all host threads: the same compiled model a
 * lane a thread, the lane groups through callbacks, and lockstep BDF at the
 * rtol where it is as accurate. Each run's worst lane error is in tolerance
 * units against lanes-mode BDF at rtol 1e-10 on the first NREF lanes.
 * Usage: gpu_kernels [gpu_lanes=1000000] [cpu_lanes=65536]. CPU throughput
 * is measured on cpu_lanes and compared per lane; prints a table, then
 * speedup_gpu_vs_cpu=X (the GPU's lanes/s over the best CPU mode's at equal
 * or better accuracy). Without a device: "skipped: no CUDA device". */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <odetensor.h>

#include "../examples/cuda/robertson_model.h"

#define OT_KM_NAME robertson
#define OT_KM_N 3
#define OT_KM_NP 3
#define OT_KM_RHS robertson_rhs
#define OT_KM_JAC robertson_jac
#include <odetensor/kernel_model.inc>

enum { NT = 40, NREF = 256 };
static const double RTOL = 1e-6, ATOL = 1e-10;

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The model's Jacobian as an ordinary callback (lockstep's blocks). */
static int jac_cb(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        robertson_jac(t, ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0),
                      ot_view_mut_col_f64(J, 0, b));
    return 0;
}

typedef struct {
    const char *name;
    int method, mode, compiled, gpu;
    double rtol;
    double secs, units;
    int64_t lanes;
} run;

static ot_solution *solve(const run *r, const double *k, int64_t nb, const double *t,
                          double *secs)
{
    static const double y0[3] = {1, 0, 0};
    const ot_device cpu = {OT_CPU, 0}, gpu = {OT_CUDA, 0};
    const int64_t three = 3, ps[2] = {3, nb}, nt = NT;
    ot_view yv, pv, tv;
    ot_ode *ode = NULL;
    ot_solution *sol = NULL;
    int st = ot_view_make(&yv, y0, OT_F64, cpu, 1, &three, NULL);
    st = st ? st : ot_view_make(&pv, k, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&tv, t, OT_F64, cpu, 1, &nt, NULL);
    st = st ? st : ot_ode_new(&ode, 3, 3, robertson_model.rhs, NULL);
    st = st ? st : ot_ode_set_method(ode, (ot_method)r->method);
    st = st ? st : ot_ode_set_mode(ode, (ot_mode)r->mode);
    st = st ? st : ot_ode_set_rtol(ode, r->rtol);
    st = st ? st : ot_ode_set_atol(ode, ATOL * r->rtol / RTOL);
    st = st ? st : ot_ode_set_max_steps(ode, 100000);
    if (r->method == OT_BDF) {
        st = st ? st : ot_ode_set_jac(ode, jac_cb);
    } else {
        st = st ? st : ot_ode_set_autonomous(ode, 1);
        st = st ? st : ot_ode_set_rhs_lanes(ode, robertson_model.rhs_lanes);
        st = st ? st : ot_ode_set_jac_lanes(ode, robertson_model.jac_lanes);
    }
    if (r->compiled)
        st = st ? st : ot_ode_set_kernel_model(ode, &robertson_model);
    st = st ? st : ot_ode_set_device(ode, r->gpu ? gpu : cpu);
    const double a = seconds();
    st = st ? st : ot_solve_dense(ode, yv, pv, tv, &sol);
    *secs = seconds() - a;
    if (st != OT_OK)
        fprintf(stderr, "%s: %s: %s\n", r->name, ot_status_name(st), ot_last_error());
    ot_ode_free(ode);
    return st == OT_OK ? sol : NULL;
}

static double worst_units(const ot_solution *s, const ot_solution *ref)
{
    const ot_view y = ot_tensor_view(ot_solution_ys(s)),
                  r = ot_tensor_view(ot_solution_ys(ref));
    double w = 0;
    for (int64_t b = 0; b < NREF; b++)
        for (int64_t i = 0; i < NT; i++)
            for (int e = 0; e < 3; e++) {
                const double x = ot_view_col_f64(y, i, b)[e],
                             z = ot_view_col_f64(r, i, b)[e];
                w = fmax(w, fabs(x - z) / (RTOL * fabs(z) + ATOL));
            }
    return w;
}

int main(int argc, char **argv)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("skipped: no CUDA device\n");
        return 0;
    }
    const int64_t ng = argc > 1 ? atoll(argv[1]) : 1000000;
    const int64_t nc = argc > 2 ? atoll(argv[2]) : 65536;
    if (ng < NREF || nc < NREF) {
        fprintf(stderr, "usage: gpu_kernels [gpu_lanes >= %d] [cpu_lanes >= %d]\n", NREF,
                NREF);
        return 2;
    }
    const int64_t most = ng > nc ? ng : nc;
    double *k = (double *)malloc(sizeof *k * 3 * (size_t)most), t[NT];
    srand(7);
    for (int64_t b = 0; b < most; b++)
        for (int j = 0; j < 3; j++)
            k[3 * b + j] = (j == 0   ? 0.04
                            : j == 1 ? 1e4
                                     : 3e7) *
                           (0.9 + 0.2 * rand() / (double)RAND_MAX);
    for (int i = 0; i < NT; i++)
        t[i] = pow(10, -5 + 10.0 * i / (NT - 1));
    run refr = {"reference", OT_BDF, OT_LANES, 0, 0, 1e-10, 0, 0, NREF};
    double tref;
    ot_solution *ref = solve(&refr, k, NREF, t, &tref);
    if (ref == NULL)
        return 1;
    run runs[] = {
        {"GPU Rodas5P, compiled", OT_RODAS5P, OT_LANES, 1, 1, 1e-6, 0, 0, ng},
        {"GPU Rodas4, compiled", OT_RODAS4, OT_LANES, 1, 1, 1e-6, 0, 0, ng},
        {"CPU Rodas5P, compiled", OT_RODAS5P, OT_LANES, 1, 0, 1e-6, 0, 0, nc},
        {"CPU Rodas4, compiled", OT_RODAS4, OT_LANES, 1, 0, 1e-6, 0, 0, nc},
        {"CPU Rodas5P, lane groups", OT_RODAS5P, OT_LANES, 0, 0, 1e-6, 0, 0, nc},
        {"CPU lockstep BDF", OT_BDF, OT_LOCKSTEP, 0, 0, 1e-7, 0, 0, nc},
        {"CPU lockstep BDF", OT_BDF, OT_LOCKSTEP, 0, 0, 1e-8, 0, 0, nc},
    };
    enum { NR = sizeof runs / sizeof runs[0] };
    printf("Robertson, rates +-10 %%, %d outputs to 1e5; CPU runs on every host thread\n",
           NT);
    printf("| run | rtol | lanes | s | lanes/s | worst units "
           "|\n|---|---|---|---|---|---|\n");
    for (int i = 0; i < NR; i++) {
        ot_solution *s = solve(&runs[i], k, runs[i].lanes, t, &runs[i].secs);
        if (s == NULL)
            return 1;
        runs[i].units = worst_units(s, ref);
        ot_solution_free(s);
        printf("| %s | %.0e | %lld | %.3f | %.0f | %.3g |\n", runs[i].name, runs[i].rtol,
               (long long)runs[i].lanes, runs[i].secs,
               (double)runs[i].lanes / runs[i].secs, runs[i].units);
    }
    /* The GPU's best against the CPU's best at equal or better accuracy (10 %
     * slack: the same method on the CPU and the GPU parts at the last bits). */
    double gpu = 0, units = 0, cpu = 0;
    for (int i = 0; i < NR; i++)
        if (runs[i].gpu && (double)runs[i].lanes / runs[i].secs > gpu) {
            gpu = (double)runs[i].lanes / runs[i].secs;
            units = runs[i].units;
        }
    for (int i = 0; i < NR; i++)
        if (!runs[i].gpu && runs[i].units <= 1.1 * units)
            cpu = fmax(cpu, (double)runs[i].lanes / runs[i].secs);
    printf(
        "GPU / CPU throughput: %.1fx (best GPU %.0f lanes/s at %.3g units; best CPU at "
        "equal accuracy %.0f lanes/s)\n",
        cpu > 0 ? gpu / cpu : 0.0, gpu, units, cpu);
    printf("speedup_gpu_vs_cpu=%.1f\n", cpu > 0 ? gpu / cpu : 0.0);
    ot_solution_free(ref);
    free(k);
    return 0;
}

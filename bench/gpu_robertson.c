/* GPU benchmark (make cuda; run by scripts/gpu-check.sh): Robertson with
 * rates +-10 %, rtol 1e-6, 50 outputs to 1e5. CUDA lockstep on N lanes (own
 * block-LU kernel and cuBLAS batched LU) against lanes mode on every CPU core
 * of the same machine on a subset, compared in lanes per second; the subset's
 * lanes are also checked against each other.
 * Usage: gpu_robertson [gpu_lanes=1000000] [cpu_lanes=65536] */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <odetensor.h>

#include "../examples/cuda/robertson_kernels.h"

#include "core/test_hooks.h"

enum { NT = 50 };
static size_t min_free = (size_t)-1;

/* The rhs kernel, plus a look at free device memory (for the per-lane
 * figure; cheap next to the solve). */
static int rhs_watch(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    size_t free_b, total;
    if (cudaMemGetInfo(&free_b, &total) == cudaSuccess && free_b < min_free)
        min_free = free_b;
    return robertson_rhs_gpu(t, y, p, d, u);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int run(int gpu, int64_t nb, const double *k, const double *t, ot_solution **out,
               double *secs)
{
    static const double atol[3] = {1e-8, 1e-14, 1e-6}, y0[3] = {1, 0, 0};
    const ot_device cpu = {OT_CPU, 0};
    const int64_t three = 3, ps[2] = {3, nb}, nt = NT;
    ot_view av, yv, pv, tv;
    ot_ode *ode = NULL;
    int st = ot_view_make(&av, atol, OT_F64, cpu, 1, &three, NULL);
    st = st ? st : ot_view_make(&yv, y0, OT_F64, cpu, 1, &three, NULL);
    st = st ? st : ot_view_make(&pv, k, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&tv, t, OT_F64, cpu, 1, &nt, NULL);
    st = st ? st : ot_ode_new(&ode, 3, 3, gpu ? rhs_watch : robertson_rhs_cpu, NULL);
    st = st ? st : ot_ode_set_jac(ode, gpu ? robertson_jac_gpu : robertson_jac_cpu);
    st = st ? st : ot_ode_set_rtol(ode, 1e-6);
    st = st ? st : ot_ode_set_atol_vector(ode, av);
    if (gpu) {
        st = st ? st : ot_ode_set_mode(ode, OT_LOCKSTEP);
        st = st ? st : ot_ode_set_device(ode, (ot_device){OT_CUDA, 0});
    }
    const double a = seconds();
    st = st ? st : ot_solve_dense(ode, yv, pv, tv, out);
    *secs = seconds() - a;
    ot_ode_free(ode);
    if (st != OT_OK)
        fprintf(stderr, "%s: %s\n", ot_status_name(st), ot_last_error());
    return st;
}

int main(int argc, char **argv)
{
    int count = 0;
    if (ot_cuda_device_count(&count) != OT_OK) {
        printf("skipped: no CUDA device (%s)\n", ot_last_error());
        return 0;
    }
    const int64_t ng = argc > 1 ? atoll(argv[1]) : 1000000;
    const int64_t nc = argc > 2 ? atoll(argv[2]) : 65536;
    double *k = malloc(sizeof *k * 3 * (size_t)(ng > nc ? ng : nc)), t[NT];
    srand(7);
    for (int64_t b = 0; b < 3 * (ng > nc ? ng : nc); b++)
        k[b] = (b % 3 == 0   ? 0.04
                : b % 3 == 1 ? 1e4
                             : 3e7) *
               (0.9 + 0.2 * rand() / (double)RAND_MAX);
    for (int i = 0; i < NT; i++)
        t[i] = pow(10, -5 + 10.0 * i / (NT - 1));
    size_t free0, total;
    cudaMemGetInfo(&free0, &total);

    ot_solution *gs = NULL, *bs = NULL, *cs = NULL;
    double tg = 0, tb = 0, tc = 0;
    if (run(1, ng, k, t, &gs, &tg) != OT_OK)
        return 1;
    const double bytes_per_lane = (double)(free0 - min_free) / (double)ng;
    ot__cuda_use_cublas(1);
    const int cublas_ok = run(1, ng, k, t, &bs, &tb) == OT_OK;
    ot__cuda_use_cublas(0);
    if (run(0, nc, k, t, &cs, &tc) != OT_OK)
        return 1;
    /* The first nc lanes are the same problem in both runs. */
    const ot_view g = ot_tensor_view(ot_solution_ys(gs)),
                  c = ot_tensor_view(ot_solution_ys(cs));
    double worst = 0;
    for (int64_t b = 0; b < nc && b < ng; b++)
        for (int i = 0; i < NT; i++)
            for (int r = 0; r < 3; r++) {
                const double x = ot_view_col_f64(g, i, b)[r],
                             y = ot_view_col_f64(c, i, b)[r];
                worst = fmax(worst, fabs(x - y) / (1e-6 * fabs(y) + (r == 1 ? 1e-14
                                                                     : r    ? 1e-6
                                                                            : 1e-8)));
            }
    ot_lane_stats s;
    ot_solution_lane_stats(gs, 0, &s);
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const double gps = (double)ng / tg, cps = (double)nc / tc;
    printf("| run | lanes | seconds | lanes/s |\n|---|---|---|---|\n");
    printf("| CUDA lockstep, own block LU | %lld | %.3f | %.0f |\n", (long long)ng, tg,
           gps);
    if (cublas_ok)
        printf("| CUDA lockstep, cuBLAS batched LU | %lld | %.3f | %.0f |\n",
               (long long)ng, tb, (double)ng / tb);
    printf("| CPU lanes mode, %ld threads | %lld | %.3f | %.0f |\n", cores, (long long)nc,
           tc, cps);
    printf("\nGPU / CPU throughput: %.1fx (target >= 10x)\n", gps / cps);
    if (cublas_ok)
        printf("own LU / cuBLAS LU time: %.2f\n", tg / tb);
    printf("lockstep steps: %lld; device memory: %.0f bytes per lane\n",
           (long long)s.steps, bytes_per_lane);
    printf("max |GPU - CPU| on %lld shared lanes: %.2f tolerance units\n", (long long)nc,
           worst);
    ot_solution_free(gs);
    ot_solution_free(bs);
    ot_solution_free(cs);
    free(k);
    return worst < 50 ? 0 : 1;
}

/* Robertson kinetics for many lanes on a CUDA device, with the rhs and
 * Jacobian as device kernels (robertson_kernels.cu), against lanes mode on the
 * CPU for a sample of lanes. Usage: robertson_gpu [lanes] (default 100000).
 * Built by `make cuda`; without a GPU it says so and exits 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <odetensor.h>

#include "robertson_kernels.h"

enum { NT = 50, SAMPLE = 64 };

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int setup(ot_ode **ode, int gpu)
{
    static const double atol[3] = {1e-8, 1e-14, 1e-6};
    const int64_t three = 3;
    ot_view av;
    int st = ot_view_make(&av, atol, OT_F64, (ot_device){OT_CPU, 0}, 1, &three, NULL);
    st = st ? st
            : ot_ode_new(ode, 3, 3, gpu ? robertson_rhs_gpu : robertson_rhs_cpu, NULL);
    st = st ? st : ot_ode_set_jac(*ode, gpu ? robertson_jac_gpu : robertson_jac_cpu);
    st = st ? st : ot_ode_set_rtol(*ode, 1e-6);
    st = st ? st : ot_ode_set_atol_vector(*ode, av);
    if (gpu) {
        st = st ? st : ot_ode_set_mode(*ode, OT_LOCKSTEP);
        st = st ? st : ot_ode_set_device(*ode, (ot_device){OT_CUDA, 0});
    }
    return st;
}

int main(int argc, char **argv)
{
    int count = 0;
    if (ot_cuda_device_count(&count) != OT_OK) {
        printf("skipped: no CUDA device (%s)\n", ot_last_error());
        return 0;
    }
    const int64_t nb = argc > 1 ? atoll(argv[1]) : 100000;
    double *k = malloc(sizeof *k * 3 * (size_t)nb), t[NT];
    srand(2024);
    for (int64_t b = 0; b < 3 * nb; b++)
        k[b] = (b % 3 == 0   ? 0.04
                : b % 3 == 1 ? 1e4
                             : 3e7) *
               (0.9 + 0.2 * rand() / (double)RAND_MAX);
    for (int i = 0; i < NT; i++)
        t[i] = pow(10, -5 + 10.0 * i / (NT - 1));
    const double y0[3] = {1, 0, 0};
    const ot_device cpu = {OT_CPU, 0};
    const int64_t ps[2] = {3, nb}, ss[2] = {3, SAMPLE}, three = 3, nt = NT;
    ot_view pv, sv, yv, tv;
    ot_ode *gpu = NULL, *ref = NULL;
    ot_solution *gs = NULL, *rs = NULL;
    int st = ot_view_make(&pv, k, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&sv, k, OT_F64, cpu, 2, ss, NULL); /* first lanes */
    st = st ? st : ot_view_make(&yv, y0, OT_F64, cpu, 1, &three, NULL);
    st = st ? st : ot_view_make(&tv, t, OT_F64, cpu, 1, &nt, NULL);
    st = st ? st : setup(&gpu, 1);
    st = st ? st : setup(&ref, 0);
    const double t0 = seconds();
    st = st ? st : ot_solve_dense(gpu, yv, pv, tv, &gs);
    const double t1 = seconds();
    st = st ? st : ot_solve_dense(ref, yv, sv, tv, &rs);
    int ok = st == OT_OK;
    if (ok) {
        const ot_view a = ot_tensor_view(ot_solution_ys(gs)),
                      b = ot_tensor_view(ot_solution_ys(rs));
        double worst = 0;
        for (int64_t l = 0; l < SAMPLE && l < nb; l++)
            for (int i = 0; i < NT; i++)
                for (int c = 0; c < 3; c++) {
                    const double x = ot_view_col_f64(a, i, l)[c],
                                 y = ot_view_col_f64(b, i, l)[c];
                    worst = fmax(worst, fabs(x - y) / (1e-6 * fabs(y) + (c == 1 ? 1e-14
                                                                         : c    ? 1e-6
                                                                                : 1e-8)));
                }
        ot_lane_stats s;
        ot_solution_lane_stats(gs, 0, &s);
        printf("Robertson on CUDA: %lld lanes, %d outputs to 1e5, rtol 1e-6: %.3f s "
               "(%.0f lanes/s), %lld lockstep steps\n",
               (long long)nb, NT, t1 - t0, (double)nb / (t1 - t0), (long long)s.steps);
        printf("max |GPU - CPU lanes| over %d sample lanes: %.2f tolerance units\n",
               SAMPLE, worst);
        ok = worst < 50;
    } else {
        fprintf(stderr, "%s: %s\n", ot_status_name(st), ot_last_error());
    }
    ot_solution_free(gs);
    ot_solution_free(rs);
    ot_ode_free(gpu);
    ot_ode_free(ref);
    free(k);
    return ok ? 0 : 1;
}

/* Lockstep vs lanes mode on the CPU (issue 4): the Robertson benchmark
 * problem of bench/robertson.h, every lane checked against a reference solved
 * 1e4 times tighter, and memory per lane.
 * Usage: lockstep_vs_lanes MODE [nbatch=10000] [reference_lanes=nbatch]
 *                          [block=0 [threads=1]]
 *   MODE lanes1 | lanes2 | lockstep: prints seconds, steps, peak RSS, and the
 *   largest error of any lane in units of its tolerance (rtol |y| + atol).
 *   lockstep with block > 0: blocks of that many lanes on `threads` threads
 *   (ot_ode_set_lockstep_block).
 * Environment: RB_SPREAD_DECADES=D (D > 0) spreads the slow rate k1 over D
 *   decades (factor 10^(D (u - 1/2)), u uniform in [0, 1) from the same
 *   splitmix64 stream) instead of +-10 %: lanes with their own time scales.
 *   (Spreading the fast rates too makes lanes of both modes overflow at 4
 *   decades.) */
#include "robertson_ot.h"

#include <string.h>
#include <sys/resource.h>

#include <odetensor.h>

static int64_t lockstep_block; /* from the command line */

static int solve(ot_mode mode, int threads, double rtol, double atol, int64_t nb,
                 const double *k, const double *t, ot_solution **out)
{
    static const double y0[3] = {1, 0, 0};
    const ot_device cpu = {OT_CPU, 0};
    const int64_t three = 3, ps[2] = {3, nb}, nt = RB_NT;
    ot_view yv, pv, tv;
    ot_ode *ode = NULL;
    int st = ot_view_make(&yv, y0, OT_F64, cpu, 1, &three, NULL);
    st = st ? st : ot_view_make(&pv, k, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&tv, t, OT_F64, cpu, 1, &nt, NULL);
    st = st ? st : ot_ode_new(&ode, 3, 3, rb_ot_rhs, NULL);
    st = st ? st : ot_ode_set_jac(ode, rb_ot_jac);
    st = st ? st : ot_ode_set_rtol(ode, rtol);
    st = st ? st : ot_ode_set_atol(ode, atol);
    st = st ? st : ot_ode_set_max_steps(ode, 100000);
    st = st ? st : ot_ode_set_mode(ode, mode);
    st = st ? st : ot_ode_set_threads(ode, threads);
    st = st ? st
            : ot_ode_set_lockstep_block(ode, mode == OT_LOCKSTEP ? lockstep_block : 0);
    st = st ? st : ot_solve_dense(ode, yv, pv, tv, out);
    if (st != OT_OK)
        fprintf(stderr, "%s: %s\n", ot_status_name(st), ot_last_error());
    ot_ode_free(ode);
    return st;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "lockstep";
    const int64_t nb = argc > 2 ? atoll(argv[2]) : 10000;
    const int64_t nref = argc > 3 ? atoll(argv[3]) : nb;
    lockstep_block = argc > 4 ? atoll(argv[4]) : 0;
    const int lock = strcmp(mode, "lockstep") == 0,
              threads = lock && argc > 5         ? atoi(argv[5])
                        : strcmp(mode, "lanes2") ? 1
                                                 : 2;
    double *k = rb_make_rates(nb), t[RB_NT];
    const char *spread = getenv("RB_SPREAD_DECADES");
    if (spread && atof(spread) > 0) {
        /* Undo the +-10 % factor (0.9 + 0.2 u) to recover u, then spread. */
        static const double base[RB_N] = {0.04, 1e4, 3e7};
        for (int64_t i = 0; i < nb * RB_N; i += RB_N) {
            const double u = (k[i] / base[0] - 0.9) / 0.2;
            k[i] = base[0] * pow(10.0, atof(spread) * (u - 0.5));
        }
    }
    rb_times(t);
    ot_solution *sol = NULL, *ref = NULL;
    const double a = rb_seconds();
    if (solve(lock ? OT_LOCKSTEP : OT_LANES, threads, RB_RTOL, RB_ATOL, nb, k, t, &sol))
        return 1;
    const double secs = rb_seconds() - a;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const double rss_mb = (double)ru.ru_maxrss / 1024.0;
    /* The reference: lanes mode, 1e4 times tighter, on the first nref lanes. */
    if (solve(OT_LANES, 2, RB_RTOL * 1e-4, RB_ATOL * 1e-4, nref, k, t, &ref))
        return 1;
    const ot_view ys = ot_tensor_view(ot_solution_ys(sol)),
                  rs = ot_tensor_view(ot_solution_ys(ref));
    double worst = 0;
    int64_t over = 0;
    for (int64_t b = 0; b < nref; b++) {
        double lane = 0;
        for (int i = 0; i < RB_NT; i++)
            for (int c = 0; c < 3; c++) {
                const double y = ot_view_col_f64(ys, i, b)[c],
                             r = ot_view_col_f64(rs, i, b)[c];
                lane = fmax(lane, fabs(y - r) / (RB_RTOL * fabs(r) + RB_ATOL));
            }
        worst = fmax(worst, lane);
        over += lane > 1.0;
    }
    ot_lane_stats s;
    ot_solution_lane_stats(sol, 0, &s);
    printf("%s block=%lld threads=%d nbatch=%lld seconds=%.4f steps_lane0=%lld "
           "peak_rss_mb=%.1f outputs_mb=%.1f worst_tol_units=%.2f lanes_over_1=%lld of "
           "%lld\n",
           mode, (long long)lockstep_block, threads, (long long)nb, secs,
           (long long)s.steps, rss_mb, (double)nb * 3 * RB_NT * 8 / 1048576.0, worst,
           (long long)over, (long long)nref);
    ot_solution_free(sol);
    ot_solution_free(ref);
    free(k);
    return 0;
}

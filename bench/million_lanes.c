/* A million lanes (issue 6, size limits): Robertson's stiff kinetics for
 * nbatch rate sets (bench/robertson.h: rates (0.04, 1e4, 3e7) each scaled by
 * a factor in [0.9, 1.1)), with the settings of SUNDIALS' cvRoberts_dns
 * example: y0 = (1, 0, 0), BDF with the analytic Jacobian, rtol 1e-4, atol
 * (1e-8, 1e-14, 1e-6), outputs at 0.4 * 10^j, j = 0..nt-1 (nt 3: t up to 40,
 * the classic span; up to 12: t up to 4e10).
 *
 * Usage: million_lanes MODE [nbatch=1000000] [threads=0: all cores] [nt=3]
 *   MODE lanes | lockstep. Prints the wall time, the peak RSS (getrusage;
 *   run one mode per process), bytes per lane, and the bytes the library's
 *   size check estimated before it allocated anything.
 *
 * Exit status 0 only when every answer checks out:
 *   - every lane succeeded;
 *   - every lane at every output conserves mass, |y1 + y2 + y3 - 1| <= 1e-6
 *     (Robertson's invariant; the solver keeps linear invariants up to its
 *     Newton tolerance, far below rtol);
 *   - 16 lanes spread over the batch (first and last among them), re-solved
 *     alone: in lanes mode bit for bit equal (a lane's result does not depend
 *     on its batch), in lockstep within 20 of its tolerance units
 *     (rtol |y| + atol) of the lone solution, and both within 100 tolerance
 *     units of a reference solved 1e4 times tighter. */
#include "robertson_ot.h"

#include <string.h>
#include <sys/resource.h>

#include <odetensor.h>

/* The size check's estimate for the last solve on this thread: a private
 * test hook (src/core/test_hooks.h) that the static library exports. */
#include "core/test_hooks.h"

enum { NT_MAX = 12, NSAMPLE = 16 };
static int nt_out = 3; /* output times used, 1..NT_MAX */
static const double RTOL = 1e-4, ATOL[3] = {1e-8, 1e-14, 1e-6};

/* Solves nb lanes with rates k [3, nb] at times t; scale tightens both
 * tolerances. */
static int solve(ot_mode mode, int threads, double scale, int64_t nb, const double *k,
                 const double *t, ot_solution **out)
{
    static const double y0[3] = {1, 0, 0};
    const ot_device cpu = {OT_CPU, 0};
    const int64_t three = 3, ps[2] = {3, nb}, nt = nt_out;
    double atol[3];
    for (int i = 0; i < 3; i++)
        atol[i] = ATOL[i] * scale;
    ot_view yv, pv, tv, av;
    ot_ode *ode = NULL;
    int st = ot_view_make(&yv, y0, OT_F64, cpu, 1, &three, NULL);
    st = st ? st : ot_view_make(&pv, k, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&tv, t, OT_F64, cpu, 1, &nt, NULL);
    st = st ? st : ot_view_make(&av, atol, OT_F64, cpu, 1, &three, NULL);
    st = st ? st : ot_ode_new(&ode, 3, 3, rb_ot_rhs, NULL);
    st = st ? st : ot_ode_set_jac(ode, rb_ot_jac);
    st = st ? st : ot_ode_set_rtol(ode, RTOL * scale);
    st = st ? st : ot_ode_set_atol_vector(ode, av);
    st = st ? st : ot_ode_set_max_steps(ode, 100000);
    st = st ? st : ot_ode_set_mode(ode, mode);
    st = st ? st : ot_ode_set_threads(ode, threads);
    st = st ? st : ot_solve_dense(ode, yv, pv, tv, out);
    if (st != OT_OK)
        fprintf(stderr, "%s: %s\n", ot_status_name(st), ot_last_error());
    ot_ode_free(ode);
    return st;
}

/* The largest |a - b| of lane ba of a and lane bb of b, in units of the
 * tolerance at b's value. */
static double tol_units(ot_view a, int64_t ba, ot_view b, int64_t bb)
{
    double worst = 0;
    for (int i = 0; i < nt_out; i++)
        for (int c = 0; c < 3; c++) {
            const double x = ot_view_col_f64(a, i, ba)[c],
                         r = ot_view_col_f64(b, i, bb)[c];
            worst = fmax(worst, fabs(x - r) / (RTOL * fabs(r) + ATOL[c]));
        }
    return worst;
}

/* Re-solves NSAMPLE lanes alone (and 1e4 times tighter) and compares. */
static int check_samples(const ot_solution *sol, int lock, const double *k,
                         const double *t, int64_t nb, double *worst_alone,
                         double *worst_ref)
{
    const ot_view ys = ot_tensor_view(ot_solution_ys(sol));
    int bad = 0;
    *worst_alone = *worst_ref = 0;
    for (int s = 0; s < NSAMPLE; s++) {
        const int64_t b =
            nb > 1 ? (int64_t)((double)s * (double)(nb - 1) / (NSAMPLE - 1)) : 0;
        ot_solution *alone = NULL, *ref = NULL;
        if (solve(OT_LANES, 1, 1.0, 1, k + 3 * b, t, &alone) ||
            solve(OT_LANES, 1, 1e-4, 1, k + 3 * b, t, &ref))
            return 1;
        const ot_view ya = ot_tensor_view(ot_solution_ys(alone)),
                      yr = ot_tensor_view(ot_solution_ys(ref));
        const double ea = tol_units(ys, b, ya, 0), er = tol_units(ys, b, yr, 0);
        const int same = memcmp(ot_view_col_f64(ys, 0, b), ot_view_col_f64(ya, 0, 0),
                                (size_t)nt_out * 3 * sizeof(double)) == 0;
        if ((!lock && !same) || (lock && ea > 20) || er > 100) {
            fprintf(stderr,
                    "lane %lld: %s alone, %.2f tol units from it, %.2f from the "
                    "tight reference\n",
                    (long long)b, same ? "equal to" : "differs from", ea, er);
            bad = 1;
        }
        *worst_alone = fmax(*worst_alone, ea);
        *worst_ref = fmax(*worst_ref, er);
        ot_solution_free(alone);
        ot_solution_free(ref);
    }
    return bad;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "lanes";
    const int64_t nb = argc > 2 ? atoll(argv[2]) : 1000000;
    const int threads = argc > 3 ? atoi(argv[3]) : 0;
    nt_out = argc > 4 ? atoi(argv[4]) : 3;
    const int lock = strcmp(mode, "lockstep") == 0;
    if ((!lock && strcmp(mode, "lanes") != 0) || nb < 1 || nt_out < 1 ||
        nt_out > NT_MAX) {
        fprintf(stderr, "usage: million_lanes lanes|lockstep [nbatch >= 1] [threads] "
                        "[nt 1..12]\n");
        return 2;
    }
    double *k = rb_make_rates(nb), t[NT_MAX];
    if (k == NULL)
        return 1;
    t[0] = 0.4;
    for (int j = 1; j < nt_out; j++)
        t[j] = t[j - 1] * 10.0;
    ot_solution *sol = NULL;
    const double a = rb_seconds();
    if (solve(lock ? OT_LOCKSTEP : OT_LANES, threads, 1.0, nb, k, t, &sol))
        return 1;
    const double secs = rb_seconds() - a;
    const uint64_t estimate = ot__size_last_estimate();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const double rss = (double)ru.ru_maxrss * 1024.0;

    /* Mass conservation in every lane at every output. */
    const ot_view ys = ot_tensor_view(ot_solution_ys(sol));
    double drift = 0;
    for (int64_t b = 0; b < nb; b++)
        for (int i = 0; i < nt_out; i++) {
            const double *y = ot_view_col_f64(ys, i, b);
            drift = fmax(drift, fabs(y[0] + y[1] + y[2] - 1.0));
        }
    double worst_alone, worst_ref;
    const int bad_samples = check_samples(sol, lock, k, t, nb, &worst_alone, &worst_ref);
    ot_lane_stats s;
    ot_solution_lane_stats(sol, 0, &s);
    const int64_t failed = ot_solution_nfailed(sol);
    printf("million_lanes %s nbatch=%lld seconds=%.2f steps_lane0=%lld "
           "peak_rss_mib=%.1f bytes_per_lane=%.0f estimate_mib=%.1f "
           "estimate_per_lane=%.0f ys_mib=%.1f failed=%lld max_mass_drift=%.2e "
           "samples_vs_alone=%.3g samples_vs_tight=%.3g tol_units\n",
           mode, (long long)nb, secs, (long long)s.steps, rss / 1048576.0,
           rss / (double)nb, (double)estimate / 1048576.0, (double)estimate / (double)nb,
           (double)nb * 3 * nt_out * 8 / 1048576.0, (long long)failed, drift, worst_alone,
           worst_ref);
    ot_solution_free(sol);
    free(k);
    if (failed || !(drift <= 1e-6) || bad_samples) {
        fprintf(stderr, "million_lanes %s: FAILED (%lld lanes failed, mass drift %.2e)\n",
                mode, (long long)failed, drift);
        return 1;
    }
    return 0;
}

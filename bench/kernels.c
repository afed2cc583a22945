/* The kernel methods against CVODE's modes (issue 27): the Robertson
 * benchmark of bench/robertson.h (rates +-10 %, or the slow rate k1 spread
 * over D decades as bench/lockstep_vs_lanes.c does), each configuration's
 * time and its worst lane error in tolerance units (|y - ref| / (rtol |ref|
 * + atol)) against a reference solved 1e4 times tighter (lanes mode, BDF)
 * on the first nref lanes. Configurations run interleaved, round by round,
 * in one process; the median of the rounds is reported.
 * Usage: kernels [nbatch=10000] [rounds=3] [spread_decades=0] [nref=1000]
 * Prints one line per configuration, then speedup_vs_lanes=X (lanes mode's
 * time over the best kernel configuration's at equal or better accuracy,
 * one thread) and speedup_vs_lockstep=Y (lockstep's, at the rtol where its
 * accuracy is equal or better, over the same). */
#include "robertson_ot.h"

#include <string.h>

#include <odetensor.h>

/* The same Robertson compiled into the kernel methods (rb_model). */
static inline int rb_km_rhs(double t, const double *y, const double *p, double *f)
{
    (void)t;
    rb_rhs(y, p, f);
    return 0;
}

static inline int rb_km_jac(double t, const double *y, const double *p, double *J)
{
    (void)t;
    rb_jac(y, p, J);
    return 0;
}

#define OT_KM_NAME rb
#define OT_KM_N 3
#define OT_KM_NP 3
#define OT_KM_RHS rb_km_rhs
#define OT_KM_JAC rb_km_jac
#include <odetensor/kernel_model.inc>

typedef struct {
    const char *name;
    int method, mode, threads, group;
    double rtol;
    double secs[16];
    double units;
    long long steps;
    const ot_kernel_model *model; /* compiled, or NULL: the callbacks */
} config;

/* A configuration before its runs. */
#define CFG(name, method, mode, threads, group, rtol, model)                             \
    {                                                                                    \
        name, method, mode, threads, group, rtol, {0}, 0, 0, model                       \
    }

static int solve(const config *c, int64_t nb, const double *k, const double *t,
                 ot_solution **out)
{
    static const double y0[3] = {1, 0, 0};
    ot_view yv, pv, tv;
    ot_ode *ode = NULL;
    int st = ot_view_f64(&yv, y0, 3, 0);
    st = st ? st : ot_view_f64(&pv, k, 3, nb);
    st = st ? st : ot_view_f64(&tv, t, RB_NT, 0);
    st = st ? st : ot_ode_new(&ode, 3, 3, rb_ot_rhs, NULL);
    st = st ? st : ot_ode_set_jac(ode, rb_ot_jac);
    st = st ? st : ot_ode_set_method(ode, (ot_method)c->method);
    st = st ? st : ot_ode_set_autonomous(ode, 1);
    st = st ? st : ot_ode_set_lane_group(ode, c->group);
    st = st ? st : ot_ode_set_rtol(ode, c->rtol);
    st = st ? st : ot_ode_set_atol(ode, RB_ATOL * c->rtol / RB_RTOL);
    st = st ? st : ot_ode_set_max_steps(ode, 100000);
    st = st ? st : ot_ode_set_mode(ode, (ot_mode)c->mode);
    st = st ? st : ot_ode_set_threads(ode, c->threads);
    st = st ? st : ot_ode_set_kernel_model(ode, c->model);
    st = st ? st : ot_solve_dense(ode, yv, pv, tv, out);
    if (st != OT_OK)
        fprintf(stderr, "%s: %s: %s\n", c->name, ot_status_name(st), ot_last_error());
    ot_ode_free(ode);
    return st;
}

/* The worst error over the first nref lanes, in units of the benchmark's
 * tolerance (rtol 1e-6, atol 1e-8), and the total steps. */
static double worst_units(const ot_solution *sol, const ot_solution *ref, int64_t nref,
                          long long *steps, int64_t nb)
{
    const double *y = ot_tensor_layout(ot_solution_ys(sol))->data;
    const double *r = ot_tensor_layout(ot_solution_ys(ref))->data;
    double w = 0;
    for (int64_t i = 0; i < nref * RB_N * RB_NT; i++)
        w = fmax(w, fabs(y[i] - r[i]) / (RB_RTOL * fabs(r[i]) + RB_ATOL));
    *steps = 0;
    for (int64_t b = 0; b < nb; b++) {
        ot_lane_stats s;
        ot_solution_lane_stats(sol, b, &s);
        *steps += s.steps;
    }
    return w;
}

int main(int argc, char **argv)
{
    const int64_t nb = argc > 1 ? atoll(argv[1]) : 10000;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    const double spread = argc > 3 ? atof(argv[3]) : 0;
    int64_t nref = argc > 4 ? atoll(argv[4]) : 1000;
    if (rounds < 1 || rounds > 16)
        rounds = 3;
    if (nref > nb)
        nref = nb;
    double *k = rb_make_rates(nb), t[RB_NT];
    if (spread > 0) {
        static const double base[RB_N] = {0.04, 1e4, 3e7};
        for (int64_t i = 0; i < nb * RB_N; i += RB_N) {
            const double u = (k[i] / base[0] - 0.9) / 0.2;
            k[i] = base[0] * pow(10.0, spread * (u - 0.5));
        }
    }
    rb_times(t);
    config cs[] = {
        CFG("lanes BDF", OT_BDF, OT_LANES, 1, 0, 1e-6, NULL),
        CFG("lockstep BDF", OT_BDF, OT_LOCKSTEP, 1, 0, 1e-6, NULL),
        CFG("lockstep BDF", OT_BDF, OT_LOCKSTEP, 1, 0, 1e-7, NULL),
        CFG("lockstep BDF", OT_BDF, OT_LOCKSTEP, 1, 0, 1e-8, NULL),
        CFG("kernel Rodas4, a lane at a time", OT_RODAS4, OT_LANES, 1, 1, 1e-6, NULL),
        CFG("kernel Rodas4, groups of 8", OT_RODAS4, OT_LANES, 1, 8, 1e-6, NULL),
        CFG("kernel Rodas5P, groups of 8", OT_RODAS5P, OT_LANES, 1, 8, 1e-6, NULL),
        CFG("kernel Ros23, groups of 8", OT_ROS23, OT_LANES, 1, 8, 1e-6, NULL),
        CFG("kernel Rodas4, compiled", OT_RODAS4, OT_LANES, 1, 0, 1e-6, &rb_model),
        CFG("kernel Rodas5P, compiled", OT_RODAS5P, OT_LANES, 1, 0, 1e-6, &rb_model),
        CFG("lanes BDF", OT_BDF, OT_LANES, 2, 0, 1e-6, NULL),
        CFG("lockstep BDF", OT_BDF, OT_LOCKSTEP, 2, 0, 1e-8, NULL),
        CFG("kernel Rodas4, groups of 8", OT_RODAS4, OT_LANES, 2, 8, 1e-6, NULL),
        CFG("kernel Rodas4, compiled", OT_RODAS4, OT_LANES, 2, 0, 1e-6, &rb_model),
    };
    enum { NC = sizeof cs / sizeof cs[0] };
    config refc = CFG("reference", OT_BDF, OT_LANES, 0, 0, 1e-10, NULL);
    ot_solution *ref = NULL;
    if (solve(&refc, nref, k, t, &ref))
        return 1;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < NC; i++) {
            ot_solution *sol = NULL;
            const double a = rb_seconds();
            if (solve(&cs[i], nb, k, t, &sol))
                return 1;
            cs[i].secs[r] = rb_seconds() - a;
            if (r == 0)
                cs[i].units = worst_units(sol, ref, nref, &cs[i].steps, nb);
            ot_solution_free(sol);
        }
    printf("Robertson, %lld lanes, k1 spread %s%g decades, %d rounds (median)\n",
           (long long)nb, spread > 0 ? "" : "+-10 %, ", spread, rounds);
    const double lanes1 = rb_median(cs[0].secs, rounds);
    double best = 0, best_units = 0;
    for (int i = 0; i < NC; i++) {
        const double s = rb_median(cs[i].secs, rounds);
        printf("%-34s rtol %.0e threads %d: %8.3f s  %6.2fx lanes  %8.3g units  %lld "
               "steps\n",
               cs[i].name, cs[i].rtol, cs[i].threads, s, lanes1 / s, cs[i].units,
               cs[i].steps);
        if (cs[i].method != OT_BDF && cs[i].threads == 1 && cs[i].units <= cs[0].units &&
            (best == 0 || s < best)) {
            best = s;
            best_units = cs[i].units;
        }
    }
    /* Lockstep at the loosest rtol that is as accurate as the best kernel. */
    double lock = 0;
    for (int i = 1; i <= 3; i++)
        if (lock == 0 && cs[i].units <= best_units)
            lock = rb_median(cs[i].secs, rounds);
    if (lock == 0)
        lock = rb_median(cs[3].secs, rounds);
    printf("speedup_vs_lanes=%.2f\n", best > 0 ? lanes1 / best : 0.0);
    printf("speedup_vs_lockstep=%.2f\n", best > 0 ? lock / best : 0.0);
    ot_solution_free(ref);
    free(k);
    return 0;
}

/* The cost of each method (issue 16) per lane, on a non-stiff and a stiff
 * problem, in lanes mode and lockstep, interleaved round by round (this
 * machine's speed drifts: compare within a run), with the accuracy each
 * reached against a reference solved far tighter.
 * Usage: methods [nbatch=1000] [rounds=3] [threads=0: every core]
 * (`make bench-methods-wasm` runs the same file natively and compiled to
 * wasm, one thread each.)
 *   Lotka-Volterra, rates +-10 % per lane, 50 outputs over 15 time units,
 *   rtol = atol = 1e-8; reference OT_ERK_VERNER65 at 1e-13.
 *   Robertson, rates +-10 % per lane, 6 outputs to 4e5, rtol 1e-6, atol
 *   (1e-10, 1e-16, 1e-8) with the user's Jacobian; reference OT_BDF at
 *   rtol 1e-11 (atols 1e5 smaller). Explicit methods are left out (stiff).
 * Prints per problem, method and mode: median microseconds per lane, steps
 * and rhs calls per lane (lanes mode: mean; lockstep: the block's), and
 * the largest error relative to max(|ref|, atol / rtol) over lanes,
 * outputs and states. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <odetensor.h>

static int lv_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0), *k = ot_view_col_f64(p, b, 0);
        double *d = ot_view_mut_col_f64(f, b, 0);
        d[0] = k[0] * x[0] - k[1] * x[0] * x[1];
        d[1] = k[2] * x[0] * x[1] - k[3] * x[1];
    }
    return 0;
}

static int lv_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0), *k = ot_view_col_f64(p, b, 0);
        double *a = ot_view_mut_col_f64(J, 0, b);
        a[0] = k[0] - k[1] * x[1], a[1] = k[2] * x[1];
        a[2] = -k[1] * x[0], a[3] = k[2] * x[0] - k[3];
    }
    return 0;
}

static int rober_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0), *k = ot_view_col_f64(p, b, 0);
        double *d = ot_view_mut_col_f64(f, b, 0);
        const double r1 = k[0] * x[0], r2 = k[1] * x[1] * x[2], r3 = k[2] * x[1] * x[1];
        d[0] = -r1 + r2, d[1] = r1 - r2 - r3, d[2] = r3;
    }
    return 0;
}

static int rober_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0), *k = ot_view_col_f64(p, b, 0);
        double *a = ot_view_mut_col_f64(J, 0, b);
        a[0] = -k[0], a[1] = k[0], a[2] = 0;
        a[3] = k[1] * x[2], a[4] = -k[1] * x[2] - 2 * k[2] * x[1], a[5] = 2 * k[2] * x[1];
        a[6] = k[1] * x[1], a[7] = -k[1] * x[1], a[8] = 0;
    }
    return 0;
}

typedef struct {
    const char *name;
    int n, np, nt, stiff;
    ot_rhs_fn rhs;
    ot_jac_fn jac;
    double rtol, atol[3];
    const double *t;
    double y0[3], p[4];
} problem;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A fixed pseudo-random spread of +-10 % per lane and parameter. */
static double spread(int64_t b, int j)
{
    return 0.9 + 0.2 * fmod(0.6180339887 * (double)(b * 7 + j + 1), 1.0);
}

static int g_threads;

static ot_solution *solve(const problem *pr, int method, int mode, double rtol,
                          double ascale, int64_t nb, double *seconds)
{
    ot_ode *ode = NULL;
    if (ot_ode_new(&ode, pr->n, pr->np, pr->rhs, NULL) != OT_OK)
        exit(1);
    ot_ode_set_method(ode, (ot_method)method);
    ot_ode_set_mode(ode, (ot_mode)mode);
    ot_ode_set_threads(ode, g_threads);
    ot_ode_set_jac(ode, pr->jac);
    ot_ode_set_autonomous(ode, 1); /* both are: the kernel methods step lane groups */
    ot_ode_set_rtol(ode, rtol);
    double atol[3];
    for (int i = 0; i < pr->n; i++)
        atol[i] = pr->atol[i] * ascale;
    ot_view av, y0, p, t;
    const int64_t sn = pr->n, snt = pr->nt, sp[2] = {pr->np, nb};
    const ot_device cpu = {OT_CPU, 0};
    ot_view_make(&av, atol, OT_F64, cpu, 1, &sn, NULL);
    ot_ode_set_atol_vector(ode, av);
    double *pp = malloc((size_t)(pr->np * nb) * sizeof *pp);
    for (int64_t b = 0; b < nb; b++)
        for (int j = 0; j < pr->np; j++)
            pp[b * pr->np + j] = pr->p[j] * spread(b, j);
    ot_view_make(&y0, pr->y0, OT_F64, cpu, 1, &sn, NULL);
    ot_view_make(&p, pp, OT_F64, cpu, 2, sp, NULL);
    ot_view_make(&t, pr->t, OT_F64, cpu, 1, &snt, NULL);
    ot_solution *sol = NULL;
    const double t0 = now();
    const int st = ot_solve_dense(ode, y0, p, t, &sol);
    *seconds = now() - t0;
    if (st != OT_OK)
        fprintf(stderr, "%s method %d mode %d: %s\n", pr->name, method, mode,
                ot_last_error());
    free(pp);
    ot_ode_free(ode);
    return sol;
}

static double err_of(const problem *pr, const ot_solution *s, const ot_solution *ref,
                     int64_t nb)
{
    const double *y = ot_tensor_layout(ot_solution_ys(s))->data,
                 *r = ot_tensor_layout(ot_solution_ys(ref))->data;
    double e = 0;
    for (int64_t k = 0; k < pr->n * pr->nt * nb; k++) {
        const double floor = pr->atol[k % pr->n] / pr->rtol;
        e = fmax(e, fabs(y[k] - r[k]) / fmax(fabs(r[k]), floor));
    }
    return isnan(e) ? INFINITY : e;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const int64_t nb = argc > 1 ? atoll(argv[1]) : 1000;
    const int rounds = argc > 2 ? atoi(argv[2]) : 3;
    g_threads = argc > 3 ? atoi(argv[3]) : 0;
    static double lv_t[50], rob_t[6] = {0.4, 4, 40, 400, 4e3, 4e5};
    for (int i = 0; i < 50; i++)
        lv_t[i] = 0.3 * (i + 1);
    const problem probs[2] = {
        {"Lotka-Volterra",
         2,
         4,
         50,
         0,
         lv_rhs,
         lv_jac,
         1e-8,
         {1e-8, 1e-8, 0},
         lv_t,
         {10, 5, 0},
         {1.5, 1.0, 0.3, 3.0}},
        {"Robertson",
         3,
         3,
         6,
         1,
         rober_rhs,
         rober_jac,
         1e-6,
         {1e-10, 1e-16, 1e-8},
         rob_t,
         {1, 0, 0},
         {0.04, 1e4, 3e7, 0}},
    };
    const int methods[] = {OT_BDF,          OT_ADAMS,    OT_ERK_BS32, OT_ERK_DP54,
                           OT_ERK_VERNER65, OT_ESDIRK32, OT_ESDIRK43, OT_ESDIRK54,
                           OT_ROS23,        OT_RODAS4,   OT_RODAS5P,  OT_TSIT5,
                           OT_VERN7};
    const char *names[] = {"bdf",      "adams",    "bs32",     "dp54",  "verner65",
                           "esdirk32", "esdirk43", "esdirk54", "ros23", "rodas4",
                           "rodas5p",  "tsit5",    "vern7"};
    enum { NM = 13 };
    printf("%d lanes, median of %d interleaved rounds, threads %d (0: every core)\n",
           (int)nb, rounds, g_threads);
    printf("| problem | method | lanes us/lane | lockstep us/lane | steps/lane (lanes, "
           "lockstep) "
           "| rhs/lane (lanes, lockstep) | error (lanes, lockstep) "
           "|\n|---|---|---|---|---|---|---|\n");
    for (int q = 0; q < 2; q++) {
        const problem *pr = &probs[q];
        double sec;
        ot_solution *ref =
            pr->stiff ? solve(pr, OT_BDF, OT_LANES, 1e-11, 1e-5, nb, &sec)
                      : solve(pr, OT_ERK_VERNER65, OT_LANES, 1e-13, 1e-5, nb, &sec);
        double times[NM][2][16];
        double err[NM][2];
        double steps[NM][2], rhs[NM][2];
        for (int r = 0; r < rounds && r < 16; r++)
            for (int k = 0; k < NM; k++)
                for (int mode = 1; mode <= 2; mode++) {
                    times[k][mode - 1][r] = NAN;
                    const int explicit_method =
                        (methods[k] >= OT_ADAMS && methods[k] <= OT_ERK_VERNER65) ||
                        methods[k] >= OT_TSIT5;
                    if (pr->stiff && explicit_method)
                        continue;
                    /* The kernel methods run in lanes mode only. */
                    if (methods[k] >= OT_ROS23 && mode == OT_LOCKSTEP)
                        continue;
                    ot_solution *s = solve(pr, methods[k], mode, pr->rtol, 1, nb, &sec);
                    times[k][mode - 1][r] = sec;
                    if (r == 0 && s) {
                        err[k][mode - 1] = err_of(pr, s, ref, nb);
                        double st = 0, rh = 0;
                        for (int64_t b = 0; b < nb; b++) {
                            ot_lane_stats x;
                            ot_solution_lane_stats(s, b, &x);
                            st += (double)x.steps;
                            rh += (double)(x.rhs_evals + x.jac_rhs_evals);
                        }
                        steps[k][mode - 1] = st / (double)nb;
                        rhs[k][mode - 1] = rh / (double)nb;
                    }
                    ot_solution_free(s);
                }
        for (int k = 0; k < NM; k++) {
            if (isnan(times[k][0][0]))
                continue;
            double med[2];
            for (int m = 0; m < 2; m++) {
                qsort(times[k][m], (size_t)rounds, sizeof(double), cmp);
                med[m] = times[k][m][rounds / 2] / (double)nb * 1e6;
            }
            if (isnan(times[k][1][0])) {
                printf("| %s | %s | %.2f | - | %.0f | %.0f | %.1e |\n", pr->name,
                       names[k], med[0], steps[k][0], rhs[k][0], err[k][0]);
                continue;
            }
            printf("| %s | %s | %.2f | %.2f | %.0f, %.0f | %.0f, %.0f | %.1e, %.1e |\n",
                   pr->name, names[k], med[0], med[1], steps[k][0], steps[k][1],
                   rhs[k][0], rhs[k][1], err[k][0], err[k][1]);
        }
        ot_solution_free(ref);
    }
    return 0;
}

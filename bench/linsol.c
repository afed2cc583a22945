/* Dense against band against GMRES (issue 16, item 5) on the 1-D
 * Brusselator, n = 16, 64, 256, 1024 states, lanes mode, BDF, interleaved
 * round by round (this machine's speed drifts: compare within a run).
 * Usage: linsol [rounds=3] [max_n=1024]
 *   u_t = 1 + u^2 v - 4 u + a u_xx, v_t = 3 u - u^2 v + a v_xx on (0, 1),
 *   N = n / 2 points, (u_i, v_i) interleaved (bandwidth 2 each side), u = 1
 *   and v = 3 at the ends, a = 0.02 +-10 % per lane, to t = 10 (4 outputs),
 *   rtol 1e-6, atol 1e-8; lanes: 4096 / n, at least 4.
 * Solvers: dense LU with the user's Jacobian; band LU with the user's band
 * Jacobian, and with SUNDIALS' band difference quotients; GMRES bare, and
 * with a preconditioner (I - gamma D, D the diffusion: one tridiagonal solve
 * per species).
 * Prints per n and solver: median ms per lane, steps and linear iterations
 * per lane, and the largest difference from dense at rtol 1e-10. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <odetensor.h>

static int g_n; /* states; N = g_n / 2 points */

static double coef(double a)
{
    const int N = g_n / 2;
    return a * (N + 1) * (N + 1);
}

static int rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    const int N = g_n / 2;
    const double *Y = ot_view_col_f64(y, 0, 0), c = coef(ot_view_col_f64(p, 0, 0)[0]);
    double *F = ot_view_mut_col_f64(f, 0, 0);
    const double ends[2] = {1, 3};
    for (int i = 0; i < N; i++) {
        const double uu = Y[2 * i], v = Y[2 * i + 1];
        F[2 * i] = 1 + uu * uu * v - 4 * uu;
        F[2 * i + 1] = 3 * uu - uu * uu * v;
        for (int s = 0; s < 2; s++) {
            const double l = i > 0 ? Y[2 * (i - 1) + s] : ends[s],
                         r = i < N - 1 ? Y[2 * (i + 1) + s] : ends[s];
            F[2 * i + s] += c * (l - 2 * Y[2 * i + s] + r);
        }
    }
    return 0;
}

/* Dense [n, n] or band [5, n] (mupper = mlower = 2) storage. */
static int jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    const int N = g_n / 2, band = J.layout.shape[0] != g_n;
    const double *Y = ot_view_col_f64(y, 0, 0), c = coef(ot_view_col_f64(p, 0, 0)[0]);
#define PUT(i, j, v) (ot_view_mut_col_f64(J, (j), 0)[band ? 2 + (i) - (j) : (i)] += (v))
    for (int k = 0; k < g_n; k++) {
        PUT(k, k, -2 * c);
        if (k >= 2)
            PUT(k, k - 2, c);
        if (k + 2 < g_n)
            PUT(k, k + 2, c);
    }
    for (int i = 0; i < N; i++) {
        const double uu = Y[2 * i], v = Y[2 * i + 1];
        PUT(2 * i, 2 * i, 2 * uu * v - 4);
        PUT(2 * i, 2 * i + 1, uu * uu);
        PUT(2 * i + 1, 2 * i, 3 - 2 * uu * v);
        PUT(2 * i + 1, 2 * i + 1, -uu * uu);
    }
#undef PUT
    return 0;
}

static int psetup(double t, ot_view y, ot_view p, double gamma, int jok, int *jcur,
                  ot_view_mut work, void *u)
{
    (void)t, (void)y, (void)jok, (void)u;
    const int N = g_n / 2;
    const double c = coef(ot_view_col_f64(p, 0, 0)[0]), off = -gamma * c,
                 diag = 1 + 2 * gamma * c;
    double *w = ot_view_mut_col_f64(work, 0, 0);
    w[0] = off / diag;
    for (int i = 1; i < N; i++)
        w[i] = off / (diag - off * w[i - 1]);
    *jcur = 1;
    return 0;
}

static int psolve(double t, ot_view y, ot_view p, double gamma, ot_view r, ot_view_mut z,
                  ot_view_mut work, void *u)
{
    (void)t, (void)y, (void)u;
    const int N = g_n / 2;
    const double c = coef(ot_view_col_f64(p, 0, 0)[0]), off = -gamma * c,
                 diag = 1 + 2 * gamma * c;
    double *w = ot_view_mut_col_f64(work, 0, 0), *d = w + N; /* d: scratch */
    const double *rr = ot_view_col_f64(r, 0, 0);
    double *zz = ot_view_mut_col_f64(z, 0, 0);
    for (int s = 0; s < 2; s++) {
        d[0] = rr[s] / diag;
        for (int i = 1; i < N; i++)
            d[i] = (rr[2 * i + s] - off * d[i - 1]) / (diag - off * w[i - 1]);
        zz[2 * (N - 1) + s] = d[N - 1];
        for (int i = N - 2; i >= 0; i--)
            zz[2 * i + s] = d[i] - w[i] * zz[2 * (i + 1) + s];
    }
    return 0;
}

enum { DENSE, BAND_JAC, BAND_DQ, GMRES, GMRES_PREC, NSOLVERS };
static const char *NAMES[NSOLVERS] = {"dense + jac", "band + band jac", "band, DQ",
                                      "GMRES", "GMRES + preconditioner"};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static ot_solution *run(int solver, double rtol, int64_t lanes, double *sec)
{
    ot_ode *ode = NULL;
    if (ot_ode_new(&ode, g_n, 1, rhs, NULL) != OT_OK)
        exit(1);
    ot_ode_set_rtol(ode, rtol);
    ot_ode_set_atol(ode, rtol * 1e-2);
    ot_ode_set_bandwidths(ode, 2, 2);
    if (solver == DENSE || solver == BAND_JAC)
        ot_ode_set_jac(ode, jac);
    ot_ode_set_linear_solver(ode, solver == DENSE ? OT_LINSOL_DENSE
                                  : solver == BAND_JAC || solver == BAND_DQ
                                      ? OT_LINSOL_BAND
                                      : OT_LINSOL_GMRES);
    if (solver == GMRES_PREC)
        ot_ode_set_preconditioner(ode, psetup, psolve, g_n);
    const int N = g_n / 2;
    double *y0 = malloc((size_t)(g_n * lanes) * sizeof *y0),
           *p = malloc((size_t)lanes * sizeof *p);
    for (int64_t b = 0; b < lanes; b++) {
        p[b] = 0.02 * (0.9 + 0.2 * (double)b / (double)lanes);
        for (int i = 0; i < N; i++) {
            y0[b * g_n + 2 * i] =
                1 + sin(2 * 3.14159265358979323846 * (i + 1.0) / (N + 1));
            y0[b * g_n + 2 * i + 1] = 3;
        }
    }
    static const double t[4] = {1, 2.5, 5, 10};
    const ot_device cpu = {OT_CPU, 0};
    const int64_t sy[2] = {g_n, lanes}, sp[2] = {1, lanes}, st = 4;
    ot_view vy, vp, vt;
    ot_view_make(&vy, y0, OT_F64, cpu, 2, sy, NULL);
    ot_view_make(&vp, p, OT_F64, cpu, 2, sp, NULL);
    ot_view_make(&vt, t, OT_F64, cpu, 1, &st, NULL);
    ot_solution *sol = NULL;
    const double t0 = now();
    if (ot_solve_dense(ode, vy, vp, vt, &sol) != OT_OK)
        fprintf(stderr, "n %d %s: %s\n", g_n, NAMES[solver], ot_last_error());
    *sec = now() - t0;
    free(y0);
    free(p);
    ot_ode_free(ode);
    return sol;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 3;
    const int max_n = argc > 2 ? atoi(argv[2]) : 1024;
    printf(
        "| n | lanes | solver | ms per lane | steps per lane | linear iterations per "
        "lane | "
        "largest difference from dense at rtol 1e-10 |\n|---|---|---|---|---|---|---|\n");
    for (g_n = 16; g_n <= max_n; g_n *= 4) {
        const int64_t lanes = 4096 / g_n > 4 ? 4096 / g_n : 4;
        double sec, times[NSOLVERS][16];
        ot_solution *ref = run(DENSE, 1e-10, lanes, &sec), *sols[NSOLVERS] = {0};
        for (int r = 0; r < rounds && r < 16; r++)
            for (int k = 0; k < NSOLVERS; k++) {
                const int s = (k + r) % NSOLVERS; /* rotating order */
                ot_solution *sol = run(s, 1e-6, lanes, &times[s][r]);
                if (sols[s] == NULL)
                    sols[s] = sol;
                else
                    ot_solution_free(sol);
            }
        for (int s = 0; s < NSOLVERS; s++) {
            qsort(times[s], (size_t)rounds, sizeof(double), cmp);
            double steps = 0, li = 0, diff = 0;
            for (int64_t b = 0; b < lanes; b++) {
                ot_lane_stats x;
                ot_solution_lane_stats(sols[s], b, &x);
                steps += (double)x.steps;
                li += (double)x.lin_iters;
            }
            const double *a = ot_tensor_layout(ot_solution_ys(sols[s]))->data,
                         *c = ot_tensor_layout(ot_solution_ys(ref))->data;
            for (int64_t k = 0; k < g_n * 4 * lanes; k++)
                diff = fmax(diff, fabs(a[k] - c[k]));
            printf("| %d | %lld | %s | %.3f | %.0f | %.0f | %.1e |\n", g_n,
                   (long long)lanes, NAMES[s], times[s][rounds / 2] / (double)lanes * 1e3,
                   steps / (double)lanes, li / (double)lanes, diff);
            ot_solution_free(sols[s]);
        }
        ot_solution_free(ref);
        fflush(stdout);
    }
    return 0;
}

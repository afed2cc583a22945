/* Robertson's stiff chemical kinetics for 1000 rate sets at once: the main
 * demo. Prints a progress bar (on a terminal), a summary table, and writes an
 * SVG plot of some lanes to build/demo/robertson.svg (or argv[1]).
 *
 *   y1' = -k1 y1 + k2 y2 y3,  y2' = k1 y1 - k2 y2 y3 - k3 y2^2,  y3' = k3 y2^2 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <odetensor.h>

enum { NB = 1000, NT = 60 };

static int rhs(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)user;
    const double *Y = ot_view_col_f64(y, 0, 0), *k = ot_view_col_f64(p, 0, 0);
    double *d = ot_view_mut_col_f64(dydt, 0, 0);
    d[0] = -k[0] * Y[0] + k[1] * Y[1] * Y[2];
    d[2] = k[2] * Y[1] * Y[1];
    d[1] = -d[0] - d[2];
    return 0;
}

/* J[i, j] = d f_i / d y_j; column j of lane 0 is ot_view_mut_col_f64(J, j, 0). */
static int jac(double t, ot_view y, ot_view p, ot_view_mut J, void *user)
{
    (void)t, (void)user;
    const double *Y = ot_view_col_f64(y, 0, 0), *k = ot_view_col_f64(p, 0, 0);
    double *c0 = ot_view_mut_col_f64(J, 0, 0), *c1 = ot_view_mut_col_f64(J, 1, 0),
           *c2 = ot_view_mut_col_f64(J, 2, 0);
    c0[0] = -k[0];
    c0[1] = k[0];
    c1[0] = k[1] * Y[2];
    c1[1] = -k[1] * Y[2] - 2 * k[2] * Y[1];
    c1[2] = 2 * k[2] * Y[1];
    c2[0] = k[1] * Y[1];
    c2[1] = -k[1] * Y[1];
    return 0;
}

static int progress(int64_t done, int64_t total, void *user)
{
    (void)user;
    if (done % 25 != 0 && done != total)
        return 0;
    const int width = 40, fill = (int)(width * done / total);
    fprintf(stderr, "\r  [%.*s%*s] %4lld/%lld lanes", fill,
            "########################################", width - fill, "", (long long)done,
            (long long)total);
    if (done == total)
        fputc('\n', stderr);
    return 0; /* nonzero would cancel the solve */
}

/* A log-x plot of y1 and 1e4*y2 for a few lanes. */
static int write_svg(const char *path, const double *t, const ot_view ys,
                     const double *k1)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    const double W = 720, H = 420, L = 60, R = 20, T = 30, B = 50;
    const double lx0 = log10(t[0]), lx1 = log10(t[NT - 1]);
    fprintf(f,
            "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' "
            "font-family='sans-serif' font-size='12'>\n<rect width='100%%' "
            "height='100%%' fill='white'/>\n",
            W, H);
    fprintf(f,
            "<text x='%.0f' y='20'>Robertson, %d lanes: y1 (solid) and 1e4*y2 (dashed)"
            " for 6 of them</text>\n",
            L, NB);
    fprintf(f,
            "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='none' "
            "stroke='#444'/>\n",
            L, T, W - L - R, H - T - B);
    for (int e = (int)ceil(lx0); e <= (int)floor(lx1); e += 2) {
        const double x = L + (e - lx0) / (lx1 - lx0) * (W - L - R);
        fprintf(f, "<text x='%.1f' y='%.0f' text-anchor='middle'>1e%d</text>\n", x,
                H - B + 18, e);
    }
    fprintf(f, "<text x='%.0f' y='%.0f' text-anchor='middle'>t</text>\n",
            L + (W - L - R) / 2, H - 12);
    for (int v = 0; v <= 4; v++)
        fprintf(f, "<text x='%.0f' y='%.1f' text-anchor='end'>%.2f</text>\n", L - 6,
                T + (1 - v / 4.0) * (H - T - B) + 4, v / 4.0);
    static const char *colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c",
                                   "#d62728", "#9467bd", "#8c564b"};
    for (int c = 0; c < 6; c++) {
        const int64_t b = c * (NB - 1) / 5;
        for (int comp = 0; comp < 2; comp++) {
            fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='1.5'%s points='",
                    colors[c], comp ? " stroke-dasharray='5,3'" : "");
            for (int i = 0; i < NT; i++) {
                const double v = ot_view_col_f64(ys, i, b)[comp] * (comp ? 1e4 : 1);
                const double x = L + (log10(t[i]) - lx0) / (lx1 - lx0) * (W - L - R);
                const double y = T + (1 - fmin(fmax(v, 0), 1)) * (H - T - B);
                fprintf(f, "%.1f,%.1f ", x, y);
            }
            fprintf(f, "'/>\n");
        }
        fprintf(f, "<text x='%.0f' y='%.0f' fill='%s'>k1 = %.4f</text>\n", W - R - 90,
                T + 16 + 14 * c, colors[c], k1[3 * b]);
    }
    fprintf(f, "</svg>\n");
    return fclose(f);
}

int main(int argc, char **argv)
{
    const char *svg = argc > 1 ? argv[1] : "build/demo/robertson.svg";
    static double k[3 * NB], t[NT];
    srand(12345);
    for (int b = 0; b < NB; b++) { /* each rate varied +-10 % */
        k[3 * b + 0] = 0.04 * (0.9 + 0.2 * rand() / (double)RAND_MAX);
        k[3 * b + 1] = 1e4 * (0.9 + 0.2 * rand() / (double)RAND_MAX);
        k[3 * b + 2] = 3e7 * (0.9 + 0.2 * rand() / (double)RAND_MAX);
    }
    for (int i = 0; i < NT; i++)
        t[i] = pow(10, -5 + 15.0 * i / (NT - 1)); /* 1e-5 .. 1e10 */
    const double y0[3] = {1, 0, 0};
    const double atol[3] = {1e-8, 1e-14, 1e-6};
    const ot_device cpu = {OT_CPU, 0};
    const int64_t pshape[2] = {3, NB}, n3 = 3, nt = NT;
    ot_view params, y0v, tv, atolv;
    ot_ode *ode = NULL;
    ot_solution *sol = NULL;
    int st = ot_view_make(&params, k, OT_F64, cpu, 2, pshape, NULL);
    if (st == OT_OK)
        st = ot_view_make(&y0v, y0, OT_F64, cpu, 1, &n3, NULL); /* broadcast */
    if (st == OT_OK)
        st = ot_view_make(&tv, t, OT_F64, cpu, 1, &nt, NULL);
    if (st == OT_OK)
        st = ot_view_make(&atolv, atol, OT_F64, cpu, 1, &n3, NULL);
    if (st == OT_OK)
        st = ot_ode_new(&ode, 3, 3, rhs, NULL);
    if (st == OT_OK)
        st = ot_ode_set_jac(ode, jac);
    if (st == OT_OK)
        st = ot_ode_set_rtol(ode, 1e-6);
    if (st == OT_OK)
        st = ot_ode_set_atol_vector(ode, atolv);
    if (st == OT_OK && isatty(STDERR_FILENO))
        st = ot_ode_set_progress(ode, progress, NULL);
    if (st != OT_OK) {
        fprintf(stderr, "setup failed: %s\n", ot_last_error());
        ot_ode_free(ode);
        return 1;
    }
    printf("odetensor %s: Robertson kinetics, %d lanes (rates +-10 %%), %d output times "
           "to 1e10, BDF + user Jacobian, rtol 1e-6\n",
           ot_version_string(), NB, NT);
    struct timespec a, z;
    clock_gettime(CLOCK_MONOTONIC, &a);
    st = ot_solve_dense(ode, y0v, params, tv, &sol);
    clock_gettime(CLOCK_MONOTONIC, &z);
    if (st != OT_OK && st != OT_ERR_LANES_FAILED) {
        fprintf(stderr, "solve failed: %s: %s\n", ot_status_name(st), ot_last_error());
        ot_ode_free(ode);
        return 1;
    }
    const double secs =
        (double)(z.tv_sec - a.tv_sec) + 1e-9 * (double)(z.tv_nsec - a.tv_nsec);
    const ot_view ys = ot_tensor_view(ot_solution_ys(sol));

    int64_t smin = INT64_MAX, smax = 0, ssum = 0, rsum = 0;
    double cons = 0; /* conservation: y1 + y2 + y3 stays 1 */
    for (int64_t b = 0; b < NB; b++) {
        ot_lane_stats s;
        ot_solution_lane_stats(sol, b, &s);
        smin = s.steps < smin ? s.steps : smin;
        smax = s.steps > smax ? s.steps : smax;
        ssum += s.steps;
        rsum += s.rhs_evals;
        for (int i = 0; i < NT; i++) {
            const double *y = ot_view_col_f64(ys, i, b);
            cons = fmax(cons, fabs(y[0] + y[1] + y[2] - 1));
        }
    }
    printf("\n  %-34s %lld of %d\n", "lanes failed", (long long)ot_solution_nfailed(sol),
           NB);
    printf("  %-34s %.3f s (%.0f lanes/s)\n", "wall time", secs, NB / secs);
    printf("  %-34s min %lld, mean %.1f, max %lld\n", "CVODE steps per lane",
           (long long)smin, (double)ssum / NB, (long long)smax);
    printf("  %-34s %.1f\n", "rhs evaluations per lane", (double)rsum / NB);
    printf("  %-34s %.1e\n", "max |y1 + y2 + y3 - 1|", cons);
    printf("\n  %-6s %-9s %-12s %-12s %-12s\n", "lane", "k1", "y1(1e10)", "y2(1e10)",
           "y3(1e10)");
    for (int c = 0; c < 5; c++) {
        const int64_t b = c * (NB - 1) / 4;
        const double *y = ot_view_col_f64(ys, NT - 1, b);
        printf("  %-6lld %-9.5f %-12.4e %-12.4e %-12.6f\n", (long long)b, k[3 * b], y[0],
               y[1], y[2]);
    }
    const int plotted = write_svg(svg, t, ys, k) == 0;
    if (plotted)
        printf("\n  plot: %s\n", svg);
    else
        fprintf(stderr, "cannot write %s\n", svg);
    ot_solution_free(sol);
    ot_ode_free(ode);
    return st == OT_OK && plotted ? 0 : 1;
}

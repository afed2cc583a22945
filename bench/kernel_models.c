/* The kernel methods against CVODE's modes on more models (issue 27): the
 * 1-D Brusselator (N grid points, n = 2N states, diffusion alpha = 0.02,
 * A = 1 and B = 3 with B spread +-10 % over the lanes) at n = 4, 16 and 64;
 * Lotka-Volterra (non-stiff: Adams against Tsit5 and Vern7), its four rates
 * spread +-10 %; and a one-compartment oral PK model, ka and ke spread
 * +-20 %: one dose in the gut at t0, and 8 doses 12 h apart (scheduled
 * stops with a handler, the same in every mode).
 * Each configuration's time and its worst lane error in tolerance units
 * (|y - ref| / (rtol |ref| + atol)) against a reference 1e4 times tighter
 * (lanes mode, BDF or Adams) on the first nref lanes; configurations run
 * interleaved, round by round, in one process; medians reported.
 * Usage: kernel_models [nbatch=1000] [rounds=3] [nref=200]
 * Prints one table per model and, per model, speedup_vs_lanes=X: the
 * fastest kernel configuration that is as accurate as lanes mode, over
 * lanes mode (one thread). */
#include "robertson.h"

#include <stdlib.h>
#include <string.h>

#include <odetensor.h>

enum { MAXN = 64, NT = 40 };

typedef struct {
    const char *name;
    int n, np, nonstiff;
    double t_end, rtol, atol;
    ot_rhs_fn rhs;
    void (*params)(double *p, int64_t nb, uint64_t *seed);
    void (*y0)(double *y, int n);
    int nstops; /* doses of 100 into state 0 at 0, 12, 24, ... (stops), or 0 */
} model;

static double uniform(uint64_t *s) { return (double)(rb_splitmix64(s) >> 11) * 0x1p-53; }

/* ---- Brusselator: u_i' = A + u_i^2 v_i - (B + 1) u_i + a (u_{i-1} - 2 u_i
 * + u_{i+1}) / dx^2, v_i' = B u_i - u_i^2 v_i + a (...v...), Dirichlet
 * ends u = 1, v = 3, dx = 1 / (N + 1); p = (B). State (u_1, v_1, u_2, ...). */
static int bruss_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *user)
{
    (void)t, (void)user;
    const int64_t n = y.layout.shape[0], N = n / 2;
    const double dx = 1.0 / (double)(N + 1), c = 0.02 / (dx * dx);
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *Y = ot_view_col_f64(y, b, 0), B = ot_view_col_f64(p, b, 0)[0];
        double *F = ot_view_mut_col_f64(f, b, 0);
        for (int64_t i = 0; i < N; i++) {
            const double u = Y[2 * i], v = Y[2 * i + 1];
            const double ul = i > 0 ? Y[2 * i - 2] : 1.0,
                         ur = i < N - 1 ? Y[2 * i + 2] : 1.0;
            const double vl = i > 0 ? Y[2 * i - 1] : 3.0,
                         vr = i < N - 1 ? Y[2 * i + 3] : 3.0;
            F[2 * i] = 1.0 + u * u * v - (B + 1) * u + c * (ul - 2 * u + ur);
            F[2 * i + 1] = B * u - u * u * v + c * (vl - 2 * v + vr);
        }
    }
    return 0;
}

static void bruss_params(double *p, int64_t nb, uint64_t *s)
{
    for (int64_t b = 0; b < nb; b++)
        p[b] = 3.0 * (0.9 + 0.2 * uniform(s));
}

static void bruss_y0(double *y, int n)
{
    for (int i = 0; i < n / 2; i++) {
        const double x = (i + 1.0) / (n / 2 + 1.0);
        y[2 * i] = 1.0 + sin(2 * 3.14159265358979323846 * x);
        y[2 * i + 1] = 3.0;
    }
}

/* ---- Lotka-Volterra: x' = a x - b x y, y' = d x y - c y, p = (a, b, c, d). */
static int lv_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *Y = ot_view_col_f64(y, b, 0), *P = ot_view_col_f64(p, b, 0);
        double *F = ot_view_mut_col_f64(f, b, 0);
        F[0] = P[0] * Y[0] - P[1] * Y[0] * Y[1];
        F[1] = P[3] * Y[0] * Y[1] - P[2] * Y[1];
    }
    return 0;
}

static void lv_params(double *p, int64_t nb, uint64_t *s)
{
    static const double base[4] = {1.5, 1.0, 3.0, 1.0};
    for (int64_t b = 0; b < nb; b++)
        for (int r = 0; r < 4; r++)
            p[4 * b + r] = base[r] * (0.9 + 0.2 * uniform(s));
}

static void lv_y0(double *y, int n)
{
    (void)n;
    y[0] = 1.0;
    y[1] = 1.0;
}

/* ---- PK: gut' = -ka gut, central' = ka gut - ke central, p = (ka, ke). */
static int pk_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *Y = ot_view_col_f64(y, b, 0), *P = ot_view_col_f64(p, b, 0);
        double *F = ot_view_mut_col_f64(f, b, 0);
        F[0] = -P[0] * Y[0];
        F[1] = P[0] * Y[0] - P[1] * Y[1];
    }
    return 0;
}

static void pk_params(double *p, int64_t nb, uint64_t *s)
{
    for (int64_t b = 0; b < nb; b++) {
        p[2 * b] = 1.2 * (0.8 + 0.4 * uniform(s));
        p[2 * b + 1] = 0.15 * (0.8 + 0.4 * uniform(s));
    }
}

/* A dose of 100 into the gut at each scheduled stop. */
static int pk_dose(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                   void *u)
{
    (void)t, (void)root, (void)lane, (void)p, (void)u;
    ot_view_mut_col_f64(y, 0, 0)[0] += 100.0;
    return 0;
}

static void pk_none(double *y, int n)
{
    (void)n;
    y[0] = y[1] = 0.0;
}

static void pk_y0(double *y, int n)
{
    (void)n;
    y[0] = 100.0;
    y[1] = 0.0;
}

typedef struct {
    const char *name;
    int method, mode, threads, group;
    double rtol_scale; /* of the model's rtol (and atol) */
    double secs[16];
    double units;
} config;

static int solve(const model *m, const config *c, int64_t nb, const double *y0,
                 const double *p, const double *t, ot_solution **out)
{
    ot_view yv, pv, tv;
    ot_ode *ode = NULL;
    int st = ot_view_f64(&yv, y0, m->n, 0);
    st = st ? st : ot_view_f64(&pv, p, m->np, nb);
    st = st ? st : ot_view_f64(&tv, t, NT, 0);
    st = st ? st : ot_ode_new(&ode, m->n, m->np, m->rhs, NULL);
    st = st ? st : ot_ode_set_method(ode, (ot_method)c->method);
    st = st ? st : ot_ode_set_autonomous(ode, 1);
    st = st ? st : ot_ode_set_lane_group(ode, c->group);
    st = st ? st : ot_ode_set_rtol(ode, m->rtol * c->rtol_scale);
    st = st ? st : ot_ode_set_atol(ode, m->atol * c->rtol_scale);
    st = st ? st : ot_ode_set_max_steps(ode, 1000000);
    st = st ? st : ot_ode_set_mode(ode, (ot_mode)c->mode);
    st = st ? st : ot_ode_set_threads(ode, c->threads);
    double stops[16];
    ot_solve_inputs in = ot_solve_inputs_make(yv, pv, tv);
    if (!st && m->nstops > 0) {
        for (int i = 0; i < m->nstops && i < 16; i++)
            stops[i] = 12.0 * i;
        st = ot_view_f64(&in.stops, stops, m->nstops < 16 ? m->nstops : 16, 0);
        st = st ? st : ot_ode_set_event_handler(ode, pk_dose);
    }
    st = st ? st : ot_solve_dense_with(ode, &in, out);
    if (st != OT_OK)
        fprintf(stderr, "%s, %s: %s: %s\n", m->name, c->name, ot_status_name(st),
                ot_last_error());
    ot_ode_free(ode);
    return st;
}

static double worst_units(const model *m, const ot_solution *sol, const ot_solution *ref,
                          int64_t nref)
{
    const double *y = ot_tensor_layout(ot_solution_ys(sol))->data;
    const double *r = ot_tensor_layout(ot_solution_ys(ref))->data;
    double w = 0;
    for (int64_t i = 0; i < nref * m->n * NT; i++)
        w = fmax(w, fabs(y[i] - r[i]) / (m->rtol * fabs(r[i]) + m->atol));
    return w;
}

static int run_model(const model *m, int64_t nb, int rounds, int64_t nref)
{
    uint64_t seed = 0x5eedu;
    double *p = malloc((size_t)(m->np * nb) * sizeof *p), y0[MAXN], t[NT];
    if (p == NULL)
        return 1;
    m->params(p, nb, &seed);
    m->y0(y0, m->n);
    for (int i = 0; i < NT; i++)
        t[i] = m->t_end * (i + 1) / NT;
    const int cv = m->nonstiff ? OT_ADAMS : OT_BDF;
    const int k1 = m->nonstiff ? OT_TSIT5 : OT_RODAS4,
              k2 = m->nonstiff ? OT_VERN7 : OT_RODAS5P;
    const char *n1 = m->nonstiff ? "kernel Tsit5" : "kernel Rodas4";
    const char *n2 = m->nonstiff ? "kernel Vern7" : "kernel Rodas5P";
    config cs[] = {
        {m->nonstiff ? "lanes Adams" : "lanes BDF", cv, OT_LANES, 1, 0, 1, {0}, 0},
        {m->nonstiff ? "lockstep Adams" : "lockstep BDF",
         cv,
         OT_LOCKSTEP,
         1,
         0,
         1,
         {0},
         0},
        {m->nonstiff ? "lockstep Adams" : "lockstep BDF",
         cv,
         OT_LOCKSTEP,
         1,
         0,
         0.01,
         {0},
         0},
        {n1, k1, OT_LANES, 1, 8, 1, {0}, 0},
        {n2, k2, OT_LANES, 1, 8, 1, {0}, 0},
        {n1, k1, OT_LANES, 2, 8, 1, {0}, 0},
    };
    enum { NC = sizeof cs / sizeof cs[0] };
    config refc = {"reference", cv, OT_LANES, 0, 0, 1e-4, {0}, 0};
    ot_solution *ref = NULL;
    if (solve(m, &refc, nref, y0, p, t, &ref)) {
        free(p);
        return 1;
    }
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < NC; i++) {
            ot_solution *sol = NULL;
            const double a = rb_seconds();
            if (solve(m, &cs[i], nb, y0, p, t, &sol)) {
                free(p);
                ot_solution_free(ref);
                return 1;
            }
            cs[i].secs[r] = rb_seconds() - a;
            if (r == 0)
                cs[i].units = worst_units(m, sol, ref, nref);
            ot_solution_free(sol);
        }
    printf("%s (n = %d), %lld lanes, rtol %g, %d rounds (median)\n", m->name, m->n,
           (long long)nb, m->rtol, rounds);
    const double lanes1 = rb_median(cs[0].secs, rounds);
    double best = 0;
    for (int i = 0; i < NC; i++) {
        const double s = rb_median(cs[i].secs, rounds);
        printf("  %-16s rtol %.0e threads %d: %8.3f s  %6.2fx lanes  %8.3g units\n",
               cs[i].name, m->rtol * cs[i].rtol_scale, cs[i].threads, s, lanes1 / s,
               cs[i].units);
        if (cs[i].method != cv && cs[i].threads == 1 && cs[i].units <= cs[0].units &&
            (best == 0 || s < best))
            best = s;
    }
    printf("  speedup_vs_lanes=%.2f%s\n", best > 0 ? lanes1 / best : 0.0,
           best > 0 ? "" : " (no kernel configuration as accurate as lanes mode)");
    ot_solution_free(ref);
    free(p);
    return 0;
}

int main(int argc, char **argv)
{
    const int64_t nb = argc > 1 ? atoll(argv[1]) : 1000;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    int64_t nref = argc > 3 ? atoll(argv[3]) : 200;
    if (rounds < 1 || rounds > 16)
        rounds = 3;
    if (nref > nb)
        nref = nb;
    const model models[] = {
        {"Brusselator", 4, 1, 0, 10.0, 1e-6, 1e-8, bruss_rhs, bruss_params, bruss_y0, 0},
        {"Brusselator", 16, 1, 0, 10.0, 1e-6, 1e-8, bruss_rhs, bruss_params, bruss_y0, 0},
        {"Brusselator", 64, 1, 0, 10.0, 1e-6, 1e-8, bruss_rhs, bruss_params, bruss_y0, 0},
        {"Lotka-Volterra", 2, 4, 1, 20.0, 1e-6, 1e-8, lv_rhs, lv_params, lv_y0, 0},
        {"PK oral, one dose", 2, 2, 0, 48.0, 1e-6, 1e-6, pk_rhs, pk_params, pk_y0, 0},
        {"PK oral, 8 doses 12 h apart", 2, 2, 0, 120.0, 1e-6, 1e-6, pk_rhs, pk_params,
         pk_none, 8},
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (run_model(&models[i], nb, rounds, nref))
            return 1;
    return 0;
}

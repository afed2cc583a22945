/* The dose-solve suites' references and models (check_dose_solve.c,
 * check_dose_grad.c, check_dose_ss.c): linear compartment models solved in
 * closed form (the matrix exponential of a 1x1 or 2x2 system, from its
 * eigenvalues) through boluses and piecewise-constant infusion rates, so
 * that the solver is compared with mathematics, not with itself. */
#ifndef OT_TESTS_DOSE_REF_H
#define OT_TESTS_DOSE_REF_H

#include <math.h>
#include <string.h>

#include "dosing_common.h"

/* y' = A y + u, n = 1 or 2, A column-major. */
typedef struct {
    int n;
    double A[4];
} lin;

/* Phi = e^{A t} and Gam = A^-1 (Phi - I) (the response to a unit rate). */
static inline void lin_prop(const lin *m, double t, double Phi[4], double Gam[4])
{
    if (m->n == 1) {
        Phi[0] = exp(m->A[0] * t);
        Gam[0] = (Phi[0] - 1) / m->A[0];
        return;
    }
    const double a = m->A[0], c = m->A[1], b = m->A[2], d = m->A[3];
    const double tr = a + d, det = a * d - b * c, disc = sqrt(tr * tr / 4 - det);
    const double l1 = tr / 2 + disc, l2 = tr / 2 - disc;
    const double e1 = exp(l1 * t), e2 = exp(l2 * t);
    /* Phi = (e1 (A - l2 I) - e2 (A - l1 I)) / (l1 - l2), and Gam the same
     * with e_i replaced by (e_i - 1) / l_i */
    const double g1 = (e1 - 1) / l1, g2 = (e2 - 1) / l2;
    const double M[4] = {a, c, b, d};
    for (int i = 0; i < 4; i++) {
        const double I = (i == 0 || i == 3);
        Phi[i] = (e1 * (M[i] - l2 * I) - e2 * (M[i] - l1 * I)) / (l1 - l2);
        Gam[i] = (g1 * (M[i] - l2 * I) - g2 * (M[i] - l1 * I)) / (l1 - l2);
    }
}

/* y <- Phi y + Gam u over t. */
static inline void lin_step(const lin *m, double t, double *y, const double *u)
{
    if (t <= 0)
        return;
    double Phi[4], Gam[4], z[2] = {0, 0};
    lin_prop(m, t, Phi, Gam);
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->n; j++)
            z[i] += Phi[j * m->n + i] * y[j] + Gam[j * m->n + i] * u[j];
    memcpy(y, z, (size_t)m->n * sizeof *y);
}

/* A reference event: at t, y[state] += bolus (kind 0), u[state] += rate
 * (kind 1), or everything to 0 (kind 2: a reset). */
typedef struct {
    double t;
    int kind, state;
    double v;
} ref_ev;

/* The state at each output time (sorted), through events (sorted, equal
 * times in order): pre = 1 shows an output at an event's time before it. */
static inline void ref_sim(const lin *m, const double *y0, const ref_ev *ev, int nev,
                           const double *tout, int nout, int pre, double *out)
{
    double y[2] = {y0[0], m->n > 1 ? y0[1] : 0}, u[2] = {0, 0}, t = 0;
    int e = 0;
    for (int i = 0; i < nout; i++) {
        while (e < nev && (ev[e].t < tout[i] || (!pre && ev[e].t == tout[i]))) {
            lin_step(m, ev[e].t - t, y, u);
            t = ev[e].t;
            if (ev[e].kind == 0)
                y[ev[e].state] += ev[e].v;
            else if (ev[e].kind == 1)
                u[ev[e].state] += ev[e].v;
            else
                y[0] = y[1] = u[0] = u[1] = 0;
            e++;
        }
        lin_step(m, tout[i] - t, y, u);
        t = tout[i];
        memcpy(out + i * m->n, y, (size_t)m->n * sizeof *y);
    }
}

/* ---- The models (amounts; params as each says) ---------------------------- */

/* One compartment, CL and V: A' = -(CL / V) A. params [CL, V, F, ALAG]. */
static inline int pk1_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t;
    (void)u;
    for (int64_t b = 0; b < f.layout.shape[1]; b++) {
        const double *yb = ot_view_col_f64(y, b, 0);
        const double *pb = ot_view_col_f64(p, p.layout.shape[1] == 1 ? 0 : b, 0);
        ot_view_mut_col_f64(f, b, 0)[0] = -pb[0] / pb[1] * yb[0];
    }
    return 0;
}

/* Oral: gut g' = -ka g, central c' = ka g - (CL / V) c.
 * params [ka, CL, V, F, ALAG]. */
static inline int oral_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t;
    (void)u;
    for (int64_t b = 0; b < f.layout.shape[1]; b++) {
        const double *yb = ot_view_col_f64(y, b, 0);
        const double *pb = ot_view_col_f64(p, p.layout.shape[1] == 1 ? 0 : b, 0);
        double *fb = ot_view_mut_col_f64(f, b, 0);
        fb[0] = -pb[0] * yb[0];
        fb[1] = pb[0] * yb[0] - pb[1] / pb[2] * yb[1];
    }
    return 0;
}

/* Two compartments: central c' = -(k10 + k12) c + k21 q, q' = k12 c - k21 q.
 * params [k10, k12, k21]. */
static inline int pk2_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t;
    (void)u;
    for (int64_t b = 0; b < f.layout.shape[1]; b++) {
        const double *yb = ot_view_col_f64(y, b, 0);
        const double *pb = ot_view_col_f64(p, p.layout.shape[1] == 1 ? 0 : b, 0);
        double *fb = ot_view_mut_col_f64(f, b, 0);
        fb[0] = -(pb[0] + pb[1]) * yb[0] + pb[2] * yb[1];
        fb[1] = pb[1] * yb[0] - pb[2] * yb[1];
    }
    return 0;
}

static inline lin pk1_lin(const double *p) { return (lin){1, {-p[0] / p[1], 0, 0, 0}}; }
static inline lin oral_lin(const double *p)
{
    return (lin){2, {-p[0], p[0], 0, -p[1] / p[2]}};
}
static inline lin pk2_lin(const double *p)
{
    return (lin){2, {-(p[0] + p[1]), p[1], p[2], -p[2]}};
}

/* A problem of n states and np params, tight tolerances, in mode. */
/* A mode of dose_ode's: lanes mode with the kernel solver's Rodas5P. */
enum { DOSE_KERNEL = 100 };

static inline ot_ode *dose_ode(int64_t n, int64_t np, ot_rhs_fn rhs, int mode)
{
    ot_ode *o = NULL;
    ck_assert_int_eq(ot_ode_new(&o, n, np, rhs, NULL), OT_OK);
    ck_assert_int_eq(ot_ode_set_rtol(o, 1e-10), OT_OK);
    ck_assert_int_eq(ot_ode_set_atol(o, 1e-10), OT_OK);
    ck_assert_int_eq(ot_ode_set_mode(o, mode == DOSE_KERNEL ? OT_LANES : mode), OT_OK);
    if (mode == DOSE_KERNEL)
        ck_assert_int_eq(ot_ode_set_method(o, OT_RODAS5P), OT_OK);
    return o;
}

/* A plan from CSV text for ncmt compartments (identity map). */
static inline ot_dose_plan *plan_csv(const char *csv, int64_t ncmt, ot_records **r)
{
    *r = parse(csv);
    return plan_of(*r, ncmt);
}

/* ys[i, j, b] of a solution. */
static inline double ys_at(const ot_solution *s, int64_t i, int64_t j, int64_t b)
{
    double v = NAN;
    ck_assert_int_eq(ot_view_get(ot_tensor_view(ot_solution_ys(s)), i, j, b, &v), OT_OK);
    return v;
}

static inline double sens_val(const ot_solution *s, int64_t p, int64_t i, int64_t j,
                              int64_t b)
{
    double v = NAN;
    ck_assert_int_eq(ot_view_get(ot_tensor_view(ot_solution_sens(s, p)), i, j, b, &v),
                     OT_OK);
    return v;
}

/* |got - want| within rel (relative to max(|want|, scale)). */
#define near_ref(got, want, rel, scale)                                                  \
    ck_assert_msg(fabs((double)(got) - (double)(want)) <= (rel) * fmax(fabs((double)(want)), (scale)),             \
                  "%s = %.15g, expected %.15g", #got, (double)(got), (double)(want))

#endif

/* The IVP test set the kernel methods are held to (issue 27), each as one
 * lane's rhs over [n, k] views: HIRES, Robertson, OREGO (Hairer and Wanner,
 * Solving ODEs II, and the IVP test set of Mazzia et al.), Van der Pol,
 * the Brusselator, the Arenstorf orbit and Lotka-Volterra, with their
 * initial values, output times and the tolerances' scale (atol). Every
 * model is autonomous. */
#ifndef OT_TESTS_KERNEL_MODELS_H
#define OT_TESTS_KERNEL_MODELS_H

#include <math.h>

#include "solve_common.h"

/* One lane's dy = f(y) for model m. */
typedef void (*km_fn)(const double *y, double *dy);

#define KM_RHS(name)                                                                     \
    static inline int name##_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u) \
    {                                                                                    \
        (void)t, (void)p, (void)u;                                                       \
        for (int64_t b = 0; b < ST_LANES(y); b++)                                        \
            name##_f(ot_view_col_f64(y, b, 0), ot_view_mut_col_f64(f, b, 0));            \
        return 0;                                                                        \
    }

static inline void hires_f(const double *y, double *f)
{
    f[0] = -1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007;
    f[1] = 1.71 * y[0] - 8.75 * y[1];
    f[2] = -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4];
    f[3] = 8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3];
    f[4] = -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6];
    f[5] = -280.0 * y[5] * y[7] + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6];
    f[6] = 280.0 * y[5] * y[7] - 1.81 * y[6];
    f[7] = -f[6];
}
KM_RHS(hires)

static inline void rober_f(const double *y, double *f)
{
    static const double k[3] = {0.04, 1e4, 3e7};
    st_rober_f(y, k, f);
}
KM_RHS(rober)

static inline void orego_f(const double *y, double *f)
{
    f[0] = 77.27 * (y[1] + y[0] * (1.0 - 8.375e-6 * y[0] - y[1]));
    f[1] = (y[2] - (1.0 + y[0]) * y[1]) / 77.27;
    f[2] = 0.161 * (y[0] - y[2]);
}
KM_RHS(orego)

/* Van der Pol, mu = 1000 (stiff) as y1' = y2, y2' = mu (1 - y1^2) y2 - y1. */
static inline void vdp_f(const double *y, double *f)
{
    f[0] = y[1];
    f[1] = 1000.0 * (1.0 - y[0] * y[0]) * y[1] - y[0];
}
KM_RHS(vdp)

/* Van der Pol, mu = 1 (non-stiff). */
static inline void vdp1_f(const double *y, double *f)
{
    f[0] = y[1];
    f[1] = (1.0 - y[0] * y[0]) * y[1] - y[0];
}
KM_RHS(vdp1)

/* The Brusselator ODE, A = 1, B = 3. */
static inline void bruss_f(const double *y, double *f)
{
    const double x2y = y[0] * y[0] * y[1];
    f[0] = 1.0 + x2y - 4.0 * y[0];
    f[1] = 3.0 * y[0] - x2y;
}
KM_RHS(bruss)

/* The Arenstorf orbit (Hairer, Norsett and Wanner, Solving ODEs I, II.0). */
#define KM_ARENSTORF_MU 0.012277471
#define KM_ARENSTORF_T 17.0652165601579625588917206249
static inline void arenstorf_f(const double *y, double *f)
{
    const double mu = KM_ARENSTORF_MU, mp = 1.0 - mu;
    const double d1 = pow((y[0] + mu) * (y[0] + mu) + y[1] * y[1], 1.5);
    const double d2 = pow((y[0] - mp) * (y[0] - mp) + y[1] * y[1], 1.5);
    f[0] = y[2];
    f[1] = y[3];
    f[2] = y[0] + 2.0 * y[3] - mp * (y[0] + mu) / d1 - mu * (y[0] - mp) / d2;
    f[3] = y[1] - 2.0 * y[2] - mp * y[1] / d1 - mu * y[1] / d2;
}
KM_RHS(arenstorf)

static inline void lotka_f(const double *y, double *f)
{
    f[0] = 1.5 * y[0] - y[0] * y[1];
    f[1] = -3.0 * y[1] + y[0] * y[1];
}
KM_RHS(lotka)

typedef struct {
    const char *name;
    int n;
    ot_rhs_fn rhs;
    double y0[8];
    double t_end;
    int log_times; /* outputs log-spaced from t_end 1e-6 (else even) */
    double atol;   /* per unit of rtol: atol = rtol * atol_scale */
    int stiff;
} km_model;

/* The set. Robertson's atol is fixed below (its y2 is 1e-5 at most), the
 * others scale with rtol. */
static const km_model KM_SET[] = {
    {"HIRES", 8, hires_rhs, {1, 0, 0, 0, 0, 0, 0, 0.0057}, 321.8122, 0, 1.0, 1},
    {"Robertson", 3, rober_rhs, {1, 0, 0}, 1e5, 1, 0, 1},
    {"OREGO", 3, orego_rhs, {1, 2, 3}, 360.0, 0, 1.0, 1},
    {"Van der Pol (mu 1000)", 2, vdp_rhs, {2, 0}, 2000.0, 0, 1.0, 1},
    {"Van der Pol (mu 1)", 2, vdp1_rhs, {2, 0}, 20.0, 0, 1.0, 0},
    {"Brusselator", 2, bruss_rhs, {1.5, 3}, 20.0, 0, 1.0, 0},
    {"Arenstorf", 4, arenstorf_rhs, {0.994, 0, 0, -2.00158510637908252240537862224},
     KM_ARENSTORF_T, 0, 1.0, 0},
    {"Lotka-Volterra", 2, lotka_rhs, {1, 1}, 10.0, 0, 1.0, 0},
};
enum { KM_NSET = sizeof KM_SET / sizeof KM_SET[0], KM_NT = 20 };

/* Model m's output times. */
static inline void km_times(const km_model *m, double *t)
{
    for (int i = 0; i < KM_NT; i++)
        t[i] = m->log_times ? m->t_end * pow(10.0, -6.0 + 6.0 * (i + 1) / KM_NT)
                            : m->t_end * (i + 1) / KM_NT;
}

/* Model m's atol at rtol. */
static inline double km_atol(const km_model *m, double rtol)
{
    return m->atol > 0 ? m->atol * rtol : 1e-10;
}

#endif

/* One Rosenbrock attempt of every running lane of a group: the stages of
 * tables.h's transformed form with the lane's own h, the step and its error
 * estimate, and the dense output. */
#include <math.h>
#include <string.h>

#include "kernel/kernel.h"
#include "kernel/step.h"
#include "kit/lu.h"

/* f0, J and f_t at (t, y) for the lanes that stand at a new point. A lane
 * whose rhs fails there fails (no smaller step moves that point). */
static void refresh(ot__kgroup *g)
{
    int any = 0;
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        L->want = L->state == OT__KL_RUN && L->fresh;
        g->tv[c] = L->t;
        any |= L->want;
    }
    if (!any)
        return;
    ot__kernel_rhs(g, g->tv, g->y, g->f0, OT__KC_RHS);
    ot__kernel_drop_failed(g, 1);
    ot__kernel_jac(g, g->f0);
    ot__kernel_drop_failed(g, 1);
    ot__kernel_ft(g, g->f0);
    ot__kernel_drop_failed(g, 1);
    for (int64_t c = 0; c < g->k; c++)
        if (g->lane[c].want)
            g->lane[c].fresh = 0;
}

/* W = I / (h gamma) - J, factored: a singular W asks for a smaller step. */
/* Inlined into each of ot__kernel_ros_attempt's cases with n a constant
 * (the small systems the kernel solver is for), where the compiler
 * unrolls the loops over n. */
#define OT__KINLINE static inline __attribute__((always_inline))

OT__KINLINE void factor(ot__kgroup *g, const int64_t n)
{
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (!L->want)
            continue;
        const double *J = g->jac + c * n * n;
        double *W = g->lu + c * n * n;
        const double dg = 1.0 / (L->h * g->ros->gamma);
        for (int64_t e = 0; e < n * n; e++)
            W[e] = -J[e];
        for (int64_t i = 0; i < n; i++)
            W[i * n + i] += dg;
        L->st.lin_setups++;
        if (ot__lu_factor(W, (sunindextype)n, g->piv + c * n) != 0) {
            L->rc = 1;
            L->want = 0;
        }
    }
}

OT__KINLINE void attempt(ot__kgroup *g, const int64_t n)
{
    const ot__ros_table *m = g->ros;
    const int64_t nk = n * g->cap;
    for (int64_t c = 0; c < g->k; c++)
        g->lane[c].rc = 0;
    refresh(g);
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        L->want = L->state == OT__KL_RUN && L->rc == 0;
    }
    factor(g, n);
    for (int i = 0; i < m->stages; i++) {
        double *ki = g->kst + i * nk;
        const double *fi = g->f0;
        if (i > 0) {
            /* The stage's argument y + sum_j a_ij k_j, one pass per value
             * (the same sums, in the same order, as axpy after axpy). */
            for (int64_t c = 0; c < g->k; c++) {
                const ot__klane *L = &g->lane[c];
                g->tv[c] = L->t + m->alpha[i] * L->h;
                if (!L->want)
                    continue;
                const double *y = g->y + c * n, *k0 = g->kst + c * n;
                double *a = g->arg + c * n;
                for (int64_t e = 0; e < n; e++) {
                    double v = y[e];
                    for (int j = 0; j < i; j++)
                        v += m->a[i][j] * k0[j * nk + e];
                    a[e] = v;
                }
            }
            ot__kernel_rhs(g, g->tv, g->arg, g->fs, OT__KC_RHS);
            ot__kernel_drop_failed(g, 0);
            fi = g->fs;
        }
        for (int64_t c = 0; c < g->k; c++) {
            const ot__klane *L = &g->lane[c];
            if (!L->want)
                continue;
            /* f + sum_j (c_ij / h) k_j + h d_i f_t, with 1 / h once. */
            const double rh = 1.0 / L->h, hd = L->h * m->d[i];
            const double *f = fi + c * n, *ft = g->ft + c * n, *k0 = g->kst + c * n;
            double *kc = ki + c * n;
            for (int64_t e = 0; e < n; e++) {
                double v = f[e];
                for (int j = 0; j < i; j++)
                    v += m->c[i][j] * rh * k0[j * nk + e];
                kc[e] = m->d[i] != 0 ? v + hd * ft[e] : v;
            }
            ot__lu_solve(g->lu + c * n * n, (sunindextype)n, g->piv + c * n, kc);
        }
    }
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (!L->want)
            continue;
        const double *y = g->y + c * n, *k0 = g->kst + c * n;
        double *y1 = g->y1 + c * n, *err = g->err + c * n;
        for (int64_t e = 0; e < n; e++) {
            double v = y[e], r = 0;
            for (int i = 0; i < m->stages; i++) {
                v += m->m[i] * k0[i * nk + e];
                r += m->e[i] * k0[i * nk + e];
            }
            y1[e] = v;
            err[e] = r;
        }
        L->errn = ot__kernel_err_norm(g, c);
    }
}

void ot__kernel_ros_attempt(ot__kgroup *g)
{
    switch (g->n) {
    case 1:
        attempt(g, 1);
        break;
    case 2:
        attempt(g, 2);
        break;
    case 3:
        attempt(g, 3);
        break;
    case 4:
        attempt(g, 4);
        break;
    case 5:
        attempt(g, 5);
        break;
    case 6:
        attempt(g, 6);
        break;
    case 7:
        attempt(g, 7);
        break;
    case 8:
        attempt(g, 8);
        break;
    default:
        attempt(g, g->n);
        break;
    }
}

void ot__kernel_ros_dense(const ot__kgroup *g, int64_t c, double theta, double *out)
{
    const ot__ros_table *m = g->ros;
    const int64_t n = g->n, nk = g->n * g->cap;
    const double *y0 = g->y + c * n, *y1 = g->y1 + c * n;
    for (int64_t e = 0; e < n; e++) {
        double d = 0;
        for (int r = m->ndense - 1; r >= 0; r--) {
            double dr = 0;
            for (int i = 0; i < m->stages; i++)
                dr += m->dense[r][i] * g->kst[i * nk + c * n + e];
            d = d * theta + dr;
        }
        out[e] = (1 - theta) * y0[e] + theta * (y1[e] + (1 - theta) * d);
    }
}

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
        double *W = g->lu + c * n * n;
        ot_kernel_ros_w(n, L->ctl.h, g->ros->gamma, g->jac + c * n * n, W);
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
            for (int64_t c = 0; c < g->k; c++) {
                const ot__klane *L = &g->lane[c];
                g->tv[c] = L->t + m->alpha[i] * L->ctl.h;
                if (L->want)
                    ot_kernel_ros_arg(m, i, n, nk, g->y + c * n, g->kst + c * n,
                                      g->arg + c * n);
            }
            ot__kernel_rhs(g, g->tv, g->arg, g->fs, OT__KC_RHS);
            ot__kernel_drop_failed(g, 0);
            fi = g->fs;
        }
        for (int64_t c = 0; c < g->k; c++) {
            const ot__klane *L = &g->lane[c];
            if (!L->want)
                continue;
            ot_kernel_ros_side(m, i, n, nk, L->ctl.h, fi + c * n, g->ft + c * n,
                               g->kst + c * n);
            ot__lu_solve(g->lu + c * n * n, (sunindextype)n, g->piv + c * n, ki + c * n);
        }
    }
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (!L->want)
            continue;
        ot_kernel_ros_end(m, n, nk, g->y + c * n, g->kst + c * n, g->y1 + c * n,
                          g->err + c * n);
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
    const int64_t n = g->n;
    ot_kernel_ros_dense(g->ros, n, n * g->cap, theta, g->y + c * n, g->y1 + c * n,
                        g->kst + c * n, out);
}

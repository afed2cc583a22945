/* One explicit Runge-Kutta attempt of every running lane of a group, the
 * dense output's extra stages, and the dense output. */
#include <string.h>

#include "kernel/kernel.h"
#include "kernel/step.h"

/* Stage i's argument y + h sum_{j<i} a_ij k_j for the lanes wanted, and
 * its times, into g->arg and g->tv. */
static void stage_arg(ot__kgroup *g, int i)
{
    const ot__erk_table *m = g->erk;
    const int64_t n = g->n, nk = g->n * g->cap;
    for (int64_t c = 0; c < g->k; c++) {
        const ot__klane *L = &g->lane[c];
        g->tv[c] = L->t + m->c[i] * L->h;
        if (!L->want)
            continue;
        double *a = g->arg + c * n;
        /* h sum a_ij k_j, then y added: the sum in the stage's own order,
         * as y1's below, so that an FSAL stage's argument is y1 exactly. */
        memset(a, 0, (size_t)n * sizeof *a);
        for (int j = 0; j < i; j++)
            if (m->a[i][j] != 0)
                ot__kernel_axpy(a, m->a[i][j], g->kst + j * nk + c * n, n);
        const double *y = g->y + c * n;
        for (int64_t e = 0; e < n; e++)
            a[e] = y[e] + L->h * a[e];
    }
}

static void stages(ot__kgroup *g, int from, int to)
{
    const int64_t nk = g->n * g->cap;
    for (int i = from; i < to; i++) {
        stage_arg(g, i);
        ot__kernel_rhs(g, g->tv, g->arg, g->kst + i * nk, OT__KC_RHS);
        ot__kernel_drop_failed(g, 0);
    }
}

void ot__kernel_erk_attempt(ot__kgroup *g)
{
    const ot__erk_table *m = g->erk;
    const int64_t n = g->n, nk = g->n * g->cap;
    /* k_0 = f(t, y) where the lane has none (its first step, or no FSAL). */
    int any = 0;
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        L->rc = 0;
        L->want = L->state == OT__KL_RUN && L->fresh;
        g->tv[c] = L->t;
        any |= L->want;
    }
    if (any) {
        ot__kernel_rhs(g, g->tv, g->y, g->kst, OT__KC_RHS);
        ot__kernel_drop_failed(g, 1);
        for (int64_t c = 0; c < g->k; c++)
            if (g->lane[c].want)
                g->lane[c].fresh = 0;
    }
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        L->want = L->state == OT__KL_RUN && L->rc == 0;
    }
    stages(g, 1, m->stages);
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (!L->want)
            continue;
        double *y1 = g->y1 + c * n, *err = g->err + c * n;
        const double *y = g->y + c * n;
        if (m->fsal) {
            memcpy(y1, g->arg + c * n, (size_t)n * sizeof *y1);
        } else {
            memset(y1, 0, (size_t)n * sizeof *y1);
            for (int i = 0; i < m->stages; i++)
                if (m->b[i] != 0)
                    ot__kernel_axpy(y1, m->b[i], g->kst + i * nk + c * n, n);
            for (int64_t e = 0; e < n; e++)
                y1[e] = y[e] + L->h * y1[e];
        }
        memset(err, 0, (size_t)n * sizeof *err);
        for (int i = 0; i < m->stages; i++)
            if (m->e[i] != 0)
                ot__kernel_axpy(err, m->e[i], g->kst + i * nk + c * n, n);
        for (int64_t e = 0; e < n; e++)
            err[e] *= L->h;
        L->errn = ot__kernel_err_norm(g, c);
    }
}

void ot__kernel_erk_dense_stages(ot__kgroup *g)
{
    stages(g, g->erk->stages, g->erk->dense_stages);
}

void ot__kernel_erk_dense(const ot__kgroup *g, int64_t c, double theta, double *out)
{
    const ot__erk_table *m = g->erk;
    const int64_t n = g->n, nk = g->n * g->cap;
    double bt[OT__ERK_MAX_STAGES];
    for (int i = 0; i < m->dense_stages; i++) {
        double s = 0;
        for (int r = m->dense_degree; r >= 1; r--)
            s = (s + m->bt[i][r - 1]) * theta;
        bt[i] = s;
    }
    const double h = g->lane[c].h;
    const double *y = g->y + c * n;
    for (int64_t e = 0; e < n; e++) {
        double s = 0;
        for (int i = 0; i < m->dense_stages; i++)
            s += bt[i] * g->kst[i * nk + c * n + e];
        out[e] = y[e] + h * s;
    }
}

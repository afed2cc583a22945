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
        g->tv[c] = L->t + m->c[i] * L->ctl.h;
        if (!L->want)
            continue;
        ot_kernel_erk_arg(m, i, n, nk, L->ctl.h, g->y + c * n, g->kst + c * n,
                          g->arg + c * n);
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
        ot_kernel_erk_end(m, n, nk, L->ctl.h, g->y + c * n, g->kst + c * n,
                          g->arg + c * n, g->y1 + c * n, g->err + c * n);
        L->errn = ot__kernel_err_norm(g, c);
    }
}

void ot__kernel_erk_dense_stages(ot__kgroup *g)
{
    stages(g, g->erk->stages, g->erk->dense_stages);
}

void ot__kernel_erk_dense(const ot__kgroup *g, int64_t c, double theta, double *out)
{
    const int64_t n = g->n;
    ot_kernel_erk_dense(g->erk, n, n * g->cap, g->lane[c].ctl.h, theta, g->y + c * n,
                        g->kst + c * n, out);
}

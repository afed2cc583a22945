/* The kernel solver's callbacks over a lane group: rhs and the Jacobian
 * over the group's columns with each lane's time, the rules of
 * kit/callback.h applied per lane, and the difference quotients that stand
 * in for a Jacobian and df/dt. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernel/kernel.h"
#include "kit/callback.h"
#include "tensor/tensor_impl.h"

/* [m] over the lanes' times. */
static ot_view times_view(const double *tv, int64_t m)
{
    const ot_device cpu = {OT_CPU, 0};
    ot_view v;
    v.layout = ot__layout_compact(tv, m, 0, 1, cpu);
    v.layout.ndim = 1;
    return v;
}

/* The user's rhs over columns [c0, c0 + m). */
static int call_rhs(const ot__kgroup *g, int64_t c0, int64_t m, const double *tv,
                    const double *y, double *f)
{
    const ot_ode *ode = g->ode;
    const int64_t n = g->n, np = g->np;
    const ot_view yv = ot__view_compact(y + c0 * n, n, m);
    const ot_view pv = ot__view_compact(g->p + c0 * np, np, m);
    const ot_view_mut fv = ot__view_mut_compact(f + c0 * n, n, m);
    if (ode->rhs_lanes)
        return ode->rhs_lanes(times_view(tv + c0, m), yv, pv, fv, ode->user);
    return ode->rhs(tv[c0], yv, pv, fv, ode->user);
}

/* The user's Jacobian over columns [c0, c0 + m). */
static int call_jac(const ot__kgroup *g, int64_t c0, int64_t m, const double *tv,
                    const double *y)
{
    const ot_ode *ode = g->ode;
    const int64_t n = g->n, np = g->np;
    const ot_view yv = ot__view_compact(y + c0 * n, n, m);
    const ot_view pv = ot__view_compact(g->p + c0 * np, np, m);
    const ot_device cpu = {OT_CPU, 0};
    ot_view_mut jv;
    double *J = g->jac + c0 * n * n;
    /* The callback's contract (ode.h): J arrives zeroed, so that a Jacobian
     * may write its nonzeros alone; the group's storage holds the last
     * step's. */
    memset(J, 0, (size_t)(n * n * m) * sizeof *J);
    jv.layout = ot__layout_compact(J, n, n, m, cpu);
    if (ode->jac_lanes)
        return ode->jac_lanes(times_view(tv + c0, m), yv, pv, jv, ode->user);
    return ode->jac(tv[c0], yv, pv, jv, ode->user);
}

/* Lane c's result of a call that returned rc and wrote rows values a lane
 * at out (its column), by the rules of kit/callback.h. */
static int judge(ot__klane *L, const char *name, const char *target, int rc,
                 const double *out, int64_t rows, double t)
{
    if (rc != 0)
        return ot__cb_returned(&L->cb, name, rc, t, OT__CB_RETRY) < 0 ? -1 : 1;
    const int r =
        ot__cb_finite(&L->cb, name, target, out, rows, 1, L->b, t, OT__CB_RETRY);
    return r == 0 ? 0 : r < 0 ? -1 : 1;
}

typedef int (*group_call)(const ot__kgroup *g, int64_t c0, int64_t m, const double *tv,
                          const double *y, double *f);

static int rhs_call(const ot__kgroup *g, int64_t c0, int64_t m, const double *tv,
                    const double *y, double *f)
{
    return call_rhs(g, c0, m, tv, y, f);
}

static int jac_call(const ot__kgroup *g, int64_t c0, int64_t m, const double *tv,
                    const double *y, double *f)
{
    (void)f;
    return call_jac(g, c0, m, tv, y);
}

/* Lane c called alone, judged on its own column. */
static void alone(ot__kgroup *g, group_call call, const char *name, const char *target,
                  const double *tv, const double *y, double *out, int64_t rows, int64_t c)
{
    ot__klane *L = &g->lane[c];
    const ot__cb_lane_state was = ot__cb_lane_at(L->b);
    const int rc = call(g, c, 1, tv, y, out);
    ot__cb_lane_restore(was);
    L->rc = judge(L, name, target, rc, out + c * rows, rows, tv[c]);
}

/* The wanted lanes in runs of adjacent columns, one call a run where the
 * callbacks take a group (else one a lane), so that a callback never sees a
 * lane not asked for (one that finished or failed, as lockstep's standing
 * lanes). A run's call that fails, or writes NaN or Inf, is made again lane
 * by lane, so that each lane gets its own result. A lane stopped before (a
 * cancel, an earlier -1) gets -1 without a call. */
static void over_lanes(ot__kgroup *g, group_call call, const char *name,
                       const char *target, const double *tv, const double *y, double *out,
                       int64_t rows)
{
    for (int64_t c = 0; c < g->k; c++) {
        ot__klane *L = &g->lane[c];
        if (L->want)
            L->rc = ot__cb_stopped(&L->cb) ? -1 : 0;
    }
    for (int64_t c0 = 0; c0 < g->k;) {
        if (!g->lane[c0].want || g->lane[c0].rc != 0) {
            c0++;
            continue;
        }
        int64_t c1 = c0 + 1;
        while (g->lanes_call && c1 < g->k && g->lane[c1].want && g->lane[c1].rc == 0)
            c1++;
        if (c1 - c0 == 1) {
            alone(g, call, name, target, tv, y, out, rows, c0);
            c0 = c1;
            continue;
        }
        const ot__cb_lane_state was = ot__cb_lane_at(g->lane[c0].b);
        int bad = call(g, c0, c1 - c0, tv, y, out) != 0;
        ot__cb_lane_restore(was);
        /* Every value finite (an AND the compiler may vectorise, where a
         * sum of x * 0 was a chain of dependent additions). */
        const double *col = out + c0 * rows;
        int finite = 1;
        for (int64_t i = 0; !bad && i < (c1 - c0) * rows; i++)
            finite &= fabs(col[i]) <= DBL_MAX;
        if (bad || !finite)
            for (int64_t c = c0; c < c1; c++)
                alone(g, call, name, target, tv, y, out, rows, c);
        c0 = c1;
    }
}

void ot__kernel_rhs(ot__kgroup *g, const double *tv, const double *y, double *f,
                    int counter)
{
    over_lanes(g, rhs_call, "rhs", "dydt", tv, y, f, g->n);
    for (int64_t c = 0; c < g->k; c++)
        if (g->lane[c].want) {
            if (counter == OT__KC_JAC)
                g->lane[c].st.jac_rhs_evals++;
            else
                g->lane[c].st.rhs_evals++;
        }
}

void ot__kernel_jac(ot__kgroup *g, const double *f0)
{
    const int64_t n = g->n, k = g->k;
    for (int64_t c = 0; c < k; c++) {
        g->tv[c] = g->lane[c].t;
        if (g->lane[c].want)
            g->lane[c].st.jac_evals++;
    }
    if (g->ode->jac || g->ode->jac_lanes) {
        over_lanes(g, jac_call, "jac", "J", g->tv, g->y, g->jac, n * n);
        return;
    }
    /* Column j of every lane at once: y + inc e_j, then (f - f0) / inc. A
     * lane whose rhs fails leaves the later columns' calls (jrc). */
    for (int64_t c = 0; c < k; c++)
        g->lane[c].jrc = 0;
    memcpy(g->tmp, g->y, (size_t)(n * k) * sizeof *g->tmp);
    for (int64_t j = 0; j < n; j++) {
        for (int64_t c = 0; c < k; c++)
            g->tmp[c * n + j] = g->y[c * n + j] + ot_kernel_increment(g->y[c * n + j]);
        ot__kernel_rhs(g, g->tv, g->tmp, g->fs, OT__KC_JAC);
        for (int64_t c = 0; c < k; c++) {
            ot__klane *L = &g->lane[c];
            if (!L->want)
                continue;
            if (L->rc != 0) {
                L->jrc = L->rc;
                L->want = 0;
                continue;
            }
            /* The step taken, tmp - y, may differ from the increment. */
            ot_kernel_dq_column(n, g->tmp[c * n + j] - g->y[c * n + j], g->fs + c * n,
                                f0 + c * n, g->jac + c * n * n + j * n);
        }
        for (int64_t c = 0; c < k; c++)
            g->tmp[c * n + j] = g->y[c * n + j];
    }
    for (int64_t c = 0; c < k; c++)
        if (g->lane[c].jrc != 0) {
            g->lane[c].rc = g->lane[c].jrc;
            g->lane[c].want = 1;
        } else if (g->lane[c].want) {
            g->lane[c].rc = 0;
        }
}

void ot__kernel_ft(ot__kgroup *g, const double *f0)
{
    const int64_t n = g->n, k = g->k;
    if (g->ode->autonomous) {
        for (int64_t c = 0; c < k; c++)
            if (g->lane[c].want)
                memset(g->ft + c * n, 0, (size_t)n * sizeof *g->ft);
        return;
    }
    for (int64_t c = 0; c < k; c++)
        g->tv[c] = g->lane[c].t + ot_kernel_increment(g->lane[c].t);
    ot__kernel_rhs(g, g->tv, g->y, g->fs, OT__KC_JAC);
    for (int64_t c = 0; c < k; c++) {
        ot__klane *L = &g->lane[c];
        if (!L->want || L->rc != 0)
            continue;
        ot_kernel_dq_column(n, g->tv[c] - L->t, g->fs + c * n, f0 + c * n, g->ft + c * n);
    }
}

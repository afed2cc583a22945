/* A kernel thread's lane group: its storage, made once per thread. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "kernel/kernel.h"
#include "run/unit.h"
#include "solution/output.h"
#include "tensor/tensor_impl.h"

static size_t doubles(int64_t count)
{
    return (size_t)(count > 0 ? count : 1) * sizeof(double);
}

int ot__kgroup_new(ot__kgroup **out, const ot__plan *pl, const ot__sink *sink)
{
    *out = NULL;
    ot__kgroup *g = OT__CALLOC(1, sizeof *g);
    if (g == NULL)
        return ot__fail(OT_ERR_NOMEM, "solve: cannot allocate a lane group");
    const ot_ode *ode = pl->ode;
    g->pl = pl;
    g->sink = sink;
    g->ode = ode;
    g->n = pl->n;
    g->np = pl->np;
    g->cap = pl->block;
    g->lanes_call = pl->block > 1; /* the plan chose a group the callbacks serve */
    ot__kernel_tables(ode->method, &g->ros, &g->erk);
    const int64_t nk = g->n * g->cap,
                  stages = g->ros ? g->ros->stages : g->erk->dense_stages;
    double **cols[] = {&g->y, &g->y1, &g->err, &g->arg, &g->f0, &g->ft, &g->fs, &g->tmp};
    int ok = 1;
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        ok &= (*cols[i] = OT__MALLOC(doubles(nk))) != NULL;
    ok &= (g->kst = OT__MALLOC(doubles(stages * nk))) != NULL;
    if (g->ros) {
        ok &= (g->jac = OT__MALLOC(doubles(g->n * nk))) != NULL;
        ok &= (g->lu = OT__MALLOC(doubles(g->n * nk))) != NULL;
        ok &= (g->piv = OT__MALLOC((size_t)nk * sizeof *g->piv)) != NULL;
    }
    ok &= (g->p = OT__MALLOC(doubles(g->np * g->cap))) != NULL;
    ok &= (g->tv = OT__MALLOC(doubles(g->cap))) != NULL;
    ok &= (g->dense = OT__MALLOC(doubles(g->n + pl->rows))) != NULL;
    ok &= (g->lane = OT__CALLOC((size_t)g->cap, sizeof *g->lane)) != NULL;
    if (ode->nroots > 0) {
        const int64_t nr = ode->nroots;
        ok &= (g->groot = OT__MALLOC(doubles(nr * g->cap))) != NULL;
        ok &= (g->gact = OT__CALLOC((size_t)(nr * g->cap), 1)) != NULL;
        ok &= (g->ghi = OT__MALLOC(doubles(nr))) != NULL;
        ok &= (g->gmid = OT__MALLOC(doubles(nr))) != NULL;
        ok &= (g->yev = OT__MALLOC(doubles(g->n))) != NULL;
        ok &= (g->rootsfound = OT__CALLOC((size_t)nr, sizeof *g->rootsfound)) != NULL;
    }
    if (!ok) {
        ot__kgroup_free(g);
        return ot__fail(OT_ERR_NOMEM, "solve: cannot allocate a lane group of %lld lanes",
                        (long long)pl->block);
    }
    *out = g;
    return OT_OK;
}

void ot__kgroup_free(ot__kgroup *g)
{
    if (g == NULL)
        return;
    OT__FREE_ALL(g->y, g->y1, g->err, g->arg, g->f0, g->ft, g->fs, g->tmp, g->kst, g->jac,
                 g->lu, g->piv, g->p, g->tv, g->dense, g->groot, g->gact, g->ghi, g->gmid,
                 g->yev, g->rootsfound, g->lane);
    free(g);
}

int ot__kernel_lane_inputs(const ot__plan *pl, ot__cb *cb, int64_t b, double *p,
                           double *y)
{
    const int64_t n = pl->n, np = pl->np;
    if (np > 0)
        memcpy(p, ot_view_lane(pl->p, b), (size_t)np * sizeof(double));
    if (pl->has_y0) {
        memcpy(y, ot_view_lane(pl->y0, b), (size_t)n * sizeof *y);
        return OT_OK;
    }
    const ot__cb_lane_state was = ot__cb_lane_at(b);
    const int rc = pl->ode->init(ot__view_compact(p, np, 1),
                                 ot__view_mut_compact(y, n, 1), pl->ode->user);
    ot__cb_lane_restore(was);
    if (rc != 0) {
        ot__cb_note(cb, -1, "init returned %d", rc);
        return OT_ERR_CALLBACK;
    }
    if (ot__cb_finite(cb, "init", "y0", y, n, 1, b, NAN, OT__CB_FINAL) != 0)
        return OT_ERR_CALLBACK;
    return OT_OK;
}

int ot__kernel_store(const ot__plan *pl, const ot__sink *sink, ot__cb *cb, int64_t b,
                     int64_t i, double t, const double *y, const double *p, double *row)
{
    const double *out = y;
    if (pl->ode->out) {
        const ot__cb_lane_state was = ot__cb_lane_at(b);
        const int st = ot__run_call_out(pl->ode, cb, b, t, y, p, row);
        ot__cb_lane_restore(was);
        if (st != OT_OK)
            return st;
        out = row;
    }
    ot__out_store(sink->sol->ys, i, b, out, pl->rows);
    sink->sol->count[b] = i + 1;
    return OT_OK;
}

int ot__kernel_fail_message(const ot_ode *ode, const char *method, int why, double t,
                            double h, char *msg, size_t len)
{
    if (why == OT_KERNEL_LANE_RETRIES)
        snprintf(msg, len,
                 "%d attempts in a row at t = %.17g failed in a callback or a singular "
                 "matrix",
                 OT_KERNEL_RETRY_LIMIT, t);
    else if (why == OT_KERNEL_LANE_SMALL)
        snprintf(msg, len,
                 "step size %.3g at t = %.17g is below the time resolution (4 gaps "
                 "between doubles there): the method cannot meet the tolerances (a "
                 "singularity, or a problem too stiff for %s)",
                 h, t, method);
    else
        snprintf(
            msg, len,
            "max_steps: %lld steps from the last output without reaching the next, at "
            "t = %.17g (ot_ode_set_max_steps)",
            (long long)ode->max_steps, t);
    return OT_ERR_SOLVER;
}

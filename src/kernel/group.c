/* A kernel thread's lane group: its storage, made once per thread. */
#include <stdlib.h>

#include "core/alloc.h"
#include "kernel/kernel.h"

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
    switch (ode->method) {
    case OT_ROS23:
        g->ros = &ot__kernel_ros23;
        break;
    case OT_RODAS4:
        g->ros = &ot__kernel_rodas4;
        break;
    case OT_RODAS5P:
        g->ros = &ot__kernel_rodas5p;
        break;
    case OT_TSIT5:
        g->erk = &ot__kernel_tsit5;
        break;
    default:
        g->erk = &ot__kernel_vern7;
        break;
    }
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
                 g->lu, g->piv, g->p, g->tv, g->dense, g->lane);
    free(g);
}

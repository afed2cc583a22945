/* The plan's inputs beyond ot_solve_dense's three (plan_with.h): per-lane
 * starts, scheduled stops and the stops' derivatives in p. */
#include <math.h>
#include <stdio.h>

#include "core/error.h"
#include "entry/plan_with.h"
#include "tensor/tensor_impl.h"

/* A per-lane input of doubles: f64 host memory, [len] or [len, 1|nbatch].
 * *stride: 0 (every lane the same) or the doubles between lanes. */
static int extra_view(const ot__plan *pl, ot_view v, const char *name, int allow_2d,
                      const double **data, int64_t *len, int64_t *stride)
{
    const ot_layout *l = &v.layout;
    if (l->dtype != OT_F64 || l->device.type != OT_CPU)
        return ot__fail(OT_ERR_DTYPE, "%s: must be f64 host memory", name);
    const int64_t cols = l->ndim == 2 ? l->shape[1] : 1;
    if (l->ndim < 1 || l->ndim > (allow_2d ? 2 : 1) || l->shape[0] < 1 ||
        (cols != 1 && cols != pl->nbatch)) {
        char given[64] = "no axes";
        if (l->ndim >= 1)
            snprintf(given, sizeof given, l->ndim == 1 ? "[%lld]" : "[%lld, %lld]",
                     (long long)l->shape[0], (long long)(l->ndim > 1 ? l->shape[1] : 0));
        return ot__fail(
            OT_ERR_SHAPE, "%s: shape %s; needs %s with nbatch = %lld", name, given,
            allow_2d ? "[n], [n, 1] or [n, nbatch], n >= 1" : "[nbatch] or [1]",
            (long long)pl->nbatch);
    }
    *data = ot_view_col_f64(v, 0, 0);
    *len = l->shape[0];
    *stride = cols > 1 ? l->strides[1] / (int64_t)sizeof(double) : 0;
    return OT_OK;
}

/* Per-lane starts and scheduled stops (ot_solve_inputs). */
int ot__plan_check_extras(ot__plan *pl, ot_view t0, ot_view stops)
{
    const ot_ode *ode = pl->ode;
    int st;
    if (!ot_view_is_absent(t0)) {
        if (!pl->solver->per_lane_starts)
            return ot__fail(OT_ERR_ARG,
                            "t0: per-lane starts need OT_LANES (the %s solver starts "
                            "the lanes of a block together)",
                            pl->solver->name);
        int64_t len = 0;
        const int64_t want = pl->nbatch;
        /* [nbatch] or [1], read as a column: stride 1 between lanes */
        if (t0.layout.ndim != 1 ||
            (t0.layout.shape[0] != want && t0.layout.shape[0] != 1))
            return ot__fail(OT_ERR_SHAPE,
                            "t0: needs shape [nbatch] or [1] with nbatch = %lld",
                            (long long)want);
        int64_t stride = 0;
        if ((st = extra_view(pl, t0, "t0", 0, &pl->t0s, &len, &stride)) != OT_OK)
            return st;
        pl->t0_stride = len > 1 ? t0.layout.strides[0] / (int64_t)sizeof(double) : 0;
        for (int64_t b = 0; b < pl->nbatch; b++)
            if (!isfinite(ot__plan_t0(pl, b)))
                return ot__fail(OT_ERR_VALUE,
                                "t0: lane %lld's start is %g; must be finite",
                                (long long)b, ot__plan_t0(pl, b));
    }
    if (ot_view_is_absent(stops))
        return OT_OK;
    if (ode->event_fn == NULL)
        return ot__fail(OT_ERR_ARG,
                        "stops: scheduled stops call the event handler, and the "
                        "problem has none (ot_ode_set_event_handler)");
    if (!pl->solver->stops)
        return ot__plan_lacks(pl, "stops", "has no scheduled stops");
    if ((pl->kind == OT__SENS && !pl->solver->sens_events) ||
        (pl->kind == OT__ADJ && !pl->solver->adjoint_events))
        return ot__plan_lacks(pl, "stops", "has no gradients through scheduled stops");
    if ((st = extra_view(pl, stops, "stops", 1, &pl->stops, &pl->nstops,
                         &pl->stop_stride)) != OT_OK)
        return st;
    for (int64_t b = 0; b < pl->nbatch; b++) {
        const double *s = ot__plan_stops(pl, b);
        const int64_t k = ot__plan_nstops(pl, b);
        for (int64_t i = 0; i < k; i++)
            if (!isfinite(s[i]) || (i > 0 && !(s[i] > s[i - 1])) ||
                s[i] < ot__plan_t0(pl, b))
                return ot__fail(
                    OT_ERR_VALUE,
                    "stops: lane %lld's stop %lld is %g; stops must be finite, "
                    "increase strictly, start at or after the lane's t0 (%g) "
                    "and be NaN-padded at the end only",
                    (long long)b, (long long)i, s[i], ot__plan_t0(pl, b));
    }
    return OT_OK;
}

/* The stops' derivatives in p (the gradients' _with entries): [np, nstops] or
 * [np, nstops, nbatch], f64 host, finite. */
int ot__plan_check_stops_dp(ot__plan *pl, ot_view v)
{
    if (ot_view_is_absent(v))
        return OT_OK;
    if (pl->kind != OT__SENS && pl->kind != OT__ADJ)
        return ot__fail(OT_ERR_ARG, "stops_dp: the stops' derivatives in p are for "
                                    "ot_solve_fwd_sens_with and ot_solve_adjoint_with; "
                                    "leave it absent");
    if (pl->stops == NULL)
        return ot__fail(OT_ERR_ARG, "stops_dp: given, but there are no stops");
    const ot_layout *l = &v.layout;
    if (l->dtype != OT_F64 || l->device.type != OT_CPU)
        return ot__fail(OT_ERR_DTYPE, "stops_dp: must be f64 host memory");
    const int64_t lanes = l->ndim == 3 ? l->shape[2] : 1;
    if (l->ndim < 2 || l->shape[0] != pl->np || l->shape[1] != pl->nstops ||
        (lanes != 1 && lanes != pl->nbatch))
        return ot__fail(OT_ERR_SHAPE,
                        "stops_dp: needs shape [np, nstops] or [np, nstops, nbatch] "
                        "= [%lld, %lld, %lld]",
                        (long long)pl->np, (long long)pl->nstops, (long long)pl->nbatch);
    pl->stops_dp = ot_view_col_f64(v, 0, 0);
    pl->stops_dp_kstride = l->strides[1] / (int64_t)sizeof(double);
    pl->stops_dp_bstride = lanes > 1 ? l->strides[2] / (int64_t)sizeof(double) : 0;
    for (int64_t b = 0; b < pl->nbatch; b++)
        for (int64_t k = 0; k < ot__plan_nstops(pl, b); k++)
            for (int64_t j = 0; j < pl->np; j++)
                if (!isfinite(ot__plan_stop_dp(pl, b, k)[j]))
                    return ot__fail(OT_ERR_VALUE,
                                    "stops_dp: [%lld, %lld, %lld] is %g; must be finite "
                                    "for each of the lane's stops",
                                    (long long)j, (long long)k, (long long)b,
                                    ot__plan_stop_dp(pl, b, k)[j]);
    return OT_OK;
}

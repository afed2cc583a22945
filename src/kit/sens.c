/* Forward sensitivities from derivatives (see sens.h). */
#include "kit/sens.h"

#include <string.h>

#include "ode/ode_impl.h"
#include "tensor/tensor_impl.h"

/* v [block, lanes] was poisoned before the call: the unwritten entries of a
 * written lane become zero; a lane left wholly unwritten stops the call. */
static int zero_unwritten(ot__cb *cb, const char *name, double *v, int64_t block,
                          int64_t lanes, int64_t lane0)
{
    for (int64_t b = 0; b < lanes; b++) {
        double *x = v + b * block;
        int64_t left = 0;
        for (int64_t k = 0; k < block; k++)
            if (ot__cb_unwritten(x[k])) {
                x[k] = 0.0;
                left++;
            }
        if (left == block)
            return ot__cb_note(
                cb, -1,
                "%s wrote nothing for lane %lld: sensitivities from df/dp need every "
                "lane's block, zeros included (OT_LOCKSTEP passes all lanes: loop "
                "over b < y.layout.shape[1])",
                name, (long long)(lane0 + b));
    }
    return 0;
}

/* Before a call: poisoned on the first, else zeroed. */
static void prepare(double *v, int64_t count, int first)
{
    if (first)
        ot__cb_poison(v, count);
    else
        memset(v, 0, (size_t)count * sizeof *v);
}

/* Before a derivative call: v [count] prepared (poisoned at the first
 * call, to find what it leaves unwritten; zeroed after). @return whether
 * this is the first call. */
static int begin(double *v, int64_t count, int *first)
{
    const int check = *first;
    *first = 0;
    prepare(v, count, check);
    return check;
}

/* After the call returned rc, the rules: its return code; at the first
 * call every lane's block written; finite values. */
static int after(ot__cb *cb, const char *name, const char *what, int rc, double t,
                 double *v, int64_t per_lane, int64_t lanes, int64_t lane0, int check)
{
    if (rc != 0)
        return ot__cb_returned(cb, name, rc, t, OT__CB_RETRY);
    if (check && (rc = zero_unwritten(cb, name, v, per_lane, lanes, lane0)) != 0)
        return rc;
    return ot__cb_finite(cb, name, what, v, per_lane, lanes, lane0, t, OT__CB_RETRY);
}

int ot__derivs_jac(ot__cb *cb, const ot_ode *ode, double t, ot_view y, ot_view p,
                   double *J, int64_t lanes, int64_t lane0, int *first)
{
    const int64_t n = y.layout.shape[0];
    const int check = begin(J, n * n * lanes, first);
    const int rc = ode->jac(t, y, p, ot__view_mut_blocks(J, n, lanes), ode->user);
    return after(cb, "jac", "J", rc, t, J, n * n, lanes, lane0, check);
}

int ot__derivs_dfdp(ot__cb *cb, const ot_ode *ode, double t, ot_view y, ot_view p,
                    double *D, int64_t lanes, int64_t lane0, int *first)
{
    const int64_t n = y.layout.shape[0], np = p.layout.shape[0];
    if (np == 0) /* sensitivities to initial values alone: no df/dp */
        return 0;
    const int check = begin(D, n * np * lanes, first);
    ot_view_mut dv;
    dv.layout = ot__layout_compact(D, n, np, lanes, y.layout.device);
    const int rc = ode->dfdp(t, y, p, dv, ode->user);
    return after(cb, "dfdp", "dfdp", rc, t, D, n * np, lanes, lane0, check);
}

int ot__sens_derivatives(ot__cb *cb, const ot_ode *ode, double t, ot_view y, ot_view p,
                         double *J, double *D, int64_t lanes, int64_t lane0, int *first)
{
    int again = *first;
    const int rc = ot__derivs_jac(cb, ode, t, y, p, J, lanes, lane0, first);
    return rc != 0 ? rc : ot__derivs_dfdp(cb, ode, t, y, p, D, lanes, lane0, &again);
}

void ot__sens_atol(const ot_ode *ode, const double *p, int64_t np, int64_t j, int64_t n,
                   int64_t lanes, double *out)
{
    for (int64_t b = 0; b < lanes; b++) {
        const double pbar = j < np ? ot__sens_pbar(p[b * np + j]) : 1.0;
        for (int64_t i = 0; i < n; i++)
            out[b * n + i] = (ode->atol_vec ? ode->atol_vec[i] : ode->atol) / pbar;
    }
}

int ot__sens_estimated(const ot_ode *ode)
{
    return !(ode->sens_rtol > 0 || ode->sens_atol > 0);
}

int ot__central(ot__central_fn fn, void *ctx, const ot__central_space *sp, double t,
                const double *y, const double *s, const double *p, int64_t j,
                const double *dir, double *out)
{
    const int64_t k = sp->k, n = sp->n, np = sp->np, rows = sp->rows;
    memcpy(sp->pp, p, (size_t)(np * k) * sizeof *sp->pp);
    for (int sign = 1; sign >= -1; sign -= 2) {
        for (int64_t b = 0; b < k; b++) {
            const double h = sign * ot__sens_step(p + b * np, np, j);
            for (int64_t i = b * n; y && sign > 0 && i < (b + 1) * n; i++) {
                sp->yp[i] = y[i] + h * s[i];
                sp->ym[i] = y[i] - h * s[i];
            }
            if (dir != NULL)
                for (int64_t i = b * np; i < (b + 1) * np; i++)
                    sp->pp[i] = p[i] + h * dir[i];
            else if (j < np)
                sp->pp[b * np + j] = p[b * np + j] + h;
        }
        const int st = fn(ctx, t, y ? (sign > 0 ? sp->yp : sp->ym) : NULL, sp->pp,
                          sign > 0 ? out : sp->minus);
        if (st != OT_OK)
            return st;
    }
    for (int64_t b = 0; b < k; b++) {
        const double h2 = 2 * ot__sens_step(p + b * np, np, j);
        for (int64_t r = b * rows; r < (b + 1) * rows; r++)
            out[r] = (out[r] - sp->minus[r]) / h2;
    }
    return OT_OK;
}

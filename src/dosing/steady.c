/* Steady states (dose_solve.h): the state y* at an SS record's time that
 * one dosing interval maps to itself, P(y*) = y*, by Newton's method on
 * P(y) - y with P_y from forward sensitivities to the initial values. The
 * intervals of every lane's SS records are the lanes of one solve of the
 * wrapped problem (lanes mode, per-lane starts), its stops the interval's
 * dose; lanes that converged leave the next iteration's solve. For
 * gradients, dyss/dp = (I - P_y)^-1 P_p (the fixed point's implicit
 * derivative; P_p through the interval's dose, its lag and duration, and
 * the rate running at the interval's start). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dosing/dose_solve.h"
#include "kit/lu.h"

/* One interval: lane b's steady state s, as a lane of the sub-solve. */
typedef struct {
    int64_t b;
    ot__dose_ss *ss;
    ot__dose_lane L; /* its stops */
    double *y, *p;   /* [n] the iterate, [npf] its parameters (rates set) */
    double *drate0;  /* [np]: d (the rate running at the start) / d p */
    int64_t slot0;   /* the running rate's slot, or -1 */
    int done;
} interval;

/* The interval's stops: its dose at t - period + lag, an infusion's end,
 * and (wrap) the end of the interval before's infusion. */
static int interval_stops(const ot__dose_ctx *c, interval *iv, char *msg, size_t len)
{
    const ot__dose_ss *ss = iv->ss;
    const int64_t np = c->np;
    const double t0 = ss->t - ss->period;
    double t[3];
    ot__dose_op op[3];
    int64_t nst = 0;
    double *ddur = calloc((size_t)np + 1, sizeof *ddur);
    if (ddur == NULL)
        return OT_ERR_NOMEM;
    if (ss->dose.kind == OT__OP_RATE_ON && !ss->constant) {
        double r, d;
        if (ot__dose_infusion(c, &ss->dose, iv->p, &r, &d, iv->drate0, ddur, msg, len)) {
            free(ddur);
            return OT_ERR_VALUE;
        }
        if (ss->wrap) { /* the end, then this interval's start */
            op[nst] = ss->dose;
            op[nst].kind = OT__OP_RATE_OFF;
            t[nst++] = t0 + ss->lag + d - ss->period;
        }
        op[nst] = ss->dose;
        t[nst++] = t0 + ss->lag;
        if (!ss->wrap) {
            op[nst] = ss->dose;
            op[nst].kind = OT__OP_RATE_OFF;
            t[nst++] = t0 + ss->lag + d;
        }
    } else if (!ss->constant) {
        op[nst] = ss->dose;
        t[nst++] = t0 + ss->lag;
    }
    ot__dose_lane *L = &iv->L;
    L->nstops = nst;
    L->t = malloc((size_t)(nst + 1) * sizeof *L->t);
    L->first = malloc((size_t)(nst + 1) * sizeof *L->first);
    L->ops = malloc((size_t)(nst + 1) * sizeof *L->ops);
    L->dtdp = calloc((size_t)(np * nst + 1), sizeof *L->dtdp);
    if (!L->t || !L->first || !L->ops || !L->dtdp) {
        free(ddur);
        return OT_ERR_NOMEM;
    }
    for (int64_t k = 0; k < nst; k++) {
        L->t[k] = t[k];
        L->first[k] = k;
        L->ops[k] = op[k];
        double *row = L->dtdp + k * np;
        if (ss->lagi >= 0)
            row[ss->lagi] += 1;
        for (int64_t j = 0; op[k].kind == OT__OP_RATE_OFF && j < np; j++)
            row[j] += ddur[j];
    }
    L->first[nst] = nst;
    free(ddur);
    return OT_OK;
}

/* Weighted RMS norm of r with the problem's tolerances at y. */
static double wrms(const struct ot_ode *o, const double *r, const double *y, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        const double w = o->rtol * fabs(y[i]) + (o->atol_vec ? o->atol_vec[i] : o->atol);
        s += (r[i] / w) * (r[i] / w);
    }
    return sqrt(s / (double)n);
}

static double sens_at(const ot_solution *sol, int64_t j, int64_t i, int64_t b)
{
    const ot_layout *l = ot_tensor_layout(ot_solution_sens(sol, j));
    return ((const double *)l->data)[i + l->shape[0] * b];
}

/* One Newton iteration over the intervals not done: their solve, then each
 * interval's step, or its fixed point (and dyss/dp). 1: some are left, 0:
 * none, or the status (< 0) of a solve that failed as a whole (a method or
 * solver without forward sensitivities, no memory). */
static int newton_step(ot__dose_ctx *c, const struct ot_ode *intervals, interval *iv,
                       int64_t niv, int last, int with_dp, ot__dose_lane *lanes,
                       double *scratch)
{
    const int64_t n = c->n, np = c->np, npf = np + c->nslot;
    int64_t na = 0, nsmax = 1;
    for (int64_t i = 0; i < niv; i++)
        if (!iv[i].done) {
            na++;
            nsmax = iv[i].L.nstops > nsmax ? iv[i].L.nstops : nsmax;
        }
    if (na == 0)
        return 0;
    ot__dose_lane *sub = malloc((size_t)na * sizeof *sub);
    int64_t *of = malloc((size_t)na * sizeof *of);
    double *y0 = malloc((size_t)(n * na) * sizeof *y0),
           *p = malloc((size_t)(npf * na + 1) * sizeof *p),
           *te = malloc((size_t)na * sizeof *te), *t0 = malloc((size_t)na * sizeof *t0),
           *st = malloc((size_t)(nsmax * na) * sizeof *st),
           *dp = calloc((size_t)(npf * nsmax * na + 1), sizeof *dp);
    int rc = sub && of && y0 && p && te && t0 && st && dp ? OT_OK : OT_ERR_NOMEM;
    for (int64_t i = 0, a = 0; rc == OT_OK && i < niv; i++) {
        if (iv[i].done)
            continue;
        of[a] = i;
        sub[a] = iv[i].L;
        memcpy(y0 + a * n, iv[i].y, (size_t)n * sizeof *y0);
        memcpy(p + a * npf, iv[i].p, (size_t)npf * sizeof *p);
        te[a] = iv[i].ss->t;
        t0[a] = iv[i].ss->t - iv[i].ss->period;
        for (int64_t k = 0; k < nsmax; k++) {
            st[a * nsmax + k] = k < iv[i].L.nstops ? iv[i].L.t[k] : NAN;
            for (int64_t j = 0; k < iv[i].L.nstops && j < np; j++)
                dp[(a * nsmax + k) * npf + j] = iv[i].L.dtdp[k * np + j];
        }
        a++;
    }
    ot_solution *sol = NULL;
    if (rc == OT_OK) {
        ot__dose_ctx sc = *c;
        sc.lanes = sub;
        sc.nlanes = na;
        sc.pbuf = sc.dbuf = NULL; /* lanes mode: one column, compact */
        struct ot_ode w = *intervals;
        w.user = &sc;
        ot_solve_inputs in;
        ot_view_f64(&in.y0, y0, n, na);
        ot_view_f64(&in.params, p, npf, na);
        ot_view_f64(&in.t_eval, te, 1, na);
        const int64_t n1[1] = {na};
        ot_view_make(&in.t0, t0, OT_F64, (ot_device){OT_CPU, 0}, 1, n1, NULL);
        ot_view_f64(&in.stops, st, nsmax, na);
        const int64_t sh[3] = {npf, nsmax, na};
        ot_view_make(&in.stops_dp, dp, OT_F64, (ot_device){OT_CPU, 0}, 3, sh, NULL);
        const int s = ot_solve_fwd_sens_with(&w, &in, &sol);
        rc = s == OT_OK || s == OT_ERR_LANES_FAILED ? OT_OK : s;
        if (rc != OT_OK)
            sol = NULL;
    }
    int left = 0;
    for (int64_t a = 0; rc == OT_OK && a < na; a++) {
        interval *v = &iv[of[a]];
        ot__dose_lane *L = &lanes[v->b];
        if (L->status != OT_OK) {
            v->done = 1;
            continue;
        }
        if (ot_solution_lane_status(sol, a) != OT_OK) {
            L->status = ot_solution_lane_status(sol, a);
            snprintf(L->msg, sizeof L->msg,
                     "steady state at t = %g: its interval's solve "
                     "failed: %s",
                     v->ss->t, ot_solution_lane_message(sol, a));
            v->done = 1;
            continue;
        }
        double *P = scratch, *M = scratch + n, *r = M + n * n;
        sunindextype *piv = (sunindextype *)(void *)(r + n);
        const double *ys = (const double *)ot_tensor_layout(ot_solution_ys(sol))->data;
        memcpy(P, ys + a * n, (size_t)n * sizeof *P);
        for (int64_t i2 = 0; i2 < n; i2++)
            r[i2] = P[i2] - v->y[i2];
        const int conv = wrms(c->user, r, P, n) <= c->ss_tol;
        /* M = I - P_y */
        for (int64_t j = 0; j < n; j++)
            for (int64_t i2 = 0; i2 < n; i2++)
                M[j * n + i2] = (i2 == j) - sens_at(sol, npf + j, i2, a);
        if (ot__lu_factor(M, (sunindextype)n, piv) != 0) {
            L->status = OT_ERR_SOLVER;
            snprintf(L->msg, sizeof L->msg,
                     "steady state at t = %g: the interval's map has no unique fixed "
                     "point (I - dP/dy is singular)",
                     v->ss->t);
            v->done = 1;
            continue;
        }
        if (!conv) {
            if (last) {
                L->status = OT_ERR_SOLVER;
                snprintf(L->msg, sizeof L->msg,
                         "steady state at t = %g: no fixed point within the Newton "
                         "iterations (the norm of P(y) - y is %g tolerance units)",
                         v->ss->t, wrms(c->user, r, P, n));
                v->done = 1;
                continue;
            }
            ot__lu_solve(M, (sunindextype)n, piv, r); /* (I - P_y) d = P - y */
            for (int64_t i2 = 0; i2 < n; i2++)
                v->y[i2] += r[i2];
            left = 1;
            continue;
        }
        memcpy(v->ss->y, P, (size_t)n * sizeof *P);
        for (int64_t j = 0; with_dp && j < np; j++) {
            double *col = v->ss->dydp + j * n;
            for (int64_t i2 = 0; i2 < n; i2++) {
                col[i2] = sens_at(sol, j, i2, a);
                if (v->slot0 >= 0)
                    col[i2] += sens_at(sol, np + v->slot0, i2, a) * v->drate0[j];
            }
            ot__lu_solve(M, (sunindextype)n, piv, col);
        }
        v->done = 1;
    }
    ot_solution_free(sol);
    free(sub);
    free(of);
    free(y0);
    free(p);
    free(te);
    free(t0);
    free(st);
    free(dp);
    return rc != OT_OK ? rc : left;
}

int ot__dose_steady(ot__dose_ctx *c, const struct ot_ode *intervals, ot__dose_lane *lanes,
                    int64_t nlanes, const double *pfull, int with_dp, int64_t max_iter)
{
    const int64_t n = c->n, np = c->np, npf = np + c->nslot;
    int64_t niv = 0;
    for (int64_t b = 0; b < nlanes; b++)
        niv += lanes[b].status == OT_OK ? lanes[b].nss : 0;
    if (niv == 0)
        return OT_OK;
    interval *iv = calloc((size_t)niv, sizeof *iv);
    double *scratch = malloc((size_t)(n * n + 3 * n + 1) * sizeof(double) +
                             (size_t)n * sizeof(sunindextype));
    int rc = iv && scratch ? OT_OK : OT_ERR_NOMEM;
    int64_t k = 0;
    for (int64_t b = 0; rc == OT_OK && b < nlanes; b++) {
        for (int64_t m = 0; lanes[b].status == OT_OK && m < lanes[b].nss; m++, k++) {
            interval *v = &iv[k];
            v->b = b;
            v->ss = &lanes[b].ss[m];
            v->slot0 = -1;
            v->y = calloc((size_t)n, sizeof *v->y);
            v->p = malloc((size_t)npf * sizeof *v->p);
            v->drate0 = calloc((size_t)np + 1, sizeof *v->drate0);
            v->ss->y = calloc((size_t)n, sizeof *v->ss->y);
            v->ss->dydp =
                with_dp ? calloc((size_t)(n * np) + 1, sizeof *v->ss->dydp) : NULL;
            if (!v->y || !v->p || !v->drate0 || !v->ss->y || (with_dp && !v->ss->dydp)) {
                rc = OT_ERR_NOMEM;
                break;
            }
            memcpy(v->p, pfull + b * npf, (size_t)np * sizeof *v->p);
            for (int64_t q = 0; q < c->nslot; q++)
                v->p[np + q] = 0;
            char msg[200];
            const int s = interval_stops(c, v, msg, sizeof msg);
            if (s == OT_ERR_NOMEM) {
                rc = s;
                break;
            }
            if (s != OT_OK) {
                lanes[b].status = OT_ERR_VALUE;
                snprintf(lanes[b].msg, sizeof lanes[b].msg, "%s", msg);
                v->done = 1;
                continue;
            }
            if (v->ss->wrap) { /* the rate running at the interval's start */
                double r = v->ss->dose.value;
                if (!v->ss->constant)
                    ot__dose_infusion(c, &v->ss->dose, v->p, &r, NULL, v->drate0, NULL,
                                      msg, sizeof msg);
                else
                    memset(v->drate0, 0, (size_t)np * sizeof *v->drate0);
                v->slot0 = c->slot_of[v->ss->dose.cmt];
                v->p[np + v->slot0] = r;
            }
        }
    }
    for (int64_t it = 0; rc == OT_OK && it < max_iter; it++) {
        const int left = newton_step(c, intervals, iv, niv, it + 1 == max_iter, with_dp,
                                     lanes, scratch);
        if (left < 0) /* a status: -rc - 1 here once made it a "left" */
            rc = left;
        if (left <= 0)
            break;
    }
    for (int64_t i = 0; iv && i < niv; i++) {
        ot__dose_lane_free(&iv[i].L);
        free(iv[i].y);
        free(iv[i].p);
        free(iv[i].drate0);
    }
    free(iv);
    free(scratch);
    return rc;
}

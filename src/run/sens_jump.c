/* Forward sensitivities through events (sens_jump.h), once for every mode. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "kit/events.h"
#include "kit/sens.h"
#include "run/adjoint_events.h"
#include "run/sens_jump.h"
#include "tensor/tensor_impl.h"

/* The jump's scratch (one lane at a time): m = n + np. */
struct ot__sens_jump {
    int64_t m, nd;   /* nd = nv + 1 directions: the sensitivities (the adjoint:
                        z's unit vectors, nv = m), then time's */
    int unit_dirs;   /* the adjoint's: the directions are z's unit vectors */
    double *z0;      /* [m]: the lane's z- (saved before its handler) */
    double *zw;      /* [m]: a working z */
    double *v;       /* [m, nd]: the directions Z_j, then (f-, 0) */
    double *tdir;    /* [nd]: each direction's part in t (0, then 1) */
    double *out;     /* [m, nd]: DH along each direction */
    double *zp;      /* [m]: H at a perturbed z */
    double *dz;      /* [m, m] with the event Jacobian, else 1 */
    double *dzdt;    /* [m] */
    double *col;     /* [m] */
    double *fm, *fp; /* [n]: f- and f+ */
    double *gp, *gm; /* [nroots + 1] */
    double *dtau;    /* [ns] */
};

int ot__sens_jumps(const ot__plan *pl)
{
    return (pl->kind == OT__SENS || pl->kind == OT__ADJ) &&
           (pl->stops || ot__ode_handles_events(pl->ode));
}

int ot__sens_jump_new(ot__unit *u)
{
    const ot__plan *pl = u->plan;
    const int64_t n = u->n, np = u->np, ns = pl->ns, m = n + np, k = u->k;
    const int adj = pl->kind == OT__ADJ;
    struct ot__sens_jump *J = OT__CALLOC(1, sizeof *J);
    u->jump = J;
    u->psens = adj ? NULL : OT__CALLOC((size_t)(np * ns * k) + 1, sizeof *u->psens);
    if (J == NULL || (!adj && u->psens == NULL))
        return OT_ERR_NOMEM;
    for (int64_t j = 0; !adj && j < ns && j < np;
         j++) /* P_j = e_j; 0 for an initial value's */
        for (int64_t b = 0; b < k; b++)
            u->psens[j * np * k + b * np + j] = 1.0;
    J->m = m;
    J->unit_dirs = adj;
    J->nd = (adj ? m : ns) + 1;
    const size_t sm = (size_t)m, snd = (size_t)J->nd;
    double **const slots[] = {&J->z0, &J->zw, &J->v,    &J->tdir, &J->out,
                              &J->zp, &J->dz, &J->dzdt, &J->col,  &J->fm,
                              &J->fp, &J->gp, &J->gm,   &J->dtau};
    const size_t sizes[] = {sm,
                            sm,
                            sm * snd,
                            snd,
                            sm * snd,
                            sm,
                            pl->ode->event_jac ? sm * sm : 1,
                            sm,
                            sm,
                            (size_t)n,
                            (size_t)n,
                            (size_t)pl->ode->nroots + 1,
                            (size_t)pl->ode->nroots + 1,
                            snd};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        if ((*slots[i] = OT__MALLOC(sizes[i] * sizeof(double))) == NULL)
            return OT_ERR_NOMEM;
    return OT_OK;
}

void ot__sens_jump_free(ot__unit *u)
{
    struct ot__sens_jump *J = u->jump;
    if (J != NULL)
        OT__FREE_ALL(J->z0, J->zw, J->v, J->tdir, J->out, J->zp, J->dz, J->dzdt, J->col,
                     J->fm, J->fp, J->gp, J->gm, J->dtau, J);
    free(u->psens);
    u->jump = NULL;
    u->psens = NULL;
}

void ot__sens_jump_save(ot__unit *u, int64_t b, const double *y, const double *q)
{
    (void)b;
    memcpy(u->jump->z0, y, (size_t)u->n * sizeof *y);
    if (u->np > 0)
        memcpy(u->jump->z0 + u->n, q, (size_t)u->np * sizeof *q);
}

/* ---- The handlers as one map ----------------------------------------------- */

/* What fired for the lane: its stop, or its roots. */
typedef struct {
    const ot__unit *u;
    int64_t lane, stop; /* stop >= 0, or the roots rf */
    const int *rf;
} event;

/* Whether root r of ev is handled (its handler runs). */
static int handled(const event *ev, int64_t r)
{
    return ev->rf[r] != 0 && ot__event_action(ev->u->plan->ode, r) == OT_EVENT_HANDLE;
}

/* The handler of one root (or the stop) on z in place. */
static int call_one(const event *ev, double t, int root, double *z)
{
    const ot_ode *ode = ev->u->plan->ode;
    return ot__event_call(ode, t, root, ev->lane, z, z + ode->n);
}

/* H: every handler of the event on z in place, in root order. */
static int call_all(const event *ev, double t, double *z)
{
    if (ev->stop >= 0)
        return call_one(ev, t, (int)(-1 - ev->stop), z);
    for (int64_t r = 0; r < ev->u->plan->ode->nroots; r++)
        if (handled(ev, r)) {
            const int rc = call_one(ev, t, (int)r, z);
            if (rc != 0)
                return rc;
        }
    return 0;
}

/* One handler's derivatives at z (the user's event Jacobian): dz as the
 * identity, dzdt zero, then the callback. */
static int call_jac(const event *ev, struct ot__sens_jump *J, double t, int root,
                    const double *z)
{
    const ot_ode *ode = ev->u->plan->ode;
    const int64_t m = J->m;
    memset(J->dz, 0, (size_t)(m * m) * sizeof *J->dz);
    for (int64_t i = 0; i < m; i++)
        J->dz[i * m + i] = 1.0;
    memset(J->dzdt, 0, (size_t)m * sizeof *J->dzdt);
    const ot__cb_lane_state was = ot__cb_lane_at(ev->lane);
    const int rc = ode->event_jac(t, root, ev->lane, ot__view_compact(z, ode->n, 1),
                                  ot__view_compact(z + ode->n, ode->np, 1),
                                  ot__view_mut_compact(J->dz, m, m),
                                  ot__view_mut_compact(J->dzdt, m, 1), ode->user);
    ot__cb_lane_restore(was);
    return rc;
}

/* DH along the first nd columns of J->v (with tdir) into J->out, through
 * the chain of handlers with the user's Jacobians: each column becomes
 * dz col + dzdt tdir, handler by handler, z moving on with them. */
static int along_jac(const event *ev, struct ot__sens_jump *J, double t, int64_t nd)
{
    const int64_t m = J->m, nr = ev->u->plan->ode->nroots;
    memcpy(J->out, J->v, (size_t)(m * nd) * sizeof *J->out);
    memcpy(J->zw, J->z0, (size_t)m * sizeof *J->zw);
    for (int64_t r = ev->stop >= 0 ? -1 : 0; r < (ev->stop >= 0 ? 0 : nr); r++) {
        if (r >= 0 && !handled(ev, r))
            continue;
        const int root = r < 0 ? (int)(-1 - ev->stop) : (int)r;
        if (call_jac(ev, J, t, root, J->zw) != 0)
            return -1;
        for (int64_t c = 0; c < nd; c++) {
            double *o = J->out + c * m;
            for (int64_t i = 0; i < m; i++) {
                double s = J->dzdt[i] * J->tdir[c];
                for (int64_t l = 0; l < m; l++)
                    s += J->dz[l * m + i] * o[l];
                J->col[i] = s;
            }
            memcpy(o, J->col, (size_t)m * sizeof *o);
        }
        if (call_one(ev, t, root, J->zw) != 0)
            return -1;
    }
    return 0;
}

/* The step along direction c: sensitivity j's (ot__sens_step of the
 * lane's parameters), or for time's a step of t, shortened so that the
 * state moves by a cube-root-of-epsilon fraction of its size. */
static double step_of(const struct ot__sens_jump *J, const ot__unit *u, double t,
                      int64_t c, int64_t ns)
{
    if (c < ns) /* the adjoint's unit vector of z: that entry's step */
        return J->unit_dirs ? ot__fd_step(J->z0[c])
                            : ot__sens_step(J->z0 + u->n, u->np, c);
    double fnorm = 0, ynorm = 1;
    for (int64_t i = 0; i < u->n; i++) {
        fnorm = fnorm > fabs(J->fm[i]) ? fnorm : fabs(J->fm[i]);
        ynorm = ynorm > fabs(J->z0[i]) ? ynorm : fabs(J->z0[i]);
    }
    const double ht = cbrt(DBL_EPSILON) * (fabs(t) > 1 ? fabs(t) : 1.0),
                 hy = cbrt(DBL_EPSILON) * ynorm;
    return fnorm > 0 && hy / fnorm < ht ? hy / fnorm : ht;
}

/* Central differences of H along the directions into J->out. */
static int along_dq(const event *ev, struct ot__sens_jump *J, double t, int64_t nd,
                    int64_t ns)
{
    const int64_t m = J->m;
    for (int64_t c = 0; c < nd; c++) {
        const double h = step_of(J, ev->u, t, c, ns), *v = J->v + c * m;
        double *o = J->out + c * m;
        for (int64_t i = 0; i < m; i++)
            J->zp[i] = J->z0[i] + h * v[i];
        if (call_all(ev, t + h * J->tdir[c], J->zp) != 0)
            return -1;
        for (int64_t i = 0; i < m; i++)
            J->zw[i] = J->z0[i] - h * v[i];
        if (call_all(ev, t - h * J->tdir[c], J->zw) != 0)
            return -1;
        for (int64_t i = 0; i < m; i++)
            o[i] = (J->zp[i] - J->zw[i]) / (2 * h);
    }
    return 0;
}

/* ---- The event time -------------------------------------------------------- */

/* The rhs of the lane at (t, y, q) into f, checked. */
static int call_rhs(const event *ev, double t, const double *y, const double *q,
                    double *f, char *msg, size_t len)
{
    const ot_ode *ode = ev->u->plan->ode;
    const ot__cb_lane_state was = ot__cb_lane_at(ev->lane);
    const int rc =
        ode->rhs(t, ot__view_compact(y, ode->n, 1), ot__view_compact(q, ode->np, 1),
                 ot__view_mut_compact(f, ode->n, 1), ode->user);
    ot__cb_lane_restore(was);
    for (int64_t i = 0; rc == 0 && i < ode->n; i++)
        if (!isfinite(f[i])) {
            snprintf(msg, len,
                     "rhs gave dydt[%lld] = %g for lane %lld at the event at t = %g "
                     "(the sensitivities' jump needs f there)",
                     (long long)i, f[i], (long long)ev->lane, t);
            return OT_ERR_CALLBACK;
        }
    if (rc != 0)
        snprintf(msg, len,
                 "rhs returned %d for lane %lld at the event at t = %g (the "
                 "sensitivities' jump needs f there)",
                 rc, (long long)ev->lane, t);
    return rc != 0 ? OT_ERR_CALLBACK : OT_OK;
}

/* Root r of the lane at (t, z) into J's g. */
static int call_root(const event *ev, double t, const double *z, double *g)
{
    const ot_ode *ode = ev->u->plan->ode;
    const ot__cb_lane_state was = ot__cb_lane_at(ev->lane);
    const int rc = ode->root(t, ot__view_compact(z, ode->n, 1),
                             ot__view_compact(z + ode->n, ode->np, 1),
                             ot__view_mut_compact(g, ode->nroots, 1), ode->user);
    ot__cb_lane_restore(was);
    return rc;
}

/* dtau_j = -(Dg Z_j) / (Dg (1; f-, 0)) for the first fired root r, central
 * differences of g along the directions J->v. */
static int root_time(const event *ev, struct ot__sens_jump *J, double t, int64_t ns,
                     char *msg, size_t len)
{
    const int64_t m = J->m, nr = ev->u->plan->ode->nroots;
    int64_t r = 0;
    while (r < nr && ev->rf[r] == 0)
        r++;
    double dg[2] = {0, 0}, denom = 0;
    for (int64_t c = ns; c >= 0; c--) { /* time's first: the denominator */
        const double h = step_of(J, ev->u, t, c, ns), *v = J->v + c * m;
        for (int sign = 0; sign < 2; sign++) {
            const double s = sign == 0 ? h : -h;
            for (int64_t i = 0; i < m; i++)
                J->zp[i] = J->z0[i] + s * v[i];
            if (call_root(ev, t + s * J->tdir[c], J->zp, sign == 0 ? J->gp : J->gm) !=
                0) {
                snprintf(msg, len,
                         "root failed for lane %lld near the event at t = %g (the "
                         "sensitivities' jump needs its derivatives there)",
                         (long long)ev->lane, t);
                return OT_ERR_CALLBACK;
            }
            dg[sign] = sign == 0 ? J->gp[r] : J->gm[r];
        }
        const double d = (dg[0] - dg[1]) / (2 * h);
        if (c == ns) {
            denom = d;
            if (!(fabs(denom) > 0) || !isfinite(denom)) {
                snprintf(msg, len,
                         "lane %lld's root %lld crosses zero tangentially at t = %g "
                         "(dg/dt along the solution is %g): the event time has no "
                         "derivative, so neither do the sensitivities after it",
                         (long long)ev->lane, (long long)r, t, denom);
                return OT_ERR_SOLVER;
            }
        } else {
            J->dtau[c] = -d / denom;
        }
    }
    return OT_OK;
}

/* The stop's dtau_j: stops_dp for a parameter's, 0 for an initial
 * value's. @return whether any is nonzero. */
static int stop_time(const ot__plan *pl, const event *ev, struct ot__sens_jump *J,
                     int64_t ns)
{
    int any = 0;
    for (int64_t j = 0; j < ns; j++) {
        J->dtau[j] = pl->stops_dp && j < pl->np
                         ? ot__plan_stop_dp(pl, ev->lane, ev->stop)[j]
                         : 0.0;
        any |= J->dtau[j] != 0;
    }
    return any;
}

/* ---- The jump -------------------------------------------------------------- */

/* The jump's map along J->v's first nv directions, M v = DH v + B dtau(v),
 * into J->out's first nv columns, and B = DH (f-, 0) + H_t - (f+, 0) into
 * its column nv when *timed (the event time moves: a root, or a stop with
 * stops_dp). dtau(v): the root's -(Dg v) / (Dg (1; f-, 0)); a stop's
 * stops_dp entry of direction j where stop_dtau (forward sensitivities:
 * direction j is parameter j's), else 0 (the adjoint adds stops_dp's part
 * to dL/dp itself). @return OT_OK or a status with msg. */
static int jump_map(const ot__unit *u, struct ot__sens_jump *J, const event *ev, double t,
                    const double *y, const double *q, int64_t nv, int stop_dtau,
                    int *timed, char *msg, size_t len)
{
    const ot__plan *pl = u->plan;
    const ot_ode *ode = pl->ode;
    const int64_t n = u->n, np = u->np, m = J->m;
    for (int64_t j = 0; j < nv; j++)
        J->tdir[j] = 0;
    int st = OT_OK;
    *timed = ev->stop < 0 || stop_time(pl, ev, J, nv);
    if (ev->stop >= 0 && !stop_dtau)
        memset(J->dtau, 0, (size_t)nv * sizeof *J->dtau);
    int64_t nd = nv;
    if (*timed) { /* time's direction (1; f-, 0) */
        if ((st = call_rhs(ev, t, J->z0, J->z0 + n, J->fm, msg, len)) != OT_OK)
            return st;
        memcpy(J->v + nv * m, J->fm, (size_t)n * sizeof(double));
        memset(J->v + nv * m + n, 0, (size_t)np * sizeof(double));
        J->tdir[nv] = 1;
        nd = nv + 1;
        if (ev->stop < 0 && (st = root_time(ev, J, t, nv, msg, len)) != OT_OK)
            return st;
    }
    const int rc = ode->event_jac ? along_jac(ev, J, t, nd) : along_dq(ev, J, t, nd, nv);
    if (rc != 0) {
        snprintf(msg, len, "%s failed for lane %lld at the event at t = %g (the %s%s)",
                 ode->event_jac ? "the event Jacobian or handler" : "the event handler",
                 (long long)ev->lane, t,
                 J->unit_dirs ? "adjoint's jump" : "sensitivities' jump",
                 ode->event_jac ? "" : " takes its central differences");
        return OT_ERR_CALLBACK;
    }
    if (*timed) { /* B = DH (1; f-, 0) - (f+, 0) */
        if ((st = call_rhs(ev, t, y, q, J->fp, msg, len)) != OT_OK)
            return st;
        for (int64_t i = 0; i < n; i++)
            J->out[nv * m + i] -= J->fp[i];
    }
    for (int64_t j = 0; *timed && j < nv; j++)
        for (int64_t i = 0; i < m; i++)
            J->out[j * m + i] += J->out[nv * m + i] * J->dtau[j];
    return OT_OK;
}

int ot__sens_jump_take(ot__unit *u, int64_t b, double t, int64_t stop, const int *rf,
                       const double *y, const double *q, char *msg, size_t len)
{
    const ot__plan *pl = u->plan;
    struct ot__sens_jump *J = u->jump;
    const int64_t n = u->n, np = u->np, ns = pl->ns, m = J->m, k = u->k;
    if (pl->kind == OT__ADJ) /* the backward pass jumps: the event is logged */
        return ot__adj_ev_event(u, b, t, stop, rf, J->z0, y, q, msg, len);
    const event ev = {u, u->lane0 + b, stop, rf};
    for (int64_t j = 0; j < ns; j++) { /* the directions Z_j- */
        memcpy(J->v + j * m, u->ops->sens_state(u, j) + b * n,
               (size_t)n * sizeof(double));
        if (np > 0)
            memcpy(J->v + j * m + n, u->psens + j * np * k + b * np,
                   (size_t)np * sizeof(double));
    }
    int timed;
    const int st = jump_map(u, J, &ev, t, y, q, ns, 1, &timed, msg, len);
    if (st != OT_OK)
        return st;
    for (int64_t j = 0; j < ns; j++) {
        const double *o = J->out + j * m;
        for (int64_t i = 0; i < m; i++)
            if (!isfinite(o[i])) {
                snprintf(msg, len,
                         "lane %lld's sensitivity %lld is %g after the event at t = %g "
                         "(%s %lld of z = (y, p))",
                         (long long)ev.lane, (long long)j, o[i], t,
                         i < n ? "state" : "parameter", (long long)(i < n ? i : i - n));
                return OT_ERR_CALLBACK;
            }
        memcpy(u->ops->sens_state(u, j) + b * n, o, (size_t)n * sizeof(double));
        if (np > 0)
            memcpy(u->psens + j * np * k + b * np, o + n, (size_t)np * sizeof(double));
    }
    return OT_OK;
}

int ot__sens_jump_back(ot__unit *u, int64_t b, double t, int64_t stop, const int *rf,
                       const double *zm, const double *zp, double *lam, double *mu,
                       double *gp, char *msg, size_t len)
{
    const ot__plan *pl = u->plan;
    struct ot__sens_jump *J = u->jump;
    const int64_t n = u->n, np = u->np, m = J->m;
    const event ev = {u, u->lane0 + b, stop, rf};
    memcpy(J->z0, zm, (size_t)m * sizeof *zm);
    memset(J->v, 0, (size_t)(m * m) * sizeof *J->v);
    for (int64_t c = 0; c < m; c++)
        J->v[c * m + c] = 1.0;
    int timed;
    const int st = jump_map(u, J, &ev, t, zp, zp + n, m, 0, &timed, msg, len);
    if (st != OT_OK)
        return st;
    /* (lambda, mu)- = M^T (lambda, mu)+: entry c is column c of M dotted
     * with (lambda, mu)+; a stop's time moving with p adds (B . (lambda,
     * mu)+) d stop / d p to dL/dp. */
    double *const zl = J->zw; /* (lambda, mu)+ */
    memcpy(zl, lam, (size_t)n * sizeof *lam);
    if (np > 0)
        memcpy(zl + n, mu, (size_t)np * sizeof *mu);
    for (int64_t c = 0; c < m; c++) {
        double s = 0;
        for (int64_t i = 0; i < m; i++)
            s += J->out[c * m + i] * zl[i];
        if (!isfinite(s)) {
            snprintf(msg, len,
                     "lane %lld's adjoint is %g before the event at t = %g (%s %lld of "
                     "z = (y, p))",
                     (long long)ev.lane, s, t, c < n ? "state" : "parameter",
                     (long long)(c < n ? c : c - n));
            return OT_ERR_CALLBACK;
        }
        J->col[c] = s;
    }
    if (stop >= 0 && timed) {
        double bl = 0;
        for (int64_t i = 0; i < m; i++)
            bl += J->out[m * m + i] * zl[i];
        const double *dp = ot__plan_stop_dp(pl, ev.lane, stop);
        for (int64_t j = 0; j < np; j++)
            gp[j] += bl * dp[j];
    }
    memcpy(lam, J->col, (size_t)n * sizeof *lam);
    if (np > 0)
        memcpy(mu, J->col + n, (size_t)np * sizeof *mu);
    return OT_OK;
}

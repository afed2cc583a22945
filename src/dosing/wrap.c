/* The wrapped problem of a dosing solve (dose_solve.h): the user's
 * callbacks see their own np rows of p; the rates of running infusions
 * (parameters np + q, set by the stops) are added to the derivative after
 * rhs; the stops' handler applies each stop's operations and its Jacobian
 * gives their derivatives exactly (the steady states' from steady.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dosing/dose_solve.h"

static const ot_device host = {OT_CPU, 0};

/* v with its first extent cut to rows (the user's parameters). */
static ot_view rows_of(ot_view v, int64_t rows)
{
    v.layout.shape[0] = rows;
    return v;
}

static ot_view_mut rows_of_mut(ot_view_mut v, int64_t rows)
{
    v.layout.shape[0] = rows;
    return v;
}

static ot_view_mut mut_of(double *d, int64_t rows, int64_t cols)
{
    ot_view_mut v;
    const int64_t shape[2] = {rows, cols};
    ot_view_mut_make(&v, d, OT_F64, host, 2, shape, NULL);
    return v;
}

static ot_view view_of(const double *d, int64_t rows)
{
    ot_view v;
    ot_view_f64(&v, d, rows, 1);
    return v;
}

/* p as the user's callbacks see it: their np rows, compact. In lanes mode
 * (one column) those rows are; over a lockstep block's k columns (stride
 * np + nslot) they are copied into the lanes' own part of the solve's
 * buffer (lanes ot_callback_lane() on: each block its own, so threads never
 * share a part), as bindings and users read columns np apart. */
static ot_view user_p(const ot__dose_ctx *c, ot_view p)
{
    const int64_t k = p.layout.shape[1], lane0 = ot_callback_lane();
    if (k <= 1 || c->nslot == 0 || c->pbuf == NULL || lane0 < 0 || lane0 + k > c->nlanes)
        return rows_of(p, c->np);
    double *buf = c->pbuf + lane0 * c->np;
    for (int64_t b = 0; b < k; b++)
        memcpy(buf + b * c->np, ot_view_col_f64(p, b, 0), (size_t)c->np * sizeof *buf);
    ot_view v;
    ot_view_f64(&v, buf, c->np, k);
    v.layout.shape[0] = c->np; /* np may be 0 */
    return v;
}

/* f[state_q, b] += rate q of lane b, for the k lanes of f. */
static void add_rates(const ot__dose_ctx *c, ot_view p, ot_view_mut f)
{
    const int64_t k = f.layout.shape[1];
    for (int64_t b = 0; c->nslot > 0 && b < k; b++) {
        const double *pb = ot_view_col_f64(p, p.layout.shape[1] == 1 ? 0 : b, 0);
        double *fb = ot_view_mut_col_f64(f, b, 0);
        for (int64_t q = 0; q < c->nslot; q++)
            fb[c->slot_state[q]] += pb[c->np + q];
    }
}

static int w_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *user)
{
    const ot__dose_ctx *c = user;
    const int rc = c->user->rhs(t, y, user_p(c, p), f, c->user->user);
    if (rc == 0 && c->user->rhs_explicit == NULL)
        add_rates(c, p, f);
    return rc;
}

/* With an IMEX split the rates, which do not depend on y, are explicit. */
static int w_rhs_explicit(double t, ot_view y, ot_view p, ot_view_mut f, void *user)
{
    const ot__dose_ctx *c = user;
    const int rc = c->user->rhs_explicit(t, y, user_p(c, p), f, c->user->user);
    if (rc == 0)
        add_rates(c, p, f);
    return rc;
}

static int w_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *user)
{
    const ot__dose_ctx *c = user;
    return c->user->jac(t, y, user_p(c, p), J, c->user->user);
}

static int w_init(ot_view p, ot_view_mut y0, void *user)
{
    const ot__dose_ctx *c = user;
    return c->user->init(user_p(c, p), y0, c->user->user);
}

static int w_out(double t, ot_view y, ot_view p, ot_view_mut o, void *user)
{
    const ot__dose_ctx *c = user;
    return c->user->out(t, y, user_p(c, p), o, c->user->user);
}

static int w_root(double t, ot_view y, ot_view p, ot_view_mut g, void *user)
{
    const ot__dose_ctx *c = user;
    return c->user->root(t, y, user_p(c, p), g, c->user->user);
}

static int w_psetup(double t, ot_view y, ot_view p, double gamma, int jok, int *jcur,
                    ot_view_mut work, void *user)
{
    const ot__dose_ctx *c = user;
    return c->user->psetup(t, y, rows_of(p, c->np), gamma, jok, jcur, work,
                           c->user->user);
}

static int w_psolve(double t, ot_view y, ot_view p, double gamma, ot_view r,
                    ot_view_mut z, ot_view_mut work, void *user)
{
    const ot__dose_ctx *c = user;
    return c->user->psolve(t, y, rows_of(p, c->np), gamma, r, z, work, c->user->user);
}

/* d f / d p: the user's columns, and 1 for each rate into its state. The
 * user's [n, np, k] is compact: over k > 1 lanes it is written into the
 * lanes' part of the solve's buffer and copied into dfdp's columns. */
static int w_dfdp(double t, ot_view y, ot_view p, ot_view_mut dfdp, void *user)
{
    const ot__dose_ctx *c = user;
    const int64_t n = c->n, np = c->np, k = dfdp.layout.shape[2],
                  lane0 = ot_callback_lane();
    ot_view_mut own = dfdp;
    own.layout.shape[1] = np;
    const int copy =
        k > 1 && c->nslot > 0 && c->dbuf != NULL && lane0 >= 0 && lane0 + k <= c->nlanes;
    double *buf = copy ? c->dbuf + lane0 * n * np : NULL;
    if (copy) {
        const int64_t shape[3] = {n, np, k};
        memset(buf, 0, (size_t)(n * np * k) * sizeof *buf);
        ot_view_mut_make(&own, buf, OT_F64, host, 3, shape, NULL);
    }
    const int rc = c->user->dfdp(t, y, user_p(c, p), own, c->user->user);
    for (int64_t b = 0; rc == 0 && b < k; b++) {
        for (int64_t j = 0; copy && j < np; j++)
            memcpy(ot_view_mut_col_f64(dfdp, j, b), buf + (b * np + j) * n,
                   (size_t)n * sizeof *buf);
        for (int64_t q = 0; q < c->nslot; q++)
            ot_view_mut_col_f64(dfdp, np + q, b)[c->slot_state[q]] = 1;
    }
    return rc;
}

/* ---- The stops' operations ---------------------------------------------- */

/* A reset's state: the lane's y0, or init's from p. */
static int reset_state(const ot__dose_ctx *c, const ot__dose_lane *L, const double *p,
                       double *y)
{
    if (L->y0) {
        memcpy(y, L->y0, (size_t)c->n * sizeof *y);
        return 0;
    }
    return c->user->init(view_of(p, c->np), mut_of(y, c->n, 1), c->user->user);
}

static int apply(const ot__dose_ctx *c, const ot__dose_lane *L, int64_t k, double *y,
                 double *p)
{
    double *slot = p + c->np;
    char msg[200];
    for (int64_t i = L->first[k]; i < L->first[k + 1]; i++) {
        const ot__dose_op *op = &L->ops[i];
        double r = 0;
        switch (op->kind) {
        case OT__OP_BOLUS:
            y[op->state] += ot__dose_f(c, op->cmt, p, NULL) * op->amount;
            break;
        case OT__OP_RATE_ON:
        case OT__OP_RATE_OFF:
            if (ot__dose_infusion(c, op, p, &r, NULL, NULL, NULL, msg, sizeof msg) != 0)
                return -1;
            slot[c->slot_of[op->cmt]] += op->kind == OT__OP_RATE_ON ? r : -r;
            break;
        case OT__OP_RESET:
            for (int64_t q = 0; q < c->nslot; q++)
                slot[q] = 0;
            if (reset_state(c, L, p, y) != 0)
                return -1;
            break;
        default: { /* OT__OP_SS */
            const ot__dose_ss *ss = &L->ss[op->ssi];
            for (int64_t j = 0; j < c->n; j++)
                y[j] = ss->ss == 1 ? ss->y[j] : y[j] + ss->y[j];
            if (ss->ss == 1)
                for (int64_t q = 0; q < c->nslot; q++)
                    slot[q] = 0;
            /* the interval before's infusion still running (a constant
             * infusion's rate is its own record's start) */
            if (ss->wrap && !ss->constant) {
                if (ot__dose_infusion(c, &ss->dose, p, &r, NULL, NULL, NULL, msg,
                                      sizeof msg) != 0)
                    return -1;
                slot[c->slot_of[ss->dose.cmt]] += r;
            }
            break;
        }
        }
    }
    return 0;
}

static int w_event(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                   void *user)
{
    const ot__dose_ctx *c = user;
    if (root >= 0)
        return c->user->event_fn(t, root, lane, y, rows_of_mut(p, c->np), c->user->user);
    return apply(c, &c->lanes[lane], -1 - (int64_t)root, ot_view_mut_col_f64(y, 0, 0),
                 ot_view_mut_col_f64(p, 0, 0));
}

/* ---- The handler's derivatives ---------------------------------------------- */

/* dz rows: the column-major m x m matrix at D (m = n + np + nslot). */
typedef struct {
    double *D;
    int64_t m;
} jmat;

static double *at(jmat J, int64_t r, int64_t col) { return J.D + col * J.m + r; }

static void row_zero(jmat J, int64_t r)
{
    for (int64_t col = 0; col < J.m; col++)
        *at(J, r, col) = 0;
}

/* Central differences of the user's init in p: d y0 / d p into rows 0..n
 * (columns n + j); the reset replaced those rows. */
static int init_dp(const ot__dose_ctx *c, const double *p, jmat J)
{
    const int64_t n = c->n, np = c->np;
    double *q = malloc((size_t)(np + 1) * sizeof *q),
           *hi = malloc((size_t)n * sizeof *hi), *lo = malloc((size_t)n * sizeof *lo);
    int rc = q && hi && lo ? 0 : -1;
    if (rc == 0)
        memcpy(q, p, (size_t)np * sizeof *q);
    for (int64_t j = 0; rc == 0 && j < np; j++) {
        const double h = 6.0554544523933395e-06 * fmax(1.0, fabs(p[j])); /* cbrt(eps) */
        q[j] = p[j] + h;
        rc = c->user->init(view_of(q, np), mut_of(hi, n, 1), c->user->user);
        q[j] = p[j] - h;
        rc = rc ? rc : c->user->init(view_of(q, np), mut_of(lo, n, 1), c->user->user);
        q[j] = p[j];
        for (int64_t i = 0; rc == 0 && i < n; i++)
            *at(J, i, n + j) = (hi[i] - lo[i]) / (2 * h);
    }
    free(q);
    free(hi);
    free(lo);
    return rc;
}

static int apply_jac(const ot__dose_ctx *c, const ot__dose_lane *L, int64_t k,
                     const double *p, jmat J)
{
    const int64_t n = c->n, np = c->np;
    double *drate = malloc((size_t)(np + 1) * sizeof *drate);
    char msg[200];
    int rc = drate ? 0 : -1;
    for (int64_t i = L->first[k]; rc == 0 && i < L->first[k + 1]; i++) {
        const ot__dose_op *op = &L->ops[i];
        double r = 0;
        int64_t fi = -1;
        switch (op->kind) {
        case OT__OP_BOLUS:
            ot__dose_f(c, op->cmt, p, &fi);
            if (fi >= 0)
                *at(J, op->state, n + fi) += op->amount;
            break;
        case OT__OP_RATE_ON:
        case OT__OP_RATE_OFF:
            rc = ot__dose_infusion(c, op, p, &r, NULL, drate, NULL, msg, sizeof msg);
            for (int64_t j = 0; rc == 0 && j < np; j++)
                *at(J, n + np + c->slot_of[op->cmt], n + j) +=
                    op->kind == OT__OP_RATE_ON ? drate[j] : -drate[j];
            break;
        case OT__OP_RESET:
            for (int64_t r2 = 0; r2 < n; r2++)
                row_zero(J, r2);
            for (int64_t q = 0; q < c->nslot; q++)
                row_zero(J, n + np + q);
            if (L->y0 == NULL)
                rc = init_dp(c, p, J);
            break;
        default: { /* OT__OP_SS */
            const ot__dose_ss *ss = &L->ss[op->ssi];
            for (int64_t r2 = 0; ss->ss == 1 && r2 < n; r2++)
                row_zero(J, r2);
            for (int64_t q = 0; ss->ss == 1 && q < c->nslot; q++)
                row_zero(J, n + np + q);
            for (int64_t j = 0; j < np; j++)
                for (int64_t r2 = 0; r2 < n; r2++)
                    *at(J, r2, n + j) += ss->dydp[j * n + r2];
            if (ss->wrap && !ss->constant) {
                rc = ot__dose_infusion(c, &ss->dose, p, &r, NULL, drate, NULL, msg,
                                       sizeof msg);
                for (int64_t j = 0; rc == 0 && j < np; j++)
                    *at(J, n + np + c->slot_of[ss->dose.cmt], n + j) += drate[j];
            }
            break;
        }
        }
    }
    free(drate);
    return rc;
}

/* Central differences of the user's handler for a root of theirs, when
 * they gave no event Jacobian: the wrapped problem's Jacobian serves the
 * stops, so the core would not difference the user's handler itself. */
static int user_event_cd(const ot__dose_ctx *c, double t, int root, int64_t lane,
                         const double *y, const double *p, jmat J, double *dzdt)
{
    const int64_t n = c->n, np = c->np, m = n + np;
    double *z = malloc((size_t)(m + 1) * sizeof *z);
    if (z == NULL)
        return -1;
    int rc = 0;
    for (int64_t j = 0; rc == 0 && j <= m; j++) { /* j = m: along t */
        const double zj = j == m ? t : j < n ? y[j] : p[j - n];
        const double h = 6.0554544523933395e-06 * fmax(1.0, fabs(zj)); /* cbrt(eps) */
        for (int side = 0; rc == 0 && side < 2; side++) {
            const double s = side ? -h : h;
            memcpy(z, y, (size_t)n * sizeof *z);
            memcpy(z + n, p, (size_t)np * sizeof *z);
            if (j < m)
                z[j] += s;
            rc = c->user->event_fn(t + (j == m ? s : 0), root, lane, mut_of(z, n, 1),
                                   mut_of(z + n, np, 1), c->user->user);
            for (int64_t r = 0; rc == 0 && r < m; r++) {
                double *d = j < m ? at(J, r, j) : dzdt + r;
                *d = side ? (*d - z[r]) / (2 * h) : z[r];
            }
        }
    }
    free(z);
    return rc;
}

static int w_event_jac(double t, int root, int64_t lane, ot_view y, ot_view p,
                       ot_view_mut dz, ot_view_mut dzdt, void *user)
{
    const ot__dose_ctx *c = user;
    const int64_t m = c->n + c->np + c->nslot;
    jmat J = {ot_view_mut_col_f64(dz, 0, 0), m};
    if (root >= 0 && c->user->event_jac) { /* theirs, on a compact copy */
        const int64_t mu = c->n + c->np;
        double *d = malloc((size_t)(mu * mu + mu) * sizeof *d);
        if (d == NULL)
            return -1;
        for (int64_t col = 0; col < mu; col++)
            for (int64_t r = 0; r < mu; r++)
                d[col * mu + r] = *at(J, r, col);
        memcpy(d + mu * mu, ot_view_mut_col_f64(dzdt, 0, 0), (size_t)mu * sizeof *d);
        const int rc =
            c->user->event_jac(t, root, lane, y, rows_of(p, c->np), mut_of(d, mu, mu),
                               mut_of(d + mu * mu, mu, 1), c->user->user);
        for (int64_t col = 0; rc == 0 && col < mu; col++)
            for (int64_t r = 0; r < mu; r++)
                *at(J, r, col) = d[col * mu + r];
        if (rc == 0)
            memcpy(ot_view_mut_col_f64(dzdt, 0, 0), d + mu * mu, (size_t)mu * sizeof *d);
        free(d);
        return rc;
    }
    if (root >= 0)
        return c->user->event_fn == NULL
                   ? 0
                   : user_event_cd(c, t, root, lane, ot_view_col_f64(y, 0, 0),
                                   ot_view_col_f64(p, 0, 0), J,
                                   ot_view_mut_col_f64(dzdt, 0, 0));
    return apply_jac(c, &c->lanes[lane], -1 - (int64_t)root, ot_view_col_f64(p, 0, 0), J);
}

/* ---- The problem and the loss ---------------------------------------------- */

void ot__dose_wrap(struct ot_ode *w, ot__dose_ctx *c)
{
    const struct ot_ode *u = c->user;
    *w = *u; /* options and owned arrays shared, borrowed for the solve */
    w->np = c->np + c->nslot;
    w->user = c;
    w->rhs = w_rhs;
    /* The kernel solver's lane-time callbacks would see every row of p and
     * miss the infusions' rates: the wrapped problem has the one-time
     * callbacks only (a group needs ot_ode_set_autonomous then). */
    w->rhs_lanes = NULL;
    w->jac_lanes = NULL;
    w->rhs_explicit = u->rhs_explicit ? w_rhs_explicit : NULL;
    w->jac = u->jac ? w_jac : NULL;
    w->init = u->init ? w_init : NULL;
    w->out = u->out ? w_out : NULL;
    w->root = u->root ? w_root : NULL;
    w->psetup = u->psetup ? w_psetup : NULL;
    w->psolve = u->psolve ? w_psolve : NULL;
    w->dfdp = u->dfdp ? w_dfdp : NULL;
    w->event_fn = w_event;
    w->event_jac = w_event_jac;
}

static int w_loss(double t, int64_t i, int64_t lane, ot_view y, ot_view p, ot_view_mut g,
                  ot_view_mut dgdy, ot_view_mut dgdp, void *user)
{
    const ot__dose_loss_ctx *lc = user;
    const int64_t np = lc->c->np;
    return lc->user->fn(t, i, lane, y, rows_of(p, np), g, dgdy, rows_of_mut(dgdp, np),
                        lc->user->user);
}

static int w_integrand(double t, int64_t lane, ot_view y, ot_view p, ot_view_mut q,
                       ot_view_mut dqdy, ot_view_mut dqdp, void *user)
{
    const ot__dose_loss_ctx *lc = user;
    const int64_t np = lc->c->np;
    return lc->user->integrand(t, lane, y, rows_of(p, np), q, dqdy, rows_of_mut(dqdp, np),
                               lc->user->user);
}

ot_loss ot__dose_wrap_loss(const ot_loss *user, ot__dose_loss_ctx *lc)
{
    ot_loss w = *user;
    lc->user = user;
    w.user = lc;
    w.fn = user->fn ? w_loss : NULL;
    w.integrand = user->integrand ? w_integrand : NULL;
    return w;
}

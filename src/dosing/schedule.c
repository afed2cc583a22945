/* Each lane's schedule (dose_solve.h): the plan's actions at their
 * effective times for the lane's parameters (lags, infusion ends from F and
 * modelled rates or durations), the ends of infusions a reset or a steady
 * state ended dropped, coincident operations merged into one stop in record
 * order, and the stops' derivatives in p. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dosing/dose_solve.h"

double ot__dose_f(const ot__dose_ctx *c, int64_t cmt, const double *p, int64_t *fi)
{
    const int64_t i = c->fp ? c->fp[cmt] : -1;
    if (fi != NULL)
        *fi = i;
    return i >= 0 ? p[i] : 1.0;
}

int ot__dose_infusion(const ot__dose_ctx *c, const ot__dose_op *op, const double *p,
                      double *rate, double *dur, double *drate, double *ddur, char *msg,
                      size_t msg_len)
{
    int64_t fi;
    const double F = ot__dose_f(c, op->cmt, p, &fi), fa = F * op->amount;
    const int64_t ri = c->ratep ? c->ratep[op->cmt] : -1;
    const int64_t di = c->durp ? c->durp[op->cmt] : -1;
    double r = 0, d = 0;
    if (drate)
        memset(drate, 0, (size_t)c->np * sizeof *drate);
    if (ddur)
        memset(ddur, 0, (size_t)c->np * sizeof *ddur);
    switch (op->form) {
    case OT__RATE_DATA: /* F stretches the duration */
        r = op->value;
        d = fa / r;
        if (ddur && fi >= 0)
            ddur[fi] += op->amount / r;
        break;
    case OT__DUR_DATA: /* F scales the rate */
        d = op->value;
        r = fa / d;
        if (drate && fi >= 0)
            drate[fi] += op->amount / d;
        break;
    case OT__RATE_PARAM:
        r = p[ri];
        d = fa / r;
        if (drate)
            drate[ri] += 1;
        if (ddur) {
            if (fi >= 0)
                ddur[fi] += op->amount / r;
            ddur[ri] -= fa / (r * r);
        }
        break;
    default: /* OT__DUR_PARAM */
        d = p[di];
        r = fa / d;
        if (ddur)
            ddur[di] += 1;
        if (drate) {
            if (fi >= 0)
                drate[fi] += op->amount / d;
            drate[di] -= fa / (d * d);
        }
        break;
    }
    *rate = r;
    if (dur)
        *dur = d;
    if (!(r > 0 && r < INFINITY) || (dur && !(d > 0 && d < INFINITY))) {
        char what[80];
        if (op->form == OT__RATE_PARAM)
            snprintf(what, sizeof what, "its rate p[%lld] is %g", (long long)ri, r);
        else if (op->form == OT__DUR_PARAM)
            snprintf(what, sizeof what, "its duration p[%lld] is %g", (long long)di, d);
        else
            snprintf(what, sizeof what, "F AMT is %g (rate %g, duration %g)", fa, r, d);
        snprintf(msg, msg_len,
                 "row %lld: an infusion needs a rate and a duration > 0; %s",
                 (long long)op->row, what);
        return -1;
    }
    return 0;
}

/* An operation at its time, with the sort's keys and its time's
 * derivative: lag plus (an infusion's end) the duration's. */
typedef struct {
    double t;
    int64_t seq;  /* plan order, the tie-break: actions keep record order */
    int64_t dose; /* an infusion's number (its on and off), or -1 */
    ot__dose_op op;
    int64_t lagi;   /* the lag's parameter, or -1 */
    int64_t ddi[2]; /* an end's duration: its parameters (-1: none) */
    double ddv[2];
} timed;

static int by_time(const void *x, const void *y)
{
    const timed *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* The end's duration derivative as at most two (parameter, value) pairs. */
static void keep_ddur(timed *e, const double *ddur, int64_t np)
{
    e->ddi[0] = e->ddi[1] = -1;
    for (int64_t j = 0, m = 0; j < np && m < 2; j++)
        if (ddur[j] != 0) {
            e->ddi[m] = j;
            e->ddv[m++] = ddur[j];
        }
}

static void dt_row(const timed *e, double *row, int64_t np)
{
    memset(row, 0, (size_t)np * sizeof *row);
    if (e->lagi >= 0)
        row[e->lagi] += 1;
    for (int m = 0; m < 2; m++)
        if (e->ddi[m] >= 0)
            row[e->ddi[m]] += e->ddv[m];
}

/* The lane fails alone, before it starts: its message names the subject. */
static int lane_fails(ot__dose_lane *L, double id, const char *what)
{
    L->status = OT_ERR_VALUE;
    snprintf(L->msg, sizeof L->msg, "ID %.15g, %s", id, what);
    return OT_OK;
}

/* The op a dose action gives (its form from the plan's rate kind). */
static ot__dose_op op_of(const ot_dose_action *a)
{
    ot__dose_op op = {0};
    op.cmt = a->cmt - 1;
    op.state = a->state;
    op.amount = a->amount;
    op.row = a->row;
    op.ssi = -1;
    const int infusion = a->kind == OT_DOSE_INFUSION_START ||
                         (a->kind == OT_DOSE_STEADY_STATE &&
                          (a->rate_kind != OT_RATE_DATA || a->duration > 0));
    op.kind = infusion ? OT__OP_RATE_ON : OT__OP_BOLUS;
    op.form = a->rate_kind == OT_RATE_MODELLED       ? OT__RATE_PARAM
              : a->rate_kind == OT_DURATION_MODELLED ? OT__DUR_PARAM
              : a->rate_kind == OT_DURATION_DATA     ? OT__DUR_DATA
                                                     : OT__RATE_DATA;
    op.value = op.form == OT__DUR_DATA ? a->duration : a->rate;
    return op;
}

/* Scratch of one lane's build. */
typedef struct {
    timed *e;
    int64_t n;
    double *ddur, *drate, *row;
} work;

/* A steady-state marker and what it needs (dose_solve.h's ot__dose_ss). */
static int add_ss(const ot__dose_ctx *c, const ot_dose_action *a, const double *p,
                  ot__dose_lane *L, work *w, int64_t seq, int64_t wrap_id, double id)
{
    char why[200];
    ot__dose_ss *ss = &L->ss[L->nss];
    memset(ss, 0, sizeof *ss);
    ss->t = a->time;
    ss->ss = a->ss;
    ss->dose = op_of(a);
    ss->constant = a->duration == INFINITY;
    ss->lagi = c->lagp ? c->lagp[ss->dose.cmt] : -1;
    ss->lag = ss->constant || ss->lagi < 0 ? 0 : p[ss->lagi];
    ss->period = ss->constant ? c->ss_interval : a->ii;
    if (ss->dose.kind == OT__OP_RATE_ON) {
        double r = 0, d = 0;
        if (ss->constant) {
            r = ss->dose.value;
        } else if (ot__dose_infusion(c, &ss->dose, p, &r, &d, w->drate, w->ddur, why,
                                     sizeof why) != 0) {
            return lane_fails(L, id, why);
        }
        ss->dur = d;
        if (!ss->constant && d > ss->period) {
            snprintf(why, sizeof why,
                     "row %lld: a steady state's infusion lasts %g, longer than its "
                     "interval II %g",
                     (long long)a->row, d, ss->period);
            return lane_fails(L, id, why);
        }
        ss->wrap = ss->constant || ss->lag + d > ss->period;
    }
    if (!(ss->lag >= 0 && ss->lag < ss->period)) {
        snprintf(why, sizeof why,
                 "row %lld: a steady state's lag ALAG %g is not in [0, II %g)",
                 (long long)a->row, ss->lag, ss->period);
        return lane_fails(L, id, why);
    }
    timed *e = &w->e[w->n++];
    memset(e, 0, sizeof *e);
    e->t = a->time;
    e->seq = seq;
    e->dose = ss->wrap ? wrap_id : -1;
    e->op = ss->dose;
    e->op.kind = OT__OP_SS;
    e->op.ss = a->ss;
    e->op.ssi = L->nss;
    e->lagi = e->ddi[0] = e->ddi[1] = -1;
    if (ss->wrap && !ss->constant) { /* the interval before's infusion ends */
        timed *off = &w->e[w->n++];
        *off = *e;
        off->t = a->time + ss->lag + ss->dur - ss->period;
        off->seq = seq + 2;
        off->op = ss->dose;
        off->op.kind = OT__OP_RATE_OFF;
        off->lagi = ss->lagi;
        keep_ddur(off, w->ddur, c->np);
    }
    L->nss++;
    return OT_OK;
}

/* The dose actions' timed operations into w. */
static int timed_ops(const ot__dose_ctx *c, const ot_dose_action *acts, int64_t nact,
                     const double *p, ot__dose_lane *L, work *w, int64_t ndose, double id)
{
    char why[200];
    for (int64_t i = 0; i < nact && L->status == OT_OK; i++) {
        const ot_dose_action *a = &acts[i];
        if (a->kind == OT_DOSE_RESET) {
            timed *e = &w->e[w->n++];
            memset(e, 0, sizeof *e);
            e->t = a->time;
            e->seq = 4 * i;
            e->dose = e->lagi = e->ddi[0] = e->ddi[1] = -1;
            e->op.kind = OT__OP_RESET;
            e->op.row = a->row;
            e->op.ssi = -1;
            continue;
        }
        if (a->kind == OT_DOSE_STEADY_STATE) {
            if (add_ss(c, a, p, L, w, 4 * i, ndose + L->nss, id) != OT_OK)
                return OT_ERR_NOMEM;
            continue;
        }
        if (a->kind != OT_DOSE_BOLUS && a->kind != OT_DOSE_INFUSION_START)
            continue; /* observations, EVID 2, and ends (made here from p) */
        const ot__dose_op op = op_of(a);
        const int64_t li = c->lagp ? c->lagp[op.cmt] : -1;
        const double lag = li >= 0 ? p[li] : 0;
        int64_t fi;
        const double F = ot__dose_f(c, op.cmt, p, &fi);
        if (!(lag >= 0) || !(F >= 0)) {
            snprintf(why, sizeof why, "row %lld: %s p[%lld] is %g; it must be >= 0",
                     (long long)a->row, lag >= 0 ? "F" : "ALAG",
                     (long long)(lag >= 0 ? fi : li), lag >= 0 ? F : lag);
            return lane_fails(L, id, why);
        }
        timed *e = &w->e[w->n++];
        memset(e, 0, sizeof *e);
        e->t = a->time + lag;
        e->seq = 4 * i;
        e->dose = op.kind == OT__OP_RATE_ON ? a->dose : -1;
        e->op = op;
        e->lagi = li;
        e->ddi[0] = e->ddi[1] = -1;
        if (op.kind == OT__OP_RATE_ON && a->duration == INFINITY) { /* constant */
            double r;
            if (ot__dose_infusion(c, &op, p, &r, NULL, NULL, NULL, why, sizeof why))
                return lane_fails(L, id, why);
        } else if (op.kind == OT__OP_RATE_ON) {
            double r, d;
            if (ot__dose_infusion(c, &op, p, &r, &d, w->drate, w->ddur, why, sizeof why))
                return lane_fails(L, id, why);
            timed *off = &w->e[w->n++];
            *off = *e;
            off->t = e->t + d;
            off->seq = 4 * i + 1;
            off->op.kind = OT__OP_RATE_OFF;
            keep_ddur(off, w->ddur, c->np);
        }
    }
    return OT_OK;
}

/* Drops the ends of infusions that a reset or an SS 1 marker ended (by
 * effective times); open and gone: scratch of ndose flags. */
static int64_t drop_ended(timed *e, int64_t n, char *open, char *gone, int64_t ndose)
{
    memset(open, 0, (size_t)ndose);
    memset(gone, 0, (size_t)ndose);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++) {
        const int kind = e[i].op.kind;
        if (kind == OT__OP_RESET || (kind == OT__OP_SS && e[i].op.ss == 1))
            for (int64_t d = 0; d < ndose; d++)
                if (open[d]) {
                    open[d] = 0;
                    gone[d] = 1;
                }
        if ((kind == OT__OP_RATE_ON || kind == OT__OP_SS) && e[i].dose >= 0)
            open[e[i].dose] = 1;
        if (kind == OT__OP_RATE_OFF) {
            if (gone[e[i].dose])
                continue;
            open[e[i].dose] = 0;
        }
        e[kept++] = e[i];
    }
    return kept;
}

/* The sorted operations grouped into stops, into L. */
static int stops_of(const ot__dose_ctx *c, const timed *e, int64_t n, int with_dp,
                    ot__dose_lane *L, work *w, double id)
{
    int64_t ns = 0;
    for (int64_t i = 0; i < n; i++)
        ns += i == 0 || e[i].t != e[i - 1].t;
    const int64_t np = c->np;
    L->t = malloc((size_t)(ns + 1) * sizeof *L->t);
    L->first = malloc((size_t)(ns + 1) * sizeof *L->first);
    L->ops = malloc((size_t)(n + 1) * sizeof *L->ops);
    L->dtdp = with_dp ? calloc((size_t)(np * ns + 1), sizeof *L->dtdp) : NULL;
    if (!L->t || !L->first || !L->ops || (with_dp && !L->dtdp))
        return OT_ERR_NOMEM;
    int64_t k = -1;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || e[i].t != e[i - 1].t) {
            L->t[++k] = e[i].t;
            L->first[k] = i;
            if (with_dp)
                dt_row(&e[i], L->dtdp + k * np, np);
        } else if (with_dp) {
            dt_row(&e[i], w->row, np);
            if (memcmp(w->row, L->dtdp + k * np, (size_t)np * sizeof *w->row) != 0) {
                char why[200];
                snprintf(why, sizeof why,
                         "rows %lld and %lld: their doses coincide at t = %g but move "
                         "differently with the parameters (lags, durations); the "
                         "derivatives there are not defined",
                         (long long)L->ops[L->first[k]].row, (long long)e[i].op.row,
                         e[i].t);
                return lane_fails(L, id, why);
            }
        }
        L->ops[i] = e[i].op;
    }
    L->first[ns] = n;
    L->nstops = ns;
    return OT_OK;
}

int ot__dose_lane_build(const ot__dose_ctx *c, const ot_dose_plan *plan, int64_t s,
                        const double *p, int with_dp, ot__dose_lane *L)
{
    memset(L, 0, sizeof *L);
    const ot_dose_action *acts = NULL;
    int64_t nact = 0;
    double id = 0;
    ot_dose_plan_actions(plan, s, &acts, &nact);
    ot_dose_plan_subject_id(plan, s, &id);
    int64_t ndose = 0, nss = 0;
    for (int64_t i = 0; i < nact; i++) {
        ndose = acts[i].dose + 1 > ndose ? acts[i].dose + 1 : ndose;
        nss += acts[i].kind == OT_DOSE_STEADY_STATE;
    }
    const int64_t np = c->np, nd = ndose + nss + 1;
    work w = {0};
    w.e = malloc((size_t)(2 * nact + 1) * sizeof *w.e);
    w.ddur = malloc((size_t)(np + 1) * sizeof *w.ddur);
    w.drate = malloc((size_t)(np + 1) * sizeof *w.drate);
    w.row = malloc((size_t)(np + 1) * sizeof *w.row);
    char *open = malloc((size_t)nd), *gone = malloc((size_t)nd);
    L->ss = calloc((size_t)nss + 1, sizeof *L->ss);
    int st =
        w.e && w.ddur && w.drate && w.row && open && gone && L->ss ? OT_OK : OT_ERR_NOMEM;
    if (st == OT_OK)
        st = timed_ops(c, acts, nact, p, L, &w, ndose, id);
    if (st == OT_OK && L->status == OT_OK) {
        qsort(w.e, (size_t)w.n, sizeof *w.e, by_time);
        w.n = drop_ended(w.e, w.n, open, gone, nd);
        st = stops_of(c, w.e, w.n, with_dp, L, &w, id);
    }
    free(w.e);
    free(w.ddur);
    free(w.drate);
    free(w.row);
    free(open);
    free(gone);
    if (L->status != OT_OK) /* no stops: the lane fails before it starts */
        L->nstops = 0;
    return st;
}

void ot__dose_lane_free(ot__dose_lane *L)
{
    for (int64_t i = 0; L->ss && i < L->nss; i++) {
        free(L->ss[i].y);
        free(L->ss[i].dydp);
    }
    free(L->ss);
    free(L->t);
    free(L->dtdp);
    free(L->first);
    free(L->ops);
    memset(L, 0, sizeof *L);
}

/* Observations at a steady state's time (dose_solve.h). Observations at a
 * dose time come before the stop there (NONMEM's pre-dose value), and the
 * stop holds the steady state with the record's dose; but the trough at
 * steady state is the state after the steady state and before the dose. So
 * those outputs are written again here from the state before the stop (its
 * event record) and the steady state: y* (SS 1) or y- + y* (SS 2), their
 * sensitivities dyss/dp (and, SS 2, the ones before), through the user's
 * out function by its rule (central differences along (s_j, e_j)). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dosing/dose_solve.h"
#include "kit/sens.h"
#include "solution/solution_impl.h"

int64_t ot__dose_obs_at(const ot_dose_plan *plan, int64_t s, double t, int64_t from)
{
    const double *times = NULL;
    int64_t n = 0;
    ot_dose_plan_observations(plan, s, &n, &times, NULL, NULL);
    for (int64_t j = from; j < n; j++)
        if (times[j] == t)
            return j;
    return -1;
}

/* The user's out for one lane (ot__central's fn). */
typedef struct {
    const ot__dose_ctx *c;
} out_ctx;

static int out_one(void *ctx, double t, const double *y, const double *p, double *o)
{
    const ot__dose_ctx *c = ((const out_ctx *)ctx)->c;
    ot_view vy, vp;
    ot_view_mut vo;
    const int64_t so[2] = {c->user->nout, 1};
    ot_view_f64(&vy, y, c->n, 1);
    ot_view_f64(&vp, p, c->np > 0 ? c->np : 1, 1);
    vp.layout.shape[0] = c->np;
    ot_view_mut_make(&vo, o, OT_F64, (ot_device){OT_CPU, 0}, 2, so, NULL);
    return c->user->out(t, vy, vp, vo, c->user->user) == 0 ? OT_OK : OT_ERR_CALLBACK;
}

/* The state before lane b's stop at t (its event record), into y. */
static int before_stop(const ot_solution *sol, const ot__dose_lane *L, int64_t b,
                       double t, int64_t n, double *y)
{
    int64_t k = 0;
    while (k < L->nstops && L->t[k] != t)
        k++;
    const ot_tensor *roots = ot_solution_event_tensor(sol, OT_EVENT_ROOTS);
    const ot_tensor *before = ot_solution_event_tensor(sol, OT_EVENT_BEFORE);
    if (k == L->nstops || roots == NULL || before == NULL)
        return -1;
    const int64_t ne = ot_solution_lane_event_count(sol, b);
    for (int64_t e = 0; e < ne; e++) {
        double r = 0;
        ot_view_get(ot_tensor_view(roots), e, b, 0, &r);
        if (r == (double)(-1 - k)) {
            for (int64_t i = 0; i < n; i++)
                ot_view_get(ot_tensor_view(before), i, e, b, &y[i]);
            return 0;
        }
    }
    return -1;
}

/* Writes column j of lane b of tensor t from v [rows]. */
static void put(ot_tensor *t, int64_t rows, int64_t j, int64_t b, const double *v)
{
    ot_view_mut m;
    ot_tensor_view_mut(t, &m);
    for (int64_t i = 0; i < rows; i++)
        ot_view_mut_set(m, i, j, b, v[i]);
}

/* One observation j of lane b at steady state ss: outputs (and with sens,
 * their sensitivities) from y- (y [n]) and y*. w: scratch. */
static int fix_one(const ot__dose_ctx *c, const ot__dose_ss *ss, const double *p,
                   ot_solution *sol, int sens, int64_t b, int64_t j, double *y, double *w)
{
    const int64_t n = c->n, np = c->np, rows = c->user->out ? c->user->nout : n;
    const int has_out = c->user->out != NULL;
    for (int64_t i = 0; i < n; i++)
        y[i] = ss->ss == 1 ? ss->y[i] : y[i] + ss->y[i];
    double *o = w, *s = w + rows;
    out_ctx oc = {c};
    if (has_out && out_one(&oc, ss->t, y, p, o) != OT_OK)
        return OT_ERR_CALLBACK;
    put(sol->ys, rows, j, b, has_out ? o : y);
    if (!sens)
        return OT_OK;
    double *sp = s + n, *ym = sp + rows, *yp = ym + n, *pp = yp + n;
    ot__central_space cs = {1, n, np, rows, yp, ym, pp, sp};
    for (int64_t q = 0; q < ot_solution_nsens(sol); q++) {
        ot_tensor *t = sol->sens[q];
        for (int64_t i = 0; i < n; i++) {
            double before = 0;
            if (ss->ss == 2)
                ot_view_get(ot_tensor_view(t), i, j, b, &before);
            s[i] = (q < np ? ss->dydp[q * n + i] : 0) + before;
        }
        if (has_out && ot__central(out_one, &oc, &cs, ss->t, y, s, p, q < np ? q : np,
                                   NULL, o) != OT_OK)
            return OT_ERR_CALLBACK;
        put(t, rows, j, b, has_out ? o : s);
    }
    return OT_OK;
}

int ot__dose_ss_outputs(const ot__dose_ctx *c, const ot_dose_plan *plan,
                        const ot__dose_lane *lanes, const double *pfull, int sens,
                        ot_solution *sol)
{
    const int64_t n = c->n, npf = c->np + c->nslot;
    const int64_t rows = c->user->out ? c->user->nout : n;
    double *y = malloc((size_t)n * sizeof *y);
    double *w = malloc((size_t)(3 * rows + 4 * n + npf + 1) * sizeof *w);
    int st = y && w ? OT_OK : OT_ERR_NOMEM;
    for (int64_t b = 0; st == OT_OK && b < ot_solution_nbatch(sol); b++) {
        const ot__dose_lane *L = &lanes[b];
        if (ot_solution_lane_status(sol, b) != OT_OK)
            continue;
        for (int64_t m = 0; m < L->nss; m++) {
            const ot__dose_ss *ss = &L->ss[m];
            for (int64_t j = ot__dose_obs_at(plan, b, ss->t, 0); j >= 0;
                 j = ot__dose_obs_at(plan, b, ss->t, j + 1)) {
                /* y-: SS 1 replaces it; SS 2 adds to the output itself (the
                 * state), or with out to the stop's event record, which a
                 * stop at the lane's last output does not have (not taken) */
                int f = OT_OK;
                for (int64_t i = 0; ss->ss == 2 && !c->user->out && i < n; i++)
                    ot_view_get(ot_tensor_view(sol->ys), i, j, b, &y[i]);
                if (ss->ss == 2 && c->user->out &&
                    before_stop(sol, L, b, ss->t, n, y) != 0)
                    f = OT_ERR_VALUE;
                if (f == OT_OK)
                    f = fix_one(c, ss, pfull + b * npf, sol, sens, b, j, y, w);
                if (f != OT_OK) {
                    char msg[240];
                    snprintf(
                        msg, sizeof msg,
                        f == OT_ERR_VALUE
                            ? "the SS 2 observation at t = %g, the subject's last, has "
                              "no state before its stop through an out function (the "
                              "stop is not taken); observe once more after it"
                            : "the out function failed at the steady state's "
                              "observation at t = %g",
                        ss->t);
                    ot_solution_set_lane_status(sol, b, f, msg);
                    break;
                }
            }
        }
    }
    free(y);
    free(w);
    return st;
}

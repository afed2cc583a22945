/* population_doses.c's reference: the records read by column, and the
 * one-compartment oral model's closed form through them, computed from the
 * records themselves (its own ADDL, SS, F, ALAG and infusion arithmetic),
 * not from the library's plan, so that the solve is compared with
 * mathematics. */
#ifndef POPULATION_DOSES_H
#define POPULATION_DOSES_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <odetensor.h>

/* p per subject: [ka (1/h), CL (L/h), V (L), F, ALAG (h)]. */
enum { NP = 5, KA = 0, CL = 1, V = 2, F = 3, LAG = 4 };
#define C_FLOOR 1e-4 /* mg/L: relative errors are of max(|C|, this) */

/* ---- The records, read by column (NULL: the column is absent) ---------- */

typedef struct {
    const double *time, *evid, *amt, *rate, *cmt, *ii, *addl, *ss, *mdv, *dur;
} cols;

static const double *col(const ot_records *r, const char *name)
{
    const double *v = NULL;
    return ot_records_column(r, name, &v) == OT_OK ? v : NULL;
}

/* Column names compare as dosing.h's do: ASCII letters in any case. */
static int same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if ((*a | 0x20) != (*b | 0x20))
            return 0;
    return *a == *b;
}

static double at(const double *c, int64_t row, double missing)
{
    return c == NULL || isnan(c[row - 1]) ? missing : c[row - 1];
}

/* The EVID of a row as dosing.h infers a missing one. */
static int evid_of(const cols *c, int64_t row)
{
    if (c->evid != NULL && !isnan(c->evid[row - 1]))
        return (int)c->evid[row - 1];
    return at(c->amt, row, 0) > 0 || at(c->rate, row, 0) != 0;
}

static int is_obs(const cols *c, int64_t row)
{
    return evid_of(c, row) == 0 && at(c->mdv, row, 0) != 1;
}

/* ---- The closed form, from the records (not from the plan) ------------- */

/* A dose counts at times in [from, until): a steady state at T replaces the
 * state, so the doses before it stop counting at T and the doses of its
 * earlier intervals count from T on. */
typedef struct {
    double t, amount, rate; /* effective start; F AMT or AMT; 0 for a bolus */
    int central;            /* into CMT 2 (else the gut) */
    double from, until;
} dose;

/* The central amount at t from doses (an observation at a dose's time is
 * before it: tau <= 0 adds nothing). */
static double central_at(double t, const dose *d, int64_t nd, const double *q)
{
    const double ka = q[KA], ke = q[CL] / q[V];
    double a = 0;
    for (int64_t k = 0; k < nd; k++) {
        const double tau = t - d[k].t;
        if (tau <= 0 || t < d[k].from || t >= d[k].until)
            continue;
        if (d[k].rate > 0) { /* zero-order into central for amount / rate */
            const double len = d[k].amount / d[k].rate;
            a += d[k].rate / ke * -expm1(-ke * fmin(tau, len)) *
                 exp(-ke * fmax(tau - len, 0));
        } else if (d[k].central) {
            a += d[k].amount * exp(-ke * tau);
        } else { /* Bateman */
            a += d[k].amount * ka / (ka - ke) * (exp(-ke * tau) - exp(-ka * tau));
        }
    }
    return a;
}

/* The doses of the subject on rows row0.. (nrows) into *d (grown as
 * needed): 0; -1 without memory; 1 when the closed form does not cover the
 * subject (resets, modelled rates, DUR, SS 2, an
 * infusion into the gut, ka = ke). A steady state (SS 1) at T replaces
 * what came before by the doses of every earlier interval, at T - k II for
 * k = 1, 2, ... as far back as they still count (e^{-k II} of the slower
 * rate above 1e-17), counting from T on. */
static int doses_of(const cols *c, int64_t row0, int64_t nrows, const double *q, dose **d,
                    int64_t *nd, int64_t *cap, int *has_ss)
{
    *has_ss = 0;
    const double slow = fmin(q[KA], q[CL] / q[V]);
    if (fabs(q[KA] - q[CL] / q[V]) < 1e-6 * q[KA] || c->dur != NULL)
        return 1;
    *nd = 0;
    for (int64_t r = row0; r < row0 + nrows; r++) {
        const int ev = evid_of(c, r);
        if (ev == 0 || ev == 2)
            continue;
        const double amt = at(c->amt, r, 0), rate = at(c->rate, r, 0),
                     ii = at(c->ii, r, 0);
        const int central = at(c->cmt, r, 1) == 2, ss = (int)at(c->ss, r, 0);
        if (ev != 1 || rate < 0 || ss == 2 || (rate > 0 && !central) || (ss && !(ii > 0)))
            return 1;
        const double t0 = c->time[r - 1] + (central ? 0 : q[LAG]);
        const int64_t back = ss ? (int64_t)ceil(39.2 / (slow * ii)) : 0;
        const int64_t addl = (int64_t)at(c->addl, r, 0);
        if (back > 100000)
            return 1;
        *has_ss |= ss;
        const double T = c->time[r - 1];
        for (int64_t k = 0; ss && k < *nd; k++) /* the state at T is replaced */
            if ((*d)[k].t <= T)
                (*d)[k].until = fmin((*d)[k].until, T);
        if (*nd + back + addl + 1 > *cap) {
            const int64_t want = 2 * (*nd + back + addl + 1);
            dose *g = realloc(*d, (size_t)want * sizeof *g);
            if (g == NULL)
                return -1;
            *d = g;
            *cap = want;
        }
        for (int64_t k = -back; k <= addl; k++)
            (*d)[(*nd)++] = (dose){t0 + (double)k * ii,
                                   central ? amt : q[F] * amt,
                                   rate,
                                   central,
                                   k < 0 ? T : -INFINITY,
                                   INFINITY};
    }
    return 0;
}

/* The largest relative error of sol's C against the closed form, worst[0]
 * over the covered subjects without SS, worst[1] over those with SS 1, and
 * how many each; subjects that failed or that the closed form does not
 * cover are left out. @return 0, or -1 without memory. */
static int against_closed_form(const ot_records *rec, const cols *c,
                               const ot_solution *sol, const double *p, double worst[2],
                               int64_t covered[2])
{
    const ot_view ys = ot_tensor_view(ot_solution_ys(sol));
    dose *doses = NULL;
    int64_t ndose = 0, cap = 0;
    worst[0] = worst[1] = 0;
    covered[0] = covered[1] = 0;
    for (int64_t s = 0; s < ot_records_subjects(rec); s++) {
        int64_t row0, n, j = 0;
        int has_ss, why;
        if (ot_solution_lane_status(sol, s) != OT_OK ||
            ot_records_subject(rec, s, NULL, &row0, &n) != OT_OK)
            continue;
        why = doses_of(c, row0, n, p + NP * s, &doses, &ndose, &cap, &has_ss);
        if (why < 0) {
            free(doses);
            return -1;
        }
        if (why > 0)
            continue;
        covered[has_ss]++;
        for (int64_t r = row0; r < row0 + n; r++) {
            if (!is_obs(c, r))
                continue;
            const double want =
                central_at(c->time[r - 1], doses, ndose, p + NP * s) / p[NP * s + V];
            const double got =
                j < ot_solution_lane_count(sol, s) ? ot_view_col_f64(ys, j, s)[0] : NAN;
            const double e = fabs(got - want) / fmax(fabs(want), C_FLOOR);
            worst[has_ss] = isnan(e) ? INFINITY : fmax(worst[has_ss], e);
            j++;
        }
    }
    free(doses);
    return 0;
}

#endif

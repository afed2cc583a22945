/* The kernel solver's roots: each lane's root functions watched over its own
 * accepted steps, with CVODE's rules (cvRootfind in SUNDIALS' cvode.c, read
 * for its behaviour), so that a lane's events are the ones lanes mode
 * reports: a root fires where g_i changes sign between two points (or is
 * zero at the later one) in a direction ot_ode_set_root_directions allows;
 * the crossing is located by the Illinois method on the step's dense output
 * to (|t| + |h|) 100 eps, and reported at the point just past it (where g_i
 * has its new sign or is zero); a root zero at a lane's (re)start stays
 * inactive until it leaves zero. A step's search is split at the lane's
 * output times inside it, as CVODE's ends at an output time, so that a root
 * at an output time lands exactly on it. Recorded events are taken here, on
 * the way; a stopping or handled one ends the search (drive.c takes it). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernel/kernel.h"
#include "kernel/step.h"
#include "kit/events.h"
#include "tensor/tensor_impl.h"

/* g into gout at (t, y) of lane c, by the callback rules for root
 * functions (any nonzero return, or a NaN or Inf, stops the lane).
 * @return 0, or -1 (the lane's cb has the message). */
static int call_root(ot__kgroup *g, int64_t c, double t, const double *y, double *gout)
{
    ot__klane *L = &g->lane[c];
    const ot_ode *ode = g->ode;
    const int64_t nr = ode->nroots;
    if (ot__cb_stopped(&L->cb))
        return -1;
    const ot__cb_lane_state was = ot__cb_lane_at(L->b);
    const int rc = ode->root(t, ot__view_compact(y, g->n, 1),
                             ot__view_compact(g->p + c * g->np, g->np, 1),
                             ot__view_mut_compact(gout, nr, 1), ode->user);
    ot__cb_lane_restore(was);
    if (rc != 0) {
        ot__cb_returned(&L->cb, "root", rc, t, OT__CB_ROOT);
        return -1;
    }
    return ot__cb_finite(&L->cb, "root", "g", gout, nr, 1, L->b, t, OT__CB_ROOT) != 0 ? -1
                                                                                      : 0;
}

static int direction(const ot_ode *ode, int64_t i)
{
    return ode->root_dir ? ode->root_dir[i] : OT_ROOT_BOTH;
}

/* Which active roots fire between lo and hi: a sign change (its fraction
 * |hi / (hi - lo)| into *frac for the largest, whose index goes to *imax)
 * or a zero at hi, each in an allowed direction. @return 1 a sign change,
 * 2 a zero at hi and no sign change, 0 neither. */
static int fires(const ot_ode *ode, const unsigned char *act, const double *lo,
                 const double *hi, int64_t *imax)
{
    double maxfrac = 0;
    int sgnchg = 0, zroot = 0;
    for (int64_t i = 0; i < ode->nroots; i++) {
        if (!act[i] || direction(ode, i) * lo[i] > 0)
            continue;
        if (hi[i] == 0) {
            zroot = 1;
        } else if (lo[i] * hi[i] < 0) {
            const double frac = fabs(hi[i] / (hi[i] - lo[i]));
            if (frac > maxfrac) {
                maxfrac = frac;
                *imax = i;
            }
            sgnchg = 1;
        }
    }
    return sgnchg ? 1 : zroot ? 2 : 0;
}

/* The first crossing in (tlo, thi] of lane c, g at the ends glo and ghi
 * (ghi becomes g at the root): the Illinois method, the root reported at
 * the high end of the last bracket. rootsfound (g->rootsfound) gets +1 for
 * a rising and -1 for a falling root; *trout the time, g->yev the state
 * there. @return 1 found, 0 none, -1 the root function failed. */
static int locate(ot__kgroup *g, int64_t c, double tlo, double *glo, double thi,
                  double *ghi, double *trout)
{
    const ot_ode *ode = g->ode;
    const int64_t nr = ode->nroots;
    const unsigned char *act = g->gact + c * nr;
    const ot__klane *L = &g->lane[c];
    int64_t imax = 0;
    const int first = fires(ode, act, glo, ghi, &imax);
    if (first == 0)
        return 0;
    double *gmid = g->gmid;
    const double ttol = (fabs(L->t) + fabs(L->ctl.h)) * DBL_EPSILON * 100;
    double alph = 1;
    int side = 0, sideprev = -1;
    while (first == 1 && fabs(thi - tlo) > ttol) {
        /* Illinois: a bracket end kept twice in a row weighs less. */
        alph = sideprev != side ? 1 : side == 2 ? 2 * alph : 0.5 * alph;
        double tmid = thi - (thi - tlo) * ghi[imax] / (ghi[imax] - alph * glo[imax]);
        const double span = fabs(thi - tlo), fracint = span / ttol;
        const double fracsub = fracint > 5 ? 0.1 : 0.5 / fracint;
        if (fabs(tmid - tlo) < 0.5 * ttol)
            tmid = tlo + fracsub * (thi - tlo);
        if (fabs(thi - tmid) < 0.5 * ttol)
            tmid = thi - fracsub * (thi - tlo);
        ot__kernel_state_at(g, c, tmid, g->yev);
        if (call_root(g, c, tmid, g->yev, gmid) != 0)
            return -1;
        sideprev = side;
        const int f = fires(ode, act, glo, gmid, &imax);
        if (f == 1) { /* in (tlo, tmid] */
            thi = tmid;
            memcpy(ghi, gmid, (size_t)nr * sizeof *ghi);
            side = 1;
            continue;
        }
        if (f == 2) { /* zero at tmid, no change before it: the root */
            thi = tmid;
            memcpy(ghi, gmid, (size_t)nr * sizeof *ghi);
            break;
        }
        tlo = tmid; /* in (tmid, thi] */
        memcpy(glo, gmid, (size_t)nr * sizeof *glo);
        side = 2;
    }
    *trout = thi;
    ot__kernel_state_at(g, c, thi, g->yev);
    for (int64_t i = 0; i < nr; i++) {
        const int allowed = act[i] && direction(ode, i) * glo[i] <= 0;
        g->rootsfound[i] =
            allowed && (ghi[i] == 0 || glo[i] * ghi[i] < 0) ? (glo[i] > 0 ? -1 : 1) : 0;
    }
    return 1;
}

/* g at a lane's reference point becomes its glo: roots exactly zero there
 * are inactive until they leave zero. */
static void set_reference(ot__kgroup *g, int64_t c, const double *gval)
{
    const int64_t nr = g->ode->nroots;
    memcpy(g->groot + c * nr, gval, (size_t)nr * sizeof *gval);
    for (int64_t i = 0; i < nr; i++)
        g->gact[c * nr + i] = gval[i] != 0;
}

int ot__kernel_roots_restart(ot__kgroup *g, int64_t c)
{
    const ot__klane *L = &g->lane[c];
    if (call_root(g, c, L->t, g->y + c * g->n, g->ghi) != 0)
        return -1;
    set_reference(g, c, g->ghi);
    return 0;
}

/* Whether every fired root only records. */
static int records_only(const ot_ode *ode, const int *rootsfound)
{
    for (int64_t i = 0; i < ode->nroots; i++)
        if (rootsfound[i] && ot__event_action(ode, i) != OT_EVENT_RECORD)
            return 0;
    return 1;
}

int ot__kernel_roots_scan(ot__kgroup *g, int64_t c, double *t_ev)
{
    ot__klane *L = &g->lane[c];
    const ot_ode *ode = g->ode;
    const int64_t nr = ode->nroots;
    double *glo = g->groot + c * nr, *ghi = g->ghi;
    const double *times = ot__plan_times(g->pl, L->b);
    double tlo = L->t;
    int64_t i = L->next;
    for (;;) {
        /* The next piece ends at an output time inside the step, or t1. */
        while (i < L->nt && times[i] <= tlo)
            i++;
        const double thi = i < L->nt && times[i] < L->t1 ? times[i] : L->t1;
        ot__kernel_state_at(g, c, thi, g->yev);
        if (call_root(g, c, thi, g->yev, ghi) != 0)
            return -1;
        double trout = thi;
        const int r = locate(g, c, tlo, glo, thi, ghi, &trout);
        if (r < 0)
            return -1;
        if (r > 0 && !records_only(ode, g->rootsfound)) {
            *t_ev = trout;
            return 1;
        }
        if (r > 0) { /* recorded on the way: the state is unchanged */
            char msg[300];
            int changed = 0;
            const int st =
                ot__event_take(ode, &g->sink->events[L->b], trout, g->rootsfound, g->yev,
                               g->p + c * g->np, L->b, &L->cb, &changed, msg, sizeof msg);
            if (st != OT_OK) { /* max_events or memory: msg says which */
                L->state = OT__KL_FAILED;
                ot__solution_fail_lane(g->sink->sol, L->b, st, msg);
                return -2;
            }
        }
        /* The search goes on from trout (or thi) with g there its reference:
         * a root zero there is inactive until it leaves zero, one that left
         * zero is active from here. */
        set_reference(g, c, ghi);
        tlo = trout;
        if (tlo >= L->t1)
            return 0;
    }
}

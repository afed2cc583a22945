/* Crossings no event reported (issue 23: Zeno events). CVODE finds a root
 * where g changes sign between two steps. A bouncing ball's handler turns
 * its motion back (v = -e v) but leaves it just past the floor (h = -1e-13:
 * where CVODE located the root); once the bounces are shorter than the
 * steps, the ball's return and next fall happen inside one step and no
 * sign change is ever seen: it falls through the floor with OT_OK. This
 * guard judges every handled event of a root with a direction by the
 * motion of g before and after the handler (dg/dt by a difference of g
 * along the rhs):
 * - left at or past the surface, moving back (the bounce): watched; a later
 *   output, step or event that finds it still (or again) past the surface,
 *   now moving further past, when it had time to come out, with no event
 *   of that root between, fails the lane: it went through unseen (a handler
 *   or scheduled stop of the lane ends the watch: it changed the motion);
 * - left at or past the surface, turned to move further past it (a
 *   crossing reported against the motion, "bounced" down): fails at once;
 * - moving on past it as before (a threshold the lane stays beyond), or
 *   back on the other side: nothing to watch;
 * - events of one root closer than the time resolution: fails (Zeno).
 * The user's rhs and root are called directly for this, a few times an
 * event; nothing of the integrator changes, so no result does. */
#include "run/guard.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "kit/events.h"
#include "tensor/tensor_impl.h"

struct ot__guard {
    int64_t n, np, nr, k;
    int fired;               /* a judged root fired at the event being taken */
    signed char *armed;      /* [nr, k]: 1 while the lane must come back first */
    double *t_arm;           /* [nr, k]: when it was armed */
    double *wait;            /* [nr, k]: the time its return takes (|g| / |dg/dt|) */
    double *t_last;          /* [nr, k]: the root's last handled event (NaN: none) */
    double *ym, *f, *yt;     /* [n, k]: the state before the handlers; rhs; a probe */
    double *gm, *dm, *g, *d; /* [nr, k]: g and dg/dt before and after */
};

int ot__guard_new(const ot__unit *u, ot__guard **out)
{
    const ot_ode *ode = u->plan->ode;
    *out = NULL;
    int any = 0;
    for (int64_t r = 0; r < ode->nroots && ode->root_dir; r++)
        any |= ot__event_action(ode, r) == OT_EVENT_HANDLE && ode->root_dir[r] != 0;
    if (!any || u->ops->host_state == NULL)
        return OT_OK;
    ot__guard *g = OT__CALLOC(1, sizeof *g);
    if (g == NULL)
        return OT_ERR_NOMEM;
    g->n = u->n, g->np = u->np, g->nr = ode->nroots, g->k = u->k;
    const size_t nk = (size_t)(g->n * g->k), rk = (size_t)(g->nr * g->k);
    g->armed = OT__CALLOC(rk, 1);
    double **const arrays[11] = {&g->t_arm, &g->wait, &g->t_last, &g->ym, &g->f, &g->yt,
                                 &g->gm,    &g->dm,   &g->g,      &g->d,  NULL};
    const size_t sizes[10] = {rk, rk, rk, nk, nk, nk, rk, rk, rk, rk};
    int ok = g->armed != NULL;
    for (int i = 0; ok && arrays[i]; i++)
        ok = (*arrays[i] = OT__MALLOC(sizes[i] * sizeof(double))) != NULL;
    if (!ok) {
        ot__guard_free(g);
        return OT_ERR_NOMEM;
    }
    for (size_t i = 0; i < rk; i++)
        g->t_last[i] = NAN;
    *out = g;
    return OT_OK;
}

void ot__guard_free(ot__guard *g)
{
    if (g == NULL)
        return;
    OT__FREE_ALL(g->armed, g->t_arm, g->wait, g->t_last, g->ym, g->f, g->yt, g->gm, g->dm,
                 g->g, g->d, g);
}

/* g and dg/dt of every lane at (t, y): the user's root, and a difference of
 * it along the rhs. @return 0, or nonzero when a call failed or gave a
 * non-finite value (the guard then judges nothing). */
static int motion(ot__guard *gd, const ot__unit *u, double t, const double *y, double *g,
                  double *dg)
{
    const ot_ode *ode = u->plan->ode;
    const int64_t n = gd->n, k = gd->k, nr = gd->nr;
    const ot_view p = ot__view_compact(u->p, gd->np, k);
    if (ode->root(t, ot__view_compact(y, n, k), p, ot__view_mut_compact(g, nr, k),
                  ode->user) != 0 ||
        ode->rhs(t, ot__view_compact(y, n, k), p, ot__view_mut_compact(gd->f, n, k),
                 ode->user) != 0)
        return 1;
    if (ode->rhs_explicit) { /* IMEX: the whole rhs, implicit + explicit */
        if (ode->rhs_explicit(t, ot__view_compact(y, n, k), p,
                              ot__view_mut_compact(gd->yt, n, k), ode->user) != 0)
            return 1;
        for (int64_t i = 0; i < n * k; i++)
            gd->f[i] += gd->yt[i];
    }
    /* A step small against t and the state, large against rounding. */
    const double h = sqrt(DBL_EPSILON) * fmax(fabs(t), 1.0) * 1e-3;
    for (int64_t i = 0; i < n * k; i++)
        gd->yt[i] = y[i] + h * gd->f[i];
    if (ode->root(t + h, ot__view_compact(gd->yt, n, k), p,
                  ot__view_mut_compact(dg, nr, k), ode->user) != 0)
        return 1;
    for (int64_t i = 0; i < nr * k; i++) {
        dg[i] = (dg[i] - g[i]) / h;
        if (!isfinite(g[i]) || !isfinite(dg[i]))
            return 1;
    }
    return 0;
}

/* Whether a running lane's handled root with a direction fired: only
 * those are judged (ot__guard_after). */
static int judged_fired(const ot__guard *g, const ot__unit *u)
{
    const ot_ode *ode = u->plan->ode;
    for (int64_t b = 0; b < g->k; b++)
        for (int64_t r = 0; r < g->nr && u->stopped[b] == OT__LANE_RUNNING; r++)
            if (u->rootsfound[b * g->nr + r] != 0 && ode->root_dir && ode->root_dir[r] &&
                ot__event_action(ode, r) == OT_EVENT_HANDLE)
                return 1;
    return 0;
}

void ot__guard_before(ot__guard *g, const ot__unit *u, double t, const double *yd)
{
    if (g == NULL || !(g->fired = judged_fired(g, u)))
        return;
    memcpy(g->ym, yd, (size_t)(g->n * g->k) * sizeof *yd);
    if (motion(g, u, t, g->ym, g->gm, g->dm) != 0)
        memset(g->dm, 0, (size_t)(g->nr * g->k) * sizeof *g->dm);
}

void ot__guard_after(ot__guard *g, ot__unit *u, double t, const double *yd)
{
    if (g == NULL || !g->fired || motion(g, u, t, yd, g->g, g->d) != 0)
        return;
    const ot_ode *ode = u->plan->ode;
    const double resolution = 100 * DBL_EPSILON * fmax(fabs(t), 1.0);
    for (int64_t b = 0; b < g->k; b++)
        for (int64_t r = 0; r < g->nr && u->stopped[b] == OT__LANE_RUNNING; r++) {
            const int64_t i = b * g->nr + r;
            const int dir = ode->root_dir ? ode->root_dir[r] : 0;
            if (u->rootsfound[i] == 0 || dir == 0 ||
                ot__event_action(ode, r) != OT_EVENT_HANDLE)
                continue;
            char msg[300];
            g->armed[i] = 0;
            if (!isnan(g->t_last[i]) && t - g->t_last[i] <= resolution) {
                snprintf(msg, sizeof msg,
                         "root %lld: its handled events pile up at t = %.17g, the last "
                         "two %g apart (Zeno: each bounce shorter than the last); model "
                         "the state at rest (the README's bouncing ball)",
                         (long long)r, t, t - g->t_last[i]);
                ot__run_lane_fails(u, b, OT_ERR_SOLVER, msg);
                continue;
            }
            g->t_last[i] = t;
            /* With dir the sign of the crossing: past the surface is dir g
             * >= 0, moving further past it dir dg/dt > 0. */
            const double past = dir * g->g[i], on = dir * g->d[i],
                         before = dir * g->dm[i];
            if (past < 0) /* back on the other side: nothing to watch */
                continue;
            if (on > 0 && before <= 0) {
                snprintf(msg, sizeof msg,
                         "root %lld: the event handler at t = %.17g turned the lane to "
                         "move further past the root's surface (g = %g, dg/dt %g before, "
                         "%g after): the crossing was against the motion, and the "
                         "lane would go through unseen",
                         (long long)r, t, g->g[i], g->dm[i], g->d[i]);
                ot__run_lane_fails(u, b, OT_ERR_SOLVER, msg);
            } else if (on < 0) { /* moving back: it must come out first */
                g->armed[i] = 1;
                g->t_arm[i] = t;
                g->wait[i] = past / -on;
            }
        }
}

void ot__guard_forget(ot__guard *g, int64_t b)
{
    if (g != NULL)
        memset(g->armed + b * g->nr, 0, (size_t)g->nr);
}

void ot__guard_check(ot__guard *g, ot__unit *u, double t, const double *yd)
{
    if (g == NULL)
        return;
    int any = 0;
    for (int64_t i = 0; i < g->nr * g->k && !any; i++)
        any = g->armed[i];
    if (!any || motion(g, u, t, yd, g->g, g->d) != 0)
        return;
    const ot_ode *ode = u->plan->ode;
    for (int64_t b = 0; b < g->k; b++)
        for (int64_t r = 0; r < g->nr; r++) {
            const int64_t i = b * g->nr + r;
            if (!g->armed[i] || u->stopped[b] != OT__LANE_RUNNING)
                continue;
            /* Not yet due to be out: the check proves nothing. */
            if (t - g->t_arm[i] <= 2 * g->wait[i])
                continue;
            const double past = ode->root_dir[r] * g->g[i],
                         on = ode->root_dir[r] * g->d[i];
            if (past < 0) { /* it came out: watching ends */
                g->armed[i] = 0;
                continue;
            }
            if (on <= 0) /* still on its way back (slowing, say): watch on */
                continue;
            g->armed[i] = 0;
            char msg[360];
            snprintf(msg, sizeof msg,
                     "root %lld: past its surface again at t = %.17g (g = %g) with no "
                     "event since the one at t = %.17g: the lane went through it unseen "
                     "(events pile up, Zeno: each bounce shorter than the last, too "
                     "short for the steps); model the state at rest (the README's "
                     "bouncing ball)",
                     (long long)r, t, g->g[i], g->t_arm[i]);
            ot__run_lane_fails(u, b, OT_ERR_SOLVER, msg);
        }
}

/* The event kit (events.h): recording events, calling the handler, and the
 * event tensors of a solution. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kit/events.h"
#include "core/memory.h"
#include "tensor/tensor_impl.h"

int ot__event_stop_root(const ot_ode *ode, const int *rootsfound)
{
    for (int64_t r = 0; r < ode->nroots; r++)
        if (rootsfound[r] != 0 && ot__event_action(ode, r) == OT_EVENT_STOP)
            return (int)r;
    return -1;
}

int ot__event_call(const ot_ode *ode, double t, int64_t root, int64_t lane, double *y,
                   double *p)
{
    const ot__cb_lane_state was = ot__cb_lane_at(lane); /* lockstep: this lane's */
    const int rc = ode->event_fn(t, (int)root, lane, ot__view_mut_compact(y, ode->n, 1),
                                 ot__view_mut_compact(p, ode->np, 1), ode->user);
    ot__cb_lane_restore(was);
    return rc;
}

/* Calls the handler for root `root` on y (n) and p (np), checked. */
static int handle(const ot_ode *ode, double t, int64_t root, double *y, double *p,
                  int64_t lane, ot__cb *cb)
{
    const int rc = ot__event_call(ode, t, root, lane, y, p);
    if (rc != 0) {
        ot__cb_note(cb, -1, "event handler returned %d at t = %g (root %lld)", rc, t,
                    (long long)root);
        return OT_ERR_CALLBACK;
    }
    if (ot__cb_finite(cb, "event handler", "y", y, ode->n, 1, lane, t, OT__CB_FINAL) !=
            0 ||
        (ode->np > 0 && ot__cb_finite(cb, "event handler", "p", p, ode->np, 1, lane, t,
                                      OT__CB_FINAL) != 0))
        return OT_ERR_CALLBACK;
    return OT_OK;
}

int ot__event_push(const ot_ode *ode, ot__record *r, double t, int64_t root,
                   const double *before, const double *after, char *msg, size_t msg_len)
{
    const int64_t n = ode->n;
    if (r->count >= ode->max_events) {
        snprintf(msg, msg_len,
                 "more than max_events = %lld events at t = %g (ot_ode_set_max_events)",
                 (long long)ode->max_events, t);
        return OT_ERR_SOLVER;
    }
    r->width = ot__event_width(n);
    double *slot = ot__record_push(r, t);
    if (slot == NULL) {
        snprintf(msg, msg_len, "cannot grow the event record past %lld events",
                 (long long)r->count);
        return OT_ERR_NOMEM;
    }
    slot[0] = (double)root;
    memcpy(slot + 1, before, (size_t)n * sizeof *before);
    memcpy(slot + 1 + n, after, (size_t)n * sizeof *after);
    return OT_OK;
}

int ot__event_take_stop(const ot_ode *ode, ot__record *r, double t, int64_t k, double *y,
                        double *p, int64_t lane, char *msg, size_t msg_len)
{
    const int64_t n = ode->n;
    int st = ot__event_push(ode, r, t, -1 - k, y, y, msg, msg_len);
    if (st != OT_OK)
        return st;
    const int rc = ot__event_call(ode, t, -1 - k, lane, y, p);
    ot__cb cb; /* the handler's own: not the lane's callback state */
    ot__cb_reset(&cb);
    if (rc != 0)
        snprintf(msg, msg_len,
                 "event handler returned %d at t = %g (scheduled stop %lld)", rc, t,
                 (long long)k);
    else if (ot__cb_finite(&cb, "event handler", "y", y, n, 1, lane, t, OT__CB_FINAL) ||
             (ode->np > 0 && ot__cb_finite(&cb, "event handler", "p", p, ode->np, 1, lane,
                                           t, OT__CB_FINAL)))
        snprintf(msg, msg_len, "%s", cb.msg);
    memcpy(r->y + (r->count - 1) * r->width + 1 + n, y, (size_t)n * sizeof *y);
    return rc != 0 || cb.failed ? OT_ERR_CALLBACK : OT_OK;
}

int ot__event_take(const ot_ode *ode, ot__record *r, double t, const int *rootsfound,
                   double *y, double *p, int64_t lane, ot__cb *cb, int *changed,
                   char *msg, size_t msg_len)
{
    const int64_t n = ode->n;
    *changed = 0;
    for (int64_t k = 0; k < ode->nroots; k++) {
        const int action = ot__event_action(ode, k);
        if (rootsfound[k] == 0 || action == OT_EVENT_STOP)
            continue;
        /* before: y as it is; after: y once the handler changed it */
        int st = ot__event_push(ode, r, t, k, y, y, msg, msg_len);
        if (st != OT_OK)
            return st;
        if (action == OT_EVENT_HANDLE) {
            if ((st = handle(ode, t, k, y, p, lane, cb)) != OT_OK)
                return st;
            *changed = 1;
            memcpy(r->y + (r->count - 1) * r->width + 1 + n, y, (size_t)n * sizeof *y);
        }
    }
    return OT_OK;
}

int ot__event_gather(const ot__plan *pl, ot_solution *sol, ot__record *events)
{
    const int64_t n = pl->n, nb = pl->nbatch, w = ot__event_width(n);
    int64_t m = 1;
    uint64_t held = 0;
    for (int64_t b = 0; b < nb; b++) {
        m = events[b].count > m ? events[b].count : m;
        held += (uint64_t)events[b].cap * (uint64_t)(w + 1) * sizeof(double);
    }
    /* times, roots, before, after: (2 + 2 n) doubles an event and lane. */
    const char *what = "";
    const uint64_t limit = ot__memory_limit(&what),
                   per = (uint64_t)nb * (uint64_t)(2 + 2 * n) * 8;
    const uint64_t budget = limit > held ? limit - held : 0;
    if ((uint64_t)m > budget / per) {
        const int64_t cap = budget / per > 1 ? (int64_t)(budget / per) : 1;
        for (int64_t b = 0; b < nb; b++)
            if (events[b].count > cap) {
                char msg[200];
                snprintf(
                    msg, sizeof msg,
                    "recorded %lld events: every lane padded to that many would need "
                    "%.3g bytes, more than the %.3g bytes %s; kept its first %lld",
                    (long long)events[b].count, (double)per * (double)events[b].count,
                    (double)budget, what, (long long)cap);
                if (sol->status[b] == OT_OK)
                    ot__solution_fail_lane(sol, b, OT_ERR_NOMEM, msg);
                events[b].count = cap;
            }
        m = cap;
    }
    const int64_t s2[2] = {m, nb}, s3[3] = {n, m, nb};
    int st = OT_OK;
    for (int k = 0; st == OT_OK && k < 4; k++)
        st = ot__tensor_alloc(&sol->events[k], OT_F64, k < 2 ? 2 : 3, k < 2 ? s2 : s3,
                              "events");
    if (st != OT_OK)
        return st;
    double *times = ot_tensor_layout(sol->events[0])->data,
           *roots = ot_tensor_layout(sol->events[1])->data,
           *before = ot_tensor_layout(sol->events[2])->data,
           *after = ot_tensor_layout(sol->events[3])->data;
    for (int64_t b = 0; b < nb; b++) {
        const ot__record *r = &events[b];
        sol->event_count[b] = r->count;
        for (int64_t e = 0; e < m; e++) {
            const int64_t at = b * m + e;
            const double *slot = e < r->count ? r->y + e * w : NULL;
            times[at] = slot ? r->t[e] : NAN;
            roots[at] = slot ? slot[0] : NAN;
            for (int64_t i = 0; i < n; i++) {
                before[at * n + i] = slot ? slot[1 + i] : NAN;
                after[at * n + i] = slot ? slot[1 + n + i] : NAN;
            }
        }
    }
    return OT_OK;
}

/* The callback-failure rules of every driver (see callback.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "odetensor/ode.h"
#include "kit/callback.h"

/* The callbacks' lane index (callback.h): -1 until a solve sets it. */
static _Thread_local ot__cb_lane_state cb_lane = {0, -1};

int64_t ot_callback_lane(void) { return cb_lane.lane; }

ot__cb_lane_state ot__cb_lane_enter(int64_t base, int64_t lane)
{
    const ot__cb_lane_state prev = cb_lane;
    cb_lane.base = base;
    cb_lane.lane = lane;
    return prev;
}

ot__cb_lane_state ot__cb_lane_at(int64_t b)
{
    return ot__cb_lane_enter(cb_lane.base, cb_lane.base + b);
}

void ot__cb_lane_restore(ot__cb_lane_state prev) { cb_lane = prev; }

void ot__cb_poison(double *v, int64_t count)
{
    const uint64_t bits = OT__UNWRITTEN_BITS;
    double nan;
    memcpy(&nan, &bits, sizeof nan);
    for (int64_t k = 0; k < count; k++)
        v[k] = nan;
}

void ot__cb_reset(ot__cb *c)
{
    c->failed = 0;
    c->nan_count = 0;
    c->lane = -1;
    c->msg[0] = c->cv_msg[0] = '\0';
}

int ot__cb_note(ot__cb *c, int rc, const char *fmt, ...)
{
    if (rc < 0)
        c->failed = OT__CB_STOPPED;
    else if (!c->failed)
        c->failed = OT__CB_NOTED;
    c->lane = -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    return rc;
}

int ot__cb_returned(ot__cb *c, const char *name, int rc, double t, ot__cb_kind kind)
{
    if (isnan(t)) /* init: before any time */
        return ot__cb_note(c, -1, "%s returned %d", name, rc);
    return ot__cb_note(
        c, rc < 0 || kind != OT__CB_RETRY ? -1 : 1, "%s returned %d%s at t = %g", name,
        rc,
        rc > 0 && kind == OT__CB_ROOT ? " (a root function cannot ask for a retry)" : "",
        t);
}

int ot__cb_nonfinite(ot__cb *c, const char *name, const char *target, const double *v,
                     int64_t rows, int64_t lanes, int64_t lane0, double t,
                     ot__cb_kind kind)
{
    const int64_t count = rows * lanes;
    int64_t k = 0;
    while (k < count && isfinite(v[k]))
        k++;
    return ot__cb_nonfinite_at(c, name, target, k, k < count ? v[k] : NAN, rows, lane0, t,
                               kind);
}

int ot__cb_nonfinite_at(ot__cb *c, const char *name, const char *target, int64_t k,
                        double value, int64_t rows, int64_t lane0, double t,
                        ot__cb_kind kind)
{
    const long long row = (long long)(k % rows), lane = (long long)(lane0 + k / rows);
    if (ot__cb_unwritten(value))
        return ot__cb_note(c, -1,
                           "%s did not write %s for lane %lld: in OT_LOCKSTEP mode a "
                           "callback gets every lane at once and must write every column "
                           "(loop over b < y.layout.shape[1])",
                           name, target, lane);
    const int rc = kind == OT__CB_RETRY && ++c->nan_count <= OT__NAN_RETRIES ? 1 : -1;
    if (isnan(t)) /* init: before any time */
        ot__cb_note(c, rc, "%s wrote NaN or Inf to %s[%lld] of lane %lld", name, target,
                    row, lane);
    else
        ot__cb_note(c, rc, "%s wrote NaN or Inf at t = %g to %s[%lld] of lane %lld", name,
                    t, target, row, lane);
    c->lane = lane;
    return rc;
}

const char *ot__cb_cause(const ot__cb *c, int *status, const char *what, char *buf,
                         size_t len)
{
    if (c->cancel != NULL && __atomic_load_n(c->cancel, __ATOMIC_RELAXED) != 0 &&
        c->failed != OT__CB_STOPPED &&
        (*status == OT_ERR_SOLVER || *status == OT_ERR_CALLBACK)) {
        /* the solver gave up because every callback now returns -1 */
        *status = OT_ERR_CANCELLED;
        snprintf(buf, len, "cancelled by the progress callback before the lane finished");
    } else if (c->failed && *status == OT_ERR_SOLVER) {
        *status = OT_ERR_CALLBACK;
        snprintf(buf, len, "%s%s%s", c->msg, c->cv_msg[0] ? "; then " : "", c->cv_msg);
    } else {
        snprintf(buf, len, "%s", what);
    }
    return buf;
}

void ot__cb_cvode_error(int code, const char *module, const char *function, char *msg,
                        void *eh_data)
{
    ot__cb *c = eh_data;
    (void)code;
    /* CVodeB reports a backward failure after the backward problem's own
     * message, which says why: keep that one in front. */
    if (strcmp(function, "CVodeB") == 0 && c->cv_msg[0]) {
        char both[2 * sizeof c->cv_msg + 64];
        const int len = snprintf(both, sizeof both, "%s (%s/%s: %.100s)", c->cv_msg,
                                 module, function, msg);
        const size_t keep = len < 0                              ? 0
                            : (size_t)len < sizeof c->cv_msg - 1 ? (size_t)len
                                                                 : sizeof c->cv_msg - 1;
        memcpy(c->cv_msg, both, keep);
        c->cv_msg[keep] = '\0';
        return;
    }
    snprintf(c->cv_msg, sizeof c->cv_msg, "%s/%s: %s", module, function, msg);
}

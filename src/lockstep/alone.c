/* Lockstep: lanes fail alone. A lane whose callback returns < 0, or writes
 * NaN/Inf that does not recover, leaves its block at once: it gets its
 * status and message, stands still from then on (zero derivative and
 * Jacobian block, roots held away from zero, no say in the norm), keeps the
 * outputs it reached, and no callback sees it again; the block goes on
 * with the others in the same step. Which lane failed: a callback called
 * once for the block returns one code for all its lanes, so a failing call
 * is made again lane by lane (the contract: callbacks serve any number of
 * columns); NaN/Inf are found in the lane's own column. A failure no single
 * lane explains (every lane's call succeeds alone, or a callback left
 * columns unwritten) still stops the block. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lockstep/lockstep.h"
#include "tensor/tensor_impl.h"

void ot__lockstep_lane_fails(ot__lockstep *L, int64_t b, int status, const char *msg)
{
    ot__solution_fail_lane(L->unit.sink->sol, L->lane0 + b, status, msg);
    L->stopped[b] = OT__LANE_FAILED;
    L->unit.nfailed++;
    if (L->at)
        L->at[b] = -1; /* no output from it now */
    if (L->be->stopped_changed)
        L->be->stopped_changed(L);
}

int ot__lockstep_run_call(ot__lockstep *L, int64_t b, int64_t len, void *ctx)
{
    const ot__lockstep_cb_call *c = ctx;
    double *out = c->out + b * c->rows;
    return c->fn(c->t, ot__view_compact(c->y + b * L->n, L->n, len),
                 ot__view_compact(c->p + b * L->np, L->np, len),
                 c->blocks ? ot__view_mut_blocks(out, L->n, len)
                           : ot__view_mut_compact(out, c->rows, len),
                 L->plan->ode->user);
}

/* run() over lanes [b0, b0 + len) with ot_callback_lane naming b0. */
static int run_from(ot__lockstep *L, ot__lockstep_run_fn run, int64_t b0, int64_t len,
                    void *ctx)
{
    const ot__cb_lane_state was = ot__cb_lane_at(L->lane0 + b0);
    const int rc = run(L, b0, len, ctx);
    ot__cb_lane_restore(was);
    return rc;
}

static int all_stopped(const ot__lockstep *L)
{
    for (int64_t b = 0; b < L->nbatch; b++)
        if (!L->stopped[b])
            return 0;
    return 1;
}

/* A failure of the block's call (rc), lane by lane: see lockstep.h. */
static int isolate(ot__lockstep *L, const char *name, int rc, double t, ot__cb_kind kind,
                   ot__lockstep_run_fn run, void *ctx)
{
    if (L->unit.sink == NULL) /* before the run */
        return ot__cb_returned(&L->cb, name, rc, t, kind);
    if (rc > 0 && kind == OT__CB_RETRY) {
        /* The block retries; the lanes that asked are counted, so that a
         * lane that never stops asking is the one blamed (loops.c). */
        for (int64_t b = 0; L->retries && b < L->nbatch; b++)
            if (L->stopped[b] != OT__LANE_FAILED && run_from(L, run, b, 1, ctx) > 0)
                L->retries[b]++;
        return ot__cb_returned(&L->cb, name, rc, t, kind);
    }
    int culprits = 0, retry = 0;
    for (int64_t b = 0; b < L->nbatch; b++) {
        if (L->stopped[b] == OT__LANE_FAILED)
            continue;
        const int rb = run_from(L, run, b, 1, ctx);
        if (rb < 0 || (rb > 0 && kind != OT__CB_RETRY)) {
            ot__cb one; /* the message lanes mode gives */
            ot__cb_reset(&one);
            ot__cb_returned(&one, name, rb, t, kind);
            ot__lockstep_lane_fails(L, b, OT_ERR_CALLBACK, one.msg);
            culprits++;
        } else if (rb > 0) {
            retry = 1;
        }
    }
    if (culprits == 0) /* no lane fails alone: the block's failure */
        return ot__cb_returned(&L->cb, name, rc, t, kind);
    return all_stopped(L) ? -1 : retry;
}

int ot__lockstep_call(ot__lockstep *L, const char *name, double t, ot__cb_kind kind,
                      ot__lockstep_run_fn run, void *ctx)
{
    int rc = 0;
    if (L->unit.nfailed == 0) {
        rc = run(L, 0, L->nbatch, ctx);
    } else { /* each run of lanes that have not failed */
        for (int64_t b0 = 0; b0 < L->nbatch;) {
            if (L->stopped[b0] == OT__LANE_FAILED) {
                b0++;
                continue;
            }
            int64_t b1 = b0 + 1;
            while (b1 < L->nbatch && L->stopped[b1] != OT__LANE_FAILED)
                b1++;
            const int r = run_from(L, run, b0, b1 - b0, ctx);
            if (r < 0 || (r > 0 && rc == 0))
                rc = r;
            b0 = b1;
        }
    }
    return rc == 0 ? 0 : isolate(L, name, rc, t, kind, run, ctx);
}

int ot__lockstep_isolate_nonfinite(ot__lockstep *L, const char *name, const char *target,
                                   double *v, int64_t rows, double t, ot__cb_kind kind)
{
    const int rc =
        ot__cb_finite(&L->cb, name, target, v, rows, L->nbatch, L->lane0, t, kind);
    if (rc >= 0 || L->unit.sink == NULL)
        return rc;
    /* Fatal: every running lane with a NaN or Inf leaves, unless a column
     * was left unwritten (a callback written for one lane stops the block). */
    int culprits = 0;
    for (int64_t b = 0; b < L->nbatch; b++) {
        double *col = v + b * rows;
        int64_t k = 0;
        while (k < rows && isfinite(col[k]))
            k++;
        if (L->stopped[b] == OT__LANE_FAILED || k == rows)
            continue;
        if (ot__cb_unwritten(col[k]))
            return rc;
        ot__cb one;
        ot__cb_reset(&one);
        ot__cb_nonfinite_at(&one, name, target, k, col[k], rows, L->lane0 + b, t,
                            OT__CB_FINAL);
        ot__lockstep_lane_fails(L, b, OT_ERR_CALLBACK, one.msg);
        memset(col, 0, (size_t)rows * sizeof *col); /* it stands still */
        culprits++;
    }
    if (culprits == 0)
        return rc;
    /* The failure was those lanes': the block's callbacks go on. */
    L->cb.failed = 0;
    L->cb.nan_count = 0;
    L->cb.msg[0] = '\0';
    return all_stopped(L) ? -1 : 0;
}

/* A solution put together by a layer above the core (solution.h: lanes
 * solved elsewhere): attaching output tensors and setting a lane's status,
 * message, count, root, event count, statistics and checkpoint bytes, each
 * checked so
 * that the solution reads as a solve's would. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/error.h"
#include "solution/solution_impl.h"

/* ---- Output tensors ------------------------------------------------------ */

/* The arguments every attach shares: a solution, a tensor, a free slot. */
static int check_attach(const ot_solution *sol, const ot_tensor *t,
                        ot_tensor *const *slot, const char *name)
{
    if (sol == NULL)
        return ot__fail(OT_ERR_ARG, "%s: sol is NULL", name);
    if (t == NULL)
        return ot__fail(OT_ERR_ARG, "%s: the tensor is NULL", name);
    if (slot != NULL && *slot != NULL)
        return ot__fail(OT_ERR_ARG,
                        "%s: the solution holds one already; take it first "
                        "(ot_solution_take_*)",
                        name);
    return OT_OK;
}

/* f64 in host memory: the times and the gradients, as a solve makes them. */
static int check_f64_host(const ot_tensor *t, const char *name)
{
    const ot_layout *l = ot_tensor_layout(t);
    if (l->dtype != OT_F64)
        return ot__fail(OT_ERR_DTYPE, "%s: must be f64", name);
    if (l->device.type != OT_CPU)
        return ot__fail(OT_ERR_DEVICE, "%s: must be in host memory", name);
    return OT_OK;
}

/* ndim axes, the last nbatch lanes. */
static int check_lanes_last(const ot_solution *sol, const ot_tensor *t, int ndim,
                            const char *name, const char *want)
{
    const ot_layout *l = ot_tensor_layout(t);
    if (l->ndim != ndim || l->shape[ndim - 1] != sol->nbatch)
        return ot__fail(OT_ERR_SHAPE,
                        "%s: %d axes, the last %lld; expected %s with nbatch = %lld "
                        "lanes last",
                        name, l->ndim, (long long)l->shape[l->ndim > 0 ? l->ndim - 1 : 0],
                        want, (long long)sol->nbatch);
    return OT_OK;
}

/* The first of ys and the sensitivities the solution holds, which the
 * others must match; NULL when none. */
static const ot_tensor *first_output(const ot_solution *sol)
{
    if (sol->ys)
        return sol->ys;
    for (int64_t j = 0; j < sol->nsens; j++)
        if (sol->sens[j])
            return sol->sens[j];
    return NULL;
}

/* ys or a sensitivity: [rows, nt, nbatch], the shape, dtype and device of
 * the outputs held already, nt the times' and at least every lane's count. */
static int check_output(const ot_solution *sol, const ot_tensor *t, const char *name)
{
    int st = check_lanes_last(sol, t, 3, name, "[rows, nt, nbatch]");
    const ot_layout *l = ot_tensor_layout(t), *f = NULL;
    if (st == OT_OK && first_output(sol))
        f = ot_tensor_layout(first_output(sol));
    if (st == OT_OK && f &&
        (f->shape[0] != l->shape[0] || f->shape[1] != l->shape[1] ||
         f->dtype != l->dtype || f->device.type != l->device.type ||
         f->device.id != l->device.id))
        return ot__fail(OT_ERR_SHAPE,
                        "%s: [%lld, %lld, %lld] %s; the outputs held are [%lld, %lld, "
                        "%lld] %s on the same device",
                        name, (long long)l->shape[0], (long long)l->shape[1],
                        (long long)l->shape[2], l->dtype == OT_F32 ? "f32" : "f64",
                        (long long)f->shape[0], (long long)f->shape[1],
                        (long long)f->shape[2], f->dtype == OT_F32 ? "f32" : "f64");
    if (st == OT_OK && sol->ts && ot_tensor_layout(sol->ts)->shape[0] != l->shape[1])
        return ot__fail(OT_ERR_SHAPE, "%s: nt is %lld, but ts holds %lld times", name,
                        (long long)l->shape[1],
                        (long long)ot_tensor_layout(sol->ts)->shape[0]);
    for (int64_t b = 0; st == OT_OK && b < sol->nbatch; b++)
        if (sol->count[b] > l->shape[1])
            return ot__fail(OT_ERR_SHAPE, "%s: nt is %lld, but lane %lld's count is %lld",
                            name, (long long)l->shape[1], (long long)b,
                            (long long)sol->count[b]);
    return st;
}

int ot_solution_attach_ts(ot_solution *sol, ot_tensor *ts)
{
    int st = check_attach(sol, ts, sol ? &sol->ts : NULL, "ts");
    if (st != OT_OK)
        return st;
    const ot_layout *l = ot_tensor_layout(ts);
    if (l->ndim != 1 && (l->ndim != 2 || l->shape[1] != sol->nbatch))
        return ot__fail(OT_ERR_SHAPE,
                        "ts: %d axes, the last %lld; expected [nt] (every lane) or "
                        "[nt, nbatch = %lld] (per lane)",
                        l->ndim, (long long)l->shape[l->ndim > 0 ? l->ndim - 1 : 0],
                        (long long)sol->nbatch);
    st = check_f64_host(ts, "ts");
    const ot_tensor *f = st == OT_OK ? first_output(sol) : NULL;
    if (f && ot_tensor_layout(f)->shape[1] != l->shape[0])
        st = ot__fail(OT_ERR_SHAPE, "ts: %lld times, but the outputs held have nt = %lld",
                      (long long)l->shape[0], (long long)ot_tensor_layout(f)->shape[1]);
    if (st == OT_OK)
        sol->ts = ts;
    return st;
}

int ot_solution_attach_ys(ot_solution *sol, ot_tensor *ys)
{
    int st = check_attach(sol, ys, sol ? &sol->ys : NULL, "ys");
    if (st == OT_OK)
        st = check_output(sol, ys, "ys");
    if (st == OT_OK)
        sol->ys = ys;
    return st;
}

int ot_solution_attach_sens(ot_solution *sol, int64_t j, ot_tensor *sens)
{
    int st = check_attach(sol, sens, NULL, "sens");
    if (st == OT_OK && (j < 0 || j >= sol->nsens))
        return ot__fail(OT_ERR_ARG,
                        "sens: j is %lld; the solution has room for %lld sensitivities "
                        "(ot_solution_new's nsens)",
                        (long long)j, (long long)sol->nsens);
    if (st == OT_OK)
        st = check_attach(sol, sens, &sol->sens[j], "sens");
    if (st == OT_OK)
        st = check_output(sol, sens, "sens");
    if (st == OT_OK)
        sol->sens[j] = sens;
    return st;
}

int ot_solution_attach_grad_tensor(ot_solution *sol, int which, ot_tensor *grad)
{
    static const char *const name[3] = {"OT_GRAD_LOSS", "OT_GRAD_PARAMS", "OT_GRAD_Y0"};
    int st = check_attach(sol, grad, NULL, "grad");
    if (st == OT_OK && (which < 0 || which > 2))
        return ot__fail(OT_ERR_ARG,
                        "grad: which is %d; use OT_GRAD_LOSS, OT_GRAD_PARAMS or "
                        "OT_GRAD_Y0",
                        which);
    if (st == OT_OK)
        st = check_attach(sol, grad, &sol->grads[which], name[which]);
    if (st == OT_OK)
        st = which == OT_GRAD_LOSS
                 ? check_lanes_last(sol, grad, 1, name[which], "[nbatch]")
                 : check_lanes_last(sol, grad, 2, name[which],
                                    which == OT_GRAD_PARAMS ? "[np, nbatch]"
                                                            : "[n, nbatch]");
    if (st == OT_OK)
        st = check_f64_host(grad, name[which]);
    if (st == OT_OK)
        sol->grads[which] = grad;
    return st;
}

/* The m of the event tensors held, or -1 when none. */
static int64_t events_m(const ot_solution *sol)
{
    for (int k = 0; k < 4; k++)
        if (sol->events[k])
            return ot_tensor_layout(sol->events[k])->shape[k < 2 ? 0 : 1];
    return -1;
}

int ot_solution_attach_event_tensor(ot_solution *sol, int which, ot_tensor *ev)
{
    static const char *const name[4] = {"OT_EVENT_TIMES", "OT_EVENT_ROOTS",
                                        "OT_EVENT_BEFORE", "OT_EVENT_AFTER"};
    int st = check_attach(sol, ev, NULL, "event");
    if (st == OT_OK && (which < 0 || which > 3))
        return ot__fail(OT_ERR_ARG,
                        "event: which is %d; use OT_EVENT_TIMES, OT_EVENT_ROOTS, "
                        "OT_EVENT_BEFORE or OT_EVENT_AFTER",
                        which);
    if (st == OT_OK)
        st = check_attach(sol, ev, &sol->events[which], name[which]);
    const int state = which >= OT_EVENT_BEFORE;
    if (st == OT_OK)
        st = check_lanes_last(sol, ev, state ? 3 : 2, name[which],
                              state ? "[n, m, nbatch]" : "[m, nbatch]");
    if (st == OT_OK)
        st = check_f64_host(ev, name[which]);
    const ot_layout *l = ot_tensor_layout(ev);
    const int64_t m = st == OT_OK ? l->shape[state] : 0, held = events_m(sol);
    if (st == OT_OK && held >= 0 && held != m)
        return ot__fail(OT_ERR_SHAPE,
                        "%s: m is %lld, but the event tensors held have %lld",
                        name[which], (long long)m, (long long)held);
    if (st == OT_OK && state)
        for (int k = OT_EVENT_BEFORE; k <= OT_EVENT_AFTER; k++)
            if (sol->events[k] &&
                ot_tensor_layout(sol->events[k])->shape[0] != l->shape[0])
                return ot__fail(OT_ERR_SHAPE, "%s: %lld states, but %s has %lld",
                                name[which], (long long)l->shape[0], name[k],
                                (long long)ot_tensor_layout(sol->events[k])->shape[0]);
    if (st == OT_OK && sol->event_count == NULL &&
        (sol->event_count =
             OT__CALLOC((size_t)sol->nbatch + 1, sizeof *sol->event_count)) == NULL)
        return ot__fail(OT_ERR_NOMEM, "%s: cannot allocate %lld lanes' event counts",
                        name[which], (long long)sol->nbatch);
    if (st == OT_OK)
        sol->events[which] = ev;
    return st;
}

/* ---- A lane's results ---------------------------------------------------- */

int ot_solution_set_lane_status(ot_solution *sol, int64_t b, int status,
                                const char *message)
{
    const char *fn = "ot_solution_set_lane_status";
    int st = ot__solution_check_lane(sol, b, fn);
    if (st != OT_OK)
        return st;
    const int has_msg = message != NULL && message[0] != '\0';
    if (!ot__status_known(status))
        return ot__fail(OT_ERR_ARG, "%s: status is %d, not a code of odetensor/status.h",
                        fn, status);
    if (status == OT_OK && has_msg)
        return ot__fail(OT_ERR_ARG,
                        "%s: message given with OT_OK; a lane that succeeded has none",
                        fn);
    sol->status[b] = status;
    if (ot__solution_message(sol, b, message) != OT_OK)
        return ot__fail(OT_ERR_NOMEM,
                        "%s: cannot copy lane %lld's message (its status is set)", fn,
                        (long long)b);
    return OT_OK;
}

int ot_solution_set_lane_count(ot_solution *sol, int64_t b, int64_t count)
{
    const char *fn = "ot_solution_set_lane_count";
    int st = ot__solution_check_lane(sol, b, fn);
    if (st != OT_OK)
        return st;
    const int64_t nt = sol->ys ? ot_tensor_layout(sol->ys)->shape[1] : INT64_MAX;
    if (count < 0 || count > nt)
        return ot__fail(OT_ERR_VALUE, "%s: count is %lld; must be in 0..%lld%s", fn,
                        (long long)count, (long long)nt, sol->ys ? " (ys' nt)" : "");
    sol->count[b] = count;
    return OT_OK;
}

int ot_solution_set_lane_root(ot_solution *sol, int64_t b, int index, double time)
{
    const char *fn = "ot_solution_set_lane_root";
    int st = ot__solution_check_lane(sol, b, fn);
    if (st != OT_OK)
        return st;
    if (sol->root_index == NULL)
        return ot__fail(OT_ERR_ARG,
                        "%s: the solution has no roots (ot_solution_new's with_roots "
                        "is 0)",
                        fn);
    if (index < -1)
        return ot__fail(OT_ERR_VALUE, "%s: index is %d; -1 (none) or a root function", fn,
                        index);
    if (index >= 0 ? !isfinite(time) : !isnan(time))
        return ot__fail(OT_ERR_VALUE,
                        "%s: time is %g with index %d; a root has a finite time, "
                        "index -1 (none) has NaN",
                        fn, time, index);
    sol->root_index[b] = index;
    sol->root_time[b] = time;
    return OT_OK;
}

int ot_solution_set_lane_stats(ot_solution *sol, int64_t b, const ot_lane_stats *stats)
{
    const char *fn = "ot_solution_set_lane_stats";
    int st = ot__solution_check_lane(sol, b, fn);
    if (st != OT_OK)
        return st;
    if (stats == NULL)
        return ot__fail(OT_ERR_ARG, "%s: stats is NULL", fn);
    sol->stats[b] = *stats;
    return OT_OK;
}

int ot_solution_set_lane_adjoint_bytes(ot_solution *sol, int64_t b, int64_t bytes)
{
    const char *fn = "ot_solution_set_lane_adjoint_bytes";
    int st = ot__solution_check_lane(sol, b, fn);
    if (st != OT_OK)
        return st;
    if (bytes < 0)
        return ot__fail(OT_ERR_VALUE, "%s: bytes is %lld; must be >= 0", fn,
                        (long long)bytes);
    /* Made at the first lane that has any (0 reads as 0 without it), under
     * the lock: lanes may be set from several threads. */
    pthread_mutex_lock(&sol->lock);
    if (sol->adj_bytes == NULL && bytes > 0)
        sol->adj_bytes = OT__CALLOC((size_t)sol->nbatch, sizeof *sol->adj_bytes);
    int64_t *table = sol->adj_bytes;
    pthread_mutex_unlock(&sol->lock);
    if (table == NULL && bytes > 0)
        return ot__fail(OT_ERR_NOMEM, "%s: cannot allocate %lld lanes' bytes", fn,
                        (long long)sol->nbatch);
    if (table)
        table[b] = bytes;
    return OT_OK;
}

int ot_solution_set_lane_event_count(ot_solution *sol, int64_t b, int64_t count)
{
    const char *fn = "ot_solution_set_lane_event_count";
    int st = ot__solution_check_lane(sol, b, fn);
    if (st != OT_OK)
        return st;
    const int64_t m = events_m(sol);
    if (m < 0)
        return ot__fail(OT_ERR_ARG,
                        "%s: the solution holds no event tensor; attach them first "
                        "(ot_solution_attach_event_tensor)",
                        fn);
    if (count < 0 || count > m)
        return ot__fail(OT_ERR_VALUE,
                        "%s: count is %lld; must be in 0..%lld (the event tensors' m)",
                        fn, (long long)count, (long long)m);
    sol->event_count[b] = count;
    return OT_OK;
}

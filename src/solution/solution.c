/* The solution: owned outputs, per-lane status, messages and statistics. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "solution/solution_impl.h"

int ot_solution_new(ot_solution **out, int64_t nbatch, int64_t nsens, int with_roots)
{
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "ot_solution_new: out is NULL");
    if (nbatch < 0 || nsens < 0)
        return ot__fail(OT_ERR_VALUE, "ot_solution_new: %s is %lld; must be >= 0",
                        nbatch < 0 ? "nbatch" : "nsens",
                        (long long)(nbatch < 0 ? nbatch : nsens));
    if (with_roots != 0 && with_roots != 1)
        return ot__fail(OT_ERR_ARG,
                        "ot_solution_new: with_roots is %d; use 0 (no root functions) "
                        "or 1",
                        with_roots);
    /* Every per-lane array, the message table included, in size_t (wasm32's
     * is 32 bits). */
    const size_t per_lane = sizeof(int) + sizeof(int64_t) + sizeof(ot_lane_stats) +
                            sizeof(char *) + sizeof(int64_t) + sizeof(int) +
                            sizeof(double);
    if ((uint64_t)nbatch > SIZE_MAX / per_lane ||
        (uint64_t)nsens > SIZE_MAX / sizeof(ot_tensor *))
        return ot__fail(OT_ERR_OVERFLOW,
                        "ot_solution_new: %lld lanes, %lld sensitivities overflow the "
                        "address space",
                        (long long)nbatch, (long long)nsens);
    ot_solution *s = OT__CALLOC(1, sizeof *s);
    if (s == NULL)
        return ot__fail(OT_ERR_NOMEM, "solution: cannot allocate");
    pthread_mutex_init(&s->lock, NULL);
    /* One element at least, so that 0 lanes (a rank that owns none) is no
     * failed allocation. */
    const size_t lanes = nbatch > 0 ? (size_t)nbatch : 1;
    s->nbatch = nbatch;
    s->nsens = nsens;
    s->status = OT__CALLOC(lanes, sizeof *s->status);
    s->count = OT__CALLOC(lanes, sizeof *s->count);
    if (with_roots) { /* 12 bytes a lane, only for problems with events */
        s->root_index = OT__MALLOC(lanes * sizeof *s->root_index);
        s->root_time = OT__MALLOC(lanes * sizeof *s->root_time);
    }
    s->stats = OT__CALLOC(lanes, sizeof *s->stats);
    s->sens = nsens ? OT__CALLOC((size_t)nsens, sizeof *s->sens) : NULL;
    if (!s->status || !s->count || (with_roots && (!s->root_index || !s->root_time)) ||
        !s->stats || (nsens && !s->sens)) {
        ot_solution_free(s);
        return ot__fail(OT_ERR_NOMEM,
                        "solution: cannot allocate per-lane data for %lld lanes",
                        (long long)nbatch);
    }
    for (int64_t b = 0; with_roots && b < nbatch; b++) {
        s->root_index[b] = -1;
        s->root_time[b] = NAN;
    }
    *out = s;
    return OT_OK;
}

int ot__solution_message(ot_solution *sol, int64_t b, const char *msg)
{
    const int none = msg == NULL || msg[0] == '\0';
    /* The message table exists only once a lane has a message (8 bytes a
     * lane); workers may fail lanes at the same time. */
    pthread_mutex_lock(&sol->lock);
    if (none && sol->message == NULL) {
        pthread_mutex_unlock(&sol->lock);
        return OT_OK;
    }
    if (sol->message == NULL)
        sol->message = OT__CALLOC((size_t)sol->nbatch, sizeof *sol->message);
    pthread_mutex_unlock(&sol->lock);
    if (sol->message == NULL)
        return OT_ERR_NOMEM; /* the message stays "" */
    free(sol->message[b]);
    sol->message[b] = NULL;
    if (none)
        return OT_OK;
    const size_t len = strnlen(msg, 255);
    sol->message[b] = OT__MALLOC(len + 1);
    if (sol->message[b] == NULL)
        return OT_ERR_NOMEM;
    memcpy(sol->message[b], msg, len);
    sol->message[b][len] = '\0';
    return OT_OK;
}

void ot__solution_fail_lane(ot_solution *sol, int64_t b, int status, const char *msg)
{
    sol->status[b] = status;
    (void)ot__solution_message(sol, b, msg); /* out of memory: the status stays */
}

void ot_solution_free(ot_solution *sol)
{
    if (sol == NULL)
        return;
    ot_tensor_free(sol->ts);
    ot_tensor_free(sol->ys);
    for (int k = 0; k < 4; k++)
        ot_tensor_free(sol->events[k]);
    free(sol->event_count);
    for (int k = 0; k < 3; k++)
        ot_tensor_free(sol->grads[k]);
    free(sol->adj_bytes);
    for (int64_t j = 0; sol->sens && j < sol->nsens; j++)
        ot_tensor_free(sol->sens[j]);
    if (sol->message)
        for (int64_t b = 0; b < sol->nbatch; b++)
            free(sol->message[b]);
    pthread_mutex_destroy(&sol->lock);
    OT__FREE_ALL(sol->sens, sol->status, sol->message, sol->count, sol->root_index,
                 sol->root_time, sol->stats, sol);
}

int64_t ot_solution_nbatch(const ot_solution *sol) { return sol ? sol->nbatch : 0; }
int64_t ot_solution_nsens(const ot_solution *sol) { return sol ? sol->nsens : 0; }

int64_t ot_solution_nfailed(const ot_solution *sol)
{
    int64_t n = 0;
    for (int64_t b = 0; sol && b < sol->nbatch; b++)
        n += sol->status[b] != OT_OK;
    return n;
}

const ot_tensor *ot_solution_ts(const ot_solution *sol) { return sol ? sol->ts : NULL; }
const ot_tensor *ot_solution_ys(const ot_solution *sol) { return sol ? sol->ys : NULL; }

const ot_tensor *ot_solution_sens(const ot_solution *sol, int64_t j)
{
    return sol && j >= 0 && j < sol->nsens ? sol->sens[j] : NULL;
}

/* Moves *slot out to the caller. */
static ot_tensor *take(ot_tensor **slot)
{
    ot_tensor *t = *slot;
    *slot = NULL;
    return t;
}

ot_tensor *ot_solution_take_ts(ot_solution *sol) { return sol ? take(&sol->ts) : NULL; }
ot_tensor *ot_solution_take_ys(ot_solution *sol) { return sol ? take(&sol->ys) : NULL; }

ot_tensor *ot_solution_take_sens(ot_solution *sol, int64_t j)
{
    return sol && j >= 0 && j < sol->nsens ? take(&sol->sens[j]) : NULL;
}

const ot_tensor *ot_solution_event_tensor(const ot_solution *sol, int which)
{
    return sol && which >= 0 && which < 4 ? sol->events[which] : NULL;
}

ot_tensor *ot_solution_take_event_tensor(ot_solution *sol, int which)
{
    return sol && which >= 0 && which < 4 ? take(&sol->events[which]) : NULL;
}

const ot_tensor *ot_solution_grad_tensor(const ot_solution *sol, int which)
{
    return sol && which >= 0 && which < 3 ? sol->grads[which] : NULL;
}

ot_tensor *ot_solution_take_grad_tensor(ot_solution *sol, int which)
{
    return sol && which >= 0 && which < 3 ? take(&sol->grads[which]) : NULL;
}

int64_t ot_solution_lane_adjoint_bytes(const ot_solution *sol, int64_t b)
{
    return sol && sol->adj_bytes && b >= 0 && b < sol->nbatch ? sol->adj_bytes[b] : 0;
}

int64_t ot_solution_lane_event_count(const ot_solution *sol, int64_t b)
{
    return sol && sol->event_count && b >= 0 && b < sol->nbatch ? sol->event_count[b] : 0;
}

int ot__solution_check_lane(const ot_solution *sol, int64_t b, const char *fn)
{
    if (sol == NULL)
        return ot__fail(OT_ERR_ARG, "%s: sol is NULL", fn);
    if (b < 0 || b >= sol->nbatch)
        return ot__fail(OT_ERR_ARG, "%s: lane %lld is outside 0..%lld", fn, (long long)b,
                        (long long)sol->nbatch - 1);
    return OT_OK;
}

int ot_solution_lane_status(const ot_solution *sol, int64_t b)
{
    int st = ot__solution_check_lane(sol, b, "ot_solution_lane_status");
    return st != OT_OK ? st : sol->status[b];
}

const char *ot_solution_lane_message(const ot_solution *sol, int64_t b)
{
    if (ot__solution_check_lane(sol, b, "ot_solution_lane_message") != OT_OK)
        return "";
    if (sol->message && sol->message[b])
        return sol->message[b];
    /* A lane out of memory whose message found none either still says so. */
    return sol->status[b] == OT_ERR_NOMEM ? "out of memory (no memory to store more)"
                                          : "";
}

int64_t ot_solution_lane_count(const ot_solution *sol, int64_t b)
{
    if (ot__solution_check_lane(sol, b, "ot_solution_lane_count") != OT_OK)
        return 0;
    return sol->count[b];
}

int ot_solution_lane_root(const ot_solution *sol, int64_t b, int *index, double *time)
{
    int st = ot__solution_check_lane(sol, b, "ot_solution_lane_root");
    if (st != OT_OK)
        return st;
    if (index)
        *index = sol->root_index ? sol->root_index[b] : -1;
    if (time)
        *time = sol->root_time ? sol->root_time[b] : NAN;
    return OT_OK;
}

int ot_solution_lane_stats(const ot_solution *sol, int64_t b, ot_lane_stats *out)
{
    int st = ot__solution_check_lane(sol, b, "ot_solution_lane_stats");
    if (st != OT_OK)
        return st;
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "ot_solution_lane_stats: out is NULL");
    *out = sol->stats[b];
    return OT_OK;
}

/* Private: the solution struct the drivers fill. */
#ifndef OT_SRC_SOLUTION_IMPL_H
#define OT_SRC_SOLUTION_IMPL_H

#include <pthread.h>

#include "odetensor/solution.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ot_solution {
    int64_t nbatch, nsens;
    ot_tensor *ts, *ys;
    ot_tensor **sens;     /* [nsens] */
    int *status;          /* [nbatch] */
    char **message;       /* [nbatch], made at the first failure; NULL entries mean "" */
    pthread_mutex_t lock; /* guards making the message table */
    int64_t *count;       /* [nbatch] */
    int *root_index;      /* [nbatch], or NULL without root functions */
    double *root_time;
    ot_lane_stats *stats;
    /* Recorded events (issue 14), or NULLs when no root records events:
     * OT_EVENT_TIMES, _ROOTS [m, nbatch], _BEFORE, _AFTER [n, m, nbatch]. */
    ot_tensor *events[4];
    int64_t *event_count; /* [nbatch] */
    /* ot_solve_adjoint: OT_GRAD_LOSS [nbatch], _PARAMS [np, nbatch], _Y0
     * [n, nbatch], and each lane's checkpoint bytes [nbatch]; else NULLs. */
    ot_tensor *grads[3];
    int64_t *adj_bytes;
};

/* Stores lane b's failure: status and a copy of msg (truncated to 255 chars;
 * an allocation failure keeps the status with an empty message). Workers
 * fail lanes from several threads at once, one thread a lane. */
void ot__solution_fail_lane(ot_solution *sol, int64_t b, int status, const char *msg);

/* OT_OK, or OT_ERR_ARG naming fn when sol is NULL or b is not one of its
 * lanes: the lane argument of every public per-lane call. */
int ot__solution_check_lane(const ot_solution *sol, int64_t b, const char *fn);

/* Lane b's message: a copy of msg (truncated to 255 chars), or none for
 * NULL or "". @return OT_OK, or OT_ERR_NOMEM (the message then ""), with no
 * message set: the caller says what failed. */
int ot__solution_message(ot_solution *sol, int64_t b, const char *msg);

#ifdef __cplusplus
}
#endif

#endif

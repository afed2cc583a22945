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

/* These two are exported (OT_API) for libodetensor_mpi.so, which assembles
 * solutions from lanes solved on other ranks.
 * A solution with per-lane arrays for nbatch lanes and room for nsens
 * sensitivity tensors, every lane OT_OK, no root; tensors NULL. The root
 * arrays exist only with_roots (NULL otherwise: no lane can have one).
 * Ownership: *out is the caller's (ot_solution_free). */
OT_API int ot__solution_new(ot_solution **out, int64_t nbatch, int64_t nsens,
                            int with_roots);

/* Stores lane b's failure: status and a copy of msg (truncated to 255 chars;
 * an allocation failure keeps the status with an empty message). */
OT_API void ot__solution_fail_lane(ot_solution *sol, int64_t b, int status,
                                   const char *msg);

#ifdef __cplusplus
}
#endif

#endif

/* Private: what the layers above the core (libodetensor_mpi) may use of the
 * solve layer, instead of its structs. Exported (OT_API) from libodetensor
 * for libodetensor_mpi.so; not part of the public API. */
#ifndef OT_SRC_SOLVE_SOLVE_API_H
#define OT_SRC_SOLVE_SOLVE_API_H

#include "odetensor/ode.h"
#include "odetensor/solution.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A progress hook given to one solve in place of the problem's. */
typedef struct {
    ot_progress_fn fn; /* NULL: none */
    void *user;
} ot__progress;

/* ot_solve_dense (sens 0) or ot_solve_fwd_sens (sens 1), with progress
 * reported to `progress` instead of the problem's own hook, for lanes that
 * are lanes lane_offset, lane_offset + 1, ... of the caller's batch: what
 * ot_callback_lane reports in callbacks (0 for a batch of its own).
 * Ownership and returns as those. */
OT_API int ot__solve_at_times(const ot_ode *ode, ot_view y0, ot_view params,
                              ot_view t_eval, int sens, ot__progress progress,
                              int64_t lane_offset, ot_solution **out);

/* ot_solve_adjoint, with progress reported to `progress` and lane_offset as
 * in ot__solve_at_times. Ownership and returns as that. */
OT_API int ot__solve_adjoint_at(const ot_ode *ode, ot_view y0, ot_view params,
                                ot_view t_eval, const ot_loss *loss,
                                ot__progress progress, int64_t lane_offset,
                                ot_solution **out);

#ifdef __cplusplus
}
#endif

#endif

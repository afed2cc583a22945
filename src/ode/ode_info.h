/* Private: what the layers above the core (libodetensor_mpi) may read of a
 * problem, instead of its struct. Exported (OT_API) from libodetensor. */
#ifndef OT_SRC_ODE_ODE_INFO_H
#define OT_SRC_ODE_ODE_INFO_H

#include <stdint.h>

#include "odetensor/ode.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int64_t n, np, nout, nroots;
    int64_t nsens; /* ot_solve_fwd_sens' sensitivities: np, + n with sens_initial */
    int64_t rows;  /* rows of an output: nout with an out function, else n */
    int mode, threads, out_dtype;
    int has_init, outputs_on_device; /* outputs kept on a CUDA device */
    int records_events;              /* a root records or handles events (issue 14) */
    double t0;
    /* A hash of every option that can change a lane's result: sizes,
     * method, mode, tolerances (atol vector included), t0, steps, device,
     * and which callbacks are set (by presence: addresses differ between
     * processes). Two problems built the same way hash the same. */
    uint64_t fingerprint;
} ot__ode_info;

/* Describes ode into *info. @return OT_OK, or OT_ERR_ARG when either is
 * NULL. */
OT_API int ot__ode_describe(const ot_ode *ode, ot__ode_info *info);

#ifdef __cplusplus
}
#endif

#endif

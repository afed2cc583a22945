/* Private: LU with partial pivoting of one dense column-major n x n block,
 * and the solve with it, for host code and CUDA kernels alike (OT__HD):
 * lockstep's block LU on the CPU and on the device, and any solver that
 * factors a lane's own matrix. */
#ifndef OT_SRC_KIT_LU_H
#define OT_SRC_KIT_LU_H

#include <math.h>
#include <sundials/sundials_types.h>

#include "core/host_device.h"
#include "odetensor/kernel.h"

/* LU with partial pivoting of one column-major n x n block a, in place, and
 * the solve with it, on SUNDIALS' types: odetensor/kernel.h's one body (the
 * operations of SUNDlsMat_denseGETRF/GETRS in the same order, so one lane
 * of lockstep stays bit-identical to lanes mode) with sunindextype pivots,
 * which lockstep hands to SUNDlsMat_denseGETRS too. ot__lu_factor returns
 * 0, or k + 1 when pivot k is zero; ot__lu_solve makes b = A^-1 b. */
OT_KERNEL_DEFINE_LU(static inline OT__HD, sunindextype, ot__lu_factor, ot__lu_solve)

#endif

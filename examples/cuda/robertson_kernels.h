/* Robertson kinetics as device callbacks for odetensor's CUDA lockstep: host
 * functions with odetensor's callback signatures that launch one kernel
 * each over all lanes. Shared by the GPU example, tests and benchmark. */
#ifndef OT_ROBERTSON_KERNELS_H
#define OT_ROBERTSON_KERNELS_H

#include <odetensor.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y [3, nb], p [3, nb] = (k1, k2, k3) per lane, device memory. */
int robertson_rhs_gpu(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user);
int robertson_jac_gpu(double t, ot_view y, ot_view p, ot_view_mut J, void *user);

/* The same model on the host, looping over the lanes it gets (any mode). */
int robertson_rhs_cpu(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user);
int robertson_jac_cpu(double t, ot_view y, ot_view p, ot_view_mut J, void *user);

#ifdef __cplusplus
}
#endif

#endif

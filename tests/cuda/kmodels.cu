/* tests/kmodels.h's models built by nvcc (check_cuda's compiled-model
 * tests): each model's lane loop is also a CUDA kernel here, and its host
 * function the CPU's, from the one source (km_rober_model, km_vdp_model,
 * km_decay_model). */
#include "../kmodels.h"

#define OT_KM_NAME km_rober
#define OT_KM_N 3
#define OT_KM_NP 3
#define OT_KM_RHS km_rober_rhs
#define OT_KM_JAC km_rober_jac
#include <odetensor/kernel_model.inc>
#undef OT_KM_NAME
#undef OT_KM_N
#undef OT_KM_NP
#undef OT_KM_RHS
#undef OT_KM_JAC

#define OT_KM_NAME km_vdp
#define OT_KM_N 2
#define OT_KM_NP 1
#define OT_KM_RHS km_vdp_rhs
#include <odetensor/kernel_model.inc>
#undef OT_KM_NAME
#undef OT_KM_N
#undef OT_KM_NP
#undef OT_KM_RHS

#define OT_KM_NAME km_decay
#define OT_KM_N 1
#define OT_KM_NP 3
#define OT_KM_RHS km_decay_rhs
#include <odetensor/kernel_model.inc>

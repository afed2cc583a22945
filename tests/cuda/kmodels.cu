/* tests/kmodels.h's models built by nvcc (check_cuda's compiled-model
 * tests): each model's lane loop is also a CUDA kernel here, and its host
 * function the CPU's, from the one source (km_rober_model, km_vdp_model,
 * km_decay_model, km_twodecay_model). */
#include "../kmodels.inc"

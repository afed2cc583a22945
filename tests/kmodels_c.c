/* tests/kmodels.h's models compiled into the kernel methods as C: the
 * CPU's lane loop (km_rober_model, km_vdp_model, km_decay_model,
 * km_twodecay_model). */
#include "kmodels.inc"

/* odetensor: solve many lanes of one ODE system at once, with tensors in and
 * out. The umbrella header: include this one. */
#ifndef ODETENSOR_H
#define ODETENSOR_H

#include "odetensor/status.h"
#include "odetensor/tensor.h"
#include "odetensor/dlpack.h"
#include "odetensor/ode.h"
#include "odetensor/solution.h"
#include "odetensor/dosing.h"
#include "odetensor/kernel.h"

#endif /* ODETENSOR_H */

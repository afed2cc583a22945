/* The solver table: one entry per solver, chosen from the problem's mode and
 * device. A new solver (an ARKODE integrator, say) is its own files plus
 * one entry here; see ARCHITECTURE.md, "Adding a solver". */
#include "cuda/backend.h"
#include "lanes/lanes.h"
#include "lockstep/lockstep.h"
#include "solve/solve.h"

/* One CVODE(S) instance per worker thread, re-initialised per lane. */
static const ot__solver lanes = {
    .name = "lanes",
    .run = ot__lanes_run,
};

/* One CVODE(S) over all lanes on a serial vector. */
static const ot__solver lockstep_cpu = {
    .name = "lockstep",
    .lockstep = 1,
    .run = ot__lockstep_cpu_run,
};

/* Lockstep on NVECTOR_CUDA (src/cuda/; src/cuda/none.c refuses it in builds
 * without the backend). */
static const ot__solver lockstep_cuda = {
    .name = "lockstep on CUDA",
    .device_inputs = 1,
    .lockstep = 1,
    .whole_batch = 1,
    .host_copy = ot__cuda_host_copy,
    .alloc_output = ot__cuda_alloc_output,
    .pad_device_outputs = ot__cuda_pad_outputs,
    .run = ot__cuda_run,
};

const ot__solver *ot__solver_for(const ot_ode *ode)
{
    if (ode->device.type == OT_CUDA)
        return &lockstep_cuda;
    return ode->mode == OT_LOCKSTEP ? &lockstep_cpu : &lanes;
}

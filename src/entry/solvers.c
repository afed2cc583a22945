/* The solver table: one row per solver, declaring what it supports, chosen
 * from the problem's mode and device. Everything above the solvers asks a
 * row what it can do; only ot__solver_for and ot__solver_check look at the
 * mode and device. A new solver is its own folder plus one row here; see
 * ARCHITECTURE.md, "Adding a solver". */
#include "core/error.h"
#include "ode/ode_impl.h"
#include "odetensor/kernel.h"
#include "cuda/backend.h"
#include "kernel/kernel.h"
#include "kit/integ.h"
#include "lanes/lanes.h"
#include "lockstep/lockstep.h"
#include "solve/solve.h"

#define ALL_LINSOLS                                                                      \
    (OT__LINSOL_BIT(OT_LINSOL_DENSE) | OT__LINSOL_BIT(OT_LINSOL_BAND) |                  \
     OT__LINSOL_BIT(OT_LINSOL_GMRES))

/* What both CPU solvers have: lanes with bad inputs fail alone, per-lane
 * times, stops, recorded and handled events, every kind of forward
 * sensitivity and the adjoint (both through events too) and ARKODE's
 * methods. */
#define CPU_FLOW                                                                         \
    .bad_inputs_alone = 1, .per_lane_times = 1, .stops = 1, .recorded_events = 1,        \
    .fwd_sens = 1, .sens_dfdp = 1, .sens_initial = 1, .sens_events = 1, .adjoint = 1,    \
    .adjoint_events = 1, .arkode_methods = 1, .roots = 1, .every_step = 1

/* One CVODE(S) or ARKStep instance per worker thread, re-initialised per
 * lane: every lane is its own problem, so it has everything. */
static const ot__solver lanes = {
    CPU_FLOW,
    .name = "lanes",
    .per_lane_starts = 1,
    .adjoint_per_lane_times = 1,
    .linsols = ALL_LINSOLS,
    .working_memory = OT__WORK_PER_THREAD,
    .run = ot__lanes_run,
};

/* One integrator per block of lanes on a serial vector: a block starts
 * together, its Jacobian is block-diagonal and factored densely
 * (block_dense.c), and its adjoint restarts the whole block (with per-lane
 * times segment by segment, run/adjoint_events.h). */
static const ot__solver lockstep_cpu = {
    CPU_FLOW,
    .name = "lockstep",
    .lockstep = 1,
    .adjoint_per_lane_times = 1,
    .linsols = OT__LINSOL_BIT(OT_LINSOL_DENSE),
    .working_memory = OT__WORK_PER_LANE,
    .run = ot__lockstep_cpu_run,
};

/* Lockstep on NVECTOR_CUDA, all lanes one block (src/cuda/; src/cuda/none.c
 * refuses it in builds without the backend). Its roots stop lanes only,
 * its sensitivities are difference quotients to parameters, CVODE only. */
static const ot__solver lockstep_cuda = {
    .name = "lockstep on CUDA",
    .roots = 1,
    .every_step = 1,
    .lockstep = 1,
    .whole_batch = 1,
    .fwd_sens = 1,
    .linsols = OT__LINSOL_BIT(OT_LINSOL_DENSE),
    .device_inputs = 1,
    .device_outputs = 1,
    .working_memory = OT__WORK_PER_LANE,
    .working_on_device = 1,
    .host_copy = ot__cuda_host_copy,
    .alloc_output = ot__cuda_alloc_output,
    .pad_device_outputs = ot__cuda_pad_outputs,
    .run = ot__cuda_run,
};

/* odetensor's own per-lane methods (src/kernel/, the kernel methods of
 * ot_method): each lane its own steps, in lane groups (plan->block). Dense
 * outputs at per-lane times and starts, scheduled stops, roots with
 * directions and every event action (kernel/roots.c), lanes failing
 * alone; no sensitivities or every-step solves yet. */
static const ot__solver kernel_cpu = {
    .name = "kernel",
    .kernel_methods = 1,
    .lane_groups = 1,
    .bad_inputs_alone = 1,
    .per_lane_times = 1,
    .per_lane_starts = 1,
    .stops = 1,
    .roots = 1,
    .recorded_events = 1,
    .linsols = OT__LINSOL_BIT(OT_LINSOL_DENSE),
    .working_memory = OT__WORK_PER_THREAD,
    .run = ot__kernel_run,
};

/* The kernel methods with a compiled model (ot_ode_set_kernel_model): the
 * lane loop of odetensor/kernel_model.inc, 64 lanes a pool unit on the
 * CPU (8 stepped at once), or one a CUDA thread (the model built by nvcc; no CUDA backend
 * needed in the library, the model's build holds the kernel). So far dense
 * outputs at per-lane times and starts, the out function, lanes failing
 * alone; host inputs and outputs. */
static const ot__solver kernel_model_cpu = {
    .name = "kernel_model",
    .kernel_methods = 1,
    .bad_inputs_alone = 1,
    .per_lane_times = 1,
    .per_lane_starts = 1,
    .linsols = OT__LINSOL_BIT(OT_LINSOL_DENSE),
    .working_memory = OT__WORK_PER_THREAD,
    .run = ot__kmodel_run,
};

static const ot__solver kernel_model_cuda = {
    .name = "kernel_model_cuda",
    .kernel_methods = 1,
    .bad_inputs_alone = 1,
    .per_lane_times = 1,
    .per_lane_starts = 1,
    .linsols = OT__LINSOL_BIT(OT_LINSOL_DENSE),
    .working_memory = OT__WORK_PER_LANE,
    .run = ot__kmodel_run_cuda,
};

static const ot__solver *const rows[] = {
    &lanes,      &lockstep_cpu,     &lockstep_cuda,
    &kernel_cpu, &kernel_model_cpu, &kernel_model_cuda};

const ot__solver *ot__solver_for(const ot_ode *ode)
{
    if (ot__method(ode->method)->kernel && ode->kmodel)
        return ode->device.type == OT_CUDA ? &kernel_model_cuda : &kernel_model_cpu;
    if (ot__method(ode->method)->kernel)
        return &kernel_cpu;
    if (ode->device.type == OT_CUDA)
        return &lockstep_cuda;
    return ode->mode == OT_LOCKSTEP ? &lockstep_cpu : &lanes;
}

int ot__solver_check(const ot_ode *ode)
{
    const ot__method_info *m = ot__method(ode->method);
    if (m->kernel && ode->device.type == OT_CUDA && ode->kmodel == NULL)
        return ot__fail(OT_ERR_ARG,
                        "device: %s runs on CUDA only with a compiled model "
                        "(ot_ode_set_kernel_model, odetensor/kernel_model.inc built by "
                        "nvcc); with callbacks it runs on the CPU (ot_ode_set_device)",
                        m->name);
    if (m->kernel && ode->device.type == OT_CUDA && ode->kmodel->cuda == NULL)
        return ot__fail(OT_ERR_ARG,
                        "device: CUDA, but compiled model %s was built without nvcc (its "
                        "kernel_model.inc compiled as C has no CUDA kernel); build it "
                        "with nvcc, or solve on the CPU (ot_ode_set_device)",
                        ode->kmodel->name);
    if (m->kernel && ode->mode != OT_LANES)
        return ot__fail(OT_ERR_ARG,
                        "mode: %s runs in OT_LANES mode, each lane its own steps (lane "
                        "groups: ot_ode_set_lane_group), not in OT_LOCKSTEP",
                        m->name);
    if (!m->kernel && ode->device.type == OT_CUDA && ode->mode != OT_LOCKSTEP)
        return ot__fail(OT_ERR_ARG, "device: CUDA solves run in OT_LOCKSTEP mode "
                                    "(ot_ode_set_mode)");
    return OT_OK;
}

const ot__solver *ot__solver_row(int i)
{
    return i >= 0 && i < (int)(sizeof rows / sizeof rows[0]) ? rows[i] : NULL;
}

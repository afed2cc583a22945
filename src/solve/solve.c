/* The solve entry points and a request's whole life: plan the request
 * (plan.c, which also picks the solver), allocate the outputs once where the
 * solver keeps them, run the solver, then finish: NaN padding, the steps
 * gathered into tensors, the call's status. Solvers only run. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "solve/solve.h"
#include "solve/solve_api.h"
#include "tensor/tensor_impl.h"

/* Outputs of a dense or sens solve: [rows, nt, nbatch] where the solver
 * keeps them, and ts, a host copy of the times. */
static int alloc_outputs(const ot__plan *pl, ot_solution *sol)
{
    const int64_t shape[3] = {pl->rows, pl->nt, pl->nbatch};
    const ot__solver *s = pl->solver;
    int st = s->alloc_output ? s->alloc_output(&sol->ys, pl, "ys")
                             : ot__tensor_alloc(&sol->ys, (ot_dtype)pl->ode->out_dtype, 3,
                                                shape, "ys");
    for (int64_t j = 0; st == OT_OK && j < sol->nsens; j++)
        st = s->alloc_output
                 ? s->alloc_output(&sol->sens[j], pl, "sens")
                 : ot__tensor_alloc(&sol->sens[j], (ot_dtype)pl->ode->out_dtype, 3, shape,
                                    "sens");
    if (st == OT_OK)
        st = ot__tensor_alloc(&sol->ts, OT_F64, 1, &pl->nt, "ts");
    if (st == OT_OK)
        memcpy(ot_tensor_layout(sol->ts)->data, pl->t, (size_t)pl->nt * sizeof(double));
    return st;
}

/* NaN past each lane's count: on the host here, on a device by the
 * solver that put the outputs there. */
static int pad_outputs(const ot__plan *pl, ot_solution *sol)
{
    if (ot_tensor_layout(sol->ys)->device.type != OT_CPU)
        return pl->solver->pad_device_outputs(pl, sol);
    ot__out_pad_host(sol->ys, sol->sens, sol->nsens, sol->count, pl->rows, pl->nbatch);
    return OT_OK;
}

/* The call's status: OT_OK, or OT_ERR_LANES_FAILED naming the first. */
static int lanes_status(const ot_solution *sol)
{
    const int64_t failed = ot_solution_nfailed(sol);
    for (int64_t b = 0; failed && b < sol->nbatch; b++)
        if (sol->status[b] != OT_OK)
            return ot__fail(OT_ERR_LANES_FAILED,
                            "%lld of %lld lanes failed; lane %lld: %s", (long long)failed,
                            (long long)sol->nbatch, (long long)b,
                            ot_solution_lane_message(sol, b));
    return OT_OK;
}

/* Runs a planned request. Ownership: *out is the caller's, set whenever
 * the status is OT_OK or OT_ERR_LANES_FAILED. */
static int run_plan(const ot__plan *pl, ot_solution **out)
{
    const int64_t nrec =
        pl->kind != OT__STEPS ? 0 : (pl->nbatch + pl->block - 1) / pl->block;
    ot_solution *sol = NULL;
    ot__sink sink = {NULL, NULL};
    int st = ot__solution_new(&sol, pl->nbatch, pl->kind == OT__SENS ? pl->np : 0,
                              pl->ode->nroots > 0);
    if (st == OT_OK && nrec > 0 &&
        (sink.records = OT__CALLOC((size_t)nrec, sizeof *sink.records)) == NULL)
        st = ot__fail(OT_ERR_NOMEM, "solve: cannot allocate step records");
    if (st == OT_OK && pl->kind != OT__STEPS)
        st = alloc_outputs(pl, sol);
    if (st == OT_OK) {
        sink.sol = sol;
        st = pl->solver->run(pl, &sink);
    }
    if (st == OT_OK && pl->kind != OT__STEPS)
        st = pad_outputs(pl, sol);
    if (st == OT_OK && pl->kind == OT__STEPS)
        st = ot__out_gather_steps(&sol->ts, &sol->ys, sink.records, pl->block, sol->count,
                                  pl->rows, pl->nbatch, (ot_dtype)pl->ode->out_dtype);
    for (int64_t r = 0; sink.records && r < nrec; r++)
        ot__record_free(&sink.records[r]);
    free(sink.records);
    if (st != OT_OK) {
        ot_solution_free(sol);
        return st;
    }
    *out = sol;
    return lanes_status(sol);
}

static int solve(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                 double t_final, ot__kind kind, const ot__progress *progress,
                 ot_solution **out)
{
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "out: NULL");
    ot__plan pl;
    int st = ot__plan_make(&pl, ode, y0, params, t_eval, t_final, kind);
    if (st == OT_OK && progress) {
        pl.progress = progress->fn;
        pl.progress_user = progress->user;
    }
    if (st == OT_OK)
        st = run_plan(&pl, out);
    ot__plan_free(&pl);
    return st;
}

int ot_solve_dense(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                   ot_solution **out)
{
    return solve(ode, y0, params, t_eval, 0, OT__DENSE, NULL, out);
}

int ot_solve_fwd_sens(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                      ot_solution **out)
{
    return solve(ode, y0, params, t_eval, 0, OT__SENS, NULL, out);
}

int ot_solve(const ot_ode *ode, ot_view y0, ot_view params, double final_time,
             ot_solution **out)
{
    return solve(ode, y0, params, ot_view_absent(), final_time, OT__STEPS, NULL, out);
}

int ot__solve_at_times(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                       int sens, ot__progress progress, ot_solution **out)
{
    return solve(ode, y0, params, t_eval, 0, sens ? OT__SENS : OT__DENSE, &progress, out);
}

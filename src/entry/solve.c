/* The solve entry points and a request's whole life: plan the request
 * (plan.c, which also picks the solver), allocate the outputs once where the
 * solver keeps them, run the solver, then finish: NaN padding, the steps
 * gathered into tensors, the call's status. Solvers only run. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/memory.h"
#include "kit/adjoint.h"
#include "kit/callback.h"
#include "solve/solve.h"
#include "kit/progress.h"
#include "kit/events.h"
#include "entry/size_limits.h"
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
    const int64_t tshape[2] = {pl->nt, pl->nbatch};
    if (st == OT_OK) /* per-lane times: [nt, nbatch], each lane's own */
        st = ot__tensor_alloc(&sol->ts, OT_F64, pl->t_lanes ? 2 : 1, tshape, "ts");
    for (int64_t b = 0; st == OT_OK && b < (pl->t_lanes ? pl->nbatch : 1); b++)
        memcpy((double *)ot_tensor_layout(sol->ts)->data + b * pl->nt,
               ot__plan_times(pl, b), (size_t)pl->nt * sizeof(double));
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

/* f32 outputs: a finite value beyond FLT_MAX became inf in the conversion.
 * A lane that holds one fails (its values stay), since inf in an output
 * cannot come from a successful lane otherwise (callbacks' Inf is refused). */
static void flag_f32_overflow(const ot__plan *pl, ot_solution *sol)
{
    if (pl->ode->out_dtype != OT_F32 || ot_tensor_layout(sol->ys)->device.type != OT_CPU)
        return;
    for (int64_t b = 0; b < pl->nbatch; b++)
        for (int64_t j = -1; sol->status[b] == OT_OK && j < sol->nsens; j++) {
            const ot_tensor *t = j < 0 ? sol->ys : sol->sens[j];
            for (int64_t i = 0; i < sol->count[b]; i++) {
                const float *v = ot__out_column(t, i, b);
                int64_t r = 0;
                while (r < pl->rows && !isinf(v[r]))
                    r++;
                if (r == pl->rows)
                    continue;
                char msg[200];
                snprintf(msg, sizeof msg,
                         "%s: row %lld at output %lld is beyond f32's range (%g) and "
                         "became %s; ask for f64 outputs",
                         j < 0 ? "ys" : "sens", (long long)r, (long long)i, FLT_MAX,
                         v[r] > 0 ? "inf" : "-inf");
                ot__solution_fail_lane(sol, b, OT_ERR_VALUE, msg);
                break;
            }
        }
}

/* ot_solve's outputs are [rows, nt_max, nbatch]: one lane that runs to its
 * step limit pads every lane to its length (700 two-state lanes need 4.4 MiB;
 * with one runaway lane at 100,000 steps, 1.1 GB). When ts and ys would not
 * fit beside the records still held, or (most < nt_max) could not be
 * allocated at nt_max steps, the lanes with the most steps are cut to what
 * fits (at most `most` steps) and fail alone (OT_ERR_NOMEM) instead of the
 * whole call. */
static void cap_runaway_lanes(const ot__plan *pl, ot_solution *sol,
                              const ot__record *records, int64_t most)
{
    const char *what = "";
    const uint64_t limit = ot__memory_limit(&what);
    const uint64_t per_step =
        (uint64_t)pl->nbatch *
        (sizeof(double) +
         (uint64_t)pl->rows * ot_dtype_size((ot_dtype)pl->ode->out_dtype));
    uint64_t held = 0;
    const int64_t nt_max = ot__out_nt_max(sol->count, pl->nbatch);
    for (int64_t r = 0; r < (pl->nbatch + pl->block - 1) / pl->block; r++)
        held +=
            (uint64_t)records[r].cap * (uint64_t)(records[r].width + 1) * sizeof(double);
    const uint64_t budget = limit > held ? limit - held : 0;
    if ((uint64_t)nt_max <= budget / per_step && nt_max <= most)
        return;
    int64_t cap = budget / per_step > 1 ? (int64_t)(budget / per_step) : 1;
    cap = cap < most ? cap : most;
    for (int64_t b = 0; b < pl->nbatch; b++) {
        if (sol->count[b] <= cap)
            continue;
        sol->stats[b].final_time = records[b / pl->block].t[cap - 1];
        const int64_t had = sol->count[b];
        sol->count[b] = cap;
        if (sol->status[b] != OT_OK) /* failed already (its step limit): keeps why */
            continue;
        char msg[256];
        if (most < INT64_MAX)
            snprintf(msg, sizeof msg,
                     "recorded %lld steps: ts and ys with every lane padded to that "
                     "many (%.3g bytes) could not be allocated; kept its first %lld "
                     "steps (lower max_steps, or use ot_solve_dense)",
                     (long long)had, (double)per_step * (double)had, (long long)cap);
        else
            snprintf(msg, sizeof msg,
                     "recorded %lld steps: every lane padded to that many would need "
                     "%.3g bytes for ts and ys, more than the %.3g bytes %s; kept its "
                     "first %lld steps (lower max_steps, or use ot_solve_dense)",
                     (long long)had, (double)per_step * (double)had, (double)budget, what,
                     (long long)cap);
        ot__solution_fail_lane(sol, b, OT_ERR_NOMEM, msg);
    }
}

/* ot_solve's ts and ys from the records. The memory limit can promise more
 * than malloc gives (the process's own memory, fragmentation, other
 * threads): when they cannot be allocated, the longest lanes are cut to
 * half as many steps and it is tried again, down to one step. */
static int gather_steps(const ot__plan *pl, ot_solution *sol, const ot__record *records)
{
    int64_t most = INT64_MAX;
    for (;;) {
        cap_runaway_lanes(pl, sol, records, most);
        const int st =
            ot__out_gather_steps(&sol->ts, &sol->ys, records, pl->block, sol->count,
                                 pl->rows, pl->nbatch, (ot_dtype)pl->ode->out_dtype);
        const int64_t nt_max = ot__out_nt_max(sol->count, pl->nbatch);
        if (st != OT_ERR_NOMEM || nt_max <= 1)
            return st;
        most = nt_max / 2;
    }
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

/* After a cancel: every lane that ended neither failed, nor at a root, nor
 * at its last output time (steps: the final time) was stopped by it. */
static int mark_cancelled(const ot__plan *pl, ot_solution *sol)
{
    int64_t n = 0;
    for (int64_t b = 0; b < pl->nbatch; b++) {
        n += sol->status[b] == OT_ERR_CANCELLED; /* stopped inside the solver */
        if (sol->status[b] != OT_OK || (sol->root_index && sol->root_index[b] >= 0))
            continue;
        const int done =
            pl->kind == OT__STEPS
                ? sol->count[b] > 0 && sol->stats[b].final_time >= pl->t_final
                : sol->count[b] >= ot__plan_nt(pl, b);
        if (done)
            continue;
        char msg[160];
        snprintf(msg, sizeof msg,
                 "cancelled by the progress callback with %lld %s of the lane's done",
                 (long long)sol->count[b], pl->kind == OT__STEPS ? "steps" : "outputs");
        ot__solution_fail_lane(sol, b, OT_ERR_CANCELLED, msg);
        n++;
    }
    if (n == 0) /* cancelled when every lane had finished: nothing was */
        return lanes_status(sol);
    return ot__fail(
        OT_ERR_CANCELLED,
        "solve: cancelled by the progress callback; %lld of %lld lanes did not "
        "finish (OT_ERR_CANCELLED, their results so far kept)",
        (long long)n, (long long)pl->nbatch);
}

/* Runs a planned request. Ownership: *out is the caller's, set whenever
 * the status is OT_OK, OT_ERR_LANES_FAILED or OT_ERR_CANCELLED. */
static int run_plan_with(const ot__plan *pl, ot_solution **out)
{
    const int64_t nrec =
        pl->kind != OT__STEPS ? 0 : (pl->nbatch + pl->block - 1) / pl->block;
    ot_solution *sol = NULL;
    ot__sink sink = {NULL, NULL, NULL};
    int st = ot_solution_new(&sol, pl->nbatch, pl->ns, pl->ode->nroots > 0);
    if (st == OT_OK && nrec > 0 &&
        (sink.records = OT__CALLOC((size_t)nrec, sizeof *sink.records)) == NULL)
        st = ot__fail(OT_ERR_NOMEM, "solve: cannot allocate step records");
    if (st == OT_OK && (ot__events_recorded(pl->ode) || pl->stops) &&
        ((sink.events = OT__CALLOC((size_t)pl->nbatch, sizeof *sink.events)) == NULL ||
         (sol->event_count = OT__CALLOC((size_t)pl->nbatch, sizeof *sol->event_count)) ==
             NULL))
        st = ot__fail(OT_ERR_NOMEM, "solve: cannot allocate event records");
    if (st == OT_OK && pl->kind != OT__STEPS)
        st = alloc_outputs(pl, sol);
    if (st == OT_OK && pl->kind == OT__ADJ)
        st = ot__adj_alloc(pl, sol);
    for (int64_t b = 0; st == OT_OK && pl->bad && b < pl->nbatch; b++)
        if (pl->bad[b]) { /* the solver leaves it out */
            char msg[200];
            ot__plan_bad_message(pl, b, msg, sizeof msg);
            ot__solution_fail_lane(sol, b, OT_ERR_VALUE, msg);
            sol->stats[b].final_time = ot__plan_t0(pl, b);
        }
    if (st == OT_OK) { /* the whole batch is the unit until a pool deals units */
        sink.sol = sol;
        const ot__cb_lane_state was = ot__cb_lane_enter(pl->lane_offset, pl->lane_offset);
        st = pl->solver->run(pl, &sink);
        ot__cb_lane_restore(was);
    }
    if (st == OT_OK && pl->kind != OT__STEPS)
        st = pad_outputs(pl, sol);
    if (st == OT_OK && pl->kind == OT__STEPS)
        st = gather_steps(pl, sol, sink.records);
    if (st == OT_OK)
        flag_f32_overflow(pl, sol);
    if (st == OT_OK && sink.events)
        st = ot__event_gather(pl, sol, sink.events);
    for (int64_t b = 0; sink.events && b < pl->nbatch; b++)
        ot__record_free(&sink.events[b]);
    free(sink.events);
    for (int64_t r = 0; sink.records && r < nrec; r++)
        ot__record_free(&sink.records[r]);
    free(sink.records);
    if (st != OT_OK) {
        ot_solution_free(sol);
        return st;
    }
    *out = sol;
    if (ot__progress_cancelled(pl->prog))
        return mark_cancelled(pl, sol);
    return lanes_status(sol);
}

static int run_plan(ot__plan *pl, ot_solution **out)
{
    ot__progress_state prog;
    ot__progress_init(&prog, pl->progress, pl->progress_user, pl->nbatch);
    pl->prog = &prog;
    const int st = run_plan_with(pl, out);
    pl->prog = NULL;
    ot__progress_destroy(&prog);
    return st;
}

/* The first version of ot_solve_options ends after lane_offset. */
#define OT__SOLVE_OPTIONS_V1 (offsetof(ot_solve_options, lane_offset) + sizeof(int64_t))

/* *opts as this library knows it, checked: the caller's size bytes, later
 * fields 0 (their defaults); NULL: every default. */
static int read_options(const ot_solve_options *opts, ot_solve_options *o)
{
    memset(o, 0, sizeof *o);
    if (opts == NULL)
        return OT_OK;
    if (opts->size < OT__SOLVE_OPTIONS_V1)
        return ot__fail(OT_ERR_ARG,
                        "opts: size is %zu bytes; set opts->size = "
                        "sizeof(ot_solve_options) first (%zu bytes at least; %zu in "
                        "this library)",
                        opts->size, (size_t)OT__SOLVE_OPTIONS_V1, sizeof *o);
    memcpy(o, opts, opts->size < sizeof *o ? opts->size : sizeof *o);
    if (o->replace_progress != 0 && o->replace_progress != 1)
        return ot__fail(OT_ERR_ARG,
                        "opts: replace_progress is %d; use 0 (the problem's progress "
                        "callback) or 1 (opts->progress instead; NULL: none)",
                        o->replace_progress);
    if (!o->replace_progress && (o->progress != NULL || o->progress_user != NULL))
        return ot__fail(OT_ERR_ARG, "opts: progress is set but replace_progress is 0; "
                                    "set replace_progress = 1 to use it");
    if (o->lane_offset < 0)
        return ot__fail(OT_ERR_VALUE, "opts: lane_offset is %lld; must be >= 0",
                        (long long)o->lane_offset);
    return OT_OK;
}

/* Checked options into a made plan. */
static int apply_options(ot__plan *pl, const ot_solve_options *o)
{
    if (o->lane_offset > INT64_MAX - pl->nbatch)
        return ot__fail(OT_ERR_OVERFLOW,
                        "opts: lane_offset %lld + %lld lanes overflows int64",
                        (long long)o->lane_offset, (long long)pl->nbatch);
    if (o->replace_progress) {
        pl->progress = o->progress;
        pl->progress_user = o->progress_user;
    }
    pl->lane_offset = o->lane_offset;
    return OT_OK;
}

/* What only the adjoint asks beyond the plan: its per-lane times where the
 * row has them, and the loss. */
static int check_adjoint(ot__plan *pl, const ot_loss *loss)
{
    if (pl->t_lanes && !pl->solver->adjoint_per_lane_times)
        return ot__fail(OT_ERR_ARG,
                        "t_eval: per-lane output times with ot_solve_adjoint run in "
                        "OT_LANES mode (the %s solver's backward pass restarts the "
                        "lanes of a block together)",
                        pl->solver->name);
    return ot__adj_check(pl, loss);
}

/* Every entry but ot_solve_dense_with: output times (or a final time for
 * steps), the loss for the adjoint; opts may be NULL. */
static int solve(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                 double t_final, ot__kind kind, const ot_loss *loss,
                 const ot_solve_options *opts, ot_solution **out)
{
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "out: NULL");
    ot_solve_options o;
    int st = read_options(opts, &o);
    if (st != OT_OK)
        return st;
    ot__plan pl;
    st = ot__plan_make(&pl, ode, y0, params, t_eval, t_final, kind);
    if (st == OT_OK)
        st = apply_options(&pl, &o);
    if (st == OT_OK && kind == OT__ADJ)
        st = check_adjoint(&pl, loss);
    if (st == OT_OK)
        st = run_plan(&pl, out);
    ot__plan_free(&pl);
    return st;
}

ot_solve_inputs ot_solve_inputs_make(ot_view y0, ot_view params, ot_view t_eval)
{
    ot_solve_inputs in;
    in.y0 = y0;
    in.params = params;
    in.t_eval = t_eval;
    in.t0 = ot_view_absent();
    in.stops = ot_view_absent();
    in.stops_dp = ot_view_absent();
    return in;
}

static int solve_with(const ot_ode *ode, const ot_solve_inputs *in, ot__kind kind,
                      const ot_loss *loss, const ot_solve_options *opts,
                      ot_solution **out)
{
    if (in == NULL)
        return ot__fail(OT_ERR_ARG, "in: NULL");
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "out: NULL");
    ot_solve_options o;
    int st = read_options(opts, &o);
    if (st != OT_OK)
        return st;
    ot__plan pl;
    st = ot__plan_make_with(&pl, ode, in, kind);
    if (st == OT_OK)
        st = apply_options(&pl, &o);
    if (st == OT_OK && kind == OT__ADJ)
        st = check_adjoint(&pl, loss);
    if (st == OT_OK)
        st = run_plan(&pl, out);
    ot__plan_free(&pl);
    return st;
}

int ot_solve_dense_with(const ot_ode *ode, const ot_solve_inputs *in, ot_solution **out)
{
    return solve_with(ode, in, OT__DENSE, NULL, NULL, out);
}

int ot_solve_fwd_sens_with(const ot_ode *ode, const ot_solve_inputs *in,
                           ot_solution **out)
{
    return solve_with(ode, in, OT__SENS, NULL, NULL, out);
}

int ot_solve_adjoint_with(const ot_ode *ode, const ot_solve_inputs *in,
                          const ot_loss *loss, ot_solution **out)
{
    return solve_with(ode, in, OT__ADJ, loss, NULL, out);
}

int ot_solve_dense_with_opts(const ot_ode *ode, const ot_solve_inputs *in,
                             const ot_solve_options *opts, ot_solution **out)
{
    return solve_with(ode, in, OT__DENSE, NULL, opts, out);
}

int ot_solve_fwd_sens_with_opts(const ot_ode *ode, const ot_solve_inputs *in,
                                const ot_solve_options *opts, ot_solution **out)
{
    return solve_with(ode, in, OT__SENS, NULL, opts, out);
}

int ot_solve_adjoint_with_opts(const ot_ode *ode, const ot_solve_inputs *in,
                               const ot_loss *loss, const ot_solve_options *opts,
                               ot_solution **out)
{
    return solve_with(ode, in, OT__ADJ, loss, opts, out);
}

int ot_solve_dense(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                   ot_solution **out)
{
    return solve(ode, y0, params, t_eval, 0, OT__DENSE, NULL, NULL, out);
}

int ot_solve_dense_opts(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                        const ot_solve_options *opts, ot_solution **out)
{
    return solve(ode, y0, params, t_eval, 0, OT__DENSE, NULL, opts, out);
}

int ot_solve_fwd_sens(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                      ot_solution **out)
{
    return solve(ode, y0, params, t_eval, 0, OT__SENS, NULL, NULL, out);
}

int ot_solve_fwd_sens_opts(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                           const ot_solve_options *opts, ot_solution **out)
{
    return solve(ode, y0, params, t_eval, 0, OT__SENS, NULL, opts, out);
}

int ot_solve_adjoint(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                     const ot_loss *loss, ot_solution **out)
{
    return solve(ode, y0, params, t_eval, 0, OT__ADJ, loss, NULL, out);
}

int ot_solve_adjoint_opts(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                          const ot_loss *loss, const ot_solve_options *opts,
                          ot_solution **out)
{
    return solve(ode, y0, params, t_eval, 0, OT__ADJ, loss, opts, out);
}

int ot_solve(const ot_ode *ode, ot_view y0, ot_view params, double final_time,
             ot_solution **out)
{
    return solve(ode, y0, params, ot_view_absent(), final_time, OT__STEPS, NULL, NULL,
                 out);
}

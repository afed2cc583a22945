/* The solver table that picks a solver from a problem: each row chosen by
 * one (mode, device) pair, and each row's declared capabilities against
 * solves. (The public API the MPI layer uses: check_layer_api.c.) */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "solve_common.h"
#include "suites.h"

#include "core/test_hooks.h"
#include "solve/solve.h"

START_TEST(the_solver_table_picks_by_mode_and_device)
{
    ot_ode *ode = decay_ode(1, 1e-6, 1e-9);
    const ot__solver *s = ot__solver_for(ode);
    ck_assert_str_eq(s->name, "lanes");
    ck_assert(s->run != NULL && !s->lockstep && !s->device_inputs);
    ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    s = ot__solver_for(ode);
    ck_assert_str_eq(s->name, "lockstep");
    ck_assert(s->lockstep && !s->device_inputs && s->host_copy == NULL);
    const ot_device cuda = {OT_CUDA, 0};
    ck_assert_status(ot_ode_set_device(ode, cuda), OT_OK, NULL);
    s = ot__solver_for(ode);
    ck_assert_str_eq(s->name, "lockstep on CUDA");
    ck_assert(s->device_inputs && s->host_copy && s->alloc_output &&
              s->pad_device_outputs);
    ot_ode_free(ode);
}
END_TEST

/* ---- Each row's declared capabilities against what a solve does --------- */

/* The (mode, device, method) triples that pick the rows; every row must be
 * among them, so a new row needs its triple here. */
extern const ot_kernel_model km_twodecay_model; /* kmodels_c.c: decay compiled */

static const struct {
    ot_mode mode;
    int device;
    ot_method method;
    const ot_kernel_model *model;
} row_choices[] = {{OT_LANES, OT_CPU, OT_BDF, NULL},
                   {OT_LOCKSTEP, OT_CPU, OT_BDF, NULL},
                   {OT_LOCKSTEP, OT_CUDA, OT_BDF, NULL},
                   {OT_LANES, OT_CPU, OT_RODAS4, NULL},
                   {OT_LANES, OT_CPU, OT_RODAS4, &km_twodecay_model},
                   {OT_LANES, OT_CUDA, OT_RODAS4, &km_twodecay_model}};
enum { NCHOICES = sizeof row_choices / sizeof row_choices[0], CAP_NB = 4 };

static int never_launched(const ot_kernel_job *job, char *msg, size_t len)
{
    (void)job;
    snprintf(msg, len, "check_core_api plans the CUDA rows only");
    return 1;
}

/* The decay problem in row_choices[j]'s mode and device. */
static ot_ode *row_ode(int j)
{
    ot_ode *ode = decay_ode(1, 1e-6, 1e-9);
    ck_assert_status(ot_ode_set_mode(ode, row_choices[j].mode), OT_OK, NULL);
    ck_assert_status(ot_ode_set_device(ode, (ot_device){row_choices[j].device, 0}), OT_OK,
                     NULL);
    ck_assert_status(ot_ode_set_method(ode, row_choices[j].method), OT_OK, NULL);
    /* The CUDA rows are only planned (the GPU may be absent): the compiled
     * model there says it has a CUDA kernel, one never called. */
    static ot_kernel_model with_cuda;
    const ot_kernel_model *m = row_choices[j].model;
    if (m && row_choices[j].device == OT_CUDA) {
        with_cuda = *m;
        with_cuda.cuda = never_launched;
        m = &with_cuda;
    }
    ck_assert_status(ot_ode_set_kernel_model(ode, m), OT_OK, NULL);
    return ode;
}

static int one_root(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = 1.0; /* never crosses */
    return 0;
}

/* df/dp of decay: d f_i / d k = -(i + 1) y_i. */
static int decay_dfdp(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *yb = ot_view_col_f64(y, b, 0);
        double *db = ot_view_mut_col_f64(d, 0, b);
        db[0] = -yb[0];
        db[1] = -2.0 * yb[1];
    }
    return 0;
}

static void zero_cols(ot_view_mut v)
{
    for (int64_t b = 0; b < v.layout.shape[1]; b++)
        for (int64_t r = 0; r < v.layout.shape[0]; r++)
            ot_view_mut_col_f64(v, b, 0)[r] = 0.0;
}

static int zero_loss(double t, int64_t i, int64_t lane, ot_view y, ot_view p,
                     ot_view_mut g, ot_view_mut dgdy, ot_view_mut dgdp, void *u)
{
    (void)t, (void)i, (void)lane, (void)y, (void)p, (void)u;
    zero_cols(g);
    zero_cols(dgdy);
    zero_cols(dgdp);
    return 0;
}

static _Atomic int stop_calls;

static int count_stop(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                      void *u)
{
    (void)t, (void)root, (void)lane, (void)y, (void)p, (void)u;
    stop_calls++;
    return 0;
}

/* One capability: the row's flag, the request that needs it, and what its
 * refusal says. Requests use the decay problem on CAP_NB lanes. */
typedef enum {
    CAP_PER_LANE_TIMES,
    CAP_PER_LANE_STARTS,
    CAP_STOPS,
    CAP_RECORDED_EVENTS,
    CAP_FWD_SENS,
    CAP_SENS_DFDP,
    CAP_SENS_INITIAL,
    CAP_ADJOINT,
    CAP_ADJOINT_PER_LANE_TIMES,
    CAP_ARKODE_METHODS,
    CAP_BAND,
    CAP_GMRES,
    CAP_DEVICE_INPUTS,
    CAP_SMALLER_BLOCK,
    CAP_ROOTS,
    CAP_EVERY_STEP,
    NCAPS
} cap;

static const struct {
    const char *what;
    int status;         /* of its refusal */
    const char *needle; /* in its refusal's message */
    int names_row;      /* the message names the row */
} caps[NCAPS] = {
    [CAP_PER_LANE_TIMES] = {"per-lane times", OT_ERR_ARG, "takes shared times [nt] only",
                            1},
    [CAP_PER_LANE_STARTS] = {"per-lane starts", OT_ERR_ARG, "t0: per-lane starts need",
                             1},
    [CAP_STOPS] = {"scheduled stops", OT_ERR_ARG, "has no scheduled stops", 1},
    [CAP_RECORDED_EVENTS] = {"recorded events", OT_ERR_ARG, "at their roots only", 1},
    [CAP_FWD_SENS] = {"forward sensitivities", OT_ERR_ARG, "no forward sensitivities", 1},
    [CAP_SENS_DFDP] = {"df/dp", OT_ERR_ARG, "dfdp: the", 1},
    [CAP_SENS_INITIAL] = {"initial values", OT_ERR_ARG, "to parameters only", 1},
    [CAP_ADJOINT] = {"the adjoint", OT_ERR_ARG, "has no adjoint", 1},
    [CAP_ADJOINT_PER_LANE_TIMES] = {"adjoint per lane", OT_ERR_ARG,
                                    "per-lane output times with ot_solve_adjoint", 1},
    [CAP_ARKODE_METHODS] = {"ARKODE methods", OT_ERR_ARG, "OT_BDF and OT_ADAMS only", 1},
    [CAP_BAND] = {"band LU", OT_ERR_ARG, "OT_LINSOL_BAND runs in OT_LANES mode", 1},
    [CAP_GMRES] = {"GMRES", OT_ERR_ARG, "OT_LINSOL_GMRES runs in OT_LANES mode", 1},
    [CAP_DEVICE_INPUTS] = {"device inputs", OT_ERR_DEVICE, "y0: device memory", 0},
    [CAP_SMALLER_BLOCK] = {"a smaller block", OT_ERR_ARG, "runs the whole batch", 1},
    [CAP_ROOTS] = {"root functions", OT_ERR_ARG, "has no root functions", 1},
    [CAP_EVERY_STEP] = {"every-step output", OT_ERR_ARG, "has no every-step output", 1},
};

/* Whether row s declares capability c; *skip when c is not a question for
 * s (it lacks what c builds on, so another refusal comes first). */
static int declared(const ot__solver *s, cap c, int *skip)
{
    *skip = 0;
    switch (c) {
    case CAP_PER_LANE_TIMES:
        return s->per_lane_times;
    case CAP_PER_LANE_STARTS:
        return s->per_lane_starts;
    case CAP_STOPS:
        return s->stops;
    case CAP_RECORDED_EVENTS:
        *skip = !s->roots;
        return s->recorded_events;
    case CAP_FWD_SENS:
        return s->fwd_sens;
    case CAP_SENS_DFDP:
        *skip = !s->fwd_sens;
        return s->sens_dfdp;
    case CAP_SENS_INITIAL:
        *skip = !s->fwd_sens;
        return s->sens_initial;
    case CAP_ADJOINT:
        return s->adjoint;
    case CAP_ADJOINT_PER_LANE_TIMES:
        *skip = !s->adjoint || !s->per_lane_times;
        return s->adjoint_per_lane_times;
    case CAP_ARKODE_METHODS: /* another method chooses another row */
        *skip = s->kernel_methods;
        return s->arkode_methods;
    case CAP_BAND:
        return (s->linsols & OT__LINSOL_BIT(OT_LINSOL_BAND)) != 0;
    case CAP_GMRES:
        return (s->linsols & OT__LINSOL_BIT(OT_LINSOL_GMRES)) != 0;
    case CAP_DEVICE_INPUTS:
        return s->device_inputs;
    case CAP_SMALLER_BLOCK: /* declared as its opposite, whole_batch */
        return !(s->lockstep && s->whole_batch);
    case CAP_ROOTS:
        return s->roots;
    case CAP_EVERY_STEP:
        return s->every_step;
    case NCAPS:
        break;
    }
    return 0;
}

/* Lane b's exact state i at t from its start t0 (decay_inputs). */
static double decay_at(int64_t i, int64_t b, double t0, double t)
{
    const double y0[2] = {1.0 + (double)(b % 3), 0.5 + (double)(b % 2)};
    return st_decay_exact(i, y0[i], decay_k(b), t - t0);
}

/* That a run which accepted capability c used it: the starts, times and
 * stops it was given, the events it recorded. */
static void check_used(const ot__solver *s, cap c, const ot_solution *sol)
{
    const double tol = 1e-4;
    switch (c) {
    case CAP_PER_LANE_STARTS: /* lane 3 starts at 0.3 */
        ck_assert_msg(fabs(st_y(sol, 0, 0, 3) - decay_at(0, 3, 0.3, 1.0)) < tol,
                      "%s solver: lane 3 did not start at its t0", s->name);
        break;
    case CAP_PER_LANE_TIMES: /* lane 2's first time is 1.5 */
        ck_assert_msg(fabs(st_y(sol, 1, 0, 2) - decay_at(1, 2, 0.0, 1.5)) < tol,
                      "%s solver: lane 2 was not output at its own time", s->name);
        break;
    case CAP_STOPS:
        ck_assert_msg(stop_calls == CAP_NB, "%s solver: %d stops for %d lanes", s->name,
                      (int)stop_calls, CAP_NB);
        break;
    case CAP_RECORDED_EVENTS:
        ck_assert_msg(ot_solution_event_tensor(sol, OT_EVENT_TIMES) != NULL,
                      "%s solver: no event tensors", s->name);
        break;
    default:
        break;
    }
}

/* The request that needs capability c, on ode (set up here). plan_only:
 * stop after ot__plan_make, which refuses what the row lacks before the
 * solver runs (the CUDA row, which may have no GPU). s: the row, whose
 * accepted runs check_used checks. */
static int request(ot_ode *ode, cap c, int plan_only, const ot__solver *s)
{
    static double y0[2 * CAP_NB], k[CAP_NB];
    static const double t[2] = {1, 2}, t2[2 * CAP_NB] = {1, 2, 1, 2, 1.5, 2, 1, 3};
    static const double t0s[CAP_NB] = {0, 0.1, 0.2, 0.3}, stops[1] = {1.5};
    decay_inputs(k, y0, CAP_NB);
    ot_view Y = st_mat(y0, 2, CAP_NB), K = st_mat(k, 1, CAP_NB), T = st_vec(t, 2);
    ot_view T0 = ot_view_absent(), S = ot_view_absent();
    ot__kind kind = OT__DENSE;
    const int record[1] = {OT_EVENT_RECORD};
    switch (c) {
    case CAP_PER_LANE_TIMES:
        T = st_mat(t2, 2, CAP_NB);
        break;
    case CAP_PER_LANE_STARTS:
        T0 = st_vec(t0s, CAP_NB);
        break;
    case CAP_STOPS:
        ck_assert_status(ot_ode_set_event_handler(ode, count_stop), OT_OK, NULL);
        stop_calls = 0;
        S = st_vec(stops, 1);
        break;
    case CAP_RECORDED_EVENTS:
        ck_assert_status(ot_ode_set_roots(ode, 1, one_root), OT_OK, NULL);
        ck_assert_status(ot_ode_set_event_actions(ode, record), OT_OK, NULL);
        break;
    case CAP_SENS_DFDP:
        ck_assert_status(ot_ode_set_jac(ode, st_decay_jac), OT_OK, NULL);
        ck_assert_status(ot_ode_set_dfdp(ode, decay_dfdp), OT_OK, NULL);
        kind = OT__SENS;
        break;
    case CAP_SENS_INITIAL:
        ck_assert_status(ot_ode_set_sens_initial(ode, 1), OT_OK, NULL);
        kind = OT__SENS;
        break;
    case CAP_FWD_SENS:
        kind = OT__SENS;
        break;
    case CAP_ADJOINT_PER_LANE_TIMES:
        T = st_mat(t2, 2, CAP_NB);
        kind = OT__ADJ;
        break;
    case CAP_ADJOINT:
        kind = OT__ADJ;
        break;
    case CAP_ARKODE_METHODS:
        ck_assert_status(ot_ode_set_method(ode, OT_ERK_DP54), OT_OK, NULL);
        break;
    case CAP_BAND:
        ck_assert_status(ot_ode_set_linear_solver(ode, OT_LINSOL_BAND), OT_OK, NULL);
        ck_assert_status(ot_ode_set_bandwidths(ode, 0, 0), OT_OK, NULL);
        break;
    case CAP_GMRES:
        ck_assert_status(ot_ode_set_linear_solver(ode, OT_LINSOL_GMRES), OT_OK, NULL);
        break;
    case CAP_DEVICE_INPUTS: {
        const int64_t shape[2] = {2, CAP_NB};
        const ot_device cuda = {OT_CUDA, 0}; /* never read: refused, or plan only */
        ck_assert_status(ot_view_make(&Y, y0, OT_F64, cuda, 2, shape, NULL), OT_OK, NULL);
        break;
    }
    case CAP_SMALLER_BLOCK:
        ck_assert_status(ot_ode_set_lockstep_block(ode, 2), OT_OK, NULL);
        break;
    case CAP_ROOTS:
        ck_assert_status(ot_ode_set_roots(ode, 1, one_root), OT_OK, NULL);
        break;
    case CAP_EVERY_STEP:
        kind = OT__STEPS;
        break;
    case NCAPS:
        break;
    }
    ot_loss loss = ot_loss_custom(zero_loss, NULL);
    if (plan_only) {
        ot__plan pl;
        ot_solve_inputs with = ot_solve_inputs_make(Y, K, T);
        with.t0 = T0;
        with.stops = S;
        const int st = kind == OT__DENSE ? ot__plan_make_with(&pl, ode, &with, kind)
                       : kind == OT__STEPS
                           ? ot__plan_make(&pl, ode, Y, K, ot_view_absent(), 2.0, kind)
                           : ot__plan_make(&pl, ode, Y, K, T, 0, kind);
        ot__plan_free(&pl);
        return st;
    }
    ot_solution *sol = NULL;
    ot_solve_inputs in = ot_solve_inputs_make(Y, K, T);
    in.t0 = T0;
    in.stops = S;
    const int st = kind == OT__DENSE   ? ot_solve_dense_with(ode, &in, &sol)
                   : kind == OT__SENS  ? ot_solve_fwd_sens(ode, Y, K, T, &sol)
                   : kind == OT__STEPS ? ot_solve(ode, Y, K, 2.0, &sol)
                                       : ot_solve_adjoint(ode, Y, K, T, &loss, &sol);
    if (st == OT_OK)
        check_used(s, c, sol);
    ot_solution_free(sol);
    return st;
}

START_TEST(each_row_does_what_it_declares)
{
    ot_ode *chosen = row_ode(_i);
    const ot__solver *s = ot__solver_for(chosen);
    ot_ode_free(chosen);
    /* Only the CPU rows run: the CUDA row's requests stop at the plan. */
    const int plan_only = row_choices[_i].device != OT_CPU;
    for (int c = 0; c < NCAPS; c++) {
        int skip;
        const int yes = declared(s, (cap)c, &skip);
        if (skip)
            continue;
        ot_ode *ode = row_ode(_i);
        ot_clear_error();
        const int st = request(ode, (cap)c, yes && plan_only, s);
        if (yes) {
            ck_assert_msg(st == OT_OK, "%s solver, %s: declared, but %s (%s)", s->name,
                          caps[c].what, ot_status_name(st), ot_last_error());
        } else {
            ck_assert_msg(st == caps[c].status && strstr(ot_last_error(), caps[c].needle),
                          "%s solver, %s: not declared, but %s (%s); expected \"%s\"",
                          s->name, caps[c].what, ot_status_name(st), ot_last_error(),
                          caps[c].needle);
            ck_assert_msg(!caps[c].names_row || strstr(ot_last_error(), s->name),
                          "%s solver, %s: the refusal does not name the row (%s)",
                          s->name, caps[c].what, ot_last_error());
        }
        ot_ode_free(ode);
    }
    /* device_outputs: the estimate leaves ys and the sensitivities out of
     * host memory exactly when the row keeps them on the device. */
    uint64_t est[2];
    for (int on = 0; on < 2; on++) {
        ot_ode *ode = row_ode(_i);
        ck_assert_status(ot_ode_set_outputs_on_device(ode, on), OT_OK, NULL);
        ck_assert_status(
            request(ode, s->fwd_sens ? CAP_FWD_SENS : CAP_PER_LANE_STARTS, 1, s), OT_OK,
            NULL);
        est[on] = ot__size_last_estimate();
        ot_ode_free(ode);
    }
    ck_assert_int_eq(est[1] < est[0], s->device_outputs);
}
END_TEST

/* Every row is picked by one of row_choices, and each once; a pair
 * that picks none is refused. */
START_TEST(every_row_is_chosen_by_a_mode_and_device)
{
    int rows = 0;
    while (ot__solver_row(rows))
        rows++;
    ck_assert_int_eq(rows, NCHOICES);
    for (int i = 0; i < rows; i++) {
        int hits = 0;
        for (int j = 0; j < NCHOICES; j++) {
            ot_ode *ode = row_ode(j);
            hits += ot__solver_for(ode) == ot__solver_row(i);
            ot_ode_free(ode);
        }
        ck_assert_msg(hits == 1, "row %s is chosen %d times", ot__solver_row(i)->name,
                      hits);
        ck_assert(ot__solver_row(i)->run != NULL && ot__solver_row(i)->working_memory);
    }
    ck_assert_ptr_null(ot__solver_row(-1));
    /* A device in a mode its row does not run selects no solver. */
    ot_ode *ode = decay_ode(1, 1e-6, 1e-9);
    ck_assert_status(ot_ode_set_device(ode, (ot_device){OT_CUDA, 0}), OT_OK, NULL);
    ck_assert_status(ot__solver_check(ode), OT_ERR_ARG,
                     "device: CUDA solves run in OT_LOCKSTEP mode");
    ck_assert_status(request(ode, CAP_FWD_SENS, 0, ot__solver_for(ode)), OT_ERR_ARG,
                     "device: CUDA solves run in OT_LOCKSTEP mode");
    ot_ode_free(ode);
}
END_TEST

Suite *core_api_suite(void)
{
    Suite *s = suite_create("core_api");
    TCase *tc = ot_test_tcase(s, "core_api", 30);
    tcase_add_test(tc, the_solver_table_picks_by_mode_and_device);
    tcase_add_loop_test(tc, each_row_does_what_it_declares, 0, NCHOICES);
    tcase_add_test(tc, every_row_is_chosen_by_a_mode_and_device);
    return s;
}

/* The JS shim's solves (dense, with starts and stops, every step,
 * sensitivities, the adjoint) and the solution's accessors, for
 * ../index.mjs and ../solution.mjs; conventions as in shim.c. */
#include "shim.h"

/* A compact [rows, cols] input view over data; absent when data is NULL. */
static int input_view(ot_view *v, const double *data, int rows, int cols)
{
    if (data == NULL) {
        *v = ot_view_absent();
        return OT_OK;
    }
    const int64_t shape[2] = {rows, cols};
    return ot_view_make(v, data, OT_F64, (ot_device){OT_CPU, 0}, 2, shape, NULL);
}

enum { SOLVE_DENSE, SOLVE_STEPS, SOLVE_SENS };

static int run(int kind, ot_solution **out, otw_problem *P, const double *y0, int y0_cols,
               const double *params, int p_cols, const double *t_eval, int nt,
               double final_time)
{
    ot_view y0v = ot_view_absent(), pv = ot_view_absent(), tv = ot_view_absent();
    ot_ode *ode = ode_of(P);
    if (ode != NULL) { /* else the library refuses the NULL ode, with its message */
        const int n = (int)ot_ode_nstates(ode), np = (int)ot_ode_nparams(ode);
        int st = input_view(&y0v, y0, n, y0_cols);
        if (st == OT_OK)
            st = input_view(&pv, params, np, p_cols);
        if (st == OT_OK && kind != SOLVE_STEPS) {
            const int64_t shape[2] = {nt, P->t_cols};
            st = ot_view_make(&tv, t_eval, OT_F64, (ot_device){OT_CPU, 0},
                              P->t_cols > 1 ? 2 : 1, shape, NULL);
        }
        if (st != OT_OK)
            return st;
    }
    switch (kind) {
    case SOLVE_DENSE:
        return ot_solve_dense(ode, y0v, pv, tv, out);
    case SOLVE_STEPS:
        return ot_solve(ode, y0v, pv, final_time, out);
    default:
        return ot_solve_fwd_sens(ode, y0v, pv, tv, out);
    }
}

/* y0 [nstates, y0_cols] or NULL (init computes it), params [nparams, p_cols]
 * or NULL (nparams 0), t_eval [nt]; the solution in *out on OT_OK and
 * OT_ERR_LANES_FAILED (free it with otw_solution_free). */
OTW_API int otw_solve_dense(ot_solution **out, otw_problem *P, const double *y0,
                            int y0_cols, const double *params, int p_cols,
                            const double *t_eval, int nt)
{
    return run(SOLVE_DENSE, out, P, y0, y0_cols, params, p_cols, t_eval, nt, 0);
}

/* As otw_solve_dense (kind 1: otw_solve_fwd_sens, 2: otw_solve_adjoint with
 * otw_set_loss's loss), with per-lane starts t0s [n_t0] (NULL: none),
 * scheduled stops [nstops, stop_cols] (NULL: none), NaN-padded, and their
 * derivatives in p stops_dp [np, nstops, dp_cols] (NULL: fixed stops). */
OTW_API int otw_solve_with(ot_solution **out, otw_problem *P, int kind, const double *y0,
                           int y0_cols, const double *params, int p_cols,
                           const double *t_eval, int nt, const double *t0s, int n_t0,
                           const double *stops, int nstops, int stop_cols,
                           const double *stops_dp, int dp_cols)
{
    ot_ode *ode = ode_of(P);
    if (ode == NULL) /* the library's message for the NULL ode */
        return ot_solve_dense_with(NULL, NULL, out);
    const int n = (int)ot_ode_nstates(ode), np = (int)ot_ode_nparams(ode);
    ot_solve_inputs in =
        ot_solve_inputs_make(ot_view_absent(), ot_view_absent(), ot_view_absent());
    const int64_t tshape[2] = {nt, P->t_cols}, len = n_t0,
                  sshape[2] = {nstops, stop_cols};
    const ot_device cpu = {OT_CPU, 0};
    int st = input_view(&in.y0, y0, n, y0_cols);
    if (st == OT_OK)
        st = input_view(&in.params, params, np, p_cols);
    if (st == OT_OK)
        st = ot_view_make(&in.t_eval, t_eval, OT_F64, cpu, P->t_cols > 1 ? 2 : 1, tshape,
                          NULL);
    if (st == OT_OK && t0s)
        st = ot_view_make(&in.t0, t0s, OT_F64, cpu, 1, &len, NULL);
    if (st == OT_OK && stops)
        st = ot_view_make(&in.stops, stops, OT_F64, cpu, stop_cols > 1 ? 2 : 1, sshape,
                          NULL);
    const int64_t dshape[3] = {np, nstops, dp_cols};
    if (st == OT_OK && stops_dp)
        st = ot_view_make(&in.stops_dp, stops_dp, OT_F64, cpu, dp_cols > 1 ? 3 : 2,
                          dshape, NULL);
    ot_loss l;
    if (st == OT_OK && kind == 2)
        st = otw_make_loss(P, ode, nt, &l);
    if (st != OT_OK)
        return st;
    if (kind == 2)
        return ot_solve_adjoint_with(ode, &in, &l, out);
    return kind == 1 ? ot_solve_fwd_sens_with(ode, &in, out)
                     : ot_solve_dense_with(ode, &in, out);
}

OTW_API int otw_solve(ot_solution **out, otw_problem *P, const double *y0, int y0_cols,
                      const double *params, int p_cols, double final_time)
{
    return run(SOLVE_STEPS, out, P, y0, y0_cols, params, p_cols, NULL, 0, final_time);
}

OTW_API int otw_solve_fwd_sens(ot_solution **out, otw_problem *P, const double *y0,
                               int y0_cols, const double *params, int p_cols,
                               const double *t_eval, int nt)
{
    return run(SOLVE_SENS, out, P, y0, y0_cols, params, p_cols, t_eval, nt, 0);
}

/* The library's loss views are compact: flat arrays as they are. */
static int loss_tramp(double t, int64_t i, int64_t lane, ot_view y, ot_view p,
                      ot_view_mut g, ot_view_mut dgdy, ot_view_mut dgdp, void *user)
{
    otw_problem *P = user;
    return P->loss(t, (int)i, y.layout.data, p.layout.data, g.layout.data,
                   dgdy.layout.data, dgdp.layout.data, 1, (int)lane, P->user);
}

static int integrand_tramp(double t, int64_t lane, ot_view y, ot_view p, ot_view_mut q,
                           ot_view_mut dqdy, ot_view_mut dqdp, void *user)
{
    otw_problem *P = user;
    return P->integrand(t, y.layout.data, p.layout.data, q.layout.data, dqdy.layout.data,
                        dqdp.layout.data, (int)lane, P->user);
}

/* As otw_solve_dense, plus the loss and its gradients by the adjoint
 * (ot_solve_adjoint): a sum of squares against data [rows, nt, data_lanes]
 * (rows: nout with out, else nstates; data_lanes 1: every lane) with
 * weights of the same shape (NULL: 1), or, with data NULL, the loss
 * function loss (or neither); plus the integral of integrand (NULL: none). */
/* The adjoint's loss: a sum of squares against data [rows, nt, data_lanes]
 * (rows: nout, or nstates without out) with weights as data (NULL: ones),
 * or loss's terms at the outputs (data NULL), plus integrand's integral
 * (NULL: none). The arrays are the caller's and must outlive the solve. */
OTW_API int otw_set_loss(otw_problem *P, const double *data, int data_lanes,
                         const double *weights, otw_loss_fn loss,
                         otw_integrand_fn integrand)
{
    if (P == NULL)
        return OT_ERR_ARG;
    P->loss_data = data;
    P->loss_lanes = data_lanes;
    P->loss_weights = weights;
    P->loss = loss;
    P->integrand = integrand;
    return OT_OK;
}

/* otw_set_loss's loss as the library's, with nt output times (shim.h). */
int otw_make_loss(otw_problem *P, ot_ode *ode, int nt, ot_loss *l)
{
    *l = ot_loss_custom(P->loss ? loss_tramp : NULL, P);
    l->integrand = P->integrand ? integrand_tramp : NULL;
    if (P->loss_data == NULL)
        return OT_OK;
    const int lanes = P->loss_lanes;
    const int64_t shape[3] = {P->nout ? P->nout : ot_ode_nstates(ode), nt, lanes};
    const ot_device cpu = {OT_CPU, 0};
    ot_integrand_fn q = l->integrand;
    *l = ot_loss_squares(ot_view_absent(), ot_view_absent());
    l->integrand = q;
    l->user = P;
    int st =
        ot_view_make(&l->data, P->loss_data, OT_F64, cpu, lanes > 1 ? 3 : 2, shape, NULL);
    if (st == OT_OK && P->loss_weights)
        st = ot_view_make(&l->weights, P->loss_weights, OT_F64, cpu, lanes > 1 ? 3 : 2,
                          shape, NULL);
    return st;
}

/* The adjoint of otw_set_loss's loss at output times t_eval [nt] (or
 * [nt, t_cols]); otherwise as otw_solve_dense. */
OTW_API int otw_solve_adjoint(ot_solution **out, otw_problem *P, const double *y0,
                              int y0_cols, const double *params, int p_cols,
                              const double *t_eval, int nt)
{
    ot_ode *ode = ode_of(P);
    ot_view y0v = ot_view_absent(), pv = ot_view_absent(), tv = ot_view_absent();
    ot_loss l = ot_loss_custom(NULL, NULL);
    if (ode != NULL) {
        const int n = (int)ot_ode_nstates(ode), np = (int)ot_ode_nparams(ode);
        const int64_t tshape[2] = {nt, P->t_cols};
        int st = input_view(&y0v, y0, n, y0_cols);
        if (st == OT_OK)
            st = input_view(&pv, params, np, p_cols);
        if (st == OT_OK)
            st = ot_view_make(&tv, t_eval, OT_F64, (ot_device){OT_CPU, 0},
                              P->t_cols > 1 ? 2 : 1, tshape, NULL);
        if (st == OT_OK)
            st = otw_make_loss(P, ode, nt, &l);
        if (st != OT_OK)
            return st;
    }
    return ot_solve_adjoint(ode, y0v, pv, tv, &l, out);
}

/* Lane b's checkpoint bytes (ot_solution_lane_adjoint_bytes). */
OTW_API double otw_adjoint_bytes(const ot_solution *s, int b)
{
    return (double)ot_solution_lane_adjoint_bytes(s, b);
}

/* ---- Solution ----------------------------------------------------------- */

OTW_API void otw_solution_free(ot_solution *s) { ot_solution_free(s); }
OTW_API int otw_solution_nbatch(const ot_solution *s)
{
    return (int)ot_solution_nbatch(s);
}
OTW_API int otw_solution_nsens(const ot_solution *s) { return (int)ot_solution_nsens(s); }

/* Lane b's recorded events (0 without events). */
OTW_API int otw_event_count(const ot_solution *s, int b)
{
    return (int)ot_solution_lane_event_count(s, b);
}

/* Output tensor `which` (0 ts, 1 ys, 2 + j sens(j), 100 + k event tensor k
 * (ot_event_tensor), 200 + k gradient tensor k (ot_grad_tensor)): returns
 * its data and
 * fills info[8] with dtype, ndim, shape[3] and strides[3] in elements; NULL
 * (and info untouched) when there is no such tensor or info is NULL. */
OTW_API const void *otw_tensor(const ot_solution *s, int which, int32_t *info)
{
    const ot_tensor *t = which >= 200   ? ot_solution_grad_tensor(s, which - 200)
                         : which >= 100 ? ot_solution_event_tensor(s, which - 100)
                         : which == 0   ? ot_solution_ts(s)
                         : which == 1   ? ot_solution_ys(s)
                                        : ot_solution_sens(s, (int64_t)which - 2);
    if (t == NULL || info == NULL)
        return NULL;
    const ot_layout *l = ot_tensor_layout(t);
    const int64_t item = (int64_t)ot_dtype_size(l->dtype);
    info[0] = l->dtype;
    info[1] = l->ndim;
    for (int a = 0; a < OT_MAX_NDIM; a++) {
        info[2 + a] = (int32_t)l->shape[a];
        info[5 + a] = (int32_t)(l->strides[a] / item);
    }
    return l->data;
}

/* Per-lane results for all nbatch lanes at once: status, count, root index
 * and time, and stats[12 * b + i] = steps, rhs_evals, jac_rhs_evals,
 * jac_evals, lin_setups, err_test_fails, nonlin_iters, nonlin_fails,
 * lin_iters, final_time, adj_steps, adj_max_steps. @return the number of lanes filled; 0
 * (nothing written) when s or an array is NULL. */
OTW_API int otw_lanes(const ot_solution *s, int32_t *status, int32_t *count,
                      int32_t *root_index, double *root_time, double *stats)
{
    if (!status || !count || !root_index || !root_time || !stats)
        return 0;
    const int64_t nb = ot_solution_nbatch(s);
    for (int64_t b = 0; b < nb; b++) {
        ot_lane_stats ls;
        int index = -1;
        double time = 0;
        status[b] = ot_solution_lane_status(s, b);
        count[b] = (int32_t)ot_solution_lane_count(s, b);
        ot_solution_lane_root(s, b, &index, &time);
        root_index[b] = index;
        root_time[b] = time;
        memset(&ls, 0, sizeof ls);
        ot_solution_lane_stats(s, b, &ls);
        double *o = stats + 12 * b;
        o[0] = (double)ls.steps;
        o[1] = (double)ls.rhs_evals;
        o[2] = (double)ls.jac_rhs_evals;
        o[3] = (double)ls.jac_evals;
        o[4] = (double)ls.lin_setups;
        o[5] = (double)ls.err_test_fails;
        o[6] = (double)ls.nonlin_iters;
        o[7] = (double)ls.nonlin_fails;
        o[8] = (double)ls.lin_iters;
        o[9] = ls.final_time;
        o[10] = (double)ls.adj_steps;
        o[11] = (double)ls.adj_max_steps;
    }
    return (int)nb;
}

OTW_API const char *otw_lane_message(const ot_solution *s, int b)
{
    return ot_solution_lane_message(s, b);
}

/* The solve cases of solve_cases.h. */
#include "solve_cases.h"

#include <stdio.h>
#include <stdlib.h>

const sc_case SC_CASES[] = {
    {"lanes BDF dense, 1 thread", OT_LANES, OT_BDF, K_DENSE, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"lanes BDF dense, 2 threads, f32 y0, atol vector, out", OT_LANES, OT_BDF, K_DENSE, 2,
     0, 1, 0, 1, 1, 0, 0, 0},
    {"lanes Adams steps with roots", OT_LANES, OT_ADAMS, K_STEPS, 1, 1, 0, 0, 0, 0, 0, 0,
     0},
    {"lanes BDF sensitivities, sens tolerances, init", OT_LANES, OT_BDF, K_SENS, 1, 0, 0,
     1, 0, 0, 1, 0, 0},
    {"lanes Adams sensitivities, roots", OT_LANES, OT_ADAMS, K_SENS, 1, 1, 0, 0, 0, 0, 0,
     0, 0},
    {"lockstep BDF dense, init, out", OT_LOCKSTEP, OT_BDF, K_DENSE, 1, 0, 1, 1, 0, 0, 0,
     0, 0},
    {"lockstep Adams steps with roots", OT_LOCKSTEP, OT_ADAMS, K_STEPS, 1, 1, 0, 0, 0, 0,
     0, 0, 0},
    {"lockstep BDF sensitivities, atol vector, roots", OT_LOCKSTEP, OT_BDF, K_SENS, 1, 1,
     0, 0, 0, 1, 1, 0, 0},
    {"lockstep BDF dense in blocks of 2, 2 threads, out", OT_LOCKSTEP, OT_BDF, K_DENSE, 2,
     0, 1, 0, 0, 0, 0, 2, 0},
    {"lockstep Adams steps with roots in blocks of 3", OT_LOCKSTEP, OT_ADAMS, K_STEPS, 2,
     1, 0, 0, 0, 0, 0, 3, 0},
    {"lanes BDF adjoint, init, atol vector", OT_LANES, OT_BDF, K_ADJ, 1, 0, 0, 1, 0, 1, 0,
     0, 0},
    {"lanes Adams adjoint, out, 2 threads", OT_LANES, OT_ADAMS, K_ADJ, 2, 0, 1, 0, 0, 0,
     0, 0, 0},
    {"lockstep BDF adjoint in blocks of 2, init", OT_LOCKSTEP, OT_BDF, K_ADJ, 2, 0, 0, 1,
     0, 0, 0, 2, 0},
    {"lockstep Adams adjoint, out", OT_LOCKSTEP, OT_ADAMS, K_ADJ, 1, 0, 1, 0, 0, 0, 0, 0,
     0},
    /* K_ADJ with senstol: the loss has an integral term too */
    {"lanes BDF adjoint with an integral term", OT_LANES, OT_BDF, K_ADJ, 1, 0, 0, 0, 0, 0,
     1, 0, 0},
    {"lockstep BDF adjoint with an integral term", OT_LOCKSTEP, OT_BDF, K_ADJ, 1, 0, 0, 0,
     0, 0, 1, 0, 0},
    /* ARKODE's methods (an IMEX method gets the rhs as its explicit part too) */
    {"lanes ERK dense, atol vector, out", OT_LANES, OT_ERK_DP54, K_DENSE, 1, 0, 1, 0, 0,
     1, 0, 0, 0},
    {"lanes ESDIRK steps with roots, 2 threads", OT_LANES, OT_ESDIRK43, K_STEPS, 2, 1, 0,
     0, 0, 0, 0, 0, 0},
    {"lanes IMEX dense, init", OT_LANES, OT_IMEX_ARK43, K_DENSE, 1, 0, 0, 1, 0, 0, 0, 0,
     0},
    {"lockstep ERK steps with roots", OT_LOCKSTEP, OT_ERK_VERNER65, K_STEPS, 1, 1, 0, 0,
     0, 0, 0, 0, 0},
    {"lockstep ESDIRK dense in blocks of 2, out", OT_LOCKSTEP, OT_ESDIRK54, K_DENSE, 2, 0,
     1, 0, 0, 0, 0, 2, 0},
    {"lockstep IMEX dense, atol vector", OT_LOCKSTEP, OT_IMEX_ARK32, K_DENSE, 1, 0, 0, 0,
     0, 1, 0, 0, 0},
    /* the band and Krylov linear solvers */
    {"lanes BDF band dense, roots", OT_LANES, OT_BDF, K_DENSE, 1, 1, 0, 0, 0, 0, 0, 0,
     OT_LINSOL_BAND},
    {"lanes ESDIRK GMRES steps, 2 threads", OT_LANES, OT_ESDIRK43, K_STEPS, 2, 0, 0, 0, 0,
     0, 0, 0, OT_LINSOL_GMRES},
    /* few points (each costs a leak check): one thread, one block */
    {"lanes BDF sensitivities through doses", OT_LANES, OT_BDF, K_SENS_STOPS, 1, 0, 0, 0,
     0, 0, 0, 0, 0},
    {"lockstep BDF sensitivities through doses", OT_LOCKSTEP, OT_BDF, K_SENS_STOPS, 1, 0,
     0, 0, 0, 0, 0, 0, 0},
    {"lanes BDF adjoint through doses", OT_LANES, OT_BDF, K_ADJ_STOPS, 1, 0, 0, 0, 0, 0,
     0, 0, 0},
    {"lockstep BDF adjoint through doses", OT_LOCKSTEP, OT_BDF, K_ADJ_STOPS, 1, 0, 0, 0,
     0, 0, 0, 0, 0},
};
const int SC_NCASES = (int)(sizeof SC_CASES / sizeof SC_CASES[0]);

void sc_inputs_init(sc_inputs *in)
{
    memset(in, 0, sizeof *in);
    for (int b = 0; b < SC_NB; b++) {
        in->p[2 * b] = 0.5 + 0.25 * b;
        in->p[2 * b + 1] = 1.0 + b;
        in->y0[2 * b] = 1.0 + b;
        in->y0[2 * b + 1] = 2.0 + 2.0 * b;
        in->y0f[2 * b] = (float)in->y0[2 * b];
        in->y0f[2 * b + 1] = (float)in->y0[2 * b + 1];
    }
    for (int i = 0; i < SC_NT; i++)
        in->t[i] = 0.5 * (i + 1);
    in->atol[0] = 1e-9, in->atol[1] = 1e-10;
}

/* g = y_0 - 0.3 a: the first state decays through 30 % of its start. */
static int decay_root(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] =
            ot_view_col_f64(y, b, 0)[0] - 0.3 * ot_view_col_f64(p, b, 0)[1];
    return 0;
}

static int decay_out(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(o, b, 0)[0] =
            ot_view_col_f64(y, b, 0)[0] + ot_view_col_f64(y, b, 0)[1];
    return 0;
}

/* q = y_0^2: an integral term for the adjoint cases. */
static int first_squared(double t, int64_t lane, ot_view y, ot_view p, ot_view_mut q,
                         ot_view_mut dqdy, ot_view_mut dqdp, void *u)
{
    (void)t, (void)lane, (void)p, (void)dqdp, (void)u;
    const double x = ot_view_col_f64(y, 0, 0)[0];
    ot_view_mut_col_f64(q, 0, 0)[0] = x * x;
    ot_view_mut_col_f64(dqdy, 0, 0)[0] = 2 * x;
    return 0;
}

/* A dose of p_1 / 2 into the first state. */
static int dose(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p, void *u)
{
    (void)t, (void)root, (void)lane, (void)u;
    ot_view_mut_col_f64(y, 0, 0)[0] += 0.5 * ot_view_mut_col_f64(p, 0, 0)[1];
    return 0;
}

ot_ode *sc_make_ode(const sc_case *c, const sc_inputs *in)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 2, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, c->mode), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, c->method), OT_OK, NULL);
    if (c->method >= OT_IMEX_ARK32)
        ck_assert_status(ot_ode_set_rhs_explicit(ode, st_decay_rhs), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, c->threads), OT_OK, NULL);
    ck_assert_status(ot_ode_set_lockstep_block(ode, c->block), OT_OK, NULL);
    if (c->linsol) {
        ck_assert_status(ot_ode_set_linear_solver(ode, (ot_linsol)c->linsol), OT_OK,
                         NULL);
        ck_assert_status(ot_ode_set_bandwidths(ode, 1, 1), OT_OK, NULL);
    }
    if (c->roots)
        ck_assert_status(ot_ode_set_roots(ode, 1, decay_root), OT_OK, NULL);
    if (c->out)
        ck_assert_status(ot_ode_set_out(ode, 1, decay_out), OT_OK, NULL);
    if (c->init)
        ck_assert_status(ot_ode_set_init(ode, st_decay_init), OT_OK, NULL);
    if (c->atolvec)
        ck_assert_status(ot_ode_set_atol_vector(ode, st_vec(in->atol, 2)), OT_OK, NULL);
    if (c->kind == K_SENS_STOPS || c->kind == K_ADJ_STOPS)
        ck_assert_status(ot_ode_set_event_handler(ode, dose), OT_OK, NULL);
    if (c->senstol && c->kind != K_ADJ)
        ck_assert_status(ot_ode_set_sens_tolerances(ode, 1e-5, 1e-7), OT_OK, NULL);
    return ode;
}

/* A compact view without Check (st_view_t asserts, and Check allocates:
 * this runs while check_malloc_fail.c fails allocations). cols < 0: [rows]. */
static ot_view view(const void *data, ot_dtype dt, int64_t rows, int64_t cols)
{
    ot_view v = ot_view_absent();
    const int64_t shape[2] = {rows, cols};
    if (ot_view_make(&v, data, dt, ST_CPU, cols < 0 ? 1 : 2, shape, NULL) != OT_OK)
        return ot_view_absent(); /* the solve then refuses it: the test fails */
    return v;
}

int sc_run_solve(const sc_case *c, const ot_ode *ode, const sc_inputs *in,
                 ot_solution **out)
{
    const ot_view y0 = c->init  ? ot_view_absent()
                       : c->f32 ? view(in->y0f, OT_F32, 2, SC_NB)
                                : view(in->y0, OT_F64, 2, SC_NB);
    const ot_view p = view(in->p, OT_F64, 2, SC_NB), t = view(in->t, OT_F64, SC_NT, -1);
    static const double data[2 * SC_NT]; /* zeros: L is the sum of squared rows */
    ot_loss loss =
        ot_loss_squares(view(data, OT_F64, c->out ? 1 : 2, SC_NT), ot_view_absent());
    if (c->senstol)
        loss.integrand = first_squared;
    switch (c->kind) {
    case K_ADJ:
        return ot_solve_adjoint(ode, y0, p, t, &loss, out);
    case K_DENSE:
        return ot_solve_dense(ode, y0, p, t, out);
    case K_STEPS:
        return ot_solve(ode, y0, p, in->t[SC_NT - 1], out);
    case K_SENS_STOPS:
    case K_ADJ_STOPS: {
        /* the second stop moves with p_0: d stop_1 / d p_0 = 1 */
        static const double stops[2] = {0.7, 1.3}, dp[4] = {0, 0, 1, 0};
        ot_solve_inputs w = ot_solve_inputs_make(y0, p, t);
        w.stops = view(stops, OT_F64, 2, -1);
        w.stops_dp = view(dp, OT_F64, 2, 2);
        return c->kind == K_ADJ_STOPS ? ot_solve_adjoint_with(ode, &w, &loss, out)
                                      : ot_solve_fwd_sens_with(ode, &w, out);
    }
    default:
        return ot_solve_fwd_sens(ode, y0, p, t, out);
    }
}

/* Lane b (the last axis) of x and y holds the same bytes: all of it when
 * the shapes agree, else its first count time points (ot_solve pads to the
 * longest lane, and a lane that failed may have been the longest). */
static int lane_same(const ot_tensor *x, const ot_tensor *y, int64_t b, int64_t count)
{
    const ot_layout *lx = ot_tensor_layout(x), *ly = ot_tensor_layout(y);
    if (lx->ndim != ly->ndim)
        return 0;
    if (lx->ndim == 1) /* dense ts [nt]: shared by every lane */
        return lx->shape[0] == ly->shape[0] &&
               memcmp(lx->data, ly->data, (size_t)lx->shape[0] * 8) == 0;
    const int d = lx->ndim - 1; /* lane axis; d - 1 is time */
    const int same = memcmp(lx->shape, ly->shape, sizeof lx->shape) == 0;
    if (!same && count > lx->shape[d - 1])
        return 0;
    const size_t bytes =
        same ? (size_t)lx->strides[d] : (size_t)(count * lx->strides[d - 1]);
    return memcmp((const char *)lx->data + b * lx->strides[d],
                  (const char *)ly->data + b * ly->strides[d], bytes) == 0;
}

const char *sc_lane_differs(const ot_solution *got, const ot_solution *ref, int64_t b)
{
    const int64_t count = ot_solution_lane_count(ref, b);
    if (ot_solution_lane_count(got, b) != count)
        return "its count of time points";
    if (!lane_same(ot_solution_ys(got), ot_solution_ys(ref), b, count) ||
        !lane_same(ot_solution_ts(got), ot_solution_ts(ref), b, count))
        return "its values or times";
    for (int64_t j = 0; j < ot_solution_nsens(ref); j++)
        if (!lane_same(ot_solution_sens(got, j), ot_solution_sens(ref, j), b, count))
            return "its sensitivities";
    for (int g = 0; g < 3 && ot_solution_grad_tensor(ref, g); g++) {
        const ot_layout *lg = ot_tensor_layout(ot_solution_grad_tensor(got, g)),
                        *lr = ot_tensor_layout(ot_solution_grad_tensor(ref, g));
        const int64_t rows = lr->ndim == 1 ? 1 : lr->shape[0];
        if (memcmp((const double *)lg->data + b * rows,
                   (const double *)lr->data + b * rows,
                   (size_t)rows * sizeof(double)) != 0)
            return "its gradient";
    }
    int ig = -2, ir = -3;
    double tg = 0, tr = 1;
    if (ot_solution_lane_root(got, b, &ig, &tg) != OT_OK ||
        ot_solution_lane_root(ref, b, &ir, &tr) != OT_OK || ig != ir ||
        memcmp(&tg, &tr, sizeof tg) != 0)
        return "its root";
    ot_lane_stats x, y;
    if (ot_solution_lane_stats(got, b, &x) != OT_OK ||
        ot_solution_lane_stats(ref, b, &y) != OT_OK || x.steps != y.steps ||
        x.rhs_evals != y.rhs_evals || x.jac_evals != y.jac_evals ||
        x.lin_setups != y.lin_setups || x.err_test_fails != y.err_test_fails ||
        x.nonlin_iters != y.nonlin_iters || x.nonlin_fails != y.nonlin_fails ||
        memcmp(&x.final_time, &y.final_time, sizeof x.final_time) != 0)
        return "its statistics";
    return NULL;
}

/* The shard from OT_INJECT_SHARD, read once: *s of *n (0 of 1: all). */
static void shard_of(int *s, int *n)
{
    static int read, ss, nn = 1;
    if (!read) {
        read = 1;
        const char *e = getenv("OT_INJECT_SHARD");
        if (e != NULL &&
            (sscanf(e, "%d/%d", &ss, &nn) != 2 || nn < 1 || ss < 0 || ss >= nn)) {
            fprintf(stderr,
                    "OT_INJECT_SHARD=%s: expected s/n with 0 <= s < n; every case runs\n",
                    e);
            ss = 0, nn = 1;
        }
    }
    *s = ss, *n = nn;
}

int sc_in_shard(int i)
{
    int s, n;
    shard_of(&s, &n);
    return i % n == s;
}

const char *sc_shard_name(void)
{
    static char buf[48];
    int s, n;
    shard_of(&s, &n);
    if (n == 1)
        return "every case";
    snprintf(buf, sizeof buf, "shard %d of %d", s, n);
    return buf;
}

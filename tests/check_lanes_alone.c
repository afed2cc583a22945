/* Issue 22, item 4: lanes fail alone in every mode. A lane whose own y0 or
 * params are not finite fails with OT_ERR_VALUE and a message naming the
 * argument, the element and the rule, and the call goes on for the others
 * (one such value broadcast to every lane still refuses the call:
 * check_solve_faults.c). The solver leaves the lane out from the start, so
 * in both modes every other lane is bit for bit what a solve without it
 * gives. In the lockstep adjoint, a lane whose rhs or integral term fails,
 * or whose forward or backward pass reaches max steps, leaves its block
 * alone. Other callback and solver failures of one lane in a lockstep
 * block: check_faults_numeric.c and check_faults_scale.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solve_common.h"
#include "suites.h"

enum { NB = 6, NT = 4, BAD = 3 };
static const double T[NT] = {0, 0.5, 1, 2};
enum { DENSE, STEPS, SENS, ADJOINT, NKINDS };
static const char *const KIND[NKINDS] = {"dense", "steps", "sens", "adjoint"};

static int solve(const ot_ode *ode, int kind, const double *y0, const double *k,
                 int64_t nb, ot_solution **out)
{
    static const double data[2 * NT] = {1, 1, 0.5, 0.5, 0.3, 0.3, 0.1, 0.1};
    const ot_view Y = st_mat(y0, 2, nb), K = st_mat(k, 1, nb), TV = st_vec(T, NT);
    const ot_loss loss = ot_loss_squares(st_mat(data, 2, NT), ot_view_absent());
    switch (kind) {
    case STEPS:
        return ot_solve(ode, Y, K, 2.0, out);
    case SENS:
        return ot_solve_fwd_sens(ode, Y, K, TV, out);
    case ADJOINT:
        return ot_solve_adjoint(ode, Y, K, TV, &loss, out);
    default:
        return ot_solve_dense(ode, Y, K, TV, out);
    }
}

/* Bytes of lane a's [rows, count] outputs in x equal lane b's in y. */
static int same_outputs(const ot_tensor *x, int64_t a, const ot_tensor *y, int64_t b,
                        int64_t count)
{
    const ot_layout *lx = ot_tensor_layout(x), *ly = ot_tensor_layout(y);
    return memcmp((const char *)lx->data + a * lx->strides[2],
                  (const char *)ly->data + b * ly->strides[2],
                  (size_t)(count * lx->strides[1])) == 0;
}

/* Loop: _i & 1 lockstep, (_i >> 1) % 4 the kind of solve, _i >> 3 which
 * input is bad (0: y0[1] of lane 3 is NaN, 1: its k is +Inf). */
START_TEST(a_non_finite_input_fails_its_lane_alone)
{
    const int lockstep = _i & 1, kind = (_i >> 1) % NKINDS, params = _i >> 3;
    double k[NB], y0[2 * NB], kr[NB - 1], yr[2 * (NB - 1)];
    decay_inputs(k, y0, NB);
    for (int64_t b = 0, r = 0; b < NB; b++) /* the inputs without lane BAD */
        if (b != BAD) {
            kr[r] = k[b];
            yr[2 * r] = y0[2 * b];
            yr[2 * r + 1] = y0[2 * b + 1];
            r++;
        }
    if (params)
        k[BAD] = INFINITY;
    else
        y0[2 * BAD + 1] = NAN;
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    ck_assert_status(ot_ode_set_mode(ode, lockstep ? OT_LOCKSTEP : OT_LANES), OT_OK,
                     NULL);
    ot_solution *s = NULL, *ref = NULL;
    ck_assert_status(solve(ode, kind, y0, k, NB, &s), OT_ERR_LANES_FAILED,
                     params
                         ? "1 of 6 lanes failed; lane 3: params: [0, 3] is inf; values "
                           "must be finite"
                         : "1 of 6 lanes failed; lane 3: y0: [1, 3] is nan; values must "
                           "be finite");
    ck_assert_status(solve(ode, kind, yr, kr, NB - 1, &ref), OT_OK, NULL);
    ck_assert_int_eq(ot_solution_lane_status(s, BAD), OT_ERR_VALUE);
    ck_assert_int_eq(ot_solution_lane_count(s, BAD), 0);
    for (int64_t i = 0; i < ot_tensor_layout(ot_solution_ys(s))->shape[1]; i++)
        ck_assert(isnan(st_y(s, 0, i, BAD)) && isnan(st_y(s, 1, i, BAD)));
    if (kind == ADJOINT)
        ck_assert(isnan(st_at(ot_solution_grad_tensor(s, OT_GRAD_PARAMS), 0, BAD, 0)));
    for (int64_t b = 0, r = 0; b < NB; b++) {
        if (b == BAD)
            continue;
        const int64_t c = ot_solution_lane_count(s, b);
        ck_assert_msg(ot_solution_lane_status(s, b) == OT_OK &&
                          c == ot_solution_lane_count(ref, r),
                      "%s lane %lld", KIND[kind], (long long)b);
        ck_assert_msg(same_outputs(ot_solution_ys(s), b, ot_solution_ys(ref), r, c),
                      "%s lane %lld differs from the solve without lane 3", KIND[kind],
                      (long long)b);
        for (int64_t j = 0; j < ot_solution_nsens(s); j++)
            ck_assert(
                same_outputs(ot_solution_sens(s, j), b, ot_solution_sens(ref, j), r, c));
        if (kind == ADJOINT)
            ck_assert(st_at(ot_solution_grad_tensor(s, OT_GRAD_PARAMS), 0, b, 0) ==
                      st_at(ot_solution_grad_tensor(ref, OT_GRAD_PARAMS), 0, r, 0));
        if (!lockstep) /* lanes mode: the statistics too */
            st_assert_stats_equal(s, b, ref, r);
        r++;
    }
    ot_solution_free(s);
    ot_solution_free(ref);
    ot_ode_free(ode);
}
END_TEST

/* The decay rhs, failing (-1) for the lane whose k is 0.5 from t = 1 on. */
static int rhs_fails_k05(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    for (int64_t b = 0; b < ST_LANES(y); b++)
        if (ot_view_col_f64(p, b, 0)[0] == 0.5 && t > 1.0)
            return -1;
    return st_decay_rhs(t, y, p, f, u);
}

/* The adjoint in lockstep: a lane whose rhs fails in the forward pass
 * leaves the block alone (and the backward pass, whose difference quotients
 * call rhs too, leaves it out); the others' loss and gradients are lanes
 * mode's to 1e-6. Loop: without and with the user's Jacobian. */
START_TEST(a_lane_whose_rhs_fails_leaves_the_lockstep_adjoint_alone)
{
    static const double data[2 * NT] = {1, 1, 0.5, 0.5, 0.3, 0.3, 0.1, 0.1};
    double k[NB], y0[2 * NB];
    decay_inputs(k, y0, NB);
    k[BAD] = 0.5;
    ot_ode *ode = NULL, *ref = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, rhs_fails_k05, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_new(&ref, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ot_ode *both[2] = {ode, ref};
    for (int m = 0; m < 2; m++) {
        ck_assert_status(ot_ode_set_rtol(both[m], 1e-9), OT_OK, NULL);
        ck_assert_status(ot_ode_set_atol(both[m], 1e-11), OT_OK, NULL);
        if (_i)
            ck_assert_status(ot_ode_set_jac(both[m], st_decay_jac), OT_OK, NULL);
    }
    ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    const ot_loss loss = ot_loss_squares(st_mat(data, 2, NT), ot_view_absent());
    ot_solution *s = NULL, *r = NULL;
    ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB),
                                      st_vec(T, NT), &loss, &s),
                     OT_ERR_LANES_FAILED, "1 of 6 lanes failed; lane 3: rhs returned -1");
    ck_assert_status(ot_solve_adjoint(ref, st_mat(y0, 2, NB), st_mat(k, 1, NB),
                                      st_vec(T, NT), &loss, &r),
                     OT_OK, NULL);
    ck_assert(isnan(st_at(ot_solution_grad_tensor(s, OT_GRAD_PARAMS), 0, BAD, 0)));
    for (int64_t b = 0; b < NB; b++) {
        if (b == BAD)
            continue;
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
        for (int which = OT_GRAD_LOSS; which <= OT_GRAD_PARAMS; which++) {
            const int64_t i = which == OT_GRAD_LOSS ? b : 0,
                          j = which == OT_GRAD_LOSS ? 0 : b;
            const double x = st_at(ot_solution_grad_tensor(s, which), i, j, 0),
                         y = st_at(ot_solution_grad_tensor(r, which), i, j, 0);
            ck_assert_msg(fabs(x - y) <= 1e-6 * fabs(y),
                          "lane %lld grad %d: %.12g vs %.12g", (long long)b, which, x, y);
        }
    }
    ot_solution_free(s);
    ot_solution_free(r);
    ot_ode_free(ode);
    ot_ode_free(ref);
}
END_TEST

/* q = y_0^2, failing (-1, or Inf with _i odd) for the lane whose k is 0.5
 * from t = 1 on. */
static int fail_inf;
static int integrand(double t, int64_t lane, ot_view y, ot_view p, ot_view_mut q,
                     ot_view_mut dqdy, ot_view_mut dqdp, void *u)
{
    (void)lane, (void)dqdp, (void)u;
    const double y0 = ot_view_col_f64(y, 0, 0)[0];
    ot_view_mut_col_f64(q, 0, 0)[0] = y0 * y0;
    ot_view_mut_col_f64(dqdy, 0, 0)[0] = 2 * y0;
    if (ot_view_col_f64(p, 0, 0)[0] == 0.5 && t > 1.0) {
        if (!fail_inf)
            return -1;
        ot_view_mut_col_f64(q, 0, 0)[0] = INFINITY;
    }
    return 0;
}

/* The lockstep adjoint with an integral term that fails for one lane (it
 * failed the whole block): that lane fails alone, naming the integrand;
 * the others' loss and gradients are those of the same solve where it does
 * not fail, to 1e-6. Loop: returns -1, writes Inf. */
START_TEST(a_failing_integral_term_fails_its_lane_alone_in_lockstep)
{
    static const double data[2 * NT] = {1, 1, 0.5, 0.5, 0.3, 0.3, 0.1, 0.1};
    double k[NB], y0[2 * NB], kr[NB];
    decay_inputs(k, y0, NB);
    k[BAD] = 0.5;
    memcpy(kr, k, sizeof k);
    kr[BAD] = 0.50001; /* the same lane, its integrand fine */
    fail_inf = _i;
    ot_ode *ode = decay_ode(1, 1e-9, 1e-11);
    ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    ot_loss loss = ot_loss_squares(st_mat(data, 2, NT), ot_view_absent());
    loss.integrand = integrand;
    ot_solution *s = NULL, *r = NULL;
    ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB),
                                      st_vec(T, NT), &loss, &s),
                     OT_ERR_LANES_FAILED, "1 of 6 lanes failed; lane 3: integrand");
    ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, NB), st_mat(kr, 1, NB),
                                      st_vec(T, NT), &loss, &r),
                     OT_OK, NULL);
    ck_assert(isnan(st_at(ot_solution_grad_tensor(s, OT_GRAD_PARAMS), 0, BAD, 0)));
    for (int64_t b = 0; b < NB; b++) {
        if (b == BAD)
            continue;
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
        const double x = st_at(ot_solution_grad_tensor(s, OT_GRAD_PARAMS), 0, b, 0),
                     y = st_at(ot_solution_grad_tensor(r, OT_GRAD_PARAMS), 0, b, 0);
        ck_assert_msg(fabs(x - y) <= 1e-6 * fabs(y), "lane %lld: %.12g vs %.12g",
                      (long long)b, x, y);
    }
    ot_solution_free(s);
    ot_solution_free(r);
    ot_ode_free(ode);
}
END_TEST

/* ---- A lane at max steps in the lockstep adjoint ---------------------------- */

/* y_0' = -k y_0, and an oscillator (y_1, y_2)' = w (y_2, -y_1); p = (k, w).
 * From y_1 = y_2 = 0 the oscillator rests, so its forward pass is easy
 * whatever w is; its adjoint does not (the data of y_1 make lambda jump),
 * and with a large w its backward pass needs more than max_steps. */
static int osc_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *x = ot_view_col_f64(y, b, 0), *q = ot_view_col_f64(p, b, 0);
        double *o = ot_view_mut_col_f64(f, b, 0);
        o[0] = -q[0] * x[0];
        o[1] = q[1] * x[2];
        o[2] = -q[1] * x[1];
    }
    return 0;
}

static int osc_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *q = ot_view_col_f64(p, b, 0);
        ot_view_mut_col_f64(J, 0, b)[0] = -q[0];
        ot_view_mut_col_f64(J, 2, b)[1] = q[1];
        ot_view_mut_col_f64(J, 1, b)[2] = -q[1];
    }
    return 0;
}

enum { ONB = 4, ONT = 5, OBAD = 2 };
static const double OT_TIMES[ONT] = {1, 2, 3, 4, 5};
/* Data of y_0 and y_1 (y_2 has none). */
static const double OSC_DATA[3 * ONT] = {0.5, 0.3, NAN, 0.5, 0.3, NAN, 0.5, 0.3,
                                         NAN, 0.5, 0.3, NAN, 0.5, 0.3, NAN};

/* ONB lanes, lane OBAD with w = 1e4: at rest (its backward pass fails at
 * 3000 steps) or, with forward, oscillating (its forward pass does). */
static void osc_inputs(double *p, double *y0, int forward)
{
    static const double k[ONB] = {0.5, 0.6, 0.7, 0.8}, w[ONB] = {1, 1.3, 1e4, 0.7};
    for (int64_t b = 0; b < ONB; b++) {
        p[2 * b] = k[b];
        p[2 * b + 1] = w[b];
        y0[3 * b] = 1;
        y0[3 * b + 1] = b == OBAD && !forward ? 0 : 0.5;
        y0[3 * b + 2] = 0;
    }
}

static ot_ode *osc_ode(ot_mode mode, int jac)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 3, 2, osc_rhs, NULL), OT_OK, NULL);
    if (jac)
        ck_assert_status(ot_ode_set_jac(ode, osc_jac), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-8), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_max_steps(ode, 3000), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, 1), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    return ode;
}

static ot_solution *osc_adjoint(const ot_ode *ode, const double *p, const double *y0,
                                int64_t nb, int status)
{
    const ot_loss loss = ot_loss_squares(st_mat(OSC_DATA, 3, ONT), ot_view_absent());
    ot_solution *s = NULL;
    ck_assert_int_eq(ot_solve_adjoint(ode, st_mat(y0, 3, nb), st_mat(p, 2, nb),
                                      st_vec(OT_TIMES, ONT), &loss, &s),
                     status);
    return s;
}

/* The loss and every gradient of lane a of x and lane b of y: the same
 * bits (rel 0), or within rel of the largest of that gradient in y's lane
 * (its small entries are differences of large terms). */
static void assert_grads_close(const ot_solution *x, int64_t a, const ot_solution *y,
                               int64_t b, double rel)
{
    static const int64_t rows[3] = {1, 2, 3};
    for (int which = OT_GRAD_LOSS; which <= OT_GRAD_Y0; which++) {
        const ot_tensor *tx = ot_solution_grad_tensor(x, which),
                        *ty = ot_solution_grad_tensor(y, which);
        /* [1]-shaped loss: lane a is row a; the others: [rows, lanes]. */
        const int loss = which == OT_GRAD_LOSS;
        double big = 0;
        for (int64_t r = 0; r < rows[which]; r++)
            big = fmax(big, fabs(st_at(ty, loss ? b : r, loss ? 0 : b, 0)));
        for (int64_t r = 0; r < rows[which]; r++) {
            const double u = st_at(tx, loss ? a : r, loss ? 0 : a, 0),
                         v = st_at(ty, loss ? b : r, loss ? 0 : b, 0);
            ck_assert_msg(rel > 0 ? fabs(u - v) <= rel * big : u == v,
                          "lane %lld, gradient %d row %lld: %.15g vs %.15g", (long long)a,
                          which, (long long)r, u, v);
        }
    }
}

/* One lane's backward pass at max steps (lanes mode fails that lane): in a
 * lockstep block it fails alone with the integrator's message, and the
 * block's backward problem goes on without it from the last good time; the
 * others' loss and gradients are lanes mode's to 1e-6. Loop: the user's
 * Jacobian, difference quotients. */
START_TEST(a_lane_at_max_steps_in_its_backward_pass_leaves_the_lockstep_block_alone)
{
    double p[2 * ONB], y0[3 * ONB];
    osc_inputs(p, y0, 0);
    ot_ode *lock = osc_ode(OT_LOCKSTEP, _i == 0), *lanes = osc_ode(OT_LANES, _i == 0);
    ot_solution *s = osc_adjoint(lock, p, y0, ONB, OT_ERR_LANES_FAILED),
                *r = osc_adjoint(lanes, p, y0, ONB, OT_ERR_LANES_FAILED);
    ck_assert_int_eq(ot_solution_nfailed(s), 1);
    ck_assert_int_eq(ot_solution_nfailed(r), 1);
    ck_assert_int_eq(ot_solution_lane_status(s, OBAD), OT_ERR_SOLVER);
    ck_assert_int_eq(ot_solution_lane_status(r, OBAD), OT_ERR_SOLVER);
    const char *msg = ot_solution_lane_message(s, OBAD);
    ck_assert_msg(strstr(msg, "adjoint: the backward integration stopped") &&
                      strstr(msg, "mxstep"),
                  "%s", msg);
    ck_assert_int_eq(ot_solution_lane_count(s, OBAD), ONT); /* its forward pass's */
    ck_assert(isnan(st_at(ot_solution_grad_tensor(s, OT_GRAD_PARAMS), 0, OBAD, 0)));
    for (int64_t b = 0; b < ONB; b++)
        if (b != OBAD) {
            ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
            assert_grads_close(s, b, r, b, 1e-6);
        }
    ot_solution_free(s);
    ot_solution_free(r);
    ot_ode_free(lock);
    ot_ode_free(lanes);
}
END_TEST

/* One lane's forward pass at max steps: in a lockstep block it fails alone
 * and the block's forward pass starts again from t0 without it, so the
 * others' loss and gradients are bit for bit those of the block without
 * that lane, and lanes mode's to 1e-6. */
START_TEST(a_lane_at_max_steps_in_its_forward_pass_leaves_the_lockstep_block_alone)
{
    double p[2 * ONB], y0[3 * ONB], pr[2 * (ONB - 1)], yr[3 * (ONB - 1)];
    osc_inputs(p, y0, 1);
    for (int64_t b = 0, r = 0; b < ONB; b++)
        if (b != OBAD) {
            memcpy(pr + 2 * r, p + 2 * b, 2 * sizeof *p);
            memcpy(yr + 3 * r, y0 + 3 * b, 3 * sizeof *y0);
            r++;
        }
    ot_ode *lock = osc_ode(OT_LOCKSTEP, 1), *lanes = osc_ode(OT_LANES, 1);
    ot_solution *s = osc_adjoint(lock, p, y0, ONB, OT_ERR_LANES_FAILED),
                *without = osc_adjoint(lock, pr, yr, ONB - 1, OT_OK),
                *r = osc_adjoint(lanes, p, y0, ONB, OT_ERR_LANES_FAILED);
    ck_assert_int_eq(ot_solution_nfailed(s), 1);
    ck_assert_int_eq(ot_solution_lane_status(s, OBAD), OT_ERR_SOLVER);
    ck_assert_int_eq(ot_solution_lane_status(r, OBAD), OT_ERR_SOLVER);
    const char *msg = ot_solution_lane_message(s, OBAD);
    ck_assert_msg(strstr(msg, "CVODE stopped before t = 1") && strstr(msg, "mxstep"),
                  "%s", msg);
    ck_assert_int_eq(ot_solution_lane_count(s, OBAD), 0);
    for (int64_t b = 0, k = 0; b < ONB; b++)
        if (b != OBAD) {
            ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
            ck_assert(
                same_outputs(ot_solution_ys(s), b, ot_solution_ys(without), k, ONT));
            assert_grads_close(s, b, without, k++, 0);
            assert_grads_close(s, b, r, b, 1e-6);
        }
    ot_solution_free(s);
    ot_solution_free(without);
    ot_solution_free(r);
    ot_ode_free(lock);
    ot_ode_free(lanes);
}
END_TEST

/* Issue 22: a multi-start fit with the adjoint in lockstep (default block,
 * every start in it) lost every start at the first iteration because one
 * start's backward pass hit max steps. Here 12 starts fit k of y_0' = -k y_0
 * (data from k = 0.7) by gradient descent, the oscillator at rest beside
 * it; start 5's w = 2e4 makes its backward pass hit max steps. Only that
 * start is lost, at the first iteration; the others go on and their loss
 * falls. */
START_TEST(a_multi_start_fit_loses_only_the_start_whose_backward_pass_hits_max_steps)
{
    enum { STARTS = 12, LOST = 5, ITERS = 4 };
    double p[2 * STARTS], y0[3 * STARTS], first[STARTS], data[3 * ONT];
    int64_t alive[STARTS], nalive = STARTS;
    for (int64_t b = 0; b < STARTS; b++) {
        p[2 * b] = 0.3 + 0.08 * (double)b;
        p[2 * b + 1] = b == LOST ? 2e4 : 1.0;
        y0[3 * b] = 1;
        y0[3 * b + 1] = y0[3 * b + 2] = 0;
        alive[b] = b;
    }
    for (int64_t i = 0; i < ONT; i++) {
        data[3 * i] = exp(-0.7 * OT_TIMES[i]);
        data[3 * i + 1] = 0.3;
        data[3 * i + 2] = NAN;
    }
    ot_ode *ode = osc_ode(OT_LOCKSTEP, 1);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-6), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-9), OT_OK, NULL);
    ck_assert_status(ot_ode_set_max_steps(ode, 5000), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, 0), OT_OK, NULL);
    const ot_loss loss = ot_loss_squares(st_mat(data, 3, ONT), ot_view_absent());
    for (int it = 0; it < ITERS; it++) {
        ot_solution *s = NULL;
        const int st = ot_solve_adjoint(ode, st_mat(y0, 3, nalive), st_mat(p, 2, nalive),
                                        st_vec(OT_TIMES, ONT), &loss, &s);
        ck_assert_int_eq(st, (it == 0 ? OT_ERR_LANES_FAILED : OT_OK));
        ck_assert_int_eq(ot_solution_nfailed(s), (it == 0));
        int64_t kept = 0;
        for (int64_t b = 0; b < nalive; b++) {
            if (ot_solution_lane_status(s, b) != OT_OK) {
                ck_assert_int_eq(alive[b], LOST);
                ck_assert_int_eq(ot_solution_lane_status(s, b), OT_ERR_SOLVER);
                continue;
            }
            const double l = st_at(ot_solution_grad_tensor(s, OT_GRAD_LOSS), b, 0, 0),
                         g = st_at(ot_solution_grad_tensor(s, OT_GRAD_PARAMS), 0, b, 0);
            ck_assert(isfinite(l) && isfinite(g));
            if (it == 0)
                first[alive[b]] = l;
            if (it == ITERS - 1)
                ck_assert_msg(l < first[alive[b]], "start %lld: loss %g from %g",
                              (long long)alive[b], l, first[alive[b]]);
            /* The step, and the start moved down to its slot among those kept. */
            p[2 * kept] = p[2 * b] - 0.5 * g;
            p[2 * kept + 1] = p[2 * b + 1];
            memmove(y0 + 3 * kept, y0 + 3 * b, 3 * sizeof *y0);
            alive[kept++] = alive[b];
        }
        ck_assert_int_eq(kept, STARTS - 1);
        nalive = kept;
        ot_solution_free(s);
    }
    ot_ode_free(ode);
}
END_TEST

/* ---- A lane that stopped is no longer checked ------------------------------ */

/* y' = -p[0] y... here simply y' = -p[0], root y = 0.2 (stop), and an out
 * function that is NaN below y = 0.25: lane 0 (p = 1) stops at t = 0.8, its
 * state frozen at 0.2 where out is NaN; lane 1 (p = 0.1) runs on. */
static int slope_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)y, (void)u;
    for (int64_t b = 0; b < ST_LANES(p); b++)
        ot_view_mut_col_f64(f, b, 0)[0] = -ot_view_col_f64(p, b, 0)[0];
    return 0;
}

static int at_fifth(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0] - 0.2;
    return 0;
}

static int nan_below_quarter(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double v = ot_view_col_f64(y, b, 0)[0];
        ot_view_mut_col_f64(o, b, 0)[0] = v >= 0.25 ? v : NAN;
    }
    return 0;
}

/* Both modes: lane 0 keeps OT_OK, its root and its 2 outputs; out of its
 * frozen state after the stop is nobody's output and fails nothing. */
START_TEST(a_lane_stopped_at_a_root_is_not_failed_by_later_outputs)
{
    double y0 = 1, p[2] = {1, 0.1}, t[5] = {0, 0.5, 1, 1.5, 2};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, 1, slope_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, _i ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
    ck_assert_status(ot_ode_set_roots(ode, 1, at_fifth), OT_OK, NULL);
    ck_assert_status(ot_ode_set_out(ode, 1, nan_below_quarter), OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(&y0, 1), st_mat(p, 1, 2), st_vec(t, 5), &s), OT_OK,
        NULL);
    int root = -1;
    double when = 0;
    ot_solution_lane_root(s, 0, &root, &when);
    ck_assert_int_eq(root, 0);
    ck_assert_double_eq_tol(when, 0.8, 1e-8);
    ck_assert_int_eq(ot_solution_lane_count(s, 0), 2);
    ck_assert_int_eq(ot_solution_lane_count(s, 1), 5);
    ck_assert_double_eq_tol(st_y(s, 0, 4, 1), 0.8, 1e-8);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* The backward pass's own limits (issue 23: a failing lane burnt 100,000
 * backward steps, 15x the call's time). With the default max_steps
 * (100,000) the runaway lane OBAD fails at its derived limit, 10 times its
 * forward pass's steps (at least 500), in both modes; every lane reports
 * its backward steps and the limit it had; a limit set by hand is the one
 * used; the tolerances have their own setter (refusals, and tighter ones
 * take more backward steps). */
START_TEST(the_backward_pass_has_its_own_step_limit_and_tolerances)
{
    double p[2 * ONB], y0[3 * ONB];
    osc_inputs(p, y0, 0);
    ot_ode *ode = osc_ode(_i ? OT_LOCKSTEP : OT_LANES, 1);
    ck_assert_status(ot_ode_set_max_steps(ode, 100000), OT_OK, NULL);
    ot_solution *s = osc_adjoint(ode, p, y0, ONB, OT_ERR_LANES_FAILED);
    ck_assert_int_eq(ot_solution_nfailed(s), 1);
    ck_assert_int_eq(ot_solution_lane_status(s, OBAD), OT_ERR_SOLVER);
    ck_assert_msg(strstr(ot_solution_lane_message(s, OBAD), "mxstep"), "%s",
                  ot_solution_lane_message(s, OBAD));
    for (int64_t b = 0; b < ONB; b++) {
        ot_lane_stats ls;
        ck_assert_status(ot_solution_lane_stats(s, b, &ls), OT_OK, NULL);
        const int64_t want = 10 * ls.steps > 500 ? 10 * ls.steps : 500;
        if (!_i) /* lanes mode: the lane's own forward steps */
            ck_assert_int_eq(ls.adj_max_steps, want);
        ck_assert_int_ge(ls.adj_max_steps, 500);
        ck_assert_int_lt(ls.adj_max_steps, 100000);
        ck_assert_int_gt(ls.adj_steps, 0);
        if (!_i && b != OBAD)
            ck_assert_int_le(ls.adj_steps, ONT * ls.adj_max_steps);
    }
    ot_solution_free(s);
    /* By hand: 40 steps between outputs are too few for every lane. */
    ck_assert_status(ot_ode_set_adjoint_steps(ode, 40), OT_OK, NULL);
    s = osc_adjoint(ode, p, y0, ONB, OT_ERR_LANES_FAILED);
    ot_lane_stats ls;
    ck_assert_status(ot_solution_lane_stats(s, 0, &ls), OT_OK, NULL);
    ck_assert_int_eq(ls.adj_max_steps, 40);
    ck_assert_int_eq(ot_solution_lane_status(s, 0), OT_ERR_SOLVER);
    ot_solution_free(s);
    ck_assert_status(ot_ode_set_adjoint_steps(ode, -1), OT_ERR_VALUE,
                     "adjoint_steps: -1; must be >= 0");
    ck_assert_status(ot_ode_set_adjoint_steps(ode, 0), OT_OK, NULL);
    ck_assert_status(ot_ode_set_adjoint_tolerances(ode, 1e-6, 0), OT_ERR_VALUE,
                     "give both (> 0), or both 0");
    ck_assert_status(ot_ode_set_adjoint_tolerances(ode, NAN, 1e-6), OT_ERR_VALUE,
                     "adjoint_rtol: nan; must be finite");
    /* Tighter backward tolerances: more backward steps for a good lane. */
    osc_inputs(p, y0, 1); /* no runaway lane: OBAD oscillates forward */
    p[2 * OBAD + 1] = 2;
    s = osc_adjoint(ode, p, y0, ONB, OT_OK);
    ot_lane_stats loose, tight;
    ot_solution_lane_stats(s, 0, &loose);
    ot_solution_free(s);
    ck_assert_status(ot_ode_set_adjoint_tolerances(ode, 1e-11, 1e-13), OT_OK, NULL);
    s = osc_adjoint(ode, p, y0, ONB, OT_OK);
    ot_solution_lane_stats(s, 0, &tight);
    ck_assert_int_gt(tight.adj_steps, loose.adj_steps);
    ck_assert_int_eq(tight.steps, loose.steps); /* the forward pass is the same */
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

Suite *lanes_alone_suite(void)
{
    Suite *s = suite_create("lanes_alone");
    TCase *tc = ot_test_tcase(s, "lanes that fail alone", 60);
    tcase_add_loop_test(tc, a_non_finite_input_fails_its_lane_alone, 0, 4 * NKINDS);
    tcase_add_loop_test(tc, a_lane_whose_rhs_fails_leaves_the_lockstep_adjoint_alone, 0,
                        2);
    tcase_add_loop_test(tc, a_failing_integral_term_fails_its_lane_alone_in_lockstep, 0,
                        2);
    tcase_add_loop_test(tc, a_lane_stopped_at_a_root_is_not_failed_by_later_outputs, 0,
                        2);
    tcase_add_loop_test(
        tc, a_lane_at_max_steps_in_its_backward_pass_leaves_the_lockstep_block_alone, 0,
        2);
    tcase_add_test(
        tc, a_lane_at_max_steps_in_its_forward_pass_leaves_the_lockstep_block_alone);
    tcase_add_test(
        tc, a_multi_start_fit_loses_only_the_start_whose_backward_pass_hits_max_steps);
    tcase_add_loop_test(tc, the_backward_pass_has_its_own_step_limit_and_tolerances, 0,
                        2);
    return s;
}

/* Issue 22, item 4: lanes fail alone in every mode. A lane whose own y0 or
 * params are not finite fails with OT_ERR_VALUE and a message naming the
 * argument, the element and the rule, and the call goes on for the others
 * (one such value broadcast to every lane still refuses the call:
 * check_solve_faults.c). The solver leaves the lane out from the start, so
 * in both modes every other lane is bit for bit what a solve without it
 * gives. Callback and solver failures of one lane in a lockstep block:
 * check_faults_numeric.c and check_faults_scale.c. */
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
    return s;
}

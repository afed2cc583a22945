/* Issue 13's traps: inputs on which the library once returned a wrong number
 * with status OK, or crashed. Each test failed before its fix. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "solve_common.h"
#include "suites.h"

#include "core/test_hooks.h"

/* ---- Lockstep callbacks written for one lane ----------------------------------- */

/* Written as if for lanes mode: column 0 only. */
static int col0_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    ot_view_mut_col_f64(f, 0, 0)[0] =
        -ot_view_col_f64(p, 0, 0)[0] * ot_view_col_f64(y, 0, 0)[0];
    return 0;
}

static int all_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(f, b, 0)[0] =
            -ot_view_col_f64(p, b, 0)[0] * ot_view_col_f64(y, b, 0)[0];
    return 0;
}

static int col0_root(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    ot_view_mut_col_f64(g, 0, 0)[0] = ot_view_col_f64(y, 0, 0)[0] - 0.5;
    return 0;
}

static int col0_out(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t, (void)p, (void)u;
    ot_view_mut_col_f64(o, 0, 0)[0] = 2 * ot_view_col_f64(y, 0, 0)[0];
    return 0;
}

static int col0_init(ot_view p, ot_view_mut y0, void *u)
{
    (void)p, (void)u;
    ot_view_mut_col_f64(y0, 0, 0)[0] = 1.0;
    return 0;
}

/* The README's example wrote column 0 only; in OT_LOCKSTEP that returned OK
 * with lanes 1.. never integrated (lane 49 stayed 1.0 instead of 0.135).
 * Now each callback kind (_i: rhs, root, out, init) written that way fails
 * the batch with a message naming lane 1 and the rule. */
START_TEST(a_lockstep_callback_that_writes_one_column_fails_naming_the_lane)
{
    static const char *const names[4] = {
        "rhs did not write dydt for lane 1", "root did not write g for lane 1",
        "out did not write o for lane 1", "init did not write y0 for lane 1"};
    double k[8], y0 = 1.0;
    const double t[3] = {0, 1, 2};
    for (int b = 0; b < 8; b++)
        k[b] = 0.1 * (b + 1);
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, 1, _i == 0 ? col0_rhs : all_rhs, NULL), OT_OK,
                     NULL);
    ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    if (_i == 1)
        ck_assert_status(ot_ode_set_roots(ode, 1, col0_root), OT_OK, NULL);
    if (_i == 2)
        ck_assert_status(ot_ode_set_out(ode, 1, col0_out), OT_OK, NULL);
    if (_i == 3)
        ck_assert_status(ot_ode_set_init(ode, col0_init), OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense(ode, _i == 3 ? ot_view_absent() : st_vec(&y0, 1),
                                    st_mat(k, 1, 8), st_vec(t, 3), &s),
                     OT_ERR_LANES_FAILED, names[_i]);
    ck_assert_msg(strstr(ot_solution_lane_message(s, 5), "must write every column"), "%s",
                  ot_solution_lane_message(s, 5));
    ck_assert_int_eq(ot_solution_lane_status(s, 5), OT_ERR_CALLBACK);
    ot_solution_free(s);
    /* The same problem in lanes mode (k = 1: column 0 is every column). */
    ck_assert_status(ot_ode_set_mode(ode, OT_LANES), OT_OK, NULL);
    ck_assert_status(ot_solve_dense(ode, _i == 3 ? ot_view_absent() : st_vec(&y0, 1),
                                    st_mat(k, 1, 8), st_vec(t, 3), &s),
                     OT_OK, NULL);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- One lane of lockstep = lanes mode -------------------------------------- */

/* Van der Pol, mu = p: y1' = y2, y2' = mu (1 - y1^2) y2 - y1 (stiff). */
static int vdp_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *Y = ot_view_col_f64(y, b, 0), mu = ot_view_col_f64(p, b, 0)[0];
        double *F = ot_view_mut_col_f64(f, b, 0);
        F[0] = Y[1];
        F[1] = mu * (1 - Y[0] * Y[0]) * Y[1] - Y[0];
    }
    return 0;
}

static int vdp_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *Y = ot_view_col_f64(y, b, 0), mu = ot_view_col_f64(p, b, 0)[0];
        double *c0 = ot_view_mut_col_f64(J, 0, b), *c1 = ot_view_mut_col_f64(J, 1, b);
        c0[0] = 0;
        c0[1] = -2 * mu * Y[0] * Y[1] - 1;
        c1[0] = 1;
        c1[1] = mu * (1 - Y[0] * Y[0]);
    }
    return 0;
}

/* Lockstep's difference-quotient Jacobian divided by the increment where
 * CVODE multiplies by its inverse: one lane of lockstep took 722 steps on
 * this stiff oscillator against lanes mode's 765. Now one lane of lockstep
 * equals lanes mode bit for bit, with (_i = 1) and without (_i = 0) a user
 * Jacobian: outputs, step counts and every other statistic. */
START_TEST(one_lane_of_lockstep_equals_lanes_mode_bit_for_bit)
{
    const double mu = 1000, y0[2] = {2, 0};
    double t[31];
    for (int i = 0; i < 31; i++)
        t[i] = 100.0 * i;
    ot_solution *s[2] = {NULL, NULL};
    for (int mode = 0; mode < 2; mode++) {
        ot_ode *ode = NULL;
        ck_assert_status(ot_ode_new(&ode, 2, 1, vdp_rhs, NULL), OT_OK, NULL);
        ck_assert_status(ot_ode_set_mode(ode, mode ? OT_LOCKSTEP : OT_LANES), OT_OK,
                         NULL);
        ck_assert_status(ot_ode_set_rtol(ode, 1e-6), OT_OK, NULL);
        if (_i)
            ck_assert_status(ot_ode_set_jac(ode, vdp_jac), OT_OK, NULL);
        ck_assert_status(
            ot_solve_dense(ode, st_vec(y0, 2), st_vec(&mu, 1), st_vec(t, 31), &s[mode]),
            OT_OK, NULL);
        ot_ode_free(ode);
    }
    st_assert_stats_equal(s[0], 0, s[1], 0);
    ot_lane_stats ls[2];
    for (int m = 0; m < 2; m++)
        ck_assert_status(ot_solution_lane_stats(s[m], 0, &ls[m]), OT_OK, NULL);
    ck_assert_int_eq(ls[0].jac_rhs_evals, ls[1].jac_rhs_evals);
    ck_assert_int_gt(ls[0].steps, 500);
    ck_assert(memcmp(ot_tensor_layout(ot_solution_ys(s[0]))->data,
                     ot_tensor_layout(ot_solution_ys(s[1]))->data,
                     st_bytes(ot_solution_ys(s[0]))) == 0);
    ot_solution_free(s[0]);
    ot_solution_free(s[1]);
}
END_TEST

/* ---- Out-of-bounds writes by init and out --------------------------------- */

#if defined(__SANITIZE_ADDRESS__)
/* One element past o / y0 (and, below, past df/dp and the preconditioner's
 * work): lanes mode's scratch slices sat back to back in
 * one block, so this landed in the next slice, unseen by ASan, and during
 * sensitivities changed their outputs. Each slice is now its own
 * allocation: ASan stops the process (exit code 1) at the write. Run only
 * in the sanitizer build, in a forked test. */
static int oob_out(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t, (void)p, (void)u;
    double *c = ot_view_mut_col_f64(o, 0, 0);
    c[0] = ot_view_col_f64(y, 0, 0)[0];
    c[1] = 0; /* nout is 1 */
    return 0;
}

static int oob_init(ot_view p, ot_view_mut y0, void *u)
{
    (void)u;
    double *c = ot_view_mut_col_f64(y0, 0, 0);
    c[0] = c[1] = 1.0;
    c[2] = ot_view_col_f64(p, 0, 0)[0]; /* n is 2 */
    return 0;
}

/* One past df/dp's [n, np] view (issue 23): its scratch was sized for every
 * sensitivity (np + n with sens_initial), so the write landed inside it. */
static int oob_dfdp(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)u;
    double *c = ot_view_mut_col_f64(d, 0, 0);
    c[0] = -ot_view_col_f64(y, 0, 0)[0];
    c[1] = -2 * ot_view_col_f64(y, 0, 0)[1];
    c[2] = ot_view_col_f64(p, 0, 0)[0]; /* [n = 2, np = 1] */
    return 0;
}

/* work[nwork] (issue 23): the work block had one double more. */
static int oob_psetup(double t, ot_view y, ot_view p, double gamma, int jok, int *jcur,
                      ot_view_mut work, void *u)
{
    (void)t, (void)y, (void)p, (void)jok, (void)u;
    double *w = ot_view_mut_col_f64(work, 0, 0);
    w[0] = gamma;
    w[2] = gamma; /* nwork is 2 */
    *jcur = 1;
    return 0;
}

static int identity_psolve(double t, ot_view y, ot_view p, double gamma, ot_view r,
                           ot_view_mut z, ot_view_mut work, void *u)
{
    (void)t, (void)y, (void)p, (void)gamma, (void)work, (void)u;
    for (int i = 0; i < 2; i++)
        ot_view_mut_col_f64(z, 0, 0)[i] = ot_view_col_f64(r, 0, 0)[i];
    return 0;
}

/* The adjoint's user views (issue 23): dgdy of the loss sat in one array
 * of every lane and output, dq/dy before dq/dp in one block, df/dp one
 * double short of its block's end. */
static int oob_loss(double t, int64_t i, int64_t lane, ot_view y, ot_view p,
                    ot_view_mut g, ot_view_mut dgdy, ot_view_mut dgdp, void *u)
{
    (void)t, (void)i, (void)lane, (void)p, (void)dgdp, (void)u;
    ot_view_mut_col_f64(g, 0, 0)[0] = ot_view_col_f64(y, 0, 0)[0];
    double *d = ot_view_mut_col_f64(dgdy, 0, 0);
    d[0] = 1;
    d[2] = 0; /* n is 2 */
    return 0;
}

static int oob_integrand(double t, int64_t lane, ot_view y, ot_view p, ot_view_mut q,
                         ot_view_mut dqdy, ot_view_mut dqdp, void *u)
{
    (void)t, (void)lane, (void)p, (void)dqdp, (void)u;
    ot_view_mut_col_f64(q, 0, 0)[0] = ot_view_col_f64(y, 0, 0)[0];
    double *d = ot_view_mut_col_f64(dqdy, 0, 0);
    d[0] = 1;
    d[2] = 0; /* n is 2: this was dq/dp[0] */
    return 0;
}

static int ok_loss(double t, int64_t i, int64_t lane, ot_view y, ot_view p, ot_view_mut g,
                   ot_view_mut dgdy, ot_view_mut dgdp, void *u)
{
    (void)t, (void)i, (void)lane, (void)p, (void)dgdp, (void)u;
    ot_view_mut_col_f64(g, 0, 0)[0] = ot_view_col_f64(y, 0, 0)[0];
    ot_view_mut_col_f64(dgdy, 0, 0)[0] = 1;
    return 0;
}

static int adjoint_dfdp_past(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)p, (void)u;
    double *c = ot_view_mut_col_f64(d, 0, 0);
    c[0] = -ot_view_col_f64(y, 0, 0)[0];
    c[1] = -2 * ot_view_col_f64(y, 0, 0)[1];
    c[2] = 0; /* [n = 2, np = 1] */
    return 0;
}

START_TEST(an_out_of_bounds_write_by_init_or_out_is_caught_by_the_sanitizer)
{
    if (freopen("/dev/null", "w", stderr) == NULL) /* ASan's report: not for the log */
        ck_abort_msg("freopen");
    const double k[2] = {1, 2}, y0[2] = {1, 1}, t[2] = {0, 1};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ot_solution *s = NULL;
    if (_i == 2) { /* dfdp, with sensitivities to y0 too */
        ck_assert_status(ot_ode_set_jac(ode, st_decay_jac), OT_OK, NULL);
        ck_assert_status(ot_ode_set_dfdp(ode, oob_dfdp), OT_OK, NULL);
        ck_assert_status(ot_ode_set_sens_initial(ode, 1), OT_OK, NULL);
    } else if (_i == 3) { /* GMRES's preconditioner setup */
        ck_assert_status(ot_ode_set_linear_solver(ode, OT_LINSOL_GMRES), OT_OK, NULL);
        ck_assert_status(ot_ode_set_preconditioner(ode, oob_psetup, identity_psolve, 2),
                         OT_OK, NULL);
    } else {
        ck_assert_status(_i ? ot_ode_set_init(ode, oob_init)
                            : ot_ode_set_out(ode, 1, oob_out),
                         OT_OK, NULL);
    }
    if (_i >= 4) { /* the adjoint: its loss, its integrand, df/dp */
        ot_loss loss = ot_loss_custom(_i == 4 ? oob_loss : NULL, NULL);
        if (_i == 5)
            loss.integrand = oob_integrand;
        if (_i == 6) {
            loss = ot_loss_custom(ok_loss, NULL);
            ck_assert_status(ot_ode_set_jac(ode, st_decay_jac), OT_OK, NULL);
            ck_assert_status(ot_ode_set_dfdp(ode, adjoint_dfdp_past), OT_OK, NULL);
        }
        ot_solve_adjoint(ode, st_vec(y0, 2), st_mat(k, 1, 2), st_vec(t, 2), &loss, &s);
    } else if (_i == 3)
        ot_solve_dense(ode, st_vec(y0, 2), st_mat(k, 1, 2), st_vec(t, 2), &s);
    else
        ot_solve_fwd_sens(ode, _i == 1 ? ot_view_absent() : st_vec(y0, 2),
                          st_mat(k, 1, 2), st_vec(t, 2), &s);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST
#endif

/* ---- Tolerances ------------------------------------------------------------ */

START_TEST(zero_rtol_with_zero_atol_is_refused_when_set)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 0), OT_OK, NULL); /* rtol 1e-6 still */
    ck_assert_status(ot_ode_set_rtol(ode, 0), OT_ERR_VALUE,
                     "rtol and atol would both be 0");
    ck_assert_status(ot_ode_set_atol(ode, 1e-9), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 0), OT_OK, NULL); /* pure absolute control */
    ck_assert_status(ot_ode_set_atol(ode, 0), OT_ERR_VALUE, "for state 0");
    const double atol[2] = {1e-9, 0};
    ck_assert_status(ot_ode_set_atol_vector(ode, st_vec(atol, 2)), OT_ERR_VALUE,
                     "for state 1");
    ot_ode_free(ode);
}
END_TEST

START_TEST(a_relative_tolerance_of_one_or_more_is_refused)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e300), OT_ERR_VALUE, "must be < 1");
    ck_assert_status(ot_ode_set_rtol(ode, 1.0), OT_ERR_VALUE, "must be < 1");
    ck_assert_status(ot_ode_set_rtol(ode, 0.5), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e300), OT_OK, NULL); /* states' own units */
    ot_ode_free(ode);
}
END_TEST

/* ---- Defaults ---------------------------------------------------------------- */

/* Robertson with default options and outputs only at 1e5 and 1e7: CVODE's
 * own 500 steps per interval stopped it at t = 2e4; the default now runs it,
 * and it agrees with a tight solve. */
START_TEST(robertson_on_a_sparse_grid_runs_with_default_options)
{
    static const double k[3] = {0.04, 1e4, 3e7}, y0[3] = {1, 0, 0};
    const double t[2] = {1e5, 1e7};
    for (int mode = OT_LANES; mode <= OT_LOCKSTEP; mode++) {
        ot_ode *ode = NULL;
        ck_assert_status(ot_ode_new(&ode, 3, 3, st_rober_rhs, NULL), OT_OK, NULL);
        ck_assert_status(ot_ode_set_mode(ode, (ot_mode)mode), OT_OK, NULL);
        ot_solution *s = NULL, *fine = NULL;
        ck_assert_status(
            ot_solve_dense(ode, st_vec(y0, 3), st_vec(k, 3), st_vec(t, 2), &s), OT_OK,
            NULL);
        ot_lane_stats ls;
        ck_assert_status(ot_solution_lane_stats(s, 0, &ls), OT_OK, NULL);
        ck_assert_int_gt(ls.steps, 500); /* more than CVODE's default allowed */
        /* The reference: a tight solve through one more output time. */
        const double tr[3] = {4e3, 1e5, 1e7};
        ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
        ck_assert_status(ot_ode_set_atol(ode, 1e-14), OT_OK, NULL);
        ck_assert_status(
            ot_solve_dense(ode, st_vec(y0, 3), st_vec(k, 3), st_vec(tr, 3), &fine), OT_OK,
            NULL);
        for (int i = 0; i < 2; i++)
            for (int r = 0; r < 3; r++) {
                const double ref = st_y(fine, r, i + 1, 0), got = st_y(s, r, i, 0);
                ck_assert_msg(fabs(got - ref) <= 1e-4 * fabs(ref) + 1e-7,
                              "mode %d y%d(%g) = %.9g, reference %.9g", mode, r, t[i],
                              got, ref);
            }
        ot_solution_free(s);
        ot_solution_free(fine);
        ot_ode_free(ode);
    }
}
END_TEST

/* ---- Stiff oscillation: max order and stability limit detection ---------- */

/* y1' = -a y1 - w y2 + cos t, y2' = w y1 - a y2 (a = 10, w = 1000): eigenvalues
 * -10 +- 1000 i near the imaginary axis, a slow forcing. */
static int osc_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *Y = ot_view_col_f64(y, b, 0), *P = ot_view_col_f64(p, b, 0);
        double *F = ot_view_mut_col_f64(f, b, 0);
        F[0] = -P[0] * Y[0] - P[1] * Y[1] + cos(t);
        F[1] = P[1] * Y[0] - P[0] * Y[1];
    }
    return 0;
}

/* The exact solution from y(0) = (1, 0): the forced response Re(M e^{it}),
 * M = (iI - A)^{-1} e1, plus the decaying rotation of y(0) - Re(M). */
static void osc_exact(double a, double w, double t, double *y)
{
    const double complex det = (I + a) * (I + a) + w * w;
    const double complex m0 = (I + a) / det, m1 = w / det, e = cexp(I * t);
    const double h0 = 1 - creal(m0), h1 = -creal(m1), d = exp(-a * t);
    y[0] = creal(m0 * e) + d * (cos(w * t) * h0 - sin(w * t) * h1);
    y[1] = creal(m1 * e) + d * (sin(w * t) * h0 + cos(w * t) * h1);
}

/* BDF of order 3 to 5 is unstable near the imaginary axis: with defaults
 * CVODE keeps cutting its steps and runs out of a 10,000-step budget per
 * output interval; BDF stability limit detection lowers the order instead
 * and finishes with a fraction of the steps (6,843 against 135,496 on a
 * finer grid), on the exact solution. Both modes. */
START_TEST(stiff_oscillation_needs_the_stability_options)
{
    const double p[2] = {10, 1000}, y0[2] = {1, 0};
    double t[12] = {0, 1}; /* then 10, 20, .. 100 */
    for (int i = 2; i < 12; i++)
        t[i] = 10.0 * (i - 1);
    for (int cfg = 0; cfg < 2; cfg++) {
        ot_ode *ode = NULL;
        ck_assert_status(ot_ode_new(&ode, 2, 2, osc_rhs, NULL), OT_OK, NULL);
        ck_assert_status(ot_ode_set_mode(ode, _i ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
        ck_assert_status(ot_ode_set_rtol(ode, 1e-4), OT_OK, NULL);
        ck_assert_status(ot_ode_set_atol(ode, 1e-6), OT_OK, NULL);
        ck_assert_status(ot_ode_set_max_steps(ode, 10000), OT_OK, NULL);
        if (cfg == 1)
            ck_assert_status(ot_ode_set_stability_limit_detection(ode, 1), OT_OK, NULL);
        ot_solution *s = NULL;
        const int st =
            ot_solve_dense(ode, st_vec(y0, 2), st_vec(p, 2), st_vec(t, 12), &s);
        if (cfg == 0) {
            ck_assert_status(st, OT_ERR_LANES_FAILED, NULL);
            ck_assert_msg(strstr(ot_solution_lane_message(s, 0), "mxstep"), "%s",
                          ot_solution_lane_message(s, 0));
        } else {
            ck_assert_status(st, OT_OK, NULL);
            for (int i = 0; i < 12; i++) {
                double ex[2];
                osc_exact(p[0], p[1], t[i], ex);
                for (int r = 0; r < 2; r++)
                    ck_assert_msg(fabs(st_y(s, r, i, 0) - ex[r]) < 1e-4,
                                  "cfg %d y%d(%g) = %g, exact %g", cfg, r, t[i],
                                  st_y(s, r, i, 0), ex[r]);
            }
        }
        ot_solution_free(s);
        ot_ode_free(ode);
    }
}
END_TEST

/* The Oregonator (Field-Noyes), stiff with relaxation spikes: at rtol 1e-4,
 * 100 outputs to t = 360, CVODE's default BDF (orders up to 5) fails at
 * t = 292 with "the error test failed repeatedly" (SciPy's LSODA, BDF and
 * Radau pass); with maximum order 2 it passes and follows a tight solve
 * (rtol 1e-10) to within 20 % at every output (phase errors at the spikes:
 * 2 % in y1, 16 % in y2 at worst). Both modes. */
static int oregonator(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *Y = ot_view_col_f64(y, b, 0);
        double *F = ot_view_mut_col_f64(f, b, 0);
        F[0] = 77.27 * (Y[1] + Y[0] * (1 - 8.375e-6 * Y[0] - Y[1]));
        F[1] = (Y[2] - (1 + Y[0]) * Y[1]) / 77.27;
        F[2] = 0.161 * (Y[0] - Y[2]);
    }
    return 0;
}

START_TEST(the_oregonator_needs_max_order_two)
{
    static const double y0[3] = {1, 2, 3};
    double t[100];
    for (int i = 0; i < 100; i++)
        t[i] = 3.6 * (i + 1);
    ot_solution *s[3] = {NULL, NULL, NULL};
    for (int cfg = 0; cfg < 3; cfg++) { /* defaults, max order 2, tight reference */
        ot_ode *ode = NULL;
        ck_assert_status(ot_ode_new(&ode, 3, 0, oregonator, NULL), OT_OK, NULL);
        ck_assert_status(ot_ode_set_mode(ode, _i ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
        ck_assert_status(ot_ode_set_rtol(ode, cfg == 2 ? 1e-10 : 1e-4), OT_OK, NULL);
        ck_assert_status(ot_ode_set_atol(ode, cfg == 2 ? 1e-13 : 1e-7), OT_OK, NULL);
        if (cfg == 1)
            ck_assert_status(ot_ode_set_max_order(ode, 2), OT_OK, NULL);
        const int st =
            ot_solve_dense(ode, st_vec(y0, 3), ot_view_absent(), st_vec(t, 100), &s[cfg]);
        ck_assert_status(st, cfg == 0 ? OT_ERR_LANES_FAILED : OT_OK,
                         "the error test failed repeatedly");
        ot_ode_free(ode);
    }
    for (int i = 0; i < 100; i++)
        for (int r = 0; r < 3; r++) {
            const double got = st_y(s[1], r, i, 0), ref = st_y(s[2], r, i, 0);
            ck_assert_msg(fabs(got - ref) <= 0.2 * fabs(ref),
                          "y%d(%g) = %g, reference %g", r, t[i], got, ref);
        }
    for (int cfg = 0; cfg < 3; cfg++)
        ot_solution_free(s[cfg]);
}
END_TEST

START_TEST(max_order_and_stability_detection_are_checked_against_the_method)
{
    ot_ode *ode = NULL;
    const double p[2] = {10, 1000}, y0[2] = {1, 0}, t[2] = {0, 1};
    ck_assert_status(ot_ode_new(&ode, 2, 2, osc_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_max_order(ode, 13), OT_ERR_VALUE, "1 to 12 for OT_ADAMS");
    ck_assert_status(ot_ode_set_max_order(ode, -1), OT_ERR_VALUE, "max_order");
    ck_assert_status(ot_ode_set_max_order(ode, 7), OT_OK, NULL); /* fine for Adams */
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_dense(ode, st_vec(y0, 2), st_vec(p, 2), st_vec(t, 2), &s),
                     OT_ERR_VALUE, "OT_BDF allows 1 to 5");
    /* Order 1 (backward Euler) needs far more steps than order 5 for the
     * same tolerance: the option reaches CVODE. */
    const double k[2] = {1.0, 0}, d0[2] = {1, 1}, td[2] = {0, 5};
    ot_ode *dec = NULL;
    ck_assert_status(ot_ode_new(&dec, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(dec, 1e-8), OT_OK, NULL);
    int64_t steps[2];
    for (int q = 0; q < 2; q++) {
        ck_assert_status(ot_ode_set_max_order(dec, q ? 1 : 0), OT_OK, NULL);
        ck_assert_status(
            ot_solve_dense(dec, st_vec(d0, 2), st_vec(k, 1), st_vec(td, 2), &s), OT_OK,
            NULL);
        ot_lane_stats ls;
        ck_assert_status(ot_solution_lane_stats(s, 0, &ls), OT_OK, NULL);
        steps[q] = ls.steps;
        ck_assert_double_eq_tol(st_y(s, 0, 1, 0), exp(-5.0), 1e-5);
        ot_solution_free(s);
    }
    ck_assert_msg(steps[1] > 20 * steps[0], "order 1: %lld steps, default %lld",
                  (long long)steps[1], (long long)steps[0]);
    ot_ode_free(dec);
    ck_assert_status(ot_ode_set_method(ode, OT_ADAMS), OT_OK, NULL);
    ck_assert_status(ot_ode_set_stability_limit_detection(ode, 1), OT_OK, NULL);
    ck_assert_status(ot_solve_dense(ode, st_vec(y0, 2), st_vec(p, 2), st_vec(t, 2), &s),
                     OT_ERR_ARG, "only OT_BDF");
    ot_ode_free(ode);
}
END_TEST

/* ---- Time resolution ----------------------------------------------------------- */

/* y' = -y from a large t0: near 1e15 doubles are 0.125 apart, so CVODE's
 * step times round away (it only warns "t + h = t") and the answer drifts:
 * y(t0 + 1) came back 1.03e-5 (exact 0.368) with status OK; from t0 = 1.7e15
 * (microseconds since 1970) over 10 units, 1.5 % off. Now such a lane fails
 * and says to shift time; shifted, the same problem is right. Every mode. */
static int neg_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(f, b, 0)[0] = -ot_view_col_f64(y, b, 0)[0];
    return 0;
}

START_TEST(a_large_t0_fails_the_lane_instead_of_drifting)
{
    const int mode = _i & 1, steps = _i >> 1;
    static const double y0[2] = {1, 1};
    const double cases[2][2] = {{1e15, 1}, {1.7e15, 10}};
    for (int c = 0; c < 3; c++) {
        const double t0 = c < 2 ? cases[c][0] : 0, dt = c < 2 ? cases[c][1] : 10;
        ot_ode *ode = NULL;
        ck_assert_status(ot_ode_new(&ode, 1, 0, neg_rhs, NULL), OT_OK, NULL);
        ck_assert_status(ot_ode_set_mode(ode, mode ? OT_LOCKSTEP : OT_LANES), OT_OK,
                         NULL);
        ck_assert_status(ot_ode_set_rtol(ode, 1e-8), OT_OK, NULL);
        ck_assert_status(ot_ode_set_t0(ode, t0), OT_OK, NULL);
        const double t[2] = {t0, t0 + dt};
        ot_solution *s = NULL;
        const int st = steps ? ot_solve(ode, st_mat(y0, 1, 2), ot_view_absent(), t[1], &s)
                             : ot_solve_dense(ode, st_mat(y0, 1, 2), ot_view_absent(),
                                              st_vec(t, 2), &s);
        if (c < 2) { /* both lanes fail, whatever they reached is not OK */
            ck_assert_status(st, OT_ERR_LANES_FAILED, NULL);
            for (int b = 0; b < 2; b++) {
                ck_assert_int_eq(ot_solution_lane_status(s, b), OT_ERR_SOLVER);
                ck_assert_msg(strstr(ot_solution_lane_message(s, b), "Shift time"), "%s",
                              ot_solution_lane_message(s, b));
            }
        } else { /* the same problem in shifted time */
            ck_assert_status(st, OT_OK, NULL);
            const int64_t last = ot_solution_lane_count(s, 1) - 1;
            ck_assert_double_eq_tol(st_y(s, 0, last, 1), exp(-10.0),
                                    2e-8); /* atol 1e-8 */
        }
        ot_solution_free(s);
        ot_ode_free(ode);
    }
}
END_TEST

/* ---- Every-step outputs: a runaway lane ---------------------------------------- */

/* 700 lanes of st_decay (y = e^{-k t}, e^{-2 k t}) with Adams; lane 350 has
 * k = 1e4 (stiff for Adams: thousands of stability-bound steps). Outputs
 * [2, nt_max, 700] padded to its length once needed more than the memory
 * limit and the call returned OT_ERR_NOMEM after solving, losing every lane.
 * Now that lane alone fails and keeps its first steps. _i = 0: it finishes
 * (18,000-odd steps) under a 64 MiB limit; _i = 1: it runs into the step
 * limit (100,000: 1.7 GB padded) under 1 GiB, with t_final 10. */
START_TEST(a_runaway_lane_fails_alone_in_every_step_output)
{
    enum { NB = 700, RUN = 350 };
    static double k[NB];
    for (int b = 0; b < NB; b++)
        k[b] = b == RUN ? 1e4 : 1.0 + b * 1e-3;
    const double y0[2] = {1, 1}, t_final = _i ? 10.0 : 1.0;
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, OT_ADAMS), OT_OK, NULL);
    ot__size_set_limit(_i ? UINT64_C(1) << 30 : UINT64_C(64) << 20);
    ot_solution *s = NULL;
    const int st = ot_solve(ode, st_vec(y0, 2), st_mat(k, 1, NB), t_final, &s);
    ot__size_set_limit(0);
    ck_assert_status(st, OT_ERR_LANES_FAILED, "1 of 700 lanes failed; lane 350");
    ck_assert_int_eq(ot_solution_lane_status(s, RUN), _i ? OT_ERR_SOLVER : OT_ERR_NOMEM);
    ck_assert_msg(
        strstr(ot_solution_lane_message(s, RUN), _i ? "max_steps" : "kept its first"),
        "%s", ot_solution_lane_message(s, RUN));
    ot_lane_stats ls;
    ck_assert_status(ot_solution_lane_stats(s, RUN, &ls), OT_OK, NULL);
    const int64_t nt = ot_tensor_layout(ot_solution_ys(s))->shape[1];
    ck_assert_int_eq(ot_solution_lane_count(s, RUN), nt);
    ck_assert_int_lt(nt, ls.steps); /* cut */
    ck_assert_double_eq(ls.final_time, st_at(ot_solution_ts(s), nt - 1, RUN, 0));
    for (int b = 0; b < NB; b += 7) {
        if (b == RUN)
            continue;
        const int64_t c = ot_solution_lane_count(s, b);
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
        ck_assert_double_eq(st_at(ot_solution_ts(s), c - 1, b, 0), t_final);
        ck_assert_double_eq_tol(st_y(s, 1, c - 1, b), exp(-2 * k[b] * t_final), 1e-6);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* The same runaway lane where the memory limit says its padded outputs fit
 * (1 GiB) but malloc cannot give them (issue 23: "ys: cannot allocate
 * 710304000 bytes" and 699 good lanes lost, under a real 1 GiB RLIMIT_AS,
 * where the process's own memory counts too): outputs above 64 MiB fail
 * here as malloc would. The runaway lane is cut until they fit and fails
 * alone; the others are whole. */
START_TEST(a_runaway_lane_fails_alone_when_malloc_gives_less_than_the_limit)
{
    enum { NB = 700, RUN = 350 };
    static double k[NB];
    for (int b = 0; b < NB; b++)
        k[b] = b == RUN ? 1e4 : 1.0 + b * 1e-3;
    const double y0[2] = {1, 1};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, OT_ADAMS), OT_OK, NULL);
    ot__size_set_limit(UINT64_C(1) << 30);
    ot__tensor_set_alloc_ceiling(UINT64_C(64) << 20);
    ot_solution *s = NULL;
    const int st = ot_solve(ode, st_vec(y0, 2), st_mat(k, 1, NB), 1.0, &s);
    ot__tensor_set_alloc_ceiling(0);
    ot__size_set_limit(0);
    ck_assert_status(st, OT_ERR_LANES_FAILED, "1 of 700 lanes failed; lane 350");
    ck_assert_int_eq(ot_solution_lane_status(s, RUN), OT_ERR_NOMEM);
    ck_assert_msg(strstr(ot_solution_lane_message(s, RUN), "could not be allocated"),
                  "%s", ot_solution_lane_message(s, RUN));
    const ot_layout *ys = ot_tensor_layout(ot_solution_ys(s));
    ck_assert_uint_le((uint64_t)(ys->shape[1] * NB * 2 * 8), UINT64_C(64) << 20);
    ck_assert_int_eq(ot_solution_lane_count(s, RUN), ys->shape[1]);
    for (int b = 0; b < NB; b += 7) {
        if (b == RUN)
            continue;
        const int64_t c = ot_solution_lane_count(s, b);
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
        ck_assert_double_eq(st_at(ot_solution_ts(s), c - 1, b, 0), 1.0);
        ck_assert_double_eq_tol(st_y(s, 1, c - 1, b), exp(-2 * k[b]), 1e-6);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- f32 outputs -------------------------------------------------------------- */

/* y' = y from 1e30 passes FLT_MAX (3.4e38) at t = 19.6: those f32 outputs are
 * inf. The lane said OK; now it fails (OT_ERR_VALUE) and keeps the values.
 * The lane that stays in range is untouched. Both modes, dense and steps. */
static int grow_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(f, b, 0)[0] =
            ot_view_col_f64(p, b, 0)[0] * ot_view_col_f64(y, b, 0)[0];
    return 0;
}

START_TEST(f32_outputs_beyond_float_range_fail_the_lane)
{
    const int lock = _i & 1, steps = _i >> 1;
    const double y0 = 1e30, rate[2] = {1.0, 0.1}, t[3] = {0, 10, 25};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, 1, grow_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, lock ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
    ck_assert_status(ot_ode_set_output_dtype(ode, OT_F32), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e20), OT_OK, NULL);
    ot_solution *s = NULL;
    const int st =
        steps ? ot_solve(ode, st_vec(&y0, 1), st_mat(rate, 1, 2), 25.0, &s)
              : ot_solve_dense(ode, st_vec(&y0, 1), st_mat(rate, 1, 2), st_vec(t, 3), &s);
    ck_assert_status(st, OT_ERR_LANES_FAILED, "became inf");
    ck_assert_int_eq(ot_solution_lane_status(s, 0), OT_ERR_VALUE);
    ck_assert_int_eq(ot_solution_lane_status(s, 1), OT_OK);
    const int64_t last = ot_solution_lane_count(s, 0) - 1;
    ck_assert(isinf(st_y(s, 0, last, 0)));
    ck_assert_double_eq_tol(st_y(s, 0, ot_solution_lane_count(s, 1) - 1, 1) / 1e30,
                            exp(2.5), 1e-3);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

Suite *traps_suite(void)
{
    Suite *s = suite_create("traps");
    TCase *tc = ot_test_tcase(s, "lockstep_columns", 60);
    tcase_add_loop_test(
        tc, a_lockstep_callback_that_writes_one_column_fails_naming_the_lane, 0, 4);
    tc = ot_test_tcase(s, "lockstep_one_lane", 60);
    tcase_add_loop_test(tc, one_lane_of_lockstep_equals_lanes_mode_bit_for_bit, 0, 2);
#if defined(__SANITIZE_ADDRESS__)
    const char *fork = getenv("CK_FORK");
    if (fork == NULL || strcmp(fork, "no") != 0) {
        tc = ot_test_tcase(s, "out_of_bounds", 60);
        tcase_add_loop_exit_test(
            tc, an_out_of_bounds_write_by_init_or_out_is_caught_by_the_sanitizer, 1, 0,
            7);
    }
#endif
    tc = ot_test_tcase(s, "tolerances_and_defaults", 60);
    tcase_add_test(tc, zero_rtol_with_zero_atol_is_refused_when_set);
    tcase_add_test(tc, a_relative_tolerance_of_one_or_more_is_refused);
    tcase_add_test(tc, robertson_on_a_sparse_grid_runs_with_default_options);
    tc = ot_test_tcase(s, "stiff_oscillation", 60);
    tcase_add_loop_test(tc, stiff_oscillation_needs_the_stability_options, 0, 2);
    tcase_add_loop_test(tc, the_oregonator_needs_max_order_two, 0, 2);
    tcase_add_test(tc, max_order_and_stability_detection_are_checked_against_the_method);
    tc = ot_test_tcase(s, "time_resolution", 60);
    tcase_add_loop_test(tc, a_large_t0_fails_the_lane_instead_of_drifting, 0, 4);
    tc = ot_test_tcase(s, "outputs", 60);
    tcase_add_loop_test(tc, a_runaway_lane_fails_alone_in_every_step_output, 0, 2);
    tcase_add_test(tc, a_runaway_lane_fails_alone_when_malloc_gives_less_than_the_limit);
    tcase_add_loop_test(tc, f32_outputs_beyond_float_range_fail_the_lane, 0, 4);
    return s;
}

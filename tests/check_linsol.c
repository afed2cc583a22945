/* The linear solvers (issue 16, item 3): banded LU and matrix-free GMRES
 * with and without a user preconditioner, for BDF and the implicit ARKODE
 * methods, against the dense solver on a 1-D reaction-diffusion system of
 * n = 200; failures, statistics and refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solve_common.h"
#include "suites.h"

/* ---- The 1-D Brusselator, N points, n = 2 N states interleaved (u_i, v_i):
 * u_t = 1 + u^2 v - 4 u + a u_xx, v_t = 3 u - u^2 v + a v_xx, a = p[0],
 * u = 1 and v = 3 at both ends. The Jacobian's bandwidth is 2 each side. */
enum { RD_N = 100, RD_NS = 2 * RD_N };

static double rd_c(double a) { return a * (RD_N + 1) * (RD_N + 1); }

static void rd_f(const double *y, double a, double *f, int reaction, int diffusion)
{
    const double c = rd_c(a), ends[2] = {1.0, 3.0};
    for (int i = 0; i < RD_N; i++) {
        const double u = y[2 * i], v = y[2 * i + 1];
        f[2 * i] = reaction ? 1 + u * u * v - 4 * u : 0;
        f[2 * i + 1] = reaction ? 3 * u - u * u * v : 0;
        for (int s = 0; diffusion && s < 2; s++) {
            const double l = i > 0 ? y[2 * (i - 1) + s] : ends[s],
                         r = i < RD_N - 1 ? y[2 * (i + 1) + s] : ends[s];
            f[2 * i + s] += c * (l - 2 * y[2 * i + s] + r);
        }
    }
}

static int rd_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        rd_f(ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0)[0],
             ot_view_mut_col_f64(f, b, 0), 1, 1);
    return 0;
}

static int rd_reaction(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        rd_f(ot_view_col_f64(y, b, 0), 0, ot_view_mut_col_f64(f, b, 0), 1, 0);
    (void)p;
    return 0;
}

static int rd_diffusion(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        rd_f(ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0)[0],
             ot_view_mut_col_f64(f, b, 0), 0, 1);
    return 0;
}

/* d f_i / d y_j for the whole rhs (reaction too) or the diffusion alone,
 * through set(i, j, value) into a dense or a band view. */
typedef struct {
    ot_view_mut J;
    int band;
} jac_out;

static void put(jac_out *o, int i, int j, double v)
{
    double *col = ot_view_mut_col_f64(o->J, j, 0);
    col[o->band ? 2 + i - j : i] += v; /* band: row mupper + i - j, mupper = 2 */
}

static void rd_J(const double *y, double a, jac_out *o, int reaction)
{
    const double c = rd_c(a);
    for (int k = 0; k < RD_NS; k++) {
        put(o, k, k, -2 * c);
        if (k >= 2)
            put(o, k, k - 2, c);
        if (k + 2 < RD_NS)
            put(o, k, k + 2, c);
    }
    for (int i = 0; reaction && i < RD_N; i++) {
        const double u = y[2 * i], v = y[2 * i + 1];
        put(o, 2 * i, 2 * i, 2 * u * v - 4);
        put(o, 2 * i, 2 * i + 1, u * u);
        put(o, 2 * i + 1, 2 * i, 3 - 2 * u * v);
        put(o, 2 * i + 1, 2 * i + 1, -u * u);
    }
}

static int rd_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    jac_out o = {J, J.layout.shape[0] != RD_NS};
    rd_J(ot_view_col_f64(y, 0, 0), ot_view_col_f64(p, 0, 0)[0], &o, 1);
    return 0;
}

static int rd_jac_diffusion(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    jac_out o = {J, J.layout.shape[0] != RD_NS};
    rd_J(ot_view_col_f64(y, 0, 0), ot_view_col_f64(p, 0, 0)[0], &o, 0);
    return 0;
}

/* Preconditioner: P = I - gamma D, D the diffusion (one tridiagonal system
 * per species), by the Thomas algorithm; setup keeps gamma's elimination
 * factors in work [n]. A lane whose p[1] is 1 fails in solve. */
static int rd_psetup(double t, ot_view y, ot_view p, double gamma, int jok, int *jcur,
                     ot_view_mut work, void *u)
{
    (void)t, (void)y, (void)jok, (void)u;
    const double c = rd_c(ot_view_col_f64(p, 0, 0)[0]), off = -gamma * c,
                 diag = 1 + 2 * gamma * c;
    double *w = ot_view_mut_col_f64(work, 0, 0); /* w[i]: modified upper factor */
    w[0] = off / diag;
    for (int i = 1; i < RD_N; i++)
        w[i] = off / (diag - off * w[i - 1]);
    w[RD_N] = gamma;
    *jcur = 1;
    return 0;
}

static int rd_psolve(double t, ot_view y, ot_view p, double gamma, ot_view r,
                     ot_view_mut z, ot_view_mut work, void *u)
{
    (void)t, (void)y, (void)u;
    if (ot_view_col_f64(p, 0, 0)[1] == 1)
        return -1;
    const double c = rd_c(ot_view_col_f64(p, 0, 0)[0]), off = -gamma * c,
                 diag = 1 + 2 * gamma * c;
    const double *w = ot_view_mut_col_f64(work, 0, 0), *rr = ot_view_col_f64(r, 0, 0);
    ck_assert(w[RD_N] == gamma); /* the lane's own setup */
    double *zz = ot_view_mut_col_f64(z, 0, 0);
    for (int s = 0; s < 2; s++) {
        double d[RD_N];
        d[0] = rr[s] / diag;
        for (int i = 1; i < RD_N; i++)
            d[i] = (rr[2 * i + s] - off * d[i - 1]) / (diag - off * w[i - 1]);
        zz[2 * (RD_N - 1) + s] = d[RD_N - 1];
        for (int i = RD_N - 2; i >= 0; i--)
            zz[2 * i + s] = d[i] - w[i] * zz[2 * (i + 1) + s];
    }
    return 0;
}

static const double RD_T[4] = {0.5, 1, 2, 4};

typedef struct {
    int method, linsol, jac, prec, maxl;
} rd_setup;

static ot_ode *rd_ode(const rd_setup *c, double rtol)
{
    const int imex = c->method >= OT_IMEX_ARK32;
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, RD_NS, 2, imex ? rd_diffusion : rd_rhs, NULL),
                     OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, (ot_method)c->method), OT_OK, NULL);
    if (imex)
        ck_assert_status(ot_ode_set_rhs_explicit(ode, rd_reaction), OT_OK, NULL);
    ck_assert_status(ot_ode_set_linear_solver(ode, (ot_linsol)c->linsol), OT_OK, NULL);
    ck_assert_status(ot_ode_set_bandwidths(ode, 2, 2), OT_OK, NULL);
    if (c->jac)
        ck_assert_status(ot_ode_set_jac(ode, imex ? rd_jac_diffusion : rd_jac), OT_OK,
                         NULL);
    if (c->prec)
        ck_assert_status(ot_ode_set_preconditioner(ode, rd_psetup, rd_psolve, RD_N + 1),
                         OT_OK, NULL);
    ck_assert_status(ot_ode_set_krylov_dim(ode, c->maxl), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, rtol), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, rtol * 1e-2), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, 2), OT_OK, NULL);
    return ode;
}

/* Two lanes: diffusion a = 0.02 and 0.01 (p[1] = 0: nothing fails). */
static ot_solution *rd_solve(const rd_setup *c, double rtol, const double *p)
{
    static double y0[RD_NS * 2];
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < RD_N; i++) {
            const double x = (i + 1.0) / (RD_N + 1);
            y0[b * RD_NS + 2 * i] = 1 + sin(2 * 3.14159265358979323846 * x);
            y0[b * RD_NS + 2 * i + 1] = 3;
        }
    static const double p_ok[4] = {0.02, 0, 0.01, 0};
    ot_ode *ode = rd_ode(c, rtol);
    ot_solution *sol = NULL;
    const int st = ot_solve_dense(ode, st_mat(y0, RD_NS, 2), st_mat(p ? p : p_ok, 2, 2),
                                  st_vec(RD_T, 4), &sol);
    ck_assert_msg(st == OT_OK || (p && st == OT_ERR_LANES_FAILED), "%s", ot_last_error());
    ot_ode_free(ode);
    return sol;
}

static double max_diff(const ot_solution *a, const ot_solution *b, int64_t lane)
{
    double d = 0;
    for (int i = 0; i < 4; i++)
        for (int r = 0; r < RD_NS; r++)
            d = fmax(d, fabs(st_y(a, r, i, lane) - st_y(b, r, i, lane)));
    return d;
}

/* Band (the user's band Jacobian, and difference quotients) and GMRES
 * (bare, and with the preconditioner) against dense with the user's
 * Jacobian, each at rtol 1e-7: within 2e-6 of the dense solution and of a
 * dense solve at rtol 1e-10, for BDF, an ESDIRK and IMEX (the implicit
 * part: diffusion). */
START_TEST(band_and_gmres_equal_dense_within_tolerance)
{
    const int methods[3] = {OT_BDF, OT_ESDIRK43, OT_IMEX_ARK43};
    const rd_setup ref_setup = {OT_BDF, OT_LINSOL_DENSE, 1, 0, 0};
    ot_solution *ref = rd_solve(&ref_setup, 1e-10, NULL);
    for (int k = 0; k < 3; k++) {
        const rd_setup dense = {methods[k], OT_LINSOL_DENSE, 1, 0, 0};
        ot_solution *d = rd_solve(&dense, 1e-7, NULL);
        const rd_setup others[4] = {{methods[k], OT_LINSOL_BAND, 1, 0, 0},
                                    {methods[k], OT_LINSOL_BAND, 0, 0, 0},
                                    {methods[k], OT_LINSOL_GMRES, 0, 0, 0},
                                    {methods[k], OT_LINSOL_GMRES, 0, 1, 20}};
        ot_lane_stats bare = {0}, prec = {0};
        for (int j = 0; j < 4; j++) {
            ot_solution *s = rd_solve(&others[j], 1e-7, NULL);
            for (int64_t b = 0; b < 2; b++) {
                ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
                const double e1 = max_diff(s, d, b), e2 = max_diff(s, ref, b);
                ck_assert_msg(e1 < 2e-6 && e2 < 2e-6,
                              "method %d solver %d jac %d prec %d lane %lld: %g from "
                              "dense, %g from the reference",
                              methods[k], others[j].linsol, others[j].jac, others[j].prec,
                              (long long)b, e1, e2);
            }
            ot_lane_stats st;
            ot_solution_lane_stats(s, 0, &st);
            if (others[j].linsol == OT_LINSOL_BAND) {
                ck_assert_int_eq(st.lin_iters, 0);
                /* without the user's Jacobian: mupper + mlower + 1 rhs calls each */
                if (!others[j].jac)
                    ck_assert_int_eq(st.jac_rhs_evals, 5 * st.jac_evals);
                else
                    ck_assert_int_eq(st.jac_rhs_evals, 0);
            } else {
                ck_assert_int_gt(st.lin_iters, 0);
                *(others[j].prec ? &prec : &bare) = st;
            }
            ot_solution_free(s);
        }
        /* The preconditioner does its job: fewer Krylov iterations. */
        ck_assert_int_lt(prec.lin_iters, bare.lin_iters);
        ot_solution_free(d);
    }
    ot_solution_free(ref);
}
END_TEST

/* Lanes are bit-identical for any thread count with band and GMRES; a
 * lane whose preconditioner fails fails alone, the other as alone. */
START_TEST(band_and_gmres_lanes_fail_alone)
{
    const rd_setup c = {OT_BDF, OT_LINSOL_GMRES, 0, 1, 0};
    static const double p_fail[4] = {0.02, 1, 0.01, 0};
    ot_solution *s = rd_solve(&c, 1e-6, p_fail), *ok = rd_solve(&c, 1e-6, NULL);
    ck_assert_int_eq(ot_solution_lane_status(s, 0), OT_ERR_CALLBACK);
    ck_assert_msg(
        strstr(ot_solution_lane_message(s, 0), "preconditioner solve returned -1"), "%s",
        ot_solution_lane_message(s, 0));
    ck_assert_int_eq(ot_solution_lane_status(s, 1), OT_OK);
    ck_assert(st_lane_equal(ot_solution_ys(s), 1, ot_solution_ys(ok), 1));
    st_assert_stats_equal(s, 1, ok, 1);
    ot_solution_free(s);
    ot_solution_free(ok);
}
END_TEST

/* A preconditioner solve whose z is badly scaled (1e-10 P^-1 r: still an
 * invertible P) or zero (issue 23): with left preconditioning GMRES tested
 * ||z|| and stopped at once, OT_OK with errors of 18.6 against a tight dense
 * solve. Right preconditioning tests the true residual: the scaled one is
 * within the tolerance of the unscaled one; z = 0 for r != 0 fails the lane
 * saying why. */
static double z_scale;

static int rd_psolve_scaled(double t, ot_view y, ot_view p, double gamma, ot_view r,
                            ot_view_mut z, ot_view_mut work, void *u)
{
    const int rc = rd_psolve(t, y, p, gamma, r, z, work, u);
    double *zz = ot_view_mut_col_f64(z, 0, 0);
    for (int i = 0; i < RD_NS; i++)
        zz[i] *= z_scale;
    return rc;
}

START_TEST(a_badly_scaled_or_zero_preconditioner_cannot_fool_gmres)
{
    const rd_setup ref_setup = {OT_BDF, OT_LINSOL_DENSE, 1, 0, 0};
    ot_solution *ref = rd_solve(&ref_setup, 1e-10, NULL);
    const double scales[3] = {1, 1e-10, 0};
    for (int k = 0; k < 3; k++) {
        z_scale = scales[k];
        const rd_setup c = {OT_BDF, OT_LINSOL_GMRES, 0, 1, 0};
        ot_ode *ode = rd_ode(&c, 1e-8);
        ck_assert_status(
            ot_ode_set_preconditioner(ode, rd_psetup, rd_psolve_scaled, RD_N + 1), OT_OK,
            NULL);
        static double y0[RD_NS * 2];
        for (int b = 0; b < 2; b++)
            for (int i = 0; i < RD_N; i++) {
                y0[b * RD_NS + 2 * i] =
                    1 + sin(2 * 3.14159265358979323846 * (i + 1.0) / (RD_N + 1));
                y0[b * RD_NS + 2 * i + 1] = 3;
            }
        static const double p[4] = {0.02, 0, 0.01, 0};
        ot_solution *s = NULL;
        const int st = ot_solve_dense(ode, st_mat(y0, RD_NS, 2), st_mat(p, 2, 2),
                                      st_vec(RD_T, 4), &s);
        if (scales[k] == 0) {
            ck_assert_status(st, OT_ERR_LANES_FAILED, "2 of 2 lanes failed");
            for (int64_t b = 0; b < 2; b++) {
                ck_assert_int_eq(ot_solution_lane_status(s, b), OT_ERR_CALLBACK);
                ck_assert_msg(strstr(ot_solution_lane_message(s, b),
                                     "preconditioner solve returned z = 0"),
                              "%s", ot_solution_lane_message(s, b));
            }
        } else {
            ck_assert_status(st, OT_OK, NULL);
            for (int64_t b = 0; b < 2; b++)
                ck_assert_msg(max_diff(s, ref, b) < 2e-6, "scale %g lane %lld: %g off",
                              scales[k], (long long)b, max_diff(s, ref, b));
        }
        ot_solution_free(s);
        ot_ode_free(ode);
    }
    ot_solution_free(ref);
}
END_TEST

START_TEST(linear_solver_refusals_name_the_rule)
{
    static const double y0[RD_NS] = {0}, p[2] = {0.02, 0}, t[1] = {1};
    const rd_setup c = {OT_BDF, OT_LINSOL_BAND, 1, 0, 0};
    ot_ode *ode = rd_ode(&c, 1e-6);
    ot_solution *s = NULL;
#define SOLVE ot_solve_dense(ode, st_vec(y0, RD_NS), st_vec(p, 2), st_vec(t, 1), &s)
    ck_assert_status(ot_ode_set_linear_solver(ode, (ot_linsol)4), OT_ERR_ARG,
                     "linsol: 4");
    ck_assert_status(ot_ode_set_bandwidths(ode, -1, 2), OT_ERR_VALUE, "mupper = -1");
    ck_assert_status(ot_ode_set_krylov_dim(ode, -2), OT_ERR_VALUE, "krylov_dim");
    ck_assert_status(ot_ode_set_preconditioner(ode, rd_psetup, NULL, 1), OT_ERR_ARG,
                     "solve is NULL");
    ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    ck_assert_status(SOLVE, OT_ERR_ARG, "OT_LINSOL_BAND runs in OT_LANES mode");
    ck_assert_status(ot_ode_set_mode(ode, OT_LANES), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, OT_ERK_DP54), OT_OK, NULL);
    ck_assert_status(SOLVE, OT_ERR_ARG, "OT_ERK_DP54 solves no linear systems");
    ck_assert_status(ot_ode_set_method(ode, OT_BDF), OT_OK, NULL);
    ck_assert_status(ot_ode_set_bandwidths(ode, RD_NS, 1), OT_OK, NULL);
    ck_assert_status(SOLVE, OT_ERR_VALUE, "each must be < n = 200");
    ck_assert_status(ot_ode_set_bandwidths(ode, 2, 2), OT_OK, NULL);
    ck_assert_status(ot_ode_set_preconditioner(ode, rd_psetup, rd_psolve, 1), OT_OK,
                     NULL);
    ck_assert_status(SOLVE, OT_ERR_ARG, "the linear solver is not OT_LINSOL_GMRES");
    ck_assert_status(ot_ode_set_preconditioner(ode, NULL, NULL, 0), OT_OK, NULL);
    ot_loss loss = ot_loss_squares(ot_view_absent(), ot_view_absent());
    ck_assert_status(
        ot_solve_adjoint(ode, st_vec(y0, RD_NS), st_vec(p, 2), st_vec(t, 1), &loss, &s),
        OT_ERR_ARG, "OT_LINSOL_BAND with the adjoint");
#undef SOLVE
    ot_ode_free(ode);
}
END_TEST

Suite *linsol_suite(void)
{
    Suite *s = suite_create("linsol");
    TCase *tc = ot_test_tcase(s, "against dense", 120);
    tcase_add_test(tc, band_and_gmres_equal_dense_within_tolerance);
    tcase_add_test(tc, band_and_gmres_lanes_fail_alone);
    tcase_add_test(tc, a_badly_scaled_or_zero_preconditioner_cannot_fool_gmres);
    tcase_add_test(tc, linear_solver_refusals_name_the_rule);
    return s;
}

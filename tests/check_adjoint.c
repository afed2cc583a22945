/* Gradients by the adjoint method (ot_solve_adjoint): against the analytic
 * gradient of a decay, forward sensitivities and central differences of
 * the loss on Lotka-Volterra, Robertson's rate constants and a 25-parameter
 * generalised Lotka-Volterra; losses through out and custom functions,
 * missing data and weights, y0 through init; thread counts; failures and
 * refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solve_common.h"

#include "core/test_hooks.h"

/* ---- Helpers -------------------------------------------------------------- */

static const double *tensor_data(const ot_tensor *t)
{
    return (const double *)ot_tensor_layout(t)->data;
}

static double grad_at(const ot_solution *s, int which, int64_t k, int64_t b)
{
    const ot_tensor *t = ot_solution_grad_tensor(s, which);
    const int64_t rows = which == OT_GRAD_LOSS ? 1 : ot_tensor_layout(t)->shape[0];
    return tensor_data(t)[b * rows + k];
}

/* Sum of squares of lane b of sol's ys against data [rows, nt] (NaN: no
 * term), weights w (NULL: 1). */
static double squares(const ot_solution *sol, int64_t b, const double *data,
                      const double *w, int64_t rows, int64_t nt)
{
    double l = 0;
    for (int64_t i = 0; i < nt; i++)
        for (int64_t r = 0; r < rows; r++) {
            const double d = data[i * rows + r];
            if (d == d) {
                const double e = st_y(sol, r, i, b) - d;
                l += (w ? w[i * rows + r] : 1.0) * e * e;
            }
        }
    return l;
}

/* Central differences of the loss of one lane in each of its np
 * parameters and n initial values: the 2 (np + n) perturbed problems as
 * lanes of one lockstep solve (shared steps: no step-selection noise).
 * Into g [np + n]. */
static void loss_differences(ot_ode *ode, ot_mode mode, const double *y0, const double *p,
                             int64_t n, int64_t np, const double *t, int64_t nt,
                             const double *data, double hrel, double *g)
{
    const int64_t m = np + n, lanes = 2 * m;
    double *pp = malloc((size_t)(lanes * (np ? np : 1)) * sizeof *pp);
    double *yy = malloc((size_t)(lanes * n) * sizeof *yy);
    double *h = malloc((size_t)m * sizeof *h);
    for (int64_t k = 0; k < m; k++)
        for (int s = 0; s < 2; s++) {
            const int64_t lane = 2 * k + s;
            memcpy(pp + lane * np, p, (size_t)np * sizeof *p);
            memcpy(yy + lane * n, y0, (size_t)n * sizeof *y0);
            double *x = k < np ? pp + lane * np + k : yy + lane * n + (k - np);
            h[k] = hrel * fmax(fabs(*x), 1e-3);
            *x += s == 0 ? h[k] : -h[k];
        }
    ot_solution *fd = NULL;
    ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    ck_assert_status(ot_solve_dense(ode, st_mat(yy, n, lanes),
                                    np ? st_mat(pp, np, lanes) : ot_view_absent(),
                                    st_vec(t, nt), &fd),
                     OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    const int64_t rows = ot_tensor_layout(ot_solution_ys(fd))->shape[0];
    for (int64_t k = 0; k < m; k++)
        g[k] = (squares(fd, 2 * k, data, NULL, rows, nt) -
                squares(fd, 2 * k + 1, data, NULL, rows, nt)) /
               (2 * h[k]);
    ot_solution_free(fd);
    free(pp);
    free(yy);
    free(h);
}

/* Largest |a - b| relative to the largest |b|. */
static double rel_gap(const double *a, const double *b, int64_t k)
{
    double big = 0, gap = 0;
    for (int64_t i = 0; i < k; i++) {
        big = fmax(big, fabs(b[i]));
        gap = fmax(gap, fabs(a[i] - b[i]));
    }
    return big > 0 ? gap / big : gap;
}

/* ---- Decay: y' = -k y, y(0) = a, against the analytic gradient ------------ */

/* Loop 0: BDF, 1: Adams. L = sum_i (y(t_i) - d_i)^2 for 8 lanes;
 * dL/dk = sum 2 e_i (-t_i a e^{-k t_i}), dL/da = sum 2 e_i e^{-k t_i}. */
START_TEST(adjoint_decay_matches_the_analytic_gradient)
{
    enum { L = 8, NT = 5 };
    const double t[NT] = {0.5, 1, 2, 3, 5}, data[NT] = {0.9, 0.6, 0.4, 0.2, 0.1};
    double k[L], a[L];
    for (int64_t b = 0; b < L; b++) {
        k[b] = 0.2 + 0.1 * (double)b;
        a[b] = 1.0 + 0.05 * (double)b;
    }
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, 1, st_decay1_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, _i == 0 ? OT_BDF : OT_ADAMS), OT_OK, NULL);
    const ot_loss loss = ot_loss_squares(st_mat(data, 1, NT), ot_view_absent());
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_adjoint(ode, st_mat(a, 1, L), st_mat(k, 1, L),
                                      st_vec(t, NT), &loss, &sol),
                     OT_OK, NULL);
    for (int64_t b = 0; b < L; b++) {
        /* Scales: the sums of the terms' sizes (the sums cancel). */
        double l = 0, dk = 0, da = 0, sk = 0, sa = 0;
        for (int i = 0; i < NT; i++) {
            const double e = exp(-k[b] * t[i]), r = a[b] * e - data[i];
            l += r * r;
            dk += 2 * r * (-t[i] * a[b] * e);
            da += 2 * r * e;
            sk += fabs(2 * r * t[i] * a[b] * e);
            sa += fabs(2 * r * e);
        }
        const double gl = grad_at(sol, OT_GRAD_LOSS, 0, b);
        const double gk = grad_at(sol, OT_GRAD_PARAMS, 0, b);
        const double ga = grad_at(sol, OT_GRAD_Y0, 0, b);
        ck_assert_msg(fabs(gl - l) <= 1e-7 * l, "lane %d: L %.12g, exact %.12g", (int)b,
                      gl, l);
        ck_assert_msg(fabs(gk - dk) <= 1e-7 * sk, "lane %d: dL/dk %.12g, exact %.12g",
                      (int)b, gk, dk);
        ck_assert_msg(fabs(ga - da) <= 1e-7 * sa, "lane %d: dL/da %.12g, exact %.12g",
                      (int)b, ga, da);
        ck_assert_int_gt(ot_solution_lane_adjoint_bytes(sol, b), 0);
    }
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* ---- Lotka-Volterra: p = (alpha, beta, delta, gamma) ---------------------- */

static void lv_f(const double *y, const double *p, double *f)
{
    f[0] = p[0] * y[0] - p[1] * y[0] * y[1];
    f[1] = p[2] * y[0] * y[1] - p[3] * y[1];
}

static int lv_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        lv_f(ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0),
             ot_view_mut_col_f64(f, b, 0));
    return 0;
}

static int lv_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *x = ot_view_col_f64(y, b, 0), *k = ot_view_col_f64(p, b, 0);
        double *c0 = ot_view_mut_col_f64(J, 0, b), *c1 = ot_view_mut_col_f64(J, 1, b);
        c0[0] = k[0] - k[1] * x[1], c0[1] = k[2] * x[1];
        c1[0] = -k[1] * x[0], c1[1] = k[2] * x[0] - k[3];
    }
    return 0;
}

static int lv_dfdp(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *x = ot_view_col_f64(y, b, 0);
        ot_view_mut_col_f64(d, 0, b)[0] = x[0];
        ot_view_mut_col_f64(d, 1, b)[0] = -x[0] * x[1];
        ot_view_mut_col_f64(d, 2, b)[1] = x[0] * x[1];
        ot_view_mut_col_f64(d, 3, b)[1] = -x[1];
    }
    return 0;
}

enum { LV_NT = 10 };
static double LV_T[LV_NT], LV_DATA[2 * LV_NT];

/* Output times 1..10 and data from p = (1, 0.4, 0.3, 0.8) with a wobble. */
static void lv_setup(void)
{
    for (int i = 0; i < LV_NT; i++) {
        LV_T[i] = 1.0 + i;
        LV_DATA[2 * i] = 2.0 + 0.8 * sin(0.9 * LV_T[i]);
        LV_DATA[2 * i + 1] = 1.5 + 0.6 * cos(0.7 * LV_T[i]);
    }
}

static ot_ode *lv_ode(int jac, int dfdp, double rtol)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 4, lv_rhs, NULL), OT_OK, NULL);
    if (jac)
        ck_assert_status(ot_ode_set_jac(ode, lv_jac), OT_OK, NULL);
    if (dfdp)
        ck_assert_status(ot_ode_set_dfdp(ode, lv_dfdp), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, rtol), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, rtol * 1e-2), OT_OK, NULL);
    return ode;
}

/* The gradient of the sum of squares from forward sensitivities of lane b:
 * sum_i sum_r 2 (y_r - d_r) s_rj. */
static double from_sens(const ot_solution *fw, int64_t b, int64_t j, const double *data,
                        int64_t rows, int64_t nt)
{
    double g = 0;
    for (int64_t i = 0; i < nt; i++)
        for (int64_t r = 0; r < rows; r++)
            g += 2 * (st_y(fw, r, i, b) - data[i * rows + r]) *
                 st_at(ot_solution_sens(fw, j), r, i, b);
    return g;
}

/* Loop over (user jac, dfdp) in {(1,1), (1,0), (0,0)}: adjoint, forward
 * (df/dp) and central differences of L agree to 1e-6 at rtol 1e-10, for
 * parameters and initial values. */
START_TEST(adjoint_lotka_volterra_agrees_with_forward_and_differences)
{
    enum { L = 4 };
    lv_setup();
    const int jac = _i < 2, dfdp = _i == 0;
    double p[4 * L], y0[2 * L];
    for (int64_t b = 0; b < L; b++) {
        const double s = 1.0 + 0.05 * (double)b;
        p[4 * b] = 1.0 * s, p[4 * b + 1] = 0.4, p[4 * b + 2] = 0.3 * s,
              p[4 * b + 3] = 0.8;
        y0[2 * b] = 2.0, y0[2 * b + 1] = 1.0 + 0.1 * (double)b;
    }
    ot_ode *ode = lv_ode(jac, dfdp, 1e-10), *fwd = lv_ode(1, 1, 1e-10);
    const ot_loss loss = ot_loss_squares(st_mat(LV_DATA, 2, LV_NT), ot_view_absent());
    ot_solution *sol = NULL, *fw = NULL;
    ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_vec(LV_T, LV_NT), &loss, &sol),
                     OT_OK, NULL);
    ck_assert_status(ot_solve_fwd_sens(fwd, st_mat(y0, 2, L), st_mat(p, 4, L),
                                       st_vec(LV_T, LV_NT), &fw),
                     OT_OK, NULL);
    for (int64_t b = 0; b < L; b++) {
        double adj[6], fd[6], fs[4];
        for (int64_t j = 0; j < 4; j++) {
            adj[j] = grad_at(sol, OT_GRAD_PARAMS, j, b);
            fs[j] = from_sens(fw, b, j, LV_DATA, 2, LV_NT);
        }
        for (int64_t k = 0; k < 2; k++)
            adj[4 + k] = grad_at(sol, OT_GRAD_Y0, k, b);
        loss_differences(ode, OT_LANES, y0 + 2 * b, p + 4 * b, 2, 4, LV_T, LV_NT, LV_DATA,
                         1e-5, fd);
        const double l = squares(sol, b, LV_DATA, NULL, 2, LV_NT);
        ck_assert(fabs(grad_at(sol, OT_GRAD_LOSS, 0, b) - l) <= 1e-12 * l);
        const double gf = rel_gap(adj, fs, 4), gd = rel_gap(adj, fd, 6);
        ck_assert_msg(gf < 1e-6 && gd < 1e-6,
                      "lane %d: adjoint vs forward %.3g, vs differences %.3g (dL/dalpha "
                      "%.10g, %.10g, %.10g)",
                      (int)b, gf, gd, adj[0], fs[0], fd[0]);
    }
    ot_solution_free(sol);
    ot_solution_free(fw);
    ot_ode_free(ode);
    ot_ode_free(fwd);
}
END_TEST

/* ---- Robertson's rate constants ------------------------------------------- */

static int rober_dfdp(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *x = ot_view_col_f64(y, b, 0);
        double *d1 = ot_view_mut_col_f64(d, 0, b), *d2 = ot_view_mut_col_f64(d, 1, b);
        double *d3 = ot_view_mut_col_f64(d, 2, b);
        d1[0] = -x[0], d1[1] = x[0];
        d2[0] = x[1] * x[2], d2[1] = -x[1] * x[2];
        d3[1] = -x[1] * x[1], d3[2] = x[1] * x[1];
    }
    return 0;
}

/* Loop 0: user jac and dfdp, 1: neither. A stiff problem over 4e4 time
 * units: scaled gradients p_j dL/dp_j from the adjoint and from forward
 * sensitivities agree to 1e-5 of the largest. */
START_TEST(adjoint_robertson_rates_agree_with_forward)
{
    enum { L = 3, NT = 6 };
    const double t[NT] = {0.4, 4, 40, 400, 4000, 40000}, y0[3] = {1, 0, 0};
    const double atol[3] = {1e-14, 1e-20, 1e-12};
    double data[3 * NT], p[3 * L];
    rober_rates(p, L);
    for (int i = 0; i < NT; i++) { /* roughly the solution, shifted */
        data[3 * i] = 0.9 - 0.1 * i;
        data[3 * i + 1] = 2e-5;
        data[3 * i + 2] = 0.1 + 0.1 * i;
    }
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 3, 3, st_rober_rhs, NULL), OT_OK, NULL);
    if (_i == 0) {
        ck_assert_status(ot_ode_set_jac(ode, st_rober_jac), OT_OK, NULL);
        ck_assert_status(ot_ode_set_dfdp(ode, rober_dfdp), OT_OK, NULL);
    }
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol_vector(ode, st_vec(atol, 3)), OT_OK, NULL);
    ot_ode *fwd = st_rober_ode();
    ck_assert_status(ot_ode_set_dfdp(fwd, rober_dfdp), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(fwd, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol_vector(fwd, st_vec(atol, 3)), OT_OK, NULL);
    const ot_loss loss = ot_loss_squares(st_mat(data, 3, NT), ot_view_absent());
    ot_solution *sol = NULL, *fw = NULL;
    ck_assert_status(
        ot_solve_adjoint(ode, st_vec(y0, 3), st_mat(p, 3, L), st_vec(t, NT), &loss, &sol),
        OT_OK, NULL);
    ck_assert_status(
        ot_solve_fwd_sens(fwd, st_vec(y0, 3), st_mat(p, 3, L), st_vec(t, NT), &fw), OT_OK,
        NULL);
    for (int64_t b = 0; b < L; b++) {
        double adj[3], fs[3];
        for (int64_t j = 0; j < 3; j++) {
            adj[j] = p[3 * b + j] * grad_at(sol, OT_GRAD_PARAMS, j, b);
            fs[j] = p[3 * b + j] * from_sens(fw, b, j, data, 3, NT);
        }
        const double g = rel_gap(adj, fs, 3);
        ck_assert_msg(g < 1e-5, "lane %d: %.3g (p1 dL/dp1 %.10g vs %.10g)", (int)b, g,
                      adj[0], fs[0]);
    }
    ot_solution_free(sol);
    ot_solution_free(fw);
    ot_ode_free(ode);
    ot_ode_free(fwd);
}
END_TEST

/* ---- 25 parameters: generalised Lotka-Volterra with 5 species ------------- */

enum { GM = 5, GNP = GM * GM, GNT = 8 };

static int glv_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *x = ot_view_col_f64(y, b, 0), *A = ot_view_col_f64(p, b, 0);
        double *d = ot_view_mut_col_f64(f, b, 0);
        for (int i = 0; i < GM; i++) {
            double s = 1.0;
            for (int j = 0; j < GM; j++)
                s += A[i + GM * j] * x[j];
            d[i] = x[i] * s;
        }
    }
    return 0;
}

/* Without jac or dfdp (difference quotients for both) in loop 0, with the
 * forward reference from CVODES' difference quotients; 25 parameters and 5
 * initial values against central differences of L. */
START_TEST(adjoint_25_parameters_agree_with_differences_and_forward)
{
    double A[GNP], y0[GM], t[GNT], data[GM * GNT];
    for (int j = 0; j < GM; j++)
        for (int i = 0; i < GM; i++)
            A[i + GM * j] = i == j ? -1.0 : 0.08 * sin(1.0 + 3.0 * i + 7.0 * j);
    for (int i = 0; i < GM; i++)
        y0[i] = 0.2 + 0.1 * i;
    for (int k = 0; k < GNT; k++) {
        t[k] = 0.5 * (k + 1);
        for (int i = 0; i < GM; i++)
            data[k * GM + i] = 0.5 + 0.05 * i + 0.02 * k;
    }
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, GM, GNP, glv_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    const ot_loss loss = ot_loss_squares(st_mat(data, GM, GNT), ot_view_absent());
    ot_solution *sol = NULL, *fw = NULL;
    ck_assert_status(ot_solve_adjoint(ode, st_vec(y0, GM), st_vec(A, GNP), st_vec(t, GNT),
                                      &loss, &sol),
                     OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-8), OT_OK, NULL); /* DQ: not below */
    ck_assert_status(ot_ode_set_atol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(
        ot_solve_fwd_sens(ode, st_vec(y0, GM), st_vec(A, GNP), st_vec(t, GNT), &fw),
        OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    double adj[GNP + GM], fd[GNP + GM], fs[GNP];
    for (int64_t j = 0; j < GNP; j++) {
        adj[j] = grad_at(sol, OT_GRAD_PARAMS, j, 0);
        fs[j] = from_sens(fw, 0, j, data, GM, GNT);
    }
    for (int64_t k = 0; k < GM; k++)
        adj[GNP + k] = grad_at(sol, OT_GRAD_Y0, k, 0);
    loss_differences(ode, OT_LANES, y0, A, GM, GNP, t, GNT, data, 1e-5, fd);
    const double gd = rel_gap(adj, fd, GNP + GM), gf = rel_gap(adj, fs, GNP);
    ck_assert_msg(gd < 1e-6 && gf < 1e-5, "adjoint vs differences %.3g, vs forward %.3g",
                  gd, gf);
    ot_solution_free(sol);
    ot_solution_free(fw);
    ot_ode_free(ode);
}
END_TEST

/* ---- Equalities ----------------------------------------------------------- */

/* Lotka-Volterra lanes with spread parameters, data LV_DATA. */
static void lv_lanes(double *p, double *y0, int64_t nb)
{
    lv_setup();
    for (int64_t b = 0; b < nb; b++) {
        const double s = 1.0 + 0.02 * (double)b;
        p[4 * b] = 1.0 * s, p[4 * b + 1] = 0.4, p[4 * b + 2] = 0.3 / s,
              p[4 * b + 3] = 0.8;
        y0[2 * b] = 2.0, y0[2 * b + 1] = 1.0;
    }
}

static void assert_grads_equal(const ot_solution *a, int64_t ba, const ot_solution *b,
                               int64_t bb, double tol)
{
    for (int which = 0; which < 3; which++) {
        const int64_t rows =
            which == 0 ? 1
                       : ot_tensor_layout(ot_solution_grad_tensor(a, which))->shape[0];
        for (int64_t k = 0; k < rows; k++) {
            const double x = grad_at(a, which, k, ba), y = grad_at(b, which, k, bb);
            ck_assert_msg(tol == 0 ? memcmp(&x, &y, sizeof x) == 0
                                   : fabs(x - y) <= tol * fmax(fabs(y), 1e-300),
                          "gradient %d[%d] of lanes %d, %d: %.17g vs %.17g", which,
                          (int)k, (int)ba, (int)bb, x, y);
        }
    }
}

/* 1 and 2 threads: the same bits, loss and gradients; each lane equals its
 * solve alone. */
START_TEST(adjoint_thread_count_changes_no_bit)
{
    enum { L = 12 };
    double p[4 * L], y0[2 * L];
    lv_lanes(p, y0, L);
    const ot_loss loss = ot_loss_squares(st_mat(LV_DATA, 2, LV_NT), ot_view_absent());
    ot_solution *sol[2] = {NULL, NULL}, *alone = NULL;
    for (int th = 0; th < 2; th++) {
        ot_ode *ode = lv_ode(1, 1, 1e-8);
        ck_assert_status(ot_ode_set_threads(ode, th + 1), OT_OK, NULL);
        ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, L), st_mat(p, 4, L),
                                          st_vec(LV_T, LV_NT), &loss, &sol[th]),
                         OT_OK, NULL);
        ot_ode_free(ode);
    }
    ot_ode *ode = lv_ode(1, 1, 1e-8);
    ck_assert_status(ot_solve_adjoint(ode, st_vec(y0 + 2 * 7, 2), st_vec(p + 4 * 7, 4),
                                      st_vec(LV_T, LV_NT), &loss, &alone),
                     OT_OK, NULL);
    for (int64_t b = 0; b < L; b++) {
        assert_grads_equal(sol[0], b, sol[1], b, 0);
        ck_assert(st_lane_equal(ot_solution_ys(sol[0]), b, ot_solution_ys(sol[1]), b));
    }
    assert_grads_equal(sol[0], 7, alone, 0, 0);
    ot_solution_free(sol[0]);
    ot_solution_free(sol[1]);
    ot_solution_free(alone);
    ot_ode_free(ode);
}
END_TEST

static int lv_loss(double t, int64_t i, int64_t lane, ot_view y, ot_view p, ot_view_mut g,
                   ot_view_mut dgdy, ot_view_mut dgdp, void *u)
{
    (void)t, (void)lane, (void)p, (void)dgdp, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *x = ot_view_col_f64(y, b, 0);
        const double e0 = x[0] - LV_DATA[2 * i], e1 = x[1] - LV_DATA[2 * i + 1];
        ot_view_mut_col_f64(g, b, 0)[0] = e0 * e0 + e1 * e1;
        ot_view_mut_col_f64(dgdy, b, 0)[0] = 2 * e0;
        ot_view_mut_col_f64(dgdy, b, 0)[1] = 2 * e1;
    }
    return 0;
}

static int lv_triple(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        for (int r = 0; r < 2; r++)
            ot_view_mut_col_f64(o, b, 0)[r] = 3.0 * ot_view_col_f64(y, b, 0)[r];
    return 0;
}

/* The same loss three ways: sum of squares on y; the user's function; on
 * out = 3 y against 3 x data with weights 1/9 (out's derivatives by
 * central differences, exact here to rounding). */
START_TEST(adjoint_custom_and_out_losses_equal_the_squares)
{
    enum { L = 3 };
    double p[4 * L], y0[2 * L], data3[2 * LV_NT], w9[2 * LV_NT];
    lv_lanes(p, y0, L);
    for (int k = 0; k < 2 * LV_NT; k++) {
        data3[k] = 3.0 * LV_DATA[k];
        w9[k] = 1.0 / 9.0;
    }
    ot_ode *ode = lv_ode(1, 1, 1e-9);
    const ot_loss sq = ot_loss_squares(st_mat(LV_DATA, 2, LV_NT), ot_view_absent());
    const ot_loss fn = ot_loss_custom(lv_loss, NULL);
    const ot_loss o3 = ot_loss_squares(st_mat(data3, 2, LV_NT), st_mat(w9, 2, LV_NT));
    ot_solution *a = NULL, *b = NULL, *c = NULL;
    ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_vec(LV_T, LV_NT), &sq, &a),
                     OT_OK, NULL);
    ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_vec(LV_T, LV_NT), &fn, &b),
                     OT_OK, NULL);
    ck_assert_status(ot_ode_set_out(ode, 2, lv_triple), OT_OK, NULL);
    ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_vec(LV_T, LV_NT), &o3, &c),
                     OT_OK, NULL);
    for (int64_t lane = 0; lane < L; lane++) {
        assert_grads_equal(b, lane, a, lane, 1e-13);
        assert_grads_equal(c, lane, a, lane, 1e-8);
    }
    ot_solution_free(a);
    ot_solution_free(b);
    ot_solution_free(c);
    ot_ode_free(ode);
}
END_TEST

/* A NaN datum adds no term: the same as weight 0 there. Per-lane data
 * [rows, nt, nbatch] too: lane 1 with lane 0's data equals lane 0. */
START_TEST(adjoint_missing_data_and_weights)
{
    enum { L = 2 };
    double p[4 * L], y0[2 * L], holes[2 * LV_NT], w[2 * LV_NT], both[2 * LV_NT * L];
    lv_lanes(p, y0, L);
    memcpy(p + 4, p, 4 * sizeof *p);
    for (int k = 0; k < 2 * LV_NT; k++) {
        const int gone = k % 3 == 1;
        holes[k] = gone ? NAN : LV_DATA[k];
        w[k] = gone ? 0.0 : 1.0;
        both[k] = holes[k];
        both[2 * LV_NT + k] = LV_DATA[k]; /* lane 1: every datum, weights below */
    }
    ot_ode *ode = lv_ode(1, 1, 1e-9);
    const ot_loss nan = ot_loss_squares(st_mat(holes, 2, LV_NT), ot_view_absent());
    const ot_loss zero = ot_loss_squares(st_mat(LV_DATA, 2, LV_NT), st_mat(w, 2, LV_NT));
    const int64_t shape[3] = {2, LV_NT, L};
    ot_view per_lane;
    ck_assert_status(ot_view_make(&per_lane, both, OT_F64, ST_CPU, 3, shape, NULL), OT_OK,
                     NULL);
    const ot_loss lanes = ot_loss_squares(per_lane, st_mat(w, 2, LV_NT));
    ot_solution *a = NULL, *b = NULL, *c = NULL;
    ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_vec(LV_T, LV_NT), &nan, &a),
                     OT_OK, NULL);
    ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_vec(LV_T, LV_NT), &zero, &b),
                     OT_OK, NULL);
    ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_vec(LV_T, LV_NT), &lanes, &c),
                     OT_OK, NULL);
    assert_grads_equal(a, 0, b, 0, 0);
    assert_grads_equal(c, 0, b, 0, 0);
    assert_grads_equal(c, 1, b, 0, 0);
    ot_solution_free(a);
    ot_solution_free(b);
    ot_solution_free(c);
    ot_ode_free(ode);
}
END_TEST

/* y0 through init: with p = (alpha, beta, delta, gamma, u, v) and init
 * y0 = (u, v), dL/du and dL/dv equal dL/dy0 of the plain problem. */
static int lv6_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        lv_f(ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0),
             ot_view_mut_col_f64(f, b, 0));
    return 0;
}

static int lv6_init(ot_view p, ot_view_mut y0, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(p); b++) {
        ot_view_mut_col_f64(y0, b, 0)[0] = ot_view_col_f64(p, b, 0)[4];
        ot_view_mut_col_f64(y0, b, 0)[1] = ot_view_col_f64(p, b, 0)[5];
    }
    return 0;
}

START_TEST(adjoint_through_init_equals_dl_dy0)
{
    double p[4], y0[2], p6[6];
    lv_lanes(p, y0, 1);
    memcpy(p6, p, sizeof p);
    p6[4] = y0[0], p6[5] = y0[1];
    ot_ode *ode = lv_ode(1, 0, 1e-10), *ode6 = NULL;
    ck_assert_status(ot_ode_new(&ode6, 2, 6, lv6_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_init(ode6, lv6_init), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode6, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode6, 1e-12), OT_OK, NULL);
    const ot_loss loss = ot_loss_squares(st_mat(LV_DATA, 2, LV_NT), ot_view_absent());
    ot_solution *a = NULL, *b = NULL;
    ck_assert_status(ot_solve_adjoint(ode, st_vec(y0, 2), st_vec(p, 4),
                                      st_vec(LV_T, LV_NT), &loss, &a),
                     OT_OK, NULL);
    ck_assert_status(ot_solve_adjoint(ode6, ot_view_absent(), st_vec(p6, 6),
                                      st_vec(LV_T, LV_NT), &loss, &b),
                     OT_OK, NULL);
    for (int k = 0; k < 2; k++) {
        const double want = grad_at(a, OT_GRAD_Y0, k, 0);
        const double got = grad_at(b, OT_GRAD_PARAMS, 4 + k, 0);
        ck_assert_msg(fabs(got - want) <= 1e-7 * fabs(want), "dL/dy0_%d %.12g vs %.12g",
                      k, got, want);
    }
    for (int j = 0; j < 4; j++) {
        const double want = grad_at(a, OT_GRAD_PARAMS, j, 0);
        ck_assert(fabs(grad_at(b, OT_GRAD_PARAMS, j, 0) - want) <= 1e-7 * fabs(want));
    }
    ot_solution_free(a);
    ot_solution_free(b);
    ot_ode_free(ode);
    ot_ode_free(ode6);
}
END_TEST

/* Per-lane output times [nt, nbatch] (lane 1 has 6 of 10, NaN-padded) and
 * an output at t0: each lane equals its solve alone with its own times. */
START_TEST(adjoint_per_lane_times_equal_lanes_alone)
{
    enum { L = 2 };
    double p[4 * L], y0[2 * L], t[LV_NT * L], t0[LV_NT];
    lv_lanes(p, y0, L);
    for (int i = 0; i < LV_NT; i++) {
        t0[i] = i; /* 0 .. 9: the first at t0 */
        t[i] = t0[i];
        t[LV_NT + i] = i < 6 ? LV_T[i] : NAN;
    }
    ot_ode *ode = lv_ode(1, 1, 1e-9);
    const ot_loss loss = ot_loss_squares(st_mat(LV_DATA, 2, LV_NT), ot_view_absent());
    const ot_loss loss6 = ot_loss_squares(st_mat(LV_DATA, 2, 6), ot_view_absent());
    ot_solution *all = NULL, *a = NULL, *b = NULL;
    ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_mat(t, LV_NT, L), &loss, &all),
                     OT_OK, NULL);
    ck_assert_status(
        ot_solve_adjoint(ode, st_vec(y0, 2), st_vec(p, 4), st_vec(t0, LV_NT), &loss, &a),
        OT_OK, NULL);
    ck_assert_status(ot_solve_adjoint(ode, st_vec(y0 + 2, 2), st_vec(p + 4, 4),
                                      st_vec(LV_T, 6), &loss6, &b),
                     OT_OK, NULL);
    assert_grads_equal(all, 0, a, 0, 0);
    assert_grads_equal(all, 1, b, 0, 0);
    ot_solution_free(all);
    ot_solution_free(a);
    ot_solution_free(b);
    ot_ode_free(ode);
}
END_TEST

/* ---- Failures and refusals ------------------------------------------------ */

static int rhs_fails_lane2(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    for (int64_t b = 0; b < ST_LANES(y); b++)
        if (ot_view_col_f64(p, b, 0)[0] == 1.04 && t > 3)
            return -1;
    return lv_rhs(t, y, p, f, u);
}

static int loss_fails_at_5(double t, int64_t i, int64_t lane, ot_view y, ot_view p,
                           ot_view_mut g, ot_view_mut dgdy, ot_view_mut dgdp, void *u)
{
    if (lane == 2 && i == 5)
        return -3;
    return lv_loss(t, i, lane, y, p, g, dgdy, dgdp, u);
}

/* Loop 0: rhs fails lane 2 after t = 3 (forward), 1: the loss fails at
 * output 5 of lane 2. Lane 2 fails alone with NaN gradients; the others
 * equal a solve without the failure. */
START_TEST(adjoint_failure_fails_its_lane_alone)
{
    enum { L = 4 };
    double p[4 * L], y0[2 * L];
    lv_lanes(p, y0, L);
    ck_assert(p[8] == 1.04);
    ot_ode *bad = NULL, *good = lv_ode(1, 1, 1e-8);
    ck_assert_status(ot_ode_new(&bad, 2, 4, _i == 0 ? rhs_fails_lane2 : lv_rhs, NULL),
                     OT_OK, NULL);
    ck_assert_status(ot_ode_set_jac(bad, lv_jac), OT_OK, NULL);
    ck_assert_status(ot_ode_set_dfdp(bad, lv_dfdp), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(bad, 1e-8), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(bad, 1e-10), OT_OK, NULL);
    const ot_loss ok = ot_loss_custom(lv_loss, NULL);
    const ot_loss fails = ot_loss_custom(loss_fails_at_5, NULL);
    ot_solution *sol = NULL, *ref = NULL;
    ck_assert_status(ot_solve_adjoint(bad, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_vec(LV_T, LV_NT), _i == 0 ? &ok : &fails, &sol),
                     OT_ERR_LANES_FAILED, NULL);
    ck_assert_status(ot_solve_adjoint(good, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_vec(LV_T, LV_NT), &ok, &ref),
                     OT_OK, NULL);
    ck_assert_int_eq(ot_solution_nfailed(sol), 1);
    ck_assert_int_eq(ot_solution_lane_status(sol, 2), OT_ERR_CALLBACK);
    const char *m = ot_solution_lane_message(sol, 2);
    ck_assert_msg(strstr(m, _i == 0 ? "rhs returned -1" : "loss returned -3") != NULL,
                  "message: %s", m);
    ck_assert(isnan(grad_at(sol, OT_GRAD_LOSS, 0, 2)));
    ck_assert(isnan(grad_at(sol, OT_GRAD_PARAMS, 0, 2)));
    ck_assert(isnan(grad_at(sol, OT_GRAD_Y0, 1, 2)));
    for (int64_t b = 0; b < L; b++)
        if (b != 2)
            assert_grads_equal(sol, b, ref, b, 0);
    ot_solution_free(sol);
    ot_solution_free(ref);
    ot_ode_free(bad);
    ot_ode_free(good);
}
END_TEST

static int one_root(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0] - 100;
    return 0;
}

/* What ot_solve_adjoint refuses, with the argument named. */
START_TEST(adjoint_refusals_name_the_argument)
{
    double p[4], y0[2];
    lv_lanes(p, y0, 1);
    float data32[2 * LV_NT] = {0};
    const int64_t s32[2] = {2, LV_NT};
    ot_view v32;
    ck_assert_status(ot_view_make(&v32, data32, OT_F32, ST_CPU, 2, s32, NULL), OT_OK,
                     NULL);
    const ot_loss sq = ot_loss_squares(st_mat(LV_DATA, 2, LV_NT), ot_view_absent());
    ot_loss both = sq;
    both.fn = lv_loss;
    const ot_loss short_data = ot_loss_squares(st_mat(LV_DATA, 2, 4), ot_view_absent());
    const ot_loss f32 = ot_loss_squares(v32, ot_view_absent());
    const ot_loss neither = ot_loss_custom(NULL, NULL);
    const struct {
        const ot_loss *loss;
        int lockstep, roots, status;
        const char *needle;
    } cases[] = {
        {NULL, 0, 0, OT_ERR_ARG, "loss: NULL"},
        {&both, 0, 0, OT_ERR_ARG, "one of the two"},
        {&neither, 0, 0, OT_ERR_ARG, "one of the two"},
        {&short_data, 0, 0, OT_ERR_SHAPE, "loss.data: shape [2, 4]"},
        {&f32, 0, 0, OT_ERR_DTYPE, "loss.data: must be f64"},
        {&sq, 0, 1, OT_ERR_ARG,
         "event_actions: root 0 stops its lane (OT_EVENT_STOP, the default); "
         "ot_solve_adjoint takes roots that are handled or recorded"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ot_ode *ode = lv_ode(1, 1, 1e-8);
        if (cases[k].lockstep)
            ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
        if (cases[k].roots)
            ck_assert_status(ot_ode_set_roots(ode, 1, one_root), OT_OK, NULL);
        ot_solution *sol = NULL;
        double t2[2 * LV_NT]; /* per-lane times, for the lockstep case */
        for (int i = 0; i < LV_NT; i++)
            t2[i] = t2[LV_NT + i] = LV_T[i];
        const ot_view tv = cases[k].lockstep ? st_mat(t2, LV_NT, 2) : st_vec(LV_T, LV_NT);
        double y2[4] = {y0[0], y0[1], y0[0], y0[1]};
        ck_assert_status(
            ot_solve_adjoint(ode, cases[k].lockstep ? st_mat(y2, 2, 2) : st_vec(y0, 2),
                             st_vec(p, 4), tv, cases[k].loss, &sol),
            cases[k].status, cases[k].needle);
        ck_assert_ptr_null(sol);
        ot_ode_free(ode);
    }
}
END_TEST

/* A batch whose adjoint memory cannot fit is refused before anything is
 * allocated, naming the adjoint's arrays. */
START_TEST(adjoint_memory_is_counted_before_the_solve)
{
    double p[4], y0[2];
    lv_lanes(p, y0, 1);
    ot_ode *ode = lv_ode(1, 1, 1e-8);
    const ot_loss sq = ot_loss_squares(st_mat(LV_DATA, 2, LV_NT), ot_view_absent());
    ot_solution *sol = NULL;
    ot__size_set_limit(UINT64_C(1) << 20); /* 1 MiB */
    const int64_t big = 20000;
    double *pp = malloc((size_t)(4 * big) * sizeof *pp);
    for (int64_t b = 0; b < big; b++)
        memcpy(pp + 4 * b, p, sizeof p);
    const int st = ot_solve_adjoint(ode, st_vec(y0, 2), st_mat(pp, 4, big),
                                    st_vec(LV_T, LV_NT), &sq, &sol);
    ot__size_set_limit(0);
    ck_assert_int_eq(st, OT_ERR_NOMEM);
    ck_assert_msg(ot_test_msg_has("adjoint results"), "message: %s", ot_last_error());
    ck_assert_ptr_null(sol);
    free(pp);
    ot_ode_free(ode);
}
END_TEST

/* ---- Lockstep -------------------------------------------------------------- */

/* Loop over (user jac and dfdp, or neither): lockstep blocks of lanes give
 * the gradients lanes mode gives, to 1e-6 at rtol 1e-10 (Lotka-Volterra),
 * and one lane of lockstep gives lanes mode's bits. */
START_TEST(adjoint_lockstep_agrees_with_lanes)
{
    enum { L = 8 };
    double p[4 * L], y0[2 * L];
    lv_lanes(p, y0, L);
    const int derivs = _i == 0;
    ot_ode *lanes = lv_ode(derivs, derivs, 1e-10), *lock = lv_ode(derivs, derivs, 1e-10);
    ck_assert_status(ot_ode_set_mode(lock, OT_LOCKSTEP), OT_OK, NULL);
    ck_assert_status(ot_ode_set_lockstep_block(lock, 3), OT_OK, NULL);
    const ot_loss loss = ot_loss_squares(st_mat(LV_DATA, 2, LV_NT), ot_view_absent());
    ot_solution *a = NULL, *b = NULL, *one = NULL, *one_lanes = NULL;
    ck_assert_status(ot_solve_adjoint(lanes, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_vec(LV_T, LV_NT), &loss, &a),
                     OT_OK, NULL);
    ck_assert_status(ot_solve_adjoint(lock, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_vec(LV_T, LV_NT), &loss, &b),
                     OT_OK, NULL);
    for (int64_t lane = 0; lane < L; lane++) {
        double ga[7], gb[7];
        for (int which = 0, k = 0; which < 3; which++)
            for (int64_t r = 0; r < (which == 0 ? 1 : which == 1 ? 4 : 2); r++, k++) {
                ga[k] = grad_at(a, which, r, lane);
                gb[k] = grad_at(b, which, r, lane);
            }
        const double g = rel_gap(gb, ga, 7);
        ck_assert_msg(g < 1e-6, "lane %d: lockstep vs lanes %.3g", (int)lane, g);
    }
    ck_assert_status(ot_solve_adjoint(lock, st_vec(y0, 2), st_vec(p, 4),
                                      st_vec(LV_T, LV_NT), &loss, &one),
                     OT_OK, NULL);
    ck_assert_status(ot_solve_adjoint(lanes, st_vec(y0, 2), st_vec(p, 4),
                                      st_vec(LV_T, LV_NT), &loss, &one_lanes),
                     OT_OK, NULL);
    assert_grads_equal(one, 0, one_lanes, 0, 0);
    ot_solution_free(a);
    ot_solution_free(b);
    ot_solution_free(one);
    ot_solution_free(one_lanes);
    ot_ode_free(lanes);
    ot_ode_free(lock);
}
END_TEST

/* Robertson's rates in lockstep (stiff; block LU of -J^T), y0 from init in
 * loop 1: the gradients of lanes mode, to 1e-5 of the largest. */
static int rober_init(ot_view p, ot_view_mut y0, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(p); b++) {
        double *y = ot_view_mut_col_f64(y0, b, 0);
        y[0] = 1, y[1] = 0, y[2] = 0;
    }
    return 0;
}

START_TEST(adjoint_lockstep_robertson_agrees_with_lanes)
{
    enum { L = 4, NT = 6 };
    const double t[NT] = {0.4, 4, 40, 400, 4000, 40000}, y0[3] = {1, 0, 0};
    const double atol[3] = {1e-14, 1e-20, 1e-12};
    double data[3 * NT], p[3 * L];
    rober_rates(p, L);
    for (int i = 0; i < NT; i++) {
        data[3 * i] = 0.9 - 0.1 * i;
        data[3 * i + 1] = 2e-5;
        data[3 * i + 2] = 0.1 + 0.1 * i;
    }
    const ot_loss loss = ot_loss_squares(st_mat(data, 3, NT), ot_view_absent());
    ot_solution *sol[2] = {NULL, NULL};
    for (int m = 0; m < 2; m++) {
        ot_ode *ode = st_rober_ode();
        ck_assert_status(ot_ode_set_dfdp(ode, rober_dfdp), OT_OK, NULL);
        ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
        ck_assert_status(ot_ode_set_atol_vector(ode, st_vec(atol, 3)), OT_OK, NULL);
        ck_assert_status(ot_ode_set_mode(ode, m ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
        if (_i == 1)
            ck_assert_status(ot_ode_set_init(ode, rober_init), OT_OK, NULL);
        ck_assert_status(ot_solve_adjoint(ode, _i == 1 ? ot_view_absent() : st_vec(y0, 3),
                                          st_mat(p, 3, L), st_vec(t, NT), &loss, &sol[m]),
                         OT_OK, NULL);
        ot_ode_free(ode);
    }
    for (int64_t b = 0; b < L; b++) {
        double ga[3], gb[3];
        for (int64_t j = 0; j < 3; j++) {
            ga[j] = p[3 * b + j] * grad_at(sol[0], OT_GRAD_PARAMS, j, b);
            gb[j] = p[3 * b + j] * grad_at(sol[1], OT_GRAD_PARAMS, j, b);
        }
        const double g = rel_gap(gb, ga, 3);
        ck_assert_msg(g < 1e-5, "lane %d: %.3g", (int)b, g);
    }
    ot_solution_free(sol[0]);
    ot_solution_free(sol[1]);
}
END_TEST

/* In lockstep a failing loss fails its lane alone (the others keep
 * lanes mode's gradients to 1e-5). Loop: the user's derivatives at rtol
 * 1e-9, difference quotients at 1e-10 (issue 22 reported a crash inside
 * CVodeB there; valgrind shows none). */
START_TEST(adjoint_lockstep_loss_failure_fails_its_lane)
{
    enum { L = 4 };
    double p[4 * L], y0[2 * L];
    lv_lanes(p, y0, L);
    const double rtol = _i ? 1e-10 : 1e-9;
    ot_ode *lock = lv_ode(!_i, !_i, rtol), *lanes = lv_ode(!_i, !_i, rtol);
    ck_assert_status(ot_ode_set_mode(lock, OT_LOCKSTEP), OT_OK, NULL);
    const ot_loss fails = ot_loss_custom(loss_fails_at_5, NULL);
    const ot_loss ok = ot_loss_custom(lv_loss, NULL);
    ot_solution *sol = NULL, *ref = NULL;
    ck_assert_status(ot_solve_adjoint(lock, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_vec(LV_T, LV_NT), &fails, &sol),
                     OT_ERR_LANES_FAILED, NULL);
    ck_assert_status(ot_solve_adjoint(lanes, st_mat(y0, 2, L), st_mat(p, 4, L),
                                      st_vec(LV_T, LV_NT), &ok, &ref),
                     OT_OK, NULL);
    ck_assert_int_eq(ot_solution_nfailed(sol), 1);
    ck_assert_msg(strstr(ot_solution_lane_message(sol, 2), "loss returned -3") != NULL,
                  "message: %s", ot_solution_lane_message(sol, 2));
    ck_assert(isnan(grad_at(sol, OT_GRAD_PARAMS, 0, 2)));
    for (int64_t b = 0; b < L; b++)
        if (b != 2)
            for (int64_t j = 0; j < 4; j++) {
                const double x = grad_at(sol, OT_GRAD_PARAMS, j, b),
                             y = grad_at(ref, OT_GRAD_PARAMS, j, b);
                ck_assert_msg(fabs(x - y) <= 1e-5 * fabs(y),
                              "lane %d p%d: %.12g vs %.12g", (int)b, (int)j, x, y);
            }
    ot_solution_free(sol);
    ot_solution_free(ref);
    ot_ode_free(lock);
    ot_ode_free(lanes);
}
END_TEST

/* ---- Integral terms ---------------------------------------------------------- */

/* q = y_0^2 (decay), no explicit dependence on p. */
static int q_square(double t, int64_t lane, ot_view y, ot_view p, ot_view_mut q,
                    ot_view_mut dqdy, ot_view_mut dqdp, void *u)
{
    (void)t, (void)lane, (void)p, (void)dqdp, (void)u;
    const double x = ot_view_col_f64(y, 0, 0)[0];
    ot_view_mut_col_f64(q, 0, 0)[0] = x * x;
    ot_view_mut_col_f64(dqdy, 0, 0)[0] = 2 * x;
    return 0;
}

/* Loop 0: lanes, 1: lockstep. L = integral of y^2 over [0, 3] for y' = -k y,
 * y(0) = a: a^2 (1 - e^(-6k)) / 2k, against the analytic dL/dk, dL/da. */
START_TEST(adjoint_integral_term_matches_the_analytic_gradient)
{
    enum { L = 4, NT = 3 };
    const double t[NT] = {1, 2, 3}, T = 3;
    double k[L], a[L];
    for (int64_t b = 0; b < L; b++)
        k[b] = 0.3 + 0.2 * (double)b, a[b] = 1.0 + 0.1 * (double)b;
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 1, 1, st_decay1_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-10), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-12), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, _i ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
    ot_loss loss = ot_loss_squares(ot_view_absent(), ot_view_absent());
    loss.integrand = q_square;
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_adjoint(ode, st_mat(a, 1, L), st_mat(k, 1, L),
                                      st_vec(t, NT), &loss, &sol),
                     OT_OK, NULL);
    for (int64_t b = 0; b < L; b++) {
        const double e = exp(-2 * k[b] * T);
        const double l = a[b] * a[b] * (1 - e) / (2 * k[b]);
        const double dk = a[b] * a[b] * (T * e / k[b] - (1 - e) / (2 * k[b] * k[b]));
        const double da = a[b] * (1 - e) / k[b];
        const double gl = grad_at(sol, OT_GRAD_LOSS, 0, b),
                     gk = grad_at(sol, OT_GRAD_PARAMS, 0, b),
                     ga = grad_at(sol, OT_GRAD_Y0, 0, b);
        ck_assert_msg(fabs(gl - l) <= 1e-8 * l, "lane %d: L %.12g vs %.12g", (int)b, gl,
                      l);
        ck_assert_msg(fabs(gk - dk) <= 1e-7 * fabs(dk), "lane %d: dL/dk %.12g vs %.12g",
                      (int)b, gk, dk);
        ck_assert_msg(fabs(ga - da) <= 1e-7 * fabs(da), "lane %d: dL/da %.12g vs %.12g",
                      (int)b, ga, da);
    }
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* q = 0.1 (y_0 - 2)^2 + alpha^2 (explicit in p). */
static int q_lv(double t, int64_t lane, ot_view y, ot_view p, ot_view_mut q,
                ot_view_mut dqdy, ot_view_mut dqdp, void *u)
{
    (void)t, (void)lane, (void)u;
    const double x = ot_view_col_f64(y, 0, 0)[0], al = ot_view_col_f64(p, 0, 0)[0];
    ot_view_mut_col_f64(q, 0, 0)[0] = 0.1 * (x - 2) * (x - 2) + al * al;
    ot_view_mut_col_f64(dqdy, 0, 0)[0] = 0.2 * (x - 2);
    ot_view_mut_col_f64(dqdp, 0, 0)[0] = 2 * al;
    return 0;
}

/* Central differences of L for one Lotka-Volterra lane in its 4 rates and 2
 * initial values: the 12 perturbed lanes in one lockstep adjoint call
 * (shared steps), their losses differenced. Leaves the mode as given. */
static void lv_loss_differences(ot_ode *ode, ot_mode mode, const ot_loss *loss,
                                const double *p, const double *y0, double *dif)
{
    double pp[4 * 12], yy[2 * 12], h[6];
    for (int k = 0; k < 6; k++)
        for (int s = 0; s < 2; s++) {
            const int lane = 2 * k + s;
            memcpy(pp + 4 * lane, p, 4 * sizeof *p);
            memcpy(yy + 2 * lane, y0, 2 * sizeof *y0);
            double *x = k < 4 ? pp + 4 * lane + k : yy + 2 * lane + (k - 4);
            h[k] = 1e-5 * fabs(*x);
            *x += s ? -h[k] : h[k];
        }
    ot_solution *fd = NULL;
    ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    ck_assert_status(ot_solve_adjoint(ode, st_mat(yy, 2, 12), st_mat(pp, 4, 12),
                                      st_vec(LV_T, LV_NT), loss, &fd),
                     OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    for (int k = 0; k < 6; k++)
        dif[k] = (grad_at(fd, OT_GRAD_LOSS, 0, 2 * k) -
                  grad_at(fd, OT_GRAD_LOSS, 0, 2 * k + 1)) /
                 (2 * h[k]);
    ot_solution_free(fd);
}

/* The adjoint's gradient of one lane against lv_loss_differences: within
 * 1e-6 of the largest. */
static void assert_lv_gradient(ot_mode mode, const ot_loss *loss, const char *what)
{
    double p[4], y0[2], adj[6], dif[6];
    lv_lanes(p, y0, 1);
    ot_ode *ode = lv_ode(1, 1, 1e-10);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_adjoint(ode, st_vec(y0, 2), st_vec(p, 4),
                                      st_vec(LV_T, LV_NT), loss, &sol),
                     OT_OK, NULL);
    for (int k = 0; k < 6; k++)
        adj[k] = k < 4 ? grad_at(sol, OT_GRAD_PARAMS, k, 0)
                       : grad_at(sol, OT_GRAD_Y0, k - 4, 0);
    lv_loss_differences(ode, mode, loss, p, y0, dif);
    const double g = rel_gap(adj, dif, 6);
    ck_assert_msg(g < 1e-6, "%s: adjoint vs differences %.3g (dL/dalpha %.10g vs %.10g)",
                  what, g, adj[0], dif[0]);
    ot_solution_free(sol);
    ot_ode_free(ode);
}

/* Loop 0: lanes, 1: lockstep. Squares plus the integral term on
 * Lotka-Volterra, against central differences of L. */
START_TEST(adjoint_integral_term_agrees_with_differences)
{
    ot_loss loss = ot_loss_squares(st_mat(LV_DATA, 2, LV_NT), ot_view_absent());
    loss.integrand = q_lv;
    assert_lv_gradient(_i ? OT_LOCKSTEP : OT_LANES, &loss, "integral term");
}
END_TEST

/* Loop 0: lanes, 1: lockstep. Data at every third output only (NaN
 * elsewhere): the backward pass goes on through outputs without a jump
 * (no restart there), and the gradient still matches central differences. */
START_TEST(adjoint_sparse_data_agrees_with_differences)
{
    double sparse[2 * LV_NT];
    lv_setup();
    for (int i = 0; i < LV_NT; i++)
        for (int r = 0; r < 2; r++)
            sparse[2 * i + r] = i % 3 == 0 ? LV_DATA[2 * i + r] : NAN;
    const ot_loss loss = ot_loss_squares(st_mat(sparse, 2, LV_NT), ot_view_absent());
    assert_lv_gradient(_i ? OT_LOCKSTEP : OT_LANES, &loss, "sparse data");
}
END_TEST

/* Loop 0: lanes, 1: lockstep. f32 outputs change no gradient bit (the loss
 * reads the f64 state), and a start at t0 = 5 with the outputs shifted by
 * 5 gives the gradients of t0 = 0 (Lotka-Volterra is autonomous) to 1e-8. */
START_TEST(adjoint_f32_outputs_and_shifted_start)
{
    enum { L = 3 };
    double p[4 * L], y0[2 * L], t5[LV_NT];
    lv_lanes(p, y0, L);
    for (int i = 0; i < LV_NT; i++)
        t5[i] = LV_T[i] + 5;
    const ot_loss loss = ot_loss_squares(st_mat(LV_DATA, 2, LV_NT), ot_view_absent());
    ot_solution *sol[3] = {NULL, NULL, NULL};
    for (int v = 0; v < 3; v++) {
        ot_ode *ode = lv_ode(1, 1, 1e-10);
        ck_assert_status(ot_ode_set_mode(ode, _i ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
        if (v == 1)
            ck_assert_status(ot_ode_set_output_dtype(ode, OT_F32), OT_OK, NULL);
        if (v == 2)
            ck_assert_status(ot_ode_set_t0(ode, 5), OT_OK, NULL);
        ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, L), st_mat(p, 4, L),
                                          st_vec(v == 2 ? t5 : LV_T, LV_NT), &loss,
                                          &sol[v]),
                         OT_OK, NULL);
        ot_ode_free(ode);
    }
    ck_assert_int_eq(ot_tensor_layout(ot_solution_ys(sol[1]))->dtype, OT_F32);
    for (int64_t b = 0; b < L; b++) {
        assert_grads_equal(sol[1], b, sol[0], b, 0);
        assert_grads_equal(sol[2], b, sol[0], b, 1e-8);
    }
    for (int v = 0; v < 3; v++)
        ot_solution_free(sol[v]);
}
END_TEST

Suite *adjoint_suite(void)
{
    Suite *s = suite_create("adjoint");
    TCase *tc = ot_test_tcase(s, "against references", 120);
    tcase_add_loop_test(tc, adjoint_decay_matches_the_analytic_gradient, 0, 2);
    tcase_add_loop_test(tc, adjoint_lotka_volterra_agrees_with_forward_and_differences, 0,
                        3);
    tcase_add_loop_test(tc, adjoint_robertson_rates_agree_with_forward, 0, 2);
    tcase_add_test(tc, adjoint_25_parameters_agree_with_differences_and_forward);
    tc = ot_test_tcase(s, "equalities", 60);
    tcase_add_test(tc, adjoint_thread_count_changes_no_bit);
    tcase_add_test(tc, adjoint_custom_and_out_losses_equal_the_squares);
    tcase_add_test(tc, adjoint_missing_data_and_weights);
    tcase_add_test(tc, adjoint_through_init_equals_dl_dy0);
    tcase_add_test(tc, adjoint_per_lane_times_equal_lanes_alone);
    tcase_add_loop_test(tc, adjoint_f32_outputs_and_shifted_start, 0, 2);
    tc = ot_test_tcase(s, "failures", 60);
    tcase_add_loop_test(tc, adjoint_failure_fails_its_lane_alone, 0, 2);
    tcase_add_test(tc, adjoint_refusals_name_the_argument);
    tcase_add_test(tc, adjoint_memory_is_counted_before_the_solve);
    tc = ot_test_tcase(s, "lockstep", 60);
    tcase_add_loop_test(tc, adjoint_lockstep_agrees_with_lanes, 0, 2);
    tcase_add_loop_test(tc, adjoint_lockstep_robertson_agrees_with_lanes, 0, 2);
    tcase_add_loop_test(tc, adjoint_lockstep_loss_failure_fails_its_lane, 0, 2);
    tc = ot_test_tcase(s, "integral terms", 60);
    tcase_add_loop_test(tc, adjoint_integral_term_matches_the_analytic_gradient, 0, 2);
    tcase_add_loop_test(tc, adjoint_integral_term_agrees_with_differences, 0, 2);
    tcase_add_loop_test(tc, adjoint_sparse_data_agrees_with_differences, 0, 2);
    return s;
}

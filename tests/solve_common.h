/* Helpers shared by the solver suites (check_solve.c, check_solve_faults.c):
 * view builders, output accessors and the model problems' callbacks. */
#ifndef OT_TESTS_SOLVE_COMMON_H
#define OT_TESTS_SOLVE_COMMON_H

#include <math.h>
#include <stdint.h>

#include "suites.h"

static const ot_device ST_CPU = {OT_CPU, 0};

/* ---- Views over test-owned arrays ---------------------------------------- */

/* [rows] when cols < 0, else [rows, cols]; compact f64 or f32. */
static inline ot_view st_view_t(const void *data, ot_dtype dt, int64_t rows, int64_t cols)
{
    ot_view v;
    const int64_t shape[2] = {rows, cols};
    ck_assert_status(ot_view_make(&v, data, dt, ST_CPU, cols < 0 ? 1 : 2, shape, NULL),
                     OT_OK, NULL);
    return v;
}

static inline ot_view st_vec(const double *d, int64_t n)
{
    return st_view_t(d, OT_F64, n, -1);
}

static inline ot_view st_mat(const double *d, int64_t rows, int64_t cols)
{
    return st_view_t(d, OT_F64, rows, cols);
}

/* ---- Reading outputs ----------------------------------------------------- */

/* Element [i, j, k] of an f64 (or f32, widened) tensor, through its strides. */
static inline double st_at(const ot_tensor *t, int64_t i, int64_t j, int64_t k)
{
    ck_assert_ptr_nonnull(t);
    const ot_layout *l = ot_tensor_layout(t);
    const char *p =
        (const char *)l->data + i * l->strides[0] + j * l->strides[1] + k * l->strides[2];
    return l->dtype == OT_F64 ? *(const double *)(const void *)p
                              : (double)*(const float *)(const void *)p;
}

static inline double st_y(const ot_solution *s, int64_t r, int64_t i, int64_t b)
{
    return st_at(ot_solution_ys(s), r, i, b);
}

/* Asserts a tensor's ndim and shape. */
static inline void st_assert_shape(const ot_tensor *t, int ndim, int64_t s0, int64_t s1,
                                   int64_t s2)
{
    ck_assert_ptr_nonnull(t);
    const ot_layout *l = ot_tensor_layout(t);
    ck_assert_int_eq(l->ndim, ndim);
    const int64_t want[3] = {s0, s1, s2};
    for (int d = 0; d < ndim; d++)
        ck_assert_int_eq(l->shape[d], want[d]);
}

static inline size_t st_bytes(const ot_tensor *t)
{
    const ot_layout *l = ot_tensor_layout(t);
    size_t n = ot_dtype_size(l->dtype);
    for (int d = 0; d < l->ndim; d++)
        n *= (size_t)l->shape[d];
    return n;
}

/* Lane b of a and lane b' of b hold the same bytes (ys [rows, nt, nbatch],
 * both compact). */
static inline int st_lane_equal(const ot_tensor *a, int64_t ba, const ot_tensor *b,
                                int64_t bb)
{
    const ot_layout *la = ot_tensor_layout(a), *lb = ot_tensor_layout(b);
    ck_assert_int_eq(la->strides[2], lb->strides[2]);
    return memcmp((const char *)la->data + ba * la->strides[2],
                  (const char *)lb->data + bb * lb->strides[2],
                  (size_t)la->strides[2]) == 0;
}

static inline void st_assert_stats_equal(const ot_solution *a, int64_t ba,
                                         const ot_solution *b, int64_t bb)
{
    ot_lane_stats x, y;
    ck_assert_status(ot_solution_lane_stats(a, ba, &x), OT_OK, NULL);
    ck_assert_status(ot_solution_lane_stats(b, bb, &y), OT_OK, NULL);
    ck_assert_int_eq(x.steps, y.steps);
    ck_assert_int_eq(x.rhs_evals, y.rhs_evals);
    ck_assert_int_eq(x.jac_evals, y.jac_evals);
    ck_assert_int_eq(x.lin_setups, y.lin_setups);
    ck_assert_int_eq(x.err_test_fails, y.err_test_fails);
    ck_assert_int_eq(x.nonlin_iters, y.nonlin_iters);
    ck_assert_int_eq(x.nonlin_fails, y.nonlin_fails);
    ck_assert(memcmp(&x.final_time, &y.final_time, sizeof x.final_time) == 0);
}

/* Loops over the k lanes of a callback's views (k = 1 in lanes mode). */
#define ST_LANES(v) ((v).layout.shape[1])

/* ---- The oscillator y1' = y2, y2' = -y1: from (0, 1), y1 = sin t --------- */

static inline int st_sine_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *Y = ot_view_col_f64(y, b, 0);
        double *F = ot_view_mut_col_f64(f, b, 0);
        F[0] = Y[1];
        F[1] = -Y[0];
    }
    return 0;
}

/* ---- A falling ball: h' = v, v' = -ST_G (params unused here) ------------- */

static const double ST_G = 9.81;

static inline int st_ball_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        double *F = ot_view_mut_col_f64(f, b, 0);
        F[0] = ot_view_col_f64(y, b, 0)[1];
        F[1] = -ST_G;
    }
    return 0;
}

/* ---- One decay: y' = -p0 y, n = 1 (params (k, ...)) ---------------------- */

static inline int st_decay1_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(f, b, 0)[0] =
            -ot_view_col_f64(p, b, 0)[0] * ot_view_col_f64(y, b, 0)[0];
    return 0;
}

/* g = y[0] (a ball's height; the ramp's state). */
static inline int st_first_state_root(double t, ot_view y, ot_view p, ot_view_mut g,
                                      void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0];
    return 0;
}

/* A bounce: the velocity reversed and scaled by the restitution p[0]. */
static inline int st_ball_bounce(double t, int root, int64_t lane, ot_view_mut y,
                                 ot_view_mut p, void *u)
{
    (void)t, (void)root, (void)lane, (void)u;
    double *Y = ot_view_mut_col_f64(y, 0, 0);
    Y[1] = -ot_view_mut_col_f64(p, 0, 0)[0] * Y[1];
    return 0;
}

/* ---- Decay: y_i' = -(i + 1) k y_i, n = 2, params (k, ...) ----------------- */

static inline int st_decay_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *yb = ot_view_col_f64(y, b, 0), *pb = ot_view_col_f64(p, b, 0);
        double *fb = ot_view_mut_col_f64(f, b, 0);
        fb[0] = -pb[0] * yb[0];
        fb[1] = -2.0 * pb[0] * yb[1];
    }
    return 0;
}

static inline int st_decay_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *pb = ot_view_col_f64(p, b, 0);
        ot_view_mut_col_f64(J, 0, b)[0] = -pb[0];
        ot_view_mut_col_f64(J, 1, b)[1] = -2.0 * pb[0];
    }
    return 0;
}

/* y0 = (a, 2 a) from params (k, a). */
static inline int st_decay_init(ot_view p, ot_view_mut y0, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(y0); b++) {
        const double a = ot_view_col_f64(p, b, 0)[1];
        double *y = ot_view_mut_col_f64(y0, b, 0);
        y[0] = a;
        y[1] = 2.0 * a;
    }
    return 0;
}

static inline double st_decay_exact(int64_t i, double y0i, double k, double t)
{
    return y0i * exp(-(double)(i + 1) * k * t);
}

/* ---- Robertson: params (k1, k2, k3) --------------------------------------- */

static const double ST_ROBER_K[3] = {0.04, 1e4, 3e7};
static const double ST_ROBER_ATOL[3] = {1e-8, 1e-14, 1e-6};
static const double ST_ROBER_RTOL = 1e-4;

/* The arithmetic shared with the raw CVODE program, so both do the same
 * operations in the same order. */
static inline void st_rober_f(const double *y, const double *k, double *f)
{
    const double r1 = k[0] * y[0], r2 = k[1] * y[1] * y[2], r3 = k[2] * y[1] * y[1];
    f[0] = -r1 + r2;
    f[1] = r1 - r2 - r3;
    f[2] = r3;
}

/* Column-major 3 x 3 Jacobian into J (leading dimension 3). */
static inline void st_rober_J(const double *y, const double *k, double *J)
{
    J[0] = -k[0];
    J[1] = k[0];
    J[2] = 0.0;
    J[3] = k[1] * y[2];
    J[4] = -k[1] * y[2] - 2.0 * k[2] * y[1];
    J[5] = 2.0 * k[2] * y[1];
    J[6] = k[1] * y[1];
    J[7] = -k[1] * y[1];
    J[8] = 0.0;
}

static inline int st_rober_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        st_rober_f(ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0),
                   ot_view_mut_col_f64(f, b, 0));
    return 0;
}

static inline int st_rober_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        double a[9];
        st_rober_J(ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0), a);
        for (int64_t j = 0; j < 3; j++)
            memcpy(ot_view_mut_col_f64(J, j, b), a + 3 * j, 3 * sizeof *a);
    }
    return 0;
}

/* A Robertson problem with the reference options (rtol 1e-4, atol vector,
 * dense user Jacobian). */
static inline ot_ode *st_rober_ode(void)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 3, 3, st_rober_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_jac(ode, st_rober_jac), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, ST_ROBER_RTOL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol_vector(ode, st_vec(ST_ROBER_ATOL, 3)), OT_OK, NULL);
    return ode;
}

/* The reference output times 0.4 * 10^i, i = 0..11. */
static inline void st_rober_times(double *t)
{
    t[0] = 0.4;
    for (int i = 1; i < 12; i++)
        t[i] = t[i - 1] * 10.0;
}

/* ---- Decay lanes and Robertson rates shared by the solver suites --------- */

/* k_b of the decay lanes: 0.1 .. 3.05. */
static inline double decay_k(int64_t b) { return 0.1 + 0.05 * (double)b; }

/* A decay problem with tolerances rtol, atol. */
static inline ot_ode *decay_ode(int64_t np, double rtol, double atol)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, np, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, rtol), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, atol), OT_OK, NULL);
    return ode;
}

/* Per-lane decay inputs: k [1, nb], y0 [2, nb] = (1 + b % 3, 0.5 + b % 2). */
static inline void decay_inputs(double *k, double *y0, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++) {
        k[b] = decay_k(b);
        y0[2 * b] = 1.0 + (double)(b % 3);
        y0[2 * b + 1] = 0.5 + (double)(b % 2);
    }
}

/* Rates of lane b: the reference ones varied by up to +-10 %. */
static inline void rober_rates(double *p, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++)
        for (int j = 0; j < 3; j++)
            p[3 * b + j] = ST_ROBER_K[j] * (1.0 + 0.1 * sin(1.0 + 0.37 * (double)b + j));
}

/* o = 3 y. */
static inline int triple_out(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        for (int64_t r = 0; r < y.layout.shape[0]; r++)
            ot_view_mut_col_f64(o, b, 0)[r] = 3.0 * ot_view_col_f64(y, b, 0)[r];
    return 0;
}

#endif

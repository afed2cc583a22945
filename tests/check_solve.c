/* Solver suite, CPU lanes mode: analytic solutions, the Robertson reference
 * (counts and a raw CVODE program run side by side), bit-for-bit lanes,
 * broadcast, out functions and ownership of the outputs. Sensitivities, step
 * records and roots: check_sens_roots.c. Lane failures and bad input:
 * check_solve_faults.c. */
#include <cvodes/cvodes.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdlib.h>
#include <string.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "solve_common.h"

#define NB 60 /* lanes of the analytic tests */

/* Asserts every output of a decay solve lies within factor * (rtol |y0| +
 * atol) of the exact solution. The scale is the lane's initial value (the
 * largest along the path), as the global error of a decaying solution does
 * not shrink with it: relative to |y(t)| itself it reaches 30 rtol here. */
static void assert_decay_exact(const ot_solution *sol, const double *k, const double *y0,
                               const double *t, int64_t nt, int64_t nb, double rtol,
                               double atol, double factor)
{
    for (int64_t b = 0; b < nb; b++) {
        ck_assert_int_eq(ot_solution_lane_status(sol, b), OT_OK);
        ck_assert_int_eq(ot_solution_lane_count(sol, b), nt);
        for (int64_t i = 0; i < nt; i++)
            for (int64_t r = 0; r < 2; r++) {
                const double ex = st_decay_exact(r, y0[2 * b + r], k[b], t[i]);
                const double got = st_y(sol, r, i, b);
                ck_assert_msg(fabs(got - ex) <= factor * (rtol * y0[2 * b + r] + atol),
                              "lane %lld y%lld(%g) = %.17g, exact %.17g", (long long)b,
                              (long long)r, t[i], got, ex);
            }
    }
}

/* ---- Analytic solutions ------------------------------------------------- */

/* Loop 0: BDF with CVODE's difference-quotient Jacobian; 1: user Jacobian. */
START_TEST(decay_bdf_per_lane_rates)
{
    const double rtol = 1e-8, atol = 1e-11;
    ot_ode *ode = decay_ode(1, rtol, atol);
    if (_i == 1)
        ck_assert_status(ot_ode_set_jac(ode, st_decay_jac), OT_OK, NULL);
    double k[NB], y0[2 * NB], t[41];
    decay_inputs(k, y0, NB);
    for (int i = 0; i < 41; i++)
        t[i] = 0.25 * i;
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB), st_vec(t, 41), &sol),
        OT_OK, NULL);
    ck_assert_int_eq(ot_solution_nbatch(sol), NB);
    ck_assert_int_eq(ot_solution_nfailed(sol), 0);
    st_assert_shape(ot_solution_ys(sol), 3, 2, 41, NB);
    st_assert_shape(ot_solution_ts(sol), 1, 41, 0, 0);
    for (int i = 0; i < 41; i++)
        ck_assert(st_at(ot_solution_ts(sol), i, 0, 0) == t[i]);
    assert_decay_exact(sol, k, y0, t, 41, NB, rtol, atol, 20);
    /* Every lane reached the last time, with Newton iterations on a Jacobian. */
    ot_lane_stats s0, s1;
    ot_solution_lane_stats(sol, 0, &s0);
    ot_solution_lane_stats(sol, NB - 1, &s1);
    ck_assert_int_gt(s0.steps, 10);
    ck_assert_int_gt(s0.jac_evals, 0);
    ck_assert(s0.final_time == 10.0 && s1.final_time == 10.0);
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* x'' = -w^2 x, x(0) = 1, x'(0) = 0, states (x, x'). */
static int osc_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *yb = ot_view_col_f64(y, b, 0), w = ot_view_col_f64(p, b, 0)[0];
        double *fb = ot_view_mut_col_f64(f, b, 0);
        fb[0] = yb[1];
        fb[1] = -w * w * yb[0];
    }
    return 0;
}

/* Loop 0: decay with Adams; 1: harmonic oscillator with Adams. */
START_TEST(adams_per_lane_rates)
{
    const double rtol = 1e-8, atol = 1e-11;
    double k[NB], y0[2 * NB], t[41];
    decay_inputs(k, y0, NB);
    for (int i = 0; i < 41; i++)
        t[i] = _i == 0 ? 0.25 * i : 0.15 * i;
    if (_i == 1) /* w 0.5 .. 1.5 up to t = 6: at most 1.5 periods */
        for (int64_t b = 0; b < NB; b++)
            k[b] = 0.5 + (double)b / (NB - 1);
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, _i == 0 ? st_decay_rhs : osc_rhs, NULL),
                     OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, OT_ADAMS), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, rtol), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, atol), OT_OK, NULL);
    const double x0[2] = {1.0, 0.0};
    ot_view y0v = _i == 0 ? st_mat(y0, 2, NB) : st_vec(x0, 2);
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_dense(ode, y0v, st_mat(k, 1, NB), st_vec(t, 41), &sol),
                     OT_OK, NULL);
    if (_i == 0) {
        assert_decay_exact(sol, k, y0, t, 41, NB, rtol, atol, 20);
    } else {
        /* Scale: each component's amplitude (1 for x, w for x'). */
        for (int64_t b = 0; b < NB; b++)
            for (int i = 0; i < 41; i++) {
                const double w = k[b], ex[2] = {cos(w * t[i]), -w * sin(w * t[i])};
                for (int r = 0; r < 2; r++)
                    ck_assert_msg(fabs(st_y(sol, r, i, b) - ex[r]) <=
                                      20 * (rtol * (r ? w : 1.0) + atol),
                                  "lane %d y%d(%g) = %.17g, exact %.17g", (int)b, r, t[i],
                                  st_y(sol, r, i, b), ex[r]);
            }
    }
    ot_lane_stats s;
    ot_solution_lane_stats(sol, 3, &s);
    ck_assert_int_eq(s.jac_evals, 0); /* fixed point: no Jacobian */
    ck_assert_int_gt(s.nonlin_iters, 0);
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* f32 inputs holding exactly representable values give the f64 result. */
START_TEST(f32_inputs_equal_f64_inputs)
{
    double k[NB], y0[2 * NB], t[9];
    float kf[NB], y0f[2 * NB], tf[9];
    for (int64_t b = 0; b < NB; b++) {
        kf[b] = (float)(k[b] = 0.25 + (double)b / 64.0);
        y0f[2 * b] = (float)(y0[2 * b] = 1.0 + (double)b / 8.0);
        y0f[2 * b + 1] = (float)(y0[2 * b + 1] = 0.5);
    }
    for (int i = 0; i < 9; i++)
        tf[i] = (float)(t[i] = 0.125 * i);
    ot_ode *ode = decay_ode(1, 1e-7, 1e-10);
    ot_solution *a = NULL, *b = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB), st_vec(t, 9), &a), OT_OK,
        NULL);
    ck_assert_status(ot_solve_dense(ode, st_view_t(y0f, OT_F32, 2, NB),
                                    st_view_t(kf, OT_F32, 1, NB),
                                    st_view_t(tf, OT_F32, 9, -1), &b),
                     OT_OK, NULL);
    ck_assert_int_eq(ot_tensor_layout(ot_solution_ys(b))->dtype, OT_F64);
    ck_assert(memcmp(ot_tensor_layout(ot_solution_ys(a))->data,
                     ot_tensor_layout(ot_solution_ys(b))->data,
                     st_bytes(ot_solution_ys(a))) == 0);
    ck_assert(memcmp(ot_tensor_layout(ot_solution_ts(a))->data,
                     ot_tensor_layout(ot_solution_ts(b))->data, sizeof t) == 0);
    for (int64_t l = 0; l < NB; l++)
        st_assert_stats_equal(a, l, b, l);
    ot_solution_free(a);
    ot_solution_free(b);
    ot_ode_free(ode);
}
END_TEST

/* Output dtype f32: each value is (float) of the f64 run's, dense (loop 0)
 * and steps (loop 1). */
START_TEST(f32_output_is_rounded_f64)
{
    double k[NB], y0[2 * NB], t[11];
    decay_inputs(k, y0, NB);
    for (int i = 0; i < 11; i++)
        t[i] = 0.3 * i;
    ot_ode *ode = decay_ode(1, 1e-7, 1e-10);
    ot_solution *a = NULL, *b = NULL;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            ck_assert_status(ot_ode_set_output_dtype(ode, OT_F32), OT_OK, NULL);
        ot_solution **s = pass ? &b : &a;
        if (_i == 0)
            ck_assert_status(ot_solve_dense(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB),
                                            st_vec(t, 11), s),
                             OT_OK, NULL);
        else
            ck_assert_status(ot_solve(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB), 3.0, s),
                             OT_OK, NULL);
    }
    const ot_layout *la = ot_tensor_layout(ot_solution_ys(a));
    const ot_layout *lb = ot_tensor_layout(ot_solution_ys(b));
    ck_assert_int_eq(lb->dtype, OT_F32);
    ck_assert_int_eq(ot_tensor_layout(ot_solution_ts(b))->dtype, OT_F64);
    for (int d = 0; d < 3; d++)
        ck_assert_int_eq(la->shape[d], lb->shape[d]);
    const double *da = la->data;
    const float *fb = lb->data;
    const int64_t numel = la->shape[0] * la->shape[1] * la->shape[2];
    for (int64_t e = 0; e < numel; e++) {
        const float want = (float)da[e];
        ck_assert(memcmp(&want, &fb[e], sizeof want) == 0 ||
                  (isnan(want) && isnan(fb[e])));
    }
    ck_assert(memcmp(ot_tensor_layout(ot_solution_ts(a))->data,
                     ot_tensor_layout(ot_solution_ts(b))->data,
                     st_bytes(ot_solution_ts(a))) == 0);
    ot_solution_free(a);
    ot_solution_free(b);
    ot_ode_free(ode);
}
END_TEST

/* ---- Robertson ------------------------------------------------------------ */

/* Lane 0 has the reference rates. */
START_TEST(robertson_reference_counts_and_values)
{
    ot_ode *ode = st_rober_ode();
    double t[12];
    st_rober_times(t);
    const double y0[3] = {1, 0, 0};
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 3), st_vec(ST_ROBER_K, 3), st_vec(t, 12), &sol),
        OT_OK, NULL);
    ot_lane_stats s;
    ck_assert_status(ot_solution_lane_stats(sol, 0, &s), OT_OK, NULL);
    ck_assert_msg(s.steps >= 542 && s.steps <= 543, "steps %lld", (long long)s.steps);
    ck_assert_msg(s.rhs_evals >= 754 && s.rhs_evals <= 772, "rhs %lld",
                  (long long)s.rhs_evals);
    ck_assert_int_gt(s.jac_evals, 0);
    ck_assert(s.final_time == t[11]);
    /* t = 40 is output 2 (0.4, 4, 40). */
    ck_assert(fabs(st_y(sol, 0, 2, 0) - 0.7158271) <= 1e-3 * 0.7158271);
    ck_assert(fabs(st_y(sol, 1, 2, 0) - 9.185535e-6) <= 1e-9);
    ck_assert(fabs(st_y(sol, 2, 2, 0) - 0.2841637) <= 1e-3 * 0.2841637);
    ck_assert(fabs(st_y(sol, 2, 11, 0) - 1.0) <= 1e-4);
    ck_assert(fabs(st_y(sol, 0, 11, 0)) <= 1e-4);
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

static int raw_rhs(sunrealtype t, N_Vector y, N_Vector f, void *u)
{
    (void)t;
    st_rober_f(N_VGetArrayPointer(y), u, N_VGetArrayPointer(f));
    return 0;
}

static int raw_jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *u,
                   N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)t, (void)fy, (void)t1, (void)t2, (void)t3;
    double a[9];
    st_rober_J(N_VGetArrayPointer(y), u, a);
    for (sunindextype j = 0; j < 3; j++)
        memcpy(SUNDenseMatrix_Column(J, j), a + 3 * j, 3 * sizeof *a);
    return 0;
}

typedef struct {
    long nst, nfe, nje, nfe_dq;
} raw_stats;

/* Robertson on CVODE(S) directly with the reference options: states ys
 * [3, 12] and, when sens, forward sensitivities ss [3][3, 12] as odetensor
 * sets them up (staggered, difference quotients, scales |p|, estimated
 * tolerances, sensitivities in the error test). */
static void raw_robertson(double *k, const double *t, int sens, int dq, double *ys,
                          double *ss, raw_stats *st)
{
    SUNContext ctx;
#if SUNDIALS_VERSION_MAJOR >= 7
    ck_assert_int_eq(SUNContext_Create(SUN_COMM_NULL, &ctx), 0);
#else
    ck_assert_int_eq(SUNContext_Create(NULL, &ctx), 0);
#endif
    N_Vector y = N_VNew_Serial(3, ctx), atol = N_VNew_Serial(3, ctx);
    ck_assert(y && atol);
    N_VConst(0.0, y);
    NV_Ith_S(y, 0) = 1.0;
    memcpy(N_VGetArrayPointer(atol), ST_ROBER_ATOL, sizeof ST_ROBER_ATOL);
    void *cv = CVodeCreate(CV_BDF, ctx);
    SUNMatrix A = SUNDenseMatrix(3, 3, ctx);
    SUNLinearSolver LS = SUNLinSol_Dense(y, A, ctx);
    ck_assert_int_eq(CVodeInit(cv, raw_rhs, 0.0, y), CV_SUCCESS);
    ck_assert_int_eq(CVodeSetUserData(cv, k), CV_SUCCESS);
    ck_assert_int_eq(CVodeSVtolerances(cv, ST_ROBER_RTOL, atol), CV_SUCCESS);
    ck_assert_int_eq(CVodeSetLinearSolver(cv, LS, A), CV_SUCCESS);
    if (!dq) /* else CVODE's own dense difference quotients */
        ck_assert_int_eq(CVodeSetJacFn(cv, raw_jac), CV_SUCCESS);
    N_Vector *yS = NULL;
    double pbar[3] = {fabs(k[0]), fabs(k[1]), fabs(k[2])};
    if (sens) {
        yS = N_VCloneVectorArray(3, y);
        ck_assert_ptr_nonnull(yS);
        for (int j = 0; j < 3; j++)
            N_VConst(0.0, yS[j]);
        ck_assert_int_eq(CVodeSensInit1(cv, 3, CV_STAGGERED, NULL, yS), CV_SUCCESS);
        ck_assert_int_eq(CVodeSetSensParams(cv, k, pbar, NULL), CV_SUCCESS);
        ck_assert_int_eq(CVodeSetSensErrCon(cv, SUNTRUE), CV_SUCCESS);
        ck_assert_int_eq(CVodeSensEEtolerances(cv), CV_SUCCESS);
    }
    for (int i = 0; i < 12; i++) {
        sunrealtype tret;
        ck_assert_int_eq(CVode(cv, t[i], y, &tret, CV_NORMAL), CV_SUCCESS);
        memcpy(ys + 3 * i, N_VGetArrayPointer(y), 3 * sizeof(double));
        if (sens) {
            ck_assert_int_eq(CVodeGetSens(cv, &tret, yS), CV_SUCCESS);
            for (int j = 0; j < 3; j++)
                memcpy(ss + 36 * j + 3 * i, N_VGetArrayPointer(yS[j]),
                       3 * sizeof(double));
        }
    }
    CVodeGetNumSteps(cv, &st->nst);
    CVodeGetNumRhsEvals(cv, &st->nfe);
    CVodeGetNumJacEvals(cv, &st->nje);
    CVodeGetNumLinRhsEvals(cv, &st->nfe_dq);
    if (yS)
        N_VDestroyVectorArray(yS, 3);
    CVodeFree(&cv);
    SUNLinSolFree(LS);
    SUNMatDestroy(A);
    N_VDestroy(y);
    N_VDestroy(atol);
    SUNContext_Free(&ctx);
}

/* CVODE alone, same options: odetensor's lane must match it bit for bit.
 * Loop bit 0: states (ot_solve_dense) or with sensitivities
 * (ot_solve_fwd_sens); bit 1: no user Jacobian, so CVODE's own dense
 * difference quotients against odetensor's, which allocate nothing (issue
 * 13, item 3) and must round the same. */
START_TEST(robertson_equals_raw_cvode)
{
    const int sens = _i & 1, dq = _i >> 1;
    double t[12], raw[3 * 12], raws[3 * 3 * 12], k[3];
    st_rober_times(t);
    memcpy(k, ST_ROBER_K, sizeof k);
    raw_stats rs;
    raw_robertson(k, t, sens, dq, raw, raws, &rs);

    ot_ode *ode = st_rober_ode();
    if (dq)
        ck_assert_status(ot_ode_set_jac(ode, NULL), OT_OK, NULL);
    const double y0[3] = {1, 0, 0};
    ot_solution *sol = NULL;
    if (sens == 0)
        ck_assert_status(
            ot_solve_dense(ode, st_vec(y0, 3), st_vec(k, 3), st_vec(t, 12), &sol), OT_OK,
            NULL);
    else
        ck_assert_status(
            ot_solve_fwd_sens(ode, st_vec(y0, 3), st_vec(k, 3), st_vec(t, 12), &sol),
            OT_OK, NULL);
    ot_lane_stats s;
    ot_solution_lane_stats(sol, 0, &s);
    ck_assert_int_eq(s.steps, rs.nst);
    ck_assert_int_eq(s.rhs_evals, rs.nfe);
    ck_assert_int_eq(s.jac_evals, rs.nje);
    ck_assert_int_eq(s.jac_rhs_evals, rs.nfe_dq);
    ck_assert(memcmp(ot_tensor_layout(ot_solution_ys(sol))->data, raw, sizeof raw) == 0);
    for (int j = 0; sens && j < 3; j++)
        ck_assert_msg(memcmp(ot_tensor_layout(ot_solution_sens(sol, j))->data,
                             raws + 36 * j, sizeof raw) == 0,
                      "sensitivity %d differs from CVODES'", j);
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* One thread, two threads and one-lane solves agree bit for bit: loop 0
 * states of 64 lanes, loop 1 sensitivities of 16 lanes. */
START_TEST(robertson_lanes_bitwise)
{
    enum { NL = 64 };
    const int64_t nl = _i ? 16 : NL, nsens = _i ? 3 : 0;
    double p[3 * NL], t[12];
    rober_rates(p, nl);
    st_rober_times(t);
    const double y0[3] = {1, 0, 0};
    ot_ode *ode = st_rober_ode();
    int (*solve)(const ot_ode *, ot_view, ot_view, ot_view, ot_solution **) =
        _i ? ot_solve_fwd_sens : ot_solve_dense;
    ot_solution *one = NULL, *two = NULL;
    ck_assert_status(ot_ode_set_threads(ode, 1), OT_OK, NULL);
    ck_assert_status(solve(ode, st_vec(y0, 3), st_mat(p, 3, nl), st_vec(t, 12), &one),
                     OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, 2), OT_OK, NULL);
    ck_assert_status(solve(ode, st_vec(y0, 3), st_mat(p, 3, nl), st_vec(t, 12), &two),
                     OT_OK, NULL);
    ck_assert(memcmp(ot_tensor_layout(ot_solution_ys(one))->data,
                     ot_tensor_layout(ot_solution_ys(two))->data,
                     st_bytes(ot_solution_ys(one))) == 0);
    for (int64_t j = 0; j < nsens; j++)
        ck_assert(memcmp(ot_tensor_layout(ot_solution_sens(one, j))->data,
                         ot_tensor_layout(ot_solution_sens(two, j))->data,
                         st_bytes(ot_solution_sens(one, j))) == 0);
    int64_t distinct = 0, prev = -1;
    for (int64_t b = 0; b < nl; b++) {
        st_assert_stats_equal(one, b, two, b);
        ot_solution *solo = NULL;
        ck_assert_status(
            solve(ode, st_vec(y0, 3), st_vec(p + 3 * b, 3), st_vec(t, 12), &solo), OT_OK,
            NULL);
        ck_assert_msg(st_lane_equal(ot_solution_ys(one), b, ot_solution_ys(solo), 0),
                      "lane %d", (int)b);
        for (int64_t j = 0; j < nsens; j++)
            ck_assert_msg(
                st_lane_equal(ot_solution_sens(one, j), b, ot_solution_sens(solo, j), 0),
                "lane %d sensitivity %d", (int)b, (int)j);
        st_assert_stats_equal(one, b, solo, 0);
        ot_solution_free(solo);
        ot_lane_stats s;
        ot_solution_lane_stats(one, b, &s);
        distinct += s.steps != prev;
        prev = s.steps;
    }
    ck_assert_int_gt(distinct, 4); /* the rates do change the lanes' paths */
    ot_solution_free(one);
    ot_solution_free(two);
    ot_ode_free(ode);
}
END_TEST

/* ---- Broadcast and init --------------------------------------------------- */

/* Loop 0: y0 [n]; 1: y0 [n, 1]; 2: params [np] with y0 [n, nbatch];
 * 3: params [np, 1]. Each equals the solve with every lane spelled out. */
START_TEST(broadcast_one_lane_inputs)
{
    enum { L = 7 };
    double k[L], y0[2 * L], kfull[L], y0full[2 * L], t[6];
    decay_inputs(k, y0, L);
    for (int i = 0; i < 6; i++)
        t[i] = 0.5 * i;
    ot_view y0v, pv;
    if (_i < 2) {
        for (int64_t b = 0; b < L; b++)
            memcpy(y0full + 2 * b, y0, 2 * sizeof *y0);
        memcpy(kfull, k, sizeof k);
        y0v = _i == 0 ? st_vec(y0, 2) : st_mat(y0, 2, 1);
        pv = st_mat(k, 1, L);
    } else {
        for (int64_t b = 0; b < L; b++)
            kfull[b] = k[0];
        memcpy(y0full, y0, sizeof y0);
        y0v = st_mat(y0, 2, L);
        pv = _i == 2 ? st_vec(k, 1) : st_mat(k, 1, 1);
    }
    ot_ode *ode = decay_ode(1, 1e-7, 1e-10);
    ot_solution *a = NULL, *b = NULL;
    ck_assert_status(ot_solve_dense(ode, y0v, pv, st_vec(t, 6), &a), OT_OK, NULL);
    ck_assert_status(
        ot_solve_dense(ode, st_mat(y0full, 2, L), st_mat(kfull, 1, L), st_vec(t, 6), &b),
        OT_OK, NULL);
    ck_assert_int_eq(ot_solution_nbatch(a), L);
    st_assert_shape(ot_solution_ys(a), 3, 2, 6, L);
    ck_assert(memcmp(ot_tensor_layout(ot_solution_ys(a))->data,
                     ot_tensor_layout(ot_solution_ys(b))->data,
                     st_bytes(ot_solution_ys(a))) == 0);
    /* The broadcast input really reaches every lane. */
    for (int64_t l = 0; l < L; l++)
        ck_assert(st_y(a, 0, 0, l) == y0full[2 * l] &&
                  fabs(st_y(a, 0, 5, l) -
                       st_decay_exact(0, y0full[2 * l], kfull[l], 2.5)) < 1e-5);
    ot_solution_free(a);
    ot_solution_free(b);
    ot_ode_free(ode);
}
END_TEST

/* Both inputs one lane: nbatch is 1. */
START_TEST(broadcast_single_lane)
{
    const double y0[2] = {1, 2}, k[1] = {0.5}, t[2] = {0, 1};
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_mat(k, 1, 1), st_vec(t, 2), &sol), OT_OK,
        NULL);
    ck_assert_int_eq(ot_solution_nbatch(sol), 1);
    st_assert_shape(ot_solution_ys(sol), 3, 2, 2, 1);
    ck_assert(fabs(st_y(sol, 1, 1, 0) - 2 * exp(-1.0)) < 1e-6);
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* init computes y0 from params (k, a): the same as passing y0 = (a, 2a). */
START_TEST(init_equals_given_y0)
{
    enum { L = 9 };
    double p[2 * L], y0[2 * L], t[5] = {0, 0.5, 1, 2, 4};
    for (int64_t b = 0; b < L; b++) {
        p[2 * b] = decay_k(b);
        p[2 * b + 1] = 0.75 + 0.25 * (double)b;
        y0[2 * b] = p[2 * b + 1];
        y0[2 * b + 1] = 2.0 * p[2 * b + 1];
    }
    ot_ode *ode = decay_ode(2, 1e-7, 1e-10);
    ck_assert_status(ot_ode_set_init(ode, st_decay_init), OT_OK, NULL);
    ot_solution *a = NULL, *b = NULL;
    ck_assert_status(
        ot_solve_dense(ode, ot_view_absent(), st_mat(p, 2, L), st_vec(t, 5), &a), OT_OK,
        NULL);
    ck_assert_status(
        ot_solve_dense(ode, st_mat(y0, 2, L), st_mat(p, 2, L), st_vec(t, 5), &b), OT_OK,
        NULL);
    ck_assert_int_eq(ot_solution_nbatch(a), L);
    ck_assert(memcmp(ot_tensor_layout(ot_solution_ys(a))->data,
                     ot_tensor_layout(ot_solution_ys(b))->data,
                     st_bytes(ot_solution_ys(a))) == 0);
    ck_assert(st_y(a, 1, 0, L - 1) == y0[2 * L - 1]);
    ot_solution_free(a);
    ot_solution_free(b);
    ot_ode_free(ode);
}
END_TEST

/* ---- Out functions -------------------------------------------------------- */

/* o = y0 + y1 + y2 (Robertson's conserved mass). */
static int mass_out(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *yb = ot_view_col_f64(y, b, 0);
        ot_view_mut_col_f64(o, b, 0)[0] = yb[0] + yb[1] + yb[2];
    }
    return 0;
}

/* Loop 0: dense; 1: steps. ys holds out(y) of the solve without out. */
START_TEST(out_function_decay)
{
    double k[NB], y0[2 * NB], t[8];
    decay_inputs(k, y0, NB);
    for (int i = 0; i < 8; i++)
        t[i] = 0.4 * i;
    ot_ode *ode = decay_ode(1, 1e-7, 1e-10);
    ot_solution *plain = NULL, *with = NULL;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            ck_assert_status(ot_ode_set_out(ode, 2, triple_out), OT_OK, NULL);
        ot_solution **s = pass ? &with : &plain;
        if (_i == 0)
            ck_assert_status(
                ot_solve_dense(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB), st_vec(t, 8), s),
                OT_OK, NULL);
        else
            ck_assert_status(ot_solve(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB), 2.8, s),
                             OT_OK, NULL);
    }
    const ot_layout *lp = ot_tensor_layout(ot_solution_ys(plain));
    st_assert_shape(ot_solution_ys(with), 3, 2, lp->shape[1], NB);
    for (int64_t b = 0; b < NB; b++) {
        const int64_t c = ot_solution_lane_count(plain, b);
        ck_assert_int_eq(ot_solution_lane_count(with, b), c);
        for (int64_t i = 0; i < c; i++)
            for (int r = 0; r < 2; r++)
                ck_assert(st_y(with, r, i, b) == 3.0 * st_y(plain, r, i, b));
    }
    ot_solution_free(plain);
    ot_solution_free(with);
    ot_ode_free(ode);
}
END_TEST

START_TEST(out_function_robertson_mass)
{
    enum { L = 8 };
    double p[3 * L], t[12];
    rober_rates(p, L);
    st_rober_times(t);
    const double y0[3] = {1, 0, 0};
    ot_ode *ode = st_rober_ode();
    ot_solution *plain = NULL, *mass = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 3), st_mat(p, 3, L), st_vec(t, 12), &plain), OT_OK,
        NULL);
    ck_assert_status(ot_ode_set_out(ode, 1, mass_out), OT_OK, NULL);
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 3), st_mat(p, 3, L), st_vec(t, 12), &mass), OT_OK,
        NULL);
    st_assert_shape(ot_solution_ys(mass), 3, 1, 12, L);
    for (int64_t b = 0; b < L; b++)
        for (int i = 0; i < 12; i++) {
            const double m = st_y(mass, 0, i, b);
            ck_assert(fabs(m - 1.0) <= 1e-6);
            ck_assert(m ==
                      st_y(plain, 0, i, b) + st_y(plain, 1, i, b) + st_y(plain, 2, i, b));
        }
    st_assert_stats_equal(plain, 3, mass, 3);
    ot_solution_free(plain);
    ot_solution_free(mass);
    ot_ode_free(ode);
}
END_TEST

/* ---- Ownership of outputs ------------------------------------------------- */

START_TEST(take_ys_once_and_export)
{
    double k[4], y0[8], t[3] = {0, 1, 2};
    decay_inputs(k, y0, 4);
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_mat(y0, 2, 4), st_mat(k, 1, 4), st_vec(t, 3), &sol), OT_OK,
        NULL);
    const ot_tensor *held = ot_solution_ys(sol);
    double copy[2 * 3 * 4];
    memcpy(copy, ot_tensor_layout(held)->data, sizeof copy);
    ot_tensor *ys = ot_solution_take_ys(sol);
    ck_assert_ptr_eq(ys, held);
    ck_assert_ptr_null(ot_solution_take_ys(sol));
    ck_assert_ptr_null(ot_solution_ys(sol));
    ot_tensor *ts = ot_solution_take_ts(sol);
    ck_assert_ptr_nonnull(ts);
    ck_assert_ptr_null(ot_solution_take_ts(sol));
    ck_assert_ptr_null(ot_solution_take_sens(sol, 0));
    ot_solution_free(sol);
    ot_ode_free(ode);
    /* Both outlive the solution. */
    ck_assert(memcmp(ot_tensor_layout(ys)->data, copy, sizeof copy) == 0);
    ck_assert(st_at(ts, 2, 0, 0) == 2.0);
    ot_tensor_free(ts);
    DLManagedTensorVersioned *mt = NULL;
    ck_assert_status(ot_dlpack_export(ys, &mt), OT_OK, NULL);
    ck_assert_int_eq(mt->dl_tensor.ndim, 3);
    ck_assert_int_eq(mt->dl_tensor.shape[0], 2);
    ck_assert_int_eq(mt->dl_tensor.shape[1], 3);
    ck_assert_int_eq(mt->dl_tensor.shape[2], 4);
    ck_assert(memcmp((char *)mt->dl_tensor.data + mt->dl_tensor.byte_offset, copy,
                     sizeof copy) == 0);
    mt->deleter(mt);
}
END_TEST

/* Sensitivity tensors are taken the same way. */
START_TEST(take_sens_once)
{
    const double y0[2] = {1, 1}, k[1] = {0.5}, t[2] = {0, 1};
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve_fwd_sens(ode, st_vec(y0, 2), st_vec(k, 1), st_vec(t, 2), &sol), OT_OK,
        NULL);
    ck_assert_ptr_null(ot_solution_take_sens(sol, 1));
    ck_assert_ptr_null(ot_solution_take_sens(sol, -1));
    ot_tensor *s = ot_solution_take_sens(sol, 0);
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_null(ot_solution_sens(sol, 0));
    ck_assert_ptr_null(ot_solution_take_sens(sol, 0));
    ot_solution_free(sol);
    ck_assert(fabs(st_at(s, 0, 1, 0) - (-exp(-0.5))) < 1e-5);
    ot_tensor_free(s);
    ot_ode_free(ode);
}
END_TEST

Suite *solve_suite(void)
{
    Suite *s = suite_create("solve");
    TCase *tc = ot_test_tcase(s, "analytic", 60);
    tcase_add_loop_test(tc, decay_bdf_per_lane_rates, 0, 2);
    tcase_add_loop_test(tc, adams_per_lane_rates, 0, 2);
    tcase_add_test(tc, f32_inputs_equal_f64_inputs);
    tcase_add_loop_test(tc, f32_output_is_rounded_f64, 0, 2);

    tc = ot_test_tcase(s, "robertson", 60);
    tcase_add_test(tc, robertson_reference_counts_and_values);
    tcase_add_loop_test(tc, robertson_equals_raw_cvode, 0, 4);
    tcase_add_loop_test(tc, robertson_lanes_bitwise, 0, 2);

    tc = ot_test_tcase(s, "inputs", 60);
    tcase_add_loop_test(tc, broadcast_one_lane_inputs, 0, 4);
    tcase_add_test(tc, broadcast_single_lane);
    tcase_add_test(tc, init_equals_given_y0);
    tcase_add_loop_test(tc, out_function_decay, 0, 2);
    tcase_add_test(tc, out_function_robertson_mass);

    tc = ot_test_tcase(s, "ownership", 60);
    tcase_add_test(tc, take_ys_once_and_export);
    tcase_add_test(tc, take_sens_once);
    return s;
}

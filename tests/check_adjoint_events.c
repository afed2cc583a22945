/* The adjoint through doses and events (ot_solve_adjoint_with,
 * run/adjoint_events.c) against the complex-step derivatives of closed
 * forms, against forward sensitivities through the same events, and
 * against central differences of the solver's own loss: the dosed oral
 * one-compartment model (F, lag through stops_dp, the dose amount), with
 * an integral term across doses and per-lane times (check_adjoint_models.c
 * has the other models). Both modes; thread counts and one-lane lockstep bit
 * for bit; a lockstep lane whose loss fails leaves its block alone. */
#include "event_models.h"

/* ---- The dosed oral one-compartment model ----------------------------------- */

/* Each patient's data: the closed form at other parameters, so that the
 * residuals are not zero. [1, PK_NT, PK_NB]. */
static double pk_data[PK_NT * PK_NB];

static void pk_make_data(void)
{
    for (int b = 0; b < PK_NB; b++) {
        double complex pc[PK_NP];
        for (int j = 0; j < PK_NP; j++)
            pc[j] = pk_params[b * PK_NP + j] * (j == 0 ? 1.3 : j == 2 ? 0.85 : 1.0);
        for (int i = 0; i < PK_NT; i++)
            pk_data[b * PK_NT + i] = creal(pk_closed(pk_t[i], pc)) + 0.01 * (i % 3);
    }
}

/* L = sum_i (C(t_i) - d_i)^2 from the closed form (complex). */
static double complex pk_loss_closed(const double complex *p, int b)
{
    double complex L = 0;
    for (int i = 0; i < PK_NT; i++) {
        const double complex r = pk_closed(pk_t[i], p) - pk_data[b * PK_NT + i];
        L += r * r;
    }
    return L;
}

static ot_loss pk_loss(void)
{
    const int64_t shape[3] = {1, PK_NT, PK_NB};
    ot_view data;
    ck_assert_status(ot_view_make(&data, pk_data, OT_F64, ST_CPU, 3, shape, NULL), OT_OK,
                     NULL);
    return ot_loss_squares(data, ot_view_absent());
}

/* The patients' adjoint with stops t_d + lag (d stop / d lag = 1). */
static ot_solution *pk_adjoint(ot_ode *ode, const double *params, const ot_loss *loss)
{
    static double stops[PK_NDOSE * PK_NB], dp[PK_NP * PK_NDOSE * PK_NB];
    for (int b = 0; b < PK_NB; b++)
        for (int k = 0; k < PK_NDOSE; k++) {
            stops[b * PK_NDOSE + k] = pk_doses[k] + params[b * PK_NP + 4];
            for (int j = 0; j < PK_NP; j++)
                dp[(b * PK_NDOSE + k) * PK_NP + j] = j == 4 ? 1.0 : 0.0;
        }
    const double y0[2] = {0, 0};
    ot_solve_inputs in = ot_solve_inputs_make(st_vec(y0, 2), st_mat(params, PK_NP, PK_NB),
                                              st_vec(pk_t, PK_NT));
    in.stops = st_mat(stops, PK_NDOSE, PK_NB);
    const int64_t shape[3] = {PK_NP, PK_NDOSE, PK_NB};
    ck_assert_status(ot_view_make(&in.stops_dp, dp, OT_F64, ST_CPU, 3, shape, NULL),
                     OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_adjoint_with(ode, &in, loss, &s), OT_OK, NULL);
    return s;
}

/* Each patient's loss and its 6 derivatives (ka, CL, V, F, lag, amount)
 * against the complex step of the closed-form loss, both modes, with the
 * handler's differences and its Jacobian, with and without J and df/dp. */
START_TEST(dosed_pk_adjoint_matches_the_closed_form)
{
    const int lockstep = _i & 1, with_jac = (_i >> 1) & 1, derivs = _i >> 2;
    pk_make_data();
    const ot_loss loss = pk_loss();
    ot_ode *ode = pk_ode(lockstep, with_jac, derivs);
    ot_solution *s = pk_adjoint(ode, pk_params, &loss);
    for (int b = 0; b < PK_NB; b++) {
        double complex pc[PK_NP];
        for (int j = 0; j < PK_NP; j++)
            pc[j] = pk_params[b * PK_NP + j];
        near(grad_at(s, OT_GRAD_LOSS, 0, b), creal(pk_loss_closed(pc, b)), 1e-7, 1e-12,
             "loss", b, 0);
        double want[PK_NP], scale = 0;
        for (int j = 0; j < PK_NP; j++) {
            pc[j] += I * 1e-30;
            want[j] = cimag(pk_loss_closed(pc, b)) / 1e-30;
            pc[j] = pk_params[b * PK_NP + j];
            scale = fmax(scale, fabs(want[j] * pk_params[b * PK_NP + j]));
        }
        /* each within 1e-6, or 1e-8 of the largest in relative terms */
        for (int j = 0; j < PK_NP; j++)
            near(grad_at(s, OT_GRAD_PARAMS, j, b), want[j], 1e-6,
                 1e-8 * scale / fabs(pk_params[b * PK_NP + j]), "dL/dp", b, j);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* The patients with lags that put no dose on an output time, for central
 * differences (across a dose at an output the loss has a kink in the
 * lag). */
static void pk_params_off_outputs(double *p)
{
    memcpy(p, pk_params, sizeof pk_params);
    p[4] = 0.4, p[PK_NP + 4] = 0.3, p[2 * PK_NP + 4] = 1.1;
}

/* The adjoint's dL/dp is the forward sensitivities' sum_i 2 (C_i - d_i)
 * dC_i/dp through the same doses, and the central differences of its
 * own loss (the stops moved with the lag). */
START_TEST(dosed_pk_adjoint_equals_forward_sensitivities_and_differences)
{
    double P[PK_NP * PK_NB];
    pk_params_off_outputs(P);
    pk_make_data();
    const ot_loss loss = pk_loss();
    ot_ode *ode = pk_ode(_i, 0, 0);
    ot_solution *s = pk_adjoint(ode, P, &loss);
    static double stops[PK_NDOSE * PK_NB], dp[PK_NP * PK_NDOSE * PK_NB];
    for (int b = 0; b < PK_NB; b++)
        for (int k = 0; k < PK_NDOSE; k++) {
            stops[b * PK_NDOSE + k] = pk_doses[k] + P[b * PK_NP + 4];
            dp[(b * PK_NDOSE + k) * PK_NP + 4] = 1.0;
        }
    const double y0[2] = {0, 0};
    ot_solve_inputs in =
        ot_solve_inputs_make(st_vec(y0, 2), st_mat(P, PK_NP, PK_NB), st_vec(pk_t, PK_NT));
    in.stops = st_mat(stops, PK_NDOSE, PK_NB);
    const int64_t shape[3] = {PK_NP, PK_NDOSE, PK_NB};
    ck_assert_status(ot_view_make(&in.stops_dp, dp, OT_F64, ST_CPU, 3, shape, NULL),
                     OT_OK, NULL);
    ot_solution *f = NULL;
    ck_assert_status(ot_solve_fwd_sens_with(ode, &in, &f), OT_OK, NULL);
    for (int j = 0; j < PK_NP; j++) {
        double pp[PK_NP * PK_NB], pm[PK_NP * PK_NB], h[PK_NB];
        memcpy(pp, P, sizeof pp);
        memcpy(pm, P, sizeof pm);
        for (int b = 0; b < PK_NB; b++) {
            h[b] = 1e-4 * fmax(fabs(P[b * PK_NP + j]), 1);
            pp[b * PK_NP + j] += h[b];
            pm[b * PK_NP + j] -= h[b];
        }
        ot_solution *sp = pk_adjoint(ode, pp, &loss), *sm = pk_adjoint(ode, pm, &loss);
        for (int b = 0; b < PK_NB; b++) {
            double fwd = 0;
            for (int i = 0; i < PK_NT; i++)
                fwd += 2 * (st_y(f, 0, i, b) - pk_data[b * PK_NT + i]) *
                       st_at(ot_solution_sens(f, j), 0, i, b);
            const double adj = grad_at(s, OT_GRAD_PARAMS, j, b),
                         fd = (grad_at(sp, OT_GRAD_LOSS, 0, b) -
                               grad_at(sm, OT_GRAD_LOSS, 0, b)) /
                              (2 * h[b]);
            near(adj, fwd, 1e-6, 1e-9, "adjoint vs forward, p", b, j);
            near(adj, fd, 1e-5, 1e-7, "adjoint vs differences, p", b, j);
        }
        ot_solution_free(sp);
        ot_solution_free(sm);
    }
    ot_solution_free(f);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

static int same_grads(const ot_solution *a, const ot_solution *b, int which, int64_t rows,
                      int64_t nb)
{
    for (int64_t k = 0; k < nb; k++)
        for (int64_t r = 0; r < rows; r++) {
            const double x = grad_at(a, which, r, k), y = grad_at(b, which, r, k);
            if (memcmp(&x, &y, sizeof x) != 0)
                return 0;
        }
    return 1;
}

/* Lanes mode on 1 and 2 threads, and lockstep in blocks of one lane: the
 * same bits of every gradient. */
START_TEST(dosed_pk_adjoint_is_the_same_bits_in_every_layout)
{
    pk_make_data();
    const ot_loss loss = pk_loss();
    ot_ode *ode = pk_ode(0, 0, 0);
    ot_solution *one = pk_adjoint(ode, pk_params, &loss);
    ck_assert_status(ot_ode_set_threads(ode, 2), OT_OK, NULL);
    ot_solution *two = pk_adjoint(ode, pk_params, &loss);
    ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    ck_assert_status(ot_ode_set_lockstep_block(ode, 1), OT_OK, NULL);
    ot_solution *ls = pk_adjoint(ode, pk_params, &loss);
    const int which[3] = {OT_GRAD_LOSS, OT_GRAD_PARAMS, OT_GRAD_Y0};
    const int64_t rows[3] = {1, PK_NP, 2};
    for (int w = 0; w < 3; w++) {
        ck_assert_msg(same_grads(one, two, which[w], rows[w], PK_NB), "threads differ");
        ck_assert_msg(same_grads(one, ls, which[w], rows[w], PK_NB), "lockstep differs");
    }
    ot_solution_free(one);
    ot_solution_free(two);
    ot_solution_free(ls);
    ot_ode_free(ode);
}
END_TEST

/* Each patient with its own sample times (NaN-padded) in one lockstep
 * block: the lanes stop at their own last outputs, and each lane's
 * gradient is the closed form's, as in lanes mode. */
START_TEST(per_lane_times_in_a_lockstep_block_match_the_closed_form)
{
    enum { NT = 6 };
    static const double times[NT * PK_NB] = {0.75, 2,   5,    13,  20,  NAN, /* */
                                             1,    3,   12.5, 14,  26,  30,  /* */
                                             0.5,  1.5, 3,    NAN, NAN, NAN};
    static double data[NT * PK_NB], stops[PK_NDOSE * PK_NB], dp[PK_NP * PK_NDOSE * PK_NB];
    for (int b = 0; b < PK_NB; b++) {
        double complex pc[PK_NP];
        for (int j = 0; j < PK_NP; j++)
            pc[j] = pk_params[b * PK_NP + j] * (j == 1 ? 1.2 : 1.0);
        for (int i = 0; i < NT; i++)
            data[b * NT + i] =
                isnan(times[b * NT + i]) ? NAN : creal(pk_closed(times[b * NT + i], pc));
        for (int k = 0; k < PK_NDOSE; k++) {
            stops[b * PK_NDOSE + k] = pk_doses[k] + pk_params[b * PK_NP + 4];
            dp[(b * PK_NDOSE + k) * PK_NP + 4] = 1.0;
        }
    }
    const double y0[2] = {0, 0};
    ot_solve_inputs in = ot_solve_inputs_make(
        st_vec(y0, 2), st_mat(pk_params, PK_NP, PK_NB), st_mat(times, NT, PK_NB));
    in.stops = st_mat(stops, PK_NDOSE, PK_NB);
    const int64_t shape[3] = {PK_NP, PK_NDOSE, PK_NB}, dshape[3] = {1, NT, PK_NB};
    ck_assert_status(ot_view_make(&in.stops_dp, dp, OT_F64, ST_CPU, 3, shape, NULL),
                     OT_OK, NULL);
    ot_view dv;
    ck_assert_status(ot_view_make(&dv, data, OT_F64, ST_CPU, 3, dshape, NULL), OT_OK,
                     NULL);
    const ot_loss loss = ot_loss_squares(dv, ot_view_absent());
    ot_ode *ode = pk_ode(1, 0, 0);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_adjoint_with(ode, &in, &loss, &s), OT_OK, NULL);
    /* The plain dense solve too: lanes 0 and 2 stand still past their last
     * outputs while their stops at 13, 24.5 and 25 still stop the block
     * (SUNDIALS 6.4 kept the stop time no lane took, and lane 1's outputs at
     * 14 and 26 were its state at 13 and 25). */
    ot_solve_inputs dense = in;
    dense.stops_dp = ot_view_absent();
    ot_solution *d = NULL;
    ck_assert_status(ot_solve_dense_with(ode, &dense, &d), OT_OK, NULL);
    for (int b = 0; b < PK_NB; b++) {
        double complex pc[PK_NP];
        for (int j = 0; j < PK_NP; j++)
            pc[j] = pk_params[b * PK_NP + j];
        for (int i = 0; i < NT && !isnan(times[b * NT + i]); i++)
            near(tensor_data(ot_solution_ys(d))[b * NT + i],
                 creal(pk_closed(times[b * NT + i], pc)), 1e-7, 1e-9, "C at output", b,
                 i);
    }
    ot_solution_free(d);
    for (int b = 0; b < PK_NB; b++) {
        double complex pc[PK_NP];
        for (int j = 0; j < PK_NP; j++)
            pc[j] = pk_params[b * PK_NP + j];
        for (int j = 0; j < PK_NP; j++) {
            pc[j] += I * 1e-30;
            double complex L = 0;
            for (int i = 0; i < NT && !isnan(times[b * NT + i]); i++) {
                const double complex r =
                    pk_closed(times[b * NT + i], pc) - data[b * NT + i];
                L += r * r;
            }
            pc[j] = pk_params[b * PK_NP + j];
            near(grad_at(s, OT_GRAD_PARAMS, j, b), cimag(L) / 1e-30, 1e-6, 1e-9, "dL/dp",
                 b, j);
        }
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* ---- An integral term across doses, and a lane that fails ------------------- */

/* q = C^2 = (y1 / V)^2. */
static int conc_squared(double t, int64_t lane, ot_view y, ot_view p, ot_view_mut q,
                        ot_view_mut dqdy, ot_view_mut dqdp, void *user)
{
    (void)t, (void)lane, (void)user;
    const double a = ot_view_col_f64(y, 0, 0)[1], V = ot_view_col_f64(p, 0, 0)[2];
    ot_view_mut_col_f64(q, 0, 0)[0] = a * a / (V * V);
    ot_view_mut_col_f64(dqdy, 0, 0)[1] = 2 * a / (V * V);
    ot_view_mut_col_f64(dqdp, 0, 0)[2] = -2 * a * a / (V * V * V);
    return 0;
}

/* The integral of C^2 restarts with each dose (its value carried across);
 * its gradient against central differences of the solver's loss. */
START_TEST(an_integral_term_crosses_the_doses)
{
    double P[PK_NP * PK_NB];
    pk_params_off_outputs(P);
    pk_make_data();
    ot_loss loss = pk_loss();
    loss.integrand = conc_squared;
    ot_ode *ode = pk_ode(_i, 0, 0);
    ot_solution *s = pk_adjoint(ode, P, &loss);
    for (int j = 0; j < PK_NP; j++) {
        double pp[PK_NP * PK_NB], pm[PK_NP * PK_NB], h[PK_NB];
        memcpy(pp, P, sizeof pp);
        memcpy(pm, P, sizeof pm);
        for (int b = 0; b < PK_NB; b++) {
            h[b] = 1e-4 * fmax(fabs(P[b * PK_NP + j]), 1);
            pp[b * PK_NP + j] += h[b];
            pm[b * PK_NP + j] -= h[b];
        }
        ot_solution *sp = pk_adjoint(ode, pp, &loss), *sm = pk_adjoint(ode, pm, &loss);
        for (int b = 0; b < PK_NB; b++) {
            const double fd =
                (grad_at(sp, OT_GRAD_LOSS, 0, b) - grad_at(sm, OT_GRAD_LOSS, 0, b)) /
                (2 * h[b]);
            near(grad_at(s, OT_GRAD_PARAMS, j, b), fd, 1e-5, 1e-7, "dL/dp", b, j);
        }
        ot_solution_free(sp);
        ot_solution_free(sm);
    }
    /* the loss's integral part: the squares' part is the closed form's */
    for (int b = 0; b < PK_NB; b++) {
        double complex pc[PK_NP];
        for (int j = 0; j < PK_NP; j++)
            pc[j] = P[b * PK_NP + j];
        /* Simpson's rule on the closed form between the doses' kinks */
        const double *q = P + b * PK_NP;
        double integral = 0, edges[PK_NDOSE + 2] = {0};
        for (int k = 0; k < PK_NDOSE; k++)
            edges[k + 1] = pk_doses[k] + q[4];
        edges[PK_NDOSE + 1] = pk_t[PK_NT - 1];
        for (int k = 0; k <= PK_NDOSE; k++) {
            const int m = 4000;
            const double a = edges[k], w = (edges[k + 1] - a) / m;
            for (int i = 0; i <= m; i++) {
                const double c = creal(pk_closed(a + i * w, pc));
                integral += c * c * w / 3 * (i == 0 || i == m ? 1 : i % 2 ? 4 : 2);
            }
        }
        near(grad_at(s, OT_GRAD_LOSS, 0, b), creal(pk_loss_closed(pc, b)) + integral,
             1e-7, 1e-10, "loss", b, 0);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* The squares' loss, failing for lane 1 at output 4. */
static int failing_loss(double t, int64_t i, int64_t lane, ot_view y, ot_view p,
                        ot_view_mut g, ot_view_mut dgdy, ot_view_mut dgdp, void *user)
{
    (void)t, (void)p, (void)dgdp, (void)user;
    if (lane == 1 && i == 4)
        return -1;
    const double V = ot_view_col_f64(p, 0, 0)[2],
                 r = ot_view_col_f64(y, 0, 0)[1] / V - pk_data[lane * PK_NT + i];
    ot_view_mut_col_f64(g, 0, 0)[0] = r * r;
    ot_view_mut_col_f64(dgdy, 0, 0)[1] = 2 * r / V;
    ot_view_mut_col_f64(dgdp, 0, 0)[2] = -2 * r * ot_view_col_f64(y, 0, 0)[1] / (V * V);
    return 0;
}

/* In a lockstep block, the lane whose loss fails fails alone with its
 * message; its block-mates' gradients are the closed form's. */
START_TEST(a_lockstep_lane_whose_loss_fails_leaves_its_block_alone)
{
    pk_make_data();
    const ot_loss loss = ot_loss_custom(failing_loss, NULL);
    ot_ode *ode = pk_ode(1, 0, 0);
    ck_assert_status(ot_ode_set_out(ode, 0, NULL), OT_OK, NULL);
    ot_solution *s = NULL;
    static double stops[PK_NDOSE * PK_NB], dp[PK_NP * PK_NDOSE * PK_NB];
    for (int b = 0; b < PK_NB; b++)
        for (int k = 0; k < PK_NDOSE; k++) {
            stops[b * PK_NDOSE + k] = pk_doses[k] + pk_params[b * PK_NP + 4];
            dp[(b * PK_NDOSE + k) * PK_NP + 4] = 1.0;
        }
    const double y0[2] = {0, 0};
    ot_solve_inputs in = ot_solve_inputs_make(
        st_vec(y0, 2), st_mat(pk_params, PK_NP, PK_NB), st_vec(pk_t, PK_NT));
    in.stops = st_mat(stops, PK_NDOSE, PK_NB);
    const int64_t shape[3] = {PK_NP, PK_NDOSE, PK_NB};
    ck_assert_status(ot_view_make(&in.stops_dp, dp, OT_F64, ST_CPU, 3, shape, NULL),
                     OT_OK, NULL);
    ck_assert_status(ot_solve_adjoint_with(ode, &in, &loss, &s), OT_ERR_LANES_FAILED,
                     NULL);
    ck_assert_int_eq(ot_solution_lane_status(s, 1), OT_ERR_CALLBACK);
    ck_assert_ptr_nonnull(strstr(ot_solution_lane_message(s, 1), "loss"));
    for (int b = 0; b < PK_NB; b += 2) {
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
        double complex pc[PK_NP];
        for (int j = 0; j < PK_NP; j++)
            pc[j] = pk_params[b * PK_NP + j];
        for (int j = 0; j < PK_NP; j++) {
            pc[j] += I * 1e-30;
            const double want = cimag(pk_loss_closed(pc, b)) / 1e-30;
            pc[j] = pk_params[b * PK_NP + j];
            near(grad_at(s, OT_GRAD_PARAMS, j, b), want, 1e-6, 1e-8 * fabs(want) + 1e-9,
                 "dL/dp", b, j);
        }
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* Without doses: one bolus in the gut at t = 0, which decays to 1e-37
 * beside a central amount of 1 by the last output. The backward problem's
 * central differences of rhs in the gut amount lost half their digits
 * there (and it ran out of steps); now the plain adjoint's dL/dp with
 * them is the closed form's, as with the user's J and df/dp. */
START_TEST(a_state_far_below_the_others_keeps_its_jacobian_column)
{
    pk_make_data();
    const double *p = pk_params + 2 * PK_NP, y0[2] = {p[3] * p[5], 0};
    const int64_t shape[2] = {1, PK_NT};
    ot_view data;
    ck_assert_status(
        ot_view_make(&data, pk_data + 2 * PK_NT, OT_F64, ST_CPU, 2, shape, NULL), OT_OK,
        NULL);
    const ot_loss loss = ot_loss_squares(data, ot_view_absent());
    for (int derivs = 0; derivs < 2; derivs++) {
        ot_ode *ode = pk_ode(0, 0, derivs);
        ck_assert_status(ot_ode_set_rtol(ode, 1e-8), OT_OK, NULL);
        ck_assert_status(ot_ode_set_atol(ode, 1e-10), OT_OK, NULL);
        ot_solution *s = NULL;
        ck_assert_status(ot_solve_adjoint(ode, st_vec(y0, 2), st_vec(p, PK_NP),
                                          st_vec(pk_t, PK_NT), &loss, &s),
                         OT_OK, NULL);
        /* one dose, at t = 0: F amt ka / (V (ka - ke)) (e^-ke t - e^-ka t) */
        double complex pc[3] = {p[0], p[1], p[2]};
        for (int j = 0; j < 3; j++) {
            pc[j] += I * 1e-30;
            double complex L = 0;
            const double complex ka = pc[0], ke = pc[1] / pc[2];
            for (int i = 0; i < PK_NT; i++) {
                const double complex c = y0[0] * ka / (pc[2] * (ka - ke)) *
                                         (cexp(-ke * pk_t[i]) - cexp(-ka * pk_t[i])),
                                     r = c - pk_data[2 * PK_NT + i];
                L += r * r;
            }
            pc[j] = p[j];
            near(grad_at(s, OT_GRAD_PARAMS, j, 0), cimag(L) / 1e-30, 1e-5, 1e-9,
                 derivs ? "dL/dp (user J)" : "dL/dp (differences)", 0, j);
        }
        ot_solution_free(s);
        ot_ode_free(ode);
    }
}
END_TEST

START_TEST(adjoint_with_events_refusals_name_the_argument)
{
    pk_make_data();
    const ot_loss loss = pk_loss();
    ot_ode *ode = pk_ode(0, 0, 0);
    ot_solution *s = NULL;
    ck_assert_status(ot_solve_adjoint_with(ode, NULL, &loss, &s), OT_ERR_ARG, "in: NULL");
    const double y0[2] = {0, 0}, stops[2] = {0, 12};
    ot_solve_inputs in = ot_solve_inputs_make(st_vec(y0, 2), st_vec(pk_params, PK_NP),
                                              st_vec(pk_t, PK_NT));
    in.stops = st_vec(stops, 2);
    ck_assert_status(ot_solve_adjoint_with(ode, &in, NULL, &s), OT_ERR_ARG, "loss: NULL");
    ck_assert_ptr_null(s);
    ot_ode_free(ode);
    ode = ball_ode(0);
    static const int stop = OT_EVENT_STOP;
    ck_assert_status(ot_ode_set_event_actions(ode, &stop), OT_OK, NULL);
    const double by0[2] = {1, 0}, bp[2] = {9.81, 0.8}, T[1] = {0.3};
    in = ot_solve_inputs_make(st_vec(by0, 2), st_vec(bp, 2), st_vec(T, 1));
    const ot_loss hl = ot_loss_custom(height_loss, NULL);
    ck_assert_status(ot_solve_adjoint_with(ode, &in, &hl, &s), OT_ERR_ARG,
                     "event_actions: root 0 stops its lane (OT_EVENT_STOP");
    ck_assert_ptr_null(s);
    ot_ode_free(ode);
}
END_TEST

Suite *adjoint_events_suite(void)
{
    Suite *s = suite_create("adjoint_events");
    TCase *tc = ot_test_tcase(s, "through doses", 120);
    tcase_add_loop_test(tc, dosed_pk_adjoint_matches_the_closed_form, 0, 8);
    tcase_add_loop_test(tc, dosed_pk_adjoint_equals_forward_sensitivities_and_differences,
                        0, 2);
    tcase_add_test(tc, dosed_pk_adjoint_is_the_same_bits_in_every_layout);
    tcase_add_loop_test(tc, an_integral_term_crosses_the_doses, 0, 2);
    tcase_add_test(tc, a_lockstep_lane_whose_loss_fails_leaves_its_block_alone);
    tcase_add_test(tc, per_lane_times_in_a_lockstep_block_match_the_closed_form);
    tcase_add_test(tc, a_state_far_below_the_others_keeps_its_jacobian_column);
    tc = ot_test_tcase(s, "refusals", 30);
    tcase_add_test(tc, adjoint_with_events_refusals_name_the_argument);
    return s;
}

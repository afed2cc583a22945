/* Gradients through a dosing plan (ot_dose_solve_fwd_sens, _adjoint)
 * against central differences of the closed forms, in lanes mode and
 * lockstep: F, ALAG, CL and V through boluses and a RATE infusion (whose
 * duration F stretches), a modelled rate, steady states (the fixed point's
 * implicit derivative) and an out function; the adjoint against the
 * forward sensitivities' gradient of the same loss. */
#include <math.h>

#include "dose_ref.h"

static const int MODES[2] = {OT_LANES, OT_LOCKSTEP};

/* A closed form of the outputs [rows, nt] for parameters p. */
typedef void (*ref_fn)(const double *p, double *out);

/* d out / d p_j by central differences of ref. */
static void ref_dp(ref_fn ref, const double *p, int np, int j, int len, double *d)
{
    double q[8], hi[64], lo[64];
    memcpy(q, p, (size_t)np * sizeof *q);
    const double h = 1e-6 * fmax(fabs(p[j]), 1.0);
    q[j] = p[j] + h;
    ref(q, hi);
    q[j] = p[j] - h;
    ref(q, lo);
    for (int i = 0; i < len; i++)
        d[i] = (hi[i] - lo[i]) / (2 * h);
}

/* ---- 1: one compartment, boluses with F and ALAG, a RATE infusion ---------- */

static const char *CSV1 = "ID,TIME,EVID,AMT,RATE,CMT,II,ADDL\n"
                          "1,0,1,100,.,1,12,1\n1,2,0,.,.,1,.,.\n1,12,0,.,.,1,.,.\n"
                          "1,20,0,.,.,1,.,.\n1,30,1,60,20,1,.,.\n1,31,0,.,.,1,.,.\n"
                          "1,40,0,.,.,1,.,.\n";
static const double T1[6] = {2, 12, 20, 31, 40};

/* [CL, V, F, ALAG]: boluses F 100 at ALAG and 12 + ALAG; 20 from 30 + ALAG
 * (the lag delays every dose into its compartment) for F 60 / 20 */
static void ref1(const double *p, double *out)
{
    const lin m = pk1_lin(p);
    const double y0 = 0, d = p[2] * 60 / 20;
    const ref_ev ev[4] = {{p[3], 0, 0, 100 * p[2]},
                          {12 + p[3], 0, 0, 100 * p[2]},
                          {30 + p[3], 1, 0, 20},
                          {30 + p[3] + d, 1, 0, -20}};
    ref_sim(&m, &y0, ev, 4, T1, 5, 1, out);
}

/* Forward sensitivities of every parameter of ode (n states, np params)
 * for plan csv against ref's central differences. */
static void sens_vs_ref(ot_ode *o, int64_t n, const char *csv, int64_t ncmt,
                        const ot_dose_model *m, const double *p, int np, int rows, int nt,
                        ref_fn ref, double rel)
{
    ot_records *r;
    ot_dose_plan *pl = plan_csv(csv, ncmt, &r);
    const double y0[2] = {0, 0};
    ot_view vp, vy;
    ot_view_f64(&vp, p, np, 1);
    ot_view_f64(&vy, y0, n, 1);
    ot_solution *s = NULL;
    const int st = ot_dose_solve_fwd_sens(o, pl, m, vy, vp, &s);
    ck_assert_msg(st == OT_OK, "%s: %s", ot_status_name(st), ot_last_error());
    ck_assert_int_eq(ot_solution_nsens(s), np);
    double want[64], d[64];
    ref(p, want);
    for (int j = 0; j < nt; j++)
        for (int i = 0; i < rows; i++)
            ck_assert_msg(fabs(ys_at(s, i, j, 0) - want[j * rows + i]) <=
                              1e-7 * fmax(fabs(want[j * rows + i]), 1e-2),
                          "output [%d, %d] = %.15g, expected %.15g", i, j,
                          ys_at(s, i, j, 0), want[j * rows + i]);
    for (int q = 0; q < np; q++) {
        ref_dp(ref, p, np, q, rows * nt, d);
        for (int j = 0; j < nt; j++)
            for (int i = 0; i < rows; i++)
                near_ref(sens_val(s, q, i, j, 0), d[j * rows + i], rel, 1e-1);
    }
    ot_solution_free(s);
    ot_dose_plan_free(pl);
    ot_records_free(r);
}

START_TEST(sensitivities_go_through_f_lag_and_an_infusion_that_f_stretches)
{
    const double p[4] = {2, 10, 0.8, 0.5};
    const int64_t f[1] = {2}, lag[1] = {3};
    ot_dose_model m = ot_dose_model_make();
    m.f = f;
    m.lag = lag;
    for (int mi = 0; mi < 2; mi++) {
        ot_ode *o = dose_ode(1, 4, pk1_rhs, MODES[mi]);
        sens_vs_ref(o, 1, CSV1, 1, &m, p, 4, 1, 5, ref1, 1e-5);
        ot_ode_free(o);
    }
}
END_TEST

/* ---- 2: oral with F and ALAG, and a modelled rate into the central --------- */

static const char *CSV2 = "ID,TIME,EVID,AMT,RATE,CMT\n"
                          "1,0,1,100,.,1\n1,1,0,.,.,2\n1,4,0,.,.,2\n1,6,1,40,-1,2\n"
                          "1,8,0,.,.,2\n1,12,0,.,.,2\n";
static const double T2[4] = {1, 4, 8, 12};

/* [ka, CL, V, F, ALAG, R]: F 100 into the gut at ALAG; R into the central
 * from 6 for 40 / R */
static void ref2(const double *p, double *out)
{
    const lin m = oral_lin(p);
    const double y0[2] = {0, 0};
    const ref_ev ev[3] = {
        {p[4], 0, 0, 100 * p[3]}, {6, 1, 1, p[5]}, {6 + 40 / p[5], 1, 1, -p[5]}};
    ref_sim(&m, y0, ev, 3, T2, 4, 1, out);
}

START_TEST(sensitivities_go_through_an_oral_lag_and_a_modelled_rate)
{
    const double p[6] = {1.2, 3, 30, 0.7, 0.4, 10};
    const int64_t f[2] = {3, -1}, lag[2] = {4, -1}, rate[2] = {-1, 5};
    ot_dose_model m = ot_dose_model_make();
    m.f = f;
    m.lag = lag;
    m.rate = rate;
    for (int mi = 0; mi < 2; mi++) {
        ot_ode *o = dose_ode(2, 6, oral_rhs, MODES[mi]);
        sens_vs_ref(o, 2, CSV2, 2, &m, p, 6, 2, 4, ref2, 1e-5);
        ot_ode_free(o);
    }
}
END_TEST

/* ---- 3: steady state, through an out function (concentration) ------------- */

static int conc_out(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t;
    (void)u;
    for (int64_t b = 0; b < o.layout.shape[1]; b++) {
        const double *pb = ot_view_col_f64(p, p.layout.shape[1] == 1 ? 0 : b, 0);
        ot_view_mut_col_f64(o, b, 0)[0] = ot_view_col_f64(y, b, 0)[0] / pb[1];
    }
    return 0;
}

static const char *CSV3 = "ID,TIME,EVID,AMT,CMT,II,ADDL,SS\n"
                          "1,0,1,100,1,12,1,1\n1,0,0,.,1,.,.,.\n1,3,0,.,1,.,.,.\n"
                          "1,12,0,.,1,.,.,.\n1,15,0,.,1,.,.,.\n";
static const double T3[4] = {0, 3, 12, 15};

/* [CL, V, F]: concentrations from the trough F 100 Phi / (1 - Phi) at 0 */
static void ref3(const double *p, double *out)
{
    const lin m = pk1_lin(p);
    const double Phi = exp(-p[0] / p[1] * 12), trough = p[2] * 100 * Phi / (1 - Phi);
    const ref_ev ev[2] = {{0, 0, 0, 100 * p[2]}, {12, 0, 0, 100 * p[2]}};
    ref_sim(&m, &trough, ev, 2, T3, 4, 1, out);
    for (int i = 0; i < 4; i++)
        out[i] /= p[1];
}

START_TEST(sensitivities_of_a_steady_state_are_its_fixed_points_derivatives)
{
    const double p[3] = {2, 10, 0.8};
    const int64_t f[1] = {2};
    ot_dose_model m = ot_dose_model_make();
    m.f = f;
    for (int mi = 0; mi < 2; mi++) {
        ot_ode *o = dose_ode(1, 3, pk1_rhs, MODES[mi]);
        ck_assert_int_eq(ot_ode_set_out(o, 1, conc_out), OT_OK);
        sens_vs_ref(o, 1, CSV3, 1, &m, p, 3, 1, 4, ref3, 1e-5);
        ot_ode_free(o);
    }
}
END_TEST

/* ---- 4: the adjoint against the forward sensitivities ---------------------- */

START_TEST(the_adjoint_through_doses_matches_the_forward_sensitivities)
{
    static const char *csv = "ID,TIME,EVID,AMT,RATE,CMT\n"
                             "1,0,1,100,.,1\n1,1,0,.,.,2\n1,4,0,.,.,2\n1,6,1,40,-1,2\n"
                             "1,8,0,.,.,2\n1,12,0,.,.,2\n"
                             "2,0,1,100,.,1\n2,1,0,.,.,2\n2,4,0,.,.,2\n2,6,1,40,-1,2\n"
                             "2,8,0,.,.,2\n2,12,0,.,.,2\n";
    ot_records *r;
    ot_dose_plan *pl = plan_csv(csv, 2, &r);
    /* two subjects, data on both states at the 4 times */
    const double p[12] = {1.2, 3, 30, 0.7, 0.4, 10, 0.9, 2.5, 25, 0.8, 0.3, 8};
    double data[16];
    for (int i = 0; i < 16; i++)
        data[i] = 10 + 3 * sin((double)i);
    const int64_t f[2] = {3, -1}, lag[2] = {4, -1}, rate[2] = {-1, 5};
    ot_dose_model m = ot_dose_model_make();
    m.f = f;
    m.lag = lag;
    m.rate = rate;
    const double y0[2] = {0, 0};
    ot_view vp, vy;
    ot_view_f64(&vp, p, 6, 2);
    ot_view_f64(&vy, y0, 2, 1);
    ot_view vd2;
    const int64_t sh2[3] = {2, 4, 2};
    ck_assert_int_eq(
        ot_view_make(&vd2, data, OT_F64, (ot_device){OT_CPU, 0}, 3, sh2, NULL), OT_OK);
    const ot_loss loss = ot_loss_squares(vd2, ot_view_absent());
    for (int mi = 0; mi < 2; mi++) {
        ot_ode *o = dose_ode(2, 6, oral_rhs, MODES[mi]);
        ot_solution *sa = NULL, *sf = NULL;
        int st = ot_dose_solve_adjoint(o, pl, &m, vy, vp, &loss, &sa);
        ck_assert_msg(st == OT_OK, "%s: %s", ot_status_name(st), ot_last_error());
        ck_assert_int_eq(ot_dose_solve_fwd_sens(o, pl, &m, vy, vp, &sf), OT_OK);
        const ot_view g = ot_tensor_view(ot_solution_grad_tensor(sa, OT_GRAD_PARAMS));
        ck_assert_int_eq(g.layout.shape[0], 6);
        for (int64_t b = 0; b < 2; b++)
            for (int64_t j = 0; j < 6; j++) {
                double want = 0, got = 0;
                for (int64_t t = 0; t < 4; t++)
                    for (int64_t i = 0; i < 2; i++)
                        want += 2 * (ys_at(sf, i, t, b) - data[(b * 4 + t) * 2 + i]) *
                                sens_val(sf, j, i, t, b);
                ck_assert_int_eq(ot_view_get(g, j, b, 0, &got), OT_OK);
                near_ref(got, want, 1e-5, 1e-3);
            }
        ot_solution_free(sa);
        ot_solution_free(sf);
        ot_ode_free(o);
    }
    ot_dose_plan_free(pl);
    ot_records_free(r);
}
END_TEST

/* An observation at a steady state's time through the adjoint is refused,
 * naming the record. */
START_TEST(the_adjoint_refuses_an_observation_at_a_steady_states_time)
{
    ot_records *r;
    ot_dose_plan *pl = plan_csv(CSV3, 1, &r);
    const double p[3] = {2, 10, 0.8}, y0 = 0, data[4] = {1, 1, 1, 1};
    ot_view vp, vy, vd;
    ot_view_f64(&vp, p, 3, 1);
    ot_view_f64(&vy, &y0, 1, 1);
    ot_view_f64(&vd, data, 1, 4);
    const ot_loss loss = ot_loss_squares(vd, ot_view_absent());
    ot_ode *o = dose_ode(1, 3, pk1_rhs, OT_LANES);
    ot_dose_model m = ot_dose_model_make();
    ot_solution *s = NULL;
    ck_assert_int_eq(ot_dose_solve_adjoint(o, pl, &m, vy, vp, &loss, &s), OT_ERR_ARG);
    ck_assert_str_eq(ot_last_error(),
                     "ot_dose_solve_adjoint: row 1 (ID 1), SS: an observation at the "
                     "steady state's time 0 shows its trough, which the adjoint does not "
                     "take yet; observe after it, or set model->post_dose");
    m.post_dose = 1;
    ck_assert_int_eq(ot_dose_solve_adjoint(o, pl, &m, vy, vp, &loss, &s), OT_OK);
    ot_solution_free(s);
    ot_ode_free(o);
    ot_dose_plan_free(pl);
    ot_records_free(r);
}
END_TEST

Suite *dose_grad_suite(void)
{
    Suite *s = suite_create("dose_grad");
    TCase *tc = ot_test_tcase(s, "gradients", 60);
    tcase_add_test(tc, sensitivities_go_through_f_lag_and_an_infusion_that_f_stretches);
    tcase_add_test(tc, sensitivities_go_through_an_oral_lag_and_a_modelled_rate);
    tcase_add_test(tc, sensitivities_of_a_steady_state_are_its_fixed_points_derivatives);
    tcase_add_test(tc, the_adjoint_through_doses_matches_the_forward_sensitivities);
    tcase_add_test(tc, the_adjoint_refuses_an_observation_at_a_steady_states_time);
    return s;
}

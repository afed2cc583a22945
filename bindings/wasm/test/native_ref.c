/* Reference values for the wasm tests: the problems of native.test.mjs solved
 * by the native library (build/libodetensor.a), printed as JSON on stdout
 * together with their inputs, so the JS side solves exactly the same thing.
 * The callbacks are written operation for operation like the JS ones in
 * native.test.mjs, so both evaluate the same floating-point expressions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <odetensor.h>

#define NB_ROB 4
#define NB_LV 5
#define NT_ROB 12
#define NT_LV 21

/* Robertson: y' = [-k1 y0 + k2 y1 y2, k1 y0 - k2 y1 y2 - k3 y1^2, k3 y1^2]. */
static int rob_rhs(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *Y = ot_view_col_f64(y, b, 0), *P = ot_view_col_f64(p, b, 0);
        double *D = ot_view_mut_col_f64(dydt, b, 0);
        D[0] = -P[0] * Y[0] + P[1] * Y[1] * Y[2];
        D[2] = P[2] * Y[1] * Y[1];
        D[1] = -D[0] - D[2];
    }
    return 0;
}

static int rob_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *Y = ot_view_col_f64(y, b, 0), *P = ot_view_col_f64(p, b, 0);
        double *A = ot_view_mut_col_f64(J, 0, b);
        A[0] = -P[0];
        A[1] = P[0];
        A[3] = P[1] * Y[2];
        A[4] = -P[1] * Y[2] - 2 * P[2] * Y[1];
        A[5] = 2 * P[2] * Y[1];
        A[6] = P[1] * Y[1];
        A[7] = -P[1] * Y[1];
    }
    return 0;
}

/* Lotka-Volterra: x' = a x - b x y, y' = c x y - d y. */
static int lv_rhs(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *Y = ot_view_col_f64(y, b, 0), *P = ot_view_col_f64(p, b, 0);
        double *D = ot_view_mut_col_f64(dydt, b, 0);
        D[0] = P[0] * Y[0] - P[1] * Y[0] * Y[1];
        D[1] = P[2] * Y[0] * Y[1] - P[3] * Y[1];
    }
    return 0;
}

static void put_array(const char *key, const double *v, int64_t n)
{
    printf("\"%s\": [", key);
    for (int64_t i = 0; i < n; i++)
        printf(isfinite(v[i]) ? "%s%.17g" : "%snull", i ? ", " : "", v[i]);
    printf("]");
}

static void put_tensor(const char *key, const ot_tensor *t)
{
    const ot_layout *l = ot_tensor_layout(t);
    put_array(key, l->data, l->shape[0] * l->shape[1] * l->shape[2]);
}

/* The solution as JSON: per-lane status, count and statistics, ts, ys and
 * the sensitivities (compact column-major, flattened). */
static void put_solution(const char *key, ot_solution *sol)
{
    const int64_t nb = ot_solution_nbatch(sol);
    double status[64], count[64], steps[64], rhs[64];
    for (int64_t b = 0; b < nb && b < 64; b++) {
        ot_lane_stats st;
        ot_solution_lane_stats(sol, b, &st);
        status[b] = ot_solution_lane_status(sol, b);
        count[b] = (double)ot_solution_lane_count(sol, b);
        steps[b] = (double)st.steps;
        rhs[b] = (double)st.rhs_evals;
    }
    printf(",\n\"%s\": {", key);
    put_array("status", status, nb);
    printf(", ");
    put_array("count", count, nb);
    printf(", ");
    put_array("steps", steps, nb);
    printf(", ");
    put_array("rhsEvals", rhs, nb);
    printf(",\n  ");
    put_tensor("ts", ot_solution_ts(sol));
    printf(",\n  ");
    put_tensor("ys", ot_solution_ys(sol));
    printf(",\n  \"sens\": [");
    for (int64_t j = 0; j < ot_solution_nsens(sol); j++) {
        printf(j ? ", {" : "{");
        put_tensor("data", ot_solution_sens(sol, j));
        printf("}");
    }
    printf("]}");
}

static int fail(const char *what, int st)
{
    fprintf(stderr, "native_ref: %s: %s: %s\n", what, ot_status_name(st),
            ot_last_error());
    return 1;
}

/* A [rows, cols] view, or [rows] when cols is 0. */
static ot_view view2(const double *d, int64_t rows, int64_t cols)
{
    const int64_t shape[2] = {rows, cols};
    ot_view v;
    if (ot_view_make(&v, d, OT_F64, (ot_device){OT_CPU, 0}, cols ? 2 : 1, shape, NULL) !=
        OT_OK)
        return ot_view_absent();
    return v;
}

int main(void)
{
    static const double rob_atol[3] = {1e-8, 1e-14, 1e-6}, rob_y0[3] = {1, 0, 0};
    static const double lv_atol = 1e-10, lv_rtol = 1e-8, rob_rtol = 1e-4, rob_tf = 4e10;
    double rob_p[3 * NB_ROB], rob_t[NT_ROB], lv_p[4 * NB_LV], lv_y0[2 * NB_LV],
        lv_t[NT_LV];
    for (int b = 0; b < NB_ROB; b++) {
        rob_p[3 * b] = 0.04 * (1 + 0.25 * b);
        rob_p[3 * b + 1] = 1e4 / (1 + 0.5 * b);
        rob_p[3 * b + 2] = 3e7 * (1 + b);
    }
    rob_t[0] = 0;
    for (int i = 1; i < NT_ROB; i++)
        rob_t[i] = 0.4 * pow(10, i - 1);
    for (int b = 0; b < NB_LV; b++) {
        lv_p[4 * b] = 1.5 + 0.1 * b;
        lv_p[4 * b + 1] = 1.0;
        lv_p[4 * b + 2] = 1.0 - 0.05 * b;
        lv_p[4 * b + 3] = 3.0;
        lv_y0[2 * b] = 10.0 - b;
        lv_y0[2 * b + 1] = 5.0;
    }
    for (int i = 0; i < NT_LV; i++)
        lv_t[i] = i;

    ot_ode *rob = NULL, *lv = NULL;
    ot_solution *sol = NULL;
    const int64_t three = 3;
    ot_view atol_v;
    int st = ot_ode_new(&rob, 3, 3, rob_rhs, NULL);
    if (st == OT_OK)
        st = ot_ode_set_jac(rob, rob_jac);
    if (st == OT_OK)
        st = ot_ode_set_rtol(rob, rob_rtol);
    if (st == OT_OK)
        st = ot_view_make(&atol_v, rob_atol, OT_F64, (ot_device){OT_CPU, 0}, 1, &three,
                          NULL);
    if (st == OT_OK)
        st = ot_ode_set_atol_vector(rob, atol_v);
    if (st == OT_OK)
        st = ot_ode_new(&lv, 2, 4, lv_rhs, NULL);
    if (st == OT_OK)
        st = ot_ode_set_method(lv, OT_ADAMS);
    if (st == OT_OK)
        st = ot_ode_set_rtol(lv, lv_rtol);
    if (st == OT_OK)
        st = ot_ode_set_atol(lv, lv_atol);
    if (st != OT_OK)
        return fail("setup", st);

    printf("{\"robertson\": {\"nstates\": 3, \"nparams\": 3, \"rtol\": %.17g, "
           "\"finalTime\": %.17g, ",
           rob_rtol, rob_tf);
    put_array("atol", rob_atol, 3);
    printf(", ");
    put_array("y0", rob_y0, 3);
    printf(", ");
    put_array("params", rob_p, 3 * NB_ROB);
    printf(", ");
    put_array("tEval", rob_t, NT_ROB);
    const ot_view rp = view2(rob_p, 3, NB_ROB), ry = view2(rob_y0, 3, 1),
                  rt = view2(rob_t, NT_ROB, 0);
    if ((st = ot_solve_dense(rob, ry, rp, rt, &sol)) != OT_OK)
        return fail("robertson dense", st);
    put_solution("dense", sol);
    ot_solution_free(sol);
    if ((st = ot_solve(rob, ry, rp, rob_tf, &sol)) != OT_OK)
        return fail("robertson steps", st);
    put_solution("steps", sol);
    ot_solution_free(sol);
    if ((st = ot_ode_set_mode(rob, OT_LOCKSTEP)) != OT_OK ||
        (st = ot_solve_dense(rob, ry, rp, rt, &sol)) != OT_OK)
        return fail("robertson lockstep", st);
    put_solution("lockstep", sol);
    ot_solution_free(sol);

    printf("},\n\"lotkaVolterra\": {\"nstates\": 2, \"nparams\": 4, \"rtol\": %.17g, "
           "\"atol\": %.17g, ",
           lv_rtol, lv_atol);
    put_array("y0", lv_y0, 2 * NB_LV);
    printf(", ");
    put_array("params", lv_p, 4 * NB_LV);
    printf(", ");
    put_array("tEval", lv_t, NT_LV);
    const ot_view lp = view2(lv_p, 4, NB_LV), ly = view2(lv_y0, 2, NB_LV),
                  lt = view2(lv_t, NT_LV, 0);
    if ((st = ot_solve_dense(lv, ly, lp, lt, &sol)) != OT_OK)
        return fail("lotka-volterra dense", st);
    put_solution("dense", sol);
    ot_solution_free(sol);
    if ((st = ot_solve_fwd_sens(lv, ly, lp, lt, &sol)) != OT_OK)
        return fail("lotka-volterra sens", st);
    put_solution("sens", sol);
    ot_solution_free(sol);
    printf("}}\n");
    ot_ode_free(rob);
    ot_ode_free(lv);
    return 0;
}

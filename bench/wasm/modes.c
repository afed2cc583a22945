/* wasm against native, by problem and mode, for `make bench-wasm` (issue 12,
 * item 6): Robertson and Lotka-Volterra, each in lanes and lockstep mode, one
 * thread, C callbacks on ot_view. The same file is built natively
 * (build/bench/wasm_modes, against libodetensor.a) and into a wasm module
 * with the package's objects (build/bench-wasm/modes_c.mjs; bench/wasm/modes.mjs
 * runs it), so both sides run the same code on the same inputs.
 *
 *   Robertson: bench/robertson.h's problem (rates [3, nbatch] within +-10 %,
 *     BDF + dense Jacobian, rtol 1e-6, atol 1e-8, 50 times 1e-5..1e5).
 *   Lotka-Volterra: x' = a x - b x y, y' = c x y - d y, (x, y)(0) = (10, 5),
 *     (a, b, c, d) = (1.5, 1, 1, 3) each scaled by a factor in [0.9, 1.1)
 *     (the 32-bit LCG of bench/wasm/peers.mjs, seed 20240503), Adams,
 *     rtol 1e-8, atol 1e-10, 41 times 0, 0.5, .. 20.
 * Lockstep is one block of every lane (the default block), so both modes run
 * on one thread as wasm does.
 *
 * Native usage: wasm_modes rob|lv lanes|lockstep nbatch inputs.f64 [ys.f64]
 * writes params [np, nbatch] then the output times to inputs.f64 (computed
 * here once, so that wasm gets the same bits), solves the first min(100,
 * nbatch) lanes untimed (warm-up, as the wasm side does), then all lanes
 * timed, and prints one line: seconds, steps (the sum over lanes of each
 * lane's count) and the checksum of the outputs [n, nt, nbatch]; ys.f64
 * gets the outputs. wasm: mbw_solve / mbw_ys / mbw_release below. */
#include "../robertson.h"

#include <odetensor.h>
#include <string.h>

#define LV_N 2
#define LV_NP 4
#define LV_NT 41
#define WARM_LANES 100

enum { MB_ROB = 0, MB_LV = 1 };

/* Robertson: one callback for both modes, a loop over the k lanes given. */
static int rob_rhs(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        rb_rhs(ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0),
               ot_view_mut_col_f64(dydt, b, 0));
    return 0;
}

static int rob_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        rb_jac(ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0),
               ot_view_mut_col_f64(J, 0, b));
    return 0;
}

static int lv_rhs(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *Y = ot_view_col_f64(y, b, 0), *P = ot_view_col_f64(p, b, 0);
        double *D = ot_view_mut_col_f64(dydt, b, 0);
        const double xy = Y[0] * Y[1];
        D[0] = P[0] * Y[0] - P[1] * xy;
        D[1] = P[2] * xy - P[3] * Y[1];
    }
    return 0;
}

static int64_t np_of(int problem) { return problem == MB_ROB ? RB_N : LV_NP; }

static int nt_of(int problem) { return problem == MB_ROB ? RB_NT : LV_NT; }

static int64_t n_of(int problem) { return problem == MB_ROB ? RB_N : LV_N; }

/* Solves nbatch lanes of `problem` in `mode` on one thread into *out.
 * @return the steps summed over lanes, or -1 on failure. */
static long long mb_solve(int problem, int mode, int64_t nbatch, const double *params,
                          const double *times, ot_solution **out)
{
    static const double y0_rob[RB_N] = {1.0, 0.0, 0.0}, y0_lv[LV_N] = {10.0, 5.0};
    const ot_device cpu = {OT_CPU, 0};
    const int rob = problem == MB_ROB;
    const int64_t pshape[2] = {np_of(problem), nbatch}, yshape[1] = {n_of(problem)},
                  tshape[1] = {nt_of(problem)};
    ot_view y0, p, t_eval;
    int st = ot_view_make(&y0, rob ? y0_rob : y0_lv, OT_F64, cpu, 1, yshape, NULL);
    st = st ? st : ot_view_make(&p, params, OT_F64, cpu, 2, pshape, NULL);
    st = st ? st : ot_view_make(&t_eval, times, OT_F64, cpu, 1, tshape, NULL);
    ot_ode *ode = NULL;
    st = st ? st
            : ot_ode_new(&ode, n_of(problem), np_of(problem), rob ? rob_rhs : lv_rhs,
                         NULL);
    if (rob) {
        st = st ? st : ot_ode_set_jac(ode, rob_jac);
        st = st ? st : ot_ode_set_method(ode, OT_BDF);
        st = st ? st : ot_ode_set_rtol(ode, RB_RTOL);
        st = st ? st : ot_ode_set_atol(ode, RB_ATOL);
        st = st ? st : ot_ode_set_max_steps(ode, RB_MAX_STEPS);
    } else {
        st = st ? st : ot_ode_set_method(ode, OT_ADAMS);
        st = st ? st : ot_ode_set_rtol(ode, 1e-8);
        st = st ? st : ot_ode_set_atol(ode, 1e-10);
        st = st ? st : ot_ode_set_max_steps(ode, 100000);
    }
    st = st ? st : ot_ode_set_mode(ode, mode ? OT_LOCKSTEP : OT_LANES);
    st = st ? st : ot_ode_set_threads(ode, 1);
    st = st ? st : ot_solve_dense(ode, y0, p, t_eval, out);
    ot_ode_free(ode);
    if (st) {
        fprintf(stderr, "wasm_modes: %s: %s\n", ot_status_name(st), ot_last_error());
        return -1;
    }
    long long steps = 0;
    for (int64_t b = 0; b < nbatch; b++) {
        ot_lane_stats s;
        if (ot_solution_lane_stats(*out, b, &s) == OT_OK)
            steps += s.steps;
    }
    return steps;
}

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>

static ot_solution *held;

EMSCRIPTEN_KEEPALIVE void mbw_release(void)
{
    ot_solution_free(held);
    held = NULL;
}

EMSCRIPTEN_KEEPALIVE const double *mbw_ys(void)
{
    return held ? ot_tensor_layout(ot_solution_ys(held))->data : NULL;
}

/* params [np, nbatch] and times [nt] placed in wasm memory by the caller;
 * the solution is kept until mbw_release(). */
EMSCRIPTEN_KEEPALIVE double mbw_solve(int problem, int mode, int nbatch,
                                      const double *params, const double *times)
{
    mbw_release();
    return (double)mb_solve(problem, mode, nbatch, params, times, &held);
}

#else

/* The output times and params [np, nbatch] of `problem`; the caller frees
 * the params. */
static double *mb_inputs(int problem, int64_t nbatch, double *times)
{
    if (problem == MB_ROB) {
        rb_times(times);
        return rb_make_rates(nbatch);
    }
    static const double base[LV_NP] = {1.5, 1.0, 1.0, 3.0};
    for (int j = 0; j < LV_NT; j++)
        times[j] = 20.0 * j / (LV_NT - 1);
    double *p = malloc((size_t)nbatch * LV_NP * sizeof *p);
    uint32_t s = 20240503u;
    for (int64_t i = 0; p && i < LV_NP * nbatch; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = base[i % LV_NP] * (0.9 + 0.2 * (double)s / 4294967296.0);
    }
    return p;
}

int main(int argc, char **argv)
{
    const int64_t nbatch = argc > 4 ? atoll(argv[3]) : 0;
    const int problem = argc > 1 && strcmp(argv[1], "lv") == 0 ? MB_LV : MB_ROB;
    const int mode = argc > 2 && strcmp(argv[2], "lockstep") == 0;
    if (nbatch < 1 || (strcmp(argv[1], "lv") != 0 && strcmp(argv[1], "rob") != 0) ||
        (!mode && strcmp(argv[2], "lanes") != 0)) {
        fprintf(stderr,
                "usage: wasm_modes rob|lv lanes|lockstep nbatch inputs.f64 [ys.f64]\n");
        return 2;
    }
    double times[RB_NT > LV_NT ? RB_NT : LV_NT];
    double *params = mb_inputs(problem, nbatch, times);
    if (params == NULL)
        return 1;
    const size_t np = (size_t)(np_of(problem) * nbatch), nt = (size_t)nt_of(problem);
    FILE *f = fopen(argv[4], "wb");
    int bad = f == NULL || fwrite(params, sizeof *params, np, f) != np;
    bad |= f != NULL && fwrite(times, sizeof *times, nt, f) != nt;
    if (f != NULL && fclose(f) != 0)
        bad = 1;
    if (bad) {
        fprintf(stderr, "wasm_modes: cannot write %s\n", argv[4]);
        free(params);
        return 1;
    }
    ot_solution *sol = NULL;
    const long long warm = mb_solve(
        problem, mode, nbatch < WARM_LANES ? nbatch : WARM_LANES, params, times, &sol);
    ot_solution_free(sol);
    sol = NULL;
    const double t0 = rb_seconds();
    const long long steps = mb_solve(problem, mode, nbatch, params, times, &sol);
    const double secs = rb_seconds() - t0;
    int rc = 1;
    if (warm >= 0 && steps >= 0) {
        const double *ys = ot_tensor_layout(ot_solution_ys(sol))->data;
        const size_t count = (size_t)(n_of(problem) * nt_of(problem) * nbatch);
        double sum = 0.0;
        for (size_t i = 0; i < count; i++)
            sum += ys[i];
        printf(
            "native_%s_%s nbatch=%lld threads=1 seconds=%.6f steps=%lld checksum=%.17g\n",
            argv[1], argv[2], (long long)nbatch, secs, steps, sum);
        rc = 0;
        if (argc > 5) {
            FILE *o = fopen(argv[5], "wb");
            rc = o == NULL || fwrite(ys, sizeof *ys, count, o) != count;
            if (o != NULL && fclose(o) != 0)
                rc = 1;
        }
    }
    ot_solution_free(sol);
    free(params);
    return rc;
}
#endif

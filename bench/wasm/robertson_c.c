/* Robertson with C callbacks inside a wasm module, for `make bench-wasm`: the
 * wasm cost without the JS-callback cost. Linked (mk/bench-wasm.mk) with the
 * same objects as bindings/wasm/dist/odetensor.mjs (the library, SUNDIALS and
 * bindings/wasm/src/shim.c) plus bench/ot_robertson.c built with
 * -DBENCH_NO_MAIN; bench/wasm/robertson.mjs calls it.
 *
 * Two paths, each solving nbatch lanes with rates [3, nbatch] and times [50]
 * that the caller placed in wasm memory:
 *   rbw_solve_direct: ot_solve_all() of bench/ot_robertson.c, the very code
 *     the native side runs (C callbacks on ot_view).
 *   rbw_solve_shim: the JS API's path (shim.c's otw_* calls and trampolines)
 *     with C functions where index.mjs puts JS ones.
 * Both return the total steps (-1 on failure) and keep the solution until
 * rbw_release(); rbw_ys() points at its outputs [3, 50, nbatch]. */
#include "../robertson.h"

#include <emscripten/emscripten.h>
#include <odetensor.h>

/* From bindings/wasm/src/shim.c (no header: it is the JS-facing surface). */
typedef struct otw_problem otw_problem;
typedef int (*otw_eval_fn)(double t, const double *y, const double *p, double *out, int k,
                           int lane, void *user);
int otw_problem_new(otw_problem **out, int nstates, int nparams, otw_eval_fn rhs,
                    void *user);
void otw_problem_free(otw_problem *P);
int otw_set_jac(otw_problem *P, otw_eval_fn jac);
int otw_set_method(otw_problem *P, int method);
int otw_set_rtol(otw_problem *P, double v);
int otw_set_atol(otw_problem *P, double v);
int otw_set_max_steps(otw_problem *P, int v);
int otw_solve_dense(ot_solution **out, otw_problem *P, const double *y0, int y0_cols,
                    const double *params, int p_cols, const double *t_eval, int nt);

static ot_solution *held;

static long long total_steps(const ot_solution *s)
{
    long long steps = 0;
    for (int64_t b = 0; b < ot_solution_nbatch(s); b++) {
        ot_lane_stats st;
        if (ot_solution_lane_stats(s, b, &st) != OT_OK)
            return -1;
        steps += st.steps;
    }
    return steps;
}

EMSCRIPTEN_KEEPALIVE void rbw_release(void)
{
    ot_solution_free(held);
    held = NULL;
}

EMSCRIPTEN_KEEPALIVE const double *rbw_ys(void)
{
    return held ? ot_tensor_layout(ot_solution_ys(held))->data : NULL;
}

EMSCRIPTEN_KEEPALIVE double rbw_solve_direct(int nbatch, const double *rates,
                                             const double *times)
{
    rbw_release();
    return (double)ot_solve_all(nbatch, 1, rates, times, &held);
}

static int shim_rhs(double t, const double *y, const double *p, double *dydt, int k,
                    int lane, void *user)
{
    (void)t, (void)k, (void)lane, (void)user;
    rb_rhs(y, p, dydt);
    return 0;
}

static int shim_jac(double t, const double *y, const double *p, double *J, int k,
                    int lane, void *user)
{
    (void)t, (void)k, (void)lane, (void)user;
    rb_jac(y, p, J);
    return 0;
}

EMSCRIPTEN_KEEPALIVE double rbw_solve_shim(int nbatch, const double *rates,
                                           const double *times)
{
    static const double y0[RB_N] = {1.0, 0.0, 0.0};
    otw_problem *P = NULL;
    rbw_release();
    int st = otw_problem_new(&P, RB_N, RB_N, shim_rhs, NULL);
    st = st ? st : otw_set_jac(P, shim_jac);
    st = st ? st : otw_set_method(P, OT_BDF);
    st = st ? st : otw_set_rtol(P, RB_RTOL);
    st = st ? st : otw_set_atol(P, RB_ATOL);
    st = st ? st : otw_set_max_steps(P, RB_MAX_STEPS);
    st = st ? st : otw_solve_dense(&held, P, y0, 1, rates, nbatch, times, RB_NT);
    otw_problem_free(P);
    if (st != OT_OK) {
        fprintf(stderr, "rbw_solve_shim: %s: %s\n", ot_status_name(st), ot_last_error());
        return -1;
    }
    return (double)total_steps(held);
}

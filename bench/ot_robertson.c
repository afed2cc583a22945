/* Robertson on many lanes with odetensor's ot_solve_dense (lanes mode): the
 * same problem, options and outputs as bench/raw_cvode.c.
 *
 * usage: ot_robertson [nbatch [threads [dump-file]]]   (10000 lanes, 1 thread)
 * Prints elapsed seconds (problem setup and ot_solve_dense, which allocates
 * the outputs and makes the solvers), the total step count, a checksum and a
 * hash of the outputs' bytes. */
#include "robertson.h"

#include <odetensor.h>

static int rhs(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)user;
    rb_rhs(ot_view_col_f64(y, 0, 0), ot_view_col_f64(p, 0, 0),
           ot_view_mut_col_f64(dydt, 0, 0));
    return 0;
}

static int jac(double t, ot_view y, ot_view p, ot_view_mut J, void *user)
{
    (void)t, (void)user;
    rb_jac(ot_view_col_f64(y, 0, 0), ot_view_col_f64(p, 0, 0),
           ot_view_mut_col_f64(J, 0, 0));
    return 0;
}

static int fail(int st, const char *what)
{
    fprintf(stderr, "ot_robertson: %s: %s: %s\n", what, ot_status_name(st),
            ot_last_error());
    return -1;
}

/* Declared in robertson.h: not static, so that it stays a function of its own
 * that callgrind reports (bench/run.sh reads its inclusive Ir) and that
 * bench/interleave.c can call. */
long long ot_solve_all(int64_t nbatch, int threads, const double *rates,
                       const double *times, ot_solution **out)
{
    static const double y0_one[RB_N] = {1.0, 0.0, 0.0}; /* broadcast to all lanes */
    const ot_device cpu = {OT_CPU, 0};
    const int64_t pshape[2] = {RB_N, nbatch}, yshape[1] = {RB_N}, tshape[1] = {RB_NT};
    ot_view y0, params, t_eval;
    int st = ot_view_make(&y0, y0_one, OT_F64, cpu, 1, yshape, NULL);
    st = st ? st : ot_view_make(&params, rates, OT_F64, cpu, 2, pshape, NULL);
    st = st ? st : ot_view_make(&t_eval, times, OT_F64, cpu, 1, tshape, NULL);
    if (st)
        return fail(st, "views");
    ot_ode *ode = NULL;
    st = ot_ode_new(&ode, RB_N, RB_N, rhs, NULL);
    st = st ? st : ot_ode_set_jac(ode, jac);
    st = st ? st : ot_ode_set_method(ode, OT_BDF);
    /* RB_TOL_SCALE (environment, default 1) scales both tolerances: the
     * comparison with SciPy at equal accuracy (BENCHMARKS.md, issue 23). */
    const char *scale_env = getenv("RB_TOL_SCALE");
    const double scale = scale_env ? atof(scale_env) : 1.0;
    st = st ? st : ot_ode_set_rtol(ode, RB_RTOL * (scale > 0 ? scale : 1.0));
    st = st ? st : ot_ode_set_atol(ode, RB_ATOL * (scale > 0 ? scale : 1.0));
    st = st ? st : ot_ode_set_max_steps(ode, RB_MAX_STEPS);
    st = st ? st : ot_ode_set_threads(ode, threads);
    st = st ? st : ot_solve_dense(ode, y0, params, t_eval, out);
    ot_ode_free(ode);
    if (st)
        return fail(st, "solve");
    long long steps = 0;
    for (int64_t b = 0; b < nbatch; b++) {
        ot_lane_stats s;
        if (ot_solution_lane_stats(*out, b, &s) == OT_OK)
            steps += s.steps;
    }
    return steps;
}

#ifndef BENCH_NO_MAIN
int main(int argc, char **argv)
{
    const int64_t nbatch = argc > 1 ? atoll(argv[1]) : 10000;
    const int threads = argc > 2 ? atoi(argv[2]) : 1;
    if (nbatch < 1 || threads < 1) {
        fprintf(stderr, "usage: ot_robertson [nbatch [threads [dump-file]]]\n");
        return 2;
    }
    double times[RB_NT], *rates = rb_make_rates(nbatch);
    rb_times(times);
    if (rates == NULL)
        return 1;
    ot_solution *sol = NULL;
    const double t0 = rb_seconds();
    const long long steps = ot_solve_all(nbatch, threads, rates, times, &sol);
    const double secs = rb_seconds() - t0;
    int rc = 1;
    if (steps >= 0) {
        const double *ys = ot_tensor_layout(ot_solution_ys(sol))->data;
        rc = rb_report("odetensor", nbatch, threads, secs, steps, ys,
                       argc > 3 ? argv[3] : NULL);
    }
    ot_solution_free(sol);
    free(rates);
    return rc;
}
#endif

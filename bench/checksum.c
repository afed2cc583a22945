/* A refactoring guard: Robertson (bench/robertson.h) solved in every driver
 * path that a change to the solve core can touch, each result reduced to one
 * hash of its bytes (outputs, times, sensitivities, counts, roots, status,
 * statistics). A change that must not alter behaviour prints the same lines
 * before and after.
 *
 * usage: checksum [nbatch=10000]
 *   The two dense runs the benchmarks time use nbatch lanes; the others
 *   (difference-quotient Jacobian, every step, sensitivities, roots, an out
 *   function, f32 outputs, recorded and handled events, scheduled stops with
 *   per-lane output times, an ARKODE method, the adjoint) use nbatch / 10. */
#include "robertson_ot.h"

#include <string.h>

#include <odetensor.h>

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    return h;
}

static uint64_t hash_tensor(uint64_t h, const ot_tensor *t)
{
    if (t == NULL)
        return fnv(h, "none", 4);
    const ot_view v = ot_tensor_view(t);
    const size_t isz = v.layout.dtype == OT_F64 ? 8 : 4;
    return fnv(h, v.layout.data, (size_t)ot_view_numel(v) * isz);
}

/* Root when y[0] falls below 0.9 (lanes stop at different times). */
static int root(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0] - 0.9;
    return 0;
}

/* Two outputs: y[0] and y[1] + y[2]. */
static int out(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *yb = ot_view_col_f64(y, b, 0);
        double *ob = ot_view_mut_col_f64(o, b, 0);
        ob[0] = yb[0];
        ob[1] = yb[1] + yb[2];
    }
    return 0;
}

/* Events: y[0] = 0.95 is recorded, y[0] = 0.8 handled (y[2] halved). */
static int event_roots(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        double *gb = ot_view_mut_col_f64(g, b, 0);
        gb[0] = ot_view_col_f64(y, b, 0)[0] - 0.95;
        gb[1] = ot_view_col_f64(y, b, 0)[0] - 0.8;
    }
    return 0;
}

/* A handled root halves y[2]; a scheduled stop (root < 0) adds 0.05 to y[0]. */
static int handler(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                   void *u)
{
    (void)t, (void)lane, (void)p, (void)u;
    double *yb = ot_view_mut_col_f64(y, 0, 0);
    if (root < 0)
        yb[0] += 0.05;
    else
        yb[2] *= 0.5;
    return 0;
}

enum { DENSE, DENSE_DQ, STEPS, SENS, ROOTS, OUT_F32, EVENTS, STOPS, ARK, ADJOINT };
static const char *const kinds[] = {"dense",   "dense-dq", "steps", "sens",   "roots",
                                    "out-f32", "events",   "stops", "esdirk", "adjoint"};

/* Per-lane output times (lane b: the first 30 + b % 20 of t) and stops at
 * 1e-3 (every lane) and 10^(b % 4). The caller frees *tl and *sl. */
static void lane_times(int64_t nb, const double *t, double **tl, double **sl)
{
    *tl = malloc((size_t)(nb * RB_NT) * sizeof **tl);
    *sl = malloc((size_t)(nb * 2) * sizeof **sl);
    for (int64_t b = 0; b < nb; b++) {
        for (int64_t j = 0; j < RB_NT; j++)
            (*tl)[b * RB_NT + j] = j < 30 + b % 20 ? t[j] : NAN;
        (*sl)[2 * b] = 1e-3;
        (*sl)[2 * b + 1] = pow(10.0, (double)(b % 4));
    }
}

static int run(ot_mode mode, int kind, int64_t nb, const double *k, const double *t)
{
    static const double y0[3] = {1, 0, 0};
    const ot_device cpu = {OT_CPU, 0};
    const int64_t three = 3, ps[2] = {3, nb}, nt = RB_NT;
    ot_view yv, pv, tv;
    ot_ode *ode = NULL;
    ot_solution *sol = NULL;
    int st = ot_view_make(&yv, y0, OT_F64, cpu, 1, &three, NULL);
    st = st ? st : ot_view_make(&pv, k, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&tv, t, OT_F64, cpu, 1, &nt, NULL);
    st = st ? st : ot_ode_new(&ode, 3, 3, rb_ot_rhs, NULL);
    if (!st && kind != DENSE_DQ && kind != SENS)
        st = ot_ode_set_jac(ode, rb_ot_jac);
    st = st ? st : ot_ode_set_rtol(ode, RB_RTOL);
    st = st ? st : ot_ode_set_atol(ode, RB_ATOL);
    st = st ? st : ot_ode_set_max_steps(ode, 100000);
    st = st ? st : ot_ode_set_mode(ode, mode);
    st = st ? st : ot_ode_set_threads(ode, 2);
    if (!st && kind == ROOTS)
        st = ot_ode_set_roots(ode, 1, root);
    if (!st && kind == OUT_F32)
        st = ot_ode_set_out(ode, 2, out);
    if (!st && kind == OUT_F32)
        st = ot_ode_set_output_dtype(ode, OT_F32);
    if (!st && kind == EVENTS) {
        static const int actions[2] = {OT_EVENT_RECORD, OT_EVENT_HANDLE};
        st = ot_ode_set_roots(ode, 2, event_roots);
        st = st ? st : ot_ode_set_event_actions(ode, actions);
    }
    if (!st && (kind == EVENTS || kind == STOPS))
        st = ot_ode_set_event_handler(ode, handler);
    if (!st && kind == ARK)
        st = ot_ode_set_method(ode, OT_ESDIRK43);
    double *tl = NULL, *sl = NULL;
    if (st == OT_OK) {
        if (kind == STOPS) {
            lane_times(nb, t, &tl, &sl);
            const int64_t ts[2] = {RB_NT, nb}, ss[2] = {2, nb};
            ot_solve_inputs in = ot_solve_inputs_make(yv, pv, tv);
            st = ot_view_make(&in.t_eval, tl, OT_F64, cpu, 2, ts, NULL);
            st = st ? st : ot_view_make(&in.stops, sl, OT_F64, cpu, 2, ss, NULL);
            st = st ? st : ot_solve_dense_with(ode, &in, &sol);
        } else if (kind == ADJOINT) {
            /* the loss: y[0] at every output against 0.5 */
            static double data[3 * RB_NT], w[3 * RB_NT];
            const int64_t ds[2] = {3, RB_NT};
            ot_view dv, wv;
            for (int64_t j = 0; j < 3 * RB_NT; j++) {
                data[j] = j % 3 == 0 ? 0.5 : NAN;
                w[j] = 1.0;
            }
            st = ot_view_make(&dv, data, OT_F64, cpu, 2, ds, NULL);
            st = st ? st : ot_view_make(&wv, w, OT_F64, cpu, 2, ds, NULL);
            const ot_loss loss = ot_loss_squares(dv, wv);
            st = st ? st : ot_solve_adjoint(ode, yv, pv, tv, &loss, &sol);
        } else if (kind == STEPS)
            st = ot_solve(ode, yv, pv, 1e3, &sol);
        else if (kind == SENS)
            st = ot_solve_fwd_sens(ode, yv, pv, tv, &sol);
        else
            st = ot_solve_dense(ode, yv, pv, tv, &sol);
    }
    free(tl);
    free(sl);
    if (sol == NULL) {
        fprintf(stderr, "%s: %s\n", ot_status_name(st), ot_last_error());
        ot_ode_free(ode);
        return 1;
    }
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    h = hash_tensor(h, ot_solution_ts(sol));
    h = hash_tensor(h, ot_solution_ys(sol));
    for (int64_t j = 0; j < ot_solution_nsens(sol); j++)
        h = hash_tensor(h, ot_solution_sens(sol, j));
    /* only where present: the older paths' hashes stay comparable */
    for (int which = OT_EVENT_TIMES; which <= OT_EVENT_AFTER; which++)
        if (ot_solution_event_tensor(sol, which))
            h = hash_tensor(h, ot_solution_event_tensor(sol, which));
    for (int which = OT_GRAD_LOSS; which <= OT_GRAD_Y0; which++)
        if (ot_solution_grad_tensor(sol, which))
            h = hash_tensor(h, ot_solution_grad_tensor(sol, which));
    long long steps = 0;
    for (int64_t b = 0; b < nb; b++) {
        ot_lane_stats s;
        int ri = 0;
        double rt = 0;
        const int64_t c = ot_solution_lane_count(sol, b);
        const int ls = ot_solution_lane_status(sol, b);
        ot_solution_lane_stats(sol, b, &s);
        ot_solution_lane_root(sol, b, &ri, &rt);
        const char *msg = ot_solution_lane_message(sol, b);
        h = fnv(h, &c, sizeof c);
        h = fnv(h, &ls, sizeof ls);
        /* The fields before the adjoint's backward counts (issue 23), so
         * that the lines stay comparable with earlier runs; those counts
         * enter where a solve has them. */
        h = fnv(h, &s, offsetof(ot_lane_stats, adj_steps));
        if (s.adj_steps || s.adj_max_steps)
            h = fnv(h, &s.adj_steps, 2 * sizeof s.adj_steps);
        h = fnv(h, &ri, sizeof ri);
        h = fnv(h, &rt, sizeof rt);
        h = fnv(h, msg, strlen(msg));
        steps += s.steps;
    }
    printf("%-8s %-8s nbatch=%-6lld status=%-2d steps=%-9lld hash=%016llx\n",
           mode == OT_LOCKSTEP ? "lockstep" : "lanes", kinds[kind], (long long)nb, st,
           steps, (unsigned long long)h);
    ot_solution_free(sol);
    ot_ode_free(ode);
    return 0;
}

int main(int argc, char **argv)
{
    const int64_t nb = argc > 1 ? atoll(argv[1]) : 10000,
                  small = nb / 10 > 0 ? nb / 10 : 1;
    double *k = rb_make_rates(nb), t[RB_NT];
    rb_times(t);
    int bad = 0;
    for (int kind = DENSE; kind <= ADJOINT; kind++)
        for (int m = 0; m < 2; m++)
            bad |=
                run(m ? OT_LOCKSTEP : OT_LANES, kind, kind == DENSE ? nb : small, k, t);
    free(k);
    return bad;
}

/* The cost of forward sensitivities (issue 15): a plain solve, sensitivities
 * by difference quotients (CVODES' in lanes mode, central differences in
 * lockstep) and sensitivities from the user's df/dp with the Jacobian, on
 * the same lanes, in both modes, interleaved round by round (this machine's
 * speed drifts: ratios within a round are the measure).
 * Usage: sens_cost [nbatch=20000] [rounds=3] [glv_lanes=1000] [nt=40]
 * Kinds: plain, forward by DQ, forward with df/dp, and the gradient of a
 * sum of squares by the adjoint (ot_solve_adjoint) without and with df/dp.
 *   SEIR with waning immunity (n = 4, np = 4), nbatch lanes, rtol 1e-6;
 *   then generalised Lotka-Volterra with m species and the m x m
 *   interaction matrix as parameters (n = m, np = m^2 = 1, 4, 16, 64),
 *   glv_lanes lanes, lanes mode.
 * Prints per model, mode and kind: the median seconds, the ratio to the
 * plain solve, and steps per lane. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <odetensor.h>

/* ---- SEIR: p = (beta, sigma, gamma, omega) -------------------------------- */

static int seir_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0), *k = ot_view_col_f64(p, b, 0);
        double *d = ot_view_mut_col_f64(f, b, 0);
        const double inf = k[0] * x[0] * x[2];
        d[0] = -inf + k[3] * x[3];
        d[1] = inf - k[1] * x[1];
        d[2] = k[1] * x[1] - k[2] * x[2];
        d[3] = k[2] * x[2] - k[3] * x[3];
    }
    return 0;
}

static int seir_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0), *k = ot_view_col_f64(p, b, 0);
        double *a = ot_view_mut_col_f64(J, 0, b); /* the lane's 4 x 4 block */
        a[0] = -k[0] * x[2], a[1] = k[0] * x[2];
        a[5] = -k[1], a[6] = k[1];
        a[8] = -k[0] * x[0], a[9] = k[0] * x[0], a[10] = -k[2], a[11] = k[2];
        a[12] = k[3], a[15] = -k[3];
    }
    return 0;
}

static int seir_dfdp(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0);
        double *a = ot_view_mut_col_f64(d, 0, b); /* [4, 4] */
        a[0] = -x[0] * x[2], a[1] = x[0] * x[2];
        a[5] = -x[1], a[6] = x[1];
        a[10] = -x[2], a[11] = x[2];
        a[12] = x[3], a[15] = -x[3];
    }
    return 0;
}

/* ---- Generalised Lotka-Volterra: x_i' = x_i (1 + sum_j A_ij x_j) ---------- */

static int glv_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    const int64_t m = y.layout.shape[0];
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0), *A = ot_view_col_f64(p, b, 0);
        double *d = ot_view_mut_col_f64(f, b, 0);
        for (int64_t i = 0; i < m; i++) {
            double s = 1.0;
            for (int64_t j = 0; j < m; j++)
                s += A[i + m * j] * x[j];
            d[i] = x[i] * s;
        }
    }
    return 0;
}

static int glv_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    const int64_t m = y.layout.shape[0];
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0), *A = ot_view_col_f64(p, b, 0);
        for (int64_t k = 0; k < m; k++) {
            double *col = ot_view_mut_col_f64(J, k, b);
            for (int64_t i = 0; i < m; i++)
                col[i] = x[i] * A[i + m * k];
        }
        for (int64_t i = 0; i < m; i++) {
            double s = 1.0;
            for (int64_t j = 0; j < m; j++)
                s += A[i + m * j] * x[j];
            ot_view_mut_col_f64(J, i, b)[i] += s;
        }
    }
    return 0;
}

/* d f_i / d A_ij = x_i x_j: parameter i + m j touches row i only. */
static int glv_dfdp(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)p, (void)u;
    const int64_t m = y.layout.shape[0];
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0);
        for (int64_t j = 0; j < m; j++)
            for (int64_t i = 0; i < m; i++)
                ot_view_mut_col_f64(d, i + m * j, b)[i] = x[i] * x[j];
    }
    return 0;
}

/* ---- Timing --------------------------------------------------------------- */

enum { PLAIN, DQ, DFDP, ADJ_DQ, ADJ_DFDP, KINDS };
static const char *const KIND[KINDS] = {"plain", "fwd-dq", "fwd-dfdp", "adj-dq",
                                        "adj-dfdp"};

typedef struct {
    const char *name;
    int64_t n, np, nbatch;
    ot_rhs_fn rhs;
    ot_jac_fn jac;
    ot_dfdp_fn dfdp;
    const double *y0, *p, *t;
    int64_t nt;
} model;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds for one solve; *steps: mean steps per lane. Exits on failure. */
static double run(const model *md, ot_mode mode, int kind, double *steps)
{
    const ot_device cpu = {OT_CPU, 0};
    const int64_t ps[2] = {md->np, md->nbatch};
    ot_view yv, pv, tv;
    ot_ode *ode = NULL;
    int st = ot_view_make(&yv, md->y0, OT_F64, cpu, 1, &md->n, NULL);
    st = st ? st : ot_view_make(&pv, md->p, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&tv, md->t, OT_F64, cpu, 1, &md->nt, NULL);
    st = st ? st : ot_ode_new(&ode, md->n, md->np, md->rhs, NULL);
    st = st ? st : ot_ode_set_jac(ode, md->jac);
    st = st ? st : ot_ode_set_rtol(ode, 1e-6);
    st = st ? st : ot_ode_set_atol(ode, 1e-8);
    st = st ? st : ot_ode_set_mode(ode, mode);
    if (kind == DFDP || kind == ADJ_DFDP)
        st = st ? st : ot_ode_set_dfdp(ode, md->dfdp);
    /* The adjoint's loss: squares against 0.5 for every state and time. */
    double *data = malloc((size_t)(md->n * md->nt) * sizeof *data);
    for (int64_t k = 0; k < md->n * md->nt; k++)
        data[k] = 0.5;
    const int64_t ds[2] = {md->n, md->nt};
    ot_view dv;
    st = st ? st : ot_view_make(&dv, data, OT_F64, cpu, 2, ds, NULL);
    const ot_loss loss = ot_loss_squares(dv, ot_view_absent());
    ot_solution *sol = NULL;
    const double t0 = now();
    if (!st)
        st = kind == PLAIN ? ot_solve_dense(ode, yv, pv, tv, &sol)
             : kind == DQ || kind == DFDP
                 ? ot_solve_fwd_sens(ode, yv, pv, tv, &sol)
                 : ot_solve_adjoint(ode, yv, pv, tv, &loss, &sol);
    const double secs = now() - t0;
    if (st != OT_OK) {
        fprintf(stderr, "%s %s: %s: %s\n", md->name, KIND[kind], ot_status_name(st),
                ot_last_error());
        exit(1);
    }
    int64_t total = 0;
    for (int64_t b = 0; b < md->nbatch; b++) {
        ot_lane_stats s;
        ot_solution_lane_stats(sol, b, &s);
        total += s.steps;
    }
    *steps = (double)total / (double)md->nbatch;
    ot_solution_free(sol);
    ot_ode_free(ode);
    free(data);
    return secs;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Rounds of plain, DQ and df/dp one after another; medians and ratios. */
static void measure(const model *md, ot_mode mode, int rounds)
{
    double secs[KINDS][16], steps[KINDS] = {0};
    const int kinds = KINDS;
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < kinds; k++)
            secs[k][r] = run(md, mode, k, &steps[k]);
    double med[KINDS];
    for (int k = 0; k < kinds; k++) {
        qsort(secs[k], (size_t)rounds, sizeof(double), cmp);
        med[k] = secs[k][rounds / 2];
    }
    for (int k = 0; k < kinds; k++)
        printf("%-5s %-8s np=%-3lld nt=%-3lld nbatch=%-6lld %-9s %8.3f s  x%6.2f  %7.1f "
               "steps/lane\n",
               md->name, mode == OT_LANES ? "lanes" : "lockstep", (long long)md->np,
               (long long)md->nt, (long long)md->nbatch, KIND[k], med[k],
               med[k] / med[PLAIN], steps[k]);
    fflush(stdout);
}

/* splitmix64 in [0, 1): deterministic lanes. */
static double unit(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

int main(int argc, char **argv)
{
    const int64_t nb = argc > 1 ? atoll(argv[1]) : 20000;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    const int64_t ng = argc > 3 ? atoll(argv[3]) : 1000;
    int64_t nt = argc > 4 ? atoll(argv[4]) : 40; /* outputs over 200 days */
    nt = nt < 1 ? 1 : nt > 40 ? 40 : nt;
    rounds = rounds < 1 ? 1 : rounds > 15 ? 15 : rounds;
    uint64_t seed = 42;

    static const double seir_y0[4] = {0.99, 0.01, 0, 0};
    double t[40];
    for (int i = 0; i < nt; i++)
        t[i] = 200.0 * (double)(i + 1) / (double)nt;
    double *p = malloc((size_t)(4 * nb) * sizeof *p);
    for (int64_t b = 0; b < nb; b++) {
        p[4 * b] = 0.4 + 0.6 * unit(&seed);
        p[4 * b + 1] = 0.15 + 0.1 * unit(&seed);
        p[4 * b + 2] = 0.08 + 0.06 * unit(&seed);
        p[4 * b + 3] = 0.005 + 0.01 * unit(&seed);
    }
    const model seir = {"seir",    4,       4, nb, seir_rhs, seir_jac,
                        seir_dfdp, seir_y0, p, t,  nt};
    measure(&seir, OT_LANES, rounds);
    measure(&seir, OT_LOCKSTEP, rounds);
    free(p);

    for (int64_t m = 1; m <= 8; m *= 2) {
        const int64_t np = m * m;
        double *a = malloc((size_t)(np * ng) * sizeof *a), y0[8];
        for (int64_t i = 0; i < m; i++)
            y0[i] = 0.3 + 0.1 * (double)i;
        for (int64_t b = 0; b < ng; b++)
            for (int64_t j = 0; j < m; j++)
                for (int64_t i = 0; i < m; i++)
                    a[b * np + i + m * j] =
                        i == j ? -1.0 : (0.4 * unit(&seed) - 0.2) / (double)m;
        const model glv = {"glv", m, np, ng, glv_rhs, glv_jac, glv_dfdp, y0, a, t, nt};
        measure(&glv, OT_LANES, rounds);
        free(a);
    }
    return 0;
}

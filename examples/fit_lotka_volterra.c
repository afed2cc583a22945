/* Fitting a model from many starting guesses at once: Lotka-Volterra's four
 * rates from noisy synthetic data (0.5 % noise on both species at 30 times),
 * 1,000 guesses (each rate from half to twice the truth), every iteration one
 * batched adjoint call (ot_solve_adjoint: the loss and its gradient for all
 * guesses at once), then per guess a step of L-BFGS with a backtracking
 * line search on the log-rates, written out below. Reports how many starts
 * reach the true rates within 1 % and checks that at least 90 % do (a start
 * can end in another local minimum of the phase-sensitive loss; its loss
 * tells which).
 * Lockstep by default: the starts' lanes share the steps of one integrator
 * per block, forward and backward (2.5x lanes mode here, BENCHMARKS.md).
 * Usage: fit_lotka_volterra [starts=1000] [iterations=200] [lanes|lockstep] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <odetensor.h>

enum { NT = 30 };
static const double TRUTH[4] = {1.0, 0.4, 0.3, 0.8}; /* alpha, beta, delta, gamma */
static const double Y0[2] = {2.0, 1.0};

static int lv(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0), *k = ot_view_col_f64(p, b, 0);
        double *d = ot_view_mut_col_f64(f, b, 0);
        d[0] = k[0] * x[0] - k[1] * x[0] * x[1];
        d[1] = k[2] * x[0] * x[1] - k[3] * x[1];
    }
    return 0;
}

static int lv_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0), *k = ot_view_col_f64(p, b, 0);
        double *c0 = ot_view_mut_col_f64(J, 0, b), *c1 = ot_view_mut_col_f64(J, 1, b);
        c0[0] = k[0] - k[1] * x[1], c0[1] = k[2] * x[1];
        c1[0] = -k[1] * x[0], c1[1] = k[2] * x[0] - k[3];
    }
    return 0;
}

/* d f / d (alpha, beta, delta, gamma): entries not written are zero. */
static int lv_dfdp(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0);
        ot_view_mut_col_f64(d, 0, b)[0] = x[0];
        ot_view_mut_col_f64(d, 1, b)[0] = -x[0] * x[1];
        ot_view_mut_col_f64(d, 2, b)[1] = x[0] * x[1];
        ot_view_mut_col_f64(d, 3, b)[1] = -x[1];
    }
    return 0;
}

/* splitmix64 in [0, 1), and a normal deviate from two of them. */
static double unit(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

static double normal(uint64_t *s)
{
    const double u = unit(s) + 0x1p-54, v = unit(s);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* ---- L-BFGS with backtracking, one start ---------------------------------- */

enum { MEM = 5 };
typedef struct {
    double x[4], f, g[4]; /* the current point, its loss and gradient */
    double d[4], alpha;   /* the search direction and step */
    double trial[4];      /* where the next adjoint call evaluates */
    double s[MEM][4], y[MEM][4], rho[MEM];
    int nmem, done;
} lane;

static double dot(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
}

/* The L-BFGS direction from the gradient and the remembered pairs (the
 * two-loop recursion); steepest descent of length 0.1 without pairs. */
static void direction(lane *L)
{
    double q[4], a[MEM] = {0};
    for (int j = 0; j < 4; j++)
        q[j] = L->g[j];
    for (int k = L->nmem - 1; k >= 0; k--) {
        a[k] = L->rho[k] * dot(L->s[k], q);
        for (int j = 0; j < 4; j++)
            q[j] -= a[k] * L->y[k][j];
    }
    const int last = L->nmem - 1;
    const double gamma = L->nmem
                             ? dot(L->s[last], L->y[last]) / dot(L->y[last], L->y[last])
                             : 0.1 / fmax(sqrt(dot(q, q)), 1e-300);
    for (int j = 0; j < 4; j++)
        q[j] *= gamma;
    for (int k = 0; k < L->nmem; k++) {
        const double beta = L->rho[k] * dot(L->y[k], q);
        for (int j = 0; j < 4; j++)
            q[j] += (a[k] - beta) * L->s[k][j];
    }
    /* At most a factor e in any rate per step: the loss is far from
     * quadratic away from the minimum. */
    double big = 0;
    for (int j = 0; j < 4; j++)
        big = fmax(big, fabs(q[j]));
    for (int j = 0; j < 4; j++)
        L->d[j] = -q[j] / fmax(big, 1.0);
    if (dot(L->d, L->g) >= 0) { /* not downhill: forget and descend */
        L->nmem = 0;
        direction(L);
    }
}

/* The loss f and gradient g at L->trial: accept it (Armijo) and choose the
 * next direction, or halve the step. @return 1 while the start goes on. */
static int step(lane *L, double f, const double *g, int first)
{
    if (L->done)
        return 0;
    const int ok = f == f && dot(g, g) == dot(g, g);
    if (first || (ok && f <= L->f + 1e-4 * L->alpha * dot(L->g, L->d))) {
        if (!first) { /* remember the pair, the oldest out */
            if (L->nmem == MEM) {
                for (int k = 1; k < MEM; k++)
                    for (int j = 0; j < 4; j++)
                        L->s[k - 1][j] = L->s[k][j], L->y[k - 1][j] = L->y[k][j];
                for (int k = 1; k < MEM; k++)
                    L->rho[k - 1] = L->rho[k];
                L->nmem--;
            }
            double sy[4], yy[4];
            for (int j = 0; j < 4; j++)
                sy[j] = L->trial[j] - L->x[j], yy[j] = g[j] - L->g[j];
            if (dot(sy, yy) > 1e-16) {
                for (int j = 0; j < 4; j++)
                    L->s[L->nmem][j] = sy[j], L->y[L->nmem][j] = yy[j];
                L->rho[L->nmem++] = 1 / dot(sy, yy);
            }
        }
        double moved = 0;
        for (int j = 0; j < 4; j++) {
            moved = fmax(moved, fabs(L->trial[j] - L->x[j]));
            L->x[j] = L->trial[j], L->g[j] = g[j];
        }
        L->f = f;
        /* A failed start, or a minimum: the gradient or the step vanished. */
        if (!ok || sqrt(dot(g, g)) < 1e-10 || (!first && moved < 1e-9))
            return !(L->done = 1);
        direction(L);
        L->alpha = 1;
    } else if ((L->alpha *= 0.5) < 1e-12) {
        return !(L->done = 1); /* no more progress along d */
    }
    for (int j = 0; j < 4; j++)
        L->trial[j] = L->x[j] + L->alpha * L->d[j];
    return 1;
}

static int fail(const char *what, int st)
{
    fprintf(stderr, "fit_lotka_volterra: %s: %s: %s\n", what, ot_status_name(st),
            ot_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    const int64_t nb = argc > 1 ? atoll(argv[1]) : 1000;
    const int iters = argc > 2 ? atoi(argv[2]) : 200;
    const ot_mode mode =
        argc > 3 && strcmp(argv[3], "lanes") == 0 ? OT_LANES : OT_LOCKSTEP;
    if (nb < 1 || iters < 1)
        return fprintf(stderr, "usage: fit_lotka_volterra [starts] [iterations]\n"), 2;
    const ot_device cpu = {OT_CPU, 0};
    double t[NT], data[2 * NT];
    for (int i = 0; i < NT; i++)
        t[i] = 0.5 * (i + 1);
    /* The data: the true solution (rtol 1e-10) times 1 + 0.005 N(0, 1). */
    ot_ode *ode = NULL;
    ot_solution *sol = NULL;
    const int64_t two = 2, four = 4, nt = NT, dshape[2] = {2, NT};
    ot_view y0v, tv, pv, dv;
    int st = ot_view_make(&y0v, Y0, OT_F64, cpu, 1, &two, NULL);
    st = st ? st : ot_view_make(&tv, t, OT_F64, cpu, 1, &nt, NULL);
    st = st ? st : ot_view_make(&pv, TRUTH, OT_F64, cpu, 1, &four, NULL);
    st = st ? st : ot_ode_new(&ode, 2, 4, lv, NULL);
    st = st ? st : ot_ode_set_jac(ode, lv_jac);
    st = st ? st : ot_ode_set_dfdp(ode, lv_dfdp);
    st = st ? st : ot_ode_set_mode(ode, mode);
    st = st ? st : ot_ode_set_rtol(ode, 1e-10);
    st = st ? st : ot_ode_set_atol(ode, 1e-12);
    st = st ? st : ot_solve_dense(ode, y0v, pv, tv, &sol);
    if (st != OT_OK)
        return fail("the data", st);
    uint64_t seed = 2026;
    const double *ys = ot_tensor_layout(ot_solution_ys(sol))->data;
    for (int k = 0; k < 2 * NT; k++)
        data[k] = ys[k] * (1 + 0.005 * normal(&seed));
    ot_solution_free(sol);

    /* Each start: L-BFGS on the log-rates theta (dL/dtheta_j = p_j dL/dp_j)
     * with a backtracking line search, every iteration one adjoint call at
     * every start's trial point. */
    lane *ln = calloc((size_t)nb, sizeof *ln);
    double *p = malloc((size_t)(4 * nb) * sizeof *p);
    if (!ln || !p)
        return fprintf(stderr, "fit_lotka_volterra: out of memory\n"), 1;
    for (int64_t b = 0; b < nb; b++)
        for (int j = 0; j < 4; j++)
            ln[b].trial[j] = log(TRUTH[j]) + log(2.0) * (2 * unit(&seed) - 1);
    st = ot_ode_set_rtol(ode, 1e-8);
    st = st ? st : ot_ode_set_atol(ode, 1e-10);
    st = st ? st : ot_view_make(&dv, data, OT_F64, cpu, 2, dshape, NULL);
    const ot_loss sq = ot_loss_squares(dv, ot_view_absent());
    if (st != OT_OK)
        return fail("setup", st);
    int64_t failed = 0;
    int it = 0;
    int64_t *live = malloc((size_t)nb * sizeof *live), active = nb;
    if (live == NULL)
        return fprintf(stderr, "fit_lotka_volterra: out of memory\n"), 1;
    for (int64_t b = 0; b < nb; b++)
        live[b] = b;
    for (; it < iters && active > 0; it++) {
        /* The starts still going, packed into the first columns. */
        for (int64_t k = 0; k < active; k++)
            for (int j = 0; j < 4; j++)
                p[4 * k + j] = exp(ln[live[k]].trial[j]);
        const int64_t shape[2] = {4, active};
        st = ot_view_make(&pv, p, OT_F64, cpu, 2, shape, NULL);
        st = st ? st : ot_solve_adjoint(ode, y0v, pv, tv, &sq, &sol);
        if (st != OT_OK && st != OT_ERR_LANES_FAILED)
            return fail("ot_solve_adjoint", st);
        const double *g =
            ot_tensor_layout(ot_solution_grad_tensor(sol, OT_GRAD_PARAMS))->data;
        const double *l =
            ot_tensor_layout(ot_solution_grad_tensor(sol, OT_GRAD_LOSS))->data;
        failed += ot_solution_nfailed(sol);
        int64_t still = 0;
        for (int64_t k = 0; k < active; k++) {
            double gt[4];
            for (int j = 0; j < 4; j++)
                gt[j] = p[4 * k + j] * g[4 * k + j];
            if (step(&ln[live[k]], l[k], gt, it == 0))
                live[still++] = live[k];
        }
        active = still;
        ot_solution_free(sol);
    }
    free(live);
    int64_t close = 0, best = 0;
    double worst_close = 0;
    for (int64_t b = 0; b < nb; b++) {
        double err = 0;
        for (int j = 0; j < 4; j++)
            err = fmax(err, fabs(exp(ln[b].x[j]) / TRUTH[j] - 1));
        if (err < 0.01) {
            close++;
            worst_close = fmax(worst_close, err);
        }
        if (ln[b].f < ln[best].f)
            best = b;
    }
    printf(
        "fit_lotka_volterra: %lld starts, %d adjoint calls: %lld (%.1f %%) reached the "
        "true rates within 1 %% (worst of them %.2f %%); best loss %.3g; %lld failed "
        "lane solves\n",
        (long long)nb, it, (long long)close, 100.0 * (double)close / (double)nb,
        100 * worst_close, ln[best].f, (long long)failed);
    printf("  best fit: alpha %.4f beta %.4f delta %.4f gamma %.4f (truth 1, 0.4, 0.3, "
           "0.8)\n",
           exp(ln[best].x[0]), exp(ln[best].x[1]), exp(ln[best].x[2]),
           exp(ln[best].x[3]));
    const int ok = close >= (int64_t)ceil(0.9 * (double)nb);
    free(ln), free(p);
    ot_ode_free(ode);
    if (!ok)
        fprintf(stderr, "fit_lotka_volterra: fewer than 90 %% of the starts converged\n");
    return ok ? 0 : 1;
}

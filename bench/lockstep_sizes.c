/* Lockstep against lanes mode as the system grows (issue 12, item 3): a 1-D
 * Brusselator with diffusion on m grid points, n = 2m states
 *   u_i' = a + u_i^2 v_i - (b + 1) u_i + d (u_{i-1} - 2 u_i + u_{i+1})
 *   v_i' = b u_i - u_i^2 v_i           + d (v_{i-1} - 2 v_i + v_{i+1})
 * with u = a, v = b / a held at both ends, per lane (a, b, d) within +-10 %
 * of (1, 3, 0.02 m^2), BDF with the dense user Jacobian, rtol 1e-6, atol
 * 1e-8, to t = 10 with 10 outputs. Each configuration runs in turn in this
 * process and prints its seconds and lane 0's steps.
 *
 * usage: lockstep_sizes N NBATCH [BLOCK [THREADS]]   (N even)
 *   runs lanes (THREADS threads), lockstep (one block, 1 thread) and, with
 *   BLOCK, lockstep in blocks of BLOCK on THREADS threads (default 2). */
#include "robertson.h"

#include <string.h>

#include <odetensor.h>

static int64_t M; /* grid points: n = 2 M */

static int rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *yb = ot_view_col_f64(y, b, 0), *pb = ot_view_col_f64(p, b, 0);
        double *fb = ot_view_mut_col_f64(f, b, 0);
        const double a = pb[0], bb = pb[1], d = pb[2];
        for (int64_t i = 0; i < M; i++) {
            const double u = yb[2 * i], v = yb[2 * i + 1];
            const double ul = i > 0 ? yb[2 * i - 2] : a,
                         ur = i < M - 1 ? yb[2 * i + 2] : a;
            const double vl = i > 0 ? yb[2 * i - 1] : bb / a,
                         vr = i < M - 1 ? yb[2 * i + 3] : bb / a;
            fb[2 * i] = a + u * u * v - (bb + 1) * u + d * (ul - 2 * u + ur);
            fb[2 * i + 1] = bb * u - u * u * v + d * (vl - 2 * v + vr);
        }
    }
    return 0;
}

/* J [n, n] column-major per lane, arriving zeroed. */
static int jac(double t, ot_view y, ot_view p, ot_view_mut J, void *user)
{
    (void)t, (void)user;
    const int64_t n = 2 * M;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *yb = ot_view_col_f64(y, b, 0), *pb = ot_view_col_f64(p, b, 0);
        double *Jb = ot_view_mut_col_f64(J, 0, b);
        const double bb = pb[1], d = pb[2];
        for (int64_t i = 0; i < M; i++) {
            const double u = yb[2 * i], v = yb[2 * i + 1];
            const int64_t ru = 2 * i, rv = 2 * i + 1;
            Jb[ru + n * ru] = 2 * u * v - (bb + 1) - 2 * d;
            Jb[ru + n * rv] = u * u;
            Jb[rv + n * ru] = bb - 2 * u * v;
            Jb[rv + n * rv] = -u * u - 2 * d;
            if (i > 0) {
                Jb[ru + n * (ru - 2)] = d;
                Jb[rv + n * (rv - 2)] = d;
            }
            if (i < M - 1) {
                Jb[ru + n * (ru + 2)] = d;
                Jb[rv + n * (rv + 2)] = d;
            }
        }
    }
    return 0;
}

/* Seconds for one solve of nb lanes; lane 0's steps into *steps. */
static double run(ot_mode mode, int64_t block, int threads, int64_t nb, const double *p,
                  const double *y0, long long *steps)
{
    const ot_device cpu = {OT_CPU, 0};
    const int64_t n = 2 * M, ys[2] = {n, nb}, ps[2] = {3, nb}, nt = 10;
    double t[10];
    for (int i = 0; i < 10; i++)
        t[i] = i + 1.0;
    ot_view yv, pv, tv;
    ot_ode *ode = NULL;
    ot_solution *sol = NULL;
    int st = ot_view_make(&yv, y0, OT_F64, cpu, 2, ys, NULL);
    st = st ? st : ot_view_make(&pv, p, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&tv, t, OT_F64, cpu, 1, &nt, NULL);
    st = st ? st : ot_ode_new(&ode, n, 3, rhs, NULL);
    st = st ? st : ot_ode_set_jac(ode, jac);
    st = st ? st : ot_ode_set_rtol(ode, 1e-6);
    st = st ? st : ot_ode_set_atol(ode, 1e-8);
    st = st ? st : ot_ode_set_max_steps(ode, 100000);
    st = st ? st : ot_ode_set_mode(ode, mode);
    st = st ? st : ot_ode_set_threads(ode, threads);
    st = st ? st : ot_ode_set_lockstep_block(ode, block);
    const double a = rb_seconds();
    st = st ? st : ot_solve_dense(ode, yv, pv, tv, &sol);
    const double secs = rb_seconds() - a;
    ot_lane_stats s;
    memset(&s, 0, sizeof s);
    if (st == OT_OK)
        ot_solution_lane_stats(sol, 0, &s);
    else
        fprintf(stderr, "lockstep_sizes: %s: %s\n", ot_status_name(st), ot_last_error());
    *steps = s.steps;
    ot_solution_free(sol);
    ot_ode_free(ode);
    return st == OT_OK ? secs : -1;
}

int main(int argc, char **argv)
{
    const int64_t n = argc > 1 ? atoll(argv[1]) : 16,
                  nb = argc > 2 ? atoll(argv[2]) : 1000;
    const int64_t block = argc > 3 ? atoll(argv[3]) : 0;
    const int threads = argc > 4 ? atoi(argv[4]) : 2;
    if (n < 2 || n % 2 || nb < 1) {
        fprintf(stderr, "usage: lockstep_sizes N NBATCH [BLOCK [THREADS]]   (N even)\n");
        return 2;
    }
    M = n / 2;
    double *p = malloc((size_t)(3 * nb) * sizeof *p),
           *y0 = malloc((size_t)(n * nb) * sizeof *y0);
    if (!p || !y0)
        return 1;
    uint64_t seed = RB_SEED;
    for (int64_t b = 0; b < nb; b++) {
        const double base[3] = {1.0, 3.0, 0.02 * (double)(M * M)};
        for (int j = 0; j < 3; j++)
            p[3 * b + j] =
                base[j] * (0.9 + 0.2 * (double)(rb_splitmix64(&seed) >> 11) * 0x1p-53);
        for (int64_t i = 0; i < M; i++) { /* a perturbed steady state */
            const double x = (double)(i + 1) / (double)(M + 1);
            y0[n * b + 2 * i] = p[3 * b] + 0.5 * sin(6.283185307179586 * x);
            y0[n * b + 2 * i + 1] = p[3 * b + 1] / p[3 * b];
        }
    }
    long long s1 = 0, s2 = 0, s3 = 0;
    const double lanes = run(OT_LANES, 0, threads, nb, p, y0, &s1);
    const double lock = run(OT_LOCKSTEP, 0, 1, nb, p, y0, &s2);
    const double blocks =
        block > 0 ? run(OT_LOCKSTEP, block, threads, nb, p, y0, &s3) : 0;
    printf("n=%lld nbatch=%lld threads=%d lanes_s=%.4f (steps %lld) lockstep1_s=%.4f "
           "(steps %lld)"
           " blocks%lld_s=%.4f (steps %lld) lanes/lockstep1=%.2f lanes/blocks=%.2f\n",
           (long long)n, (long long)nb, threads, lanes, s1, lock, s2, (long long)block,
           blocks, s3, lanes / lock, block > 0 ? lanes / blocks : 0.0);
    free(p);
    free(y0);
    return lanes < 0 || lock < 0 || blocks < 0;
}

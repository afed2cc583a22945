/* MPI benchmarks for BENCHMARKS.md ("MPI (issue 7)"); `make bench-mpi` runs:
 *
 *   mpirun -n 2 mpi_scaling scaling [lanes] [rounds]
 *       Robertson lanes (the example's model, 6 outputs to 1e5), one thread a
 *       rank. Each round, interleaved: rank 0 alone with ot_solve_dense (no
 *       MPI), ot_mpi_solve_dense on a communicator of rank 0 alone, and on
 *       all ranks. Medians; ratios: strong-scaling speedup and overhead.
 *   mpirun -n 2 mpi_scaling imbalance [lanes] [rounds]
 *       The first half of the lanes about 10x costlier (their rhs is
 *       evaluated again and again, same result), contiguous, so a static
 *       split gives rank 0 all of them: OT_MPI_STATIC vs OT_MPI_DYNAMIC.
 *   mpirun -n 2 mpi_scaling messages
 *       Ping-pong between ranks 0 and 1 at sizes 8 B .. 64 MiB: one-way time,
 *       the latency and bandwidth the projection (bench/mpi/project.py) uses.
 * Rank 0 prints; every number is also a "key=value" line for the scripts. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <odetensor_mpi.h>

#include "../robertson_ot.h"

enum { NT = 6 };
static const double T_EVAL[NT] = {1e-5, 1e-3, 1e-1, 10, 1e3, 1e5};
static int rank, size;

/* k[3] repeats of the rhs (>= 1): a costlier lane with the same answer. */
static int rhs(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)user;
    const double *Y = ot_view_col_f64(y, 0, 0), *k = ot_view_col_f64(p, 0, 0);
    volatile double *d = ot_view_mut_col_f64(dydt, 0, 0);
    for (int r = 0; r < (int)k[3]; r++) {
        d[0] = -k[0] * Y[0] + k[1] * Y[1] * Y[2];
        d[2] = k[2] * Y[1] * Y[1];
        d[1] = -d[0] - d[2];
    }
    return 0;
}

/* params [4, lanes]: rates +-10 % from splitmix64, then the repeat count. */
static double *make_params(int64_t lanes, int64_t heavy, double reps)
{
    static const double base[3] = {0.04, 1e4, 3e7};
    double *k = malloc((size_t)lanes * 4 * sizeof *k);
    uint64_t s = 20240503;
    for (int64_t b = 0; k && b < lanes; b++) {
        for (int i = 0; i < 3; i++) {
            uint64_t z = (s += UINT64_C(0x9E3779B97F4A7C15));
            z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
            z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
            k[4 * b + i] =
                base[i] * (0.9 + 0.2 * (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53);
        }
        k[4 * b + 3] = b < heavy ? reps : 1;
    }
    return k;
}

static ot_view view(const double *d, int64_t rows, int64_t cols)
{
    ot_view v;
    const int64_t s[2] = {rows, cols};
    ot_view_make(&v, d, OT_F64, (ot_device){OT_CPU, 0}, cols < 0 ? 1 : 2, s, NULL);
    return v;
}

static ot_ode *model(void)
{
    ot_ode *o = NULL;
    ot_ode_new(&o, 3, 4, rhs, NULL);
    ot_ode_set_jac(o, rb_ot_jac); /* reads k[0..2]; k[3] is the repeat count */
    ot_ode_set_threads(o, 1);
    return o;
}

static const double Y0[3] = {1, 0, 0};

/* This process's CPU seconds: with other jobs on the machine, wall time
 * measures the share of cores we got, CPU time the work we did. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_alone, cpu_mpi; /* of the last alone() / on(), all ranks */

/* One-process solve of lanes [lo, lo + n) of k: seconds. */
static double alone(const ot_ode *o, const double *k, int64_t lo, int64_t n)
{
    ot_solution *s = NULL;
    const double t0 = MPI_Wtime(), c0 = cpu_now();
    ot_solve_dense(o, view(Y0, 3, -1), view(k + 4 * lo, 4, n), view(T_EVAL, NT, -1), &s);
    const double t = MPI_Wtime() - t0;
    cpu_alone = cpu_now() - c0;
    ot_solution_free(s);
    return t;
}

/* An MPI solve on comm, ROOT style from rank 0 (inputs scattered, outputs
 * stay distributed): the wall time seen by rank 0; *busy gets the slowest
 * and fastest rank's solving time. */
static double on(MPI_Comm comm, const ot_ode *o, const double *k, int64_t lanes, int bal,
                 double busy[2])
{
    int r;
    MPI_Comm_rank(comm, &r);
    ot_mpi_options opt = ot_mpi_options_default();
    opt.input = OT_MPI_INPUT_ROOT;
    opt.balance = bal;
    ot_solution *s = NULL;
    ot_mpi_info info;
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime(), c0 = cpu_now();
    const int st = ot_mpi_solve_dense(o, r == 0 ? view(Y0, 3, -1) : ot_view_absent(),
                                      r == 0 ? view(k, 4, lanes) : ot_view_absent(),
                                      view(T_EVAL, NT, -1), comm, &opt, &s, &info);
    const double t = MPI_Wtime() - t0, cpu = cpu_now() - c0;
    MPI_Allreduce(&cpu, &cpu_mpi, 1, MPI_DOUBLE, MPI_SUM, comm);
    if (st != OT_OK && r == 0)
        fprintf(stderr, "mpi_scaling: %s\n", ot_last_error());
    MPI_Allreduce(&info.t_solve, &busy[0], 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(&info.t_solve, &busy[1], 1, MPI_DOUBLE, MPI_MIN, comm);
    ot_solution_free(s);
    return t;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define MAXR 15

/* A barrier that sleeps instead of spinning: the rank that waits while rank
 * 0 solves alone must not take a core from it. */
static void idle_barrier(MPI_Comm comm)
{
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(comm, &r);
    while (MPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

static void scaling(int64_t lanes, int rounds)
{
    ot_ode *o = model();
    double *k = make_params(lanes, 0, 1), a[MAXR], b[MAXR], c[MAXR], busy[2];
    double ca[MAXR], cb[MAXR], cc[MAXR];
    MPI_Comm solo;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &solo);
    for (int i = 0; i < rounds; i++) {
        idle_barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            a[i] = alone(o, k, 0, lanes);
            ca[i] = cpu_alone;
            b[i] = on(solo, o, k, lanes, OT_MPI_DYNAMIC, busy);
            cb[i] = cpu_mpi;
        }
        idle_barrier(MPI_COMM_WORLD);
        c[i] = on(MPI_COMM_WORLD, o, k, lanes, OT_MPI_DYNAMIC, busy);
        cc[i] = cpu_mpi;
        if (rank == 0)
            printf("  round %d: wall (cpu) alone %.3f (%.3f) s, 1 rank %.3f (%.3f) s, "
                   "%d ranks %.3f (%.3f, all ranks) s\n",
                   i, a[i], ca[i], b[i], cb[i], size, c[i], cc[i]);
    }
    if (rank == 0) {
        double pr[MAXR];
        for (int i = 0; i < rounds; i++)
            pr[i] = b[i] / c[i];
        const double pmed = median(pr, rounds);
        const double ma = median(a, rounds), mb = median(b, rounds),
                     mc = median(c, rounds);
        printf("scaling lanes=%lld ranks=%d rounds=%d\n", (long long)lanes, size, rounds);
        printf("  per_lane_us=%.1f (one process, one thread)\n",
               1e6 * ma / (double)lanes);
        printf("  mpi1_over_alone=%.3f (1-rank MPI solve / ot_solve_dense)\n", mb / ma);
        printf("  speedup=%.3f efficiency=%.3f (1 rank / %d ranks, MPI both)\n", mb / mc,
               mb / mc / size, size);
        printf("  speedup_vs_alone=%.3f\n", ma / mc);
        printf("  cpu_ratio=%.3f (CPU of all %d ranks / CPU of 1 rank, medians)\n",
               median(cc, rounds) / median(cb, rounds), size);
        printf(
            "  paired_speedup median=%.3f min=%.3f max=%.3f (per round: 1 rank / %d)\n",
            pmed, pr[0], pr[rounds - 1], size);
    }
    if (solo != MPI_COMM_NULL)
        MPI_Comm_free(&solo);
    free(k);
    ot_ode_free(o);
}

static void imbalance(int64_t lanes, int rounds)
{
    ot_ode *o = model();
    /* Calibrate on rank 0: repeats that make a lane ~10x as costly. */
    double reps = 1;
    if (rank == 0) {
        double *k1 = make_params(64, 0, 1), *kr = make_params(64, 64, 201);
        const double t1 = alone(o, k1, 0, 64), tr = alone(o, kr, 0, 64);
        reps = floor(1 + 9 * t1 / ((tr - t1) / 200));
        free(k1);
        free(kr);
    }
    MPI_Bcast(&reps, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double *k = make_params(lanes, lanes / 2, reps), s[MAXR], d[MAXR], busy_s[2],
           busy_d[2];
    double light = 0, heavy = 0;
    if (rank == 0) {
        light = alone(o, k, lanes - 64, 64);
        heavy = alone(o, k, 0, 64);
    }
    for (int i = 0; i < rounds; i++) {
        s[i] = on(MPI_COMM_WORLD, o, k, lanes, OT_MPI_STATIC, busy_s);
        d[i] = on(MPI_COMM_WORLD, o, k, lanes, OT_MPI_DYNAMIC, busy_d);
    }
    if (rank == 0) {
        const double ms = median(s, rounds), md = median(d, rounds);
        /* The ideal: the whole work split evenly. */
        const double ideal = (light + heavy) / 128 * (double)lanes / size;
        printf("imbalance lanes=%lld ranks=%d rounds=%d reps=%.0f\n", (long long)lanes,
               size, rounds, reps);
        printf("  heavy_over_light=%.2f (per lane, measured on 64 lanes each)\n",
               heavy / light);
        printf("  static_over_dynamic=%.3f (wall time)\n", ms / md);
        printf("  static_over_ideal=%.3f dynamic_over_ideal=%.3f\n", ms / ideal,
               md / ideal);
        printf("  last_round_busy static=%.2f/%.2f dynamic=%.2f/%.2f (max/min rank, s)\n",
               busy_s[0], busy_s[1], busy_d[0], busy_d[1]);
    }
    free(k);
    ot_ode_free(o);
}

static void messages(void)
{
    if (size < 2) {
        if (rank == 0)
            printf("messages: needs 2 ranks\n");
        return;
    }
    const int64_t maxb = (int64_t)64 << 20;
    char *buf = calloc((size_t)maxb, 1);
    if (rank == 0)
        printf("messages (ping-pong, ranks 0 and 1, one-way time)\n");
    for (int64_t bytes = 8; bytes <= maxb; bytes *= 8) {
        const int reps = bytes < (1 << 20) ? 200 : 10;
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int i = 0; i < reps && rank < 2; i++) {
            if (rank == 0) {
                MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        const double one_way = (MPI_Wtime() - t0) / reps / 2;
        if (rank == 0)
            printf("  bytes=%lld one_way_us=%.2f GB_per_s=%.3f\n", (long long)bytes,
                   1e6 * one_way, (double)bytes / one_way / 1e9);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "scaling";
    const int64_t lanes = argc > 2 ? strtoll(argv[2], NULL, 10) : 4000;
    int rounds = argc > 3 ? atoi(argv[3]) : 3;
    rounds = rounds < 1 ? 1 : rounds > MAXR ? MAXR : rounds;
    if (strcmp(what, "scaling") == 0)
        scaling(lanes, rounds);
    else if (strcmp(what, "imbalance") == 0)
        imbalance(lanes, rounds);
    else if (strcmp(what, "messages") == 0)
        messages();
    else if (rank == 0)
        fprintf(stderr, "mpi_scaling: scaling | imbalance | messages\n");
    MPI_Finalize();
    return 0;
}

/* The Robertson benchmark problem, shared by bench/raw_cvode.c and
 * bench/ot_robertson.c (bench/scipy_robertson.py repeats the same arithmetic):
 *
 *   y1' = -k1 y1 + k2 y2 y3,   y3' = k3 y2^2,   y2' = -y1' - y3',
 *
 * y0 = (1, 0, 0), t0 = 0, rates (0.04, 1e4, 3e7) each scaled by a factor in
 * [0.9, 1.1) drawn from splitmix64 (seed RB_SEED, lane-major order), 50 output
 * times 10^(-5 + 10 j / 49), j = 0..49, BDF with the dense Jacobian below,
 * rtol 1e-6, atol 1e-8 (scalar), at most 500 steps per output interval.
 * Outputs are [3, 50, nbatch] column-major: y[i + 3 (j + 50 b)]. */
#ifndef BENCH_ROBERTSON_H
#define BENCH_ROBERTSON_H

/* clock_gettime: include this header first (the Makefile also defines it). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RB_N 3
#define RB_NT 50
#define RB_RTOL 1e-6
#define RB_ATOL 1e-8
#define RB_MAX_STEPS 500
#define RB_SEED UINT64_C(20240503)

/* The two solvers under test, for nbatch lanes with the given rates [3, nbatch]
 * and times [50]; each returns the total number of steps, or -1 on failure.
 * raw_cvode.c: *out is a malloc'ed [3, 50, nbatch] array (the caller frees
 * it). ot_robertson.c: *out is the ot_solution (ot_solution_free). */
struct ot_solution;
long long raw_solve_all(int64_t nbatch, const double *rates, const double *times,
                        double **out);
long long ot_solve_all(int64_t nbatch, int threads, const double *rates,
                       const double *times, struct ot_solution **out);

static inline uint64_t rb_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* params[3 b + i]: lane b's rate k_{i+1}; the caller frees the array. */
static inline double *rb_make_rates(int64_t nbatch)
{
    static const double base[RB_N] = {0.04, 1e4, 3e7};
    double *k = malloc((size_t)nbatch * RB_N * sizeof *k);
    uint64_t s = RB_SEED;
    for (int64_t b = 0; k && b < nbatch; b++)
        for (int i = 0; i < RB_N; i++) {
            const double u = (double)(rb_splitmix64(&s) >> 11) * 0x1.0p-53;
            k[RB_N * b + i] = base[i] * (0.9 + 0.2 * u);
        }
    return k;
}

static inline void rb_times(double t[RB_NT])
{
    for (int j = 0; j < RB_NT; j++)
        t[j] = pow(10.0, -5.0 + 10.0 * j / 49.0);
}

static inline void rb_rhs(const double *y, const double *k, double *dy)
{
    const double r1 = -k[0] * y[0] + k[1] * y[1] * y[2];
    const double r3 = k[2] * y[1] * y[1];
    dy[0] = r1;
    dy[1] = -r1 - r3;
    dy[2] = r3;
}

/* J[i + 3 j] = d f_i / d y_j (column-major 3 x 3). */
static inline void rb_jac(const double *y, const double *k, double *J)
{
    J[0] = -k[0];
    J[1] = k[0];
    J[2] = 0.0;
    J[3] = k[1] * y[2];
    J[4] = -k[1] * y[2] - 2.0 * k[2] * y[1];
    J[5] = 2.0 * k[2] * y[1];
    J[6] = k[1] * y[1];
    J[7] = -k[1] * y[1];
    J[8] = 0.0;
}

static inline int rb_by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n <= 16 timings (v untouched): the interleaved benchmarks'
 * rounds. */
static inline double rb_median(const double *v, int n)
{
    double s[16];
    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, rb_by_value);
    return s[n / 2];
}

static inline double rb_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Prints the sum of all outputs and an FNV-1a hash of their bytes, and writes
 * them to path when path is not NULL. @return 0, or 1 on a write error. */
static inline int rb_report(const char *who, int64_t nbatch, int threads, double secs,
                            long long steps, const double *ys, const char *path)
{
    const size_t count = (size_t)nbatch * RB_N * RB_NT;
    double sum = 0.0;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    const unsigned char *bytes = (const unsigned char *)ys;
    for (size_t i = 0; i < count; i++)
        sum += ys[i];
    for (size_t i = 0; i < count * sizeof *ys; i++)
        h = (h ^ bytes[i]) * UINT64_C(0x100000001b3);
    printf("%s nbatch=%lld threads=%d seconds=%.6f steps=%lld checksum=%.17g "
           "hash=%016llx\n",
           who, (long long)nbatch, threads, secs, steps, sum, (unsigned long long)h);
    if (path == NULL)
        return 0;
    FILE *f = fopen(path, "wb");
    const int bad = f == NULL || fwrite(ys, sizeof *ys, count, f) != count;
    if (f && fclose(f) != 0)
        return 1;
    return bad;
}

#endif

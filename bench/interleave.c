/* Raw CVODE and odetensor (1 thread) in one process, alternating in blocks of
 * lanes, so that both see the same machine: on a shared or virtual machine
 * whose speed drifts by tens of percent over seconds, separate runs cannot
 * resolve a few percent, while blocks of a tenth of a second, taken in turns
 * (raw first in even blocks, odetensor first in odd ones), can.
 *
 * usage: interleave [nbatch [block]]   (10000 lanes in blocks of 100)
 * Links raw_cvode.c and ot_robertson.c built with -DBENCH_NO_MAIN. Prints
 * both totals, their ratio and the median of the per-block ratios, and fails
 * when a block's outputs differ between the two. */
#include "robertson.h"

#include <string.h>

#include <odetensor.h>

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Solves lanes [b0, b0 + n) with both; adds the seconds to t[0] (raw) and
 * t[1] (odetensor). @return 0, or 1 on a failure or differing outputs. */
static int block(int64_t b0, int64_t n, int raw_first, const double *rates,
                 const double *times, double t[2])
{
    const double *k = rates + RB_N * b0;
    double *ys = NULL;
    ot_solution *sol = NULL;
    long long s_raw = 0, s_ot = 0;
    for (int turn = 0; turn < 2; turn++) {
        const double t0 = rb_seconds();
        if ((turn == 0) == (raw_first != 0)) {
            s_raw = raw_solve_all(n, k, times, &ys);
            t[0] += rb_seconds() - t0;
        } else {
            s_ot = ot_solve_all(n, 1, k, times, &sol);
            t[1] += rb_seconds() - t0;
        }
    }
    int bad = s_raw < 0 || s_ot < 0 || s_raw != s_ot;
    if (!bad) {
        const double *o = ot_tensor_layout(ot_solution_ys(sol))->data;
        bad = memcmp(o, ys, (size_t)n * RB_N * RB_NT * sizeof *ys) != 0;
    }
    free(ys);
    ot_solution_free(sol);
    return bad;
}

int main(int argc, char **argv)
{
    const int64_t nbatch = argc > 1 ? atoll(argv[1]) : 10000;
    const int64_t bsize = argc > 2 ? atoll(argv[2]) : 100;
    if (nbatch < 1 || bsize < 1 || bsize > nbatch) {
        fprintf(stderr, "usage: interleave [nbatch [block]]\n");
        return 2;
    }
    const int64_t nblocks = (nbatch + bsize - 1) / bsize;
    double times[RB_NT], total[2] = {0, 0}, *rates = rb_make_rates(nbatch);
    double *ratio = malloc((size_t)nblocks * sizeof *ratio);
    rb_times(times);
    if (rates == NULL || ratio == NULL)
        return 1;
    int bad = 0;
    for (int64_t i = 0; i < nblocks && !bad; i++) {
        const int64_t b0 = i * bsize, n = b0 + bsize <= nbatch ? bsize : nbatch - b0;
        double t[2] = {0, 0};
        bad = block(b0, n, (int)(i % 2 == 0), rates, times, t);
        ratio[i] = t[1] / t[0];
        total[0] += t[0];
        total[1] += t[1];
    }
    if (bad) {
        fprintf(stderr, "interleave: a block failed or its outputs differ\n");
    } else {
        qsort(ratio, (size_t)nblocks, sizeof *ratio, cmp_double);
        printf("interleave nbatch=%lld block=%lld raw_seconds=%.6f ot_seconds=%.6f "
               "ratio=%.4f median_block_ratio=%.4f q1=%.4f q3=%.4f\n",
               (long long)nbatch, (long long)bsize, total[0], total[1],
               total[1] / total[0], ratio[nblocks / 2], ratio[nblocks / 4],
               ratio[nblocks - 1 - nblocks / 4]);
    }
    free(ratio);
    free(rates);
    return bad;
}

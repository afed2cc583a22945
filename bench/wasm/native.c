/* The native side of `make bench-wasm`: Robertson with odetensor's
 * ot_solve_dense (build/libodetensor.a, lanes mode, 1 thread, C callbacks;
 * ot_solve_all from bench/ot_robertson.c), and the inputs that the wasm side
 * solves again.
 *
 * usage: wasm_native nbatch inputs.f64 [ys.f64]
 * Writes the rates [3, nbatch] and the 50 output times (bench/robertson.h's
 * generator, computed here once so that the wasm runs get the same bits) to
 * inputs.f64, solves the first min(100, nbatch) lanes once untimed (warm-up,
 * as the wasm runs do), then all lanes timed, and prints one line: seconds,
 * steps, checksum and hash of the outputs (rb_report); ys.f64 gets the
 * [3, 50, nbatch] outputs. */
#include "../robertson.h"

#include <odetensor.h>

#define WARM_LANES 100

int main(int argc, char **argv)
{
    const int64_t nbatch = argc > 2 ? atoll(argv[1]) : 0;
    if (nbatch < 1) {
        fprintf(stderr, "usage: wasm_native nbatch inputs.f64 [ys.f64]\n");
        return 2;
    }
    double times[RB_NT], *rates = rb_make_rates(nbatch);
    if (rates == NULL)
        return 1;
    rb_times(times);
    FILE *f = fopen(argv[2], "wb");
    int bad = f == NULL || fwrite(rates, sizeof *rates, (size_t)(RB_N * nbatch), f) !=
                               (size_t)(RB_N * nbatch);
    bad |= f != NULL && fwrite(times, sizeof *times, RB_NT, f) != RB_NT;
    if (f != NULL && fclose(f) != 0)
        bad = 1;
    if (bad) {
        fprintf(stderr, "wasm_native: cannot write %s\n", argv[2]);
        free(rates);
        return 1;
    }
    ot_solution *sol = NULL;
    const long long warm =
        ot_solve_all(nbatch < WARM_LANES ? nbatch : WARM_LANES, 1, rates, times, &sol);
    ot_solution_free(sol);
    sol = NULL;
    const double t0 = rb_seconds();
    const long long steps = ot_solve_all(nbatch, 1, rates, times, &sol);
    const double secs = rb_seconds() - t0;
    int rc = 1;
    if (warm >= 0 && steps >= 0)
        rc = rb_report("native", nbatch, 1, secs, steps,
                       ot_tensor_layout(ot_solution_ys(sol))->data,
                       argc > 3 ? argv[3] : NULL);
    ot_solution_free(sol);
    free(rates);
    return rc;
}

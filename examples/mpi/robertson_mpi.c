/* Robertson's stiff kinetics for a million rate sets across MPI ranks:
 *
 *   mpirun -n 2 build/examples/mpi/robertson_mpi [lanes] [gather]
 *
 * lanes defaults to 1,000,000. Each rank makes its own slice of the rate sets
 * (lane b's rates depend only on b, so no rank needs the whole table), the
 * lanes are dealt to ranks in blocks, and every rank gets back the outputs of
 * its own slice ("gather": the root gets all of them). Checks, in the exit
 * code: every lane succeeds; y1 + y2 + y3 stays 1 within 1e-6 in every lane
 * at every time; and a few lanes of each rank, solved again on that rank
 * alone with ot_solve_dense, match bit for bit. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <odetensor_mpi.h>

enum { NT = 6 };
static const double T_EVAL[NT] = {1e-5, 1e-3, 1e-1, 10, 1e3, 1e5};

static int rhs(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)user;
    const double *Y = ot_view_col_f64(y, 0, 0), *k = ot_view_col_f64(p, 0, 0);
    double *d = ot_view_mut_col_f64(dydt, 0, 0);
    d[0] = -k[0] * Y[0] + k[1] * Y[1] * Y[2];
    d[2] = k[2] * Y[1] * Y[1];
    d[1] = -d[0] - d[2];
    return 0;
}

static int jac(double t, ot_view y, ot_view p, ot_view_mut J, void *user)
{
    (void)t, (void)user;
    const double *Y = ot_view_col_f64(y, 0, 0), *k = ot_view_col_f64(p, 0, 0);
    double *c0 = ot_view_mut_col_f64(J, 0, 0), *c1 = ot_view_mut_col_f64(J, 1, 0),
           *c2 = ot_view_mut_col_f64(J, 2, 0);
    c0[0] = -k[0];
    c0[1] = k[0];
    c1[0] = k[1] * Y[2];
    c1[1] = -k[1] * Y[2] - 2 * k[2] * Y[1];
    c1[2] = 2 * k[2] * Y[1];
    c2[0] = k[1] * Y[1];
    c2[1] = -k[1] * Y[1];
    return 0;
}

/* Lane b's rates: (0.04, 1e4, 3e7), each scaled by a factor in [0.9, 1.1)
 * from a hash of (b, i), so any rank can make any lane's rates. */
static void rates(int64_t b, double k[3])
{
    static const double base[3] = {0.04, 1e4, 3e7};
    for (int i = 0; i < 3; i++) {
        uint64_t z = (uint64_t)b * 3 + (uint64_t)i + UINT64_C(0x9E3779B97F4A7C15);
        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        z ^= z >> 31;
        k[i] = base[i] * (0.9 + 0.2 * (double)(z >> 11) * 0x1.0p-53);
    }
}

static ot_view view(const double *d, int64_t rows, int64_t cols)
{
    ot_view v;
    const int64_t s[2] = {rows, cols};
    ot_view_make(&v, d, OT_F64, (ot_device){OT_CPU, 0}, cols < 0 ? 1 : 2, s, NULL);
    return v;
}

/* Mass balance over every lane and time of sol; returns the worst error. */
static double mass_error(const ot_solution *sol)
{
    const ot_view ys = ot_tensor_view(ot_solution_ys(sol));
    double worst = 0;
    for (int64_t b = 0; b < ot_solution_nbatch(sol); b++)
        for (int j = 0; j < NT; j++) {
            const double *y = ot_view_col_f64(ys, j, b);
            worst = fmax(worst, fabs(y[0] + y[1] + y[2] - 1));
        }
    return worst;
}

/* Lanes first, middle, last of sol solved again here, alone: bytes equal? */
static int64_t recheck(const ot_ode *ode, const ot_solution *sol, int64_t offset,
                       const double *y0)
{
    const int64_t nb = ot_solution_nbatch(sol), pick[3] = {0, nb / 2, nb - 1};
    int64_t bad = 0;
    for (int i = 0; i < 3 && nb > 0; i++) {
        double k[3];
        rates(offset + pick[i], k);
        ot_solution *one = NULL;
        if (ot_solve_dense(ode, view(y0, 3, -1), view(k, 3, 1), view(T_EVAL, NT, -1),
                           &one) != OT_OK) {
            bad++;
            continue;
        }
        const ot_layout *a = ot_tensor_layout(ot_solution_ys(one)),
                        *m = ot_tensor_layout(ot_solution_ys(sol));
        bad += memcmp(a->data, (const char *)m->data + pick[i] * m->strides[2],
                      3 * NT * sizeof(double)) != 0;
        ot_solution_free(one);
    }
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int64_t lanes = argc > 1 ? strtoll(argv[1], NULL, 10) : 1000000;
    const int gather = argc > 2 && strcmp(argv[2], "gather") == 0;
    /* This rank's slice of the batch, and its rates [3, nlocal]. */
    const int64_t lo = lanes * rank / size, nlocal = lanes * (rank + 1) / size - lo;
    double *k = malloc((size_t)(nlocal > 0 ? nlocal : 1) * 3 * sizeof *k);
    const double y0[3] = {1, 0, 0};
    for (int64_t b = 0; k && b < nlocal; b++)
        rates(lo + b, k + 3 * b);
    ot_ode *ode = NULL;
    int st = k ? ot_ode_new(&ode, 3, 3, rhs, NULL) : OT_ERR_NOMEM;
    if (st == OT_OK)
        st = ot_ode_set_jac(ode, jac);
    if (st == OT_OK) /* one rank per core */
        st = ot_ode_set_threads(ode, 1);
    ot_mpi_options opt = ot_mpi_options_default();
    if (gather)
        opt.output = OT_MPI_OUTPUT_GATHER;
    ot_solution *sol = NULL;
    ot_mpi_info info;
    memset(&info, 0, sizeof info);
    if (st == OT_OK)
        st = ot_mpi_solve_dense(ode, view(y0, 3, -1), view(k, 3, nlocal),
                                view(T_EVAL, NT, -1), MPI_COMM_WORLD, &opt, &sol, &info);
    if (st != OT_OK) {
        if (rank == 0)
            fprintf(stderr, "robertson_mpi: %s: %s\n", ot_status_name(st),
                    ot_last_error());
        ot_ode_free(ode);
        free(k);
        MPI_Finalize();
        return 1;
    }
    /* The checks, over the lanes this rank holds, then over all ranks. */
    double worst = sol ? mass_error(sol) : 0, worst_all = 0;
    int64_t bad = sol ? recheck(ode, sol, info.lane_offset, y0) : 0, bad_all = 0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss = ru.ru_maxrss / 1024.0, rss_max = 0, rss_sum = 0, busy[2] = {0, 0};
    MPI_Reduce(&worst, &worst_all, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &bad_all, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&rss, &rss_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&rss, &rss_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&info.t_solve, &busy[0], 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&info.t_solve, &busy[1], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    printf("rank %d: solved %lld lanes in %lld blocks (%.2f s solving), owns lanes "
           "%lld..%lld\n",
           rank, (long long)info.lanes_solved, (long long)info.blocks_solved,
           info.t_solve, (long long)info.lane_offset,
           (long long)(info.lane_offset + info.nlocal - 1));
    const int ok = worst_all < 1e-6 && bad_all == 0;
    if (rank == 0) {
        fflush(stdout);
        printf(
            "%lld Robertson lanes on %d ranks (blocks of %lld): %.2f s, %.0f lanes/s\n",
            (long long)lanes, size, (long long)info.block, info.t_total,
            (double)lanes / info.t_total);
        printf("  phases on rank 0: check %.3f s, inputs %.3f s, dealing %.2f s, "
               "outputs %.3f s\n",
               info.t_check, info.t_scatter, info.t_deal, info.t_gather);
        printf("  solving time per rank: %.2f .. %.2f s\n", busy[0], busy[1]);
        printf("  peak memory: %.0f MiB on the largest rank, %.0f MiB in all\n", rss_max,
               rss_sum);
        printf("  failed lanes: %lld; worst |y1 + y2 + y3 - 1|: %.2e; re-solved lanes "
               "differing: %lld -> %s\n",
               (long long)info.nfailed, worst_all, (long long)bad_all,
               ok ? "ok" : "FAILED");
    }
    ot_solution_free(sol);
    ot_ode_free(ode);
    free(k);
    MPI_Finalize();
    return ok ? 0 : 1;
}

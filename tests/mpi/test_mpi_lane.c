/* ot_callback_lane under the MPI layer: whichever rank solves a block, its
 * callbacks read the lanes' indices in the whole batch (make test-mpi runs
 * it at 1, 2 and 4 ranks). Lane b's params hold b, so a callback checks
 * ot_callback_lane() + column against p[0] of that column. Harness as in
 * test_mpi.c: rank 0 prints "ok <name>" or "FAIL <name>"; the exit code is
 * the number of failures. */
#include <math.h>
#include <stdio.h>

#include "odetensor_mpi.h"

#define N 61 /* lanes */
#define NT 3

static int rank, size, failures;
static int calls, bad, loss_calls, loss_bad;

static void check(ot_view p, int *ncalls, int *nbad)
{
    const int64_t lane = ot_callback_lane();
    int ok = lane >= 0;
    for (int64_t b = 0; ok && b < p.layout.shape[1]; b++) /* ~1e-8 |p| steps: adjoint */
        ok = fabs(ot_view_col_f64(p, b, 0)[0] - (double)(lane + b)) < 0.25;
    __atomic_fetch_add(ncalls, 1, __ATOMIC_RELAXED);
    if (!ok)
        __atomic_fetch_add(nbad, 1, __ATOMIC_RELAXED);
}

/* y' = -(1 + p[1]) y */
static int rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *user)
{
    (void)t, (void)user;
    check(p, &calls, &bad);
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        ot_view_mut_col_f64(f, b, 0)[0] =
            -(1 + ot_view_col_f64(p, b, 0)[1]) * ot_view_col_f64(y, b, 0)[0];
    return 0;
}

static int loss(double t, int64_t i, int64_t lane, ot_view y, ot_view p, ot_view_mut g,
                ot_view_mut dgdy, ot_view_mut dgdp, void *user)
{
    (void)t, (void)i, (void)lane, (void)dgdp, (void)user;
    check(p, &loss_calls, &loss_bad);
    const double y0 = ot_view_col_f64(y, 0, 0)[0];
    ot_view_mut_col_f64(g, 0, 0)[0] = y0 * y0;
    ot_view_mut_col_f64(dgdy, 0, 0)[0] = 2 * y0;
    return 0;
}

/* Every rank's calls saw their lanes, and some rank made calls. */
static void report(const char *name, int need_loss)
{
    int mine[4] = {calls, bad, loss_calls, loss_bad}, all[4];
    MPI_Allreduce(mine, all, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const int ok = all[0] > 0 && all[1] == 0 && (!need_loss || all[2] > 0) && all[3] == 0;
    if (rank == 0)
        printf("%s %s (%d ranks; %d rhs calls, %d wrong; %d loss calls, %d wrong)\n",
               ok ? "ok" : "FAIL", name, size, all[0], all[1], all[2], all[3]);
    fflush(stdout);
    failures += !ok;
    calls = bad = loss_calls = loss_bad = 0;
}

static ot_view mat(const double *d, int64_t rows, int64_t cols)
{
    ot_view v;
    const int64_t shape[2] = {rows, cols};
    if (ot_view_make(&v, d, OT_F64, (ot_device){OT_CPU, 0}, cols < 0 ? 1 : 2, shape,
                     NULL) != OT_OK)
        failures++;
    return v;
}

static void solve(ot_mode mode, int64_t block, int adjoint)
{
    static double p[2 * N];
    const double y0 = 1, t[NT] = {0.5, 1, 2};
    for (int b = 0; b < N; b++) {
        p[2 * b] = b;
        p[2 * b + 1] = 0.01 * b;
    }
    ot_ode *ode = NULL;
    int st = ot_ode_new(&ode, 1, 2, rhs, NULL);
    st = st ? st : ot_ode_set_mode(ode, mode);
    st = st ? st : ot_ode_set_threads(ode, 2);
    ot_mpi_options opt = ot_mpi_options_default();
    opt.input = OT_MPI_INPUT_ROOT;
    opt.block = block;
    const int root = rank == 0;
    const ot_view pv = root ? mat(p, 2, N) : ot_view_absent();
    const ot_view yv = root ? mat(&y0, 1, -1) : ot_view_absent();
    const ot_loss l = ot_loss_custom(loss, NULL);
    ot_solution *sol = NULL;
    if (st == OT_OK)
        st = adjoint ? ot_mpi_solve_adjoint(ode, yv, pv, mat(t, NT, -1), &l,
                                            MPI_COMM_WORLD, &opt, &sol, NULL)
                     : ot_mpi_solve_dense(ode, yv, pv, mat(t, NT, -1), MPI_COMM_WORLD,
                                          &opt, &sol, NULL);
    if (st != OT_OK) {
        fprintf(stderr, "rank %d: status %d: %s\n", rank, st, ot_last_error());
        bad++;
    }
    if (ot_callback_lane() != -1)
        bad++;
    ot_solution_free(sol);
    ot_ode_free(ode);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    solve(OT_LANES, 5, 0);
    report("lanes mode, blocks of 5 on any rank: callbacks read global lanes", 0);
    solve(OT_LOCKSTEP, 8, 0);
    report("lockstep, blocks of 8: callbacks read their block's global first lane", 0);
    solve(OT_LOCKSTEP, 8, 1);
    report("adjoint in lockstep blocks: the loss reads its own global lane", 1);
    solve(OT_LANES, 7, 1);
    report("adjoint in lanes mode: the loss reads its own global lane", 1);
    MPI_Finalize();
    return failures;
}

/* Doses and events across ranks (ot_mpi_solve_*_with): per-lane starts,
 * stops (for every lane, or per lane with each rank's own count) and their
 * derivatives in p travel with the lanes, and each lane's recorded events
 * come back with it, bit for bit the one-process ot_solve_*_with in lanes
 * mode and the one-process solve of the same blocks in lockstep; what is
 * refused is refused on every rank. Harness as in test_mpi.c (make test-mpi
 * runs it at 1, 2 and 4 ranks): rank 0 prints "ok <name>" or "FAIL <name>";
 * the exit code is the number of failures. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "odetensor_mpi.h"

enum { N = 37, NP = 6, NS = 3, NT = 5 };

static int rank, size, nfail_local, failures;
static double y0g[2], pg[NP * N], stops[NS * N], dp[NP * NS * N], t0s[N], data[NT * N];
static double wide[NS * (N + 1)]; /* stops with one lane too many (never read) */
static const double times[NT] = {0.75, 2, 6, 13, 20};
static const ot_device CPU = {OT_CPU, 0};

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: ", rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    nfail_local++;
}

static void report(const char *name)
{
    int all = 0;
    MPI_Allreduce(&nfail_local, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s %s (%d ranks)\n", all ? "FAIL" : "ok", name, size);
    fflush(stdout);
    failures += all != 0;
    nfail_local = 0;
}

/* Oral one compartment: (gut, central), p = (ka, CL, V, F, lag, amount);
 * a dose of F amount into the gut at each stop; out C = central / V. */
static int rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *yb = ot_view_col_f64(y, b, 0), *q = ot_view_col_f64(p, b, 0);
        double *fb = ot_view_mut_col_f64(f, b, 0);
        fb[0] = -q[0] * yb[0];
        fb[1] = q[0] * yb[0] - q[1] / q[2] * yb[1];
    }
    return 0;
}

static int conc(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        ot_view_mut_col_f64(o, b, 0)[0] =
            ot_view_col_f64(y, b, 0)[1] / ot_view_col_f64(p, b, 0)[2];
    return 0;
}

static int dose(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p, void *u)
{
    (void)t, (void)root, (void)lane, (void)u;
    const double *q = ot_view_mut_col_f64(p, 0, 0);
    ot_view_mut_col_f64(y, 0, 0)[0] += q[3] * q[5];
    return 0;
}

static ot_ode *model(int lockstep)
{
    ot_ode *o = NULL;
    if (ot_ode_new(&o, 2, NP, rhs, NULL) != OT_OK || ot_ode_set_out(o, 1, conc) ||
        ot_ode_set_event_handler(o, dose) || ot_ode_set_rtol(o, 1e-8) ||
        ot_ode_set_atol(o, 1e-10) || ot_ode_set_threads(o, 2) ||
        (lockstep &&
         (ot_ode_set_mode(o, OT_LOCKSTEP) || ot_ode_set_lockstep_block(o, 8))))
        fail("model: %s", ot_last_error());
    return o;
}

/* Lane b: its own parameters, 1 to 3 doses (NaN-padded) at tDose + lag,
 * d stop / d lag = 1, a start before its first dose, and data. */
static void make_data(void)
{
    for (int b = 0; b < N; b++) {
        const double q[NP] = {
            0.8 + 0.03 * b, 3 + 0.1 * (b % 5), 20 + b % 7, 0.7, 0.25 + 0.01 * b, 100};
        memcpy(pg + NP * b, q, sizeof q);
        const int nd = 1 + b % 3;
        for (int k = 0; k < NS; k++) {
            stops[NS * b + k] = k < nd ? 12.0 * k + q[4] : NAN;
            dp[(NS * b + k) * NP + 4] = k < nd ? 1 : 0;
        }
        t0s[b] = -0.1 * (b % 4);
        for (int i = 0; i < NT; i++)
            data[NT * b + i] = 1.0 + 0.1 * i;
    }
}

/* Rank r's lanes: uneven slices, rank 1 holds none with 3+ ranks. */
static int64_t slice_off(int r)
{
    int64_t w = 0, tot = 0;
    for (int i = 0; i < size; i++) {
        const int64_t wi = size >= 3 && i == 1 ? 0 : i + 1;
        if (i < r)
            w += wi;
        tot += wi;
    }
    return r >= size ? N : N * w / tot;
}

static ot_view view(const double *d, int ndim, int64_t s0, int64_t s1, int64_t s2)
{
    const int64_t shape[3] = {s0, s1, s2};
    ot_view v;
    if (ot_view_make(&v, d, OT_F64, CPU, ndim, shape, NULL) != OT_OK)
        fail("view: %s", ot_last_error());
    return v;
}

/* The inputs of lanes [lo, lo + k): per-lane stops (or, shared, one list
 * for every lane: lane 2's), stops_dp with them, and starts when asked. */
static ot_solve_inputs inputs(int64_t lo, int64_t k, int shared, int with_dp, int starts)
{
    ot_solve_inputs in = ot_solve_inputs_make(
        view(y0g, 1, 2, 0, 0), view(pg + NP * lo, 2, NP, k, 0), view(times, 1, NT, 0, 0));
    /* for every lane: lane 2's three doses */
    in.stops =
        shared ? view(stops + 2 * NS, 1, NS, 0, 0) : view(stops + NS * lo, 2, NS, k, 0);
    if (with_dp) /* shared 2: stops for every lane, their derivatives per lane */
        in.stops_dp = shared == 1 ? view(dp + 2 * NP * NS, 2, NP, NS, 0)
                                  : view(dp + NP * NS * lo, 3, NP, NS, k);
    if (starts)
        in.t0 = view(t0s + lo, 1, k, 0, 0);
    return in;
}

static int same_bytes(const ot_tensor *a, int64_t off_a, const ot_tensor *b,
                      int64_t off_b, int64_t count)
{
    return count == 0 || (a && b &&
                          memcmp((const double *)ot_tensor_layout(a)->data + off_a,
                                 (const double *)ot_tensor_layout(b)->data + off_b,
                                 (size_t)count * sizeof(double)) == 0);
}

/* Lane b of got is lane r of ref: status, counts, statistics, outputs,
 * sensitivities, gradients and events, bit for bit. */
static void same_lane(const ot_solution *got, int64_t b, const ot_solution *ref,
                      int64_t r)
{
    ot_lane_stats sg, sr;
    ot_solution_lane_stats(got, b, &sg);
    ot_solution_lane_stats(ref, r, &sr);
    if (ot_solution_lane_status(got, b) != ot_solution_lane_status(ref, r) ||
        ot_solution_lane_count(got, b) != ot_solution_lane_count(ref, r) ||
        memcmp(&sg, &sr, sizeof sg))
        fail("lane %lld: status, count or statistics differ", (long long)r);
    const int64_t cell = NT; /* one output row */
    if (!same_bytes(ot_solution_ys(got), b * cell, ot_solution_ys(ref), r * cell, cell))
        fail("lane %lld: ys differ", (long long)r);
    for (int64_t j = 0; j < ot_solution_nsens(ref); j++)
        if (!same_bytes(ot_solution_sens(got, j), b * cell, ot_solution_sens(ref, j),
                        r * cell, cell))
            fail("lane %lld: sens(%lld) differ", (long long)r, (long long)j);
    const int64_t rows[3] = {1, NP, 2};
    for (int w = 0; ot_solution_grad_tensor(ref, OT_GRAD_LOSS) && w < 3; w++)
        if (!same_bytes(ot_solution_grad_tensor(got, w), b * rows[w],
                        ot_solution_grad_tensor(ref, w), r * rows[w], rows[w]))
            fail("lane %lld: gradient %d differs", (long long)r, w);
    const int64_t ne = ot_solution_lane_event_count(ref, r);
    if (ne == 0 || ne != ot_solution_lane_event_count(got, b))
        fail("lane %lld: %lld events, one process %lld", (long long)r,
             (long long)ot_solution_lane_event_count(got, b), (long long)ne);
    for (int w = OT_EVENT_TIMES; w <= OT_EVENT_AFTER; w++) {
        const ot_tensor *eg = ot_solution_event_tensor(got, w),
                        *er = ot_solution_event_tensor(ref, w);
        const int64_t per = w >= OT_EVENT_BEFORE ? 2 : 1;
        const int64_t mg = eg ? ot_tensor_layout(eg)->shape[per == 2] : 0,
                      mr = ot_tensor_layout(er)->shape[per == 2];
        if (!same_bytes(eg, b * per * mg, er, r * per * mr, ne * per))
            fail("lane %lld: event tensor %d differs", (long long)r, w);
    }
}

/* entry 0 dense, 1 sensitivities, 2 adjoint; shared: one list of stops for
 * every lane; gather: outputs to the root; root_style: the root passes
 * every lane's inputs (the others t_eval and, when shared, the stops). */
static void test_doses(int entry, int lockstep, int shared, int gather, int root_style)
{
    ot_ode *o = model(lockstep);
    const int with_dp = entry > 0, starts = !lockstep;
    const ot_view dv = view(data, 3, 1, NT, N);
    const ot_loss full = ot_loss_squares(dv, ot_view_absent());
    ot_solve_inputs all = inputs(0, N, shared, with_dp, starts);
    ot_solution *ref = NULL, *sol = NULL;
    int st = entry == 0   ? ot_solve_dense_with(o, &all, &ref)
             : entry == 1 ? ot_solve_fwd_sens_with(o, &all, &ref)
                          : ot_solve_adjoint_with(o, &all, &full, &ref);
    if (st != OT_OK)
        fail("reference: %s", ot_last_error());
    const int64_t lo = root_style ? 0 : slice_off(rank),
                  k = root_style ? N : slice_off(rank + 1) - lo;
    ot_solve_inputs mine = inputs(lo, k, shared, with_dp, starts);
    ot_loss part = ot_loss_squares(view(data + NT * lo, 3, 1, NT, k), ot_view_absent());
    if (root_style && rank != 0) { /* ignored there: pass nothing */
        mine.y0 = mine.params = mine.t0 = ot_view_absent();
        if (!shared)
            mine.stops = mine.stops_dp = ot_view_absent();
        part.data = ot_view_absent();
    }
    ot_mpi_options opt = ot_mpi_options_default();
    opt.input = root_style ? OT_MPI_INPUT_ROOT : OT_MPI_INPUT_LOCAL;
    opt.block = lockstep ? 8 : 3;
    opt.output = gather ? OT_MPI_OUTPUT_GATHER : OT_MPI_OUTPUT_DISTRIBUTED;
    ot_mpi_info info;
    st = entry == 0 ? ot_mpi_solve_dense_with(o, &mine, MPI_COMM_WORLD, &opt, &sol, &info)
         : entry == 1
             ? ot_mpi_solve_fwd_sens_with(o, &mine, MPI_COMM_WORLD, &opt, &sol, &info)
             : ot_mpi_solve_adjoint_with(o, &mine, &part, MPI_COMM_WORLD, &opt, &sol,
                                         &info);
    if (st != OT_OK)
        fail("mpi: %s %s", ot_status_name(st), ot_last_error());
    else if (gather && rank != 0 && sol != NULL)
        fail("gather: a solution on rank %d", rank);
    for (int64_t b = 0; sol && b < ot_solution_nbatch(sol); b++)
        same_lane(sol, b, ref, info.lane_offset + b);
    if (sol && ot_solution_nbatch(sol) != info.nlocal)
        fail("%lld lanes, info says %lld", (long long)ot_solution_nbatch(sol),
             (long long)info.nlocal);
    ot_solution_free(sol);
    ot_solution_free(ref);
    ot_ode_free(o);
}

/* Every rank returns st with rank 0's message, which names `what`. */
static void refused(int st, int expect, const char *what)
{
    char msg[512], root_msg[512];
    snprintf(msg, sizeof msg, "%s", ot_last_error());
    memcpy(root_msg, msg, sizeof msg);
    MPI_Bcast(root_msg, sizeof root_msg, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (st != expect || strcmp(msg, root_msg) || !strstr(msg, what))
        fail("%s, \"%s\" (expected %s naming \"%s\")", ot_status_name(st), msg,
             ot_status_name(expect), what);
}

static void test_refusals(void)
{
    ot_ode *o = model(0);
    const int64_t lo = slice_off(rank), k = slice_off(rank + 1) - lo;
    ot_mpi_options opt = ot_mpi_options_default();
    ot_solution *sol = NULL;
    ot_solve_inputs in = inputs(lo, k, 0, 0, 0);
    const double per_lane_t[2 * NT] = {1, 2, 3, 4, 5, 1, 2, 3, 4, 5};
    in.t_eval = view(per_lane_t, 2, NT, 2, 0);
    refused(ot_mpi_solve_dense_with(o, &in, MPI_COMM_WORLD, &opt, &sol, NULL),
            OT_ERR_SHAPE, "t_eval: per-lane output times [nt, k] do not travel");
    in = inputs(lo, k, 0, 1, 0);
    in.stops = ot_view_absent();
    refused(ot_mpi_solve_fwd_sens_with(o, &in, MPI_COMM_WORLD, &opt, &sol, NULL),
            OT_ERR_ARG, "stops_dp: given, but there are no stops");
    in = inputs(lo, k, 0, 0, 0); /* one column too many on every rank */
    in.stops = view(wide, 2, NS, k + 1, 0);
    refused(ot_mpi_solve_dense_with(o, &in, MPI_COMM_WORLD, &opt, &sol, NULL),
            OT_ERR_SHAPE, "stops: 2 axes");
    refused(ot_mpi_solve_dense_with(o, NULL, MPI_COMM_WORLD, &opt, &sol, NULL),
            OT_ERR_ARG, "in: NULL");
    in = inputs(lo, k, 0, 0, 0);
    in.stops_dp = view(dp, 2, NP, NS, 0);
    refused(ot_mpi_solve_fwd_sens_with(o, &in, MPI_COMM_WORLD, &opt, &sol, NULL),
            OT_ERR_SHAPE,
            "stops_dp: [np, nstops] for every lane, but the stops are per lane");
    if (size > 1) {
        /* rank 0 passes stops for every lane, the others per lane */
        in = inputs(lo, k, rank == 0, 0, 0);
        refused(ot_mpi_solve_dense_with(o, &in, MPI_COMM_WORLD, &opt, &sol, NULL),
                OT_ERR_ARG, "stops for every lane go to every rank");
        /* stops for every lane that differ */
        double mine[NS] = {0.5, 12.5, 24.5 + rank};
        in = inputs(lo, k, 1, 0, 0);
        in.stops = view(mine, 1, NS, 0, 0);
        refused(ot_mpi_solve_dense_with(o, &in, MPI_COMM_WORLD, &opt, &sol, NULL),
                OT_ERR_VALUE, "differ from rank 0's");
    }
    if (sol != NULL)
        fail("a refused solve left a solution");
    ot_ode_free(o);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    make_data();
    test_doses(0, 0, 0, 0, 0);
    report("per-lane doses and starts, lanes mode: outputs and events = one process");
    test_doses(0, 0, 1, 1, 0);
    report("doses for every lane, gathered at the root: = one process");
    test_doses(1, 0, 0, 0, 0);
    report("sensitivities through per-lane doses with a lag (stops_dp): = one process");
    test_doses(2, 0, 0, 0, 0);
    report("the adjoint through per-lane doses with a lag: gradients = one process");
    test_doses(2, 0, 1, 1, 0);
    report("the adjoint through doses for every lane, gathered: = one process");
    test_doses(0, 1, 0, 0, 0);
    report("lockstep blocks of 8 with per-lane doses: = one process, same blocks");
    test_doses(2, 1, 0, 0, 0);
    report("lockstep adjoint through per-lane doses: = one process, same blocks");
    test_doses(0, 0, 0, 0, 1);
    report("the root passes every lane's doses and starts, shares distributed: = one "
           "process");
    test_doses(2, 0, 0, 1, 1);
    report("the root passes per-lane doses and data, gathers the adjoint: = one process");
    test_doses(1, 0, 2, 0, 0);
    report("doses for every lane with per-lane stops_dp: sensitivities = one process");
    test_doses(1, 0, 1, 0, 1);
    report("the root passes the lanes, every rank the shared doses: = one process");
    test_refusals();
    report(
        "refused on every rank: per-lane times, stops_dp alone, shapes, kinds, values");
    MPI_Finalize();
    return failures;
}

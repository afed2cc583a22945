/* MPI layer tests: run under mpirun at any rank count (make test-mpi: 1, 2
 * and 4). Every rank also solves the batch alone with the one-process entry
 * points; each lane an MPI solve hands back must equal its one-process twin
 * byte for byte (outputs, sensitivities, status, message, count, root,
 * statistics), and every rank must return the same status and message.
 * A plain harness (Check forks, MPI does not like that): rank 0 prints
 * "ok <name>" or "FAIL <name>"; the exit code is the number of failures. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odetensor_mpi.h"

#define N 97   /* lanes: odd, so no split is even */
#define NT 21  /* outputs at t = 0, 0.5, ..., 10 */
#define NPAR 2 /* mu, fail flag */

static int rank, size, nfail_local, failures;
static double y0g[2 * N], parg[NPAR * N], times[NT];
static float parf[NPAR * N];
static const ot_device CPU = {OT_CPU, 0};

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: ", rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    nfail_local++;
}

/* Ends a test: it passes only when it passed on every rank. */
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

/* ---- The model: Van der Pol, mu per lane; lanes with a fail flag stop
 * (rhs returns -1) after t = 3; a root at y0 = 0 in the roots variant. */
static const double *col(ot_view v, int64_t b)
{
    return ot_view_col_f64(v, v.layout.shape[1] == 1 ? 0 : b, 0);
}

static int vdp(double t, ot_view y, ot_view p, ot_view_mut dy, void *user)
{
    (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0), *q = col(p, b);
        double *d = ot_view_mut_col_f64(dy, b, 0);
        if (q[1] > 0.5 && t > 3)
            return -1;
        d[0] = x[1];
        d[1] = q[0] * (1 - x[0] * x[0]) * x[1] - x[0];
    }
    return 0;
}

/* Van der Pol with mu = 1.5 and no parameters. */
static int vdp_fixed(double t, ot_view y, ot_view p, ot_view_mut dy, void *user)
{
    (void)t, (void)p, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0);
        double *d = ot_view_mut_col_f64(dy, b, 0);
        d[0] = x[1];
        d[1] = 1.5 * (1 - x[0] * x[0]) * x[1] - x[0];
    }
    return 0;
}

static int init(ot_view p, ot_view_mut y0, void *user)
{
    (void)user;
    for (int64_t b = 0; b < y0.layout.shape[1]; b++) {
        double *d = ot_view_mut_col_f64(y0, b, 0);
        d[0] = 1.5 + 0.01 * col(p, b)[0];
        d[1] = 0;
    }
    return 0;
}

static int energy(double t, ot_view y, ot_view p, ot_view_mut o, void *user)
{
    (void)t, (void)p, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0);
        ot_view_mut_col_f64(o, b, 0)[0] = x[0] * x[0] + x[1] * x[1];
    }
    return 0;
}

static int crossing(double t, ot_view y, ot_view p, ot_view_mut g, void *user)
{
    (void)t, (void)p, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0];
    return 0;
}

typedef enum { PLAIN, ROOTS, LOCKSTEP } variant;

static ot_ode *model(variant v, int64_t nstates)
{
    ot_ode *o = NULL;
    if (ot_ode_new(&o, nstates, NPAR, vdp, NULL) != OT_OK)
        return NULL;
    ot_ode_set_threads(o, 1);
    ot_ode_set_rtol(o, 1e-7);
    if (v == ROOTS) {
        ot_ode_set_init(o, init);
        ot_ode_set_out(o, 1, energy);
        ot_ode_set_roots(o, 1, crossing);
        ot_ode_set_output_dtype(o, OT_F32);
    }
    if (v == LOCKSTEP)
        ot_ode_set_mode(o, OT_LOCKSTEP);
    return o;
}

static ot_view mat(const void *d, ot_dtype dt, int64_t rows, int64_t cols)
{
    ot_view v;
    const int64_t s[2] = {rows, cols};
    if (ot_view_make(&v, d, dt, CPU, cols < 0 ? 1 : 2, s, NULL) != OT_OK)
        fail("view: %s", ot_last_error());
    return v;
}

/* ---- Comparing a lane of two solutions ------------------------------------ */

static int same_tensor_lane(const ot_tensor *a, int64_t ba, const ot_tensor *b,
                            int64_t bb)
{
    const ot_layout *la = ot_tensor_layout(a), *lb = ot_tensor_layout(b);
    if (la->dtype != lb->dtype || la->shape[0] != lb->shape[0] ||
        la->shape[1] != lb->shape[1])
        return 0;
    const size_t len = (size_t)(la->shape[0] * la->shape[1]) * ot_dtype_size(la->dtype);
    return memcmp((const char *)la->data + ba * la->strides[2],
                  (const char *)lb->data + bb * lb->strides[2], len) == 0;
}

static void same_lane(const ot_solution *got, int64_t b, const ot_solution *ref,
                      int64_t r)
{
    ot_lane_stats sg, sr;
    int ig, ir;
    double tg, tr;
    ot_solution_lane_stats(got, b, &sg);
    ot_solution_lane_stats(ref, r, &sr);
    ot_solution_lane_root(got, b, &ig, &tg);
    ot_solution_lane_root(ref, r, &ir, &tr);
    if (ot_solution_lane_status(got, b) != ot_solution_lane_status(ref, r) ||
        strcmp(ot_solution_lane_message(got, b), ot_solution_lane_message(ref, r)) ||
        ot_solution_lane_count(got, b) != ot_solution_lane_count(ref, r) || ig != ir ||
        memcmp(&tg, &tr, sizeof tg) || memcmp(&sg, &sr, sizeof sg))
        fail("lane %lld: status, message, count, root or statistics differ from the "
             "one-process lane %lld",
             (long long)b, (long long)r);
    if (!same_tensor_lane(ot_solution_ys(got), b, ot_solution_ys(ref), r))
        fail("lane %lld: ys differ from one-process lane %lld", (long long)b,
             (long long)r);
    for (int64_t j = 0; j < ot_solution_nsens(ref); j++)
        if (!same_tensor_lane(ot_solution_sens(got, j), b, ot_solution_sens(ref, j), r))
            fail("lane %lld: sens(%lld) differ", (long long)b, (long long)j);
}

/* Every lane of got (global lane offset + b) against ref; the ts too. */
static void same_lanes(const ot_solution *got, const ot_solution *ref, int64_t offset)
{
    const ot_layout *tg = ot_tensor_layout(ot_solution_ts(got)),
                    *tr = ot_tensor_layout(ot_solution_ts(ref));
    if (tg->shape[0] != NT || memcmp(tg->data, tr->data, NT * sizeof(double)))
        fail("ts differ");
    const ot_layout *ly = ot_tensor_layout(ot_solution_ys(got));
    if (ly->shape[2] != ot_solution_nbatch(got) || ly->ndim != 3)
        fail("ys: shape[2] %lld for %lld lanes", (long long)ly->shape[2],
             (long long)ot_solution_nbatch(got));
    for (int64_t b = 0; b < ot_solution_nbatch(got); b++)
        same_lane(got, b, ref, offset + b);
}

/* Every rank returned st and the same message; expect is the wanted status. */
static void same_everywhere(int st, int expect, const char *must_contain)
{
    if (st != expect)
        fail("status %s, expected %s: %s", ot_status_name(st), ot_status_name(expect),
             ot_last_error());
    char msg[512], root_msg[512];
    snprintf(msg, sizeof msg, "%s", ot_last_error());
    memcpy(root_msg, msg, sizeof msg);
    MPI_Bcast(root_msg, sizeof root_msg, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (strcmp(msg, root_msg))
        fail("message \"%s\" differs from rank 0's \"%s\"", msg, root_msg);
    if (must_contain && !strstr(msg, must_contain))
        fail("message \"%s\" does not name \"%s\"", msg, must_contain);
}

/* ---- The slices: uneven, and rank 1 holds none when there are 3+ ranks --- */

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

static void make_data(void)
{
    for (int b = 0; b < N; b++) {
        y0g[2 * b] = 2.0 - 0.01 * (b % 7);
        y0g[2 * b + 1] = 0.1 * (b % 3);
        parg[NPAR * b] = 0.2 + 12.0 * fmod(b * 0.6180339887, 1.0);
        parg[NPAR * b + 1] = b % 13 == 5 ? 1.0 : 0.0;
        for (int i = 0; i < NPAR; i++)
            parf[NPAR * b + i] = (float)parg[NPAR * b + i];
    }
    /* f32 params are what the ROOT-style test passes: its reference uses
     * their exact f64 widening. */
    for (int i = 0; i < NT; i++)
        times[i] = 0.5 * i;
}

/* The one-process reference over the whole batch, with its status/message. */
static ot_solution *reference(const ot_ode *o, ot_view y0, ot_view p, int sens, int *st,
                              char *msg)
{
    ot_solution *ref = NULL;
    const ot_view t = mat(times, OT_F64, NT, -1);
    *st = sens ? ot_solve_fwd_sens(o, y0, p, t, &ref) : ot_solve_dense(o, y0, p, t, &ref);
    snprintf(msg, 512, "%s", ot_last_error());
    if (ref == NULL)
        fail("reference: %s", msg);
    return ref;
}

/* sens: 0 dense, 1 forward sensitivities, 2 also to the initial values;
 * method: the integrator (ARKODE's too). */
static void test_local_distributed(int sens, ot_mpi_balance bal, int64_t block,
                                   ot_method method)
{
    ot_ode *o = model(PLAIN, 2);
    if (ot_ode_set_method(o, method) != OT_OK)
        fail("ot_ode_set_method: %s", ot_last_error());
    if (sens == 2 && ot_ode_set_sens_initial(o, 1) != OT_OK)
        fail("ot_ode_set_sens_initial: %s", ot_last_error());
    int rst;
    char rmsg[512];
    ot_solution *ref = reference(o, mat(y0g, OT_F64, 2, N), mat(parg, OT_F64, NPAR, N),
                                 sens, &rst, rmsg);
    const int64_t off = slice_off(rank), nl = slice_off(rank + 1) - off;
    ot_mpi_options opt = ot_mpi_options_default();
    opt.balance = bal;
    opt.block = block;
    ot_solution *sol = NULL;
    ot_mpi_info info;
    const ot_view y0 = mat(y0g + 2 * off, OT_F64, 2, nl),
                  p = mat(parg + NPAR * off, OT_F64, NPAR, nl),
                  t = mat(times, OT_F64, NT, -1);
    const int st =
        sens ? ot_mpi_solve_fwd_sens(o, y0, p, t, MPI_COMM_WORLD, &opt, &sol, &info)
             : ot_mpi_solve_dense(o, y0, p, t, MPI_COMM_WORLD, &opt, &sol, &info);
    same_everywhere(st, rst, NULL);
    if (strcmp(ot_last_error(), rmsg))
        fail("batch message \"%s\", one process \"%s\"", ot_last_error(), rmsg);
    if (sol == NULL || ot_solution_nbatch(sol) != nl || info.lane_offset != off ||
        info.nbatch != N || info.nfailed != ot_solution_nfailed(ref))
        fail("solution: %lld lanes at %lld, expected %lld at %lld",
             (long long)ot_solution_nbatch(sol), (long long)info.lane_offset,
             (long long)nl, (long long)off);
    else
        same_lanes(sol, ref, off);
    int64_t solved = 0;
    MPI_Allreduce(&info.lanes_solved, &solved, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (solved != N)
        fail("ranks solved %lld lanes in all, not %d", (long long)solved, N);
    ot_solution_free(sol);
    ot_solution_free(ref);
    ot_ode_free(o);
}

/* Sensitivities to y0 alone, of a problem without parameters (issue 23:
 * the MPI layer refused them, which one process allows): = one process. */
static void test_sens_initial_without_params(void)
{
    ot_ode *o = NULL;
    if (ot_ode_new(&o, 2, 0, vdp_fixed, NULL) != OT_OK || ot_ode_set_threads(o, 1) ||
        ot_ode_set_sens_initial(o, 1) != OT_OK)
        fail("problem: %s", ot_last_error());
    const ot_view none = ot_view_absent(), t = mat(times, OT_F64, NT, -1);
    ot_solution *ref = NULL, *sol = NULL;
    if (ot_solve_fwd_sens(o, mat(y0g, OT_F64, 2, N), none, t, &ref) != OT_OK)
        fail("reference: %s", ot_last_error());
    const int64_t off = slice_off(rank), nl = slice_off(rank + 1) - off;
    ot_mpi_options opt = ot_mpi_options_default();
    ot_mpi_info info;
    const int st = ot_mpi_solve_fwd_sens(o, mat(y0g + 2 * off, OT_F64, 2, nl), none, t,
                                         MPI_COMM_WORLD, &opt, &sol, &info);
    same_everywhere(st, OT_OK, NULL);
    if (sol == NULL || ot_solution_nsens(sol) != 2)
        fail("solution: %lld sensitivities, expected 2 (d y / d y0)",
             sol ? (long long)ot_solution_nsens(sol) : -1LL);
    else if (ref)
        same_lanes(sol, ref, off);
    ot_solution_free(sol);
    ot_solution_free(ref);
    ot_ode_free(o);
}

/* ROOT style: the root alone passes inputs (y0 broadcast, f32 params). */
static void test_root(ot_mpi_output output, variant v)
{
    ot_ode *o = model(v, 2);
    int rst;
    char rmsg[512];
    const ot_view y0 = v == ROOTS ? ot_view_absent() : mat(y0g, OT_F64, 2, -1),
                  p = mat(parf, OT_F32, NPAR, N);
    ot_solution *ref = reference(o, y0, p, 0, &rst, rmsg);
    ot_mpi_options opt = ot_mpi_options_default();
    opt.input = OT_MPI_INPUT_ROOT;
    opt.output = output;
    opt.root = size - 1;
    ot_solution *sol = (ot_solution *)&opt; /* must become NULL off the root */
    ot_mpi_info info;
    const int me = rank == opt.root;
    const int st =
        ot_mpi_solve_dense(o, me ? y0 : ot_view_absent(), me ? p : ot_view_absent(),
                           mat(times, OT_F64, NT, -1), MPI_COMM_WORLD, &opt, &sol, &info);
    same_everywhere(st, rst, NULL);
    if (strcmp(ot_last_error(), rmsg))
        fail("batch message \"%s\", one process \"%s\"", ot_last_error(), rmsg);
    if (output == OT_MPI_OUTPUT_GATHER && !me) {
        if (sol != NULL)
            fail("gather: a solution off the root");
        sol = NULL;
    } else {
        const int64_t off = output == OT_MPI_OUTPUT_GATHER ? 0 : N * rank / size,
                      nl = output == OT_MPI_OUTPUT_GATHER ? N
                                                          : N * (rank + 1) / size - off;
        if (sol == NULL || ot_solution_nbatch(sol) != nl || info.lane_offset != off)
            fail("solution: wrong lanes");
        else
            same_lanes(sol, ref, off);
    }
    ot_solution_free(sol);
    ot_solution_free(ref);
    ot_ode_free(o);
}

/* ot_mpi_solve_adjoint = ot_solve_adjoint lane by lane (outputs, status,
 * loss and gradients, bit for bit): loss data for every lane or per lane;
 * each rank its slice with distributed outputs, or the root everything,
 * gathered. The failing lanes (b % 13 == 5) fail with NaN gradients. */
static double datag[2 * NT * N];

static void test_adjoint(int per_lane, int root_style)
{
    ot_ode *o = model(PLAIN, 2);
    for (int b = 0; b < N; b++)
        for (int i = 0; i < NT; i++)
            for (int r = 0; r < 2; r++)
                datag[(b * NT + i) * 2 + r] = (r ? 0.5 : -0.5) * cos(0.3 * i + 0.1 * b);
    const int64_t all[3] = {2, NT, N}, one[2] = {2, NT};
    ot_view dall, done;
    if (ot_view_make(&dall, datag, OT_F64, CPU, 3, all, NULL) != OT_OK ||
        ot_view_make(&done, datag, OT_F64, CPU, 2, one, NULL) != OT_OK)
        fail("views: %s", ot_last_error());
    const ot_loss lref = ot_loss_squares(per_lane ? dall : done, ot_view_absent());
    ot_solution *ref = NULL;
    const int rst =
        ot_solve_adjoint(o, mat(y0g, OT_F64, 2, N), mat(parg, OT_F64, NPAR, N),
                         mat(times, OT_F64, NT, -1), &lref, &ref);
    char rmsg[512];
    snprintf(rmsg, sizeof rmsg, "%s", ot_last_error());
    if (ref == NULL)
        fail("reference: %s", rmsg);
    ot_mpi_options opt = ot_mpi_options_default();
    int64_t off = slice_off(rank), nl = slice_off(rank + 1) - off;
    ot_view y0 = mat(y0g + 2 * off, OT_F64, 2, nl),
            p = mat(parg + NPAR * off, OT_F64, NPAR, nl);
    ot_loss loss = lref;
    const int me = rank == size - 1;
    if (root_style) {
        opt.input = OT_MPI_INPUT_ROOT;
        opt.output = OT_MPI_OUTPUT_GATHER;
        opt.root = size - 1;
        off = 0, nl = me ? N : 0;
        y0 = me ? mat(y0g, OT_F64, 2, N) : ot_view_absent();
        p = me ? mat(parg, OT_F64, NPAR, N) : ot_view_absent();
        if (per_lane && !me)
            loss.data = ot_view_absent();
    } else if (per_lane) {
        const int64_t mine[3] = {2, NT, nl};
        if (ot_view_make(&loss.data, datag + 2 * NT * off, OT_F64, CPU, 3, mine, NULL))
            fail("slice: %s", ot_last_error());
    }
    ot_solution *sol = NULL;
    ot_mpi_info info;
    const int st = ot_mpi_solve_adjoint(o, y0, p, mat(times, OT_F64, NT, -1), &loss,
                                        MPI_COMM_WORLD, &opt, &sol, &info);
    same_everywhere(st, rst, NULL);
    if (strcmp(ot_last_error(), rmsg))
        fail("batch message \"%s\", one process \"%s\"", ot_last_error(), rmsg);
    if (root_style && !me) {
        if (sol != NULL)
            fail("gather: a solution off the root");
    } else if (sol == NULL || ot_solution_nbatch(sol) != nl) {
        fail("solution: %lld lanes, expected %lld",
             (long long)(sol ? ot_solution_nbatch(sol) : -1), (long long)nl);
    } else {
        same_lanes(sol, ref, off);
        const int64_t rows[3] = {1, NPAR, 2};
        for (int k = 0; k < 3; k++) {
            const double *g = ot_tensor_layout(ot_solution_grad_tensor(sol, k))->data,
                         *r = ot_tensor_layout(ot_solution_grad_tensor(ref, k))->data;
            if (memcmp(g, r + off * rows[k], (size_t)(nl * rows[k]) * sizeof *g))
                fail("gradient tensor %d differs from one process", k);
        }
        for (int64_t b = 0; b < nl; b++)
            if (ot_solution_lane_adjoint_bytes(sol, b) !=
                ot_solution_lane_adjoint_bytes(ref, off + b))
                fail("lane %lld: adjoint bytes differ", (long long)b);
    }
    ot_solution_free(sol);
    ot_solution_free(ref);
    ot_ode_free(o);
}

/* What ot_mpi_solve_adjoint refuses, the same on every rank: a NULL loss;
 * data for every lane that differs between ranks. */
static void test_adjoint_refusals(void)
{
    ot_ode *o = model(PLAIN, 2);
    const int64_t off = slice_off(rank), nl = slice_off(rank + 1) - off;
    const ot_view y0 = mat(y0g + 2 * off, OT_F64, 2, nl),
                  p = mat(parg + NPAR * off, OT_F64, NPAR, nl),
                  t = mat(times, OT_F64, NT, -1);
    ot_solution *sol = NULL;
    int st = ot_mpi_solve_adjoint(o, y0, p, t, NULL, MPI_COMM_WORLD, NULL, &sol, NULL);
    same_everywhere(st, OT_ERR_ARG, "loss: NULL");
    static double mine[2 * NT];
    for (int k = 0; k < 2 * NT; k++)
        mine[k] = rank == 1 ? 1.0 : 0.0; /* rank 1 differs */
    const ot_loss l = ot_loss_squares(mat(mine, OT_F64, 2, NT), ot_view_absent());
    st = ot_mpi_solve_adjoint(o, y0, p, t, &l, MPI_COMM_WORLD, NULL, &sol, NULL);
    if (size > 1)
        same_everywhere(st, OT_ERR_VALUE, "values or weights differ from rank 0's");
    ot_solution_free(sol);
    ot_ode_free(o);
}

/* Lockstep: lane b equals the one-process solve of its block of 8. */
static void test_lockstep(void)
{
    ot_ode *o = model(LOCKSTEP, 2);
    static double pg[NPAR * N];
    for (int b = 0; b < N; b++)
        pg[NPAR * b] = parg[NPAR * b], pg[NPAR * b + 1] = 0; /* no failing lane */
    ot_mpi_options opt = ot_mpi_options_default();
    opt.block = 8;
    const int64_t off = slice_off(rank), nl = slice_off(rank + 1) - off;
    ot_solution *sol = NULL;
    const int st = ot_mpi_solve_dense(
        o, mat(y0g + 2 * off, OT_F64, 2, nl), mat(pg + NPAR * off, OT_F64, NPAR, nl),
        mat(times, OT_F64, NT, -1), MPI_COMM_WORLD, &opt, &sol, NULL);
    same_everywhere(st, OT_OK, NULL);
    for (int64_t b = 0; sol && b < nl; b++) {
        const int64_t g = off + b, lo = g / 8 * 8, len = N - lo < 8 ? N - lo : 8;
        int rst;
        char rmsg[512];
        ot_solution *ref =
            reference(o, mat(y0g + 2 * lo, OT_F64, 2, len),
                      mat(pg + NPAR * lo, OT_F64, NPAR, len), 0, &rst, rmsg);
        if (ref)
            same_lane(sol, b, ref, g - lo);
        ot_solution_free(ref);
    }
    /* The whole batch as one block is the one-process solve of all lanes. */
    opt.block = N;
    ot_solution *all = NULL;
    int rst;
    char rmsg[512];
    ot_solution *ref =
        reference(o, mat(y0g, OT_F64, 2, N), mat(pg, OT_F64, NPAR, N), 0, &rst, rmsg);
    const int st2 = ot_mpi_solve_dense(
        o, mat(y0g + 2 * off, OT_F64, 2, nl), mat(pg + NPAR * off, OT_F64, NPAR, nl),
        mat(times, OT_F64, NT, -1), MPI_COMM_WORLD, &opt, &all, NULL);
    same_everywhere(st2, rst, NULL);
    if (all && ref)
        same_lanes(all, ref, off);
    ot_solution_free(ref);
    ot_solution_free(all);
    ot_solution_free(sol);
    ot_ode_free(o);
}

/* ---- Faults: every rank returns the same status and message ------------- */

typedef enum { BAD_ROWS, BAD_NAN, BAD_T, BAD_NT, BAD_N, BAD_BLOCK, BAD_OUT } fault;

/* The last rank gets the fault; the others are fine. */
static void one_bad_rank(fault f, int expect, const char *names)
{
    const int bad = rank == size - 1;
    ot_ode *o = model(PLAIN, bad && f == BAD_N ? 3 : 2);
    const int64_t off = slice_off(rank), nl = slice_off(rank + 1) - off;
    static double pbad[NPAR * N], tbad[NT];
    memcpy(pbad, parg, sizeof pbad);
    memcpy(tbad, times, sizeof tbad);
    pbad[NPAR * (off + nl / 2) + 0] = NAN;
    tbad[NT - 1] += 1e-9;
    ot_view y0 = mat(y0g + 2 * off, OT_F64, 2, nl),
            p = mat(parg + NPAR * off, OT_F64, NPAR, nl), t = mat(times, OT_F64, NT, -1);
    ot_mpi_options opt = ot_mpi_options_default();
    if (bad && f == BAD_ROWS)
        p = mat(parg + NPAR * off, OT_F64, 1, nl); /* [1, nl]: wrong rows */
    if (bad && f == BAD_NAN)
        p = mat(pbad + NPAR * off, OT_F64, NPAR, nl);
    if (bad && f == BAD_T)
        t = mat(tbad, OT_F64, NT, -1);
    if (bad && f == BAD_NT)
        t = mat(times, OT_F64, NT - 1, -1);
    static double y3[3 * N];
    if (bad && f == BAD_N)
        y0 = mat(y3, OT_F64, 3, nl); /* fits its own 3-state problem */
    if (bad && f == BAD_BLOCK)
        opt.block = 3;
    ot_solution *keep = (ot_solution *)&opt, *sol = keep;
    const int st = ot_mpi_solve_dense(o, y0, p, t, MPI_COMM_WORLD, &opt,
                                      bad && f == BAD_OUT ? NULL : &sol, NULL);
    char who[64];
    snprintf(who, sizeof who, "rank %d", size - 1);
    same_everywhere(st, expect, names);
    if (!strstr(ot_last_error(), who))
        fail("message \"%s\" does not name %s", ot_last_error(), who);
    if (sol != keep)
        fail("*out changed on a failed call");
    ot_ode_free(o);
}

static void test_errors(void)
{
    one_bad_rank(BAD_ROWS, OT_ERR_SHAPE, "params");
    report("one rank's params has wrong rows: OT_ERR_SHAPE on every rank");
    if (slice_off(size) - slice_off(size - 1) > 0) {
        one_bad_rank(BAD_NAN, OT_ERR_VALUE, "params");
        report("one rank's params holds NaN: OT_ERR_VALUE on every rank");
    }
    one_bad_rank(BAD_OUT, OT_ERR_ARG, "out");
    report("one rank passes out = NULL: OT_ERR_ARG on every rank");
    if (size > 1) {
        one_bad_rank(BAD_T, OT_ERR_VALUE, "t_eval");
        report("one rank's t_eval differs: OT_ERR_VALUE on every rank");
        one_bad_rank(BAD_NT, OT_ERR_ARG, "t_eval: nt");
        report("one rank's t_eval is shorter: OT_ERR_ARG on every rank");
        one_bad_rank(BAD_N, OT_ERR_ARG, "nstates");
        report("one rank's problem has other nstates: OT_ERR_ARG on every rank");
        one_bad_rank(BAD_BLOCK, OT_ERR_ARG, "opts.block");
        report("one rank's options differ: OT_ERR_ARG on every rank");
    }
    /* After all of those, the communicator still works: a clean solve. */
    test_local_distributed(0, OT_MPI_DYNAMIC, 0, OT_BDF);
    report("a solve after the failed ones: lanes = one process");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    make_data();
    test_local_distributed(0, OT_MPI_DYNAMIC, 0, OT_BDF);
    report("local slices, distributed outputs, dynamic blocks: lanes = one process");
    test_local_distributed(0, OT_MPI_STATIC, 1, OT_BDF);
    report("local slices, static one-lane blocks: lanes = one process");
    test_local_distributed(0, OT_MPI_DYNAMIC, 5, OT_BDF);
    report("local slices, dynamic blocks of 5: lanes = one process");
    test_local_distributed(1, OT_MPI_DYNAMIC, 7, OT_BDF);
    report("forward sensitivities: sens travel, = ot_solve_fwd_sens");
    test_local_distributed(2, OT_MPI_DYNAMIC, 7, OT_BDF);
    report("sensitivities to initial values travel too, = ot_solve_fwd_sens");
    test_sens_initial_without_params();
    report("sensitivities to y0 of a problem without parameters, = ot_solve_fwd_sens");
    test_local_distributed(0, OT_MPI_DYNAMIC, 3, OT_ERK_DP54);
    report("ARKODE's explicit Dormand-Prince: lanes = one process");
    test_local_distributed(0, OT_MPI_DYNAMIC, 3, OT_ESDIRK43);
    report("ARKODE's ESDIRK 4(3): lanes = one process");
    test_local_distributed(0, OT_MPI_DYNAMIC, 3, OT_RODAS4);
    report("the kernel solver's Rodas4: lanes = one process");
    test_local_distributed(0, OT_MPI_STATIC, 2, OT_TSIT5);
    report("the kernel solver's Tsit5, static blocks of 2: lanes = one process");
    test_adjoint(0, 0);
    report("adjoint, data for every lane, slices: gradients = ot_solve_adjoint");
    test_adjoint(1, 0);
    report("adjoint, per-lane data with the slices: gradients = ot_solve_adjoint");
    test_adjoint(1, 1);
    report("adjoint, the root passes per-lane data and gathers: = ot_solve_adjoint");
    test_adjoint_refusals();
    report("adjoint refusals: a NULL loss, data for every lane differing by rank");
    test_root(OT_MPI_OUTPUT_GATHER, PLAIN);
    report("root scatters f32 params and broadcast y0, gathers: = one process");
    test_root(OT_MPI_OUTPUT_DISTRIBUTED, PLAIN);
    report("root scatters, outputs distributed in even shares: = one process");
    test_root(OT_MPI_OUTPUT_GATHER, ROOTS);
    report("init, out (f32), roots: root index and time travel, = one process");
    test_lockstep();
    report("lockstep: blocks fixed by lane index, = one-process solve of the block");
    test_errors();
    MPI_Finalize();
    return failures;
}

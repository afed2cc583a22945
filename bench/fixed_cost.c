/* The fixed cost of one small solve call (issue 12, item 4): one lane of
 * Robertson (bench/robertson.h) to t = 1e-3, one output time, solved again
 * and again through
 *   ot      ot_solve_dense, default thread count (one per core),
 *   ot1     the same with threads = 1,
 *   raw     raw CVODES: SUNContext, vectors, dense solver, CVodeCreate,
 *           CVodeInit, CVode, and everything freed, per call (what a
 *           program without odetensor pays for one solve),
 * taking turns in rounds so that all three see the same machine.
 *
 * usage: fixed_cost [calls=20000 [rounds=5]]   (prints microseconds per call,
 * median over rounds, and the ratios to raw; checks that all three give the
 * same answer) */
#include "robertson_ot.h"

#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <string.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

/* SUNDIALS 7 takes a communicator where 6.4 took a pointer. */
#if SUNDIALS_VERSION_MAJOR >= 7
#define RAW_COMM_NULL SUN_COMM_NULL
#else
#define RAW_COMM_NULL NULL
#endif

static const double T_OUT = 1e-3;

static int raw_rhs(sunrealtype t, N_Vector y, N_Vector f, void *k)
{
    (void)t;
    rb_rhs(N_VGetArrayPointer(y), k, N_VGetArrayPointer(f));
    return 0;
}

static int raw_jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *k,
                   N_Vector a, N_Vector b, N_Vector c)
{
    (void)t, (void)fy, (void)a, (void)b, (void)c;
    rb_jac(N_VGetArrayPointer(y), k, SUNDenseMatrix_Data(J));
    return 0;
}

/* One raw solve, everything made and freed; the state at T_OUT into out. */
static int raw_once(const double *k, double *out)
{
    SUNContext ctx;
    if (SUNContext_Create(RAW_COMM_NULL, &ctx))
        return 1;
    N_Vector y = N_VNew_Serial(RB_N, ctx);
    SUNMatrix A = SUNDenseMatrix(RB_N, RB_N, ctx);
    SUNLinearSolver LS = SUNLinSol_Dense(y, A, ctx);
    void *cv = CVodeCreate(CV_BDF, ctx);
    double *yd = N_VGetArrayPointer(y);
    yd[0] = 1, yd[1] = 0, yd[2] = 0;
    double t = 0;
    int f = CVodeInit(cv, raw_rhs, 0.0, y);
    f = f ? f : CVodeSetUserData(cv, (void *)(uintptr_t)k);
    f = f ? f : CVodeSStolerances(cv, RB_RTOL, RB_ATOL);
    f = f ? f : CVodeSetLinearSolver(cv, LS, A);
    f = f ? f : CVodeSetJacFn(cv, raw_jac);
    f = f ? f : CVode(cv, T_OUT, y, &t, CV_NORMAL);
    memcpy(out, yd, RB_N * sizeof *out);
    CVodeFree(&cv);
    SUNLinSolFree(LS);
    SUNMatDestroy(A);
    N_VDestroy(y);
    SUNContext_Free(&ctx);
    return f < 0;
}

/* One odetensor solve of the same lane; the state at T_OUT into out. */
static int ot_once(ot_ode *ode, ot_view y0, ot_view p, ot_view t, double *out)
{
    ot_solution *sol = NULL;
    const int st = ot_solve_dense(ode, y0, p, t, &sol);
    if (st == OT_OK)
        memcpy(out, ot_view_col_f64(ot_tensor_view(ot_solution_ys(sol)), 0, 0),
               RB_N * sizeof *out);
    ot_solution_free(sol);
    return st != OT_OK;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const long calls = argc > 1 ? atol(argv[1]) : 20000;
    const int rounds = argc > 2 ? atoi(argv[2]) : 5;
    static const double k[3] = {0.04, 1e4, 3e7}, y0[3] = {1, 0, 0};
    const ot_device cpu = {OT_CPU, 0};
    const int64_t three = 3, one = 1;
    ot_view yv, pv, tv;
    ot_ode *ode[2] = {NULL, NULL};
    int bad = ot_view_make(&yv, y0, OT_F64, cpu, 1, &three, NULL) ||
              ot_view_make(&pv, k, OT_F64, cpu, 1, &three, NULL) ||
              ot_view_make(&tv, &T_OUT, OT_F64, cpu, 1, &one, NULL);
    for (int m = 0; m < 2 && !bad; m++)
        bad = ot_ode_new(&ode[m], 3, 3, rb_ot_rhs, NULL) ||
              ot_ode_set_jac(ode[m], rb_ot_jac) || ot_ode_set_rtol(ode[m], RB_RTOL) ||
              ot_ode_set_atol(ode[m], RB_ATOL) ||
              ot_ode_set_threads(ode[m], m == 0 ? 0 : 1);
    double us[3][64], a[3], b[3];
    for (int r = 0; r < rounds && r < 64 && !bad; r++)
        for (int w = 0; w < 3; w++) {
            const int who = (w + r) % 3; /* a different one first each round */
            const double t0 = rb_seconds();
            for (long c = 0; c < calls && !bad; c++)
                bad = who < 2 ? ot_once(ode[who], yv, pv, tv, a) : raw_once(k, b);
            us[who][r] = (rb_seconds() - t0) / (double)calls * 1e6;
        }
    bad =
        bad || ot_once(ode[0], yv, pv, tv, a) || raw_once(k, b) || memcmp(a, b, sizeof a);
    if (bad) {
        fprintf(stderr, "fixed_cost: a solve failed or the answers differ\n");
        return 1;
    }
    double med[3];
    for (int w = 0; w < 3; w++) {
        qsort(us[w], (size_t)rounds, sizeof us[w][0], cmp);
        med[w] = us[w][rounds / 2];
    }
    printf("fixed_cost calls=%ld rounds=%d ot_us=%.3f ot1_us=%.3f raw_us=%.3f "
           "ot/raw=%.3f ot1/raw=%.3f\n",
           calls, rounds, med[0], med[1], med[2], med[0] / med[2], med[1] / med[2]);
    ot_ode_free(ode[0]);
    ot_ode_free(ode[1]);
    return 0;
}

/* Robertson on many lanes with plain CVODE: the baseline odetensor's lanes
 * mode is measured against. One solver, created once and re-initialised
 * (CVodeReInit) for every lane, with the options of bench/robertson.h;
 * outputs go to a [3, 50, nbatch] column-major array.
 *
 * usage: raw_cvode [nbatch [dump-file]]   (nbatch defaults to 10000)
 * Prints elapsed seconds (solver setup, output allocation and all lanes), the
 * total step count, a checksum and a hash of the outputs' bytes. */
#include "robertson.h"

#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

/* SUNDIALS 7 takes a communicator where 6.4 took a pointer. */
#if SUNDIALS_VERSION_MAJOR >= 7
#define RAW_COMM_NULL SUN_COMM_NULL
#else
#define RAW_COMM_NULL NULL
#endif

static int rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *user)
{
    (void)t;
    rb_rhs(N_VGetArrayPointer(y), *(const double **)user, N_VGetArrayPointer(ydot));
    return 0;
}

static int jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *user,
               N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)t, (void)fy, (void)t1, (void)t2, (void)t3;
    rb_jac(N_VGetArrayPointer(y), *(const double **)user, SUNDenseMatrix_Data(J));
    return 0;
}

/* Declared in robertson.h: not static, so that it stays a function of its own
 * that callgrind reports (bench/run.sh reads its inclusive Ir) and that
 * bench/interleave.c can call. */
long long raw_solve_all(int64_t nbatch, const double *rates, const double *times,
                        double **out)
{
    SUNContext ctx = NULL;
    if (SUNContext_Create(RAW_COMM_NULL, &ctx) != 0)
        return -1;
    double *ys = malloc((size_t)nbatch * RB_N * RB_NT * sizeof *ys);
    const double *lane_rates = rates; /* the user data: this lane's rates */
    /* y has no data of its own: it points at each output column in turn. */
    N_Vector y = N_VNewEmpty_Serial(RB_N, ctx), y0 = N_VNew_Serial(RB_N, ctx);
    SUNMatrix A = SUNDenseMatrix(RB_N, RB_N, ctx);
    SUNLinearSolver LS = y && A ? SUNLinSol_Dense(y, A, ctx) : NULL;
    void *cv = CVodeCreate(CV_BDF, ctx);
    int f = ys && y0 && LS && cv ? 0 : -1;
    if (f == 0) {
        N_VConst(0.0, y0);
        NV_Ith_S(y0, 0) = 1.0;
    }
    f = f ? f : CVodeInit(cv, rhs, 0.0, y0);
    f = f ? f : CVodeSetUserData(cv, &lane_rates);
    f = f ? f : CVodeSetMaxNumSteps(cv, RB_MAX_STEPS);
    f = f ? f : CVodeSStolerances(cv, RB_RTOL, RB_ATOL);
    f = f ? f : CVodeSetLinearSolver(cv, LS, A);
    f = f ? f : CVodeSetJacFn(cv, jac);
    long long steps = 0;
    for (int64_t b = 0; f == 0 && b < nbatch; b++) {
        lane_rates = rates + RB_N * b;
        f = CVodeReInit(cv, 0.0, y0);
        for (int j = 0; f >= 0 && j < RB_NT; j++) {
            double tret;
            N_VSetArrayPointer(ys + RB_N * (j + RB_NT * b), y); /* write in place */
            f = CVode(cv, times[j], y, &tret, CV_NORMAL);
        }
        long nst = 0;
        if (f >= 0 && CVodeGetNumSteps(cv, &nst) == CV_SUCCESS)
            steps += nst;
        if (f < 0)
            fprintf(stderr, "raw_cvode: lane %lld failed with flag %d\n", (long long)b,
                    f);
    }
    CVodeFree(&cv);
    SUNLinSolFree(LS);
    SUNMatDestroy(A);
    N_VDestroy(y);
    N_VDestroy(y0);
    SUNContext_Free(&ctx);
    if (f < 0) {
        free(ys);
        return -1;
    }
    *out = ys;
    return steps;
}

#ifndef BENCH_NO_MAIN
int main(int argc, char **argv)
{
    const int64_t nbatch = argc > 1 ? atoll(argv[1]) : 10000;
    if (nbatch < 1) {
        fprintf(stderr, "usage: raw_cvode [nbatch [dump-file]]\n");
        return 2;
    }
    double times[RB_NT], *ys = NULL, *rates = rb_make_rates(nbatch);
    rb_times(times);
    if (rates == NULL)
        return 1;
    const double t0 = rb_seconds();
    const long long steps = raw_solve_all(nbatch, rates, times, &ys);
    const double secs = rb_seconds() - t0;
    const char *dump = argc > 2 ? argv[2] : NULL;
    const int rc = steps < 0 ? 1 : rb_report("raw", nbatch, 1, secs, steps, ys, dump);
    free(ys);
    free(rates);
    return rc;
}
#endif

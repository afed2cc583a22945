/* A program that links the installed libodetensor.so and, for its own use,
 * Debian's SUNDIALS 6.4.1 (built by make test-install with the pkg-config
 * line plus -lsundials_cvodes). odetensor carries its own SUNDIALS and
 * exports none of it, so each side must run its own code: this program's
 * CVODE calls must reach Debian's library (dladdr says which library holds
 * the CVodeCreate it calls; with odetensor's SUNDIALS exported, it would be
 * libodetensor.so, whose 7.1.1 the 6.4 API happens to run), and both solve
 * y' = -y to t = 1 correctly. Exit code 0 when all of that holds. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>
#include <sundials/sundials_version.h>

#include <odetensor.h>

static int decay(sunrealtype t, N_Vector y, N_Vector f, void *u)
{
    (void)t, (void)u;
    N_VGetArrayPointer(f)[0] = -N_VGetArrayPointer(y)[0];
    return 0;
}

static int ot_decay(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        ot_view_mut_col_f64(f, b, 0)[0] = -ot_view_col_f64(y, b, 0)[0];
    return 0;
}

/* The file of the shared object that holds the CVodeCreate this program
 * calls. */
static const char *cvode_home(void)
{
    union {
        void *(*fn)(int, SUNContext);
        void *p;
    } u = {CVodeCreate};
    Dl_info info;
    return dladdr(u.p, &info) && info.dli_fname ? info.dli_fname : "(unknown)";
}

int main(void)
{
    char version[32];
    SUNDIALSGetVersion(version, sizeof version);
    SUNContext ctx;
    if (SUNContext_Create(NULL, &ctx) != 0)
        return 1;
    N_Vector y = N_VNew_Serial(1, ctx);
    N_VGetArrayPointer(y)[0] = 1.0;
    void *cv = CVodeCreate(CV_ADAMS, ctx);
    SUNNonlinearSolver nls = SUNNonlinSol_FixedPoint(y, 0, ctx);
    double t = 0;
    int f = CVodeInit(cv, decay, 0.0, y);
    f = f ? f : CVodeSetNonlinearSolver(cv, nls);
    f = f ? f : CVodeSStolerances(cv, 1e-10, 1e-12);
    f = f ? f : CVode(cv, 1.0, y, &t, CV_NORMAL);
    const double raw = N_VGetArrayPointer(y)[0];
    CVodeFree(&cv);
    SUNNonlinSolFree(nls);
    N_VDestroy(y);
    SUNContext_Free(&ctx);

    static const double y0 = 1.0, t_eval = 1.0;
    const ot_device cpu = {OT_CPU, 0};
    const int64_t one = 1;
    ot_view yv, tv;
    ot_ode *ode = NULL;
    ot_solution *sol = NULL;
    int st = ot_view_make(&yv, &y0, OT_F64, cpu, 1, &one, NULL);
    st = st ? st : ot_view_make(&tv, &t_eval, OT_F64, cpu, 1, &one, NULL);
    st = st ? st : ot_ode_new(&ode, 1, 0, ot_decay, NULL);
    st = st ? st : ot_ode_set_rtol(ode, 1e-10);
    st = st ? st : ot_ode_set_atol(ode, 1e-12);
    st = st ? st : ot_solve_dense(ode, yv, ot_view_absent(), tv, &sol);
    const double ot =
        st == OT_OK ? ot_view_col_f64(ot_tensor_view(ot_solution_ys(sol)), 0, 0)[0] : NAN;
    ot_solution_free(sol);
    ot_ode_free(ode);

    const double exact = exp(-1.0);
    const char *home = cvode_home();
    const int ok = f == CV_SUCCESS && st == OT_OK && version[0] == '6' &&
                   strstr(home, "libsundials_cvodes") != NULL &&
                   fabs(raw - exact) < 1e-8 && fabs(ot - exact) < 1e-8;
    if (!ok)
        fprintf(stderr,
                "clash: CVODE %s from %s gave %.12g (flag %d), odetensor %.12g (%s); "
                "exact %.12g\n",
                version, home, raw, f, ot, ot_status_name(st), exact);
    return ok ? 0 : 1;
}

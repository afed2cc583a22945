/* Lanes mode: one CVODE(S) instance per worker thread, re-initialised for each
 * lane. Callbacks get views straight into CVODE's vectors, and CVODE writes
 * dense outputs straight into the output tensors (N_VSetArrayPointer). */
#include <cvodes/cvodes.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "core/alloc.h"
#include "solve/nv_clone.h"
#include "core/error.h"
#include "solve/cv_setup.h"
#include "lanes/worker.h"

/* ---- Views over solver storage ------------------------------------------ */

/* A [rows, cols, 1] f64 view of compact storage; no checks (the worker made
 * the storage, so the rules hold by construction). */
static ot_layout compact(double *data, int64_t rows, int64_t cols)
{
    ot_layout l;
    l.data = data;
    l.dtype = OT_F64;
    l.ndim = cols > 1 ? 3 : 2;
    l.device.type = OT_CPU;
    l.device.id = 0;
    l.shape[0] = rows;
    l.shape[1] = cols > 1 ? cols : 1;
    l.shape[2] = 1;
    l.strides[0] = 8;
    l.strides[1] = 8 * (rows > 0 ? rows : 1);
    l.strides[2] = l.strides[1] * l.shape[1];
    return l;
}

ot_view ot__cview(const double *data, int64_t rows)
{
    ot_view v;
    v.layout = compact((double *)(uintptr_t)data, rows, 1);
    return v;
}

ot_view_mut ot__mview(double *data, int64_t rows, int64_t cols)
{
    ot_view_mut v;
    v.layout = compact(data, rows, cols);
    return v;
}

/* ---- Callback wrappers ---------------------------------------------------- */

/* w->cb_failed: 0, CB_NOTED (a callback asked for a retry) or CB_STOPPED (a
 * callback returned < 0, or root wrote NaN). CVODE's fixed-point iteration
 * (Adams) treats a failed rhs like a convergence failure and retries with
 * ever smaller steps until max_steps; so once a lane is stopped, every
 * wrapper fails at once without calling the user again, and CVODE gives up
 * within one step. */
enum { CB_NOTED = 1, CB_STOPPED = 2 };

/* NaN/Inf from a callback is first treated as recoverable (a too-large trial
 * step often causes it); a lane that keeps producing it is stopped after this
 * many, rather than creeping on with ever smaller steps to max_steps. */
enum { NAN_RETRIES = 20 };

static int nan_rc(ot__worker *w) { return ++w->nan_count > NAN_RETRIES ? -1 : 1; }

/* Records a callback problem for the lane; the lane reports it if CVODE then
 * gives up. */
static int note(ot__worker *w, int rc, const char *fmt, double t, long long i)
{
    if (rc < 0)
        w->cb_failed = CB_STOPPED;
    else if (!w->cb_failed)
        w->cb_failed = CB_NOTED;
    snprintf(w->cb_msg, sizeof w->cb_msg, fmt, t, i);
    return rc;
}

/* The index of the first NaN/Inf in v, or -1. The common all-finite case
 * is one branch-free pass: x * 0 is 0 for finite x and NaN otherwise. */
static int first_nonfinite(const double *v, int64_t n)
{
    double probe = 0;
    for (int64_t i = 0; i < n; i++)
        probe += v[i] * 0.0;
    if (probe == 0)
        return -1;
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return (int)i;
    return -1;
}

/* Maps a user return code: < 0 stops the lane, > 0 asks CVODE to retry
 * where it can (CVODE has no recoverable root failure: any nonzero stops). */
static int user_rc(ot__worker *w, const char *cb, int rc, double t, int can_retry)
{
    char fmt[128];
    snprintf(fmt, sizeof fmt, "%s returned %d%s at t = %%g%%.0lld", cb, rc,
             rc > 0 && !can_retry ? " (a root function cannot ask for a retry)" : "");
    return note(w, rc < 0 || !can_retry ? -1 : 1, fmt, t, 0);
}

static int rhs_wrap(sunrealtype t, N_Vector y, N_Vector ydot, void *ud)
{
    ot__worker *w = ud;
    if (w->cb_failed == CB_STOPPED)
        return -1;
    const ot_ode *ode = w->plan->ode;
    double *d = N_VGetArrayPointer(ydot);
    /* The views' shapes never change: only the data pointers do. */
    w->yview.layout.data = N_VGetArrayPointer(y);
    w->dview.layout.data = d;
    int rc = ode->rhs(t, w->yview, w->p, w->dview, ode->user);
    if (rc != 0)
        return user_rc(w, "rhs", rc, t, 1);
    int bad = first_nonfinite(d, w->n);
    if (bad >= 0)
        return note(w, nan_rc(w), "rhs wrote NaN or Inf at t = %g to dydt[%lld]", t, bad);
    return 0;
}

static int jac_wrap(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud,
                    N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)fy, (void)t1, (void)t2, (void)t3;
    ot__worker *w = ud;
    if (w->cb_failed == CB_STOPPED)
        return -1;
    const ot_ode *ode = w->plan->ode;
    double *a = SUNDenseMatrix_Data(J); /* column-major n x n, leading dim n */
    int rc = ode->jac(t, ot__cview(N_VGetArrayPointer(y), w->n), w->p,
                      ot__mview(a, w->n, w->n), ode->user);
    if (rc != 0)
        return user_rc(w, "jac", rc, t, 1);
    int bad = first_nonfinite(a, w->n * w->n);
    if (bad >= 0)
        return note(w, nan_rc(w),
                    "jac wrote NaN or Inf at t = %g to J (column-major index %lld)", t,
                    bad);
    return 0;
}

static int root_wrap(sunrealtype t, N_Vector y, sunrealtype *g, void *ud)
{
    ot__worker *w = ud;
    if (w->cb_failed == CB_STOPPED)
        return -1;
    const ot_ode *ode = w->plan->ode;
    int rc = ode->root(t, ot__cview(N_VGetArrayPointer(y), w->n), w->p,
                       ot__mview(g, ode->nroots, 1), ode->user);
    if (rc != 0)
        return user_rc(w, "root", rc, t, 0);
    int bad = first_nonfinite(g, ode->nroots);
    if (bad >= 0)
        return note(w, -1, "root wrote NaN or Inf at t = %g to g[%lld]", t, bad);
    return 0;
}

static void err_handler(int code, const char *module, const char *function, char *msg,
                        void *ud)
{
    ot__worker *w = ud;
    (void)code;
    snprintf(w->cv_msg, sizeof w->cv_msg, "%s/%s: %s", module, function, msg);
}

/* ---- Creation ------------------------------------------------------------- */

/* The CVODE setup shared by every lane: method, solvers, tolerances, options,
 * roots and sensitivities. */
static int configure(ot__worker *w)
{
    const ot__plan *pl = w->plan;
    const ot_ode *ode = pl->ode;
    void *cv = w->cv;
    int f = OT__SUN_CALL(CVodeInit(cv, rhs_wrap, pl->t0, w->y), CV_MEM_FAIL);
    f = f ? f : ot__cv_options(cv, pl, w, err_handler);
    if (!f && ode->atol_vec) {
        if ((w->atolv = OT__SUN_NEW(N_VNew_Serial(w->n, w->ctx))) == NULL)
            return OT_ERR_NOMEM;
        memcpy(N_VGetArrayPointer(w->atolv), ode->atol_vec,
               (size_t)w->n * sizeof(double));
    }
    f = f ? f : ot__cv_tolerances(cv, ode, w->atolv);
    if (!f && ode->method == OT_BDF) {
        w->A = OT__SUN_NEW(SUNDenseMatrix(w->n, w->n, w->ctx));
        w->LS = w->A ? OT__SUN_NEW(SUNLinSol_Dense(w->y, w->A, w->ctx)) : NULL;
    }
    f = f ? f
          : ot__cv_solver(cv, ode, w->A, w->LS, ode->jac ? jac_wrap : NULL, w->y, w->ctx,
                          &w->NLS);
    if (!f && ode->nroots > 0)
        f = OT__SUN_CALL(CVodeRootInit(cv, (int)ode->nroots, root_wrap), CV_MEM_FAIL);
    if (!f && pl->kind == OT__SENS) {
        const int np = (int)pl->np;
        w->yS = ot__nv_clone_array(np, w->y, 1);
        if (w->yS == NULL)
            return OT_ERR_NOMEM;
        for (int j = 0; j < np; j++) {
            N_VSetArrayPointer(w->yS0 + (size_t)j * (size_t)w->n, w->yS[j]);
            N_VConst(0.0, w->yS[j]);
            w->pbuf[j] = 1.0; /* real values come with each lane */
            w->pbar[j] = 1.0;
        }
        f = OT__SUN_CALL(CVodeSensInit1(cv, np, CV_STAGGERED, NULL, w->yS), CV_MEM_FAIL);
        f = f ? f : CVodeSetSensParams(cv, w->pbuf, w->pbar, NULL);
        f = f ? f : ot__cv_sens_setup(cv, ode, np, w->y, w->ctx, &w->NLSsens);
    }
    if (f == CV_MEM_FAIL)
        return OT_ERR_NOMEM;
    return f ? OT_ERR_SOLVER : OT_OK;
}

int ot__worker_new(ot__worker **out, const ot__plan *pl)
{
    ot__worker *w = OT__CALLOC(1, sizeof *w);
    if (w == NULL)
        return ot__fail(OT_ERR_NOMEM, "solve: cannot allocate a worker");
    w->plan = pl;
    w->n = pl->n;
    w->yview = ot__cview(NULL, pl->n);
    w->dview = ot__mview(NULL, pl->n, 1);
    const size_t n = (size_t)pl->n, np = (size_t)pl->np, rows = (size_t)pl->rows;
    /* scratch: ys, y0, yp, ym (n each); out, diff (rows each); for sens, the
     * sensitivities and their initial values (np * n each). */
    const size_t nscratch = 4 * n + 2 * rows + (pl->kind == OT__SENS ? 2 * np * n : 0);
    w->scratch = OT__MALLOC(nscratch * sizeof(double));
    w->pbuf = OT__MALLOC((2 * np + 1) * sizeof(double));
    w->pbar = OT__MALLOC((np + 1) * sizeof(double));
    int st = OT_ERR_NOMEM;
    if (w->scratch) {
        w->ys_scratch = w->scratch;
        w->y0_scratch = w->ys_scratch + n;
        w->yp_scratch = w->y0_scratch + n;
        w->ym_scratch = w->yp_scratch + n;
        w->out_scratch = w->ym_scratch + n;
        w->diff_scratch = w->out_scratch + rows;
        w->sens_scratch = w->diff_scratch + rows;
        w->yS0 = w->sens_scratch + np * n;
    }
    if (w->scratch && w->pbuf && w->pbar &&
        OT__SUN_CALL(SUNContext_Create(NULL, &w->ctx), -1) == 0) {
        w->y = OT__SUN_NEW(N_VMake_Serial(pl->n, w->scratch, w->ctx));
        w->y0 = w->y ? OT__SUN_NEW(N_VMake_Serial(pl->n, w->scratch + n, w->ctx)) : NULL;
        w->cv = w->y0 ? OT__SUN_NEW(CVodeCreate(
                            pl->ode->method == OT_BDF ? CV_BDF : CV_ADAMS, w->ctx))
                      : NULL;
        if (w->cv) {
            N_VConst(0.0, w->y);
            st = configure(w);
        }
    }
    if (st != OT_OK) {
        const int nomem = st == OT_ERR_NOMEM;
        char msg[sizeof w->cv_msg];
        memcpy(msg, w->cv_msg, sizeof msg);
        ot__worker_free(w);
        return nomem ? ot__fail(OT_ERR_NOMEM, "solve: cannot allocate the CVODE solver")
                     : ot__fail(OT_ERR_SOLVER, "solve: CVODE setup failed: %s", msg);
    }
    *out = w;
    return OT_OK;
}

void ot__worker_free(ot__worker *w)
{
    if (w == NULL)
        return;
    if (w->yS)
        N_VDestroyVectorArray(w->yS, (int)w->plan->np);
    CVodeFree(&w->cv);
    SUNLinSolFree(w->LS);
    SUNMatDestroy(w->A);
    SUNNonlinSolFree(w->NLS);
    SUNNonlinSolFree(w->NLSsens);
    N_VDestroy(w->atolv);
    N_VDestroy(w->y);
    N_VDestroy(w->y0);
    SUNContext_Free(&w->ctx);
    free(w->scratch);
    free(w->pbuf);
    free(w->pbar);
    free(w->steps_t);
    free(w->steps_y);
    free(w);
}

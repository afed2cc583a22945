/* The CVODE(S) settings shared by every driver. */
#include "core/alloc.h"
#include "core/sun_memory.h"
#include "kit/cv_setup.h"
#include "kit/sun_compat.h"

#include <stdint.h>
#include <stdlib.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#if SUNDIALS_VERSION_MAJOR >= 7
/* SUNDIALS 7's error handler (SUNErrHandlerFn), err_user_data = the ot__cb:
 * the message as 6.4's handler kept it, module/function: text. */
static void on_error(int line, const char *func, const char *file, const char *msg,
                     SUNErrCode code, void *data, SUNContext ctx)
{
    (void)line, (void)file, (void)ctx;
    /* One handler per context, for CVODES and ARKODE alike: ARKODE's
     * functions are ARKode*, ARKStep* or ark*. */
    char cvodes[] = "CVODES", arkode[] = "ARKODE";
    char *module = func && (func[0] == 'a' || func[0] == 'A') ? arkode : cvodes;
    ot__cb_cvode_error(code, module, func ? func : "",
                       (char *)(uintptr_t)(msg ? msg : ""), data);
}

int ot__sun_context_new(SUNContext *ctx, ot__cb *cb)
{
    if (SUNContext_Create(SUN_COMM_NULL, ctx) != 0)
        return -1;
    /* The context's logger writes warnings to stdout and errors to stderr
     * (SUNDIALS built with logging, as distributions ship it; odetensor's
     * own build has none), and it has no way to write nowhere: /dev/null. */
    SUNLogger logger = NULL;
    if (SUNContext_GetLogger(*ctx, &logger) == 0 && logger != NULL) {
        SUNLogger_SetErrorFilename(logger, "/dev/null");
        SUNLogger_SetWarningFilename(logger, "/dev/null");
    }
    int f = SUNContext_ClearErrHandlers(*ctx);
    f = f ? f : SUNContext_PushErrHandler(*ctx, on_error, cb);
    if (f != 0)
        SUNContext_Free(ctx);
    return f;
}
#else
int ot__sun_context_new(SUNContext *ctx, ot__cb *cb)
{
    (void)cb; /* CVODE's handler is set in ot__cv_options */
    return SUNContext_Create(NULL, ctx);
}
#endif

int ot__cv_options(void *cv, const ot__plan *pl, void *user, ot__cb *cb)
{
    const ot_ode *ode = pl->ode;
    int f = CVodeSetUserData(cv, user);
#if SUNDIALS_VERSION_MAJOR < 7
    f = f ? f : CVodeSetErrHandlerFn(cv, ot__cb_cvode_error, cb);
#else
    (void)cb; /* the context's handler (ot__sun_context_new) */
#endif
    f = f ? f : CVodeSetMaxNumSteps(cv, pl->kind == OT__STEPS ? -1 : ode->max_steps);
    if (!f && ode->h0 > 0)
        f = CVodeSetInitStep(cv, ode->h0);
    if (!f && ode->hmax > 0)
        f = CVodeSetMaxStep(cv, ode->hmax);
    if (!f && ode->max_order > 0)
        f = CVodeSetMaxOrd(cv, ode->max_order);
    if (!f && ode->stab_limit)
        f = CVodeSetStabLimDet(cv, SUNTRUE);
    return f;
}

int ot__cv_tolerances(void *cv, const ot_ode *ode, N_Vector atolv)
{
    return ode->atol_vec
               ? OT__SUN_CALL(CVodeSVtolerances(cv, ode->rtol, atolv), CV_MEM_FAIL)
               : CVodeSStolerances(cv, ode->rtol, ode->atol);
}

int ot__cv_solver(void *cv, const ot_ode *ode, SUNMatrix A, SUNLinearSolver LS,
                  CVLsJacFn jac, N_Vector y, SUNContext ctx, SUNNonlinearSolver *nls)
{
    if (ode->method == OT_BDF) {
        if (LS == NULL)
            return CV_MEM_FAIL;
        int f = OT__SUN_CALL(CVodeSetLinearSolver(cv, LS, A), CV_MEM_FAIL);
        return f || jac == NULL ? f : CVodeSetJacFn(cv, jac);
    }
    *nls = OT__SUN_NEW(SUNNonlinSol_FixedPoint(y, 0, ctx));
    return *nls ? CVodeSetNonlinearSolver(cv, *nls) : CV_MEM_FAIL;
}

int ot__cv_sens_setup(void *cv, const ot_ode *ode, int np, N_Vector y, N_Vector *atolS,
                      SUNContext ctx, SUNNonlinearSolver *nls)
{
    int f = CVodeSetSensErrCon(cv, SUNTRUE);
    if (!f && (ode->sens_rtol > 0 || ode->sens_atol > 0)) {
        /* SUNDIALS' allocator: a scope that fails in the call frees it. */
        double *atols = OT__SUN_MALLOC((size_t)np * sizeof *atols);
        if (atols == NULL)
            return CV_MEM_FAIL;
        for (int j = 0; j < np; j++)
            atols[j] = ode->sens_atol;
        f = OT__SUN_CALL(CVodeSensSStolerances(cv, ode->sens_rtol, atols), CV_MEM_FAIL);
        OT__SUN_FREE(atols);
    } else if (!f && atolS) {
        f = OT__SUN_CALL(CVodeSensSVtolerances(cv, ode->rtol, atolS), CV_MEM_FAIL);
    } else if (!f) {
        f = CVodeSensEEtolerances(cv);
    }
    if (!f && ode->method == OT_ADAMS) {
        *nls = OT__SUN_NEW(SUNNonlinSol_FixedPointSens(np, y, 0, ctx));
        f = *nls ? CVodeSetNonlinearSolverSensStg(cv, *nls) : CV_MEM_FAIL;
    }
    return f;
}

void ot__cv_stats_add(ot_lane_stats *acc, const ot_lane_stats *s)
{
    acc->steps += s->steps;
    acc->rhs_evals += s->rhs_evals;
    acc->jac_rhs_evals += s->jac_rhs_evals;
    acc->jac_evals += s->jac_evals;
    acc->lin_setups += s->lin_setups;
    acc->err_test_fails += s->err_test_fails;
    acc->nonlin_iters += s->nonlin_iters;
    acc->nonlin_fails += s->nonlin_fails;
    acc->lin_iters += s->lin_iters;
}

void ot__cv_stats(void *cv, int with_ls, ot_lane_stats *s)
{
    long v;
    if (CVodeGetNumSteps(cv, &v) == CV_SUCCESS)
        s->steps = v;
    if (CVodeGetNumRhsEvals(cv, &v) == CV_SUCCESS)
        s->rhs_evals = v;
    if (CVodeGetNumErrTestFails(cv, &v) == CV_SUCCESS)
        s->err_test_fails = v;
    if (CVodeGetNumNonlinSolvIters(cv, &v) == CV_SUCCESS)
        s->nonlin_iters = v;
    if (CVodeGetNumNonlinSolvConvFails(cv, &v) == CV_SUCCESS)
        s->nonlin_fails = v;
    if (with_ls && CVodeGetNumJacEvals(cv, &v) == CV_SUCCESS)
        s->jac_evals = v;
    if (with_ls && CVodeGetNumLinRhsEvals(cv, &v) == CV_SUCCESS)
        s->jac_rhs_evals = v;
    if (with_ls && CVodeGetNumLinSolvSetups(cv, &v) == CV_SUCCESS)
        s->lin_setups = v;
    if (with_ls && CVodeGetNumLinIters(cv, &v) == CV_SUCCESS)
        s->lin_iters = v;
}

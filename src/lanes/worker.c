/* Lanes mode: one CVODE(S) or ARKStep instance per worker thread, re-initialised for each
 * lane. Callbacks get views straight into CVODE's vectors, and CVODE writes
 * dense outputs straight into the output tensors (N_VSetArrayPointer). */
#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <stdlib.h>
#include <string.h>
#include <sunlinsol/sunlinsol_band.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_spgmr.h>
#include <sunmatrix/sunmatrix_band.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "core/alloc.h"
#include "kit/nv_clone.h"
#include "core/error.h"
#include "kit/cv_setup.h"
#include "kit/integ.h"
#include "kit/dq.h"
#include "kit/progress.h"
#include "kit/sens.h"
#include "kit/sun_compat.h"
#include "lanes/worker.h"
#include "run/adjoint.h"
#include "run/sens_jump.h"
#include "tensor/tensor_impl.h"

/* ---- Callback wrappers: the rules are kit/callback.c's ---------------- */

/* The rhs, or an IMEX split's explicit part (explicit = 1). */
static int call_rhs(ot__lanes_worker *w, int explicit, sunrealtype t, N_Vector y,
                    N_Vector ydot)
{
    if (ot__cb_stopped(&w->cb))
        return -1;
    const ot_ode *ode = w->plan->ode;
    const char *name = explicit ? "rhs_explicit" : "rhs";
    double *d = N_VGetArrayPointer(ydot);
    /* The views are built here, straight into the call's arguments: a
     * template with only its data pointer stored just before the call made
     * the copy into the arguments wait on that store (store forwarding).
     * Interleaved against raw CVODE (bench/interleave, 4 runs each):
     * odetensor / raw 1.095-1.104 built here, 1.126-1.142 from templates. */
    int rc = (explicit ? ode->rhs_explicit
                       : ode->rhs)(t, ot__view_compact(N_VGetArrayPointer(y), w->n, 1),
                                   w->p, ot__view_mut_compact(d, w->n, 1), ode->user);
    if (rc != 0)
        return ot__cb_returned(&w->cb, name, rc, t, OT__CB_RETRY);
    return ot__cb_finite(&w->cb, name, "dydt", d, w->n, 1, w->lane, t, OT__CB_RETRY);
}

static int rhs_wrap(sunrealtype t, N_Vector y, N_Vector ydot, void *ud)
{
    return call_rhs(ud, 0, t, y, ydot);
}

static int rhs_explicit_wrap(sunrealtype t, N_Vector y, N_Vector ydot, void *ud)
{
    return call_rhs(ud, 1, t, y, ydot);
}

/* Without a user Jacobian: CVODE's dense difference quotients (kit/dq.h)
 * computed here, bit for bit as cvLsDenseDQJac does, but with no allocation:
 * SUNDIALS' own clones a vector at every evaluation and dereferences the
 * NULL it gets when memory runs out (a SIGSEGV, issue 13). ftemp and the
 * error weights go into CVODE's work vectors t1 and t2. */
static int dq_jac(ot__lanes_worker *w, double t, N_Vector y, N_Vector fy, double *a,
                  N_Vector t1, N_Vector t2)
{
    const int64_t n = w->n;
    double h = 0;
    if (ot__ig_dq_inputs(&w->ig, &h, t2) != 0)
        return -1;
    double *yd = N_VGetArrayPointer(y), *ft = N_VGetArrayPointer(t1);
    const double *fd = N_VGetArrayPointer(fy), *ewt = N_VGetArrayPointer(t2);
    const double min_inc = ot__dq_min_inc(fd, ewt, n, h);
    for (int64_t j = 0; j < n; j++) {
        const double saved = yd[j], inc = ot__dq_inc(saved, ewt[j], min_inc);
        yd[j] += inc;
        const int rc = rhs_wrap(t, y, t1, w);
        w->dq_evals++;
        yd[j] = saved;
        if (rc != 0)
            return rc;
        ot__dq_column(ft, fd, inc, a + j * n, n);
    }
    return 0;
}

static int jac_wrap(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud,
                    N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)t3;
    ot__lanes_worker *w = ud;
    if (ot__cb_stopped(&w->cb))
        return -1;
    const ot_ode *ode = w->plan->ode;
    double *a = SUNDenseMatrix_Data(J); /* column-major n x n, leading dim n */
    if (ode->jac == NULL)
        return dq_jac(w, t, y, fy, a, t1, t2);
    int rc = ode->jac(t, ot__view_compact(N_VGetArrayPointer(y), w->n, 1), w->p,
                      ot__view_mut_blocks(a, w->n, 1), ode->user);
    if (rc != 0)
        return ot__cb_returned(&w->cb, "jac", rc, t, OT__CB_RETRY);
    return ot__cb_finite(&w->cb, "jac", "J", a, w->n * w->n, 1, w->lane, t, OT__CB_RETRY);
}

/* OT_LINSOL_BAND with the user's Jacobian: its view is the band storage
 * (ot_jac_fn), rows mupper + mlower + 1 of SUNDIALS' columns, which hold
 * mupper + mlower more rows above for the LU's fill. */
static int jac_band_wrap(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud,
                         N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)fy, (void)t1, (void)t2, (void)t3;
    ot__lanes_worker *w = ud;
    if (ot__cb_stopped(&w->cb))
        return -1;
    const ot_ode *ode = w->plan->ode;
    const int64_t rows = ode->mupper + ode->mlower + 1, ldim = SM_LDIM_B(J);
    double *d = SM_COLUMN_B(J, 0) - ode->mupper; /* row 0 of the band, column 0 */
    int rc = ode->jac(t, ot__view_compact(N_VGetArrayPointer(y), w->n, 1), w->p,
                      ot__view_mut_band(d, rows, w->n, ldim), ode->user);
    if (rc != 0)
        return ot__cb_returned(&w->cb, "jac", rc, t, OT__CB_RETRY);
    for (int64_t j = 0; j < w->n; j++) {
        const int st = ot__cb_finite(&w->cb, "jac", "J", d + j * ldim, rows, 1, w->lane,
                                     t, OT__CB_RETRY);
        if (st != 0)
            return st;
    }
    return 0;
}

/* OT_LINSOL_GMRES's preconditioner: the user's, on the lane's work. */
static int psetup_wrap(sunrealtype t, N_Vector y, N_Vector fy, sunbooleantype jok,
                       sunbooleantype *jcur, sunrealtype gamma, void *ud)
{
    (void)fy;
    ot__lanes_worker *w = ud;
    if (ot__cb_stopped(&w->cb))
        return -1;
    const ot_ode *ode = w->plan->ode;
    int cur = 0;
    const int rc = ode->psetup(t, ot__view_compact(N_VGetArrayPointer(y), w->n, 1), w->p,
                               gamma, jok ? 1 : 0, &cur,
                               ot__view_mut_compact(w->pwork, ode->pwork, 1), ode->user);
    *jcur = cur ? SUNTRUE : SUNFALSE;
    return rc == 0 ? 0
                   : ot__cb_returned(&w->cb, "preconditioner setup", rc, t, OT__CB_RETRY);
}

static int psolve_wrap(sunrealtype t, N_Vector y, N_Vector fy, N_Vector r, N_Vector z,
                       sunrealtype gamma, sunrealtype delta, int lr, void *ud)
{
    (void)fy, (void)delta, (void)lr;
    ot__lanes_worker *w = ud;
    if (ot__cb_stopped(&w->cb))
        return -1;
    const ot_ode *ode = w->plan->ode;
    double *zd = N_VGetArrayPointer(z);
    const int rc = ode->psolve(t, ot__view_compact(N_VGetArrayPointer(y), w->n, 1), w->p,
                               gamma, ot__view_compact(N_VGetArrayPointer(r), w->n, 1),
                               ot__view_mut_compact(zd, w->n, 1),
                               ot__view_mut_compact(w->pwork, ode->pwork, 1), ode->user);
    if (rc != 0)
        return ot__cb_returned(&w->cb, "preconditioner solve", rc, t, OT__CB_RETRY);
    const int fin = ot__cb_finite(&w->cb, "preconditioner solve", "z", zd, w->n, 1,
                                  w->lane, t, OT__CB_RETRY);
    if (fin != 0)
        return fin;
    /* z = 0 for r != 0 is no P^-1 r of an invertible P: GMRES would take
     * it as a solution found. */
    const double *rd = N_VGetArrayPointer(r);
    int zero_z = 1, zero_r = 1;
    for (int64_t i = 0; i < w->n; i++) {
        zero_z &= zd[i] == 0;
        zero_r &= rd[i] == 0;
    }
    return zero_z && !zero_r
               ? ot__cb_note(&w->cb, -1,
                             "preconditioner solve returned z = 0 for r != 0 at t = %g: "
                             "z must solve P z = r for an invertible P",
                             t)
               : 0;
}

static int root_wrap(sunrealtype t, N_Vector y, sunrealtype *g, void *ud)
{
    ot__lanes_worker *w = ud;
    if (ot__cb_stopped(&w->cb))
        return -1;
    const ot_ode *ode = w->plan->ode;
    int rc = ode->root(t, ot__view_compact(N_VGetArrayPointer(y), w->n, 1), w->p,
                       ot__view_mut_compact(g, ode->nroots, 1), ode->user);
    if (rc != 0)
        return ot__cb_returned(&w->cb, "root", rc, t, OT__CB_ROOT);
    return ot__cb_finite(&w->cb, "root", "g", g, ode->nroots, 1, w->lane, t, OT__CB_ROOT);
}

/* The rhs at perturbed (t, y, p) for central differences (kit/sens.h),
 * with call_rhs's rules. Not call_rhs with p as an argument: rhs_wrap
 * through that form cost 0.66 % more instructions on Robertson (callgrind,
 * build/bench/ot_robertson 200 1). */
static int rhs_at(void *ctx, double t, const double *y, const double *p, double *f)
{
    ot__lanes_worker *w = ctx;
    if (ot__cb_stopped(&w->cb))
        return -1;
    const ot_ode *ode = w->plan->ode;
    const int rc =
        ode->rhs(t, ot__view_compact(y, w->n, 1), ot__view_compact(p, w->plan->np, 1),
                 ot__view_mut_compact(f, w->n, 1), ode->user);
    if (rc != 0)
        return ot__cb_returned(&w->cb, "rhs", rc, t, OT__CB_RETRY);
    return ot__cb_finite(&w->cb, "rhs", "dydt", f, w->n, 1, w->lane, t, OT__CB_RETRY);
}

/* Every sensitivity's rhs at once in place of CVODES' difference
 * quotients: with ot_ode_set_dfdp J s_j + df/dp_j (kit/sens.h), or through
 * events (run/sens_jump.h) along P_j, d f/dp P_j, or without dfdp central
 * differences along (s_j, P_j), as lockstep's. */
static int sens_rhs_wrap(int ns, sunrealtype t, N_Vector y, N_Vector ydot, N_Vector *yS,
                         N_Vector *ySdot, void *ud, N_Vector t1, N_Vector t2)
{
    (void)ydot, (void)t1, (void)t2;
    ot__lanes_worker *w = ud;
    if (ot__cb_stopped(&w->cb))
        return -1;
    const int64_t n = w->n, np = w->plan->np;
    if (w->plan->ode->dfdp == NULL) {
        const ot__central_space sp = {1,         n,         np,        n,
                                      w->sdq[0], w->sdq[1], w->sdq[3], w->sdq[2]};
        for (int j = 0; j < ns; j++) {
            const int rc = ot__central(
                rhs_at, w, &sp, t, N_VGetArrayPointer(y), N_VGetArrayPointer(yS[j]),
                w->pbuf, j, ot__sens_dir(&w->unit, j), N_VGetArrayPointer(ySdot[j]));
            w->dq_evals += 2; /* counted with the Jacobian's, as lockstep does */
            if (rc != 0)
                return rc;
        }
        return 0;
    }
    const int rc = ot__sens_derivatives(
        &w->cb, w->plan->ode, t, ot__view_compact(N_VGetArrayPointer(y), n, 1), w->p,
        w->jac_scratch, w->dfdp_scratch, 1, w->lane, &w->sens_first);
    if (rc != 0)
        return rc;
    for (int j = 0; j < ns; j++) { /* after the np parameters': initial values */
        const double *dir = ot__sens_dir(&w->unit, j);
        ot__sens_jv_plus(w->jac_scratch, N_VGetArrayPointer(yS[j]),
                         j < np && !dir ? w->dfdp_scratch + (int64_t)j * n : NULL,
                         N_VGetArrayPointer(ySdot[j]), n);
        if (dir)
            ot__sens_dp_plus(w->dfdp_scratch, dir, N_VGetArrayPointer(ySdot[j]), n, np);
    }
    return 0;
}

/* ---- Creation ------------------------------------------------------------- */

/* The CVODE setup shared by every lane: method, solvers, tolerances, options,
 * roots and sensitivities. */
static int configure(ot__lanes_worker *w)
{
    const ot__plan *pl = w->plan;
    const ot_ode *ode = pl->ode;
    static const ot__ig_callbacks cbs = {rhs_wrap, rhs_explicit_wrap, jac_wrap,
                                         root_wrap};
    int f = ot__ig_create(&w->ig, ode, &cbs, pl->t0, w->y, w->ctx);
    void *cv = w->ig.mem;
    if (!f && ode->atol_vec) {
        if ((w->atolv = OT__SUN_NEW(N_VNew_Serial(w->n, w->ctx))) == NULL)
            return OT_ERR_NOMEM;
        memcpy(N_VGetArrayPointer(w->atolv), ode->atol_vec,
               (size_t)w->n * sizeof(double));
    }
    CVLsJacFn jac = jac_wrap; /* dense: the user's, or our difference quotients */
    if (!f && w->ig.m->implicit && ode->linsol == OT_LINSOL_BAND) {
        w->A = OT__SUN_NEW(SUNBandMatrix(w->n, ode->mupper, ode->mlower, w->ctx));
        w->LS = w->A ? OT__SUN_NEW(SUNLinSol_Band(w->y, w->A, w->ctx)) : NULL;
        jac = ode->jac ? jac_band_wrap : NULL; /* NULL: SUNDIALS' band DQ */
    } else if (!f && w->ig.m->implicit && ode->linsol == OT_LINSOL_GMRES) {
        w->LS = OT__SUN_NEW(SUNLinSol_SPGMR(w->y,
                                            ode->psetup ? SUN_PREC_RIGHT : SUN_PREC_NONE,
                                            ode->krylov_maxl, w->ctx));
        jac = NULL; /* matrix-free */
    } else if (!f && w->ig.m->implicit) {
        w->A = OT__SUN_NEW(SUNDenseMatrix(w->n, w->n, w->ctx));
        w->LS = w->A ? OT__SUN_NEW(SUNLinSol_Dense(w->y, w->A, w->ctx)) : NULL;
    }
    f = f ? f
          : ot__ig_setup(&w->ig, pl, w, &w->cb, w->atolv, w->A, w->LS, jac, w->y, w->ctx,
                         &w->NLS, ode->nroots, root_wrap, ode->root_dir);
    if (!f && w->LS && ode->psetup)
        f = ot__ig_set_preconditioner(&w->ig, psetup_wrap, psolve_wrap);
    if (!f && pl->kind == OT__SENS) {
        /* ns = np, + n sensitivities to initial values (sens_initial):
         * CVODES' difference quotients perturb p[plist[j]], so theirs
         * point at pbuf[2 np], a slot rhs never sees (J s alone). */
        const int np = (int)pl->np, ns = (int)pl->ns;
        w->yS = ot__nv_clone_array(ns, w->y, 1);
        if (w->yS == NULL)
            return OT_ERR_NOMEM;
        for (int j = 0; j < ns; j++) {
            N_VSetArrayPointer(w->yS0 + (size_t)j * (size_t)w->n, w->yS[j]);
            N_VConst(0.0, w->yS[j]);
            if (j < np)
                w->pbuf[j] = 1.0; /* real values come with each lane */
            w->pbar[j] = 1.0;
            w->plist[j] = j < np ? j : 2 * np;
        }
        w->pbuf[2 * np] = 1.0;
        /* Ours with derivatives or through events; else CVODES' own, as raw
         * CVODES. */
        const int ours = ode->dfdp || ot__sens_jumps(pl);
        f = OT__SUN_CALL(ours ? CVodeSensInit(cv, ns, CV_STAGGERED, sens_rhs_wrap, w->yS)
                              : CVodeSensInit1(cv, ns, CV_STAGGERED, NULL, w->yS),
                         CV_MEM_FAIL);
        f = f ? f
              : CVodeSetSensParams(cv, w->pbuf, w->pbar,
                                   ode->sens_initial ? w->plist : NULL);
        /* With our rhs, the tolerances lockstep uses (kit/sens.h), set for
         * each lane; without, CVODES' own estimate as raw CVODES. */
        if (!f && ours && ot__sens_estimated(ode) &&
            (w->atolS = ot__nv_clone_array(ns, w->y, 0)) == NULL)
            return OT_ERR_NOMEM;
        for (int j = 0; w->atolS && j < ns; j++)
            N_VConst(0.0, w->atolS[j]);
        f = f ? f : ot__cv_sens_setup(cv, ode, ns, w->y, w->atolS, w->ctx, &w->NLSsens);
    }
    if (!f && pl->kind == OT__ADJ)
        return ot__lanes_adjoint_setup(w);
    if (f == CV_MEM_FAIL)
        return OT_ERR_NOMEM;
    return f ? OT_ERR_SOLVER : OT_OK;
}

/* The worker's SUNDIALS part (its context, vectors over its scratch, the
 * integrator and its solvers), under w->scope. */
static int build_sundials(void *arg)
{
    ot__lanes_worker *w = arg;
    if (OT__SUN_CALL(ot__sun_context_new(&w->ctx, &w->cb), -1) != 0)
        return OT_ERR_NOMEM;
    w->y = OT__SUN_NEW(N_VMake_Serial(w->n, w->ys_scratch, w->ctx));
    w->y0 = w->y ? OT__SUN_NEW(N_VMake_Serial(w->n, w->y0_scratch, w->ctx)) : NULL;
    if (w->y0 == NULL)
        return OT_ERR_NOMEM;
    N_VConst(0.0, w->y);
    return configure(w);
}

static int make_sundials(ot__lanes_worker *w)
{
    const int st = ot__sun_protect(&w->scope, build_sundials, w);
    return st == OT__SUN_NOMEM ? OT_ERR_NOMEM : st;
}

/* Frees the SUNDIALS part: through SUNDIALS' destructors, or, when memory
 * ran out inside SUNDIALS (its objects may be half built), by releasing the
 * scope, without a call into SUNDIALS. */
static void drop_sundials(ot__lanes_worker *w)
{
    const int alive = !w->scope.failed;
    if (alive) {
        const ot__ig_parts parts = {w->yS, w->atolS, (int)w->plan->ns, w->LS,
                                    w->A,  w->NLS,   w->NLSsens};
        ot__ig_free_all(&w->ig, &parts);
    }
    ot__run_adj_free(w->adj, alive); /* after CVodeFree, which frees CVODES' part */
    if (alive) {
        N_VDestroy(w->atolv);
        N_VDestroy(w->y);
        N_VDestroy(w->y0);
        SUNContext_Free(&w->ctx);
    }
    ot__sun_scope_release(&w->scope);
    memset(&w->ig, 0, sizeof w->ig);
    w->ctx = NULL;
    w->y = w->y0 = w->atolv = NULL;
    w->A = NULL;
    w->LS = NULL;
    w->NLS = w->NLSsens = NULL;
    w->yS = w->atolS = NULL;
    w->adj = NULL;
}

int ot__lanes_worker_renew(ot__lanes_worker *w)
{
    drop_sundials(w);
    ot__cb_reset(&w->cb);
    const int st = make_sundials(w);
    if (st != OT_OK) {
        drop_sundials(w);
        w->broken = 1;
    }
    return st == OT_OK ? OT_OK : OT_ERR_NOMEM;
}

int ot__lanes_worker_new(ot__lanes_worker **out, const ot__plan *pl)
{
    ot__lanes_worker *w = OT__CALLOC(1, sizeof *w);
    if (w == NULL)
        return ot__fail(OT_ERR_NOMEM, "solve: cannot allocate a worker");
    ot__sun_scope_init(&w->scope);
    w->plan = pl;
    w->n = pl->n;
    w->cb.cancel = pl->prog ? &pl->prog->cancelled : NULL;
    w->cb.prog = pl->prog;
    w->steps.width = pl->rows;
    const size_t n = (size_t)pl->n, np = (size_t)pl->np, rows = (size_t)pl->rows;
    /* scratch: ys, y0, yp, ym (n each); out, diff (rows each); for sens, the
     * sensitivities and their initial values (ns * n each), and with dfdp
     * the Jacobian and df/dp (n * n, n * np; one double for what is not
     * used, so that every pointer is a live allocation). */
    const size_t ns = pl->kind == OT__SENS  ? (size_t)pl->ns * n + 1
                      : pl->kind == OT__ADJ ? np * n + 1
                                            : 1;
    const int derivs = pl->kind == OT__SENS && pl->ode->dfdp != NULL;
    double **const slots[14] = {&w->ys_scratch,   &w->y0_scratch,  &w->yp_scratch,
                                &w->ym_scratch,   &w->out_scratch, &w->diff_scratch,
                                &w->sens_scratch, &w->yS0,         &w->jac_scratch,
                                &w->dfdp_scratch, &w->sdq[0],      &w->sdq[1],
                                &w->sdq[2],       &w->sdq[3]};
    /* Views handed to callbacks end where their allocation ends (jac
     * [n, n], dfdp [n, np], the preconditioner's work), so that ASan and
     * valgrind see a write past one. */
    const int dq = pl->kind == OT__SENS && pl->ode->dfdp == NULL && ot__sens_jumps(pl);
    const size_t sizes[14] = {n,
                              n,
                              n,
                              n,
                              rows,
                              rows,
                              ns,
                              ns,
                              derivs ? n * n : 1,
                              derivs && np ? n * np : 1,
                              dq ? n : 1,
                              dq ? n : 1,
                              dq ? n : 1,
                              dq ? np + 1 : 1};
    int ok = 1;
    for (int i = 0; i < 14; i++)
        ok &= (*slots[i] = OT__MALLOC(sizes[i] * sizeof(double))) != NULL;
    w->pbuf = OT__MALLOC((2 * np + 1) * sizeof(double));
    w->pwork = OT__MALLOC((pl->ode->pwork ? (size_t)pl->ode->pwork : 1) * sizeof(double));
    w->pbar = OT__MALLOC(((size_t)pl->ns + np + 1) * sizeof(double));
    w->plist = OT__MALLOC(((size_t)pl->ns + 1) * sizeof(int));
    w->rootsfound = OT__MALLOC(((size_t)pl->ode->nroots + 1) * sizeof(int));
    w->ev_scratch = OT__MALLOC(n * sizeof(double) + 1);
    int st = OT_ERR_NOMEM;
    if (ok && w->pbuf && w->pbar && w->plist && w->pwork && w->rootsfound &&
        w->ev_scratch)
        st = make_sundials(w);
    if (st != OT_OK) {
        const int nomem = st == OT_ERR_NOMEM;
        char msg[sizeof w->cb.cv_msg];
        memcpy(msg, w->cb.cv_msg, sizeof msg);
        ot__lanes_worker_free(w);
        const char *which = ot__method(pl->ode->method)->ark ? "ARKODE" : "CVODE";
        return nomem
                   ? ot__fail(OT_ERR_NOMEM, "solve: cannot allocate the %s solver", which)
                   : ot__fail(OT_ERR_SOLVER, "solve: %s setup failed: %s", which, msg);
    }
    *out = w;
    return OT_OK;
}

void ot__lanes_worker_free(ot__lanes_worker *w)
{
    if (w == NULL)
        return;
    drop_sundials(w);
    OT__FREE_ALL(w->ys_scratch, w->y0_scratch, w->yp_scratch, w->ym_scratch,
                 w->out_scratch, w->diff_scratch, w->sens_scratch, w->yS0, w->jac_scratch,
                 w->dfdp_scratch, w->sdq[0], w->sdq[1], w->sdq[2], w->sdq[3], w->pbuf,
                 w->pbar, w->plist, w->pwork, w->rootsfound, w->ev_scratch);
    ot__record_free(&w->steps);
    free(w);
}

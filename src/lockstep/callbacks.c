/* Lockstep: CVODE callback wrappers. Each user callback runs once for all
 * lanes on [n, nbatch] views straight over CVODE's vectors. Without a user
 * Jacobian the blocks come from n rhs calls, each perturbing state j in every
 * lane at once; sensitivities use central differences along (s_j, e_j), also
 * all lanes at once. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cvodes/cvodes.h>

#include "lockstep/lockstep.h"

static ot_layout compact(double *d, int64_t rows, int64_t cols, int64_t nb)
{
    ot_layout l;
    memset(&l, 0, sizeof l);
    l.data = d;
    l.dtype = OT_F64;
    l.ndim = cols > 0 ? 3 : 2;
    l.device.type = OT_CPU;
    l.shape[0] = rows;
    l.shape[1] = cols > 0 ? cols : nb;
    l.shape[2] = cols > 0 ? nb : 1;
    l.strides[0] = 8;
    l.strides[1] = 8 * (rows > 0 ? rows : 1);
    l.strides[2] = l.strides[1] * (l.shape[1] > 0 ? l.shape[1] : 1);
    return l;
}

ot_view ot__ls_view(const double *d, int64_t rows, int64_t nb)
{
    ot_view v;
    v.layout = compact((double *)(uintptr_t)d, rows, 0, nb);
    return v;
}

ot_view_mut ot__ls_mut(double *d, int64_t rows, int64_t nb)
{
    ot_view_mut v;
    v.layout = compact(d, rows, 0, nb);
    return v;
}

double ot__ls_fd_step(double v) { return cbrt(DBL_EPSILON) * fmax(fabs(v), 1.0); }

/* As in lanes mode: after a callback returned < 0 every wrapper fails at
 * once (CVODE's fixed-point iteration would otherwise retry with ever smaller
 * steps), and NaN/Inf is recoverable only NAN_RETRIES times. */
enum { NAN_RETRIES = 20 };

static int note(ot__lockstep *L, int rc, const char *what, double t)
{
    L->cb_failed = rc < 0 ? 2 : (L->cb_failed ? L->cb_failed : 1);
    snprintf(L->cb_msg, sizeof L->cb_msg, "%s at t = %g", what, t);
    return rc;
}

/* Maps a user return code; < 0 stops the batch, > 0 asks for a retry where
 * CVODE can retry (not for root functions: any nonzero stops). */
static int user_rc(ot__lockstep *L, const char *cb, int rc, double t, int can_retry)
{
    char what[96];
    snprintf(what, sizeof what, "%s returned %d%s", cb, rc,
             rc > 0 && !can_retry ? " (a root function cannot ask for a retry)" : "");
    return note(L, rc < 0 || !can_retry ? -1 : 1, what, t);
}

/* Finds NaN/Inf in [rows, nb]; names the lane in the message. */
static int check_finite(ot__lockstep *L, const char *cb, const double *v, int64_t rows,
                        double t)
{
    for (int64_t k = 0; k < rows * L->nb; k++)
        if (!isfinite(v[k])) {
            char what[96];
            snprintf(what, sizeof what, "%s wrote NaN or Inf in lane %lld (row %lld)", cb,
                     (long long)(k / rows), (long long)(k % rows));
            return note(L, ++L->nan_count > NAN_RETRIES ? -1 : 1, what, t);
        }
    return 0;
}

/* A lane stopped by a root stands still: zero derivative. */
static void zero_stopped(const ot__lockstep *L, double *v, int64_t rows)
{
    for (int64_t b = 0; b < L->nb; b++)
        if (L->stopped[b])
            memset(v + b * rows, 0, (size_t)rows * sizeof *v);
}

/* The user's rhs at (t, y, params), then zeroing of stopped lanes. */
static int call_rhs(ot__lockstep *L, double t, const double *y, const double *p,
                    double *dydt)
{
    const ot_ode *ode = L->plan->ode;
    if (L->cb_failed == 2)
        return -1;
    int rc = ode->rhs(t, ot__ls_view(y, L->n, L->nb), ot__ls_view(p, L->np, L->nb),
                      ot__ls_mut(dydt, L->n, L->nb), ode->user);
    if (rc != 0)
        return user_rc(L, "rhs", rc, t, 1);
    zero_stopped(L, dydt, L->n);
    return check_finite(L, "rhs", dydt, L->n, t);
}

int ot__ls_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *ud)
{
    ot__lockstep *L = ud;
    return call_rhs(L, t, N_VGetArrayPointer(y), L->p, N_VGetArrayPointer(ydot));
}

/* Difference-quotient blocks as CVODE's dense DQ forms them, per lane:
 * inc = max(sqrt(eps) |y_j|, min_inc / ewt_j) with min_inc from the lane's
 * norm of f. */
static int dq_jac(ot__lockstep *L, double t, N_Vector y, N_Vector fy, double *a,
                  N_Vector ytmp, N_Vector ftmp)
{
    const int64_t n = L->n, nb = L->nb;
    const double srur = sqrt(DBL_EPSILON);
    double h = 0;
    CVodeGetCurrentStep(L->cv, &h);
    CVodeGetErrWeights(L->cv, L->ewt);
    const double *yd = N_VGetArrayPointer(y), *fd = N_VGetArrayPointer(fy);
    const double *w = N_VGetArrayPointer(L->ewt);
    double *yt = N_VGetArrayPointer(ytmp), *ft = N_VGetArrayPointer(ftmp);
    memcpy(yt, yd, (size_t)(n * nb) * sizeof *yt);
    for (int64_t j = 0; j < n; j++) {
        for (int64_t b = 0; b < nb; b++) {
            double fnorm = 0;
            for (int64_t i = b * n; i < (b + 1) * n; i++)
                fnorm += (fd[i] * w[i]) * (fd[i] * w[i]);
            fnorm = sqrt(fnorm / (double)n);
            const double min_inc =
                fnorm != 0 ? 1000 * fabs(h) * DBL_EPSILON * (double)n * fnorm : 1.0;
            const int64_t k = b * n + j;
            L->inc[b] = fmax(srur * fabs(yd[k]), min_inc / w[k]);
            yt[k] = yd[k] + L->inc[b];
        }
        int rc = call_rhs(L, t, yt, L->p, ft);
        L->dq_rhs_evals++;
        if (rc != 0)
            return rc;
        for (int64_t b = 0; b < nb; b++) {
            double *col = a + b * n * n + j * n;
            for (int64_t i = 0; i < n; i++)
                col[i] = (ft[b * n + i] - fd[b * n + i]) / L->inc[b];
            yt[b * n + j] = yd[b * n + j];
        }
    }
    return 0;
}

int ot__ls_jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud, N_Vector t1,
               N_Vector t2, N_Vector t3)
{
    (void)t3;
    ot__lockstep *L = ud;
    const ot_ode *ode = L->plan->ode;
    const int64_t n = L->n;
    double *a = ot__block_matrix_data(J);
    int rc;
    if (L->cb_failed == 2)
        return -1;
    if (ode->jac) {
        ot_view_mut jv;
        jv.layout = ot__ls_mut(a, n, L->nb).layout;
        jv.layout.ndim = 3;
        jv.layout.shape[1] = n;
        jv.layout.shape[2] = L->nb;
        jv.layout.strides[2] = jv.layout.strides[1] * n;
        rc = ode->jac(t, ot__ls_view(N_VGetArrayPointer(y), n, L->nb),
                      ot__ls_view(L->p, L->np, L->nb), jv, ode->user);
        if (rc != 0)
            return user_rc(L, "jac", rc, t, 1);
    } else if ((rc = dq_jac(L, t, y, fy, a, t1, t2)) != 0) {
        return rc;
    }
    zero_stopped(L, a, n * n);
    return check_finite(L, "jac", a, n * n, t);
}

int ot__ls_root(sunrealtype t, N_Vector y, sunrealtype *g, void *ud)
{
    ot__lockstep *L = ud;
    const ot_ode *ode = L->plan->ode;
    const int64_t nr = ode->nroots;
    if (L->cb_failed == 2)
        return -1;
    int rc =
        ode->root(t, ot__ls_view(N_VGetArrayPointer(y), L->n, L->nb),
                  ot__ls_view(L->p, L->np, L->nb), ot__ls_mut(g, nr, L->nb), ode->user);
    if (rc != 0)
        return user_rc(L, "root", rc, t, 0);
    for (int64_t b = 0; b < L->nb; b++)
        if (L->stopped[b]) /* a stopped lane has no more events */
            for (int64_t r = 0; r < nr; r++)
                g[b * nr + r] = 1.0;
    return check_finite(L, "root", g, nr, t) ? -1 : 0;
}

/* ySdot_j = (f(y + h s_j, p + h e_j) - f(y - h s_j, p - h e_j)) / 2h, with
 * h per lane from the parameter's size. */
int ot__ls_sens_rhs(int ns, sunrealtype t, N_Vector y, N_Vector ydot, N_Vector *yS,
                    N_Vector *ySdot, void *ud, N_Vector t1, N_Vector t2)
{
    (void)ydot, (void)t1, (void)t2;
    ot__lockstep *L = ud;
    const int64_t n = L->n, nb = L->nb, np = L->np;
    const double *yd = N_VGetArrayPointer(y);
    for (int j = 0; j < ns; j++) {
        const double *s = N_VGetArrayPointer(yS[j]);
        double *out = N_VGetArrayPointer(ySdot[j]);
        memcpy(L->pp, L->p, (size_t)(np * nb) * sizeof *L->pp);
        for (int64_t b = 0; b < nb; b++) {
            const double h = ot__ls_fd_step(L->p[b * np + j]);
            L->inc[b] = h;
            for (int64_t i = b * n; i < (b + 1) * n; i++) {
                L->yp[i] = yd[i] + h * s[i];
                L->ym[i] = yd[i] - h * s[i];
            }
            L->pp[b * np + j] = L->p[b * np + j] + h;
        }
        int rc = call_rhs(L, t, L->yp, L->pp, out);
        for (int64_t b = 0; b < nb; b++)
            L->pp[b * np + j] = L->p[b * np + j] - L->inc[b];
        if (rc == 0)
            rc = call_rhs(L, t, L->ym, L->pp, L->yp);
        L->dq_rhs_evals += 2;
        if (rc != 0)
            return rc;
        for (int64_t b = 0; b < nb; b++)
            for (int64_t i = b * n; i < (b + 1) * n; i++)
                out[i] = (out[i] - L->yp[i]) / (2 * L->inc[b]);
    }
    return 0;
}

void ot__ls_err(int code, const char *module, const char *function, char *msg, void *ud)
{
    ot__lockstep *L = ud;
    (void)code;
    snprintf(L->cv_msg, sizeof L->cv_msg, "%s/%s: %s", module, function, msg);
}

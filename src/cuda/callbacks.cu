/* CVODE callbacks of the CUDA lockstep backend: user callbacks run once for
 * all lanes on device views; difference quotients perturb every lane at once
 * with kernels. Mirrors the CPU wrappers in lockstep_callbacks.c. */
#include <cvodes/cvodes.h>
#include <stdio.h>

#include "cuda/cuda_impl.h"

namespace
{

ot__cuda_state *state(const ot__lockstep *L) { return (ot__cuda_state *)L->dev; }

int note(ot__lockstep *L, int rc, const char *what, double t)
{
    L->cb_failed = rc < 0 ? 2 : (L->cb_failed ? L->cb_failed : 1);
    snprintf(L->cb_msg, sizeof L->cb_msg, "%s at t = %g", what, t);
    return rc;
}

/* A user return code, then any launch error the callback left behind. */
int after_user(ot__lockstep *L, const char *cb, int rc, double t, bool can_retry = true)
{
    char what[128];
    if (rc != 0) {
        snprintf(what, sizeof what, "%s returned %d%s", cb, rc,
                 rc > 0 && !can_retry ? " (a root function cannot ask for a retry)" : "");
        return note(L, rc < 0 || !can_retry ? -1 : 1, what, t);
    }
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        snprintf(what, sizeof what, "%s left a CUDA error: %s", cb,
                 cudaGetErrorString(e));
        return note(L, -1, what, t);
    }
    return 0;
}

int call_rhs(ot__lockstep *L, double t, const double *y, const double *p, double *dydt)
{
    const ot_ode *ode = L->plan->ode;
    if (L->cb_failed == 2)
        return -1;
    int rc = ode->rhs(t, ot__cuda_view(L, y, L->n), ot__cuda_view(L, p, L->np),
                      ot__cuda_mut(L, dydt, L->n), ode->user);
    rc = after_user(L, "rhs", rc, t);
    if (rc == 0 && state(L)->any_stopped)
        ot__cuda_zero_masked(dydt, state(L)->mask, L->n, L->nb);
    return rc;
}

} // namespace

static ot_layout device_layout(const ot__lockstep *L, const double *d, int64_t rows)
{
    ot_layout l = ot__ls_view(d, rows, L->nb).layout;
    l.device.type = OT_CUDA;
    l.device.id = state(L)->device;
    return l;
}

ot_view ot__cuda_view(const ot__lockstep *L, const double *d, int64_t rows)
{
    ot_view v;
    v.layout = device_layout(L, d, rows);
    return v;
}

ot_view_mut ot__cuda_mut(const ot__lockstep *L, double *d, int64_t rows)
{
    ot_view_mut v;
    v.layout = device_layout(L, d, rows);
    return v;
}

int ot__cuda_check(ot__lockstep *L, cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    snprintf(L->cv_msg, sizeof L->cv_msg, "CUDA %s: %s", what, cudaGetErrorString(e));
    return -1;
}

int ot__cuda_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *ud)
{
    ot__lockstep *L = (ot__lockstep *)ud;
    return call_rhs(L, t, ot__dptr(y), state(L)->p, ot__dptr(ydot));
}

int ot__cuda_jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud,
                 N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)t3;
    ot__lockstep *L = (ot__lockstep *)ud;
    ot__cuda_state *S = state(L);
    const ot_ode *ode = L->plan->ode;
    const int64_t n = L->n, nb = L->nb;
    double *a = ot__cuda_block_data(J);
    if (L->cb_failed == 2)
        return -1;
    if (ode->jac) {
        ot_view_mut jv = ot__cuda_mut(L, a, n);
        jv.layout.ndim = 3;
        jv.layout.shape[1] = n;
        jv.layout.shape[2] = nb;
        jv.layout.strides[2] = jv.layout.strides[1] * n;
        int rc = ode->jac(t, ot__cuda_view(L, ot__dptr(y), n),
                          ot__cuda_view(L, S->p, L->np), jv, ode->user);
        if ((rc = after_user(L, "jac", rc, t)) != 0)
            return rc;
    } else {
        /* CVODE's dense DQ, every lane at once: n rhs calls. */
        double h = 0;
        CVodeGetCurrentStep(L->cv, &h);
        CVodeGetErrWeights(L->cv, L->ewt);
        double *yt = ot__dptr(t1), *ft = ot__dptr(t2);
        const double *yd = ot__dptr(y), *fd = ot__dptr(fy);
        if (ot__cuda_check(L,
                           cudaMemcpyAsync(yt, yd, (size_t)(n * nb) * sizeof(double),
                                           cudaMemcpyDeviceToDevice),
                           "copy") != 0)
            return -1;
        for (int64_t j = 0; j < n; j++) {
            ot__cuda_dq_perturb(yd, fd, ot__dptr(L->ewt), yt, S->inc, n, nb, j, h);
            int rc = call_rhs(L, t, yt, S->p, ft);
            L->dq_rhs_evals++;
            if (rc != 0)
                return rc;
            ot__cuda_dq_column(ft, fd, S->inc, yd, yt, a, n, nb, j);
        }
    }
    if (S->any_stopped)
        ot__cuda_zero_masked(a, S->mask, n * n, nb);
    return ot__cuda_check(L, cudaGetLastError(), "jac kernels") ? -1 : 0;
}

int ot__cuda_root(sunrealtype t, N_Vector y, sunrealtype *g, void *ud)
{
    ot__lockstep *L = (ot__lockstep *)ud;
    ot__cuda_state *S = state(L);
    const ot_ode *ode = L->plan->ode;
    const int64_t nr = ode->nroots;
    if (L->cb_failed == 2)
        return -1;
    int rc =
        ode->root(t, ot__cuda_view(L, ot__dptr(y), L->n), ot__cuda_view(L, S->p, L->np),
                  ot__cuda_mut(L, S->g, nr), ode->user);
    if ((rc = after_user(L, "root", rc, t, false)) != 0)
        return -1;
    if (ot__cuda_check(
            L,
            cudaMemcpy(g, S->g, (size_t)(nr * L->nb) * sizeof *g, cudaMemcpyDeviceToHost),
            "root copy") != 0)
        return -1;
    for (int64_t b = 0; b < L->nb; b++)
        if (L->stopped[b]) /* a stopped lane has no more events */
            for (int64_t r = 0; r < nr; r++)
                g[b * nr + r] = 1.0;
    return 0;
}

/* ySdot_j = (f(y + h s_j, p + h e_j) - f(y - h s_j, p - h e_j)) / 2h. */
int ot__cuda_sens_rhs(int ns, sunrealtype t, N_Vector y, N_Vector ydot, N_Vector *yS,
                      N_Vector *ySdot, void *ud, N_Vector t1, N_Vector t2)
{
    (void)ydot, (void)t1, (void)t2;
    ot__lockstep *L = (ot__lockstep *)ud;
    ot__cuda_state *S = state(L);
    for (int j = 0; j < ns; j++) {
        double *out = ot__dptr(ySdot[j]);
        ot__cuda_fd_prepare(ot__dptr(y), ot__dptr(yS[j]), S->p, S->yp, S->ym, S->pp,
                            S->inc, L->n, L->np, L->nb, j);
        int rc = call_rhs(L, t, S->yp, S->pp, out);
        ot__cuda_fd_minus(S->p, S->pp, S->inc, L->np, L->nb, j);
        if (rc == 0)
            rc = call_rhs(L, t, S->ym, S->pp, S->yp);
        L->dq_rhs_evals += 2;
        if (rc != 0)
            return rc;
        ot__cuda_fd_combine(out, S->yp, S->inc, L->n, L->nb);
    }
    return ot__cuda_check(L, cudaGetLastError(), "sensitivity kernels") ? -1 : 0;
}

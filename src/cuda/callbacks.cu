/* CVODE callbacks of the CUDA lockstep backend: user callbacks run once for
 * all lanes on device views; difference quotients perturb every lane at once
 * with kernels. The failure rules are kit/callback.c's; what is CUDA's
 * own is a launch error a callback leaves behind. */
#include <cvodes/cvodes.h>
#include <stdio.h>

#include "cuda/cuda_impl.h"
#include "tensor/tensor_impl.h"

namespace
{

ot__cuda_state *state(const ot__lockstep *L) { return (ot__cuda_state *)L->dev; }

/* A user return code, then any launch error the callback left behind. */
int after_user(ot__lockstep *L, const char *cb, int rc, double t,
               ot__cb_kind kind = OT__CB_RETRY)
{
    if (rc != 0)
        return ot__cb_returned(&L->cb, cb, rc, t, kind);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return ot__cb_note(&L->cb, -1, "%s left a CUDA error: %s at t = %g", cb,
                           cudaGetErrorString(e), t);
    return 0;
}

} // namespace

void ot__cuda_poison_first(ot__lockstep *L, unsigned which, double *v, int64_t count)
{
    if (L->poisoned & which)
        return;
    L->poisoned |= which;
    ot__cuda_poison(v, count);
}

int ot__cuda_finite(ot__lockstep *L, const char *name, const char *target,
                    const double *v, int64_t rows, double t, ot__cb_kind kind)
{
    int64_t k = -1;
    double value = 0;
    if (ot__cuda_check(
            L, ot__cuda_first_nonfinite(v, rows * L->nbatch, state(L)->bad, &k, &value),
            "NaN check") != 0)
        return -1;
    return k < 0 ? 0
                 : ot__cb_nonfinite_at(&L->cb, name, target, k, value, rows, L->lane0, t,
                                       kind);
}

namespace
{

int call_rhs(ot__lockstep *L, double t, const double *y, const double *p, double *dydt)
{
    const ot_ode *ode = L->plan->ode;
    if (ot__cb_stopped(&L->cb))
        return -1;
    ot__cuda_poison_first(L, OT__POISONED_RHS, dydt, L->n * L->nbatch);
    int rc = ode->rhs(t, ot__cuda_view(L, y, L->n), ot__cuda_view(L, p, L->np),
                      ot__cuda_mut(L, dydt, L->n), ode->user);
    rc = after_user(L, "rhs", rc, t);
    if (rc == 0 && state(L)->any_stopped)
        ot__cuda_zero_masked(dydt, state(L)->mask, L->n, L->nbatch);
    return rc == 0 ? ot__cuda_finite(L, "rhs", "dydt", dydt, L->n, t, OT__CB_RETRY) : rc;
}

} // namespace

static ot_layout device_layout(const ot__lockstep *L, const double *d, int64_t rows,
                               int64_t cols = 0)
{
    const ot_device dev = {OT_CUDA, state(L)->device};
    return ot__layout_compact(d, rows, cols, L->nbatch, dev);
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
    snprintf(L->cb.cv_msg, sizeof L->cb.cv_msg, "CUDA %s: %s", what,
             cudaGetErrorString(e));
    return -1;
}

static int rhs_cb(sunrealtype t, N_Vector y, N_Vector ydot, void *ud)
{
    ot__lockstep *L = (ot__lockstep *)ud;
    return call_rhs(L, t, ot__dptr(y), state(L)->p, ot__dptr(ydot));
}

static int jac_cb(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud,
                  N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)t3;
    ot__lockstep *L = (ot__lockstep *)ud;
    ot__cuda_state *S = state(L);
    const ot_ode *ode = L->plan->ode;
    const int64_t n = L->n, nbatch = L->nbatch;
    double *a = ot__lockstep_block_data(J);
    if (ot__cb_stopped(&L->cb))
        return -1;
    if (ode->jac) {
        ot_view_mut jv;
        jv.layout = device_layout(L, a, n, n);
        int rc = ode->jac(t, ot__cuda_view(L, ot__dptr(y), n),
                          ot__cuda_view(L, S->p, L->np), jv, ode->user);
        if ((rc = after_user(L, "jac", rc, t)) != 0)
            return rc;
    } else {
        /* CVODE's dense DQ, every lane at once: n rhs calls. */
        double h = 0;
        ot__ig_dq_inputs(&L->ig, &h, L->ewt);
        double *yt = ot__dptr(t1), *ft = ot__dptr(t2);
        const double *yd = ot__dptr(y), *fd = ot__dptr(fy);
        if (ot__cuda_check(L,
                           cudaMemcpyAsync(yt, yd, (size_t)(n * nbatch) * sizeof(double),
                                           cudaMemcpyDeviceToDevice),
                           "copy") != 0)
            return -1;
        for (int64_t j = 0; j < n; j++) {
            ot__cuda_dq_perturb(yd, fd, ot__dptr(L->ewt), yt, S->inc, n, nbatch, j, h);
            int rc = call_rhs(L, t, yt, S->p, ft);
            L->dq_rhs_evals++;
            if (rc != 0)
                return rc;
            ot__cuda_dq_column(ft, fd, S->inc, yd, yt, a, n, nbatch, j);
        }
    }
    if (S->any_stopped)
        ot__cuda_zero_masked(a, S->mask, n * n, nbatch);
    if (ot__cuda_check(L, cudaGetLastError(), "jac kernels"))
        return -1;
    return ot__cuda_finite(L, "jac", "J", a, n * n, t, OT__CB_RETRY);
}

static int root_cb(sunrealtype t, N_Vector y, sunrealtype *g, void *ud)
{
    ot__lockstep *L = (ot__lockstep *)ud;
    ot__cuda_state *S = state(L);
    const ot_ode *ode = L->plan->ode;
    const int64_t nr = ode->nroots;
    if (ot__cb_stopped(&L->cb))
        return -1;
    ot__cuda_poison_first(L, OT__POISONED_ROOT, S->g, nr * L->nbatch);
    int rc =
        ode->root(t, ot__cuda_view(L, ot__dptr(y), L->n), ot__cuda_view(L, S->p, L->np),
                  ot__cuda_mut(L, S->g, nr), ode->user);
    if ((rc = after_user(L, "root", rc, t, OT__CB_ROOT)) != 0)
        return -1;
    if (ot__cuda_check(L,
                       cudaMemcpy(g, S->g, (size_t)(nr * L->nbatch) * sizeof *g,
                                  cudaMemcpyDeviceToHost),
                       "root copy") != 0)
        return -1;
    for (int64_t b = 0; b < L->nbatch; b++)
        if (L->stopped[b]) /* a stopped lane has no more events */
            for (int64_t r = 0; r < nr; r++)
                g[b * nr + r] = 1.0;
    return ot__cb_finite(&L->cb, "root", "g", g, nr, L->nbatch, L->lane0, t, OT__CB_ROOT);
}

/* ySdot_j = (f(y + h s_j, p + h e_j) - f(y - h s_j, p - h e_j)) / 2h. */
static int sens_rhs_cb(int ns, sunrealtype t, N_Vector y, N_Vector ydot, N_Vector *yS,
                       N_Vector *ySdot, void *ud, N_Vector t1, N_Vector t2)
{
    (void)ydot, (void)t1, (void)t2;
    ot__lockstep *L = (ot__lockstep *)ud;
    ot__cuda_state *S = state(L);
    for (int j = 0; j < ns; j++) {
        double *out = ot__dptr(ySdot[j]);
        ot__cuda_fd_prepare(ot__dptr(y), ot__dptr(yS[j]), S->p, S->yp, S->ym, S->pp,
                            S->inc, L->n, L->np, L->nbatch, j);
        int rc = call_rhs(L, t, S->yp, S->pp, out);
        ot__cuda_fd_minus(S->p, S->pp, S->inc, L->np, L->nbatch, j);
        if (rc == 0)
            rc = call_rhs(L, t, S->ym, S->pp, S->yp);
        L->dq_rhs_evals += 2;
        if (rc != 0)
            return rc;
        ot__cuda_fd_combine(out, S->yp, S->inc, L->n, L->nbatch);
    }
    return ot__cuda_check(L, cudaGetLastError(), "sensitivity kernels") ? -1 : 0;
}

const ot__lockstep_callbacks ot__cuda_callbacks = {
    .rhs = rhs_cb,
    .jac = jac_cb,
    .root = root_cb,
    .sens_rhs = sens_rhs_cb,
    .rhs_explicit = NULL, /* ARKODE's methods are refused on CUDA (plan.c) */
    .quad = NULL,         /* so is the adjoint (the solver table) */
};

/* Lockstep on the CPU: the integrator's callback wrappers. Each user callback runs once
 * for all lanes on [n, nbatch] views straight over CVODE's vectors. Without
 * a user Jacobian the blocks come from n rhs calls, each perturbing state j
 * in every lane at once; sensitivities use central differences along
 * (s_j, e_j), also all lanes at once, or with dfdp are J s_j + df/dp_j
 * (kit/sens.h). The failure rules are
 * kit/callback.c's, the increments kit/dq.h's. */
#include <string.h>

#include <cvodes/cvodes.h>

#include "lockstep/lockstep.h"
#include "run/adjoint.h"
#include "run/sens_jump.h"
#include "kit/dq.h"
#include "kit/sens.h"
#include "tensor/tensor_impl.h"

/* A lane stopped by a root stands still: zero derivative. */
static void zero_stopped(const ot__lockstep *L, double *v, int64_t rows)
{
    for (int64_t b = 0; b < L->nbatch; b++)
        if (L->stopped[b])
            memset(v + b * rows, 0, (size_t)rows * sizeof *v);
}

/* The user's rhs (or with `explicit` an IMEX split's explicit part) at
 * (t, y, params), then zeroing of stopped lanes. A lane whose rhs fails
 * (< 0, or NaN/Inf that does not recover) leaves the block (alone.c). */
int ot__lockstep_call_rhs(ot__lockstep *L, int explicit, double t, const double *y,
                          const double *p, double *dydt)
{
    const ot_ode *ode = L->plan->ode;
    const char *name = explicit ? "rhs_explicit" : "rhs";
    if (ot__cb_stopped(&L->cb))
        return -1;
    ot__lockstep_poison_first(&L->poisoned,
                              explicit ? OT__POISONED_RHS_EXPLICIT : OT__POISONED_RHS,
                              dydt, L->n * L->nbatch);
    ot__lockstep_cb_call c = {
        explicit ? ode->rhs_explicit : ode->rhs, t, y, p, dydt, L->n, 0};
    const int rc = ot__lockstep_call(L, name, t, OT__CB_RETRY, ot__lockstep_run_call, &c);
    if (rc != 0)
        return rc;
    zero_stopped(L, dydt, L->n);
    return ot__lockstep_isolate_nonfinite(L, name, "dydt", dydt, L->n, t, OT__CB_RETRY);
}

static int call_rhs(ot__lockstep *L, double t, const double *y, const double *p,
                    double *dydt)
{
    return ot__lockstep_call_rhs(L, 0, t, y, p, dydt);
}

static int rhs_cb(sunrealtype t, N_Vector y, N_Vector ydot, void *ud)
{
    ot__lockstep *L = ud;
    return call_rhs(L, t, N_VGetArrayPointer(y), L->p, N_VGetArrayPointer(ydot));
}

static int rhs_explicit_cb(sunrealtype t, N_Vector y, N_Vector ydot, void *ud)
{
    ot__lockstep *L = ud;
    return ot__lockstep_call_rhs(L, 1, t, N_VGetArrayPointer(y), L->p,
                                 N_VGetArrayPointer(ydot));
}

/* Difference-quotient blocks as CVODE's dense DQ forms them, per lane
 * (kit/dq.h). */
static int dq_jac(ot__lockstep *L, double t, N_Vector y, N_Vector fy, double *a,
                  N_Vector ytmp, N_Vector ftmp)
{
    const int64_t n = L->n, nbatch = L->nbatch;
    double h = 0;
    ot__ig_dq_inputs(&L->ig, &h, L->ewt);
    const double *yd = N_VGetArrayPointer(y), *fd = N_VGetArrayPointer(fy);
    const double *w = N_VGetArrayPointer(L->ewt);
    double *yt = N_VGetArrayPointer(ytmp), *ft = N_VGetArrayPointer(ftmp);
    memcpy(yt, yd, (size_t)(n * nbatch) * sizeof *yt);
    for (int64_t j = 0; j < n; j++) {
        for (int64_t b = 0; b < nbatch; b++) {
            const double min_inc = ot__dq_min_inc(fd + b * n, w + b * n, n, h);
            const int64_t k = b * n + j;
            L->inc[b] = ot__dq_inc(yd[k], w[k], min_inc);
            yt[k] = yd[k] + L->inc[b];
        }
        int rc = call_rhs(L, t, yt, L->p, ft);
        L->dq_rhs_evals++;
        if (rc != 0)
            return rc;
        for (int64_t b = 0; b < nbatch; b++) {
            ot__dq_column(ft + b * n, fd + b * n, L->inc[b], a + b * n * n + j * n, n);
            yt[b * n + j] = yd[b * n + j];
        }
    }
    return 0;
}

static int jac_cb(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud,
                  N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)t3;
    ot__lockstep *L = ud;
    const ot_ode *ode = L->plan->ode;
    const int64_t n = L->n;
    double *a = ot__lockstep_block_data(J);
    int rc;
    if (ot__cb_stopped(&L->cb))
        return -1;
    if (ode->jac) {
        ot__lockstep_cb_call c = {ode->jac, t, N_VGetArrayPointer(y), L->p, a, n * n, 1};
        if ((rc = ot__lockstep_call(L, "jac", t, OT__CB_RETRY, ot__lockstep_run_call,
                                    &c)) != 0)
            return rc;
    } else if ((rc = dq_jac(L, t, y, fy, a, t1, t2)) != 0) {
        return rc;
    }
    zero_stopped(L, a, n * n);
    return ot__lockstep_isolate_nonfinite(L, "jac", "J", a, n * n, t, OT__CB_RETRY);
}

static int root_cb(sunrealtype t, N_Vector y, sunrealtype *g, void *ud)
{
    ot__lockstep *L = ud;
    const ot_ode *ode = L->plan->ode;
    const int64_t nr = ode->nroots;
    if (ot__cb_stopped(&L->cb))
        return -1;
    ot__lockstep_poison_first(&L->poisoned, OT__POISONED_ROOT, g, nr * L->nbatch);
    ot__lockstep_cb_call c = {ode->root, t, N_VGetArrayPointer(y), L->p, g, nr, 0};
    const int rc =
        ot__lockstep_call(L, "root", t, OT__CB_ROOT, ot__lockstep_run_call, &c);
    if (rc != 0)
        return rc;
    for (int64_t b = 0; b < L->nbatch; b++)
        if (L->stopped[b]) /* a stopped lane has no more events */
            for (int64_t r = 0; r < nr; r++)
                g[b * nr + r] = 1.0;
    return ot__lockstep_isolate_nonfinite(L, "root", "g", g, nr, t, OT__CB_ROOT);
}

/* ySdot_j = J s_j + df/dp_j in every lane, the user's derivatives once for
 * all j; a stopped lane's are zero, so its sensitivities stand still. */
static int sens_from_derivatives(ot__lockstep *L, int ns, double t, N_Vector y,
                                 N_Vector *yS, N_Vector *ySdot)
{
    const int64_t n = L->n, nbatch = L->nbatch;
    const int rc = ot__sens_derivatives(
        &L->cb, L->plan->ode, t, ot__view_compact(N_VGetArrayPointer(y), n, nbatch),
        ot__view_compact(L->p, L->np, nbatch), L->jb, L->db, nbatch, L->lane0,
        &L->sens_first);
    if (rc != 0)
        return rc;
    zero_stopped(L, L->jb, n * n);
    zero_stopped(L, L->db, n * L->np);
    for (int j = 0; j < ns; j++) {
        const double *s = N_VGetArrayPointer(yS[j]), *dir = ot__sens_dir(&L->unit, j);
        double *out = N_VGetArrayPointer(ySdot[j]);
        for (int64_t b = 0; b < nbatch; b++) {
            /* j >= np: an initial value's; after events, df/dp along P_j */
            ot__sens_jv_plus(L->jb + b * n * n, s + b * n,
                             j < L->np && !dir ? L->db + (b * L->np + j) * n : NULL,
                             out + b * n, n);
            if (dir)
                ot__sens_dp_plus(L->db + b * L->np * n, dir + b * L->np, out + b * n, n,
                                 L->np);
        }
    }
    return 0;
}

static int rhs_at(void *ctx, double t, const double *y, const double *p, double *f)
{
    return call_rhs(ctx, t, y, p, f);
}

/* ySdot_j = (f(y + h s_j, p + h e_j) - f(y - h s_j, p - h e_j)) / 2h, with
 * h per lane from the parameter's size. */
static int sens_rhs_cb(int ns, sunrealtype t, N_Vector y, N_Vector ydot, N_Vector *yS,
                       N_Vector *ySdot, void *ud, N_Vector t1, N_Vector t2)
{
    (void)ydot, (void)t1, (void)t2;
    ot__lockstep *L = ud;
    if (ot__cb_stopped(&L->cb))
        return -1;
    if (L->plan->ode->dfdp)
        return sens_from_derivatives(L, ns, t, y, yS, ySdot);
    const ot__central_space sp = {L->nbatch, L->n,  L->np, L->n,
                                  L->yp,     L->ym, L->pp, L->yp};
    for (int j = 0; j < ns; j++) {
        const int rc = ot__central(
            rhs_at, L, &sp, t, N_VGetArrayPointer(y), N_VGetArrayPointer(yS[j]), L->p, j,
            ot__sens_dir(&L->unit, j), N_VGetArrayPointer(ySdot[j]));
        L->dq_rhs_evals += 2;
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The adjoint's integral term: each running lane's integrand, over the
 * block's backward parts (run/adjoint_back.c; a lane whose integrand
 * fails leaves the block). */
static int quad_cb(sunrealtype t, N_Vector y, N_Vector yQdot, void *ud)
{
    return ot__run_adj_quad(((ot__lockstep *)ud)->adj, t, y, yQdot);
}

const ot__lockstep_callbacks ot__lockstep_cpu_callbacks = {
    .rhs = rhs_cb,
    .jac = jac_cb,
    .root = root_cb,
    .sens_rhs = sens_rhs_cb,
    .rhs_explicit = rhs_explicit_cb,
    .quad = quad_cb,
};

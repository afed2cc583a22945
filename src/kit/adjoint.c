/* ot_solve_adjoint's shared parts (see adjoint.h): the loss and the
 * gradient tensors. */
#include "kit/adjoint.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kit/dq.h"
#include "tensor/tensor_impl.h"

/* ---- The loss kinds ------------------------------------------------------
 * A kind is its constructor (solution.h), its check and its terms at one
 * output time, written together below, and one row of KINDS: a new kind is
 * its field in ot_loss with the constructor's declaration, and its section
 * here. The integral term (loss.integrand) goes with any kind. */

typedef struct {
    int (*is)(const ot_loss *l); /* l is of this kind */
    /* The kind's own rules (the shapes of its tables). */
    int (*check)(const ot__plan *pl, const ot_loss *l);
    /* g_i, dg_i/dy and dg_i/dp of lane b at output i (ot__adj_point). */
    int (*terms)(const ot__plan *pl, ot__cb *cb, ot__adj_out_fn out, void *ctx, int64_t i,
                 int64_t b, double t, const double *y, const double *p,
                 const ot__adj_scratch *scratch, double *g, double *dgdy, double *dgdp);
} loss_kind;

static int no_weights(const ot_loss *l)
{
    return ot_view_is_absent(l->weights)
               ? OT_OK
               : ot__fail(OT_ERR_ARG, "loss.weights: only with data (ot_loss_squares)");
}

/* -- A sum of squares on o = y or out(y) ----------------------------------- */

ot_loss ot_loss_squares(ot_view data, ot_view weights)
{
    ot_loss l;
    l.data = data;
    l.weights = weights;
    l.fn = NULL;
    l.user = NULL;
    l.integrand = NULL;
    return l;
}

static int squares_is(const ot_loss *l) { return !ot_view_is_absent(l->data); }

/* data or weights: f64 on the CPU, [rows, nt] or [rows, nt, 1|nbatch]. */
static int check_table(const ot__plan *pl, ot_view v, const char *name)
{
    const ot_layout *l = &v.layout;
    if (l->dtype != OT_F64) /* the status stops and t0 give a wrong dtype */
        return ot__fail(OT_ERR_DTYPE, "loss.%s: must be f64 (it is f32)", name);
    if (l->device.type != OT_CPU)
        return ot__fail(OT_ERR_DEVICE, "loss.%s: must be in host memory", name);
    const int64_t lanes = l->ndim == 3 ? l->shape[2] : 1;
    if ((l->ndim != 2 && l->ndim != 3) || l->shape[0] != pl->rows ||
        l->shape[1] != pl->nt || (lanes != 1 && lanes != pl->nbatch)) {
        char given[80];
        int len = snprintf(given, sizeof given, "[");
        for (int d = 0; d < l->ndim && len > 0 && (size_t)len < sizeof given; d++)
            len += snprintf(given + len, sizeof given - (size_t)len, "%s%lld",
                            d ? ", " : "", (long long)l->shape[d]);
        if (len > 0 && (size_t)len < sizeof given)
            snprintf(given + len, sizeof given - (size_t)len, "]");
        return ot__fail(OT_ERR_SHAPE,
                        "loss.%s: shape %s (%d ax%s); expected [%s = %lld, nt = %lld] or "
                        "[%lld, %lld, nbatch = %lld]",
                        name, given, l->ndim, l->ndim == 1 ? "is" : "es",
                        pl->ode->out ? "nout" : "n", (long long)pl->rows,
                        (long long)pl->nt, (long long)pl->rows, (long long)pl->nt,
                        (long long)pl->nbatch);
    }
    return OT_OK;
}

static int squares_check(const ot__plan *pl, const ot_loss *l)
{
    const int st = check_table(pl, l->data, "data");
    return st == OT_OK && !ot_view_is_absent(l->weights)
               ? check_table(pl, l->weights, "weights")
               : st;
}

/* Entry (r, i) of lane b of a [rows, nt(, lanes)] table (absent: 1). */
static double entry(ot_view v, int64_t r, int64_t i, int64_t b)
{
    const ot_layout *l = &v.layout;
    if (ot_view_is_absent(v))
        return 1.0;
    const int64_t lane = l->ndim == 3 && l->shape[2] > 1 ? b : 0;
    const char *at = (const char *)l->data + r * l->strides[0] + i * l->strides[1] +
                     (l->ndim == 3 ? lane * l->strides[2] : 0);
    double x;
    memcpy(&x, at, sizeof x);
    return x;
}

/* g_i = sum_r w_r (o_r - d_r)^2, dg/do_r = 2 w_r (o_r - d_r). */
static int squares_terms(const ot__plan *pl, ot__cb *cb, ot__adj_out_fn out, void *ctx,
                         int64_t i, int64_t b, double t, const double *y, const double *p,
                         const ot__adj_scratch *sc, double *g, double *dgdy, double *dgdp)
{
    (void)cb;
    double *scratch = sc->work;
    const int64_t n = pl->n, np = pl->np, rows = pl->rows;
    double *o = scratch, *c = scratch + rows, *op = scratch + 2 * rows;
    double *ys = scratch + 3 * rows, *ps = ys + n;
    const ot_view data = pl->loss.data, w = pl->loss.weights;
    if (pl->ode->out) {
        int st = out(ctx, t, y, p, o);
        if (st != OT_OK)
            return st;
    } else {
        memcpy(o, y, (size_t)n * sizeof *o);
    }
    int any = 0;
    for (int64_t r = 0; r < rows; r++) {
        const double d = entry(data, r, i, b), wr = entry(w, r, i, b);
        c[r] = 0;
        if (d != d)
            continue; /* missing datum */
        const double res = o[r] - d;
        *g += wr * res * res;
        c[r] = 2 * wr * res;
        any = 1;
    }
    if (!pl->ode->out) {
        memcpy(dgdy, c, (size_t)n * sizeof *dgdy);
        return OT_OK;
    }
    /* Through out: dg/dy_k = c . d o / d y_k and dg/dp_j = c . d o / d p_j,
     * central differences of out (steps as for sensitivities). */
    memset(dgdy, 0, (size_t)n * sizeof *dgdy);
    if (!any)
        return OT_OK;
    memcpy(ys, y, (size_t)n * sizeof *ys);
    memcpy(ps, p, (size_t)np * sizeof *ps);
    for (int64_t k = 0; k < n + np; k++) {
        double *x = k < n ? ys + k : ps + (k - n), saved = *x, h = ot__fd_step(saved);
        double dot = 0;
        *x = saved + h;
        int st = out(ctx, t, ys, ps, op);
        for (int64_t r = 0; st == OT_OK && r < rows; r++)
            dot += c[r] * op[r];
        *x = saved - h;
        if (st == OT_OK)
            st = out(ctx, t, ys, ps, op);
        for (int64_t r = 0; st == OT_OK && r < rows; r++)
            dot -= c[r] * op[r];
        *x = saved;
        if (st != OT_OK)
            return st;
        if (k < n)
            dgdy[k] = dot / (2 * h);
        else
            dgdp[k - n] += dot / (2 * h);
    }
    return OT_OK;
}

/* -- The user's g_i --------------------------------------------------------- */

ot_loss ot_loss_custom(ot_loss_fn fn, void *user)
{
    ot_loss l;
    l.data = ot_view_absent();
    l.weights = ot_view_absent();
    l.fn = fn;
    l.user = user;
    l.integrand = NULL;
    return l;
}

static int custom_is(const ot_loss *l) { return l->fn != NULL; }

static int custom_check(const ot__plan *pl, const ot_loss *l)
{
    (void)pl;
    return no_weights(l);
}

/* The call with zeroed outputs of their own (sc->dgdy, sc->dgdp: views that
 * end where their allocations do), its checks, then the terms added. */
static int custom_terms(const ot__plan *pl, ot__cb *cb, ot__adj_out_fn out, void *ctx,
                        int64_t i, int64_t b, double t, const double *y, const double *p,
                        const ot__adj_scratch *sc, double *g, double *dgdy, double *dgdp)
{
    (void)out, (void)ctx;
    const int64_t n = pl->n, np = pl->np;
    double gi = 0, *dy = sc->dgdy, *gp = sc->dgdp;
    memset(dy, 0, (size_t)n * sizeof *dy);
    memset(gp, 0, (size_t)np * sizeof *gp);
    const int rc =
        pl->loss.fn(t, i, b, ot__view_compact(y, n, 1), ot__view_compact(p, np, 1),
                    ot__view_mut_compact(&gi, 1, 1), ot__view_mut_compact(dy, n, 1),
                    ot__view_mut_compact(gp, np, 1), pl->loss.user);
    if (rc != 0) {
        ot__cb_returned(cb, "loss", rc, t, OT__CB_FINAL);
        return OT_ERR_CALLBACK;
    }
    if (ot__cb_finite(cb, "loss", "g", &gi, 1, 1, b, t, OT__CB_FINAL) ||
        ot__cb_finite(cb, "loss", "dgdy", dy, n, 1, b, t, OT__CB_FINAL) ||
        (np > 0 && ot__cb_finite(cb, "loss", "dgdp", gp, np, 1, b, t, OT__CB_FINAL)))
        return OT_ERR_CALLBACK;
    *g += gi;
    memcpy(dgdy, dy, (size_t)n * sizeof *dgdy);
    for (int64_t j = 0; j < np; j++)
        dgdp[j] += gp[j];
    return OT_OK;
}

/* -- An integral term alone: no terms at the output times ------------------- */

static int integral_is(const ot_loss *l)
{
    return l->integrand && l->fn == NULL && ot_view_is_absent(l->data);
}

static int integral_terms(const ot__plan *pl, ot__cb *cb, ot__adj_out_fn out, void *ctx,
                          int64_t i, int64_t b, double t, const double *y,
                          const double *p, const ot__adj_scratch *scratch, double *g,
                          double *dgdy, double *dgdp)
{
    (void)cb, (void)out, (void)ctx, (void)i, (void)b, (void)t, (void)y, (void)p,
        (void)scratch, (void)g, (void)dgdp;
    memset(dgdy, 0, (size_t)pl->n * sizeof *dgdy);
    return OT_OK;
}

static const loss_kind KINDS[] = {
    {squares_is, squares_check, squares_terms},
    {custom_is, custom_check, custom_terms},
    {integral_is, custom_check, integral_terms},
};

/* The kind of l, or NULL when it is of none or of more than one. */
static const loss_kind *kind_of(const ot_loss *l)
{
    const loss_kind *k = NULL;
    for (size_t j = 0; j < sizeof KINDS / sizeof KINDS[0]; j++)
        if (KINDS[j].is(l)) {
            if (k)
                return NULL;
            k = &KINDS[j];
        }
    return k;
}

int ot__adj_check(ot__plan *pl, const ot_loss *loss)
{
    if (loss == NULL)
        return ot__fail(OT_ERR_ARG, "loss: NULL (ot_loss_squares or ot_loss_custom)");
    const loss_kind *k = kind_of(loss);
    if (k == NULL)
        return ot__fail(OT_ERR_ARG, "loss: give data (ot_loss_squares) or a loss "
                                    "function (ot_loss_custom), one of the two (or an "
                                    "integrand alone)");
    const int st = k->check(pl, loss);
    if (st == OT_OK)
        pl->loss = *loss;
    return st;
}

/* Lane b's terms, with ot_callback_lane at lane b for the loss and out calls
 * (one lane's views, lockstep too). */
int ot__adj_point(const ot__plan *pl, ot__cb *cb, ot__adj_out_fn out, void *ctx,
                  int64_t i, int64_t b, double t, const double *y, const double *p,
                  const ot__adj_scratch *scratch, double *g, double *dgdy, double *dgdp)
{
    const ot__cb_lane_state was = ot__cb_lane_at(b);
    const int st = kind_of(&pl->loss)->terms(pl, cb, out, ctx, i, b, t, y, p, scratch, g,
                                             dgdy, dgdp);
    ot__cb_lane_restore(was);
    return st;
}

int ot__adj_alloc(const ot__plan *pl, ot_solution *sol)
{
    const int64_t s0[1] = {pl->nbatch}, s1[2] = {pl->np, pl->nbatch},
                  s2[2] = {pl->n, pl->nbatch};
    int st = ot__tensor_alloc(&sol->grads[OT_GRAD_LOSS], OT_F64, 1, s0, "loss");
    if (st == OT_OK)
        st = ot__tensor_alloc(&sol->grads[OT_GRAD_PARAMS], OT_F64, 2, s1, "grad_params");
    if (st == OT_OK)
        st = ot__tensor_alloc(&sol->grads[OT_GRAD_Y0], OT_F64, 2, s2, "grad_y0");
    if (st == OT_OK &&
        (sol->adj_bytes = OT__CALLOC((size_t)pl->nbatch, sizeof *sol->adj_bytes)) == NULL)
        st = ot__fail(OT_ERR_NOMEM, "solve: cannot allocate the adjoint's byte counts");
    const int64_t counts[3] = {pl->nbatch, pl->np * pl->nbatch, pl->n * pl->nbatch};
    for (int k = 0; st == OT_OK && k < 3; k++) {
        double *d = ot_tensor_layout(sol->grads[k])->data;
        for (int64_t e = 0; e < counts[k]; e++)
            d[e] = NAN;
    }
    return st;
}

void ot__adj_store(const ot__plan *pl, ot_solution *sol, int64_t b, double loss,
                   const double *gp, const double *gy0)
{
    ((double *)ot_tensor_layout(sol->grads[OT_GRAD_LOSS])->data)[b] = loss;
    memcpy((double *)ot_tensor_layout(sol->grads[OT_GRAD_PARAMS])->data + b * pl->np, gp,
           (size_t)pl->np * sizeof *gp);
    memcpy((double *)ot_tensor_layout(sol->grads[OT_GRAD_Y0])->data + b * pl->n, gy0,
           (size_t)pl->n * sizeof *gy0);
}

int ot__adj_integrand(const ot__plan *pl, ot__cb *cb, int64_t b, double t,
                      const double *y, const double *p, double *q, double *dqdy,
                      double *dqdp)
{
    const int64_t n = pl->n, np = pl->np;
    *q = 0;
    memset(dqdy, 0, (size_t)n * sizeof *dqdy);
    memset(dqdp, 0, (size_t)np * sizeof *dqdp);
    const ot__cb_lane_state was = ot__cb_lane_at(b);
    const int rc = pl->loss.integrand(
        t, b, ot__view_compact(y, n, 1), ot__view_compact(p, np, 1),
        ot__view_mut_compact(q, 1, 1), ot__view_mut_compact(dqdy, n, 1),
        ot__view_mut_compact(dqdp, np, 1), pl->loss.user);
    ot__cb_lane_restore(was);
    if (rc != 0)
        return ot__cb_returned(cb, "integrand", rc, t, OT__CB_RETRY);
    int st = ot__cb_finite(cb, "integrand", "q", q, 1, 1, b, t, OT__CB_RETRY);
    st = st ? st : ot__cb_finite(cb, "integrand", "dqdy", dqdy, n, 1, b, t, OT__CB_RETRY);
    return st || np == 0
               ? st
               : ot__cb_finite(cb, "integrand", "dqdp", dqdp, np, 1, b, t, OT__CB_RETRY);
}

double ot__adj_atol(const ot_ode *ode)
{
    double atol = ode->atol;
    for (int64_t i = 0; ode->atol_vec && i < ode->n; i++)
        atol = i == 0 || ode->atol_vec[i] < atol ? ode->atol_vec[i] : atol;
    return atol;
}

/* The backward problem's tolerances: its own, or the forward ones. */
static double rtol_b(const ot_ode *ode)
{
    return ode->adj_rtol > 0 ? ode->adj_rtol : ode->rtol;
}
static double atol_b(const ot_ode *ode)
{
    return ode->adj_atol > 0 ? ode->adj_atol : ot__adj_atol(ode);
}

int ot__adj_settings_b(void *cv, int which, const ot_ode *ode, void *user)
{
    int f = CVodeSetUserDataB(cv, which, user);
    f = f ? f : CVodeSStolerancesB(cv, which, rtol_b(ode), atol_b(ode));
    return f ? f : CVodeSetMaxNumStepsB(cv, which, ode->max_steps);
}

int ot__adj_quad_settings_b(void *cv, int which, const ot_ode *ode)
{
    const int f = CVodeQuadSStolerancesB(cv, which, rtol_b(ode), atol_b(ode));
    return f ? f : CVodeSetQuadErrConB(cv, which, SUNTRUE);
}

int64_t ot__adj_max_steps_b(const ot_ode *ode, int64_t forward_steps)
{
    if (ode->adj_max_steps > 0)
        return ode->adj_max_steps;
    const int64_t m = 10 * forward_steps > 500 ? 10 * forward_steps : 500;
    return m < ode->max_steps ? m : ode->max_steps;
}

int ot__adj_integral_init(void *cv, CVQuadRhsFn fQ, N_Vector yQ, const ot_ode *ode)
{
    N_VConst(0.0, yQ);
    int f = OT__SUN_CALL(CVodeQuadInit(cv, fQ, yQ), CV_MEM_FAIL);
    f = f ? f : CVodeQuadSStolerances(cv, ode->rtol, ot__adj_atol(ode));
    return f ? f : CVodeSetQuadErrCon(cv, SUNTRUE);
}

/* The problem: sizes, callbacks and options, each checked when set. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ode/ode_impl.h"
#include "odetensor/kernel.h"

int ot_ode_new(ot_ode **out, int64_t nstates, int64_t nparams, ot_rhs_fn rhs, void *user)
{
    if (out == NULL)
        return ot__fail(OT_ERR_ARG, "ot_ode_new: out is NULL");
    if (nstates < 1 || nstates > INT32_MAX)
        return ot__fail(OT_ERR_ARG, "nstates: %lld; a problem needs 1 to %d states",
                        (long long)nstates, INT32_MAX);
    if (nparams < 0 || nparams > INT32_MAX)
        return ot__fail(OT_ERR_ARG, "nparams: %lld; must be 0 to %d", (long long)nparams,
                        INT32_MAX);
    if (rhs == NULL)
        return ot__fail(OT_ERR_ARG, "rhs: NULL; the right-hand side is required");
    ot_ode *o = OT__CALLOC(1, sizeof *o);
    if (o == NULL)
        return ot__fail(OT_ERR_NOMEM, "ot_ode_new: cannot allocate the problem");
    o->n = nstates;
    o->np = nparams;
    o->rhs = rhs;
    o->user = user;
    o->method = OT_BDF;
    o->linsol = OT_LINSOL_DENSE;
    o->mode = OT_LANES;
    o->out_dtype = OT_F64;
    o->rtol = 1e-6;
    o->atol = 1e-8;
    o->max_steps = OT__DEFAULT_MAX_STEPS;
    o->max_events = OT__DEFAULT_MAX_EVENTS;
    o->device.type = OT_CPU;
    *out = o;
    return OT_OK;
}

void ot_ode_free(ot_ode *ode)
{
    if (ode == NULL)
        return;
    OT__FREE_ALL(ode->atol_vec, ode->root_dir, ode->event_action, ode);
}

int64_t ot_ode_nstates(const ot_ode *ode) { return ode ? ode->n : 0; }
int64_t ot_ode_nparams(const ot_ode *ode) { return ode ? ode->np : 0; }

#define NEED_ODE(fn)                                                                     \
    if (ode == NULL)                                                                     \
    return ot__fail(OT_ERR_ARG, fn ": ode is NULL")

/* Setters every value of which is valid: callbacks (NULL removes one) and
 * on/off flags (any nonzero is on). */
#define SET_ANY(fn, type, field, value)                                                  \
    int fn(ot_ode *ode, type arg)                                                        \
    {                                                                                    \
        NEED_ODE(#fn);                                                                   \
        ode->field = (value);                                                            \
        return OT_OK;                                                                    \
    }
SET_ANY(ot_ode_set_jac, ot_jac_fn, jac, arg)
SET_ANY(ot_ode_set_dfdp, ot_dfdp_fn, dfdp, arg)
SET_ANY(ot_ode_set_init, ot_init_fn, init, arg)
SET_ANY(ot_ode_set_event_handler, ot_event_fn, event_fn, arg)
SET_ANY(ot_ode_set_event_jac, ot_event_jac_fn, event_jac, arg)
SET_ANY(ot_ode_set_rhs_explicit, ot_rhs_fn, rhs_explicit, arg)
SET_ANY(ot_ode_set_sens_initial, int, sens_initial, arg != 0)
SET_ANY(ot_ode_set_stability_limit_detection, int, stab_limit, arg != 0)
SET_ANY(ot_ode_set_outputs_on_device, int, outputs_on_device, arg != 0)
SET_ANY(ot_ode_set_rhs_lanes, ot_rhs_lanes_fn, rhs_lanes, arg)
SET_ANY(ot_ode_set_jac_lanes, ot_jac_lanes_fn, jac_lanes, arg)

/* Setters of a count with a least value; `what` is the option's name in
 * messages, `zero` what 0 means where it is allowed. */
#define SET_AT_LEAST(fn, type, field, what, least, zero)                                 \
    int fn(ot_ode *ode, type arg)                                                        \
    {                                                                                    \
        NEED_ODE(#fn);                                                                   \
        if (arg < (least))                                                               \
            return ot__fail(OT_ERR_VALUE, what ": %lld; must be >= %d" zero,             \
                            (long long)arg, (least));                                    \
        ode->field = arg;                                                                \
        return OT_OK;                                                                    \
    }
SET_AT_LEAST(ot_ode_set_max_steps, int64_t, max_steps, "max_steps", 1, "")
SET_AT_LEAST(ot_ode_set_max_events, int64_t, max_events, "max_events", 1, "")
SET_AT_LEAST(ot_ode_set_lockstep_block, int64_t, lockstep_block, "lockstep_block", 0,
             " (0: chosen from the state count)")
SET_AT_LEAST(ot_ode_set_threads, int, threads, "threads", 0, " (0: one per core)")
SET_AT_LEAST(ot_ode_set_adjoint_steps, int64_t, adj_max_steps, "adjoint_steps", 0,
             " (0: from the forward pass)")
SET_AT_LEAST(ot_ode_set_krylov_dim, int, krylov_maxl, "krylov_dim", 0,
             " (0: SUNDIALS' 5)")
SET_AT_LEAST(ot_ode_set_lane_group, int64_t, lane_group, "lane_group", 0,
             " (0: chosen from the callbacks)")

/* Setters of one of two values. */
#define SET_EITHER(fn, type, field, what, a, b, status)                                  \
    int fn(ot_ode *ode, type arg)                                                        \
    {                                                                                    \
        NEED_ODE(#fn);                                                                   \
        if (arg != (a) && arg != (b))                                                    \
            return ot__fail(status, what ": %d is neither " #a " nor " #b, (int)arg);    \
        ode->field = arg;                                                                \
        return OT_OK;                                                                    \
    }
SET_EITHER(ot_ode_set_mode, ot_mode, mode, "mode", OT_LANES, OT_LOCKSTEP, OT_ERR_ARG)
SET_EITHER(ot_ode_set_output_dtype, ot_dtype, out_dtype, "output_dtype", OT_F32, OT_F64,
           OT_ERR_DTYPE)
SET_EITHER(ot_ode_set_outputs_before_stops, int, outputs_before_stops,
           "outputs_before_stops", 0, 1, OT_ERR_VALUE)
SET_EITHER(ot_ode_set_autonomous, int, autonomous, "autonomous", 0, 1, OT_ERR_VALUE)

/* nout/nroots and their callback come and go together. */
static int check_count_fn(const ot_ode *ode, const char *fn, const char *what,
                          int64_t count, int has_fn)
{
    if (ode == NULL)
        return ot__fail(OT_ERR_ARG, "%s: ode is NULL", fn);
    if (count < 0 || count > INT32_MAX)
        return ot__fail(OT_ERR_ARG, "%s: %lld; must be 0 to %d", what, (long long)count,
                        INT32_MAX);
    if ((count > 0) != has_fn)
        return ot__fail(OT_ERR_ARG, "%s: %lld with %s callback; give both or neither",
                        what, (long long)count, has_fn ? "a" : "no");
    return OT_OK;
}

int ot_ode_set_out(ot_ode *ode, int64_t nout, ot_out_fn out)
{
    const int st = check_count_fn(ode, "ot_ode_set_out", "nout", nout, out != NULL);
    if (st == OT_OK) {
        ode->nout = nout;
        ode->out = out;
    }
    return st;
}

int ot_ode_set_roots(ot_ode *ode, int64_t nroots, ot_root_fn root)
{
    int st = check_count_fn(ode, "ot_ode_set_roots", "nroots", nroots, root != NULL);
    if (st != OT_OK)
        return st;
    ode->nroots = nroots;
    ode->root = root;
    /* Directions and actions were per root function of the old set. */
    free(ode->root_dir);
    free(ode->event_action);
    ode->root_dir = ode->event_action = NULL;
    return OT_OK;
}

/* Copies nroots values in [lo, hi] into *field (NULL values: field freed). */
static int set_per_root(ot_ode *ode, const char *what, const int *values, int lo, int hi,
                        int **field)
{
    if (values != NULL && ode->nroots == 0)
        return ot__fail(OT_ERR_ARG,
                        "%s: the problem has no root functions (ot_ode_set_roots first)",
                        what);
    int *copy = NULL;
    if (values != NULL) {
        for (int64_t r = 0; r < ode->nroots; r++)
            if (values[r] < lo || values[r] > hi)
                return ot__fail(OT_ERR_VALUE, "%s: entry %lld is %d; must be %d to %d",
                                what, (long long)r, values[r], lo, hi);
        if ((copy = OT__MALLOC((size_t)ode->nroots * sizeof *copy)) == NULL)
            return ot__fail(OT_ERR_NOMEM, "%s: cannot allocate %lld values", what,
                            (long long)ode->nroots);
        memcpy(copy, values, (size_t)ode->nroots * sizeof *copy);
    }
    free(*field);
    *field = copy;
    return OT_OK;
}

int ot_ode_set_root_directions(ot_ode *ode, const int *directions)
{
    NEED_ODE("ot_ode_set_root_directions");
    return set_per_root(ode, "root_directions", directions, -1, 1, &ode->root_dir);
}

int ot_ode_set_event_actions(ot_ode *ode, const int *actions)
{
    NEED_ODE("ot_ode_set_event_actions");
    return set_per_root(ode, "event_actions", actions, OT_EVENT_STOP,
                        OT_EVENT_ACTION_LAST, &ode->event_action);
}

int ot_ode_set_progress(ot_ode *ode, ot_progress_fn progress, void *user)
{
    NEED_ODE("ot_ode_set_progress");
    ode->progress = progress;
    ode->progress_user = user;
    return OT_OK;
}

int ot_ode_set_method(ot_ode *ode, ot_method method)
{
    NEED_ODE("ot_ode_set_method");
    if (method < OT_BDF || method > OT_METHOD_LAST)
        return ot__fail(OT_ERR_ARG,
                        "method: %d is not an ot_method (OT_BDF, OT_ADAMS, OT_ERK_*, "
                        "OT_ESDIRK*, OT_IMEX_ARK*, OT_ROS23, OT_RODAS4, OT_RODAS5P, "
                        "OT_TSIT5, OT_VERN7)",
                        (int)method);
    ode->method = method;
    return OT_OK;
}

int ot_ode_set_linear_solver(ot_ode *ode, ot_linsol linsol)
{
    NEED_ODE("ot_ode_set_linear_solver");
    if (linsol < OT_LINSOL_DENSE || linsol > OT_LINSOL_GMRES)
        return ot__fail(
            OT_ERR_ARG,
            "linsol: %d is not an ot_linsol (OT_LINSOL_DENSE, OT_LINSOL_BAND, "
            "OT_LINSOL_GMRES)",
            (int)linsol);
    ode->linsol = linsol;
    return OT_OK;
}

int ot_ode_set_bandwidths(ot_ode *ode, int64_t mupper, int64_t mlower)
{
    NEED_ODE("ot_ode_set_bandwidths");
    if (mupper < 0 || mlower < 0)
        return ot__fail(OT_ERR_VALUE, "bandwidths: %s = %lld; must be >= 0",
                        mupper < 0 ? "mupper" : "mlower",
                        (long long)(mupper < 0 ? mupper : mlower));
    ode->mupper = mupper;
    ode->mlower = mlower;
    return OT_OK;
}

int ot_ode_set_preconditioner(ot_ode *ode, ot_psetup_fn setup, ot_psolve_fn solve,
                              int64_t nwork)
{
    NEED_ODE("ot_ode_set_preconditioner");
    if ((setup == NULL) != (solve == NULL))
        return ot__fail(OT_ERR_ARG,
                        "preconditioner: %s is NULL; give both setup and "
                        "solve, or neither",
                        setup == NULL ? "setup" : "solve");
    if (nwork < 0)
        return ot__fail(OT_ERR_VALUE, "nwork: %lld; must be >= 0", (long long)nwork);
    ode->psetup = setup;
    ode->psolve = solve;
    ode->pwork = setup ? nwork : 0;
    return OT_OK;
}

/* A tolerance-like value: finite and >= 0. */
static int check_nonneg(const char *what, double v)
{
    if (!isfinite(v) || v < 0)
        return ot__fail(OT_ERR_VALUE, "%s: %g; must be finite and >= 0", what, v);
    return OT_OK;
}

/* Sets *field, an option of ode, to v, a tolerance-like value. */
static int set_nonneg(const ot_ode *ode, const char *fn, const char *what, double v,
                      double *field)
{
    if (ode == NULL)
        return ot__fail(OT_ERR_ARG, "%s: ode is NULL", fn);
    int st = check_nonneg(what, v);
    if (st == OT_OK)
        *field = v;
    return st;
}

/* The first state whose absolute tolerance is 0, or -1. */
static int64_t zero_atol(const ot_ode *ode)
{
    if (ode->atol_vec == NULL)
        return ode->atol == 0 ? 0 : -1;
    for (int64_t i = 0; i < ode->n; i++)
        if (ode->atol_vec[i] == 0)
            return i;
    return -1;
}

/* rtol = 0 with atol = 0 gives CVODE a zero error weight: every lane would
 * fail at its first step ("ewt component equal to zero"). */
static int refuse_zero_tolerances(const char *what, int64_t state)
{
    return ot__fail(OT_ERR_VALUE,
                    "%s: rtol and atol would both be 0 (for state %lld): the error test "
                    "needs rtol > 0 or atol > 0 for every state",
                    what, (long long)state);
}

int ot_ode_set_rtol(ot_ode *ode, double rtol)
{
    NEED_ODE("ot_ode_set_rtol");
    int st = check_nonneg("rtol", rtol);
    if (st != OT_OK)
        return st;
    /* A relative tolerance of 1 allows 100 % error: no result at all. */
    if (!(rtol < 1))
        return ot__fail(OT_ERR_VALUE,
                        "rtol: %g; must be < 1 (rtol 1 allows an error as large as the "
                        "value itself)",
                        rtol);
    const int64_t z = zero_atol(ode);
    if (rtol == 0 && z >= 0)
        return refuse_zero_tolerances("rtol", z);
    ode->rtol = rtol;
    return OT_OK;
}

int ot_ode_set_atol(ot_ode *ode, double atol)
{
    NEED_ODE("ot_ode_set_atol");
    int st = check_nonneg("atol", atol);
    if (st != OT_OK)
        return st;
    if (atol == 0 && ode->rtol == 0)
        return refuse_zero_tolerances("atol", 0);
    ode->atol = atol;
    free(ode->atol_vec);
    ode->atol_vec = NULL;
    return OT_OK;
}

int ot_ode_set_atol_vector(ot_ode *ode, ot_view atol)
{
    NEED_ODE("ot_ode_set_atol_vector");
    const ot_layout *l = &atol.layout;
    if (l->ndim != 1 || l->shape[0] != ode->n)
        return ot__fail(OT_ERR_SHAPE, "atol: needs shape [%lld] (one per state)",
                        (long long)ode->n);
    if (l->device.type != OT_CPU)
        return ot__fail(OT_ERR_DEVICE, "atol: must be CPU memory");
    double *v = OT__MALLOC((size_t)ode->n * sizeof *v);
    if (v == NULL)
        return ot__fail(OT_ERR_NOMEM, "atol: cannot allocate %lld values",
                        (long long)ode->n);
    for (int64_t i = 0; i < ode->n; i++) {
        ot_view_get(atol, i, 0, 0, &v[i]);
        if (!isfinite(v[i]) || v[i] < 0) {
            const double bad = v[i];
            free(v);
            return ot__fail(OT_ERR_VALUE,
                            "atol: atol[%lld] is %g; must be finite and >= 0",
                            (long long)i, bad);
        }
        if (v[i] == 0 && ode->rtol == 0) {
            free(v);
            return refuse_zero_tolerances("atol", i);
        }
    }
    free(ode->atol_vec);
    ode->atol_vec = v;
    return OT_OK;
}

int ot_ode_set_t0(ot_ode *ode, double t0)
{
    NEED_ODE("ot_ode_set_t0");
    if (!isfinite(t0))
        return ot__fail(OT_ERR_VALUE, "t0: %g; must be finite", t0);
    ode->t0 = t0;
    return OT_OK;
}

int ot_ode_set_first_step(ot_ode *ode, double h0)
{
    return set_nonneg(ode, "ot_ode_set_first_step", "first_step", h0,
                      ode ? &ode->h0 : NULL);
}

int ot_ode_set_max_step(ot_ode *ode, double hmax)
{
    return set_nonneg(ode, "ot_ode_set_max_step", "max_step", hmax,
                      ode ? &ode->hmax : NULL);
}

int ot_ode_set_max_order(ot_ode *ode, int max_order)
{
    NEED_ODE("ot_ode_set_max_order");
    if (max_order < 0 || max_order > 12)
        return ot__fail(OT_ERR_VALUE,
                        "max_order: %d; must be 1 to 5 for OT_BDF, 1 to 12 for OT_ADAMS, "
                        "or 0 for the method's own maximum",
                        max_order);
    ode->max_order = max_order;
    return OT_OK;
}

/* Two tolerances of one option: finite and >= 0 each. */
static int check_pair(const char *what_r, double rtol, const char *what_a, double atol)
{
    const int st = check_nonneg(what_r, rtol);
    return st == OT_OK ? check_nonneg(what_a, atol) : st;
}

int ot_ode_set_sens_tolerances(ot_ode *ode, double rtol, double atol)
{
    NEED_ODE("ot_ode_set_sens_tolerances");
    const int st = check_pair("sens_rtol", rtol, "sens_atol", atol);
    if (st == OT_OK) {
        ode->sens_rtol = rtol;
        ode->sens_atol = atol;
    }
    return st;
}

int ot_ode_set_adjoint_tolerances(ot_ode *ode, double rtol, double atol)
{
    NEED_ODE("ot_ode_set_adjoint_tolerances");
    int st = check_pair("adjoint_rtol", rtol, "adjoint_atol", atol);
    if (st == OT_OK && !(rtol < 1))
        st = ot__fail(OT_ERR_VALUE, "adjoint_rtol: %g; must be < 1", rtol);
    if (st == OT_OK && (rtol == 0) != (atol == 0))
        st = ot__fail(OT_ERR_VALUE,
                      "adjoint_tolerances: rtol %g, atol %g; give both (> 0), or both 0 "
                      "for the forward ones",
                      rtol, atol);
    if (st != OT_OK)
        return st;
    ode->adj_rtol = rtol;
    ode->adj_atol = atol;
    return OT_OK;
}

int ot_ode_set_device(ot_ode *ode, ot_device device)
{
    NEED_ODE("ot_ode_set_device");
    if ((device.type != OT_CPU && device.type != OT_CUDA) || device.id < 0)
        return ot__fail(OT_ERR_DEVICE,
                        "device: (%d, %d); odetensor runs on CPU (1) or CUDA (2) with an "
                        "id >= 0",
                        (int)device.type, (int)device.id);
    ode->device = device;
    return OT_OK;
}

int ot_ode_set_kernel_model(ot_ode *ode, const ot_kernel_model *model)
{
    NEED_ODE("ot_ode_set_kernel_model");
    if (model != NULL && model->abi != OT_KERNEL_ABI)
        return ot__fail(
            OT_ERR_VERSION,
            "ot_ode_set_kernel_model: model %s was built against kernel ABI %d; "
            "this library has %d (rebuild the model with this odetensor)",
            model->name ? model->name : "(unnamed)", model->abi, OT_KERNEL_ABI);
    if (model != NULL && (model->n != ode->n || model->np != ode->np))
        return ot__fail(OT_ERR_SHAPE,
                        "ot_ode_set_kernel_model: model %s has n = %lld, np = %lld; the "
                        "problem has n = %lld, np = %lld",
                        model->name ? model->name : "(unnamed)", (long long)model->n,
                        (long long)model->np, (long long)ode->n, (long long)ode->np);
    if (model != NULL && model->host == NULL)
        return ot__fail(OT_ERR_ARG,
                        "ot_ode_set_kernel_model: model %s has no host solver",
                        model->name ? model->name : "(unnamed)");
    ode->kmodel = model;
    return OT_OK;
}

/* Checking a solve request: shapes, lane count, times and values. */
#include <math.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "entry/plan_with.h"
#include "entry/size_limits.h"
#include "solve/solve.h"
#include "kit/events.h"
#include "kernel/kernel.h"
#include "kit/integ.h"
#include "tensor/tensor_impl.h"

/* v as an f64 view the solve can read: the view itself, a converted host
 * copy owned by *owned, or, for a solver that reads device inputs in place
 * (y0 and params when device_ok), a device view. *on_device tells which.
 * Device inputs the plan must read itself (t_eval) come back as a host
 * copy that the solver makes (its host_copy hook). */

int ot__plan_lacks(const ot__plan *pl, const char *arg, const char *rule)
{
    return ot__fail(OT_ERR_ARG, "%s: the %s solver %s (" OT__SOLVER_CHOICE ")", arg,
                    pl->solver->name, rule);
}

static int as_f64(const ot__plan *pl, ot_view *v, ot_tensor **owned, const char *name,
                  int device_ok, int *on_device)
{
    const ot__solver *s = pl->solver;
    *on_device = v->layout.device.type != OT_CPU;
    if (*on_device && !s->device_inputs)
        return ot__fail(OT_ERR_DEVICE,
                        "%s: device memory, but this solve runs on the CPU "
                        "(ot_ode_set_device selects CUDA)",
                        name);
    if (*on_device && device_ok) {
        if (v->layout.dtype != OT_F64)
            return ot__fail(OT_ERR_DTYPE, "%s: device inputs must be f64", name);
        return OT_OK;
    }
    int st;
    if (*on_device) {
        st = s->host_copy(*v, owned, name);
        *on_device = 0;
    } else if (v->layout.dtype == OT_F64) {
        return OT_OK;
    } else {
        st = ot_tensor_copy_colmajor(owned, &v->layout, OT_F64);
    }
    if (st == OT_OK)
        *v = ot_tensor_view(*owned);
    return st;
}

/* The online CPUs, read once: glibc reads them from a file in /sys, three
 * system calls that a solve call should not pay every time. */
static int64_t cpu_count(void)
{
    static _Atomic long cached; /* 0: not read yet */
    long c = cached;
    if (c == 0) {
        c = sysconf(_SC_NPROCESSORS_ONLN);
        c = c > 0 ? c : 1;
        cached = c;
    }
    return c;
}

/* Worker threads for the units a solve deals (lanes, or lockstep blocks):
 * the problem's, or one per CPU, never more than the units. */
static int64_t thread_count(const ot_ode *ode, int64_t units)
{
    const int64_t t = ode->threads > 0 ? ode->threads : cpu_count();
    return t < units ? t : units;
}

/* The lane count an input asks for: its second extent, 1 for one lane. */
static int64_t lanes_of(ot_view v)
{
    return !ot_view_is_absent(v) && v.layout.ndim == 2 ? v.layout.shape[1] : 1;
}

/* Every value of v finite. A lane's own column that is not fails that lane
 * alone where the solver can leave it out (pl->bad |= which); a broadcast
 * one, every lane's, refuses the call. */
static int check_finite(ot__plan *pl, ot_view v, int64_t rows, const char *name,
                        unsigned char which)
{
    const int64_t cols = v.layout.shape[1] == 1 ? 1 : pl->nbatch;
    for (int64_t b = 0; b < cols; b++) {
        const double *c = ot_view_col_f64(v, b, 0);
        int64_t i = 0;
        while (i < rows && isfinite(c[i]))
            i++;
        if (i == rows)
            continue;
        if (cols == 1 || !pl->solver->bad_inputs_alone)
            return ot__fail(OT_ERR_VALUE, "%s: [%lld, %lld] is %g; values must be finite",
                            name, (long long)i, (long long)b, c[i]);
        if (pl->bad == NULL && (pl->bad = OT__CALLOC((size_t)pl->nbatch, 1)) == NULL)
            return ot__fail(OT_ERR_NOMEM, "solve: cannot allocate the lanes' marks");
        pl->bad[b] |= which;
    }
    return OT_OK;
}

int ot__plan_bad_message(const ot__plan *pl, int64_t b, char *msg, size_t len)
{
    const int y0 = pl->bad[b] & 1;
    const ot_view v = y0 ? pl->y0 : pl->p;
    const int64_t rows = y0 ? pl->n : pl->np;
    const double *c = ot_view_col_f64(v, b, 0);
    int64_t i = 0;
    while (i < rows - 1 && isfinite(c[i]))
        i++;
    return snprintf(msg, len,
                    "%s: [%lld, %lld] is %g; values must be finite (the lane "
                    "fails alone)",
                    y0 ? "y0" : "params", (long long)i, (long long)b, c[i]);
}

/* The output-time rules, once for the plan and for ot_times_check. */
static int times_check_shape(ot_view t_eval)
{
    if (ot_view_is_absent(t_eval))
        return ot__fail(OT_ERR_ARG, "t_eval: absent; give the output times");
    if (t_eval.layout.ndim != 1 || t_eval.layout.shape[0] < 1)
        return ot__fail(OT_ERR_SHAPE, "t_eval: needs shape [nt] with nt >= 1 (ndim %d)",
                        (int)t_eval.layout.ndim);
    return OT_OK;
}

/* t[0..nt), f64 or (f32 set) f32, contiguous: finite, strictly increasing,
 * none before t0. */
static int times_check_values(const void *t, int f32, int64_t nt, double t0)
{
    double prev = 0;
    for (int64_t i = 0; i < nt; i++) {
        const double ti = f32 ? (double)((const float *)t)[i] : ((const double *)t)[i];
        if (!isfinite(ti))
            return ot__fail(OT_ERR_VALUE,
                            "t_eval: t_eval[%lld] is %g; times must be finite",
                            (long long)i, ti);
        if (i > 0 && !(ti > prev))
            return ot__fail(OT_ERR_VALUE,
                            "t_eval: t_eval[%lld] = %g is not after t_eval[%lld] = %g; "
                            "times must increase strictly",
                            (long long)i, ti, (long long)i - 1, prev);
        prev = ti;
    }
    const double first = f32 ? (double)*(const float *)t : *(const double *)t;
    if (first < t0)
        return ot__fail(OT_ERR_VALUE, "t_eval: t_eval[0] = %g is before t0 = %g", first,
                        t0);
    return OT_OK;
}

int ot_times_check(ot_view t_eval, double t0)
{
    int st = times_check_shape(t_eval);
    if (st != OT_OK)
        return st;
    if (t_eval.layout.device.type != OT_CPU)
        return ot__fail(OT_ERR_DEVICE, "t_eval: must be in host memory");
    /* A view of one axis is contiguous (the layout rules), f32 or f64. */
    return times_check_values(t_eval.layout.data, t_eval.layout.dtype == OT_F32,
                              t_eval.layout.shape[0], t0);
}

/* Whether t_eval of this shape holds a column of times per lane: [nt,
 * nbatch] with nbatch > 1, and [nt, 1] for a batch of one where the request
 * takes per-lane times (then it may be NaN-padded like any lane's column);
 * [nt, 1] for more lanes is one column for all. */
static int per_lane_times(const ot__plan *pl, const ot_layout *l)
{
    if (l->ndim != 2)
        return 0;
    return l->shape[1] > 1 ||
           (pl->nbatch == 1 && pl->solver->per_lane_times &&
            (pl->kind != OT__ADJ || pl->solver->adjoint_per_lane_times));
}

/* t_eval [nt] or [nt, 1]: shared; [nt, nbatch]: each lane its own times,
 * increasing, NaN-padded at the end (at least one real time a lane). */
static int check_times(ot__plan *pl, ot_view t_eval)
{
    int dev;
    int st = as_f64(pl, &t_eval, &pl->owned[2], "t_eval", 0, &dev);
    if (st != OT_OK)
        return st;
    pl->nt = t_eval.layout.shape[0];
    pl->t = ot_view_col_f64(t_eval, 0, 0);
    pl->t_lanes = per_lane_times(pl, &t_eval.layout);
    if (!pl->t_lanes && pl->t0s) { /* name the lane whose start is after t_eval[0] */
        if ((st = times_check_values(pl->t, 0, pl->nt, -INFINITY)) != OT_OK)
            return st;
        for (int64_t b = 0; b < pl->nbatch; b++)
            if (pl->t[0] < ot__plan_t0(pl, b))
                return ot__fail(OT_ERR_VALUE,
                                "t_eval: t_eval[0] = %g is before lane %lld's t0 = %g "
                                "(times shared by every lane start at or after each "
                                "lane's start)",
                                pl->t[0], (long long)b, ot__plan_t0(pl, b));
        return OT_OK;
    }
    if (!pl->t_lanes)
        return times_check_values(pl->t, 0, pl->nt, pl->t0);
    pl->t_stride = t_eval.layout.strides[1] / (int64_t)sizeof(double);
    for (int64_t b = 0; b < pl->nbatch; b++) {
        const int64_t k = ot__plan_nt(pl, b);
        if (k == 0)
            return ot__fail(OT_ERR_VALUE,
                            "t_eval: lane %lld has no output time (all NaN)",
                            (long long)b);
        if ((st = times_check_values(ot__plan_times(pl, b), 0, k, ot__plan_t0(pl, b))) !=
            OT_OK) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s", ot_last_error());
            return ot__fail(
                st, "%s (lane %lld; per-lane times are NaN-padded at the end only)", msg,
                (long long)b);
        }
    }
    return OT_OK;
}

/* t_eval's shape: [nt], or [nt, 1] / [nt, nbatch] (per lane, where the
 * solver has per-lane times). */
static int check_times_shape(ot__plan *pl, ot_view t_eval)
{
    const ot_layout *l = &t_eval.layout;
    pl->t_lanes = per_lane_times(pl, l);
    if (l->ndim != 2)
        return times_check_shape(t_eval);
    if (l->shape[0] < 1 || (l->shape[1] != 1 && l->shape[1] != pl->nbatch))
        return pl->nbatch == 1
                   ? ot__fail(OT_ERR_SHAPE,
                              "t_eval: shape [%lld, %lld]; expected [nt] or [nt, 1] "
                              "(nt >= 1) for one lane",
                              (long long)l->shape[0], (long long)l->shape[1])
                   : ot__fail(OT_ERR_SHAPE,
                              "t_eval: shape [%lld, %lld]; expected [nt], [nt, 1] or "
                              "[nt, %lld] (nt >= 1; a column of times per lane)",
                              (long long)l->shape[0], (long long)l->shape[1],
                              (long long)pl->nbatch);
    if (l->shape[1] > 1 && !pl->solver->per_lane_times)
        return ot__fail(OT_ERR_ARG,
                        "t_eval: per-lane output times: the %s solver takes shared "
                        "times [nt] only",
                        pl->solver->name);
    return OT_OK;
}

/* The default lockstep block for n states (ot_ode_set_lockstep_block 0):
 * as many lanes as keep a block's working set, about 8 (n^2 + 20 n) bytes a
 * lane (its Jacobian block and CVODE's vectors), near 256 KiB, rounded down
 * to a power of two within [16, 4096]. Measured (BENCHMARKS.md, issue 12
 * item 3, 2 threads): Robertson (n = 3) gets 256, within noise of the best
 * block (256-1024: 7.0-7.4x lanes mode at +-10 % rates, 4.4x over 2 decades,
 * 3.7x over 4); the Brusselator gets 256 at n = 4 (2.7x, best 2.8x at 64),
 * 32 at n = 16 and 16 from n = 64 on, where lockstep still loses to lanes
 * mode (0.8x, 0.7x) but least. A function of n alone, never of the thread
 * count: results depend on the block size only. */
static int64_t auto_block(int64_t n)
{
    const double bytes = 8.0 * ((double)n * (double)n + 20.0 * (double)n);
    int64_t b = 4096;
    while (b > 16 && (double)b * bytes > 262144.0)
        b /= 2;
    return b;
}

static const char *linsol_name(int ls)
{
    return ls == OT_LINSOL_BAND ? "OT_LINSOL_BAND" : "OT_LINSOL_GMRES";
}

/* The linear solver: band and GMRES serve implicit methods, in the solvers
 * that have them. */
static int check_linsol(const ot__plan *pl, const ot__method_info *m)
{
    const ot_ode *ode = pl->ode;
    if (ode->psetup && ode->linsol != OT_LINSOL_GMRES)
        return ot__fail(OT_ERR_ARG, "preconditioner: set, but the linear solver is not "
                                    "OT_LINSOL_GMRES (ot_ode_set_linear_solver)");
    if (ode->linsol == OT_LINSOL_DENSE)
        return OT_OK;
    const char *ls = linsol_name(ode->linsol);
    if (!m->implicit)
        return ot__fail(OT_ERR_ARG,
                        "linear_solver: %s, but %s solves no linear systems; it serves "
                        "OT_BDF, OT_ESDIRK* and OT_IMEX_ARK*",
                        ls, m->name);
    if (!(pl->solver->linsols & OT__LINSOL_BIT(ode->linsol)))
        return ot__fail(OT_ERR_ARG,
                        "linear_solver: %s runs in OT_LANES mode; %s factors its "
                        "lanes' blocks densely (use OT_LINSOL_DENSE or OT_LANES)",
                        ls, pl->solver->name);
    if (pl->kind == OT__ADJ || (pl->kind == OT__SENS && ode->dfdp))
        return ot__fail(OT_ERR_ARG,
                        "linear_solver: %s with %s; they use the dense Jacobian: set "
                        "OT_LINSOL_DENSE",
                        ls, pl->kind == OT__ADJ ? "the adjoint" : "dfdp");
    if (ode->linsol == OT_LINSOL_BAND && (ode->mupper >= pl->n || ode->mlower >= pl->n))
        return ot__fail(
            OT_ERR_VALUE,
            "bandwidths: mupper = %lld, mlower = %lld; each must be < n = %lld "
            "(ot_ode_set_bandwidths)",
            (long long)ode->mupper, (long long)ode->mlower, (long long)pl->n);
    return OT_OK;
}

/* What a kernel method cannot do that the problem asks. */
static int check_kernel(const ot__plan *pl, const ot__method_info *m)
{
    const ot_ode *ode = pl->ode;
    if (ode->max_order > 0)
        return ot__fail(OT_ERR_VALUE,
                        "max_order: %d; %s has a fixed order (%d): set 0, or use OT_BDF "
                        "or OT_ADAMS",
                        ode->max_order, m->name, m->order);
    if (ode->linsol != OT_LINSOL_DENSE || ode->psetup)
        return ot__fail(OT_ERR_ARG,
                        "linear_solver: %s runs in OT_LANES mode with OT_BDF and "
                        "OT_ESDIRK*; %s factors each lane's matrix densely (the %s "
                        "solver): set OT_LINSOL_DENSE",
                        ode->psetup ? "a preconditioner" : linsol_name(ode->linsol),
                        m->name, pl->solver->name);
    return OT_OK;
}

/* The kernel methods' lane group: the problem's, or 8 where the callbacks
 * can take a group's lanes at their own times (or need not: autonomous),
 * else 1; never more than the batch. A group asked of callbacks that take
 * one time is refused. */
static int lane_group(ot__plan *pl)
{
    const ot_ode *ode = pl->ode;
    const int explicit_method = !ot__method(ode->method)->implicit;
    const int rhs_ok = ode->rhs_lanes != NULL || ode->autonomous;
    const int jac_ok = explicit_method || ode->autonomous || ode->jac_lanes != NULL ||
                       (ode->jac == NULL && ode->rhs_lanes != NULL);
    int64_t g = ode->lane_group;
    if (g > 1 && !(rhs_ok && jac_ok))
        return ot__fail(
            OT_ERR_ARG,
            "ot_ode_set_lane_group: %lld, but the problem's %s takes one time for "
            "all lanes: give ot_ode_set_%s_lanes, or declare it "
            "ot_ode_set_autonomous, or set 1",
            (long long)g, rhs_ok ? "Jacobian" : "rhs", rhs_ok ? "jac" : "rhs");
    if (g == 0)
        g = rhs_ok && jac_ok ? OT__KERNEL_GROUP : 1;
    pl->block = g < pl->nbatch ? g : pl->nbatch;
    return OT_OK;
}

/* What a Runge-Kutta method (ARKStep) cannot do, and the IMEX split. */
static int check_method(const ot__plan *pl, const ot__method_info *m)
{
    const ot_ode *ode = pl->ode;
    if (m->imex && ode->rhs_explicit == NULL)
        return ot__fail(
            OT_ERR_ARG,
            "rhs_explicit: %s splits the rhs, but the problem has no explicit "
            "part (ot_ode_set_rhs_explicit); the rhs is the implicit part",
            m->name);
    if (!m->imex && ode->rhs_explicit != NULL)
        return ot__fail(OT_ERR_ARG,
                        "rhs_explicit: set, but %s does not split the rhs; use an "
                        "OT_IMEX_ARK* method or remove it and give the whole rhs",
                        m->name);
    if (m->kernel)
        return check_kernel(pl, m);
    int st = check_linsol(pl, m);
    if (st != OT_OK || !m->ark)
        return st;
    if (pl->kind == OT__SENS || pl->kind == OT__ADJ)
        return ot__fail(
            OT_ERR_ARG, "method: %s has no %s (ARKODE has none); use OT_BDF or OT_ADAMS",
            m->name, pl->kind == OT__SENS ? "forward sensitivities" : "adjoint");
    if (ode->max_order > 0)
        return ot__fail(OT_ERR_VALUE,
                        "max_order: %d; %s has a fixed order (%d): set 0, or use OT_BDF "
                        "or OT_ADAMS",
                        ode->max_order, m->name, m->order);
    if (!pl->solver->arkode_methods)
        return ot__fail(OT_ERR_ARG,
                        "method: the %s solver runs OT_BDF and OT_ADAMS only, not %s "
                        "(" OT__SOLVER_CHOICE ")",
                        pl->solver->name, m->name);
    return OT_OK;
}

static int make(ot__plan *pl, const ot_ode *ode, ot_view y0, ot_view params,
                ot_view t_eval, double t_final, ot__kind kind, ot_view t0v,
                ot_view stopsv);

int ot__plan_make(ot__plan *pl, const ot_ode *ode, ot_view y0, ot_view params,
                  ot_view t_eval, double t_final, ot__kind kind)
{
    return make(pl, ode, y0, params, t_eval, t_final, kind, ot_view_absent(),
                ot_view_absent());
}

int ot__plan_make_with(ot__plan *pl, const ot_ode *ode, const ot_solve_inputs *in,
                       ot__kind kind)
{
    const int st =
        make(pl, ode, in->y0, in->params, in->t_eval, 0, kind, in->t0, in->stops);
    return st != OT_OK ? st : ot__plan_check_stops_dp(pl, in->stops_dp);
}

static int make(ot__plan *pl, const ot_ode *ode, ot_view y0, ot_view params,
                ot_view t_eval, double t_final, ot__kind kind, ot_view t0v,
                ot_view stopsv)
{
    memset(pl, 0, sizeof *pl);
    if (ode == NULL)
        return ot__fail(OT_ERR_ARG, "ode: NULL");
    pl->ode = ode;
    pl->kind = kind;
    pl->n = ode->n;
    pl->np = ode->np;
    pl->rows = ode->out ? ode->nout : ode->n;
    pl->t0 = ode->t0;
    pl->solver = ot__solver_for(ode);
    pl->progress = ode->progress;
    pl->progress_user = ode->progress_user;
    pl->has_y0 = !ot_view_is_absent(y0);
    if (!pl->has_y0 && ode->init == NULL)
        return ot__fail(OT_ERR_ARG, "y0: absent, and the problem has no init callback");
    if (ot_view_is_absent(params) && ode->np > 0)
        return ot__fail(OT_ERR_ARG, "params: absent, but the problem has %lld parameters",
                        (long long)ode->np);
    pl->ns = kind == OT__SENS ? ode->np + (ode->sens_initial ? ode->n : 0) : 0;
    if (kind == OT__SENS && pl->ns == 0)
        return ot__fail(OT_ERR_ARG, "params: sensitivities need nparams >= 1 (or "
                                    "ot_ode_set_sens_initial)");
    if (kind == OT__SENS && !pl->solver->fwd_sens)
        return ot__plan_lacks(pl, "ot_solve_fwd_sens", "has no forward sensitivities");
    if (kind == OT__SENS && ode->sens_initial && !pl->solver->sens_initial)
        return ot__plan_lacks(pl, "sens_initial", "has sensitivities to parameters only");
    const ot__method_info *m = ot__method(ode->method);
    int st;
    /* Checked here, not when set: the method may be set after them. */
    if (ode->method == OT_BDF && ode->max_order > 5)
        return ot__fail(OT_ERR_VALUE, "max_order: %d; OT_BDF allows 1 to 5",
                        ode->max_order);
    if (ode->dfdp && kind == OT__SENS && ode->jac == NULL)
        return ot__fail(OT_ERR_ARG,
                        "dfdp: sensitivities from df/dp also need the Jacobian "
                        "(ot_ode_set_jac): their rhs is J s_j + df/dp_j");
    if (ode->dfdp && kind == OT__SENS && !pl->solver->sens_dfdp)
        return ot__plan_lacks(
            pl, "dfdp",
            "computes sensitivities by difference quotients only; unset dfdp");
    if (ot__ode_records_events(ode) && !pl->solver->recorded_events)
        return ot__plan_lacks(
            pl, "event_actions",
            "stops lanes at their roots only (OT_EVENT_STOP); record or handle "
            "events with another solver");
    if (ot__ode_handles_events(ode) && ode->event_fn == NULL)
        return ot__fail(OT_ERR_ARG,
                        "event_actions: a root has OT_EVENT_HANDLE but the "
                        "problem has no event handler (ot_ode_set_event_handler)");
    if (ot__ode_handles_events(ode) && kind == OT__SENS && !pl->solver->sens_events)
        return ot__plan_lacks(
            pl, "event_actions",
            "has no sensitivities through handled events; record the events "
            "(OT_EVENT_RECORD) or solve without sensitivities");
    if (ode->nroots > 0 && !pl->solver->roots)
        return ot__plan_lacks(pl, "roots",
                              "has no root functions yet; solve without them");
    if (kind == OT__STEPS && !pl->solver->every_step)
        return ot__plan_lacks(pl, "ot_solve",
                              "has no every-step output yet; give output times "
                              "(ot_solve_dense)");
    if (kind == OT__ADJ && !pl->solver->adjoint)
        return ot__plan_lacks(pl, "ot_solve_adjoint", "has no adjoint yet");
    if (kind == OT__ADJ && ode->nroots > 0 && !pl->solver->adjoint_events)
        return ot__plan_lacks(pl, "roots",
                              "has no adjoint through events; solve without roots");
    for (int64_t r = 0; kind == OT__ADJ && r < ode->nroots; r++)
        if (ot__event_action(ode, r) == OT_EVENT_STOP)
            return ot__fail(OT_ERR_ARG,
                            "event_actions: root %lld stops its lane (OT_EVENT_STOP, the "
                            "default); ot_solve_adjoint takes roots that are handled or "
                            "recorded (a loss over outputs a lane never reaches has no "
                            "gradient)",
                            (long long)r);
    if (ode->method != OT_BDF && ode->stab_limit)
        return ot__fail(
            OT_ERR_ARG,
            "stability_limit_detection: only OT_BDF has it; turn it off for %s", m->name);
    if ((st = check_method(pl, m)) != OT_OK)
        return st;

    /* nbatch: the lane count of whichever input has more than one lane;
     * ot_view_check_lanes then names the one that disagrees. */
    const int64_t ly = pl->has_y0 ? lanes_of(y0) : 1, lp = lanes_of(params);
    pl->nbatch = ly > 1 ? ly : lp;
    if (ly == 0 || lp == 0)
        return ot__fail(OT_ERR_SHAPE, "%s: has 0 lanes; a batch needs at least one lane",
                        ly == 0 ? "y0" : "params");
    if ((st = ot__solver_check(ode)) != OT_OK)
        return st;
    int64_t want = ode->lockstep_block;
    if (pl->solver->lockstep && want > 0 && want < pl->nbatch && pl->solver->whole_batch)
        return ot__fail(OT_ERR_ARG,
                        "lockstep_block: %lld; the %s solver runs the whole batch "
                        "(nbatch = %lld) as one block: set 0",
                        (long long)want, pl->solver->name, (long long)pl->nbatch);
    if (want == 0)
        want = pl->solver->whole_batch ? pl->nbatch : auto_block(pl->n);
    pl->block = !pl->solver->lockstep ? 1 : want < pl->nbatch ? want : pl->nbatch;
    if (pl->solver->lane_groups && (st = lane_group(pl)) != OT_OK)
        return st;
    pl->threads = thread_count(ode, (pl->nbatch + pl->block - 1) / pl->block);
    /* Shapes, then the bytes the solve needs, before any value is read or
     * any copy made: a batch too big for memory is refused at once. */
    int dev;
    if ((pl->has_y0 &&
         (st = ot_view_check_lanes(y0, pl->n, pl->nbatch, "y0")) != OT_OK) ||
        (!ot_view_is_absent(params) &&
         (st = ot_view_check_lanes(params, pl->np, pl->nbatch, "params")) != OT_OK) ||
        (kind != OT__STEPS && (st = check_times_shape(pl, t_eval)) != OT_OK) ||
        (st = ot__size_check(pl, y0, params, t_eval,
                             kind != OT__STEPS ? t_eval.layout.shape[0] : 0)) != OT_OK)
        return st;
    if (pl->has_y0) {
        if ((st = as_f64(pl, &y0, &pl->owned[0], "y0", 1, &dev)) != OT_OK ||
            (!dev && (st = check_finite(pl, y0, pl->n, "y0", 1)) != OT_OK))
            return st;
        pl->y0 = y0;
    }
    if (ot_view_is_absent(params)) {
        pl->p = ot__view_compact(NULL, 0, 1); /* empty [0, 1]: never read */
    } else {
        if ((st = as_f64(pl, &params, &pl->owned[1], "params", 1, &dev)) != OT_OK ||
            (!dev && (st = check_finite(pl, params, pl->np, "params", 2)) != OT_OK))
            return st;
        pl->p = params;
    }
    if (kind == OT__STEPS) {
        if (!isfinite(t_final) || !(t_final > pl->t0))
            return ot__fail(OT_ERR_VALUE,
                            "final_time: %g; must be finite and after t0 = %g", t_final,
                            pl->t0);
        pl->t_final = t_final;
        pl->step_limit = ode->max_steps;
        return OT_OK;
    }
    if ((st = ot__plan_check_extras(pl, t0v, stopsv)) != OT_OK)
        return st;
    return check_times(pl, t_eval);
}

int64_t ot__lockstep_auto_block(int64_t n) { return auto_block(n); }

void ot__plan_free(ot__plan *pl)
{
    free(pl->bad);
    pl->bad = NULL;
    for (int i = 0; i < 3; i++) {
        ot_tensor_free(pl->owned[i]);
        pl->owned[i] = NULL;
    }
}

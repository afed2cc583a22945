/* ot_dose_solve_* (dosing.h): the plan's checks against the problem and the
 * model, each lane's schedule and steady states, the solve of the wrapped
 * problem with each subject's stops and observation times, and the results
 * trimmed to the user's parameters. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "dosing/dose_solve.h"
#include "solution/solution_impl.h"

ot_dose_model ot_dose_model_make(void)
{
    ot_dose_model m;
    memset(&m, 0, sizeof m);
    return m;
}

enum { DENSE, SENS, ADJ };

/* Everything one solve owns. */
typedef struct {
    ot__dose_ctx c;
    ot__dose_lane *lanes;
    double *p, *y0, *te, *stops, *stops_dp;
    double *atol_sub; /* the intervals' atol vector (steady states), or NULL */
    int64_t nsubj, nobs, nstops;
} job;

static void job_free(job *j)
{
    for (int64_t b = 0; j->lanes && b < j->nsubj; b++)
        ot__dose_lane_free(&j->lanes[b]);
    free(j->lanes);
    free(j->c.slot_of);
    free(j->c.slot_state);
    free(j->c.pbuf);
    free(j->c.dbuf);
    free(j->p);
    free(j->y0);
    free(j->te);
    free(j->stops);
    free(j->stops_dp);
    free(j->atol_sub);
}

/* The model's parameter arrays: each index -1 or in [0, np). */
static int check_model(const ot_dose_model *m, int64_t ncmt, int64_t np, const char *fn)
{
    const int64_t *arr[4] = {m->f, m->lag, m->rate, m->duration};
    static const char *names[4] = {"f", "lag", "rate", "duration"};
    for (int a = 0; a < 4; a++)
        for (int64_t c = 0; arr[a] && c < ncmt; c++)
            if (arr[a][c] < -1 || arr[a][c] >= np)
                return ot__fail(OT_ERR_ARG,
                                "%s: model->%s[%lld] (CMT %lld) is %lld; a parameter "
                                "index is in [0, np = %lld), or -1 for none",
                                fn, names[a], (long long)c, (long long)c + 1,
                                (long long)arr[a][c], (long long)np);
    if (!(m->ss_tol >= 0) || !(m->ss_interval >= 0) || m->ss_max_iter < 0)
        return ot__fail(OT_ERR_ARG,
                        "%s: model->ss_tol (%g), ss_interval (%g) and ss_max_iter "
                        "(%lld) must be >= 0 (0: the defaults)",
                        fn, m->ss_tol, m->ss_interval, (long long)m->ss_max_iter);
    return OT_OK;
}

/* The plan against the problem: times from t0, observations, modelled
 * rates' parameters; and the compartments that take infusions (slots). */
static int check_plan(job *j, const ot_dose_plan *plan, const ot_dose_model *m, double t0,
                      const char *fn)
{
    const int64_t ncmt = j->c.ncmt;
    j->c.slot_of = malloc((size_t)ncmt * sizeof *j->c.slot_of);
    j->c.slot_state = malloc((size_t)ncmt * sizeof *j->c.slot_state);
    if (!j->c.slot_of || !j->c.slot_state)
        return ot__fail(OT_ERR_NOMEM, "%s: out of memory", fn);
    for (int64_t c = 0; c < ncmt; c++)
        j->c.slot_of[c] = -1;
    for (int64_t s = 0; s < j->nsubj; s++) {
        const ot_dose_action *a = NULL;
        int64_t na = 0, nobs = 0;
        double id = 0;
        ot_dose_plan_actions(plan, s, &a, &na);
        ot_dose_plan_observations(plan, s, &nobs, NULL, NULL, NULL);
        ot_dose_plan_subject_id(plan, s, &id);
        if (nobs == 0)
            return ot__fail(OT_ERR_ARG,
                            "%s: ID %.15g has no observation (EVID 0 with MDV 0); each "
                            "subject is a lane with output times",
                            fn, id);
        j->nobs = nobs > j->nobs ? nobs : j->nobs;
        for (int64_t i = 0; i < na; i++) {
            if (a[i].time < t0)
                return ot__fail(OT_ERR_ARG,
                                "%s: row %lld (ID %.15g), TIME: %g is before the "
                                "problem's t0 %g, where every subject starts",
                                fn, (long long)a[i].row, id, a[i].time, t0);
            const int rate = a[i].kind == OT_DOSE_INFUSION_START ||
                             (a[i].kind == OT_DOSE_STEADY_STATE &&
                              (a[i].rate_kind != OT_RATE_DATA || a[i].duration > 0));
            if (!rate)
                continue;
            const int64_t c = a[i].cmt - 1;
            const int64_t *need = a[i].rate_kind == OT_RATE_MODELLED       ? m->rate
                                  : a[i].rate_kind == OT_DURATION_MODELLED ? m->duration
                                                                           : NULL;
            if (a[i].rate_kind < 0 && (need == NULL || need[c] < 0))
                return ot__fail(OT_ERR_ARG,
                                "%s: row %lld (ID %.15g), RATE: %d models the %s, and "
                                "model->%s[%lld] (CMT %lld) names no parameter",
                                fn, (long long)a[i].row, id, (int)a[i].rate_kind,
                                a[i].rate_kind == -1 ? "rate" : "duration",
                                a[i].rate_kind == -1 ? "rate" : "duration", (long long)c,
                                (long long)c + 1);
            if (j->c.slot_of[c] < 0) {
                j->c.slot_state[j->c.nslot] = j->c.cmt_state[c];
                j->c.slot_of[c] = j->c.nslot++;
            }
        }
    }
    return OT_OK;
}

/* y0 as f64 [n, nsubj] (a reset's state), and params [np + nslot, nsubj]. */
static int inputs(job *j, ot_view y0, ot_view params, const char *fn)
{
    const int64_t n = j->c.n, np = j->c.np, npf = np + j->c.nslot, nb = j->nsubj;
    int st;
    if (!ot_view_is_absent(y0)) {
        if ((st = ot_view_check_lanes(y0, n, nb, "y0")) != OT_OK)
            return st;
        if (!(j->y0 = malloc((size_t)(n * nb) * sizeof *j->y0)))
            return ot__fail(OT_ERR_NOMEM, "%s: out of memory", fn);
        for (int64_t b = 0; b < nb; b++)
            for (int64_t i = 0; i < n; i++)
                ot_view_get(y0, i, y0.layout.shape[1] == 1 ? 0 : b, 0, &j->y0[b * n + i]);
    } else if (j->c.user->init == NULL) {
        return ot__fail(OT_ERR_ARG, "%s: y0 is absent and the problem has no init", fn);
    }
    if (np > 0 && (st = ot_view_check_lanes(params, np, nb, "params")) != OT_OK)
        return st;
    if (!(j->p = calloc((size_t)(npf * nb) + 1, sizeof *j->p)))
        return ot__fail(OT_ERR_NOMEM, "%s: out of memory", fn);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < np; i++)
            ot_view_get(params, i, params.layout.shape[1] == 1 ? 0 : b, 0,
                        &j->p[b * npf + i]);
    return OT_OK;
}

/* Output times [nobs, nsubj] and stops [nstops, nsubj] (and their
 * derivatives [npf, nstops, nsubj]), NaN-padded. */
static int times(job *j, const ot_dose_plan *plan, int with_dp, const char *fn)
{
    const int64_t nb = j->nsubj, np = j->c.np, npf = np + j->c.nslot;
    for (int64_t b = 0; b < nb; b++)
        j->nstops = j->lanes[b].nstops > j->nstops ? j->lanes[b].nstops : j->nstops;
    const int64_t ns = j->nstops > 0 ? j->nstops : 1;
    j->te = malloc((size_t)(j->nobs * nb) * sizeof *j->te);
    j->stops = malloc((size_t)(ns * nb) * sizeof *j->stops);
    j->stops_dp = with_dp ? calloc((size_t)(npf * ns * nb), sizeof *j->stops_dp) : NULL;
    if (!j->te || !j->stops || (with_dp && !j->stops_dp))
        return ot__fail(OT_ERR_NOMEM, "%s: out of memory for the times", fn);
    for (int64_t b = 0; b < nb; b++) {
        const double *t = NULL;
        int64_t no = 0;
        ot_dose_plan_observations(plan, b, &no, &t, NULL, NULL);
        for (int64_t i = 0; i < j->nobs; i++)
            j->te[b * j->nobs + i] = i < no ? t[i] : NAN;
        const ot__dose_lane *L = &j->lanes[b];
        for (int64_t k = 0; k < ns; k++) {
            j->stops[b * ns + k] = k < L->nstops ? L->t[k] : NAN;
            for (int64_t i = 0; with_dp && k < L->nstops && i < np; i++)
                j->stops_dp[(b * ns + k) * npf + i] = L->dtdp[k * np + i];
        }
    }
    return OT_OK;
}

/* The solution as the user's np sees it: the slots' sensitivities and
 * gradient rows dropped; the lanes that failed before they started. */
static int finish(job *j, ot_solution *sol, int kind)
{
    const int64_t np = j->c.np, nsl = j->c.nslot, nb = j->nsubj;
    if (kind == SENS && nsl > 0) {
        for (int64_t q = 0; q < nsl; q++)
            ot_tensor_free(sol->sens[np + q]);
        memmove(sol->sens + np, sol->sens + np + nsl,
                (size_t)(sol->nsens - np - nsl) * sizeof *sol->sens);
        sol->nsens -= nsl;
    }
    if (kind == ADJ && nsl > 0 && sol->grads[OT_GRAD_PARAMS]) {
        const int64_t shape[2] = {np, nb};
        ot_tensor *g = NULL;
        const int st = ot_tensor_new(&g, OT_F64, 2, shape);
        if (st != OT_OK)
            return st;
        const double *from = ot_tensor_layout(sol->grads[OT_GRAD_PARAMS])->data;
        double *to = ot_tensor_layout(g)->data;
        for (int64_t b = 0; b < nb; b++)
            memcpy(to + b * np, from + b * (np + nsl), (size_t)np * sizeof *to);
        ot_tensor_free(sol->grads[OT_GRAD_PARAMS]);
        sol->grads[OT_GRAD_PARAMS] = g;
    }
    for (int64_t b = 0; b < nb; b++)
        if (j->lanes[b].status != OT_OK)
            ot_solution_set_lane_status(sol, b, j->lanes[b].status, j->lanes[b].msg);
    return OT_OK;
}

/* An observation at a steady state's time shows its trough (observe.c):
 * not through the adjoint's loss, nor (SS 2) through an out function's
 * sensitivities, whose state sensitivities before the stop are not kept. */
static int ss_observed(const job *j, const ot_dose_plan *plan, int64_t b, int kind,
                       const char *fn)
{
    const ot__dose_lane *L = &j->lanes[b];
    for (int64_t m = 0; kind != DENSE && m < L->nss; m++) {
        const ot__dose_ss *ss = &L->ss[m];
        if (ot__dose_obs_at(plan, b, ss->t, 0) < 0 ||
            (kind == SENS && (ss->ss == 1 || j->c.user->out == NULL)))
            continue;
        double id = 0;
        ot_dose_plan_subject_id(plan, b, &id);
        return ot__fail(OT_ERR_ARG,
                        "%s: row %lld (ID %.15g), SS: an observation at the steady "
                        "state's time %g shows its trough, which %s does not take "
                        "yet; observe after it, or set model->post_dose",
                        fn, (long long)ss->dose.row, id, ss->t,
                        kind == ADJ ? "the adjoint"
                                    : "an out function's sensitivity "
                                      "with SS 2");
    }
    return OT_OK;
}

static int dose_solve(int kind, const ot_ode *ode, const ot_dose_plan *plan,
                      const ot_dose_model *model, ot_view y0, ot_view params,
                      const ot_loss *loss, ot_solution **out, const char *fn)
{
    if (ode == NULL || plan == NULL || model == NULL || out == NULL ||
        (kind == ADJ && loss == NULL))
        return ot__fail(OT_ERR_ARG, "%s: ode, plan, model%s and out must not be NULL", fn,
                        kind == ADJ ? ", loss" : "");
    const int with_dp = kind != DENSE;
    job j;
    memset(&j, 0, sizeof j);
    j.c.user = ode;
    j.c.n = ode->n;
    j.c.np = ode->np;
    j.c.ncmt = ot_dose_plan_compartments(plan);
    j.nsubj = ot_dose_plan_subjects(plan);
    j.c.fp = model->f;
    j.c.lagp = model->lag;
    j.c.ratep = model->rate;
    j.c.durp = model->duration;
    j.c.ss_interval = model->ss_interval > 0 ? model->ss_interval : 1;
    j.c.ss_tol = model->ss_tol > 0 ? model->ss_tol : 1;
    int st = check_model(model, j.c.ncmt, ode->np, fn);
    for (int64_t c = 0; st == OT_OK && c < j.c.ncmt; c++)
        if (ot_dose_plan_cmt_state(plan, c) >= ode->n)
            st = ot__fail(OT_ERR_ARG,
                          "%s: the plan maps CMT %lld to state %lld; the problem has "
                          "n = %lld states",
                          fn, (long long)c + 1,
                          (long long)ot_dose_plan_cmt_state(plan, c), (long long)ode->n);
    int64_t *cs = st == OT_OK ? malloc((size_t)j.c.ncmt * sizeof *cs) : NULL;
    if (st == OT_OK && cs == NULL)
        st = ot__fail(OT_ERR_NOMEM, "%s: out of memory", fn);
    for (int64_t c = 0; cs && c < j.c.ncmt; c++)
        cs[c] = ot_dose_plan_cmt_state(plan, c);
    j.c.cmt_state = cs;
    if (st == OT_OK && j.nsubj == 0)
        st = ot__fail(OT_ERR_ARG, "%s: the plan has no subjects", fn);
    if (st == OT_OK)
        st = check_plan(&j, plan, model, ode->t0, fn);
    if (st == OT_OK)
        st = inputs(&j, y0, params, fn);
    const int64_t npf = j.c.np + j.c.nslot;
    if (st == OT_OK && !(j.lanes = calloc((size_t)j.nsubj, sizeof *j.lanes)))
        st = ot__fail(OT_ERR_NOMEM, "%s: out of memory", fn);
    for (int64_t b = 0; st == OT_OK && b < j.nsubj; b++) {
        if ((st = ot__dose_lane_build(&j.c, plan, b, j.p + b * npf, with_dp,
                                      &j.lanes[b])) != OT_OK)
            st = ot__fail(st, "%s: out of memory for the schedules", fn);
        j.lanes[b].y0 = j.y0 ? j.y0 + b * j.c.n : NULL;
    }
    for (int64_t b = 0; st == OT_OK && !model->post_dose && b < j.nsubj; b++)
        st = ss_observed(&j, plan, b, kind, fn);
    if (st == OT_OK && j.c.nslot > 0 && ode->mode == OT_LOCKSTEP) {
        j.c.pbuf = malloc((size_t)(j.c.np * j.nsubj + 1) * sizeof *j.c.pbuf);
        j.c.dbuf = ode->dfdp
                       ? malloc((size_t)(j.c.n * j.c.np * j.nsubj + 1) * sizeof *j.c.dbuf)
                       : NULL;
        if (!j.c.pbuf || (ode->dfdp && !j.c.dbuf))
            st = ot__fail(OT_ERR_NOMEM, "%s: out of memory for the parameters", fn);
    }
    struct ot_ode w;
    j.c.lanes = j.lanes;
    j.c.nlanes = j.nsubj;
    ot__dose_wrap(&w, &j.c);
    w.outputs_before_stops = !model->post_dose;
    if (st == OT_OK) {
        struct ot_ode sw = w; /* the intervals' problem */
        sw.mode = OT_LANES;
        sw.sens_initial = 1;
        sw.root = NULL;
        sw.nroots = 0;
        sw.root_dir = sw.event_action = NULL;
        sw.out = NULL;
        sw.nout = 0;
        sw.progress = NULL;
        sw.outputs_before_stops = 0;
        /* The map's own error must stay below the fixed point's test (in the
         * problem's tolerance units): the intervals at 1/100 of them. */
        sw.rtol = fmax(ode->rtol * 0.01, fmin(ode->rtol, 1e-13));
        sw.atol = ode->atol * 0.01;
        sw.atol_vec = NULL;
        if (ode->atol_vec) {
            if ((j.atol_sub = malloc((size_t)ode->n * sizeof *j.atol_sub)) == NULL)
                st = ot__fail(OT_ERR_NOMEM, "%s: out of memory", fn);
            for (int64_t i = 0; j.atol_sub && i < ode->n; i++)
                j.atol_sub[i] = ode->atol_vec[i] * 0.01;
            sw.atol_vec = j.atol_sub;
        }
        if (st == OT_OK)
            st = ot__dose_steady(&j.c, &sw, j.lanes, j.nsubj, j.p, with_dp,
                                 model->ss_max_iter > 0 ? model->ss_max_iter : 20);
        if (st != OT_OK)
            st = ot__fail(st, "%s: the steady states' solve failed: %s", fn,
                          ot_last_error());
    }
    /* A lane fails alone as a lane of NaN params; a plan of one subject
     * (whose params the core reads as every lane's) is refused instead. */
    if (st == OT_OK && j.nsubj == 1 && j.lanes[0].status != OT_OK)
        st = ot__fail(j.lanes[0].status, "%s: %s", fn, j.lanes[0].msg);
    for (int64_t b = 0; st == OT_OK && b < j.nsubj; b++)
        if (j.lanes[b].status != OT_OK)
            j.p[b * npf] = NAN;
    if (st == OT_OK)
        st = times(&j, plan, with_dp, fn);
    ot_solution *sol = NULL;
    if (st == OT_OK) {
        ot_solve_inputs in =
            ot_solve_inputs_make(ot_view_absent(), ot_view_absent(), ot_view_absent());
        if (j.y0)
            ot_view_f64(&in.y0, j.y0, j.c.n, j.nsubj);
        if (npf > 0)
            ot_view_f64(&in.params, j.p, npf, j.nsubj);
        ot_view_f64(&in.t_eval, j.te, j.nobs, j.nsubj);
        if (j.nstops > 0)
            ot_view_f64(&in.stops, j.stops, j.nstops, j.nsubj);
        if (j.nstops > 0 && with_dp) {
            const int64_t sh[3] = {npf, j.nstops, j.nsubj};
            ot_view_make(&in.stops_dp, j.stops_dp, OT_F64, (ot_device){OT_CPU, 0}, 3, sh,
                         NULL);
        }
        ot__dose_loss_ctx lc = {loss, &j.c};
        ot_loss wl;
        if (kind == ADJ)
            wl = ot__dose_wrap_loss(loss, &lc);
        st = kind == DENSE  ? ot_solve_dense_with(&w, &in, &sol)
             : kind == SENS ? ot_solve_fwd_sens_with(&w, &in, &sol)
                            : ot_solve_adjoint_with(&w, &in, &wl, &sol);
    }
    if (sol != NULL) {
        int f = finish(&j, sol, kind);
        if (f == OT_OK && !model->post_dose)
            f = ot__dose_ss_outputs(&j.c, plan, j.lanes, j.p, kind == SENS, sol);
        if (f != OT_OK) {
            ot_solution_free(sol);
            sol = NULL;
            st = ot__fail(f, "%s: %s", fn,
                          f == OT_ERR_NOMEM ? "out of memory for the results"
                                            : "a steady state's event record is missing");
        } else {
            st = ot_solution_nfailed(sol) > 0 ? OT_ERR_LANES_FAILED : OT_OK;
        }
    }
    free(cs);
    job_free(&j);
    if (sol != NULL)
        *out = sol;
    return st;
}

int ot_dose_solve_dense(const ot_ode *ode, const ot_dose_plan *plan,
                        const ot_dose_model *model, ot_view y0, ot_view params,
                        ot_solution **out)
{
    return dose_solve(DENSE, ode, plan, model, y0, params, NULL, out,
                      "ot_dose_solve_dense");
}

int ot_dose_solve_fwd_sens(const ot_ode *ode, const ot_dose_plan *plan,
                           const ot_dose_model *model, ot_view y0, ot_view params,
                           ot_solution **out)
{
    return dose_solve(SENS, ode, plan, model, y0, params, NULL, out,
                      "ot_dose_solve_fwd_sens");
}

int ot_dose_solve_adjoint(const ot_ode *ode, const ot_dose_plan *plan,
                          const ot_dose_model *model, ot_view y0, ot_view params,
                          const ot_loss *loss, ot_solution **out)
{
    return dose_solve(ADJ, ode, plan, model, y0, params, loss, out,
                      "ot_dose_solve_adjoint");
}

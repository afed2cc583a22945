/* The JS shim's event tables (dosing.h): records from CSV text or columns,
 * their accessors, the dosing plan, and the solves from a plan; for
 * ../index.mjs. Conventions as in shim.c (out-parameters first, statuses
 * returned, messages through otw_last_error). */
#include "shim.h"

/* Records from CSV text of len bytes (not NUL-terminated). */
OTW_API int otw_records_csv(ot_records **out, const char *text, int len)
{
    return ot_records_parse_csv(text, len < 0 ? 0 : (size_t)len, out);
}

/* Records from ncols columns of nrows values: names[j] (NUL-terminated) and
 * cols[j] [nrows], NaN for missing. */
OTW_API int otw_records_columns(ot_records **out, int nrows, int ncols,
                                const char *const *names, const double *const *cols)
{
    return ot_records_from_columns(nrows, ncols, names, cols, out);
}

OTW_API void otw_records_free(ot_records *r) { ot_records_free(r); }
OTW_API int otw_records_rows(const ot_records *r) { return (int)ot_records_rows(r); }
OTW_API int otw_records_subjects(const ot_records *r)
{
    return (int)ot_records_subjects(r);
}
OTW_API int otw_records_ncols(const ot_records *r) { return (int)ot_records_columns(r); }
OTW_API const char *otw_records_column_name(const ot_records *r, int j)
{
    return ot_records_column_name(r, j);
}

/* Subject s: out [3] = ID, first row (1-based), rows. */
OTW_API int otw_records_subject(const ot_records *r, int s, double *out)
{
    int64_t first = 0, n = 0;
    const int st = ot_records_subject(r, s, &out[0], &first, &n);
    out[1] = (double)first;
    out[2] = (double)n;
    return st;
}

/* Column j's values (borrowed, valid while r lives), or NULL. */
OTW_API const double *otw_records_column(const ot_records *r, int j)
{
    const double *v = NULL;
    const char *name = ot_records_column_name(r, j);
    return name != NULL && ot_records_column(r, name, &v) == OT_OK ? v : NULL;
}

/* The covariate name per subject into values [subjects]. */
OTW_API int otw_records_covariate(const ot_records *r, const char *name, double *values)
{
    return ot_records_covariate(r, name, values);
}

/* The plan for ncmt compartments; cmt_state [ncmt] (NULL: CMT c is state
 * c - 1). */
OTW_API int otw_dose_plan_new(ot_dose_plan **out, const ot_records *r, int ncmt,
                              const int *cmt_state)
{
    int64_t *map = NULL;
    if (cmt_state != NULL && ncmt > 0) {
        map = malloc((size_t)ncmt * sizeof *map);
        if (map == NULL)
            return ot_set_error(OT_ERR_NOMEM, "dosing: out of memory");
        for (int c = 0; c < ncmt; c++)
            map[c] = cmt_state[c];
    }
    const int st = ot_dose_plan_new(r, ncmt, map, out);
    free(map);
    return st;
}

OTW_API void otw_dose_plan_free(ot_dose_plan *p) { ot_dose_plan_free(p); }

/* The most observations of one subject (the solution's nt). */
OTW_API int otw_dose_plan_nobs(const ot_dose_plan *p)
{
    int64_t most = 0;
    for (int64_t s = 0; s < ot_dose_plan_subjects(p); s++) {
        int64_t n = 0;
        ot_dose_plan_observations(p, s, &n, NULL, NULL, NULL);
        most = n > most ? n : most;
    }
    return (int)most;
}

/* int [ncmt] parameter indices (NULL: none) as the library's int64. */
static int64_t *indices(const int *v, int ncmt)
{
    if (v == NULL)
        return NULL;
    int64_t *w = malloc((size_t)(ncmt > 0 ? ncmt : 1) * sizeof *w);
    for (int c = 0; w != NULL && c < ncmt; c++)
        w[c] = v[c];
    return w;
}

/* A solve from plan (kind 0 dense, 1 forward sensitivities, 2 the adjoint
 * of otw_set_loss's loss): model arrays [ncmt] of parameter indices (-1
 * none; NULL none anywhere) for F, ALAG, the modelled rate and duration;
 * post_dose, ss_tol, ss_max_iter and ss_interval as ot_dose_model's; y0
 * [nstates, y0_cols] or NULL, params [nparams, p_cols] or NULL. */
OTW_API int otw_solve_doses(ot_solution **out, otw_problem *P, int kind,
                            const ot_dose_plan *plan, const int *f, const int *lag,
                            const int *rate, const int *dur, int post_dose, double ss_tol,
                            int ss_max_iter, double ss_interval, const double *y0,
                            int y0_cols, const double *params, int p_cols)
{
    ot_ode *ode = ode_of(P);
    if (ode == NULL) /* the library's message */
        return ot_dose_solve_dense(NULL, plan, NULL, ot_view_absent(), ot_view_absent(),
                                   out);
    const int ncmt = (int)ot_dose_plan_compartments(plan);
    const int64_t n = ot_ode_nstates(ode), np = ot_ode_nparams(ode);
    const ot_device cpu = {OT_CPU, 0};
    ot_view y0v = ot_view_absent(), pv = ot_view_absent();
    const int64_t ys[2] = {n, y0_cols}, ps[2] = {np, p_cols};
    int st = y0 ? ot_view_make(&y0v, y0, OT_F64, cpu, 2, ys, NULL) : OT_OK;
    if (st == OT_OK && params)
        st = ot_view_make(&pv, params, OT_F64, cpu, 2, ps, NULL);
    if (st != OT_OK)
        return st;
    ot_dose_model m = ot_dose_model_make();
    int64_t *fi = indices(f, ncmt), *li = indices(lag, ncmt), *ri = indices(rate, ncmt),
            *di = indices(dur, ncmt);
    if ((f && !fi) || (lag && !li) || (rate && !ri) || (dur && !di))
        st = ot_set_error(OT_ERR_NOMEM, "dosing: out of memory");
    m.f = fi;
    m.lag = li;
    m.rate = ri;
    m.duration = di;
    m.post_dose = post_dose;
    m.ss_tol = ss_tol;
    m.ss_max_iter = ss_max_iter;
    m.ss_interval = ss_interval;
    ot_loss l;
    if (st == OT_OK && kind == 2)
        st = otw_make_loss(P, ode, otw_dose_plan_nobs(plan), &l);
    if (st == OT_OK)
        st = kind == 2   ? ot_dose_solve_adjoint(ode, plan, &m, y0v, pv, &l, out)
             : kind == 1 ? ot_dose_solve_fwd_sens(ode, plan, &m, y0v, pv, out)
                         : ot_dose_solve_dense(ode, plan, &m, y0v, pv, out);
    free(fi);
    free(li);
    free(ri);
    free(di);
    return st;
}

/* Lockstep on the CPU: serial vectors with the per-lane norm, the block
 * matrix and solver, host callbacks, and copies into host outputs. */
#include <cvodes/cvodes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "core/alloc.h"
#include "solve/nv_clone.h"
#include "core/error.h"
#include "lockstep/lockstep.h"
#include "solve/output.h"

static _Thread_local int plain_norm;

void ot__lockstep_plain_norm(int plain) { plain_norm = plain; }

/* ---- Setup ---------------------------------------------------------------- */

static void free_solver(ot__lockstep *L)
{
    ot__ls_free_common(L);
    free(L->p);
    free(L->pp);
    free(L->o);
    free(L->o2);
    free(L->yp);
    free(L->ym);
    free(L->inc);
}

/* y0 for every lane into L->y, and the initial sensitivities (zero, or
 * central differences of init). */
static int initial_state(ot__lockstep *L)
{
    const ot__plan *pl = L->plan;
    const ot_ode *ode = pl->ode;
    const int64_t n = L->n, nb = L->nb, np = L->np;
    double *y = N_VGetArrayPointer(L->y);
    for (int64_t b = 0; pl->has_y0 && b < nb; b++)
        memcpy(y + b * n, ot_view_lane(pl->y0, b), (size_t)n * sizeof *y);
    if (!pl->has_y0) {
        int rc = ode->init(ot__ls_view(L->p, np, nb), ot__ls_mut(y, n, nb), ode->user);
        if (rc != 0) {
            snprintf(L->cb_msg, sizeof L->cb_msg, "init returned %d", rc);
            return OT_ERR_CALLBACK;
        }
    }
    for (int64_t j = 0; pl->kind == OT__SENS && j < np; j++) {
        double *s = N_VGetArrayPointer(L->yS[j]);
        memset(s, 0, (size_t)(n * nb) * sizeof *s);
        if (pl->has_y0)
            continue;
        memcpy(L->pp, L->p, (size_t)(np * nb) * sizeof *L->pp);
        for (int64_t b = 0; b < nb; b++)
            L->pp[b * np + j] += ot__ls_fd_step(L->p[b * np + j]);
        int rc =
            ode->init(ot__ls_view(L->pp, np, nb), ot__ls_mut(L->yp, n, nb), ode->user);
        for (int64_t b = 0; b < nb; b++)
            L->pp[b * np + j] = L->p[b * np + j] - ot__ls_fd_step(L->p[b * np + j]);
        if (rc == 0)
            rc = ode->init(ot__ls_view(L->pp, np, nb), ot__ls_mut(L->ym, n, nb),
                           ode->user);
        if (rc != 0) {
            snprintf(L->cb_msg, sizeof L->cb_msg, "init returned %d", rc);
            return OT_ERR_CALLBACK;
        }
        for (int64_t b = 0; b < nb; b++)
            for (int64_t i = b * n; i < (b + 1) * n; i++)
                s[i] = (L->yp[i] - L->ym[i]) / (2 * ot__ls_fd_step(L->p[b * np + j]));
    }
    for (int64_t k = 0; k < n * nb; k++)
        if (!isfinite(y[k])) {
            snprintf(L->cb_msg, sizeof L->cb_msg, "init wrote NaN or Inf in lane %lld",
                     (long long)(k / n));
            return OT_ERR_CALLBACK;
        }
    return OT_OK;
}

static int make_atol(ot__lockstep *L)
{
    if ((L->atolv = ot__nv_clone(L->y)) == NULL)
        return OT_ERR_NOMEM;
    double *a = N_VGetArrayPointer(L->atolv);
    for (int64_t b = 0; b < L->nb; b++)
        memcpy(a + b * L->n, L->plan->ode->atol_vec, (size_t)L->n * sizeof *a);
    return OT_OK;
}

static void make_linear(ot__lockstep *L)
{
    L->A = ot__block_matrix_new(L->n, L->nb, L->ctx);
    L->LS = L->A ? ot__block_solver_new(L->n, L->nb, L->ctx) : NULL;
}

static int emit_dense(ot__lockstep *L, ot_solution *sol, int64_t i, double t,
                      N_Vector yv);
static int host_rows(ot__lockstep *L, double t, N_Vector y, double *dst);

static const ot__ls_backend cpu_backend = {
    emit_dense,  host_rows,   ot__ls_nan_fill_host, ot__ls_rhs,
    ot__ls_jac,  ot__ls_root, ot__ls_sens_rhs,      make_atol,
    make_linear, NULL,        initial_state};

static int make_solver(ot__lockstep *L, const ot__plan *pl)
{
    memset(L, 0, sizeof *L);
    L->be = &cpu_backend;
    L->plan = pl;
    L->n = pl->n;
    L->nb = pl->nbatch;
    L->np = pl->np;
    L->rows = pl->rows;
    const size_t n = (size_t)L->n, nb = (size_t)L->nb, np = (size_t)L->np;
    const size_t rows = (size_t)L->rows, nr = (size_t)pl->ode->nroots;
    L->p = OT__MALLOC((np * nb + 1) * sizeof *L->p);
    L->pp = OT__MALLOC((np * nb + 1) * sizeof *L->pp);
    L->o = OT__MALLOC(rows * nb * sizeof *L->o);
    L->o2 = OT__MALLOC(rows * nb * sizeof *L->o2);
    L->yp = OT__MALLOC(n * nb * sizeof *L->yp);
    L->ym = OT__MALLOC(n * nb * sizeof *L->ym);
    L->inc = OT__MALLOC(nb * sizeof *L->inc);
    L->stopped = OT__CALLOC(nb, 1);
    L->rootsfound = OT__MALLOC((nr * nb + 1) * sizeof *L->rootsfound);
    if (!L->p || !L->pp || !L->o || !L->o2 || !L->yp || !L->ym || !L->inc ||
        !L->stopped || !L->rootsfound ||
        OT__SUN_CALL(SUNContext_Create(NULL, &L->ctx), -1) != 0)
        return OT_ERR_NOMEM;
    for (int64_t b = 0; b < L->nb && np > 0; b++)
        memcpy(L->p + b * L->np, ot_view_lane(pl->p, b), np * sizeof *L->p);
    L->y = ot__lane_vector_new(L->n, L->nb, plain_norm, L->stopped, L->ctx);
    return ot__ls_finish_setup(L);
}

/* As in lanes mode, NaN/Inf from out fails the output (no retry can help):
 * OT_ERR_CALLBACK naming the first running lane that wrote one. */
static int out_finite(ot__lockstep *L, double t, const double *o)
{
    for (int64_t k = 0; k < L->rows * L->nb; k++)
        if (!L->stopped[k / L->rows] && !isfinite(o[k])) {
            snprintf(L->cb_msg, sizeof L->cb_msg,
                     "out wrote NaN or Inf in lane %lld (row %lld) at t = %g",
                     (long long)(k / L->rows), (long long)(k % L->rows), t);
            L->cb_failed = 1;
            return OT_ERR_CALLBACK;
        }
    return OT_OK;
}

/* The recorded rows for all lanes at (t, y): y itself or the out function's. */
static const double *rows_at(ot__lockstep *L, double t, const double *y, int *st)
{
    const ot_ode *ode = L->plan->ode;
    *st = OT_OK;
    if (!ode->out)
        return y;
    int rc = ode->out(t, ot__ls_view(y, L->n, L->nb), ot__ls_view(L->p, L->np, L->nb),
                      ot__ls_mut(L->o, L->rows, L->nb), ode->user);
    if (rc != 0) {
        snprintf(L->cb_msg, sizeof L->cb_msg, "out returned %d at t = %g", rc, t);
        L->cb_failed = 1;
        *st = OT_ERR_CALLBACK;
    } else {
        *st = out_finite(L, t, L->o);
    }
    return L->o;
}

/* Output sensitivity j for all lanes into L->o2 (central differences of out
 * along (s_j, e_j)). */
static int out_sens(ot__lockstep *L, double t, const double *y, const double *s,
                    int64_t j)
{
    const ot_ode *ode = L->plan->ode;
    const int64_t n = L->n, nb = L->nb, np = L->np;
    memcpy(L->pp, L->p, (size_t)(np * nb) * sizeof *L->pp);
    for (int64_t b = 0; b < nb; b++) {
        const double h = ot__ls_fd_step(L->p[b * np + j]);
        for (int64_t i = b * n; i < (b + 1) * n; i++) {
            L->yp[i] = y[i] + h * s[i];
            L->ym[i] = y[i] - h * s[i];
        }
        L->pp[b * np + j] += h;
    }
    int rc = ode->out(t, ot__ls_view(L->yp, n, nb), ot__ls_view(L->pp, np, nb),
                      ot__ls_mut(L->o2, L->rows, nb), ode->user);
    for (int64_t b = 0; b < nb; b++)
        L->pp[b * np + j] = L->p[b * np + j] - ot__ls_fd_step(L->p[b * np + j]);
    if (rc == 0)
        rc = ode->out(t, ot__ls_view(L->ym, n, nb), ot__ls_view(L->pp, np, nb),
                      ot__ls_mut(L->o, L->rows, nb), ode->user);
    if (rc != 0) {
        snprintf(L->cb_msg, sizeof L->cb_msg, "out returned %d at t = %g", rc, t);
        L->cb_failed = 1;
        return OT_ERR_CALLBACK;
    }
    if (out_finite(L, t, L->o2) != OT_OK || out_finite(L, t, L->o) != OT_OK)
        return OT_ERR_CALLBACK;
    for (int64_t b = 0; b < nb; b++) {
        const double h2 = 2 * ot__ls_fd_step(L->p[b * np + j]);
        for (int64_t r = b * L->rows; r < (b + 1) * L->rows; r++)
            L->o2[r] = (L->o2[r] - L->o[r]) / h2;
    }
    return OT_OK;
}

/* Stores output i for every running lane from state y. */
static int emit_dense(ot__lockstep *L, ot_solution *sol, int64_t i, double t, N_Vector yv)
{
    const double *y = N_VGetArrayPointer(yv);
    int st;
    const double *rows = rows_at(L, t, y, &st);
    if (st != OT_OK)
        return st;
    for (int64_t b = 0; b < L->nb; b++)
        if (!L->stopped[b])
            ot__out_store(sol->ys, i, b, rows + b * L->rows, L->rows);
    for (int64_t j = 0; L->plan->kind == OT__SENS && j < L->np; j++) {
        const double *s = N_VGetArrayPointer(L->yS[j]);
        if (L->plan->ode->out) {
            if ((st = out_sens(L, t, y, s, j)) != OT_OK)
                return st;
            s = L->o2;
        }
        for (int64_t b = 0; b < L->nb; b++)
            if (!L->stopped[b])
                ot__out_store(sol->sens[j], i, b, s + b * L->rows, L->rows);
    }
    for (int64_t b = 0; b < L->nb; b++)
        if (!L->stopped[b]) {
            sol->count[b] = i + 1;
            sol->stats[b].final_time = t;
        }
    return OT_OK;
}

/* The recorded rows of every lane at (t, y) into dst [rows, nb]. */
static int host_rows(ot__lockstep *L, double t, N_Vector y, double *dst)
{
    int st;
    const double *rows = rows_at(L, t, N_VGetArrayPointer(y), &st);
    if (st == OT_OK)
        memcpy(dst, rows, (size_t)(L->rows * L->nb) * sizeof *dst);
    return st;
}

int ot__lockstep_run(const ot__plan *pl, const ot__sink *sk)
{
    ot__lockstep L;
    int st = make_solver(&L, pl);
    if (st == OT_ERR_CALLBACK) {
        ot__lockstep_init_failed(&L, sk); /* every lane fails; the call goes on */
        st = OT_OK;
    } else if (st != OT_OK) {
        st = st == OT_ERR_NOMEM
                 ? ot__fail(st,
                            "solve: cannot allocate the lockstep solver for %lld lanes",
                            (long long)pl->nbatch)
                 : ot__fail(st, "solve: CVODE setup failed: %s", L.cv_msg);
    } else {
        ot__lockstep_loop(&L, sk);
    }
    free_solver(&L);
    return st;
}

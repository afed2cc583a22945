/* Lockstep on the CPU: serial vectors with the per-lane norm, the block
 * matrix and solver, host callbacks, and copies into host outputs. */
#include <cvodes/cvodes.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/test_hooks.h"
#include "lockstep/lockstep.h"
#include "run/sens_jump.h"
#include "kit/dq.h"
#include "kit/nv_clone.h"
#include "kit/pool.h"
#include "kit/sens.h"
#include "kit/sun_compat.h"
#include "tensor/tensor_impl.h"

static _Thread_local int plain_norm;

void ot__lockstep_plain_norm(int plain) { plain_norm = plain; }

/* ---- Setup ---------------------------------------------------------------- */

static void free_solver(ot__lockstep *L)
{
    ot__lockstep_free_common(L);
    OT__FREE_ALL(L->p, L->pp, L->o, L->o2, L->yp, L->ym, L->inc, L->jb, L->db,
                 L->blame.count, L->retries);
}

typedef struct {
    const double *p;
    double *y;
} init_call;

static int init_run(ot__lockstep *L, int64_t b, int64_t len, void *ctx)
{
    const init_call *c = ctx;
    return L->plan->ode->init(ot__view_compact(c->p + b * L->np, L->np, len),
                              ot__view_mut_compact(c->y + b * L->n, L->n, len),
                              L->plan->ode->user);
}

/* init over every lane at params p into y ([n, nbatch]). A lane whose init
 * fails leaves the block before it starts (alone.c; its y0 zeroed). */
static int call_init(ot__lockstep *L, const double *p, double *y)
{
    ot__lockstep_poison_first(&L->poisoned, OT__POISONED_INIT, y, L->n * L->nbatch);
    init_call c = {p, y};
    if (ot__lockstep_call(L, "init", NAN, OT__CB_FINAL, init_run, &c) != 0 &&
        L->unit.nfailed < L->nbatch) /* not every lane alone: the block's */
        return OT_ERR_CALLBACK;
    for (int64_t b = 0; b < L->nbatch; b++)
        if (L->stopped[b] == OT__LANE_FAILED)
            memset(y + b * L->n, 0, (size_t)L->n * sizeof *y);
    return OT_OK;
}

static int init_at(void *ctx, double t, const double *y, const double *p, double *out)
{
    (void)t, (void)y;
    return call_init(ctx, p, out);
}

/* y0 for every lane into L->y, and the initial sensitivities (zero, or
 * central differences of init). */
static int initial_state(ot__lockstep *L)
{
    const ot__plan *pl = L->plan;
    const int64_t n = L->n, nbatch = L->nbatch, np = L->np;
    double *y = N_VGetArrayPointer(L->y);
    for (int64_t b = 0; pl->has_y0 && b < nbatch; b++)
        if (L->stopped[b] == OT__LANE_FAILED) /* its y0 may not be finite */
            memset(y + b * n, 0, (size_t)n * sizeof *y);
        else
            memcpy(y + b * n, ot_view_lane(pl->y0, b), (size_t)n * sizeof *y);
    if (!pl->has_y0 && call_init(L, L->p, y) != OT_OK)
        return OT_ERR_CALLBACK;
    for (int64_t j = 0; L->yS && j < L->nsv; j++) { /* sens, or the adjoint's dy0/dp */
        double *s = N_VGetArrayPointer(L->yS[j]);
        memset(s, 0, (size_t)(n * nbatch) * sizeof *s);
        for (int64_t b = 0; j >= np && b < nbatch; b++) /* d y0 / d y0_(j - np) */
            s[b * n + j - np] = 1.0;
        if (pl->has_y0 || j >= np)
            continue;
        const ot__central_space sp = {nbatch, n, np, n, NULL, NULL, L->pp, L->yp};
        const int st = ot__central(init_at, L, &sp, NAN, NULL, NULL, L->p, j, NULL, s);
        if (st != OT_OK)
            return st;
    }
    if (ot__lockstep_isolate_nonfinite(L, "init", "y0", y, n, NAN, OT__CB_FINAL) != 0 &&
        L->unit.nfailed < L->nbatch)
        return OT_ERR_CALLBACK;
    return OT_OK;
}

static int upload(ot__lockstep *L, N_Vector v, const double *host)
{
    memcpy(N_VGetArrayPointer(v), host, (size_t)(L->n * L->nbatch) * sizeof *host);
    return OT_OK;
}

static void make_linear(ot__lockstep *L)
{
    L->A = ot__lockstep_block_matrix_new(L->n, L->nbatch, L->ctx);
    L->LS = L->A ? ot__lockstep_block_solver_new(L->n, L->nbatch, L->ctx) : NULL;
}

/* ---- Moving results out ---------------------------------------------------- */

/* out over every lane at (t, y, p) into o ([rows, nbatch]), checked. As in
 * lanes mode NaN/Inf from out fails (no retry can help), and a lane whose
 * out fails leaves the block alone (alone.c). */
static int call_out(ot__lockstep *L, double t, const double *y, const double *p,
                    double *o)
{
    ot__lockstep_poison_first(&L->poisoned, OT__POISONED_OUT, o, L->rows * L->nbatch);
    ot__lockstep_cb_call c = {L->plan->ode->out, t, y, p, o, L->rows, 0};
    if (ot__lockstep_call(L, "out", t, OT__CB_FINAL, ot__lockstep_run_call, &c) < 0)
        return OT_ERR_CALLBACK;
    /* A lane that stopped, unless this output is still its own (it stopped
     * at a root at this output time), has no output here: its column is
     * nobody's and is not checked (a frozen state may make out NaN). */
    for (int64_t b = 0; b < L->nbatch; b++)
        if (L->stopped[b] != OT__LANE_RUNNING && !(L->at && L->at[b] >= 0))
            memset(o + b * L->rows, 0, (size_t)L->rows * sizeof *o);
    return ot__lockstep_isolate_nonfinite(L, "out", "o", o, L->rows, t, OT__CB_FINAL) < 0
               ? OT_ERR_CALLBACK
               : OT_OK;
}

/* The recorded rows for all lanes at (t, y): y itself or the out function's. */
static const double *rows_at(ot__lockstep *L, double t, const double *y, int *st)
{
    *st = OT_OK;
    if (!L->plan->ode->out)
        return y;
    *st = call_out(L, t, y, L->p, L->o);
    return L->o;
}

static int out_at(void *ctx, double t, const double *y, const double *p, double *o)
{
    return call_out(ctx, t, y, p, o);
}

/* Output sensitivity j for all lanes into L->o2 (ot__central). */
static int out_sens(ot__lockstep *L, double t, const double *y, const double *s,
                    int64_t j)
{
    const ot__central_space sp = {L->nbatch, L->n,  L->np, L->rows,
                                  L->yp,     L->ym, L->pp, L->o};
    return ot__central(out_at, L, &sp, t, y, s, L->p, j, ot__sens_dir(&L->unit, j),
                       L->o2);
}

/* Stores output L->at[b] of each due lane from state y. */
static int emit(ot__lockstep *L, ot_solution *sol, double t, N_Vector yv)
{
    const double *y = N_VGetArrayPointer(yv);
    int st;
    const double *rows = rows_at(L, t, y, &st);
    if (st != OT_OK)
        return st;
    for (int64_t b = 0; b < L->nbatch; b++)
        if (L->at[b] >= 0)
            ot__out_store(sol->ys, L->at[b], L->lane0 + b, rows + b * L->rows, L->rows);
    for (int64_t j = 0; L->plan->kind == OT__SENS && j < L->nsv; j++) {
        const double *s = N_VGetArrayPointer(L->yS[j]);
        if (L->plan->ode->out) {
            if ((st = out_sens(L, t, y, s, j)) != OT_OK)
                return st;
            s = L->o2;
        }
        for (int64_t b = 0; b < L->nbatch; b++)
            if (L->at[b] >= 0)
                ot__out_store(sol->sens[j], L->at[b], L->lane0 + b, s + b * L->rows,
                              L->rows);
    }
    return OT_OK;
}

/* The recorded rows of every lane at (t, y) into dst [rows, nbatch]. */
static int host_rows(ot__lockstep *L, double t, N_Vector y, double *dst)
{
    int st;
    const double *rows = rows_at(L, t, N_VGetArrayPointer(y), &st);
    if (st == OT_OK)
        memcpy(dst, rows, (size_t)(L->rows * L->nbatch) * sizeof *dst);
    return st;
}

static double *host_state(ot__lockstep *L, N_Vector y)
{
    (void)L;
    return N_VGetArrayPointer(y);
}

static const ot__lockstep_backend cpu_backend = {
    .emit = emit,
    .host_rows = host_rows,
    .host_state = host_state,
    .callbacks = &ot__lockstep_cpu_callbacks,
    .upload = upload,
    .make_linear = make_linear,
    .initial_state = initial_state,
};

/* ---- Entry ---------------------------------------------------------------- */

static int make_solver(ot__lockstep *L, const ot__plan *pl)
{
    const size_t n = (size_t)L->n, nbatch = (size_t)L->nbatch, np = (size_t)L->np;
    const size_t rows = (size_t)L->rows, nr = (size_t)pl->ode->nroots;
    L->p = OT__MALLOC((np * nbatch + 1) * sizeof *L->p);
    L->pp = OT__MALLOC((np * nbatch + 1) * sizeof *L->pp);
    L->o = OT__MALLOC(rows * nbatch * sizeof *L->o);
    L->o2 = OT__MALLOC(rows * nbatch * sizeof *L->o2);
    L->yp = OT__MALLOC(n * nbatch * sizeof *L->yp);
    L->ym = OT__MALLOC(n * nbatch * sizeof *L->ym);
    L->inc = OT__MALLOC(nbatch * sizeof *L->inc);
    if (pl->kind == OT__SENS && pl->ode->dfdp) { /* kit/sens.h's J and df/dp */
        L->jb = OT__MALLOC(n * n * nbatch * sizeof *L->jb);
        L->db = OT__MALLOC(n * np * nbatch * sizeof *L->db);
        L->sens_first = 1;
        if (!L->jb || !L->db)
            return OT_ERR_NOMEM;
    }
    L->stopped = OT__CALLOC(nbatch, 1);
    L->rootsfound = OT__MALLOC((nr * nbatch + 1) * sizeof *L->rootsfound);
    if (!L->p || !L->pp || !L->o || !L->o2 || !L->yp || !L->ym || !L->inc ||
        !L->stopped || !L->rootsfound ||
        OT__SUN_CALL(ot__sun_context_new(&L->ctx, &L->cb), -1) != 0)
        return OT_ERR_NOMEM;
    for (int64_t b = 0; b < L->nbatch && np > 0; b++)
        memcpy(L->p + b * L->np, ot_view_lane(pl->p, b), np * sizeof *L->p);
    for (int64_t b = 0; pl->bad && b < L->nbatch; b++)
        if (pl->bad[L->lane0 + b]) { /* failed already (solve.c), by its inputs */
            L->stopped[b] = OT__LANE_FAILED;
            L->unit.nfailed++;
            memset(L->p + b * L->np, 0, np * sizeof *L->p);
        }
    L->blame.count = OT__CALLOC(nbatch, sizeof *L->blame.count);
    L->retries = OT__CALLOC(nbatch, sizeof *L->retries);
    if (!L->blame.count || !L->retries)
        return OT_ERR_NOMEM;
    L->y = ot__lockstep_vector_new(L->n, L->nbatch, plain_norm, L->stopped, L->ctx);
    if (L->y) /* before its clones: they share it */
        ot__lockstep_vector_blame(L->y, &L->blame);
    return ot__lockstep_finish_setup(L);
}

/* ---- Blocks on the thread pool -------------------------------------------- */

/* Lanes [lane0, lane0 + len) of a [rows, 1|nbatch] input (a broadcast or
 * empty one as it is). */
static ot_view lanes_view(ot_view v, int64_t lane0, int64_t len)
{
    if (v.layout.ndim < 2 || v.layout.shape[1] == 1)
        return v;
    v.layout.data = (char *)v.layout.data + lane0 * v.layout.strides[1];
    v.layout.shape[1] = len;
    return v;
}

typedef struct {
    const ot__plan *plan;
    const ot__sink *sink;
} blocks;

typedef struct {
    ot__lockstep *L;
    const ot__plan *plan;
    const ot__sink *sink;
} block_call;

static int set_up_and_solve(void *arg)
{
    const block_call *c = arg;
    return ot__lockstep_solve(c->L, c->sink, make_solver(c->L, c->plan), "lockstep");
}

/* The block's setup and solve under its scope: when memory runs out inside
 * SUNDIALS, the lanes still running fail with OT_ERR_NOMEM and the others
 * keep what they reached (the call itself goes on: OT_OK). */
static int solve_protected(ot__lockstep *L, const ot__plan *pl, const ot__sink *sk)
{
    const block_call c = {L, pl, sk};
    const int st = ot__sun_protect(&L->scope, set_up_and_solve, (void *)&c);
    if (st != OT__SUN_NOMEM)
        return st;
    ot__run_unit_abandon(&L->unit);
    for (int64_t b = 0; b < L->nbatch; b++) {
        if (L->stopped != NULL && L->stopped[b] != OT__LANE_RUNNING)
            continue;
        ot__run_lane_out_of_memory(sk->sol, L->lane0 + b, pl->ode->method);
    }
    return OT_OK;
}

/* Block k: one lockstep integrator over its lanes, exactly as a solve of
 * those lanes alone. A block that cannot be set up fails its lanes with the
 * reason; the other blocks go on. */
static int64_t solve_block(void *state, int64_t k)
{
    const blocks *bk = state;
    const ot__plan *pl = bk->plan;
    const int64_t lane0 = k * pl->block,
                  len = pl->nbatch - lane0 < pl->block ? pl->nbatch - lane0 : pl->block;
    ot__plan sub = *pl;
    sub.nbatch = len;
    sub.y0 = lanes_view(pl->y0, lane0, len);
    sub.p = lanes_view(pl->p, lane0, len);

    ot__lockstep L;
    ot__lockstep_init(&L, &sub, &cpu_backend);
    L.lane0 = lane0;
    L.unit.sink = bk->sink; /* lanes that fail alone in setup (init) */
    const int st = solve_protected(&L, &sub, bk->sink);
    for (int64_t b = 0; st != OT_OK && b < len; b++) {
        ot__solution_fail_lane(bk->sink->sol, lane0 + b, st, ot_last_error());
        bk->sink->sol->stats[lane0 + b].final_time = pl->t0;
    }
    free_solver(&L);
    return 0; /* its progress: ot__lockstep_solve reported it as it went */
}

int ot__lockstep_cpu_run(const ot__plan *pl, const ot__sink *sk)
{
    if (pl->block < pl->nbatch) {
        blocks bk = {pl, sk};
        void *one = &bk;
        int nthreads = (int)pl->threads;
        void **states =
            nthreads > 1 ? OT__MALLOC((size_t)nthreads * sizeof *states) : NULL;
        if (states == NULL)
            nthreads = 1; /* no memory for the list: this thread solves them all */
        for (int i = 0; states && i < nthreads; i++)
            states[i] = &bk;
        ot__pool_run(pl, nthreads, (pl->nbatch + pl->block - 1) / pl->block,
                     states ? states : &one, solve_block);
        free(states);
        return OT_OK;
    }
    ot__lockstep L;
    ot__lockstep_init(&L, pl, &cpu_backend);
    L.unit.sink = sk; /* lanes that fail alone in setup (init) */
    const int st = solve_protected(&L, pl, sk);
    free_solver(&L);
    return st;
}

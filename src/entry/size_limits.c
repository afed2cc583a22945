/* Size limits: the bytes a solve will need, added up with overflow checks
 * and compared with the memory the process may have, before anything is
 * allocated or any input value is read. A request too big for the machine
 * then fails at once with a status that says which array is too big, rather
 * than after minutes of solving, or in malloc deep inside SUNDIALS, or (with
 * overcommit) in the OOM killer.
 *
 * The working-memory figures follow what SUNDIALS 6 allocates: CVODE keeps
 * qmax + 1 Nordsieck vectors (qmax 5 for BDF, 12 for Adams) and 7 more (ewt,
 * acor, tempv, ftemp, vtemp1-3); CVLS two vectors and a saved copy of the
 * matrix; Newton one vector, fixed point three; CVODES per parameter qmax + 1
 * Nordsieck vectors, 4 more and the nonlinear solver's; ARKStep a vector per
 * stage and part and about 16 more. They count what is
 * allocated: for bench/million_lanes.c (20,000 lanes) 1 % above the peak
 * heap valgrind's massif measures in lockstep, 5 % in lanes mode. The peak
 * RSS can be lower, as scratch that only out functions, sensitivities or
 * difference quotients use is allocated but never touched. The outputs, the
 * part that grows with nt, are exact. */
#include "entry/size_limits.h"
#include "kit/adjoint.h"
#include "kit/integ.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/memory.h"
#include "core/test_hooks.h"

enum { MAX_TERMS = 14, MAX_FACTORS = 4 }; /* at most 12 terms are ever added */

/* A term keeps its factors; its formula ("8 * rows=2 * nt=3 * nbatch=10")
 * is written only when a refusal shows it, never on the success path. */
typedef struct {
    const char *name;
    uint64_t unit;
    const char *unit_text; /* how unit is written (NULL: its value) */
    const char *labels[MAX_FACTORS];
    int64_t vals[MAX_FACTORS];
    int nf;
    uint64_t bytes;
    int on_device; /* CUDA outputs kept on the device: not host memory */
} term;

typedef struct {
    term t[MAX_TERMS];
    int count;
} ledger;

static _Thread_local uint64_t last_estimate;

uint64_t ot__size_last_estimate(void) { return last_estimate; }

/* *acc *= f, or nonzero when the product passes INT64_MAX (byte counts
 * travel as int64_t through the tensor layer). */
static int mul_over(uint64_t *acc, uint64_t f)
{
    if (f != 0 && *acc > (uint64_t)INT64_MAX / f)
        return 1;
    *acc *= f;
    return 0;
}

static int add_over(uint64_t *acc, uint64_t a)
{
    if (a > (uint64_t)INT64_MAX - *acc)
        return 1;
    *acc += a;
    return 0;
}

/* The formula of t into buf. */
static const char *formula(const term *t, char *buf, size_t size)
{
    int len = t->unit_text ? snprintf(buf, size, "%s", t->unit_text)
                           : snprintf(buf, size, "%llu", (unsigned long long)t->unit);
    for (int i = 0; i < t->nf && len > 0 && (size_t)len < size; i++)
        len += snprintf(buf + len, size - (size_t)len, " * %s=%lld", t->labels[i],
                        (long long)t->vals[i]);
    return buf;
}

/* Adds term name = unit * labels[0]=vals[0] * ...; OT_ERR_OVERFLOW naming
 * it when the product does not fit. unit_text: how unit is written (NULL:
 * its value). */
static int add_term(ledger *lg, const char *name, uint64_t unit, const char *unit_text,
                    int nf, const char *const *labels, const int64_t *vals, int on_device)
{
    term *t = &lg->t[lg->count];
    t->name = name;
    t->unit = unit;
    t->unit_text = unit_text;
    t->nf = nf;
    uint64_t b = unit;
    int over = 0;
    for (int i = 0; i < nf; i++) {
        t->labels[i] = labels[i];
        t->vals[i] = vals[i];
        over |= mul_over(&b, (uint64_t)vals[i]);
    }
    if (over) {
        char buf[128];
        return ot__fail(OT_ERR_OVERFLOW,
                        "%s: %s bytes overflows int64; solve fewer lanes or output "
                        "times per call",
                        name, formula(t, buf, sizeof buf));
    }
    if (b == 0)
        return OT_OK;
    t->bytes = b;
    t->on_device = on_device;
    lg->count++;
    return OT_OK;
}

/* a * x + b * y + ... over nf pairs, or nonzero on overflow. */
static int dot_over(uint64_t *out, int nf, const uint64_t *a, const uint64_t *x)
{
    uint64_t s = 0;
    for (int i = 0; i < nf; i++) {
        uint64_t p = a[i];
        if (mul_over(&p, x[i]) || add_over(&s, p))
            return 1;
    }
    *out = s;
    return 0;
}

/* CVODE's own vectors of the state's length for the problem's method and
 * solvers (see the top of the file). */
static uint64_t cvode_vectors(const ot_ode *ode, uint64_t *qmax)
{
    const ot__method_info *m = ot__method(ode->method);
    const uint64_t atol = ode->atol_vec ? 2 : 0;
    if (m->ark) { /* ARKStep: a stage vector per stage and part, about 16 more
                     (solution, error weights, predictor, interpolation and
                     temporaries), Newton's and the linear solver's; no
                     sensitivities (qmax unused) */
        *qmax = 0;
        const uint64_t parts = (uint64_t)(m->imex ? 2 : 1);
        return parts * (uint64_t)m->stages + 16 + (m->implicit ? 3 : 0) + atol;
    }
    const int bdf = ode->method == OT_BDF;
    *qmax = bdf ? 5 : 12;
    return *qmax + 1 + 7 + (bdf ? 2 + 1 : 3) + atol;
}

/* Lanes mode: one worker per thread, each one CVODE(S) instance of size n,
 * its scratch, and a step record of OT__RECORD_FIRST steps for ot_solve. */
static int lanes_working(ledger *lg, const ot__plan *pl, uint64_t sens)
{
    const ot_ode *ode = pl->ode;
    const uint64_t n = (uint64_t)pl->n, np = (uint64_t)pl->np, rows = (uint64_t)pl->rows;
    uint64_t qmax, nn = n;
    const uint64_t vec = cvode_vectors(ode, &qmax);
    const int bdf = ot__method(ode->method)->implicit; /* a matrix */
    if (mul_over(&nn, n))
        nn = (uint64_t)INT64_MAX; /* dot_over reports it */
    /* The linear solver: a dense matrix and its copy (2 n^2); a band
     * matrix and its copy, each with mupper + mlower rows more for the LU
     * (2 n (mupper + 2 mlower + 1)); GMRES's maxl + 1 Krylov vectors and 4
     * more (n each) and its Hessenberg matrix. */
    uint64_t mat_nn = bdf ? 2 : 0, mat_n = 0, mat_1 = 0;
    if (bdf && ode->linsol == OT_LINSOL_BAND) {
        mat_nn = 0;
        mat_n = 2 * ((uint64_t)ode->mupper + 2 * (uint64_t)ode->mlower + 1);
    } else if (bdf && ode->linsol == OT_LINSOL_GMRES) {
        const uint64_t maxl = ode->krylov_maxl > 0 ? (uint64_t)ode->krylov_maxl : 5;
        mat_nn = 0;
        mat_n = maxl + 5;
        mat_1 = (maxl + 1) * (maxl + 3) + (uint64_t)ode->pwork;
    }
    /* per n: CVODE's vectors, the y, y0, yp, ym scratch, the sensitivities'
     * scratch and CVODES' vectors, df/dp's, the band or Krylov solver's; the
     * dense matrix and its copy, the Jacobian's for sensitivities from
     * derivatives; out and diff scratch; the parameter buffers; ot_solve's
     * first record, the Krylov solver's small arrays and the
     * preconditioner's work */
    const uint64_t derivs = sens > 0 && ode->dfdp ? 1 : 0; /* J and df/dp scratch */
    const uint64_t a[] = {
        vec + 4 + (2 + derivs) * sens + sens * (qmax + 6) + mat_n, mat_nn + derivs, 2, 3,
        (pl->kind == OT__STEPS ? OT__RECORD_FIRST * (rows + 1) : 0) + mat_1};
    const uint64_t x[] = {n, nn, rows, np + 1, 1};
    uint64_t doubles, bytes = 16384; /* CVODE's and the worker's structs */
    if (dot_over(&doubles, 5, a, x) || mul_over(&doubles, 8) ||
        add_over(&bytes, doubles) ||
        add_over(&bytes, (uint64_t)ode->nroots * 40 + (bdf ? 8 * n : 0)))
        return ot__fail(OT_ERR_OVERFLOW,
                        "lanes working memory: a worker for n=%lld, np=%lld overflows "
                        "int64",
                        (long long)pl->n, (long long)pl->np);
    const int64_t threads = pl->threads;
    const char *lab[] = {"threads"};
    return add_term(lg, "lanes working memory", bytes, NULL, 1, lab, &threads, 0);
}

/* Lockstep: one CVODE(S) over the lanes of a block (n * block), the block
 * matrix, its copy and pivots, the callbacks' parameter, output and
 * perturbation scratch, and the root arrays, for as many blocks as run at
 * once; for ot_solve the first 64 steps of every block's record. */
static int lockstep_working(ledger *lg, const ot__plan *pl, uint64_t sens)
{
    const ot_ode *ode = pl->ode;
    const uint64_t n = (uint64_t)pl->n, np = (uint64_t)pl->np, rows = (uint64_t)pl->rows;
    uint64_t qmax, nn = n;
    const uint64_t vec = cvode_vectors(ode, &qmax) + 3; /* and y, yout, ewt */
    const int bdf = ot__method(ode->method)->implicit;  /* a matrix */
    if (mul_over(&nn, n))
        nn = (uint64_t)INT64_MAX;
    /* per n: the vectors, yp and ym, the pivots, CVODES' vectors and df/dp's;
     * the blocks and their copy, and the Jacobian's for sensitivities from
     * derivatives; p and pp; o and o2; the increment */
    const uint64_t derivs = sens > 0 && ode->dfdp ? 1 : 0; /* jb and db */
    const uint64_t a[] = {vec + 2 + (bdf ? 1 : 0) + sens * (qmax + 7 + derivs),
                          (bdf ? 2 : 0) + derivs, 2, 2, 1};
    const uint64_t x[] = {n, nn, np, rows, 1};
    uint64_t per_lane;
    if (dot_over(&per_lane, 5, a, x) || mul_over(&per_lane, 8) ||
        add_over(&per_lane, 1 + (uint64_t)ode->nroots * 40))
        return ot__fail(OT_ERR_OVERFLOW,
                        "lockstep working memory: a lane of n=%lld, np=%lld overflows "
                        "int64",
                        (long long)pl->n, (long long)pl->np);
    /* Blocks run threads at a time: that many lanes' working memory at
     * once; the step records (64 steps each to begin with) all stay. */
    const int64_t live =
        pl->block * pl->threads < pl->nbatch ? pl->block * pl->threads : pl->nbatch;
    const char *lab[] = {"nbatch", "rows"}, *live_lab[] = {"lanes at once"};
    const int64_t v[] = {pl->nbatch, pl->rows};
    int st = add_term(lg, "lockstep working memory", per_lane, NULL, 1,
                      live < pl->nbatch ? live_lab : lab, &live,
                      pl->solver->working_on_device);
    if (st == OT_OK && pl->kind == OT__STEPS)
        st = add_term(lg, "lockstep step records", 8 * OT__RECORD_FIRST,
                      "8 * " OT__STR(OT__RECORD_FIRST) " steps", 2, lab, v, 0);
    /* CVODE counts the batch's root functions in an int. */
    if (st == OT_OK && ode->nroots > 0 && pl->nbatch > INT32_MAX / ode->nroots)
        st = ot__fail(OT_ERR_OVERFLOW,
                      "roots: nroots=%lld * nbatch=%lld root functions in lockstep; "
                      "CVODE counts at most %d",
                      (long long)ode->nroots, (long long)pl->nbatch, INT32_MAX);
    return st;
}

/* The lanes an input holds (1 when broadcast). */
static int64_t lanes_in(ot_view v) { return v.layout.ndim == 2 ? v.layout.shape[1] : 1; }

/* What ot__plan_make converts to f64: f32 host inputs, and t_eval from a
 * device. */
static int copies(ledger *lg, const ot__plan *pl, ot_view y0, ot_view params,
                  ot_view t_eval, int64_t nt)
{
    const char *lab[] = {"rows", "lanes"};
    int st = OT_OK;
    if (pl->has_y0 && y0.layout.dtype == OT_F32 && y0.layout.device.type == OT_CPU) {
        const int64_t v[] = {pl->n, lanes_in(y0)};
        st = add_term(lg, "f64 copy of y0", 8, NULL, 2, lab, v, 0);
    }
    if (st == OT_OK && !ot_view_is_absent(params) && params.layout.dtype == OT_F32 &&
        params.layout.device.type == OT_CPU) {
        const int64_t v[] = {pl->np, lanes_in(params)};
        st = add_term(lg, "f64 copy of params", 8, NULL, 2, lab, v, 0);
    }
    if (st == OT_OK && pl->kind != OT__STEPS &&
        (t_eval.layout.dtype == OT_F32 || t_eval.layout.device.type != OT_CPU)) {
        const char *tl[] = {"nt", "lanes"};
        const int64_t tv[] = {nt, lanes_in(t_eval)};
        st = add_term(lg, "f64 copy of t_eval", 8, NULL, t_eval.layout.ndim == 2 ? 2 : 1,
                      tl, tv, 0);
    }
    return st;
}

/* Outputs and per-lane arrays. ot_solve: the two records (t0 and one step)
 * every lane makes at least, in the per-lane copies and the gathered ts and
 * ys; its real step count is unknown until the lanes have run. */
static int outputs(ledger *lg, const ot__plan *pl, int64_t nt, uint64_t sens)
{
    const ot_ode *ode = pl->ode;
    const int steps = pl->kind == OT__STEPS;
    const int dev = pl->solver->device_outputs && ode->outputs_on_device && !steps;
    const uint64_t item = ode->out_dtype == OT_F32 ? 4 : 8;
    const char *lab[] = {"rows", "nt", "nbatch"};
    const int64_t v[] = {pl->rows, steps ? 2 : nt, pl->nbatch};
    int st = add_term(lg, steps ? "ys (2 steps a lane at least)" : "ys", item, NULL, 3,
                      lab, v, dev);
    if (st == OT_OK && sens) {
        const char *sl[] = {pl->ode->sens_initial ? "(np + n)" : "np", "rows", "nt",
                            "nbatch"};
        const int64_t sv[] = {pl->ns, pl->rows, nt, pl->nbatch};
        st = add_term(lg, "sensitivities", item, NULL, 4, sl, sv, dev);
    }
    if (st == OT_OK && !steps) { /* per-lane times: ts [nt, nbatch] */
        st = add_term(lg, "ts", 8, NULL, pl->t_lanes ? 2 : 1, lab + 1, v + 1, 0);
    } else if (st == OT_OK) {
        const int64_t tv[] = {2, pl->nbatch};
        st = add_term(lg, "ts (2 steps a lane at least)", 8, NULL, 2, lab + 1, tv, 0);
        const char *rl[] = {"(rows + 1)", "nt", "nbatch"};
        const int64_t rv[] = {pl->rows + 1, 2, pl->nbatch};
        if (st == OT_OK && pl->block == 1)
            st = add_term(lg, "per-lane step records", 8, NULL, 3, rl, rv, 0);
    }
    /* status, count, statistics and the message table, 12 more for roots,
     * 16 for ot_solve's record pointers. */
    const uint64_t per_lane = sizeof(int) + sizeof(int64_t) + sizeof(ot_lane_stats) +
                              sizeof(char *) + (ode->nroots > 0 ? 12 : 0) +
                              (steps ? 2 * sizeof(double *) : 0);
    if (st == OT_OK)
        st = add_term(lg, "per-lane arrays", per_lane, NULL, 1, lab + 2, &pl->nbatch, 0);
    return st;
}

/* ot_solve_adjoint: the results (loss, dL/dp, dL/dy0 and a byte count per
 * lane) and, per worker, CVODES' stored interpolation data (y and y' at
 * OT__ADJ_STEPS + 1 points), the backward problem and its quadratures,
 * dg/dy at every output time and the loss scratch. The checkpoints
 * themselves (one per OT__ADJ_STEPS forward steps) grow with a lane's
 * steps, so they cannot be counted here: each lane reports its own
 * (ot_solution_lane_adjoint_bytes). */
static int adjoint_working(ledger *lg, const ot__plan *pl, int64_t nt)
{
    const char *lab[] = {"(1 + np + n + 1)", "nbatch"};
    const int64_t v[] = {1 + pl->np + pl->n + 1, pl->nbatch};
    int st = add_term(lg, "adjoint results", 8, NULL, 2, lab, v, 0);
    uint64_t qmax;
    const uint64_t vec = cvode_vectors(pl->ode, &qmax) + 4;
    const uint64_t a[] = {2 * (OT__ADJ_STEPS + 1) + vec + (uint64_t)nt + 6, vec + 2, 3,
                          (pl->ode->method == OT_BDF ? 2 : 0)};
    uint64_t nn = (uint64_t)pl->n;
    const uint64_t x[] = {(uint64_t)pl->n, (uint64_t)pl->np, (uint64_t)pl->rows,
                          mul_over(&nn, (uint64_t)pl->n) ? (uint64_t)INT64_MAX : nn};
    uint64_t doubles, bytes = 16384;
    if (st == OT_OK && (dot_over(&doubles, 4, a, x) || mul_over(&doubles, 8) ||
                        add_over(&bytes, doubles)))
        return ot__fail(OT_ERR_OVERFLOW,
                        "adjoint working memory: a worker for n=%lld, np=%lld, nt=%lld "
                        "overflows int64",
                        (long long)pl->n, (long long)pl->np, (long long)nt);
    /* Lanes mode: per worker; lockstep: per lane of the blocks that run at
     * once (their backward problem and data are [., lanes]). */
    const int lock = pl->solver->lockstep;
    const int64_t units = !lock                                  ? pl->threads
                          : pl->block * pl->threads < pl->nbatch ? pl->block * pl->threads
                                                                 : pl->nbatch;
    const char *tl[] = {lock ? "lanes at once" : "threads"};
    return st == OT_OK
               ? add_term(lg, "adjoint working memory", bytes, NULL, 1, tl, &units, 0)
               : st;
}

static int by_size(const void *a, const void *b)
{
    const uint64_t x = ((const term *)a)->bytes, y = ((const term *)b)->bytes;
    return x < y ? 1 : x > y ? -1 : 0;
}

int ot__size_check(const ot__plan *pl, ot_view y0, ot_view params, ot_view t_eval,
                   int64_t nt)
{
    ledger lg;
    lg.count = 0;
    const uint64_t sens = (uint64_t)pl->ns;
    int st = outputs(&lg, pl, nt, sens);
    if (st == OT_OK)
        st = copies(&lg, pl, y0, params, t_eval, nt);
    if (st == OT_OK)
        st = pl->solver->working_memory == OT__WORK_PER_LANE
                 ? lockstep_working(&lg, pl, sens)
                 : lanes_working(&lg, pl, sens);
    if (st == OT_OK && pl->kind == OT__ADJ)
        st = adjoint_working(&lg, pl, nt);
    if (st != OT_OK)
        return st;
    uint64_t total = 0;
    char buf[128];
    for (int i = 0; i < lg.count; i++)
        if (!lg.t[i].on_device && add_over(&total, lg.t[i].bytes))
            return ot__fail(OT_ERR_OVERFLOW,
                            "solve: the arrays it needs add up to more than int64 bytes "
                            "(%s: %s bytes)",
                            lg.t[i].name, formula(&lg.t[i], buf, sizeof buf));
    last_estimate = total;
    /* A request this small cannot be refused usefully in advance, and the
     * limits cost system calls: it goes ahead (an allocation that fails in
     * it still ends in OT_ERR_NOMEM). */
    if (total < OT__SIZE_QUERY_FLOOR && !ot__memory_limit_is_set())
        return OT_OK;
    const char *what;
    const uint64_t limit = ot__memory_limit(&what);
    if (total <= limit)
        return OT_OK;
    qsort(lg.t, (size_t)lg.count, sizeof *lg.t, by_size);
    char list[400];
    int len = 0;
    for (int i = 0; i < lg.count && (size_t)len < sizeof list; i++)
        if (!lg.t[i].on_device)
            len +=
                snprintf(list + len, sizeof list - (size_t)len, "; %s: %s = %llu bytes",
                         lg.t[i].name, formula(&lg.t[i], buf, sizeof buf),
                         (unsigned long long)lg.t[i].bytes);
    return ot__fail(OT_ERR_NOMEM,
                    "solve: needs %llu bytes, more than the %llu bytes %s%s",
                    (unsigned long long)total, (unsigned long long)limit, what, list);
}

/* The argument check of an MPI solve: each rank checks what it was given,
 * one Allgather shares a record per rank, and every rank runs the same
 * comparison over the records, so all reach the same verdict before any lane
 * data moves. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

/* What one rank was given, as the others need to compare it. */
typedef struct {
    int64_t status; /* of the local checks; msg holds their message */
    int64_t input, output, root, balance, block, sens;
    ot_ode_info desc; /* the problem: sizes, mode, dtype, fingerprint */
    int64_t nt, has_y0, nlocal;
    uint64_t t_hash;
    /* ot_mpi_solve_adjoint: the loss's kind (data: 0 none, 1 for every
     * lane, 2 per lane), weights, and which functions it has */
    int64_t adj, data_kind, has_weights, has_fn, has_integrand;
    uint64_t data_hash;
    /* ot_mpi_solve_*_with: per-lane starts given; stops and stops_dp kind
     * (0 none, 1 for every lane, 2 per lane), the stops' count and, for
     * every lane's, a hash of the values */
    int64_t has_t0, stops_kind, ns, dp_kind;
    uint64_t stops_hash;
    char msg[256];
} check_rec;

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    return h;
}

/* t_eval checked by the core's own rules, then as an owned f64 copy. */
static int check_times(ot__mpi *m, ot_view t_eval, double t0)
{
    int st = ot_times_check(t_eval, t0);
    if (st != OT_OK)
        return st;
    const int64_t nt = t_eval.layout.shape[0];
    m->t = malloc((size_t)nt * sizeof *m->t);
    if (m->t == NULL)
        return ot_set_error(OT_ERR_NOMEM, "t_eval: cannot copy %lld times",
                            (long long)nt);
    for (int64_t i = 0; i < nt; i++)
        ot_view_get(t_eval, i, 0, 0, &m->t[i]);
    m->nt = nt;
    return OT_OK;
}

static int64_t lanes_of(ot_view v)
{
    return !ot_view_is_absent(v) && v.layout.ndim == 2 ? v.layout.shape[1] : 1;
}

static int check_input(ot_view v, int64_t rows, int64_t nlocal, const char *name)
{
    if (v.layout.device.type != OT_CPU)
        return ot_set_error(OT_ERR_DEVICE, "%s: must be in host memory for an MPI solve",
                            name);
    return ot_view_check_lanes(v, rows, nlocal, name);
}

/* y0 and params of this rank: shapes and the lane count (values are checked
 * while they are packed). */
static int check_lanes(const ot_ode_info *o, ot_view y0, ot_view params, check_rec *r)
{
    r->has_y0 = !ot_view_is_absent(y0);
    if (!r->has_y0 && !o->has_init)
        return ot_set_error(OT_ERR_ARG,
                            "y0: absent, and the problem has no init callback");
    if (ot_view_is_absent(params) && o->nparams > 0)
        return ot_set_error(OT_ERR_ARG,
                            "params: absent, but the problem has %lld parameters",
                            (long long)o->nparams);
    if (!r->has_y0 && o->nparams == 0)
        return ot_set_error(OT_ERR_ARG, "y0: absent, and the problem has no parameters: "
                                        "nothing tells the lanes apart; pass y0");
    const int64_t ly = r->has_y0 ? lanes_of(y0) : 1, lp = lanes_of(params);
    /* As in one process, but a rank may hold no lane at all: [n, 0]. */
    r->nlocal = ly == 0 || lp == 0 ? 0 : ly > 1 ? ly : lp;
    if (r->nlocal == 0 && r->input == OT_MPI_INPUT_ROOT)
        return ot_set_error(OT_ERR_SHAPE,
                            "%s: has 0 lanes; a batch needs at least one lane",
                            ly == 0 ? "y0" : "params");
    int st = OT_OK;
    if (r->has_y0)
        st = check_input(y0, o->nstates, r->nlocal, "y0");
    if (st == OT_OK && !ot_view_is_absent(params))
        st = check_input(params, o->nparams, r->nlocal, "params");
    return st;
}

static int check_options(const ot__mpi *m, const ot_mpi_options *o)
{
    if (o->input != OT_MPI_INPUT_LOCAL && o->input != OT_MPI_INPUT_ROOT)
        return ot_set_error(
            OT_ERR_ARG, "opts: input is %d; use OT_MPI_INPUT_LOCAL or _ROOT", o->input);
    if (o->output != OT_MPI_OUTPUT_DISTRIBUTED && o->output != OT_MPI_OUTPUT_GATHER)
        return ot_set_error(
            OT_ERR_ARG, "opts: output is %d; use OT_MPI_OUTPUT_DISTRIBUTED or _GATHER",
            o->output);
    if (o->balance != OT_MPI_DYNAMIC && o->balance != OT_MPI_STATIC)
        return ot_set_error(
            OT_ERR_ARG, "opts: balance is %d; use OT_MPI_DYNAMIC or _STATIC", o->balance);
    if (o->root < 0 || o->root >= m->size)
        return ot_set_error(OT_ERR_ARG,
                            "opts: root is %d; the communicator has ranks 0..%d", o->root,
                            m->size - 1);
    if (o->block < 0)
        return ot_set_error(OT_ERR_VALUE, "opts: block is %lld; must be >= 0",
                            (long long)o->block);
    return OT_OK;
}

/* A hash of v's values in column-major order (any dtype). */
static uint64_t hash_view(ot_view v, uint64_t h)
{
    const int64_t *sh = v.layout.shape;
    for (int64_t c = 0; c < (v.layout.ndim > 2 ? sh[2] : 1); c++)
        for (int64_t j = 0; j < (v.layout.ndim > 1 ? sh[1] : 1); j++)
            for (int64_t i = 0; i < sh[0]; i++) {
                double x;
                ot_view_get(v, i, j, c, &x);
                h = fnv(h, &x, sizeof x);
            }
    return h;
}

/* data or weights of an MPI adjoint: f64 on the host, [rows, nt] (every
 * lane) or [rows, nt, k] (per lane: k this rank's lanes, or 0 on a rank
 * that passes no lanes). @return its kind (1 or 2) in *kind. */
static int check_table(const ot__mpi *m, ot_view v, const check_rec *r, int passes,
                       const char *name, int64_t *kind)
{
    const ot_layout *l = &v.layout;
    if (l->dtype != OT_F64 || l->device.type != OT_CPU)
        return ot_set_error(OT_ERR_ARG, "%s: must be f64 in host memory", name);
    const int64_t k = l->ndim == 3 ? l->shape[2] : -1;
    if ((l->ndim != 2 && l->ndim != 3) || l->shape[0] != m->desc.rows ||
        l->shape[1] != m->nt || (k >= 0 && k != (passes ? r->nlocal : k)))
        return ot_set_error(
            OT_ERR_SHAPE,
            "%s: shape [%lld, %lld%s] (%d axes); expected [rows = %lld, nt = "
            "%lld] for every lane, or [%lld, %lld, %lld] for this rank's lanes",
            name, (long long)l->shape[0], (long long)l->shape[1],
            l->ndim == 3 ? ", ..." : "", l->ndim, (long long)m->desc.rows,
            (long long)m->nt, (long long)m->desc.rows, (long long)m->nt,
            (long long)r->nlocal);
    *kind = l->ndim == 3 ? 2 : 1;
    return OT_OK;
}

/* The adjoint's loss on this rank: its kind and, for data shared by every
 * lane, a hash of the values (every rank must pass the same). */
static int check_loss(const ot__mpi *m, int passes, check_rec *r)
{
    const ot_loss *l = &m->loss;
    if (!m->has_loss)
        return ot_set_error(OT_ERR_ARG, "loss: NULL (ot_loss_squares or ot_loss_custom)");
    r->has_fn = l->fn != NULL;
    r->has_integrand = l->integrand != NULL;
    r->has_weights = !ot_view_is_absent(l->weights);
    int st = OT_OK;
    if (!ot_view_is_absent(l->data))
        st = check_table(m, l->data, r, passes, "loss.data", &r->data_kind);
    int64_t wk = r->data_kind;
    if (st == OT_OK && r->has_weights)
        st = check_table(m, l->weights, r, passes, "loss.weights", &wk);
    if (st == OT_OK && wk != r->data_kind)
        st = ot_set_error(OT_ERR_SHAPE, "loss.weights: %s, but loss.data %s",
                          wk == 2 ? "per lane" : "for every lane",
                          r->data_kind == 2 ? "per lane" : "for every lane");
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (int w = 0; st == OT_OK && r->data_kind == 1 && w < 1 + r->has_weights; w++)
        h = hash_view(w ? l->weights : l->data, h);
    r->data_hash = h;
    return st;
}

/* ot_mpi_solve_*_with's starts, stops and stops_dp on this rank: host
 * memory, and per lane [.., nlocal] where this rank passes lanes; their
 * values are the core's to check in each block. */
static int check_with(const ot__mpi *m, const ot_solve_inputs *in, int passes,
                      check_rec *r)
{
    const ot_view *v[3] = {&in->t0, &in->stops, &in->stops_dp};
    static const char *const name[3] = {"t0", "stops", "stops_dp"};
    for (int w = 0; w < 3; w++)
        if (!ot_view_is_absent(*v[w]) && v[w]->layout.device.type != OT_CPU)
            return ot_set_error(OT_ERR_DEVICE,
                                "%s: must be in host memory for an MPI solve", name[w]);
    const ot_layout *t0 = &in->t0.layout, *s = &in->stops.layout,
                    *d = &in->stops_dp.layout;
    r->has_t0 = !ot_view_is_absent(in->t0);
    if (r->has_t0 && passes && (t0->ndim != 1 || t0->shape[0] != r->nlocal))
        return ot_set_error(OT_ERR_SHAPE,
                            "t0: %d axes, %lld values; per-lane starts are [k], k = %lld "
                            "(this rank's lanes)",
                            t0->ndim, (long long)t0->shape[0], (long long)r->nlocal);
    if (!ot_view_is_absent(in->stops)) {
        r->ns = s->shape[0];
        r->stops_kind = s->ndim == 1 ? 1 : 2;
        if (s->ndim > 2 || (s->ndim == 2 && passes && s->shape[1] != r->nlocal))
            return ot_set_error(
                OT_ERR_SHAPE,
                "stops: %d axes, the last %lld; expected [nstops] for every "
                "lane or [nstops, k], k = %lld (this rank's lanes)",
                s->ndim, (long long)s->shape[s->ndim - 1], (long long)r->nlocal);
        if (r->stops_kind == 1)
            r->stops_hash = hash_view(in->stops, UINT64_C(0xcbf29ce484222325));
    }
    if (!ot_view_is_absent(in->stops_dp)) {
        if (r->stops_kind == 0)
            return ot_set_error(OT_ERR_ARG, "stops_dp: given, but there are no stops");
        r->dp_kind = d->ndim == 2 ? 1 : 2;
        if (r->dp_kind == 1 && r->stops_kind == 2)
            return ot_set_error(
                OT_ERR_SHAPE, "stops_dp: [np, nstops] for every lane, but the stops are "
                              "per lane; pass [np, nstops, k] with them");
        if (d->ndim < 2 || d->shape[0] != m->desc.nparams || d->shape[1] != r->ns ||
            (d->ndim == 3 && passes && d->shape[2] != r->nlocal))
            return ot_set_error(
                OT_ERR_SHAPE,
                "stops_dp: %d axes; expected [np = %lld, nstops = %lld] for "
                "every lane or [%lld, %lld, k], k = %lld (this rank's lanes)",
                d->ndim, (long long)m->desc.nparams, (long long)r->ns,
                (long long)m->desc.nparams, (long long)r->ns, (long long)r->nlocal);
        if (r->dp_kind == 1)
            r->stops_hash = hash_view(in->stops_dp, r->stops_hash);
    }
    return OT_OK;
}

/* This rank's record; a failure is kept in it, not returned. */
static void check_local(ot__mpi *m, const ot_ode *ode, const ot_solve_inputs *in,
                        const ot_mpi_options *opts, ot_solution **out, check_rec *r)
{
    const ot_view y0 = in->y0, params = in->params, t_eval = in->t_eval;
    r->input = opts->input;
    r->output = opts->output;
    r->root = opts->root;
    r->balance = opts->balance;
    r->block = opts->block;
    r->sens = m->sens;
    r->adj = m->adj;
    int st = check_options(m, opts);
    if (st == OT_OK && out == NULL)
        st = ot_set_error(OT_ERR_ARG, "out: NULL");
    if (st == OT_OK && ode == NULL)
        st = ot_set_error(OT_ERR_ARG, "ode: NULL");
    m->desc.size = sizeof m->desc;
    if (st == OT_OK)
        st = ot_ode_describe(ode, &m->desc);
    if (st == OT_OK) {
        const ot_ode_info *d = &m->desc;
        m->ode = ode;
        r->desc = *d;
        if (d->outputs_on_device)
            st = ot_set_error(OT_ERR_DEVICE,
                              "ode: outputs kept on the device cannot travel "
                              "between ranks; keep them on the host");
        else if (m->sens && d->nsens == 0) /* the core's rule and words */
            st = ot_set_error(OT_ERR_ARG, "params: sensitivities need nparams >= 1 (or "
                                          "ot_ode_set_sens_initial)");
    }
    if (st == OT_OK && t_eval.layout.ndim == 2 && t_eval.layout.shape[1] > 1)
        st = ot_set_error(OT_ERR_SHAPE,
                          "t_eval: per-lane output times [nt, k] do not travel between "
                          "ranks; pass one [nt] for every lane (per-lane times: "
                          "ot_solve_*_with in each rank)");
    if (st == OT_OK)
        st = check_times(m, t_eval, m->desc.t0);
    if (st == OT_OK) {
        r->nt = m->nt;
        r->t_hash = fnv(UINT64_C(0xcbf29ce484222325), m->t, (size_t)m->nt * sizeof *m->t);
    }
    const int passes = opts->input == OT_MPI_INPUT_LOCAL || m->rank == opts->root;
    if (st == OT_OK && passes)
        st = check_lanes(&m->desc, y0, params, r);
    if (st == OT_OK && m->adj)
        st = check_loss(m, passes, r);
    if (st == OT_OK)
        st = check_with(m, in, passes, r);
    r->status = st;
    if (st != OT_OK)
        snprintf(r->msg, sizeof r->msg, "%s (rank %d)", ot_last_error(), m->rank);
}

/* Field f of rank r against rank 0: the first difference fails the call. */
#define OT_MPI_SAME_(f, what)                                                            \
    if (rec[r].f != rec[0].f)                                                            \
    return ot_set_error(OT_ERR_ARG,                                                      \
                        "%s: rank %d has %lld, rank 0 has %lld; every rank "             \
                        "must pass the same",                                            \
                        what, r, (long long)rec[r].f, (long long)rec[0].f)

/* The kind of the adjoint's loss data every rank agrees on (0 none, 1 for
 * every lane, 2 per lane): per-lane data from the ranks that pass lanes,
 * data for every lane from every rank. */
static int64_t agreed_data_kind(const check_rec *rec, int size)
{
    const int local = rec[0].input == OT_MPI_INPUT_LOCAL;
    int64_t kind = 0;
    for (int r = 0; r < size; r++)
        if (local || r == rec[0].root)
            kind = rec[r].data_kind > kind ? rec[r].data_kind : kind;
    return kind;
}

static int compare_loss(const check_rec *rec, int size)
{
    const int64_t kind = agreed_data_kind(rec, size);
    const int local = rec[0].input == OT_MPI_INPUT_LOCAL;
    int64_t weights = -1; /* of the first rank passing per-lane data */
    if (kind == 0 && !rec[0].has_fn && !rec[0].has_integrand)
        return ot_set_error(OT_ERR_ARG,
                            "loss: give data (ot_loss_squares) or a loss function "
                            "(ot_loss_custom), one of the two (or an integrand "
                            "alone)");
    for (int r = 0; r < size; r++) {
        const int passes = local || r == rec[0].root;
        if (kind == 1 && rec[r].data_kind != 1)
            return ot_set_error(
                OT_ERR_ARG,
                "loss.data: rank %d passed %s; data for every lane [rows, nt] "
                "must be passed on every rank",
                r, rec[r].data_kind ? "per-lane data" : "none");
        if (kind == 2 && passes && rec[r].nlocal > 0 && rec[r].data_kind != 2)
            return ot_set_error(
                OT_ERR_ARG,
                "loss.data: rank %d passed %s; per-lane data [rows, nt, k] "
                "comes with each rank's lanes",
                r, rec[r].data_kind ? "data for every lane" : "none");
        if (kind == 2 && passes && rec[r].data_kind == 2) {
            if (weights >= 0 && rec[r].has_weights != weights)
                return ot_set_error(
                    OT_ERR_ARG,
                    "loss.weights: rank %d %s weights, unlike the others; "
                    "pass them with every rank's data or with none",
                    r, rec[r].has_weights ? "passed" : "did not pass");
            weights = rec[r].has_weights;
        }
    }
    return OT_OK;
}

/* Starts, stops and stops_dp: per lane from every rank that passes lanes
 * (the count of stops may differ: NaN pads them to the largest), for every
 * lane the same on every rank. */
static int compare_with(const check_rec *rec, int size)
{
    const int local = rec[0].input == OT_MPI_INPUT_LOCAL;
    const check_rec *ref = NULL; /* the first rank that passes lanes */
    for (int r = 0; r < size && ref == NULL; r++)
        if ((local || r == rec[0].root) && rec[r].nlocal > 0)
            ref = &rec[r];
    for (int r = 0; ref && r < size; r++) {
        const check_rec *c = &rec[r];
        const int passes = (local || r == rec[0].root) && c->nlocal > 0;
        if (passes && c->has_t0 != ref->has_t0)
            return ot_set_error(OT_ERR_ARG,
                                "t0: rank %d %s per-lane starts, rank %d %s; pass them "
                                "with every rank's lanes or with none",
                                r, c->has_t0 ? "passed" : "did not pass",
                                (int)(ref - rec), ref->has_t0 ? "did" : "did not");
        const int shared = ref->stops_kind == 1;
        if ((passes || shared) &&
            (c->stops_kind != ref->stops_kind || c->dp_kind != ref->dp_kind))
            return ot_set_error(
                OT_ERR_ARG,
                "stops: rank %d passed %s (stops_dp %s), rank %d %s (%s); "
                "stops for every lane go to every rank, per-lane stops "
                "come with each rank's lanes",
                r,
                c->stops_kind == 0   ? "none"
                : c->stops_kind == 1 ? "stops for every lane"
                                     : "per-lane stops",
                c->dp_kind ? "given" : "absent", (int)(ref - rec),
                ref->stops_kind == 0   ? "none"
                : ref->stops_kind == 1 ? "stops for every lane"
                                       : "per-lane stops",
                ref->dp_kind ? "given" : "absent");
        if (shared && (c->ns != ref->ns || c->stops_hash != ref->stops_hash))
            return ot_set_error(
                OT_ERR_VALUE,
                "stops: rank %d's stops (or stops_dp) for every lane differ "
                "from rank %d's; every rank must pass the same",
                r, (int)(ref - rec));
    }
    return OT_OK;
}

/* The verdict over all records: the same on every rank. */
static int compare(const check_rec *rec, int size)
{
    for (int r = 0; r < size; r++)
        if (rec[r].status != OT_OK)
            return ot_set_error((int)rec[r].status, "%s", rec[r].msg);
    for (int r = 1; r < size; r++) {
        OT_MPI_SAME_(input, "opts.input");
        OT_MPI_SAME_(output, "opts.output");
        OT_MPI_SAME_(root, "opts.root");
        OT_MPI_SAME_(balance, "opts.balance");
        OT_MPI_SAME_(block, "opts.block");
        OT_MPI_SAME_(sens, "entry point (1: ot_mpi_solve_fwd_sens)");
        OT_MPI_SAME_(adj, "entry point (1: ot_mpi_solve_adjoint)");
        OT_MPI_SAME_(has_fn, "loss.fn (1: set)");
        OT_MPI_SAME_(has_integrand, "loss.integrand (1: set)");
        OT_MPI_SAME_(desc.nstates, "ode: nstates");
        OT_MPI_SAME_(desc.nparams, "ode: nparams");
        OT_MPI_SAME_(desc.rows, "ode: output rows (nout, or nstates)");
        OT_MPI_SAME_(desc.mode, "ode: mode");
        OT_MPI_SAME_(desc.out_dtype, "ode: output dtype");
        if (rec[r].desc.fingerprint != rec[0].desc.fingerprint)
            return ot_set_error(OT_ERR_ARG,
                                "ode: rank %d's options (method, tolerances, t0, steps, "
                                "callbacks set) differ from rank 0's; build the problem "
                                "the same way on every rank",
                                r);
        OT_MPI_SAME_(nt, "t_eval: nt");
        /* Shared loss data: the same on every rank; per-lane data comes with
         * the lanes (a rank passing none may pass either kind). */
        if (rec[r].data_kind == 1 && rec[0].data_kind == 1 &&
            (rec[r].data_hash != rec[0].data_hash ||
             rec[r].has_weights != rec[0].has_weights))
            return ot_set_error(
                OT_ERR_VALUE,
                "loss.data: rank %d's values or weights differ from rank 0's; "
                "data for every lane must be the same on every rank",
                r);
        if (rec[r].t_hash != rec[0].t_hash)
            return ot_set_error(
                OT_ERR_VALUE,
                "t_eval: rank %d's values differ from rank 0's; every rank "
                "must pass the same times",
                r);
    }
    int st = compare_with(rec, size);
    if (st != OT_OK)
        return st;
    if (rec[0].input == OT_MPI_INPUT_LOCAL) {
        int64_t total = 0;
        for (int r = 0; r < size; r++) {
            OT_MPI_SAME_(has_y0, "y0 (1: given, 0: absent, init computes it)");
            total += rec[r].nlocal;
        }
        if (total == 0)
            return ot_set_error(OT_ERR_SHAPE,
                                "y0, params: 0 lanes on every rank; a batch "
                                "needs at least one lane");
    }
    return rec[0].adj ? compare_loss(rec, size) : OT_OK;
}
#undef OT_MPI_SAME_

/* 2048 lanes at most, so the per-call cost of a block stays small against
 * its lanes; about 32 blocks per rank so that the dealing can even out the
 * ranks' loads. */
static int64_t auto_block(const ot__mpi *m)
{
    if (m->desc.mode == OT_LOCKSTEP)
        return OT_MPI_LOCKSTEP_BLOCK;
    const int64_t want = 32 * (int64_t)m->size;
    int64_t b = (m->nbatch + want - 1) / want;
    return b < 1 ? 1 : b > 2048 ? 2048 : b;
}

/* Sizes, owners and blocks from the agreed records. */
static int plan(ot__mpi *m, const check_rec *rec)
{
    const check_rec *root = &rec[rec[0].root];
    m->opt.input = (int)rec[0].input;
    m->opt.output = (int)rec[0].output;
    m->opt.root = (int)rec[0].root;
    m->opt.balance = (int)rec[0].balance;
    m->n = rec[0].desc.nstates;
    m->np = rec[0].desc.nparams;
    m->rows = rec[0].desc.rows;
    m->nsens = m->sens ? rec[0].desc.nsens : 0;
    m->has_y0 = (int)root->has_y0;
    m->has_roots = m->desc.nroots > 0;
    m->isz = m->desc.out_dtype == OT_F32 ? sizeof(float) : sizeof(double);
    m->in_w = (m->has_y0 ? m->n : 0) + m->np;
    if (m->adj) { /* per-lane loss data rides with the lanes' inputs */
        m->data_off = m->in_w;
        m->lane_data = agreed_data_kind(rec, m->size) == 2;
        for (int r = 0; r < m->size; r++) /* compare_loss: they agree */
            if (rec[r].data_kind == m->lane_data + 1)
                m->has_weights |= (int)rec[r].has_weights;
        if (m->lane_data)
            m->in_w += m->rows * m->nt * (1 + m->has_weights);
    }
    const check_rec *ref = root; /* starts and stops: a rank that passes lanes */
    for (int r = 0; m->opt.input == OT_MPI_INPUT_LOCAL && r < m->size; r++)
        if (rec[r].nlocal > 0) {
            ref = &rec[r];
            break;
        }
    m->has_t0 = (int)ref->has_t0;
    m->stops_kind = (int)ref->stops_kind;
    m->dp_kind = (int)ref->dp_kind;
    for (int r = 0; m->stops_kind && r < m->size; r++)
        m->ns = rec[r].ns > m->ns ? rec[r].ns : m->ns;
    m->t0_off = m->in_w;
    m->in_w += m->has_t0;
    m->stops_off = m->in_w;
    m->in_w += m->stops_kind == 2 ? m->ns : 0;
    m->dp_off = m->in_w;
    m->in_w += m->dp_kind == 2 ? m->np * m->ns : 0;
    m->off = calloc((size_t)m->size + 1, sizeof *m->off);
    m->passed = calloc((size_t)m->size, sizeof *m->passed);
    if (m->off == NULL || m->passed == NULL)
        return ot_set_error(OT_ERR_NOMEM, "plan: cannot allocate on rank %d", m->rank);
    for (int r = 0; r < m->size; r++)
        m->passed[r] = m->opt.input == OT_MPI_INPUT_LOCAL ? rec[r].nlocal
                       : r == m->opt.root                 ? root->nlocal
                                                          : 0;
    m->nbatch = 0;
    for (int r = 0; r < m->size; r++)
        m->nbatch += m->passed[r];
    for (int r = 0; r < m->size; r++)
        m->off[r + 1] = m->opt.input == OT_MPI_INPUT_LOCAL
                            ? m->off[r] + m->passed[r]
                            : m->nbatch * (r + 1) / m->size;
    /* Every byte count below (inputs, lane records) fits int64_t. */
    const int64_t per_lane = 8 * (m->in_w + (1 + m->nsens) * m->rows * m->nt +
                                  (m->adj ? 3 + m->n + m->np : 0)) +
                             512;
    if (m->rows * m->nt > INT64_MAX / 64 / (1 + m->nsens) ||
        m->nbatch > INT64_MAX / per_lane)
        return ot_set_error(OT_ERR_OVERFLOW,
                            "y0, params: %lld lanes of %lld bytes overflow",
                            (long long)m->nbatch, (long long)per_lane);
    m->block = rec[0].block > 0 ? rec[0].block : auto_block(m);
    if (m->block > m->nbatch)
        m->block = m->nbatch;
    /* A block's inputs travel in one message of int-counted doubles. */
    if (m->in_w > 0 && m->block > (int64_t)(INT32_MAX / m->in_w))
        return ot_set_error(OT_ERR_OVERFLOW,
                            "opts: block of %lld lanes needs more than 2^31 doubles of "
                            "inputs per message; use a smaller block",
                            (long long)m->block);
    m->nblocks = (m->nbatch + m->block - 1) / m->block;
    m->opt.block = m->block;
    return OT_OK;
}

/* Stops (and stops_dp) for every lane as owned f64 copies on every rank. */
static int copy_shared(ot__mpi *m, const ot_solve_inputs *in)
{
    if (m->stops_kind != 1)
        return OT_OK;
    const int64_t nd = m->dp_kind == 1 ? m->np * m->ns : 0;
    m->stops = malloc((size_t)m->ns * sizeof *m->stops);
    m->stops_dp = malloc((size_t)(nd > 0 ? nd : 1) * sizeof *m->stops_dp);
    if (m->stops == NULL || m->stops_dp == NULL)
        return ot_set_error(OT_ERR_NOMEM, "stops: cannot copy %lld stops on rank %d",
                            (long long)m->ns, m->rank);
    for (int64_t k = 0; k < m->ns; k++)
        ot_view_get(in->stops, k, 0, 0, &m->stops[k]);
    for (int64_t k = 0; k < nd; k++)
        ot_view_get(in->stops_dp, k % m->np, k / m->np, 0, &m->stops_dp[k]);
    return OT_OK;
}

int ot__mpi_check(ot__mpi *m, const ot_ode *ode, const ot_solve_inputs *in,
                  const ot_mpi_options *opts, ot_solution **out)
{
    check_rec *rec = calloc((size_t)m->size, sizeof *rec);
    check_rec mine;
    memset(&mine, 0, sizeof mine);
    check_local(m, ode, in, opts, out, &mine);
    /* Out of memory for the records is the one local failure that cannot
     * ride in them; every rank still joins the Allgather with its buffer. */
    int nomem = rec == NULL, any_nomem = 0;
    int rc = MPI_Allreduce(&nomem, &any_nomem, 1, MPI_INT, MPI_MAX, m->comm);
    if (rc != MPI_SUCCESS) {
        free(rec);
        return ot__mpi_err(m, rc, "MPI_Allreduce (checking arguments)");
    }
    if (any_nomem) {
        free(rec);
        return ot_set_error(OT_ERR_NOMEM, "check: cannot allocate the ranks' records");
    }
    rc = MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, rec, (int)sizeof mine, MPI_BYTE,
                       m->comm);
    int st = ot__mpi_err(m, rc, "MPI_Allgather (checking arguments)");
    if (st == OT_OK)
        st = compare(rec, m->size);
    if (st == OT_OK) {
        st = plan(m, rec);
        if (st == OT_OK)
            st = copy_shared(m, in);
        st = ot__mpi_agree(m, st);
    }
    free(rec);
    return st;
}

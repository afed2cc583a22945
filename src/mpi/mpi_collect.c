/* Collecting an MPI solve: each solved lane travels as one record (fixed
 * head, message, output columns) from the rank that solved it to the rank
 * that owns it, and lands in an ordinary ot_solution, bytes unchanged. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

_Static_assert(sizeof(ot__mpi_lane_head) % 8 == 0,
               "lane head must keep 8-byte alignment");

static int64_t pad8(int64_t bytes) { return (bytes + 7) / 8 * 8; }

/* The rank that owns global lane g. */
static int owner(const ot__mpi *m, int64_t g)
{
    if (m->opt.output == OT_MPI_OUTPUT_GATHER)
        return m->opt.root;
    /* The last rank whose range starts at or before g: an empty rank's
     * range starts where the next one's does, so it is never chosen. */
    int lo = 0, hi = m->size - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (m->off[mid] <= g)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static int64_t col_bytes(const ot__mpi *m)
{
    return pad8(m->rows * m->nt * (int64_t)m->isz);
}

static const char *lane_msg(const ot_solution *s, int64_t j)
{
    return ot_solution_lane_status(s, j) != OT_OK ? ot_solution_lane_message(s, j) : "";
}

/* ot_mpi_solve_adjoint: loss, dL/dp, dL/dy0 and the checkpoint bytes of a
 * lane, as doubles after its columns. */
static int64_t grad_doubles(const ot__mpi *m) { return m->adj ? 2 + m->np + m->n : 0; }

/* Doubles of a lane's recorded events: times and roots, before and after. */
static int64_t event_doubles(const ot__mpi *m, int64_t events)
{
    return events * (2 + 2 * m->n);
}

static int64_t lane_events(const ot__mpi *m, const ot_solution *s, int64_t j)
{
    return m->has_events ? ot_solution_lane_event_count(s, j) : 0;
}

/* A record's bytes from its head's message length and event count. */
static int64_t bytes_of(const ot__mpi *m, int64_t msg_len, int64_t events)
{
    return (int64_t)sizeof(ot__mpi_lane_head) + pad8(msg_len) +
           (1 + m->nsens) * col_bytes(m) + 8 * grad_doubles(m) +
           8 * event_doubles(m, events);
}

static int64_t record_bytes(const ot__mpi *m, const ot_solution *s, int64_t j)
{
    return bytes_of(m, (int64_t)strlen(lane_msg(s, j)), lane_events(m, s, j));
}

/* Lane j's first `events` entries of event tensor w: their doubles' count
 * per event (1, or n for the states) and where lane j's column starts. */
static const double *event_col(const ot__mpi *m, const ot_tensor *t, int w, int64_t j,
                               int64_t *per)
{
    const ot_layout *l = ot_tensor_layout(t);
    *per = w >= OT_EVENT_BEFORE ? m->n : 1;
    return (const double *)l->data + j * *per * l->shape[w >= OT_EVENT_BEFORE ? 1 : 0];
}

/* Lane j's gradient doubles (grad_doubles) of a block's solution into g;
 * byte copies, the record being a char buffer. */
static void grads_out(const ot__mpi *m, const ot_solution *s, int64_t j, char *g)
{
    const int64_t rows[3] = {1, m->np, m->n};
    for (int k = 0; k < 3; k++) {
        const char *t =
            (const char *)ot_tensor_layout(ot_solution_grad_tensor(s, k))->data;
        memcpy(g, t + j * rows[k] * 8, (size_t)rows[k] * 8);
        g += rows[k] * 8;
    }
    const double bytes = (double)ot_solution_lane_adjoint_bytes(s, j);
    memcpy(g, &bytes, sizeof bytes);
}

/* Lane j of one block's solution (global lane g) as a record at dst;
 * returns the bytes written. */
static int64_t pack_lane(const ot__mpi *m, const ot_solution *s, int64_t j, int64_t g,
                         char *dst)
{
    ot__mpi_lane_head h;
    memset(&h, 0, sizeof h);
    const char *msg = lane_msg(s, j);
    int root_index;
    h.lane = g;
    h.status = ot_solution_lane_status(s, j);
    h.count = ot_solution_lane_count(s, j);
    ot_solution_lane_root(s, j, &root_index, &h.root_time); /* -1, NaN: none */
    h.root_index = root_index;
    ot_solution_lane_stats(s, j, &h.stats);
    h.msg_len = (int64_t)strlen(msg);
    h.events = lane_events(m, s, j);
    char *p = dst;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    memset(p, 0, (size_t)pad8(h.msg_len));
    memcpy(p, msg, (size_t)h.msg_len);
    p += pad8(h.msg_len);
    const size_t len = (size_t)(m->rows * m->nt) * m->isz;
    for (int64_t t = 0; t <= m->nsens; t++) {
        const ot_layout *l =
            ot_tensor_layout(t == 0 ? ot_solution_ys(s) : ot_solution_sens(s, t - 1));
        memcpy(p, (const char *)l->data + j * l->strides[2], len);
        p += col_bytes(m);
    }
    if (m->adj) {
        grads_out(m, s, j, p);
        p += 8 * grad_doubles(m);
    }
    for (int w = OT_EVENT_TIMES; h.events > 0 && w <= OT_EVENT_AFTER; w++) {
        int64_t per;
        const double *c = event_col(m, ot_solution_event_tensor(s, w), w, j, &per);
        memcpy(p, c, (size_t)(h.events * per) * sizeof *c);
        p += h.events * per * (int64_t)sizeof *c;
    }
    return p - dst;
}

/* This rank's solution while lanes land in it: its tensors, attached to sol
 * (which owns them) and kept here to write the lanes' columns into. */
typedef struct {
    ot_solution *sol;
    ot_tensor *ys, **sens, *grads[3], *events[4];
} landing;

/* One lane's results from its record head and message into lane b. */
static int set_lane(const ot__mpi *m, ot_solution *sol, int64_t b,
                    const ot__mpi_lane_head *h, const char *msg)
{
    int st = ot_solution_set_lane_status(sol, b, (int)h->status, msg);
    if (st == OT_OK)
        st = ot_solution_set_lane_count(sol, b, h->count);
    if (st == OT_OK)
        st = ot_solution_set_lane_stats(sol, b, &h->stats);
    if (st == OT_OK && m->has_roots)
        st = ot_solution_set_lane_root(sol, b, (int)h->root_index, h->root_time);
    return st;
}

/* Unpacks the records in [p, end) into the landing, whose lane 0 is global
 * lane base. */
static int unpack(const ot__mpi *m, const char *p, const char *end, const landing *d,
                  int64_t base)
{
    const size_t len = (size_t)(m->rows * m->nt) * m->isz;
    const int64_t rows[3] = {1, m->np, m->n};
    int st = OT_OK;
    while (st == OT_OK && p < end) {
        ot__mpi_lane_head h;
        memcpy(&h, p, sizeof h);
        p += sizeof h;
        const int64_t b = h.lane - base;
        char msg[256];
        const size_t n = h.msg_len < 255 ? (size_t)h.msg_len : 255;
        memcpy(msg, p, n);
        msg[n] = '\0';
        st = set_lane(m, d->sol, b, &h, h.status != OT_OK ? msg : "");
        p += pad8(h.msg_len);
        for (int64_t t = 0; t <= m->nsens; t++) {
            const ot_layout *l = ot_tensor_layout(t == 0 ? d->ys : d->sens[t - 1]);
            memcpy((char *)l->data + b * l->strides[2], p, len);
            p += col_bytes(m);
        }
        for (int k = 0; m->adj && k < 3; k++) {
            memcpy((char *)ot_tensor_layout(d->grads[k])->data + b * rows[k] * 8, p,
                   (size_t)rows[k] * 8);
            p += rows[k] * 8;
        }
        if (m->adj) {
            double bytes;
            memcpy(&bytes, p, sizeof bytes);
            p += sizeof bytes;
            if (st == OT_OK)
                st = ot_solution_set_lane_adjoint_bytes(d->sol, b, (int64_t)bytes);
        }
        for (int w = OT_EVENT_TIMES; h.events > 0 && w <= OT_EVENT_AFTER; w++) {
            int64_t per;
            double *c = (double *)(uintptr_t)event_col(m, d->events[w], w, b, &per);
            memcpy(c, p, (size_t)(h.events * per) * sizeof *c);
            p += h.events * per * (int64_t)sizeof *c;
        }
        if (st == OT_OK && m->has_events)
            st = ot_solution_set_lane_event_count(d->sol, b, h.events);
    }
    return st;
}

/* The most events any lane in the received records has (1 at least, as a
 * solve's event tensors). */
static int64_t most_events(const ot__mpi *m, char *const *recv, const int64_t *rbytes)
{
    int64_t most = 1;
    for (int r = 0; r < m->size; r++)
        for (const char *p = recv[r]; p && p < recv[r] + rbytes[r];) {
            ot__mpi_lane_head h;
            memcpy(&h, p, sizeof h);
            most = h.events > most ? h.events : most;
            p += bytes_of(m, h.msg_len, h.events);
        }
    return most;
}

/* The event tensors of the landing, NaN until lanes land in them. */
static int new_events(const ot__mpi *m, landing *d, int64_t most)
{
    const int64_t nl = ot_solution_nbatch(d->sol), s2[2] = {most, nl},
                  s3[3] = {m->n, most, nl};
    int st = OT_OK;
    for (int w = OT_EVENT_TIMES; st == OT_OK && w <= OT_EVENT_AFTER; w++) {
        const int state = w >= OT_EVENT_BEFORE;
        ot_tensor *t = NULL;
        st = ot_tensor_new(&t, OT_F64, state ? 3 : 2, state ? s3 : s2);
        if (st == OT_OK) {
            double *v = ot_tensor_layout(t)->data;
            for (int64_t i = 0; i < (state ? m->n : 1) * most * nl; i++)
                v[i] = NAN;
            st = ot_solution_attach_event_tensor(d->sol, w, t);
        }
        if (st != OT_OK) {
            ot_tensor_free(t);
            return ot_set_error(st,
                                "outputs: cannot allocate the events of %lld lanes "
                                "on rank %d (%s)",
                                (long long)nl, m->rank, ot_last_error());
        }
        d->events[w] = t;
    }
    return OT_OK;
}

/* A new tensor attached to sol at once (so that sol frees it), NULL when
 * either step failed. */
static ot_tensor *attached(ot_solution *sol, int which, int64_t j, ot_dtype dtype,
                           int ndim, const int64_t *shape, int *st)
{
    ot_tensor *t = NULL;
    if (*st == OT_OK)
        *st = ot_tensor_new(&t, dtype, ndim, shape);
    if (*st == OT_OK)
        *st = which == 0   ? ot_solution_attach_ts(sol, t)
              : which == 1 ? ot_solution_attach_ys(sol, t)
              : which == 2 ? ot_solution_attach_sens(sol, j, t)
                           : ot_solution_attach_grad_tensor(sol, (int)j, t);
    if (*st != OT_OK) {
        ot_tensor_free(t);
        return NULL;
    }
    return t;
}

/* This rank's empty solution for nlocal lanes: per-lane arrays, ys, sens and
 * ts shaped as ot_solve_dense shapes them, and the adjoint's gradients. */
static int new_solution(const ot__mpi *m, int64_t nlocal, landing *d)
{
    memset(d, 0, sizeof *d);
    int st = ot_solution_new(&d->sol, nlocal, m->nsens, m->has_roots);
    const ot_dtype dt = (ot_dtype)m->desc.out_dtype;
    const int64_t shape[3] = {m->rows, m->nt, nlocal};
    if (st == OT_OK && (d->sens = calloc((size_t)m->nsens + 1, sizeof *d->sens)) == NULL)
        st = OT_ERR_NOMEM;
    ot_tensor *ts = attached(d->sol, 0, 0, OT_F64, 1, &m->nt, &st);
    d->ys = attached(d->sol, 1, 0, dt, 3, shape, &st);
    for (int64_t j = 0; j < m->nsens; j++)
        d->sens[j] = attached(d->sol, 2, j, dt, 3, shape, &st);
    const int64_t g0[1] = {nlocal}, g1[2] = {m->np, nlocal}, g2[2] = {m->n, nlocal};
    for (int k = 0; m->adj && k < 3; k++) /* every lane's arrive (failed ones NaN) */
        d->grads[k] = attached(d->sol, 3, k, OT_F64, k == 0 ? 1 : 2,
                               k == 0   ? g0
                               : k == 1 ? g1
                                        : g2,
                               &st);
    if (st != OT_OK) {
        ot_solution_free(d->sol);
        free(d->sens);
        memset(d, 0, sizeof *d);
        return ot_set_error(st, "outputs: cannot allocate %lld lanes on rank %d (%s)",
                            (long long)nlocal, m->rank, ot_last_error());
    }
    memcpy(ot_tensor_layout(ts)->data, m->t, (size_t)m->nt * sizeof *m->t);
    return OT_OK;
}

/* Per-rank buffers of the exchange: two arrays of size entries each. */
typedef struct {
    int64_t *bytes, *rbytes;
    char **send, **recv;
} xbufs;

static void xbufs_free(xbufs *x, int size)
{
    for (int r = 0; x->send && r < size; r++)
        free(x->send[r]);
    for (int r = 0; x->recv && r < size; r++)
        free(x->recv[r]);
    free(x->bytes);
    free(x->send);
}

static int alloc_side(char **buf, const int64_t *bytes, int size, int rank)
{
    for (int r = 0; r < size; r++)
        if (bytes[r] > 0 && (buf[r] = malloc((size_t)bytes[r])) == NULL)
            return ot_set_error(
                OT_ERR_NOMEM,
                "outputs: cannot allocate %lld bytes for rank %d on rank %d",
                (long long)bytes[r], r, rank);
    return OT_OK;
}

int ot__mpi_collect(ot__mpi *m, ot_solution **out)
{
    const double t0 = MPI_Wtime();
    /* Events travel when the block solves recorded them (a rank that solved
     * no block learns it from the others). */
    int mine = 0;
    for (int64_t i = 0; i < m->nsolved; i++)
        mine |= ot_solution_event_tensor(m->blk_sol[i], OT_EVENT_TIMES) != NULL;
    int rc = MPI_Allreduce(&mine, &m->has_events, 1, MPI_INT, MPI_MAX, m->comm);
    if (rc != MPI_SUCCESS)
        return ot__mpi_err(m, rc, "MPI_Allreduce (events)");
    xbufs x = {0};
    x.bytes = calloc(2 * (size_t)m->size, sizeof *x.bytes);
    x.send = calloc(2 * (size_t)m->size, sizeof *x.send);
    int st =
        x.bytes && x.send ? OT_OK : ot_set_error(OT_ERR_NOMEM, "outputs: out of memory");
    if (st == OT_OK) {
        x.rbytes = x.bytes + m->size;
        x.recv = x.send + m->size;
        for (int64_t i = 0; i < m->nsolved; i++)
            for (int64_t j = 0; j < ot_solution_nbatch(m->blk_sol[i]); j++) {
                const int64_t g = m->blk[i] * m->block + j;
                x.bytes[owner(m, g)] += record_bytes(m, m->blk_sol[i], j);
            }
        st = alloc_side(x.send, x.bytes, m->size, m->rank);
    }
    st = ot__mpi_agree(m, st);
    if (st == OT_OK)
        st = ot__mpi_err(
            m, MPI_Alltoall(x.bytes, 1, MPI_INT64_T, x.rbytes, 1, MPI_INT64_T, m->comm),
            "MPI_Alltoall (output sizes)");
    const int gather = m->opt.output == OT_MPI_OUTPUT_GATHER;
    const int64_t base = gather ? 0 : m->off[m->rank];
    const int64_t nlocal = gather ? (m->rank == m->opt.root ? m->nbatch : 0)
                                  : m->off[m->rank + 1] - m->off[m->rank];
    landing d = {0};
    if (st == OT_OK) {
        st = alloc_side(x.recv, x.rbytes, m->size, m->rank);
        if (st == OT_OK && (!gather || m->rank == m->opt.root))
            st = new_solution(m, nlocal, &d);
        st = ot__mpi_agree(m, st);
    }
    if (st == OT_OK) {
        /* Pack, freeing each block as soon as its lanes are out. */
        int64_t *fill = calloc((size_t)m->size, sizeof *fill);
        st = ot__mpi_agree(m, fill ? OT_OK
                                   : ot_set_error(OT_ERR_NOMEM, "outputs: no memory"));
        for (int64_t i = 0; st == OT_OK && i < m->nsolved; i++) {
            for (int64_t j = 0; j < ot_solution_nbatch(m->blk_sol[i]); j++) {
                const int64_t g = m->blk[i] * m->block + j;
                const int d = owner(m, g);
                fill[d] += pack_lane(m, m->blk_sol[i], j, g, x.send[d] + fill[d]);
            }
            ot_solution_free(m->blk_sol[i]);
            m->blk_sol[i] = NULL;
        }
        free(fill);
    }
    if (st == OT_OK)
        st = ot__mpi_move(m, x.send, x.bytes, x.recv, x.rbytes);
    if (st == OT_OK && d.sol && m->has_events)
        st = new_events(m, &d, most_events(m, x.recv, x.rbytes));
    for (int r = 0; st == OT_OK && d.sol && r < m->size; r++)
        st = unpack(m, x.recv[r], x.recv[r] + x.rbytes[r], &d, base);
    xbufs_free(&x, m->size);
    free(d.sens);
    st = ot__mpi_agree(m, st);
    m->info.t_gather = MPI_Wtime() - t0;
    m->info.lane_offset = base;
    m->info.nlocal = nlocal;
    if (st != OT_OK) {
        ot_solution_free(d.sol);
        return st;
    }
    *out = d.sol;
    return OT_OK;
}

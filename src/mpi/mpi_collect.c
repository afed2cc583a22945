/* Collecting an MPI solve: each solved lane travels as one record (fixed
 * head, message, output columns) from the rank that solved it to the rank
 * that owns it, and lands in an ordinary ot_solution, bytes unchanged. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

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
    return s->status[j] != OT_OK ? ot_solution_lane_message(s, j) : "";
}

/* ot_mpi_solve_adjoint: loss, dL/dp, dL/dy0 and the checkpoint bytes of a
 * lane, as doubles after its columns. */
static int64_t grad_doubles(const ot__mpi *m) { return m->adj ? 2 + m->np + m->n : 0; }

static int64_t record_bytes(const ot__mpi *m, const ot_solution *s, int64_t j)
{
    return (int64_t)sizeof(ot__mpi_lane_head) + pad8((int64_t)strlen(lane_msg(s, j))) +
           (1 + m->nsens) * col_bytes(m) + 8 * grad_doubles(m);
}

/* The lane's gradient doubles (grad_doubles) at g, from s's lane j (out)
 * or into it (in); byte copies, the record being a char buffer. */
static void grads_move(const ot__mpi *m, ot_solution *s, int64_t j, char *g, int out)
{
    const int64_t rows[3] = {1, m->np, m->n};
    for (int k = 0; k < 3; k++) {
        char *t = (char *)ot_tensor_layout(s->grads[k])->data + j * rows[k] * 8;
        memcpy(out ? g : t, out ? t : g, (size_t)rows[k] * 8);
        g += rows[k] * 8;
    }
    double bytes = (double)s->adj_bytes[j];
    if (out)
        memcpy(g, &bytes, sizeof bytes);
    else
        memcpy(&bytes, g, sizeof bytes), s->adj_bytes[j] = (int64_t)bytes;
}

/* Lane j of one block's solution (global lane g) as a record at dst;
 * returns the bytes written. */
static int64_t pack_lane(const ot__mpi *m, const ot_solution *s, int64_t j, int64_t g,
                         char *dst)
{
    ot__mpi_lane_head h;
    memset(&h, 0, sizeof h);
    const char *msg = lane_msg(s, j);
    h.lane = g;
    h.status = s->status[j];
    h.count = s->count[j];
    h.root_index = s->root_index ? s->root_index[j] : -1;
    h.root_time = s->root_time ? s->root_time[j] : NAN;
    h.stats = s->stats[j];
    h.msg_len = (int64_t)strlen(msg);
    char *p = dst;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    memset(p, 0, (size_t)pad8(h.msg_len));
    memcpy(p, msg, (size_t)h.msg_len);
    p += pad8(h.msg_len);
    const size_t len = (size_t)(m->rows * m->nt) * m->isz;
    for (int64_t t = 0; t <= m->nsens; t++) {
        const ot_layout *l = ot_tensor_layout(t == 0 ? s->ys : s->sens[t - 1]);
        memcpy(p, (const char *)l->data + j * l->strides[2], len);
        p += col_bytes(m);
    }
    if (m->adj) {
        grads_move(m, (ot_solution *)(uintptr_t)s, j, p, 1);
        p += 8 * grad_doubles(m);
    }
    return p - dst;
}

/* Unpacks the records in [p, end) into sol, whose lane 0 is global lane base. */
static void unpack(const ot__mpi *m, const char *p, const char *end, ot_solution *sol,
                   int64_t base)
{
    const size_t len = (size_t)(m->rows * m->nt) * m->isz;
    while (p < end) {
        ot__mpi_lane_head h;
        memcpy(&h, p, sizeof h);
        p += sizeof h;
        const int64_t b = h.lane - base;
        sol->status[b] = (int)h.status;
        sol->count[b] = h.count;
        sol->stats[b] = h.stats;
        if (sol->root_index) {
            sol->root_index[b] = (int)h.root_index;
            sol->root_time[b] = h.root_time;
        }
        if (h.status != OT_OK) {
            char msg[256];
            const size_t n = h.msg_len < 255 ? (size_t)h.msg_len : 255;
            memcpy(msg, p, n);
            msg[n] = '\0';
            ot__solution_fail_lane(sol, b, (int)h.status, msg);
        }
        p += pad8(h.msg_len);
        for (int64_t t = 0; t <= m->nsens; t++) {
            const ot_layout *l = ot_tensor_layout(t == 0 ? sol->ys : sol->sens[t - 1]);
            memcpy((char *)l->data + b * l->strides[2], p, len);
            p += col_bytes(m);
        }
        if (m->adj) {
            grads_move(m, sol, b, (char *)(uintptr_t)p, 0);
            p += 8 * grad_doubles(m);
        }
    }
}

/* This rank's empty solution for nlocal lanes: per-lane arrays, ys, sens and
 * ts, shaped as ot_solve_dense shapes them. */
static int new_solution(const ot__mpi *m, int64_t nlocal, ot_solution **out)
{
    ot_solution *s = NULL;
    int st = ot__solution_new(&s, nlocal, m->nsens, m->has_roots);
    const int64_t shape[3] = {m->rows, m->nt, nlocal};
    if (st == OT_OK)
        st = ot_tensor_new(&s->ys, (ot_dtype)m->desc.out_dtype, 3, shape);
    for (int64_t j = 0; st == OT_OK && j < m->nsens; j++)
        st = ot_tensor_new(&s->sens[j], (ot_dtype)m->desc.out_dtype, 3, shape);
    if (st == OT_OK)
        st = ot_tensor_new(&s->ts, OT_F64, 1, &m->nt);
    const int64_t g0[1] = {nlocal}, g1[2] = {m->np, nlocal}, g2[2] = {m->n, nlocal};
    if (st == OT_OK && m->adj) /* every lane's arrive (failed ones NaN) */
        st = ot_tensor_new(&s->grads[OT_GRAD_LOSS], OT_F64, 1, g0);
    if (st == OT_OK && m->adj)
        st = ot_tensor_new(&s->grads[OT_GRAD_PARAMS], OT_F64, 2, g1);
    if (st == OT_OK && m->adj)
        st = ot_tensor_new(&s->grads[OT_GRAD_Y0], OT_F64, 2, g2);
    if (st == OT_OK && m->adj &&
        (s->adj_bytes = calloc((size_t)nlocal + 1, sizeof *s->adj_bytes)) == NULL)
        st = OT_ERR_NOMEM;
    if (st != OT_OK) {
        ot_solution_free(s);
        return ot_set_error(st, "outputs: cannot allocate %lld lanes on rank %d (%s)",
                            (long long)nlocal, m->rank, ot_last_error());
    }
    memcpy(ot_tensor_layout(s->ts)->data, m->t, (size_t)m->nt * sizeof *m->t);
    *out = s;
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
    xbufs x = {0};
    x.bytes = calloc(2 * (size_t)m->size, sizeof *x.bytes);
    x.send = calloc(2 * (size_t)m->size, sizeof *x.send);
    int st =
        x.bytes && x.send ? OT_OK : ot_set_error(OT_ERR_NOMEM, "outputs: out of memory");
    if (st == OT_OK) {
        x.rbytes = x.bytes + m->size;
        x.recv = x.send + m->size;
        for (int64_t i = 0; i < m->nsolved; i++)
            for (int64_t j = 0; j < m->blk_sol[i]->nbatch; j++) {
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
    ot_solution *sol = NULL;
    if (st == OT_OK) {
        st = alloc_side(x.recv, x.rbytes, m->size, m->rank);
        if (st == OT_OK && (!gather || m->rank == m->opt.root))
            st = new_solution(m, nlocal, &sol);
        st = ot__mpi_agree(m, st);
    }
    if (st == OT_OK) {
        /* Pack, freeing each block as soon as its lanes are out. */
        int64_t *fill = calloc((size_t)m->size, sizeof *fill);
        st = ot__mpi_agree(m, fill ? OT_OK
                                   : ot_set_error(OT_ERR_NOMEM, "outputs: no memory"));
        for (int64_t i = 0; st == OT_OK && i < m->nsolved; i++) {
            for (int64_t j = 0; j < m->blk_sol[i]->nbatch; j++) {
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
    for (int r = 0; st == OT_OK && sol && r < m->size; r++)
        unpack(m, x.recv[r], x.recv[r] + x.rbytes[r], sol, base);
    xbufs_free(&x, m->size);
    st = ot__mpi_agree(m, st);
    m->info.t_gather = MPI_Wtime() - t0;
    m->info.lane_offset = base;
    m->info.nlocal = nlocal;
    if (st != OT_OK) {
        ot_solution_free(sol);
        return st;
    }
    *out = sol;
    return OT_OK;
}

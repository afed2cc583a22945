/* Dealing and solving blocks of lanes.
 *
 * The root owns the block counter and the inputs. Each other rank (a worker)
 * asks for `depth` blocks up front and asks for one more each time a block
 * arrives, before solving it, so the next block is already on its way while
 * it works; the root answers every request with a block (its index, then its
 * inputs) or with -1 when none is left. The root solves blocks too and
 * answers requests between its blocks and, where MPI's thread level allows,
 * after each lane it finishes (through the progress hook its block solves
 * call in place of the problem's, ot_solve_options), so a
 * worker's request waits at most one lane. A worker that drew costly lanes
 * simply asks less often: ranks finish within about a block of each other.
 * OT_MPI_STATIC replaces the counter by fixed contiguous shares (for
 * comparison); the messages are the same. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

enum { TAG_REQ = 11, TAG_HDR = 12, TAG_DATA = 13 };

typedef struct {
    ot__mpi *m;
    int64_t next;      /* OT_MPI_DYNAMIC: the next block to deal */
    int64_t *cur;      /* OT_MPI_STATIC: [size] next block of each rank's share */
    int64_t awaiting;  /* requests the root still expects */
    MPI_Request *sent; /* [nblocks] inputs in flight to workers */
    int nsent;
    int st; /* first failure while serving from the progress hook */
} dealer;

static int64_t blen_of(const ot__mpi *m, int64_t k)
{
    const int64_t lo = k * m->block;
    return m->nbatch - lo < m->block ? m->nbatch - lo : m->block;
}

/* The next block for rank r, or -1 when its supply is exhausted. */
static int64_t next_block(dealer *d, int r)
{
    const ot__mpi *m = d->m;
    if (m->opt.balance == OT_MPI_DYNAMIC)
        return d->next < m->nblocks ? d->next++ : -1;
    const int64_t end = m->nblocks * (r + 1) / m->size;
    return d->cur[r] < end ? d->cur[r]++ : -1;
}

/* Answers one request of worker w. */
static int grant(dealer *d, int w)
{
    ot__mpi *m = d->m;
    int64_t k = next_block(d, w);
    int rc = MPI_Send(&k, 1, MPI_INT64_T, w, TAG_HDR, m->comm);
    if (rc == MPI_SUCCESS && k >= 0 && m->in_w > 0)
        rc = MPI_Isend(m->store + k * m->block * m->in_w, (int)(blen_of(m, k) * m->in_w),
                       MPI_DOUBLE, w, TAG_DATA, m->comm, &d->sent[d->nsent++]);
    if (k >= 0)
        d->awaiting++; /* the worker asks again when it gets a block */
    return ot__mpi_err(m, rc, "MPI_Send (dealing a block)");
}

/* Answers the requests that have arrived (blocking: waits for one). */
static int serve(dealer *d, int blocking)
{
    ot__mpi *m = d->m;
    for (;;) {
        int flag = 1, rc = MPI_SUCCESS;
        MPI_Status s;
        if (!blocking)
            rc = MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, m->comm, &flag, &s);
        if (rc != MPI_SUCCESS)
            return ot__mpi_err(m, rc, "MPI_Iprobe (dealing)");
        if (!flag)
            return OT_OK;
        int64_t done;
        rc = MPI_Recv(&done, 1, MPI_INT64_T, blocking ? MPI_ANY_SOURCE : s.MPI_SOURCE,
                      TAG_REQ, m->comm, &s);
        if (rc != MPI_SUCCESS)
            return ot__mpi_err(m, rc, "MPI_Recv (dealing)");
        d->awaiting--;
        int st = grant(d, s.MPI_SOURCE);
        if (st != OT_OK || blocking)
            return st;
    }
}

/* The root's progress hook: lanes.c calls it after each lane, one call at a
 * time, so requests are answered while the root itself is solving. */
static int poll_hook(int64_t done, int64_t total, void *user)
{
    (void)done, (void)total;
    dealer *d = user;
    if (d->st == OT_OK)
        d->st = serve(d, 0);
    return 0; /* the MPI layer never cancels */
}

/* The block's starts and stops: views into its packed inputs (per lane),
 * over the copies for every lane, and (a [k] view being compact) over the
 * starts gathered into t0 [blen]. */
static int with_views(const ot__mpi *m, double *in, int64_t blen, double *t0,
                      ot_solve_inputs *v)
{
    const ot_device cpu = {OT_CPU, 0};
    const int64_t w = m->in_w * (int64_t)sizeof(double), d = sizeof(double);
    int s = OT_OK;
    if (m->has_t0) {
        for (int64_t b = 0; b < blen; b++)
            t0[b] = in[b * m->in_w + m->t0_off];
        s = ot_view_make(&v->t0, t0, OT_F64, cpu, 1, &blen, NULL);
    }
    if (s == OT_OK && m->stops_kind == 1)
        s = ot_view_make(&v->stops, m->stops, OT_F64, cpu, 1, &m->ns, NULL);
    if (s == OT_OK && m->stops_kind == 2) {
        const int64_t sh[2] = {m->ns, blen}, st[2] = {d, w};
        s = ot_view_make(&v->stops, in + m->stops_off, OT_F64, cpu, 2, sh, st);
    }
    if (s == OT_OK && m->dp_kind == 1) {
        const int64_t sh[2] = {m->np, m->ns};
        s = ot_view_make(&v->stops_dp, m->stops_dp, OT_F64, cpu, 2, sh, NULL);
    }
    if (s == OT_OK && m->dp_kind == 2) {
        const int64_t sh[3] = {m->np, m->ns, blen}, st[3] = {d, m->np * d, w};
        s = ot_view_make(&v->stops_dp, in + m->dp_off, OT_F64, cpu, 3, sh, st);
    }
    return s;
}

/* Solves block k from its packed inputs; keeps the solution. */
static void solve_block(ot__mpi *m, int64_t k, double *in)
{
    const int64_t blen = blen_of(m, k), lo = k * m->block;
    m->info.blocks_solved++;
    m->info.lanes_solved += blen;
    if (m->hard != OT_OK)
        return; /* keep dealing, so that no rank waits for this one */
    const ot_device cpu = {OT_CPU, 0};
    const int64_t ys[2] = {m->n, blen}, ps[2] = {m->np, blen},
                  st[2] = {(int64_t)sizeof(double), m->in_w * (int64_t)sizeof(double)};
    ot_view y0 = ot_view_absent(), p = ot_view_absent(), t;
    int s = ot_view_make(&t, m->t, OT_F64, cpu, 1, &m->nt, NULL);
    if (s == OT_OK && m->has_y0)
        s = ot_view_make(&y0, in, OT_F64, cpu, 2, ys, st);
    if (s == OT_OK && m->np > 0)
        s = ot_view_make(&p, in + (m->has_y0 ? m->n : 0), OT_F64, cpu, 2, ps, st);
    ot_loss loss = m->loss;
    if (s == OT_OK && m->lane_data) { /* the block's data, in its inputs */
        const int64_t ds[3] = {m->rows, m->nt, blen},
                      dst[3] = {(int64_t)sizeof(double),
                                m->rows * (int64_t)sizeof(double),
                                m->in_w * (int64_t)sizeof(double)};
        s = ot_view_make(&loss.data, in + m->data_off, OT_F64, cpu, 3, ds, dst);
        if (s == OT_OK && m->has_weights)
            s = ot_view_make(&loss.weights, in + m->data_off + m->rows * m->nt, OT_F64,
                             cpu, 3, ds, dst);
    }
    ot_solve_inputs vin = ot_solve_inputs_make(y0, p, t);
    double *t0 = NULL;
    if (s == OT_OK && m->has_t0 && (t0 = malloc((size_t)blen * sizeof *t0)) == NULL)
        s = ot_set_error(OT_ERR_NOMEM, "t0: cannot allocate %lld starts",
                         (long long)blen);
    if (s == OT_OK)
        s = with_views(m, in, blen, t0, &vin);
    ot_solution *sol = NULL;
    ot_solve_options run = m->run; /* callbacks read the lanes' global indices */
    run.lane_offset = lo;
    const double tw = MPI_Wtime();
    if (s == OT_OK)
        s = m->adj    ? ot_solve_adjoint_with_opts(m->ode, &vin, &loss, &run, &sol)
            : m->sens ? ot_solve_fwd_sens_with_opts(m->ode, &vin, &run, &sol)
                      : ot_solve_dense_with_opts(m->ode, &vin, &run, &sol);
    m->info.t_solve += MPI_Wtime() - tw;
    free(t0);
    if (s == OT_ERR_LANES_FAILED)
        s = OT_OK; /* lane failures travel with the lanes */
    if (s == OT_OK && m->nsolved == m->cap_solved) {
        const int64_t cap = m->cap_solved ? 2 * m->cap_solved : 16;
        int64_t *blk = realloc(m->blk, (size_t)cap * sizeof *blk);
        if (blk)
            m->blk = blk;
        ot_solution **bs = realloc(m->blk_sol, (size_t)cap * sizeof *bs);
        if (bs)
            m->blk_sol = bs;
        if (blk && bs)
            m->cap_solved = cap;
        else
            s = ot_set_error(OT_ERR_NOMEM, "cannot grow the block list");
    }
    if (s != OT_OK) {
        ot_solution_free(sol);
        m->hard = s;
        snprintf(m->hard_msg, sizeof m->hard_msg, "lanes %lld..%lld on rank %d: %s",
                 (long long)lo, (long long)(lo + blen - 1), m->rank, ot_last_error());
        return;
    }
    m->blk[m->nsolved] = k;
    m->blk_sol[m->nsolved++] = sol;
}

static int run_root(ot__mpi *m, dealer *d, int depth)
{
    int st = OT_OK;
    d->awaiting = (int64_t)depth * (m->size - 1); /* the workers' first requests */
    while (st == OT_OK) {
        st = serve(d, 0);
        const int64_t k = st == OT_OK ? next_block(d, m->rank) : -1;
        if (k < 0)
            break;
        solve_block(m, k, m->store + k * m->block * m->in_w);
        if (st == OT_OK)
            st = d->st;
    }
    while (st == OT_OK && d->awaiting > 0)
        st = serve(d, 1);
    const int rc = MPI_Waitall(d->nsent, d->sent, MPI_STATUSES_IGNORE);
    return st != OT_OK ? st : ot__mpi_err(m, rc, "MPI_Waitall (dealing)");
}

static int run_worker(ot__mpi *m, int depth, double *in)
{
    const int root = m->opt.root;
    int64_t pending = depth;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < depth && rc == MPI_SUCCESS; i++) {
        const int64_t none = 0;
        rc = MPI_Send(&none, 1, MPI_INT64_T, root, TAG_REQ, m->comm);
    }
    while (rc == MPI_SUCCESS && pending > 0) {
        int64_t k;
        rc = MPI_Recv(&k, 1, MPI_INT64_T, root, TAG_HDR, m->comm, MPI_STATUS_IGNORE);
        pending--;
        if (rc != MPI_SUCCESS || k < 0)
            continue;
        const int64_t count = blen_of(m, k) * m->in_w;
        if (m->in_w > 0)
            rc = MPI_Recv(in, (int)count, MPI_DOUBLE, root, TAG_DATA, m->comm,
                          MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Send(&k, 1, MPI_INT64_T, root, TAG_REQ, m->comm);
        pending++;
        if (rc == MPI_SUCCESS)
            solve_block(m, k, in);
    }
    return ot__mpi_err(m, rc, "MPI_Send/MPI_Recv (asking for blocks)");
}

int ot__mpi_deal(ot__mpi *m)
{
    dealer d;
    memset(&d, 0, sizeof d);
    d.m = m;
    /* The problem's hook would see block-local counts: never called. */
    memset(&m->run, 0, sizeof m->run);
    m->run.size = sizeof m->run;
    m->run.replace_progress = 1;
    const int root = m->rank == m->opt.root;
    int level = MPI_THREAD_SINGLE, is_main = 0, st = OT_OK;
    MPI_Query_thread(&level);
    MPI_Is_thread_main(&is_main);
    /* Lanes mode calls the hook on this thread with one worker thread, on
     * others with more: MPI must allow that. Lockstep calls no hook. */
    int poll = m->size > 1 && m->desc.mode == OT_LANES &&
               (m->desc.threads == 1 ? is_main : level >= MPI_THREAD_SERIALIZED);
    double *in = NULL;
    if (!root && (in = malloc((size_t)(m->block * m->in_w + 1) * sizeof *in)) == NULL)
        st = ot_set_error(OT_ERR_NOMEM,
                          "deal: cannot allocate the input buffer on rank %d", m->rank);
    if (root) {
        d.cur = calloc((size_t)m->size, sizeof *d.cur);
        d.sent = calloc((size_t)m->nblocks + 1, sizeof *d.sent);
        if (d.cur == NULL || d.sent == NULL)
            st = ot_set_error(OT_ERR_NOMEM, "deal: cannot allocate on the root (rank %d)",
                              m->rank);
        for (int r = 0; d.cur && r < m->size; r++)
            d.cur[r] = m->nblocks * r / m->size;
        if (poll) {
            m->run.progress = poll_hook;
            m->run.progress_user = &d;
        }
    }
    st = ot__mpi_agree(m, st);
    /* With the root answering after every lane one block in reserve is
     * enough; otherwise a second one covers the root's own block. */
    int depth = poll ? 1 : 2;
    if (st == OT_OK)
        st = ot__mpi_err(m, MPI_Bcast(&depth, 1, MPI_INT, m->opt.root, m->comm),
                         "MPI_Bcast (dealing)");
    const double t0 = MPI_Wtime();
    if (st == OT_OK)
        st = root ? run_root(m, &d, depth) : run_worker(m, depth, in);
    m->info.t_deal = MPI_Wtime() - t0;
    free(in);
    free(d.cur);
    free(d.sent);
    m->run.progress = NULL;
    m->run.progress_user = NULL;
    if (st == OT_OK && m->hard != OT_OK)
        st = ot_set_error(m->hard, "%s", m->hard_msg);
    return st;
}

/* Inputs of an MPI solve: every lane's y0 and params, converted to f64 and
 * packed lane by lane (y0 then params, in_w doubles a lane) into the root's
 * store, from which the root deals whole blocks in one message each. f32
 * inputs widen exactly, so the lanes see the values a one-process solve sees. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

/* Copies rows values of lane j (column 0 for a one-lane input) to dst,
 * refusing NaN and Inf; first is the global lane of j for the message. */
static int pack_col(ot_view v, int64_t rows, int64_t j, double *dst, const char *name,
                    int64_t lane, int rank)
{
    const int64_t c = v.layout.shape[1] == 1 ? 0 : j;
    const double *d = ot_view_col_f64(v, c, 0);
    const float *f = ot_view_col_f32(v, c, 0);
    for (int64_t i = 0; i < rows; i++) {
        dst[i] = d ? d[i] : (double)f[i];
        if (!isfinite(dst[i]))
            return ot_set_error(OT_ERR_VALUE,
                                "%s: [%lld, %lld] is %g (lane %lld of rank %d's slice); "
                                "values must be finite",
                                name, (long long)i, (long long)c, dst[i], (long long)lane,
                                rank);
    }
    return OT_OK;
}

/* Lane j of a per-lane loss table [rows, nt, k] into dst [rows, nt] (NaN
 * kept: a missing datum). */
static void pack_table(ot_view v, int64_t rows, int64_t nt, int64_t j, double *dst)
{
    for (int64_t i = 0; i < nt; i++)
        for (int64_t r = 0; r < rows; r++)
            ot_view_get(v, r, i, j, &dst[i * rows + r]);
}

/* Lane j's start, stops (NaN past its own) and their derivatives (0 past
 * its stops) into its record. */
static void pack_with(const ot__mpi *m, const ot_solve_inputs *in, int64_t j,
                      double *lane)
{
    if (m->has_t0)
        ot_view_get(in->t0, j, 0, 0, &lane[m->t0_off]);
    const int64_t ns = m->stops_kind ? in->stops.layout.shape[0] : 0;
    for (int64_t k = 0; k < m->ns; k++) {
        if (m->stops_kind == 2) {
            lane[m->stops_off + k] = NAN;
            if (k < ns)
                ot_view_get(in->stops, k, j, 0, &lane[m->stops_off + k]);
        }
        for (int64_t i = 0; m->dp_kind == 2 && i < m->np; i++) {
            double *d = &lane[m->dp_off + k * m->np + i];
            *d = 0;
            if (k < ns)
                ot_view_get(in->stops_dp, i, k, j, d);
        }
    }
}

/* Packs nlane lanes of y0/params (and per-lane loss data, starts and
 * stops) into dst ([in_w, nlane]). */
static int pack(const ot__mpi *m, const ot_solve_inputs *in, int64_t nlane, double *dst)
{
    const ot_view y0 = in->y0, params = in->params;
    const int64_t ny = m->has_y0 ? m->n : 0;
    for (int64_t j = 0; j < nlane; j++) {
        double *lane = dst + j * m->in_w;
        int st = m->has_y0 ? pack_col(y0, m->n, j, lane, "y0", j, m->rank) : OT_OK;
        if (st == OT_OK && m->np > 0)
            st = pack_col(params, m->np, j, lane + ny, "params", j, m->rank);
        if (st != OT_OK)
            return st;
        if (m->lane_data) {
            const int64_t cells = m->rows * m->nt;
            pack_table(m->loss.data, m->rows, m->nt, j, lane + m->data_off);
            if (m->has_weights)
                pack_table(m->loss.weights, m->rows, m->nt, j,
                           lane + m->data_off + cells);
        }
        pack_with(m, in, j, lane);
    }
    return OT_OK;
}

static double *alloc_doubles(int64_t count, int64_t *bytes, const char *what, int rank,
                             int *st)
{
    *bytes = count * (int64_t)sizeof(double);
    double *p = malloc((size_t)(*bytes > 0 ? *bytes : 1));
    if (p == NULL)
        *st = ot_set_error(OT_ERR_NOMEM, "%s: cannot allocate %lld bytes on rank %d",
                           what, (long long)*bytes, rank);
    return p;
}

int ot__mpi_inputs(ot__mpi *m, const ot_solve_inputs *in)
{
    const int root = m->opt.root;
    const int64_t mine = m->passed[m->rank];
    int64_t bytes = 0;
    int st = OT_OK;
    if (m->rank == root)
        m->store = alloc_doubles(m->nbatch * m->in_w, &bytes, "inputs", m->rank, &st);
    /* The root packs its own lanes straight into the store at their offset;
     * others pack into a buffer that travels. */
    double *buf = NULL;
    if (st == OT_OK && m->rank != root && mine > 0)
        buf = alloc_doubles(mine * m->in_w, &bytes, "inputs", m->rank, &st);
    if (st == OT_OK && mine > 0)
        st = pack(m, in, mine,
                  m->rank != root ? buf
                  : m->opt.input == OT_MPI_INPUT_ROOT
                      ? m->store
                      : m->store + m->off[m->rank] * m->in_w);
    st = ot__mpi_agree(m, st);
    if (st != OT_OK || m->opt.input == OT_MPI_INPUT_ROOT) {
        free(buf);
        return st;
    }
    int64_t *sz = calloc(2 * (size_t)m->size, sizeof *sz);
    char **ptr = calloc(2 * (size_t)m->size, sizeof *ptr);
    st = sz && ptr ? OT_OK : ot_set_error(OT_ERR_NOMEM, "inputs: out of memory");
    st = ot__mpi_agree(m, st);
    if (st == OT_OK) {
        int64_t *rsz = sz + m->size;
        char **rptr = ptr + m->size;
        if (m->rank != root) {
            sz[root] = mine * m->in_w * (int64_t)sizeof(double);
            ptr[root] = (char *)buf;
        } else {
            for (int r = 0; r < m->size; r++)
                if (r != root) {
                    rsz[r] = m->passed[r] * m->in_w * (int64_t)sizeof(double);
                    rptr[r] = (char *)(m->store + m->off[r] * m->in_w);
                }
        }
        st = ot__mpi_move(m, ptr, sz, rptr, rsz);
    }
    free(sz);
    free(ptr);
    free(buf);
    return st;
}

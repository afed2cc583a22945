/* Communication helpers of the MPI solve: MPI return codes as statuses, the
 * agreement on a status, and chunked all-to-all byte moves. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

int ot__mpi_err(const ot__mpi *m, int rc, const char *call)
{
    if (rc == MPI_SUCCESS)
        return OT_OK;
    char why[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, why, &len) != MPI_SUCCESS)
        snprintf(why, sizeof why, "error code %d", rc);
    return ot_set_error(OT_ERR_MPI, "%s failed on rank %d: %s", call, m->rank, why);
}

int ot__mpi_agree(ot__mpi *m, int st)
{
    /* The lowest failing rank speaks for all: a deterministic choice, so every
     * rank reports the same message. */
    int mine = st == OT_OK ? m->size : m->rank, first = m->size;
    int rc = MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, m->comm);
    if (rc != MPI_SUCCESS)
        return ot__mpi_err(m, rc, "MPI_Allreduce (agreeing on a status)");
    if (first == m->size)
        return OT_OK;
    struct {
        int64_t status;
        char msg[512];
    } e;
    memset(&e, 0, sizeof e);
    if (m->rank == first) {
        e.status = st;
        snprintf(e.msg, sizeof e.msg, "%s", ot_last_error());
    }
    rc = MPI_Bcast(&e, (int)sizeof e, MPI_BYTE, first, m->comm);
    if (rc != MPI_SUCCESS)
        return ot__mpi_err(m, rc, "MPI_Bcast (agreeing on a status)");
    return ot_set_error((int)e.status, "%s", e.msg);
}

/* 1 GiB: far below INT_MAX bytes, and big enough that chunking costs nothing. */
#define OT_MPI_CHUNK ((int64_t)1 << 30)

static int64_t chunks_of(int64_t bytes)
{
    return (bytes + OT_MPI_CHUNK - 1) / OT_MPI_CHUNK;
}

int ot__mpi_move(ot__mpi *m, char *const *send, const int64_t *bytes, char *const *recv,
                 const int64_t *rbytes)
{
    int64_t nreq = 0;
    for (int r = 0; r < m->size; r++)
        nreq += chunks_of(bytes[r]) + chunks_of(rbytes[r]);
    if (nreq > INT_MAX)
        return ot_set_error(OT_ERR_OVERFLOW, "outputs: %lld messages on rank %d",
                            (long long)nreq, m->rank);
    MPI_Request *req = calloc((size_t)nreq + 1, sizeof *req);
    if (req == NULL)
        return ot_set_error(OT_ERR_NOMEM,
                            "outputs: cannot allocate %lld requests on rank %d",
                            (long long)nreq, m->rank);
    /* Messages between one pair keep their order (MPI's non-overtaking
     * rule), so all chunks can share one tag. */
    int k = 0, rc = MPI_SUCCESS;
    for (int r = 0; r < m->size && rc == MPI_SUCCESS; r++)
        for (int64_t o = 0; o < rbytes[r] && rc == MPI_SUCCESS; o += OT_MPI_CHUNK) {
            const int64_t len =
                rbytes[r] - o < OT_MPI_CHUNK ? rbytes[r] - o : OT_MPI_CHUNK;
            rc = MPI_Irecv(recv[r] + o, (int)len, MPI_BYTE, r, 7, m->comm, &req[k++]);
        }
    for (int r = 0; r < m->size && rc == MPI_SUCCESS; r++)
        for (int64_t o = 0; o < bytes[r] && rc == MPI_SUCCESS; o += OT_MPI_CHUNK) {
            const int64_t len = bytes[r] - o < OT_MPI_CHUNK ? bytes[r] - o : OT_MPI_CHUNK;
            rc = MPI_Isend(send[r] + o, (int)len, MPI_BYTE, r, 7, m->comm, &req[k++]);
        }
    int st = ot__mpi_err(m, rc, "MPI_Isend/MPI_Irecv (moving lanes)");
    /* Wait for whatever was posted, also after a failure: the buffers are
     * freed when this returns. */
    rc = MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
    if (st == OT_OK)
        st = ot__mpi_err(m, rc, "MPI_Waitall (moving lanes)");
    free(req);
    return st;
}

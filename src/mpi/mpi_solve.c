/* The MPI entry points: a duplicate communicator that returns errors, the
 * four phases (mpi_impl.h), and the batch-wide status at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

ot_mpi_options ot_mpi_options_default(void)
{
    ot_mpi_options o;
    o.input = OT_MPI_INPUT_LOCAL;
    o.output = OT_MPI_OUTPUT_DISTRIBUTED;
    o.root = 0;
    o.balance = OT_MPI_DYNAMIC;
    o.block = 0;
    return o;
}

/* The owner of global lane g: as in mpi_collect.c, for the one message. */
static int owner_of(const ot__mpi *m, int64_t g)
{
    if (m->opt.output == OT_MPI_OUTPUT_GATHER)
        return m->opt.root;
    int r = 0;
    while (r + 1 < m->size && m->off[r + 1] <= g)
        r++;
    return r;
}

/* OT_OK, or OT_ERR_LANES_FAILED on every rank with the one-process message
 * ("3 of 100 lanes failed; lane 7: ..."), global lane numbers. */
static int batch_status(ot__mpi *m, const ot_solution *sol)
{
    int64_t mine[2] = {ot_solution_nfailed(sol), INT64_MAX}, all[2];
    for (int64_t b = 0; b < ot_solution_nbatch(sol); b++) /* 0 for NULL */
        if (ot_solution_lane_status(sol, b) != OT_OK) {
            mine[1] = m->info.lane_offset + b;
            break;
        }
    int rc = MPI_Allreduce(&mine[0], &all[0], 1, MPI_INT64_T, MPI_SUM, m->comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Allreduce(&mine[1], &all[1], 1, MPI_INT64_T, MPI_MIN, m->comm);
    if (rc != MPI_SUCCESS)
        return ot__mpi_err(m, rc, "MPI_Allreduce (counting failed lanes)");
    m->info.nfailed = all[0];
    if (all[0] == 0)
        return OT_OK;
    char msg[256] = "";
    const int from = owner_of(m, all[1]);
    if (m->rank == from)
        snprintf(msg, sizeof msg, "%s",
                 ot_solution_lane_message(sol, all[1] - m->info.lane_offset));
    rc = MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, from, m->comm);
    if (rc != MPI_SUCCESS)
        return ot__mpi_err(m, rc, "MPI_Bcast (the first failed lane)");
    return ot_set_error(OT_ERR_LANES_FAILED, "%lld of %lld lanes failed; lane %lld: %s",
                        (long long)all[0], (long long)m->nbatch, (long long)all[1], msg);
}

static void release(ot__mpi *m)
{
    for (int64_t i = 0; i < m->nsolved; i++)
        ot_solution_free(m->blk_sol[i]);
    free(m->blk);
    free(m->blk_sol);
    free(m->store);
    free(m->t);
    free(m->off);
    free(m->passed);
    free(m->stops);
    free(m->stops_dp);
    if (m->comm != MPI_COMM_NULL)
        MPI_Comm_free(&m->comm);
}

static int solve(int sens, const ot_loss *loss, const ot_ode *ode,
                 const ot_solve_inputs *in, MPI_Comm comm, const ot_mpi_options *opts,
                 ot_solution **out, ot_mpi_info *info)
{
    int up = 0, down = 0;
    if (MPI_Initialized(&up) != MPI_SUCCESS || !up ||
        MPI_Finalized(&down) != MPI_SUCCESS || down)
        return ot_set_error(OT_ERR_MPI, "comm: MPI is not initialized (or already "
                                        "finalized); call MPI_Init first");
    if (comm == MPI_COMM_NULL)
        return ot_set_error(OT_ERR_ARG, "comm: MPI_COMM_NULL");
    if (in == NULL) /* every rank passes it, as every rank passes comm */
        return ot_set_error(OT_ERR_ARG, "in: NULL");
    const double t_start = MPI_Wtime();
    ot__mpi m;
    memset(&m, 0, sizeof m);
    m.comm = MPI_COMM_NULL;
    m.adj = sens == 2; /* ot_mpi_solve_adjoint; a NULL loss fails in the check */
    m.sens = sens == 1;
    m.has_loss = loss != NULL;
    if (loss)
        m.loss = *loss;
    /* Our own communicator: our messages never meet the caller's, and an
     * MPI failure comes back as a code instead of aborting the job. */
    int rc = MPI_Comm_dup(comm, &m.comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_set_errhandler(m.comm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_rank(m.comm, &m.rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(m.comm, &m.size);
    int st = ot__mpi_err(&m, rc, "MPI_Comm_dup (comm)");
    const ot_mpi_options def = ot_mpi_options_default();
    if (st == OT_OK)
        st = ot__mpi_check(&m, ode, in, opts ? opts : &def, out);
    m.info.t_check = MPI_Wtime() - t_start;
    if (st == OT_OK) {
        const double t0 = MPI_Wtime();
        st = ot__mpi_agree(&m, ot__mpi_inputs(&m, in));
        m.info.t_scatter = MPI_Wtime() - t0;
    }
    if (st == OT_OK)
        st = ot__mpi_agree(&m, ot__mpi_deal(&m));
    ot_solution *sol = NULL;
    if (st == OT_OK)
        st = ot__mpi_collect(&m, &sol);
    if (st == OT_OK)
        st = batch_status(&m, sol);
    m.info.nbatch = m.nbatch;
    m.info.block = m.block;
    m.info.t_total = MPI_Wtime() - t_start;
    release(&m);
    if (info)
        *info = m.info;
    if (st != OT_OK && st != OT_ERR_LANES_FAILED) {
        ot_solution_free(sol);
        return st;
    }
    *out = sol;
    return st;
}

int ot_mpi_solve_dense(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                       MPI_Comm comm, const ot_mpi_options *opts, ot_solution **out,
                       ot_mpi_info *info)
{
    const ot_solve_inputs in = ot_solve_inputs_make(y0, params, t_eval);
    return solve(0, NULL, ode, &in, comm, opts, out, info);
}

int ot_mpi_solve_fwd_sens(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                          MPI_Comm comm, const ot_mpi_options *opts, ot_solution **out,
                          ot_mpi_info *info)
{
    const ot_solve_inputs in = ot_solve_inputs_make(y0, params, t_eval);
    return solve(1, NULL, ode, &in, comm, opts, out, info);
}

int ot_mpi_solve_adjoint(const ot_ode *ode, ot_view y0, ot_view params, ot_view t_eval,
                         const ot_loss *loss, MPI_Comm comm, const ot_mpi_options *opts,
                         ot_solution **out, ot_mpi_info *info)
{
    const ot_solve_inputs in = ot_solve_inputs_make(y0, params, t_eval);
    return solve(2, loss, ode, &in, comm, opts, out, info);
}

int ot_mpi_solve_dense_with(const ot_ode *ode, const ot_solve_inputs *in, MPI_Comm comm,
                            const ot_mpi_options *opts, ot_solution **out,
                            ot_mpi_info *info)
{
    return solve(0, NULL, ode, in, comm, opts, out, info);
}

int ot_mpi_solve_fwd_sens_with(const ot_ode *ode, const ot_solve_inputs *in,
                               MPI_Comm comm, const ot_mpi_options *opts,
                               ot_solution **out, ot_mpi_info *info)
{
    return solve(1, NULL, ode, in, comm, opts, out, info);
}

int ot_mpi_solve_adjoint_with(const ot_ode *ode, const ot_solve_inputs *in,
                              const ot_loss *loss, MPI_Comm comm,
                              const ot_mpi_options *opts, ot_solution **out,
                              ot_mpi_info *info)
{
    return solve(2, loss, ode, in, comm, opts, out, info);
}

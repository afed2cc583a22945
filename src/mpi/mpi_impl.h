/* Private: the state of one MPI solve, shared by the phases in src/mpi/.
 *
 * A call runs four phases, each ending in an agreement (ot__mpi_agree) so
 * that every rank leaves a phase with the same status and no rank waits in a
 * collective the others skipped:
 *   check    (mpi_check.c)   local argument checks, one Allgather of a record
 *                            per rank, the same verdict computed everywhere;
 *   inputs   (mpi_inputs.c)  each lane's y0 and params packed as f64 into the
 *                            root's store;
 *   deal     (mpi_deal.c)    the root deals blocks of lanes; each rank solves
 *                            its blocks with the core's one-process solves;
 *   collect  (mpi_collect.c) every solved lane goes to the rank that owns it
 *                            and lands in an ordinary ot_solution.
 *
 * The layer sits on the core's public headers alone (built with -Iinclude,
 * never -Isrc): ot_ode_describe for the problem, ot_times_check for t_eval,
 * ot_solve_*_opts for blocks (the dealer's progress hook, global lane
 * indices), ot_solution_new with the attach and set_lane functions for the
 * solutions it assembles, ot_set_error for its messages. So its own private
 * header is included by name from this folder. */
#ifndef OT_SRC_MPI_IMPL_H
#define OT_SRC_MPI_IMPL_H

#include "odetensor_mpi.h"

/* One lane's fixed part on the wire; its message (msg_len bytes, padded to
 * 8) and its output columns follow it. */
typedef struct {
    int64_t lane, status, count, root_index, msg_len;
    int64_t events; /* its recorded events (their columns follow its outputs) */
    double root_time;
    ot_lane_stats stats;
} ot__mpi_lane_head;

typedef struct {
    MPI_Comm comm; /* our duplicate, MPI_ERRORS_RETURN */
    int rank, size;
    ot_mpi_options opt;
    const ot_ode *ode; /* the caller's problem */
    ot_ode_info desc;  /* its sizes, options and fingerprint */
    /* How block solves run: the dealer's progress hook (or none) in place
     * of the problem's, lane_offset set to each block's first global lane. */
    ot_solve_options run;
    int sens; /* ot_mpi_solve_fwd_sens */
    int adj;  /* ot_mpi_solve_adjoint, with the caller's loss: */
    ot_loss loss;
    int has_loss;     /* loss was not NULL */
    int lane_data;    /* data [rows, nt] per lane, packed in the store */
    int has_weights;  /* ... with weights packed after it */
    int64_t data_off; /* a lane's data in its store record: after y0, params */
    /* ot_mpi_solve_*_with: per-lane starts (at t0_off in a lane's store
     * record), stops and their derivatives in p: kind 0 none, 1 for every
     * lane (the owned copies stops [ns], stops_dp [np, ns]), 2 per lane (at
     * stops_off, NaN-padded to ns, and dp_off in the record). */
    int has_t0, stops_kind, dp_kind;
    int64_t ns, t0_off, stops_off, dp_off;
    double *stops, *stops_dp;
    int has_events; /* the solutions carry event tensors */
    int64_t n, np, rows, nt, nsens, nbatch, block, nblocks;
    int has_y0, has_roots;
    size_t isz;      /* bytes per output element */
    int64_t in_w;    /* doubles per lane in the input store: y0 (n) then params */
    int64_t *off;    /* [size + 1] the lanes each rank owns: [off[r], off[r+1]) */
    int64_t *passed; /* [size] lanes each rank passed (LOCAL style) */
    double *t;       /* [nt] t_eval as f64, owned */
    double *store;   /* root: [in_w, nbatch] inputs, owned; NULL elsewhere */
    /* Blocks this rank solved and their one-process solutions, owned. */
    int64_t nsolved, cap_solved;
    int64_t *blk;
    ot_solution **blk_sol;
    int hard;           /* first failure of a block solve on this rank */
    char hard_msg[256]; /* its message */
    ot_mpi_info info;
} ot__mpi;

/* OT_OK, or OT_ERR_MPI with a message naming the call, MPI's reason and the
 * rank, for an MPI return code. */
int ot__mpi_err(const ot__mpi *m, int rc, const char *call);

/* Collective: the status of the lowest rank whose st is not OT_OK, with
 * that rank's ot_last_error message, on every rank; OT_OK when none failed. */
int ot__mpi_agree(ot__mpi *m, int st);

/* Collective: checks and compares every rank's arguments and fills the sizes,
 * m->t, m->off and m->passed. Same status on every rank. */
int ot__mpi_check(ot__mpi *m, const ot_ode *ode, const ot_solve_inputs *in,
                  const ot_mpi_options *opts, ot_solution **out);

/* Collective: fills the root's input store from the LOCAL slices or the
 * ROOT's batch (y0, params, per-lane loss data, starts, stops and their
 * derivatives), checking that y0 and params are finite. */
int ot__mpi_inputs(ot__mpi *m, const ot_solve_inputs *in);

/* Collective: deals and solves every block. A failure to solve a block is
 * kept in m->hard and the dealing goes on, so no rank is left waiting;
 * the caller agrees on it afterwards. @return OT_OK or OT_ERR_MPI. */
int ot__mpi_deal(ot__mpi *m);

/* Collective: moves the solved lanes to their owners and builds this rank's
 * solution (*out: the caller's; NULL on non-root ranks when gathering). */
int ot__mpi_collect(ot__mpi *m, ot_solution **out);

/* Collective: sends bytes[d] bytes of send[d] to each rank d and receives
 * rbytes[s] bytes into recv[s] from each rank s, in chunks MPI's int counts
 * can hold. Either array may hold NULL / 0 entries. */
int ot__mpi_move(ot__mpi *m, char *const *send, const int64_t *bytes, char *const *recv,
                 const int64_t *rbytes);

#endif

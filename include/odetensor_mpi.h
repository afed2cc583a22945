/* odetensor MPI layer: one batch of lanes solved across the ranks of an MPI
 * communicator (libodetensor_mpi, built by `make mpi`; the core library has
 * no MPI dependency). Link with libodetensor_mpi and libodetensor. It is
 * built on the core's public headers alone (ot_ode_describe, ot_times_check,
 * ot_solve_*_opts, the solution assembly of solution.h, ot_set_error), as
 * any library on top of odetensor may be.
 *
 * Every rank of the communicator calls the same entry point with the same
 * problem (an ot_ode built the same way on each rank: sizes, callbacks,
 * options), the same t_eval and the same options. Inputs come in one of two
 * styles:
 *   OT_MPI_INPUT_LOCAL  each rank passes its own slice of lanes: y0
 *                       [n, nlocal] and params [np, nlocal] (a one-lane
 *                       [n] / [n, 1] input is broadcast over that rank's
 *                       lanes; nlocal may be 0: [n, 0]). The global batch is
 *                       the concatenation in rank order: rank r's lane j is
 *                       global lane offset_r + j, offset_r = sum of nlocal
 *                       over ranks < r.
 *   OT_MPI_INPUT_ROOT   the root passes the whole batch as in ot_solve_dense;
 *                       the other ranks' y0 and params are ignored (pass
 *                       ot_view_absent()).
 * Outputs either stay distributed or are gathered:
 *   OT_MPI_OUTPUT_DISTRIBUTED  each rank gets an ordinary ot_solution for the
 *                       lanes it owns: its own slice (input LOCAL), or the
 *                       contiguous share [r N / size, (r + 1) N / size) of
 *                       the N lanes (input ROOT). info->lane_offset says
 *                       which global lane its lane 0 is.
 *   OT_MPI_OUTPUT_GATHER  the root gets one ot_solution with all N lanes;
 *                       *out is NULL on the other ranks.
 * Each lane's outputs, status, message, count, root, recorded events and
 * statistics travel with it, so a solution reads exactly like one from
 * ot_solve_dense.
 *
 * Balance: lanes are solved in blocks of `block` consecutive global lanes;
 * the root deals blocks to ranks as they ask for more (OT_MPI_DYNAMIC: a
 * rank that draws costly lanes simply takes fewer blocks), or gives each rank
 * a fixed contiguous share (OT_MPI_STATIC, for comparison). The root solves
 * blocks too and answers requests between its own blocks; every other rank
 * keeps one request ahead so it rarely waits. Inputs reach the solving rank
 * through the root (gathered there first in the LOCAL style); outputs go
 * straight from the solving rank to the owning one at the end.
 *
 * Bit-identity: in OT_LANES mode every lane is its own CVODE solve, so lane
 * b's outputs, status, message, count, root and statistics are bit for bit
 * those of a one-process ot_solve_dense over the whole batch, for any number
 * of ranks, any block size and any balance. In OT_LOCKSTEP mode the lanes of
 * one block share one integrator, so results depend on the blocks, which are
 * fixed by global lane index and never by the number of ranks: lane b equals
 * lane b - k B of the one-process solve over lanes [k B, min((k + 1) B, N)),
 * k = b / B, B = the block size (given, or OT_MPI_LOCKSTEP_BLOCK); with
 * B >= N that is the one-process solve of the whole batch (on one rank).
 *
 * Errors: the arguments of every rank are checked and compared in one
 * collective before any lane data moves; a bad or inconsistent argument on
 * any rank makes every rank return the same status with the same message,
 * which names the argument and the rank ("params: rank 2 ...", "t_eval:
 * rank 1's values differ from rank 0's"). A failing lane is reported like
 * any lane failure (OT_ERR_LANES_FAILED on every rank, the lane's status and
 * message in the solution that owns it). MPI failures return OT_ERR_MPI: the
 * library works on a duplicate of the communicator with MPI_ERRORS_RETURN and
 * never aborts, exits or prints; after OT_ERR_MPI the other ranks may not be
 * able to finish the call (MPI gives no guarantee past a failed call).
 *
 * Callbacks run on every rank, in blocks. The problem's progress callback is
 * not called; info reports what each rank did. Worker threads per rank are
 * the problem's (ot_ode_set_threads): with one rank per core, set 1.
 * Data travels as bytes: all ranks must share one data representation
 * (the usual homogeneous cluster). */
#ifndef ODETENSOR_MPI_H
#define ODETENSOR_MPI_H

#include <mpi.h>

#include "odetensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The block size OT_LOCKSTEP solves use when options.block is 0. */
#define OT_MPI_LOCKSTEP_BLOCK 256

typedef enum ot_mpi_input { OT_MPI_INPUT_LOCAL = 1, OT_MPI_INPUT_ROOT = 2 } ot_mpi_input;

typedef enum ot_mpi_output {
    OT_MPI_OUTPUT_DISTRIBUTED = 1,
    OT_MPI_OUTPUT_GATHER = 2
} ot_mpi_output;

typedef enum ot_mpi_balance { OT_MPI_DYNAMIC = 1, OT_MPI_STATIC = 2 } ot_mpi_balance;

/* Must be equal on every rank (checked). */
typedef struct ot_mpi_options {
    int input;     /* ot_mpi_input; default OT_MPI_INPUT_LOCAL */
    int output;    /* ot_mpi_output; default OT_MPI_OUTPUT_DISTRIBUTED */
    int root;      /* the rank that deals blocks, holds ROOT inputs and gets
                      GATHER outputs; default 0 */
    int balance;   /* ot_mpi_balance; default OT_MPI_DYNAMIC */
    int64_t block; /* lanes per block, >= 0; 0 picks one: in OT_LANES mode
                      about 16 blocks per rank (at most 2048 lanes each), in
                      OT_LOCKSTEP mode OT_MPI_LOCKSTEP_BLOCK */
} ot_mpi_options;

/* What one call did on this rank (all times from MPI_Wtime, in seconds). */
typedef struct ot_mpi_info {
    int64_t nbatch;        /* lanes in the whole batch */
    int64_t lane_offset;   /* global index of lane 0 of this rank's solution */
    int64_t nlocal;        /* lanes in this rank's solution (0 when none) */
    int64_t nfailed;       /* failed lanes in the whole batch */
    int64_t block;         /* the block size used */
    int64_t blocks_solved; /* by this rank */
    int64_t lanes_solved;  /* by this rank */
    double t_check;        /* argument agreement */
    double t_scatter;      /* moving inputs to the root (LOCAL style) */
    double t_solve;        /* inside this rank's block solves */
    double t_deal;         /* the dealing phase in all (solve + waiting) */
    double t_gather;       /* moving outputs to their owners */
    double t_total;        /* the whole call */
} ot_mpi_info;

/* The defaults above. */
OT_API ot_mpi_options ot_mpi_options_default(void);

/* Solves the lanes of all ranks at the times t_eval, as ot_solve_dense does
 * for one process (see the top of this header for styles and guarantees).
 * Collective over comm: every rank must call it. ode, t_eval and *opts
 * (NULL: the defaults) must agree on every rank; y0 and params are this
 * rank's slice (LOCAL) or, on the root only, the whole batch (ROOT), with
 * the rules of ot_solve_dense (f32 or f64, finite, column-major; y0 absent
 * when the problem has an init callback). info may be NULL.
 * Ownership: on OT_OK and OT_ERR_LANES_FAILED *out is the caller's (free it
 * with ot_solution_free): this rank's lanes (DISTRIBUTED; possibly 0 lanes),
 * all lanes on the root and NULL elsewhere (GATHER). On any other status *out
 * is untouched and every rank returns the same status and message.
 * @return OT_OK; OT_ERR_LANES_FAILED (on every rank) when any lane failed;
 * OT_ERR_ARG, OT_ERR_SHAPE, OT_ERR_VALUE, OT_ERR_DTYPE, OT_ERR_DEVICE for a
 * bad or inconsistent argument on any rank; OT_ERR_NOMEM, OT_ERR_OVERFLOW;
 * OT_ERR_MPI when MPI is not initialized or an MPI call failed. */
OT_API int ot_mpi_solve_dense(const ot_ode *ode, ot_view y0, ot_view params,
                              ot_view t_eval, MPI_Comm comm, const ot_mpi_options *opts,
                              ot_solution **out, ot_mpi_info *info);

/* As ot_mpi_solve_dense, plus forward sensitivities as ot_solve_fwd_sens:
 * sens(j) [n|nout, nt, nlocal] per parameter travel with their lanes. */
OT_API int ot_mpi_solve_fwd_sens(const ot_ode *ode, ot_view y0, ot_view params,
                                 ot_view t_eval, MPI_Comm comm,
                                 const ot_mpi_options *opts, ot_solution **out,
                                 ot_mpi_info *info);

/* As ot_mpi_solve_dense, plus the loss and its gradients as
 * ot_solve_adjoint: OT_GRAD_LOSS [nlocal], OT_GRAD_PARAMS [np, nlocal] and
 * OT_GRAD_Y0 [n, nlocal] travel with their lanes. loss->data and weights:
 * [rows, nt] (2 axes) for every lane, the same values on every rank; or
 * [rows, nt, k] (3 axes) per lane, passed as y0 and params are (each rank
 * its slice, k its lanes; or the root the whole batch). Loss functions and
 * integrands run on the rank that solves their lane; their lane argument
 * counts within the block solved there, ot_callback_lane() gives the lane's
 * index in the whole batch. */
OT_API int ot_mpi_solve_adjoint(const ot_ode *ode, ot_view y0, ot_view params,
                                ot_view t_eval, const ot_loss *loss, MPI_Comm comm,
                                const ot_mpi_options *opts, ot_solution **out,
                                ot_mpi_info *info);

/* As ot_mpi_solve_dense, ot_mpi_solve_fwd_sens and ot_mpi_solve_adjoint,
 * with the inputs of ot_solve_*_with (doses and events with gradients):
 * in->y0 and in->params as above; in->t_eval [nt] for every lane (the same
 * on every rank; per-lane times [nt, k] are refused: they do not travel);
 * in->t0 per-lane starts [k] (OT_LANES mode), in->stops [nstops] for every
 * lane (the same on every rank) or [nstops_r, k] per lane, in->stops_dp
 * [np, nstops] or [np, nstops_r, k] alongside: per-lane arrays are passed
 * as y0 and params are (each rank its slice, k its lanes; or the root the
 * whole batch), and ranks' nstops_r may differ (NaN pads them). Each
 * lane's recorded events travel with it: the event tensors (solution.h)
 * of this rank's solution have m = the most events of its own lanes (1 at
 * least), so their values, not their m, match a one-process solve's. A
 * handler, loss or integrand runs on the rank that solves its lane, its
 * lane argument counting within the block (ot_callback_lane(): the lane's
 * index in the whole batch). Errors as above, plus: OT_ERR_ARG for in
 * NULL, a kind of stops (or starts) that differs between the ranks that
 * pass lanes, stops_dp without stops; OT_ERR_SHAPE for per-lane arrays
 * whose lanes are not this rank's; OT_ERR_VALUE for stops for every lane
 * that differ between ranks; a bad stop value fails as the core's
 * ot_solve_*_with (its lane numbered within the block named). */
OT_API int ot_mpi_solve_dense_with(const ot_ode *ode, const ot_solve_inputs *in,
                                   MPI_Comm comm, const ot_mpi_options *opts,
                                   ot_solution **out, ot_mpi_info *info);
OT_API int ot_mpi_solve_fwd_sens_with(const ot_ode *ode, const ot_solve_inputs *in,
                                      MPI_Comm comm, const ot_mpi_options *opts,
                                      ot_solution **out, ot_mpi_info *info);
OT_API int ot_mpi_solve_adjoint_with(const ot_ode *ode, const ot_solve_inputs *in,
                                     const ot_loss *loss, MPI_Comm comm,
                                     const ot_mpi_options *opts, ot_solution **out,
                                     ot_mpi_info *info);

#ifdef __cplusplus
}
#endif

#endif /* ODETENSOR_MPI_H */

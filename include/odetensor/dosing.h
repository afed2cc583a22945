/* odetensor dosing layer: NONMEM-style event records, the per-subject
 * dosing plan expanded from them, and solves from a plan (at the end: the
 * plan's doses become each lane's scheduled stops, rates and output
 * times around the user's model).
 *
 * Records. A table of rows with these columns (names case-insensitive; any
 * may be absent, except ID and TIME):
 *   ID    subject; a subject's rows must be contiguous
 *   TIME  the record's time, in the model's time unit; must not decrease
 *         within an ID (equal times apply in record order)
 *   EVID  0 observation, 1 dose, 2 other, 3 reset, 4 reset and dose;
 *         missing (or no EVID column): 1 where AMT > 0 or RATE is given
 *         and not 0, else 0
 *   AMT   a dose's amount (>= 0), in the model's amount unit; needed on
 *         dose records (EVID 1 and 4)
 *   RATE  0 or missing: a bolus (or a DUR infusion); > 0: an infusion at
 *         RATE amount per time unit for AMT/RATE; -1: the rate is a model
 *         parameter; -2: the duration is a model parameter
 *   DUR   an infusion's duration as data (> 0, with RATE 0 or missing)
 *   CMT   the 1-based compartment a dose goes into (missing: 1)
 *   II    the interval of additional doses (ADDL) or of steady state (SS)
 *   ADDL  the number of additional doses, at TIME + k II for k = 1..ADDL
 *   SS    0, 1 (steady state, replacing the state) or 2 (steady state
 *         added to the state); needs II > 0, except SS 1 with RATE > 0, II 0
 *         and AMT 0: a constant infusion at steady state (NONMEM's rule)
 *   DV    the observed value (kept, not interpreted here)
 *   MDV   1: the row is no observation (missing: 0)
 * Every other column is a numeric covariate. A missing value is NaN in the
 * columns (`.` or an empty cell in CSV). The dose columns (AMT, RATE, DUR,
 * II, ADDL, SS) are checked on every row (numbers, ranges) and used on dose
 * records only; how they combine (II with ADDL, SS with II, DUR with RATE,
 * AMT present) is checked on dose records.
 *
 * Rows. Every message and every action names a record by its row: the
 * 1-based number of the data record, the first record after the header
 * being row 1, in CSV and in columns alike (comment and blank lines are not
 * counted; CSV-level messages add the text's 1-based line). Validation
 * messages read "row 14 (ID 3), AMT: -5 is negative; a dose amount must be
 * >= 0". Records are checked when made: an ot_records holds valid records
 * (CMT against the model's compartments is checked by ot_dose_plan_new).
 *
 * Thread safety: records and plans are immutable once made and may be read
 * from many threads; free each from one. */
#ifndef ODETENSOR_DOSING_H
#define ODETENSOR_DOSING_H

#include <stddef.h>
#include <stdint.h>

#include "solution.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Event identifiers (the EVID column). */
typedef enum ot_evid {
    OT_EVID_OBSERVATION = 0,
    OT_EVID_DOSE = 1,
    OT_EVID_OTHER = 2,
    OT_EVID_RESET = 3,
    OT_EVID_RESET_DOSE = 4
} ot_evid;

typedef struct ot_records ot_records;

/* Parses NONMEM-style CSV text: a header row of column names, then one
 * record per line, comma-separated, no quoting; spaces and tabs around a
 * cell are ignored; `.` or an empty cell is missing; lines whose first
 * non-blank character is `#`, and blank lines, are skipped; CRLF line ends
 * and a UTF-8 byte-order mark are accepted. text need not end in NUL: len
 * bytes are read. Every cell must be a finite number or missing.
 * Ownership: on OT_OK *out is the caller's, freed with ot_records_free();
 * text stays the caller's (nothing points into it). On failure *out is
 * NULL.
 * @return OT_OK; OT_ERR_ARG for NULL arguments, a malformed table (no
 * header, a duplicate or empty column name, no ID or TIME column, a line
 * with another number of cells than the header) or a cell that is no number
 * ("row 3 (line 5), AMT: \"ten\" is not a number"); OT_ERR_VALUE for a
 * record that breaks the rules above, the message naming the row, its ID
 * and the column; OT_ERR_NOMEM. */
OT_API int ot_records_parse_csv(const char *text, size_t len, ot_records **out);

/* ot_records_parse_csv of the file at path (read whole).
 * @return as ot_records_parse_csv; OT_ERR_ARG when the file cannot be
 * opened or read (the message naming the path). */
OT_API int ot_records_read_csv(const char *path, ot_records **out);

/* Records from ncols columns of nrows values each: names[j] (compared
 * case-insensitively) and columns[j][0..nrows-1], NaN for missing; for
 * bindings that hold the table as arrays. The values are copied: names and
 * columns stay the caller's. Row r of the records is columns[j][r - 1].
 * Ownership and errors: as ot_records_parse_csv (a non-finite value other
 * than NaN is refused as "is not a finite number"). */
OT_API int ot_records_from_columns(int64_t nrows, int64_t ncols, const char *const *names,
                                   const double *const *columns, ot_records **out);

/* Frees records; NULL is accepted. */
OT_API void ot_records_free(ot_records *records);

/* The number of rows (records); 0 for NULL. */
OT_API int64_t ot_records_rows(const ot_records *records);

/* The number of subjects (distinct IDs), numbered 0.. in order of first
 * appearance; 0 for NULL. */
OT_API int64_t ot_records_subjects(const ot_records *records);

/* Subject s's ID, its first row (1-based, as in messages) and its number of
 * rows; any output pointer may be NULL.
 * @return OT_OK; OT_ERR_ARG for NULL records or s outside [0, subjects). */
OT_API int ot_records_subject(const ot_records *records, int64_t s, double *id,
                              int64_t *first_row, int64_t *nrows);

/* The number of columns, and column j's name as given (borrowed, valid
 * while the records live; NULL for j out of range or NULL records). */
OT_API int64_t ot_records_columns(const ot_records *records);
OT_API const char *ot_records_column_name(const ot_records *records, int64_t j);

/* The column called name (case-insensitive): *values points to its values,
 * one per row, row r at values[r - 1], NaN where missing; borrowed, valid
 * while the records live.
 * @return OT_OK; OT_ERR_ARG for NULL arguments or no such column (the
 * message lists the columns). */
OT_API int ot_records_column(const ot_records *records, const char *name,
                             const double **values);

/* A covariate per subject: values[s] for each of the ot_records_subjects
 * subjects (the caller's array) is the value on subject s's first row
 * where the column is not missing. Later rows are not read: a covariate
 * that varies with time within a subject gets its first value (read the
 * column for the rest). Any column may be read this way.
 * @return OT_OK; OT_ERR_ARG for NULL arguments or no such column;
 * OT_ERR_VALUE when the column is missing on every row of a subject (the
 * message names the ID and its rows; values is then partly written). */
OT_API int ot_records_covariate(const ot_records *records, const char *name,
                                double *values);

/* ---- The dosing plan ---------------------------------------------------- */

/* What an action does. */
typedef enum ot_dose_kind {
    OT_DOSE_BOLUS = 0,          /* amount added to state at time */
    OT_DOSE_INFUSION_START = 1, /* rate starts into state */
    OT_DOSE_INFUSION_END = 2,   /* that rate stops (same dose number) */
    OT_DOSE_RESET = 3,          /* every state reset, running infusions ended */
    OT_DOSE_STEADY_STATE = 4,   /* the record's dose at steady state (ss, ii) */
    OT_DOSE_OBSERVATION = 5,    /* an output time */
    OT_DOSE_OTHER = 6           /* EVID 2: a time with no action */
} ot_dose_kind;

/* How an infusion's rate and duration are known (ot_dose_action.rate_kind). */
typedef enum ot_rate_kind {
    OT_RATE_DATA = 0,         /* rate from RATE; duration AMT/RATE */
    OT_DURATION_DATA = 1,     /* duration from DUR; rate AMT/DUR */
    OT_RATE_MODELLED = -1,    /* RATE -1: rate from a parameter; duration AMT/rate */
    OT_DURATION_MODELLED = -2 /* RATE -2: duration from a parameter */
} ot_rate_kind;

/* One action of a subject's plan. Plain data read through
 * ot_dose_plan_actions.
 * time      when; TIME + k II for the k-th additional dose (k = addl)
 * kind      ot_dose_kind
 * rate_kind ot_rate_kind of an infusion's start and end, and of the
 *           steady-state marker of an infusion (0 otherwise)
 * state     the state index the record's CMT maps to; -1 for resets,
 *           OTHER and observations without CMT
 * cmt       the 1-based compartment (0 where none applies)
 * amount    AMT for doses and steady-state markers (0 otherwise)
 * rate      an infusion's rate (AMT/DUR with DUR); NaN when modelled;
 *           0 for boluses and actions that are no dose (a steady-state
 *           marker has its dose's rate and duration)
 * duration  an infusion's duration (AMT/RATE, or DUR); NaN when modelled;
 *           +Inf for a constant infusion at steady state; 0 for boluses
 * row       the record's row (1-based)
 * dose      the subject's dose number (0-based: every bolus or infusion,
 *           additional doses included, in plan order), shared by an
 *           infusion's start and end and by a steady-state marker and its
 *           dose; -1 for actions that are no dose
 * ss, ii    a dose record's SS and II (on all of its actions; 0 for the
 *           actions of other records)
 * addl      0 for the record's own action, k for its k-th additional dose */
typedef struct ot_dose_action {
    double time;
    int32_t kind;
    int32_t rate_kind;
    int64_t state;
    int64_t cmt;
    double amount;
    double rate;
    double duration;
    int64_t row;
    int64_t dose;
    int32_t ss;
    int32_t addl;
    double ii;
} ot_dose_action;

typedef struct ot_dose_plan ot_dose_plan;

/* Expands records into a plan per subject for a model with ncmt
 * compartments: cmt_state[c - 1] is the state index compartment c maps to
 * (>= 0; NULL: compartment c is state c - 1). cmt_state is copied.
 * Each subject's actions are sorted by time; coincident actions keep record
 * order, then expansion order (a record's reset, its steady-state marker,
 * its dose, then its additional doses). A dose record gives (after a reset
 * for EVID 4 and a steady-state marker for SS 1/2) a bolus, or an infusion
 * start and its end at TIME + AMT/RATE or TIME + DUR; a modelled rate or
 * duration (RATE -1/-2) gives the start alone (the end depends on a
 * parameter); a constant infusion at steady state also has no end. ADDL
 * repeats the dose (not the reset or steady-state marker) at TIME + k II.
 * A reset cancels the ends of the infusions running when it comes.
 * Observations are the rows with EVID 0 and MDV not 1; an EVID 0 row with
 * MDV 1, like EVID 2, gives an OTHER action.
 * Ownership: on OT_OK *out is the caller's, freed with ot_dose_plan_free();
 * the plan does not refer to records, which may be freed first. On failure
 * *out is NULL.
 * @return OT_OK; OT_ERR_ARG for NULL records or out, ncmt < 1 or a negative
 * cmt_state; OT_ERR_VALUE for a CMT outside 1..ncmt ("row 7 (ID 2), CMT: 3
 * is not a compartment; the model has 2 (CMT 1 to 2)"); OT_ERR_NOMEM. */
OT_API int ot_dose_plan_new(const ot_records *records, int64_t ncmt,
                            const int64_t *cmt_state, ot_dose_plan **out);

/* Frees a plan; NULL is accepted. */
OT_API void ot_dose_plan_free(ot_dose_plan *plan);

/* The number of subjects, in the records' order; 0 for NULL. */
OT_API int64_t ot_dose_plan_subjects(const ot_dose_plan *plan);

/* Subject s's ID.
 * @return OT_OK; OT_ERR_ARG for NULL arguments or s out of range. */
OT_API int ot_dose_plan_subject_id(const ot_dose_plan *plan, int64_t s, double *id);

/* Subject s's actions: *actions points to *n of them in order (borrowed,
 * valid while the plan lives; NULL when *n is 0). Either output may be
 * NULL.
 * @return OT_OK; OT_ERR_ARG for NULL plan or s out of range. */
OT_API int ot_dose_plan_actions(const ot_dose_plan *plan, int64_t s,
                                const ot_dose_action **actions, int64_t *n);

/* Subject s's observations in order: *n of them; times[i], the
 * observation's time (non-decreasing, the per-lane output times of a later
 * solve); at_dose[i], 1 when a bolus, infusion start, reset or steady-state
 * marker of the subject is at exactly that time (NONMEM reports the
 * pre-dose value there), else 0; rows[i], its row. Arrays borrowed, valid
 * while the plan lives (NULL when *n is 0); any output may be NULL.
 * @return OT_OK; OT_ERR_ARG for NULL plan or s out of range. */
OT_API int ot_dose_plan_observations(const ot_dose_plan *plan, int64_t s, int64_t *n,
                                     const double **times, const int32_t **at_dose,
                                     const int64_t **rows);

/* ---- Solving from a plan ------------------------------------------------ */

/* How a model takes its doses, per compartment c (CMT c + 1, c from 0 to
 * the plan's ncmt - 1). Each array is [ncmt] parameter indices (0-based
 * rows of the solve's params), -1 where none applies, or NULL for -1
 * everywhere:
 *   f         bioavailability F: a dose's amount is F AMT (-1: F = 1);
 *   lag       the lag ALAG: a dose at TIME is given at TIME + ALAG (its
 *             infusion starts and ends later by ALAG; -1: no lag);
 *   rate      the rate of RATE -1 doses into c (needed by them);
 *   duration  the duration of RATE -2 doses into c (needed by them).
 * As in NONMEM, F scales a zero-order dose's duration when its rate is data
 * (RATE > 0, or modelled with RATE -1) and its rate when its duration is
 * (DUR, or RATE -2). Parameters that give times or amounts may be fitted:
 * the sensitivities and the adjoint go through them (the stops move with
 * ALAG and with an infusion's duration).
 * post_dose  0 (the default): an observation at a dose time shows the
 *            state before the dose (NONMEM's trough; every dose, reset and
 *            steady state at that time applied after it); 1: after them.
 *            Either way the state before and after each dose time is in the
 *            solution's event tensors.
 * ss_tol     steady state (SS 1/2): the fixed point of the dosing interval's
 *            map P is accepted when the weighted RMS norm of P(y) - y, with
 *            the problem's rtol and atol, is <= ss_tol (0: the default 1);
 * ss_max_iter  Newton iterations at most (0: the default 20);
 * ss_interval  the interval over which a constant infusion at steady state
 *            (SS 1, RATE > 0, II 0) is solved for its equilibrium, in time
 *            units (0: the default 1; any interval gives the same
 *            equilibrium, a longer one the better conditioned Newton step
 *            for slow models).
 * Make one with ot_dose_model_make, then set what the model has. */
typedef struct ot_dose_model {
    const int64_t *f, *lag, *rate, *duration;
    int post_dose;
    double ss_tol;
    int64_t ss_max_iter;
    double ss_interval;
} ot_dose_model;
OT_API ot_dose_model ot_dose_model_make(void);

/* The plan's compartment count and compartment c's (0-based) state index;
 * -1 for a NULL plan or c out of range. */
OT_API int64_t ot_dose_plan_compartments(const ot_dose_plan *plan);
OT_API int64_t ot_dose_plan_cmt_state(const ot_dose_plan *plan, int64_t c);

/* Solves every subject of plan as one lane (lane s is subject s) of ode,
 * at the subject's observation times. ode is the user's model as for
 * ot_solve_dense: its rhs sees only its own states and parameters; the
 * doses are applied around it:
 *   a bolus adds F AMT to its compartment's state;
 *   a zero-order infusion adds its rate to the compartment's derivative
 *   from its start to its end (overlapping infusions summed);
 *   a reset (EVID 3, 4) returns the state to the lane's y0 (or init's) and
 *   ends every running infusion;
 *   SS 1 replaces the state by the periodic steady state of the record's
 *   dose repeated every II (ending running infusions; the constant
 *   infusion's: its equilibrium), SS 2 adds that steady state, then the
 *   record's dose is given; both by Newton on the interval's map with its
 *   Jacobian from forward sensitivities (linear models: exact to the
 *   solver's tolerance after one step; the accuracy is the map's: ss_tol
 *   and the solve's tolerances);
 *   actions of one subject at one time are applied in record order, one
 *   scheduled stop.
 * Every subject starts at the problem's t0 from y0 ([n] or [n, nsubjects];
 * absent: init computes it). params: [np] or [np, nsubjects] (covariates
 * from ot_records_covariate go in here). Internally each compartment that
 * receives an infusion adds one rate parameter after the user's (the
 * callbacks, the loss and the results see only the user's np).
 * The solution: ts [nobs, nsubjects] with each subject's observation times
 * (ot_dose_plan_observations; NaN-padded), ys [rows, nobs, nsubjects];
 * every dose time of a subject is a recorded event (OT_EVENT_TIMES and
 * its state before and after; root -1 - k for the subject's k-th dose
 * time). Lanes mode and lockstep on the CPU (each subject's doses its own
 * stops; CUDA refuses scheduled stops); the problem's own roots and
 * handler keep working. A subject whose parameters give an impossible
 * dose (F < 0, ALAG < 0, a rate or duration <= 0, a steady state with
 * ALAG or an infusion longer than II, no fixed point within ss_max_iter)
 * fails alone (OT_ERR_VALUE or OT_ERR_SOLVER, the message naming its ID
 * and row).
 * Ownership: as ot_solve_dense; plan and model stay the caller's.
 * @return as ot_solve_dense; OT_ERR_ARG for NULL ode, plan or model, a
 * parameter index outside [0, np), a subject without observations or
 * with a record before t0, a RATE -1/-2 dose without its parameter
 * (the message naming the row). */
OT_API int ot_dose_solve_dense(const ot_ode *ode, const ot_dose_plan *plan,
                               const ot_dose_model *model, ot_view y0, ot_view params,
                               ot_solution **out);

/* As ot_dose_solve_dense, plus forward sensitivities to the user's np
 * parameters (and to y0 with ot_ode_set_sens_initial): through every dose,
 * F, ALAG, modelled rates and durations, resets and steady states
 * (implicit differentiation of the fixed point: dy/dp = (I - P_y)^-1 P_p).
 * sens(j) is [rows, nobs, nsubjects]. */
OT_API int ot_dose_solve_fwd_sens(const ot_ode *ode, const ot_dose_plan *plan,
                                  const ot_dose_model *model, ot_view y0, ot_view params,
                                  ot_solution **out);

/* As ot_dose_solve_dense, plus the loss (ot_solve_adjoint; data and
 * weights [rows, nobs] or [rows, nobs, nsubjects], a NaN datum adding no
 * term) and its gradients by the adjoint through every dose:
 * OT_GRAD_PARAMS [np, nsubjects], OT_GRAD_Y0. */
OT_API int ot_dose_solve_adjoint(const ot_ode *ode, const ot_dose_plan *plan,
                                 const ot_dose_model *model, ot_view y0, ot_view params,
                                 const ot_loss *loss, ot_solution **out);

#ifdef __cplusplus
}
#endif

#endif /* ODETENSOR_DOSING_H */

/* Private: the plan's checks of ot_solve_inputs beyond y0, params and
 * t_eval (plan_with.c), and the refusal of what a solver's row lacks, for
 * plan.c and plan_with.c. */
#ifndef OT_SRC_ENTRY_PLAN_WITH_H
#define OT_SRC_ENTRY_PLAN_WITH_H

#include "solve/solve.h"

/* The refusal of what the solver's row lacks: "arg: the <solver> solver
 * rule", and how to choose another. @return OT_ERR_ARG. */
int ot__plan_lacks(const ot__plan *pl, const char *arg, const char *rule);

/* Per-lane starts t0 ([nbatch] or [1]) and scheduled stops ([nstops] or
 * [nstops, nbatch], increasing, NaN-padded), into the plan (nbatch set).
 * @return OT_OK or the error, its message naming the argument. */
int ot__plan_check_extras(ot__plan *pl, ot_view t0, ot_view stops);

/* stops_dp [np, nstops] or [np, nstops, nbatch], f64 host, finite, for
 * the gradients' _with entries (after the stops). */
int ot__plan_check_stops_dp(ot__plan *pl, ot_view v);

#endif

/* Private: solving from a dosing plan (dosing.h's ot_dose_solve_*). The
 * plan becomes, per lane, a schedule of stops, each with the dose
 * operations applied there (schedule.c); the user's problem is wrapped so
 * that rates enter the derivative and the stops' handler applies the
 * operations (wrap.c); steady states are fixed points of one dosing
 * interval, found by Newton over sub-solves of the same wrapped problem
 * (steady.c); solve.c runs the solves and trims the results to the user's
 * parameters. This part of the dosing layer sits above the entry: it reads
 * the problem's struct to wrap it and solves through the public calls. */
#ifndef OT_DOSING_DOSE_SOLVE_H
#define OT_DOSING_DOSE_SOLVE_H

#include <stdint.h>

#include "ode/ode_impl.h"
#include <odetensor/dosing.h>

/* An operation at a stop. */
typedef enum {
    OT__OP_BOLUS = 0,    /* y[state] += F AMT */
    OT__OP_RATE_ON = 1,  /* slot += rate */
    OT__OP_RATE_OFF = 2, /* slot -= rate */
    OT__OP_RESET = 3,    /* y = y0, every slot 0 */
    OT__OP_SS = 4        /* steady state: y = y* (ss 1, slots 0) or y += y* (ss 2) */
} ot__op_kind;

/* How an infusion's rate and duration follow from the data and p. */
typedef enum {
    OT__RATE_DATA = 0,  /* rate from RATE; duration F AMT / rate */
    OT__DUR_DATA = 1,   /* duration from DUR; rate F AMT / DUR */
    OT__RATE_PARAM = 2, /* rate p[rate]; duration F AMT / rate */
    OT__DUR_PARAM = 3   /* duration p[duration]; rate F AMT / duration */
} ot__rate_form;

typedef struct {
    int32_t kind; /* ot__op_kind */
    int32_t form; /* ot__rate_form of an infusion's ops */
    int32_t ss;   /* OT__OP_SS: 1 or 2 */
    int64_t cmt;  /* 0-based compartment (bolus, rates) */
    int64_t state;
    double amount; /* AMT */
    double value;  /* RATE or DUR as data (their forms); else 0 */
    int64_t ssi;   /* OT__OP_SS: the lane's steady state (ot__dose_ss) */
    int64_t row;   /* the record's (1-based), for messages */
} ot__dose_op;

/* One lane's steady state (an SS record's marker at time t): the dose
 * repeated every `period` (II, or the model's ss_interval for a constant
 * infusion), given at offset lag into each interval; `dose` is its op
 * (BOLUS or RATE_ON), `dur` an infusion's duration (its dose's op at the
 * lane's p). Found by steady.c: y* [n] at t, before the record's own dose,
 * and for gradients dyss/dp [n, np] (np: the user's). wrap: an infusion of
 * the interval before is still running at t (lag + dur > period), or the
 * infusion is the constant one: the marker turns its rate on, and (not
 * constant) a stop ends it at t + lag + dur - period. */
typedef struct {
    double t, period, lag, dur;
    int32_t ss, constant, wrap;
    int64_t lagi; /* lag's parameter, or -1 */
    ot__dose_op dose;
    double *y, *dydp;
} ot__dose_ss;
/* One lane's stops and operations. */
typedef struct {
    int64_t nstops;
    double *t;      /* [nstops] */
    double *dtdp;   /* [np, nstops] (np: the user's): d t_k / d p, or NULL */
    int64_t *first; /* [nstops + 1]: stop k's ops are ops[first[k], first[k+1]) */
    ot__dose_op *ops;
    int64_t nss;
    ot__dose_ss *ss;  /* [nss] */
    const double *y0; /* [n]: a reset's state (given y0), or NULL: init's */
    int status;       /* OT_OK, or why the lane fails alone (msg) */
    char msg[256];
} ot__dose_lane;
/* Everything the wrapped problem's callbacks read. */
typedef struct {
    const struct ot_ode *user; /* the user's problem */
    int64_t n, np;             /* the user's sizes */
    int64_t ncmt, nslot;       /* compartments; rate slots (params np + q) */
    const int64_t *cmt_state;  /* [ncmt] */
    int64_t *slot_of;          /* [ncmt]: compartment c's slot, or -1 */
    int64_t *slot_state;       /* [nslot] */
    const int64_t *fp, *lagp, *ratep, *durp; /* [ncmt] each, or NULL (none) */
    double ss_interval;                      /* a constant infusion's (model) */
    double ss_tol;                           /* the fixed point's (model) */
    ot__dose_lane *lanes;                    /* [nbatch] of the solve being run */
    int64_t nlanes;
    /* Lockstep blocks' compact copies of the user's p [np, nlanes] and d f / d p
     * [n, np, nlanes] (wrap.c), or NULL where not needed: the solve's. */
    double *pbuf, *dbuf;
} ot__dose_ctx;

/* The effective rate and duration of an infusion op for the user's
 * parameters p, and their derivatives in p (drate, ddur: [np] or NULL).
 * @return 0, or -1 with msg when they are not positive and finite. */
int ot__dose_infusion(const ot__dose_ctx *c, const ot__dose_op *op, const double *p,
                      double *rate, double *dur, double *drate, double *ddur, char *msg,
                      size_t msg_len);

/* F of compartment cmt for p (1 without one), its parameter in *fi (-1). */
double ot__dose_f(const ot__dose_ctx *c, int64_t cmt, const double *p, int64_t *fi);

/* Lane b's schedule from subject s of plan for the user's parameters p
 * [np] (steady states found later: their y still NULL); with_dp: the stops'
 * derivatives too. A subject's impossible dose (F < 0, ...) sets L->status
 * and msg (the lane then fails alone) and returns OT_OK. Ownership: L's
 * arrays are L's, freed by ot__dose_lane_free.
 * @return OT_OK or OT_ERR_NOMEM. */
int ot__dose_lane_build(const ot__dose_ctx *c, const ot_dose_plan *plan, int64_t s,
                        const double *p, int with_dp, ot__dose_lane *L);
void ot__dose_lane_free(ot__dose_lane *L);

/* The steady states of every lane's SS markers (their y, and dydp with
 * with_dp) for lanes of parameters pfull [np + nslot, nlanes], by Newton
 * over solves of `intervals` (the wrapped problem in lanes mode with
 * sensitivities to y0, no roots, no out). A lane whose steady state fails
 * gets its status and message. @return OT_OK, or the error of a solve
 * that could not run. */
int ot__dose_steady(ot__dose_ctx *c, const struct ot_ode *intervals, ot__dose_lane *lanes,
                    int64_t nlanes, const double *pfull, int with_dp, int64_t max_iter);

/* Subject s's first observation at exactly t from index from on, or -1. */
int64_t ot__dose_obs_at(const ot_dose_plan *plan, int64_t s, double t, int64_t from);

/* Writes again the outputs (and with sens their sensitivities) at each
 * observation at a steady state's time, in the pre-dose convention: the
 * steady state's trough instead of the state before the stop (observe.c).
 * A lane whose out function fails there fails, as one whose SS 2 state
 * before the stop is not kept (through out at its last output).
 * @return OT_OK or OT_ERR_NOMEM. */
int ot__dose_ss_outputs(const ot__dose_ctx *c, const ot_dose_plan *plan,
                        const ot__dose_lane *lanes, const double *pfull, int sens,
                        ot_solution *sol);

/* The wrapped problem: a copy of the user's with its np grown by the
 * slots, every callback forwarded with the user's np rows of p, rates added
 * after rhs, the dose handler and its Jacobian. Borrows c and the user's
 * problem, which must outlive it; nothing to free. */
void ot__dose_wrap(struct ot_ode *w, ot__dose_ctx *c);

/* A loss over the user's np, forwarded from the wrapped problem's: copies
 * *user with its callbacks wrapped; lc must outlive the result. */
typedef struct {
    const ot_loss *user;
    const ot__dose_ctx *c;
} ot__dose_loss_ctx;
ot_loss ot__dose_wrap_loss(const ot_loss *user, ot__dose_loss_ctx *lc);

#endif

/* Private: the rules every driver applies to user callbacks and to CVODE's
 * own errors, written once. A driver keeps one ot__cb per solver instance
 * (a lanes worker, a lockstep batch) and routes every callback result
 * through it:
 * - a return < 0 stops the lane (lockstep: the batch); > 0 asks CVODE to
 *   retry with a smaller step where it can (rhs, jac), and fails where it
 *   cannot (root, out, init);
 * - NaN/Inf written by rhs or jac is first treated as recoverable (a too
 *   large trial step often causes it), then stops after OT__NAN_RETRIES;
 *   from root, out or init it stops at once;
 * - once stopped, every wrapper fails at once without calling the user
 *   again: CVODE's fixed-point iteration (Adams) treats a failed rhs like a
 *   convergence failure and would otherwise creep on to max_steps;
 * - when CVODE then gives up, the callback is named as the cause. */
#ifndef OT_SRC_SOLVE_CALLBACK_H
#define OT_SRC_SOLVE_CALLBACK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { OT__CB_NOTED = 1, OT__CB_STOPPED = 2 };
enum { OT__NAN_RETRIES = 20 };

/* What a callback may ask of CVODE after returning > 0. */
typedef enum {
    OT__CB_RETRY = 0, /* rhs, jac: retry with a smaller step */
    OT__CB_ROOT = 1,  /* root functions: CVODE has no recoverable root failure */
    OT__CB_FINAL = 2  /* init, out: no retry can help */
} ot__cb_kind;

struct ot__progress_state;

typedef struct {
    const int *cancel; /* the solve's cancel flag (progress.h), or NULL; kept by reset */
    struct ot__progress_state *prog; /* the solve's progress, polled; kept by reset */
    unsigned ticks;                  /* callbacks since the last poll */
    int failed;                      /* 0, OT__CB_NOTED or OT__CB_STOPPED */
    int nan_count;                   /* NaN/Inf results so far */
    int64_t lane;     /* the lane the last problem names (NaN/Inf), or -1 */
    char msg[256];    /* the last callback problem */
    char cv_msg[256]; /* CVODE's last error message */
} ot__cb;

/* A NaN that no arithmetic makes (payload 0xbad): what a lockstep
 * callback's output holds before its first call. A callback written for one
 * lane (column 0 only, as in lanes mode) then leaves it in the other
 * columns, and ot__cb_nonfinite reports "did not write ... for lane B"
 * and stops, instead of lanes 1..k silently standing still. */
#define OT__UNWRITTEN_BITS UINT64_C(0x7ff4000000000bad)

/* Fills v[0, count) with the unwritten NaN. */
void ot__cb_poison(double *v, int64_t count);

/* Whether v is still the unwritten NaN. */
static inline int ot__cb_unwritten(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits == OT__UNWRITTEN_BITS;
}

/* The lane index ot_callback_lane reports on this thread (ode.h), kept in
 * a thread-local: `base` is the caller's index of this solve's lane 0 (0, or
 * a sub-solve's first lane in the MPI layer), `lane` the caller's index of
 * the first lane of the running unit (-1: none). The core sets it where a
 * solve's run starts (solve.c), where the pool starts a unit (pool.c), and
 * around each one-lane callback of a lockstep block (events, loss,
 * integrand); each setter returns what was there, for ot__cb_lane_restore. */
typedef struct {
    int64_t base, lane;
} ot__cb_lane_state;

/* Sets base and lane. @return the previous state. */
ot__cb_lane_state ot__cb_lane_enter(int64_t base, int64_t lane);

/* Sets lane to base + b: lane b of the running solve (a solution index).
 * @return the previous state. */
ot__cb_lane_state ot__cb_lane_at(int64_t b);

/* Puts back a state an enter returned. */
void ot__cb_lane_restore(ot__cb_lane_state prev);

/* Clears the state for a new lane (lockstep: a new batch). */
void ot__cb_reset(ot__cb *c);

/* Gives the progress callback its chance to cancel while lanes run
 * (progress.c): every OT__CB_POLL_EVERY callbacks a wrapper asks whether
 * OT__PROGRESS_POLL_NS have passed since the last call, and if so calls it. */
void ot__progress_poll(struct ot__progress_state *ps);
#define OT__CB_POLL_EVERY 64u

/* Nonzero once a callback stopped the lane, or the progress callback
 * cancelled the solve: wrappers return -1 at once. Every wrapper asks it
 * before calling the user, so a cancel reaches a long lane within the
 * polling period, not at its next output time. */
static inline int ot__cb_stopped(ot__cb *c)
{
    if (c->prog != NULL && (++c->ticks & (OT__CB_POLL_EVERY - 1)) == 0)
        ot__progress_poll(c->prog);
    return c->failed == OT__CB_STOPPED ||
           (c->cancel != NULL && __atomic_load_n(c->cancel, __ATOMIC_RELAXED) != 0);
}

/* Records a callback problem (rc < 0: stopped, else noted) and returns rc. */
int ot__cb_note(ot__cb *c, int rc, const char *fmt, ...) OT_PRINTF_(3, 4);

/* Maps a nonzero user return code of callback `name` at time t to CVODE's:
 * -1 (stopped) or 1 (retry, for OT__CB_RETRY only), and records
 * "NAME returned RC at t = T". */
int ot__cb_returned(ot__cb *c, const char *name, int rc, double t, ot__cb_kind kind);

/* Records the first NaN/Inf in v as "NAME wrote NaN or Inf at t = T to
 * TARGET[ROW] of lane B" (lane: lane0 + column; t NaN for init, which runs
 * before any time: no "at t ="). kind OT__CB_RETRY makes it recoverable up
 * to OT__NAN_RETRIES times. The unwritten NaN (ot__cb_poison) stops at
 * once: "NAME did not write TARGET for lane B". @return CVODE's code (1 or
 * -1). */
int ot__cb_nonfinite(ot__cb *c, const char *name, const char *target, const double *v,
                     int64_t rows, int64_t lanes, int64_t lane0, double t,
                     ot__cb_kind kind);

/* As ot__cb_nonfinite for a value already found: element k (row k % rows of
 * lane lane0 + k / rows) holds value (CUDA finds it on the device). */
int ot__cb_nonfinite_at(ot__cb *c, const char *name, const char *target, int64_t k,
                        double value, int64_t rows, int64_t lane0, double t,
                        ot__cb_kind kind);

/* Checks what callback `name` wrote into v, [rows, lanes] compact:
 * @return 0 when all finite, else ot__cb_nonfinite's code. The all-finite
 * case, on every callback call, is one branch-free pass here in line: x * 0
 * is 0 for finite x and NaN otherwise. Long arrays (lockstep's) use four
 * sums, so as not to wait on one chain of dependent adds; short ones (a
 * lane's few states) one, which costs fewer instructions. */
static inline int ot__cb_finite(ot__cb *c, const char *name, const char *target,
                                const double *v, int64_t rows, int64_t lanes,
                                int64_t lane0, double t, ot__cb_kind kind)
{
    const int64_t count = rows * lanes;
    double p0 = 0;
    int64_t k = 0;
    if (count >= 64) {
        double p1 = 0, p2 = 0, p3 = 0;
        for (; k + 4 <= count; k += 4) {
            p0 += v[k] * 0.0;
            p1 += v[k + 1] * 0.0;
            p2 += v[k + 2] * 0.0;
            p3 += v[k + 3] * 0.0;
        }
        p0 += p1 + p2 + p3;
    }
    for (; k < count; k++)
        p0 += v[k] * 0.0;
    if (p0 == 0)
        return 0;
    return ot__cb_nonfinite(c, name, target, v, rows, lanes, lane0, t, kind);
}

/* The cause of a lane's failure with status *status: when CVODE gave up
 * (OT_ERR_SOLVER) after a callback problem, the callback is the cause:
 * *status becomes OT_ERR_CALLBACK and the text "callback problem; then
 * CVODE's message" (cv_msg). After a cancel (c->cancel set) the solver's
 * failure is the cancel's: *status becomes OT_ERR_CANCELLED. Otherwise
 * WHAT. Returns buf. */
const char *ot__cb_cause(const ot__cb *c, int *status, const char *what, char *buf,
                         size_t len);

/* CVODE's error handler (CVErrHandlerFn) with eh_data = the ot__cb: keeps
 * the message in cv_msg; nothing is printed. */
void ot__cb_cvode_error(int code, const char *module, const char *function, char *msg,
                        void *eh_data);

#ifdef __cplusplus
}
#endif

#endif

/* Solver suite, faults: lanes that fail alone (callbacks returning < 0,
 * writing NaN, CVODE giving up), the progress callback, and every refused
 * argument of the problem setters and the solve entry points. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solve_common.h"

/* ---- A problem whose lanes fail on request -------------------------------- */

/* Fault codes, the last parameter of a lane. */
enum {
    F_NONE = 0,
    F_RHS_NEG = 1,  /* rhs returns -1 once t > 1 */
    F_RHS_NAN = 2,  /* rhs writes NaN once t > 2 */
    F_JAC_NEG = 3,  /* jac returns -1 */
    F_INIT_NEG = 4, /* init returns -1 */
    F_OUT_NEG = 5   /* out returns -1 once t > 1.5 */
};

static int code_of(ot_view p, int64_t b)
{
    return (int)ot_view_col_f64(p, b, 0)[p.layout.shape[0] - 1];
}

/* Oscillator x'' = -w^2 x, params (w, code). */
static int osc_fault_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *yb = ot_view_col_f64(y, b, 0), w = ot_view_col_f64(p, b, 0)[0];
        double *fb = ot_view_mut_col_f64(f, b, 0);
        if (code_of(p, b) == F_RHS_NEG && t > 1)
            return -1;
        fb[0] = yb[1];
        fb[1] = -w * w * yb[0];
        if (code_of(p, b) == F_RHS_NAN && t > 2)
            fb[1] = NAN;
    }
    return 0;
}

/* Decay with params (k, a, code): rhs and jac from solve_common.h. */
static int decay_fault_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    for (int64_t b = 0; b < ST_LANES(y); b++)
        if (code_of(p, b) == F_JAC_NEG)
            return -1;
    return st_decay_jac(t, y, p, J, u);
}

static int decay_fault_init(ot_view p, ot_view_mut y0, void *u)
{
    for (int64_t b = 0; b < ST_LANES(y0); b++)
        if (code_of(p, b) == F_INIT_NEG)
            return -1;
    return st_decay_init(p, y0, u);
}

static int decay_fault_out(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        if (code_of(p, b) == F_OUT_NEG && t > 1.5)
            return -1;
        ot_view_mut_col_f64(o, b, 0)[0] = ot_view_col_f64(y, b, 0)[0];
    }
    return 0;
}

/* Lane b of two step records agree up to count (times and values). */
static void assert_steps_equal(const ot_solution *a, const ot_solution *b, int64_t lane,
                               int64_t rows)
{
    const int64_t c = ot_solution_lane_count(a, lane);
    ck_assert_int_eq(ot_solution_lane_count(b, lane), c);
    for (int64_t i = 0; i < c; i++) {
        ck_assert(st_at(ot_solution_ts(a), i, lane, 0) ==
                  st_at(ot_solution_ts(b), i, lane, 0));
        for (int64_t r = 0; r < rows; r++)
            ck_assert(st_y(a, r, i, lane) == st_y(b, r, i, lane));
    }
}

/* ---- Lanes fail alone ----------------------------------------------------- */

enum { FL = 10, FNT = 11, LANE_NEG = 3, LANE_NAN = 5, LANE_SLOW = 7 };

/* Loop 0: dense, 1: steps, with Adams; 2, 3: the same with BDF. Lane 3's
 * rhs returns -1 after t = 1, lane 5's writes NaN after t = 2, lane 7
 * oscillates so fast that it runs out of steps. The same batch without those
 * faults is the reference. */
START_TEST(lanes_fail_alone)
{
    double bad[2 * FL], good[2 * FL], t[FNT];
    for (int64_t b = 0; b < FL; b++) {
        good[2 * b] = bad[2 * b] = 0.5 + 0.1 * (double)b;
        good[2 * b + 1] = bad[2 * b + 1] = F_NONE;
    }
    bad[2 * LANE_NEG + 1] = F_RHS_NEG;
    bad[2 * LANE_NAN + 1] = F_RHS_NAN;
    bad[2 * LANE_SLOW] = 5000.0;
    for (int i = 0; i < FNT; i++)
        t[i] = 0.5 * i;
    const double y0[2] = {1, 0};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 2, osc_fault_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, _i < 2 ? OT_ADAMS : OT_BDF), OT_OK, NULL);
    const int steps = _i % 2;
    ck_assert_status(ot_ode_set_rtol(ode, 1e-8), OT_OK, NULL);
    ck_assert_status(ot_ode_set_max_steps(ode, 1000), OT_OK, NULL);
    ot_solution *sb = NULL, *sg = NULL;
    if (!steps) {
        ck_assert_status(
            ot_solve_dense(ode, st_vec(y0, 2), st_mat(bad, 2, FL), st_vec(t, FNT), &sb),
            OT_ERR_LANES_FAILED, "3 of 10 lanes failed");
        ck_assert_status(
            ot_solve_dense(ode, st_vec(y0, 2), st_mat(good, 2, FL), st_vec(t, FNT), &sg),
            OT_OK, NULL);
    } else {
        ck_assert_status(ot_solve(ode, st_vec(y0, 2), st_mat(bad, 2, FL), 5.0, &sb),
                         OT_ERR_LANES_FAILED, "3 of 10 lanes failed");
        ck_assert_status(ot_solve(ode, st_vec(y0, 2), st_mat(good, 2, FL), 5.0, &sg),
                         OT_OK, NULL);
    }
    ck_assert_ptr_nonnull(sb);
    ck_assert_int_eq(ot_solution_nfailed(sb), 3);
    const ot_tensor *tb = ot_solution_ts(sb);
    const int64_t ntmax = ot_tensor_layout(ot_solution_ys(sb))->shape[1];
    for (int64_t b = 0; b < FL; b++) {
        const int64_t c = ot_solution_lane_count(sb, b);
        const int st = ot_solution_lane_status(sb, b);
        const char *msg = ot_solution_lane_message(sb, b);
        ot_lane_stats s;
        ck_assert_status(ot_solution_lane_stats(sb, b, &s), OT_OK, NULL);
        /* The time of a lane's last good output. */
        const double last = !steps ? t[c - 1] : st_at(tb, c - 1, b, 0);
        if (b != LANE_NEG && b != LANE_NAN && b != LANE_SLOW) {
            ck_assert_int_eq(st, OT_OK);
            ck_assert_str_eq(msg, "");
            if (!steps)
                ck_assert(st_lane_equal(ot_solution_ys(sb), b, ot_solution_ys(sg), b));
            else
                assert_steps_equal(sb, sg, b, 2);
            st_assert_stats_equal(sb, b, sg, b);
            continue;
        }
        if (b == LANE_NEG) {
            ck_assert_msg(st == OT_ERR_CALLBACK, "lane %d status %s: %s", (int)b,
                          ot_status_name(st), msg);
            ck_assert_msg(strstr(msg, "rhs returned -1") != NULL, "message: %s", msg);
            ck_assert(last <= 1.0 && c >= (!steps ? 2 : 10));
        } else if (b == LANE_NAN) {
            ck_assert_msg(st == OT_ERR_CALLBACK, "lane %d status %s: %s", (int)b,
                          ot_status_name(st), msg);
            ck_assert_msg(strstr(msg, "NaN") != NULL, "message: %s", msg);
            ck_assert(last <= 2.0 && c >= (!steps ? 4 : 10));
        } else {
            ck_assert_int_eq(st, OT_ERR_SOLVER);
            ck_assert_msg(strstr(msg, !steps ? "mxstep" : "max_steps = 1000") != NULL,
                          "message: %s", msg);
            ck_assert_int_eq(c, !steps ? 1 : 1001);
            ck_assert(st_y(sb, 0, 0, b) == 1.0 && st_y(sb, 1, 0, b) == 0.0);
        }
        ck_assert(s.final_time == last);
        /* Up to the failure the lane followed the good lane's path. NaN is a
         * recoverable failure: CVODE retries with ever shorter steps, creeping
         * up to t = 2 until max_steps, so the NaN lane's last output (dense)
         * or steps (steps mode) come from that other path. */
        int64_t same = 0;
        while (
            b != LANE_SLOW && same < c &&
            (!steps || st_at(tb, same, b, 0) == st_at(ot_solution_ts(sg), same, b, 0)) &&
            st_y(sb, 0, same, b) == st_y(sg, 0, same, b) &&
            st_y(sb, 1, same, b) == st_y(sg, 1, same, b))
            same++;
        if (b == LANE_NEG)
            ck_assert_msg(same == c,
                          "lane %d: %lld of %lld outputs as without the fault (%s)",
                          (int)b, (long long)same, (long long)c, msg);
        else if (b == LANE_NAN)
            ck_assert_int_ge(same, steps ? 10 : c - 1);
        for (int64_t i = c; i < ntmax; i++)
            ck_assert(isnan(st_y(sb, 0, i, b)) && isnan(st_y(sb, 1, i, b)) &&
                      (!steps || isnan(st_at(tb, i, b, 0))));
    }
    ot_solution_free(sb);
    ot_solution_free(sg);
    ot_ode_free(ode);
}
END_TEST

/* jac, init and out returning -1 fail their lanes only: params (k, a, code),
 * y0 from init. */
START_TEST(jac_init_out_fail_their_lanes)
{
    enum { L = 8, NT = 7 };
    double bad[3 * L], good[3 * L], t[NT];
    for (int64_t b = 0; b < L; b++) {
        good[3 * b] = bad[3 * b] = 0.2 + 0.3 * (double)b;
        good[3 * b + 1] = bad[3 * b + 1] = 1.0 + (double)b;
        good[3 * b + 2] = bad[3 * b + 2] = F_NONE;
    }
    bad[3 * 2 + 2] = F_JAC_NEG;
    bad[3 * 4 + 2] = F_INIT_NEG;
    bad[3 * 6 + 2] = F_OUT_NEG;
    for (int i = 0; i < NT; i++)
        t[i] = 0.1 + 0.5 * i;
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 3, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_jac(ode, decay_fault_jac), OT_OK, NULL);
    ck_assert_status(ot_ode_set_init(ode, decay_fault_init), OT_OK, NULL);
    ck_assert_status(ot_ode_set_out(ode, 1, decay_fault_out), OT_OK, NULL);
    ck_assert_status(ot_ode_set_t0(ode, 0.1), OT_OK, NULL);
    ot_solution *sb = NULL, *sg = NULL;
    ck_assert_status(
        ot_solve_dense(ode, ot_view_absent(), st_mat(bad, 3, L), st_vec(t, NT), &sb),
        OT_ERR_LANES_FAILED, "3 of 8 lanes failed");
    ck_assert_status(
        ot_solve_dense(ode, ot_view_absent(), st_mat(good, 3, L), st_vec(t, NT), &sg),
        OT_OK, NULL);
    for (int64_t b = 0; b < L; b++) {
        const int64_t c = ot_solution_lane_count(sb, b);
        const char *msg = ot_solution_lane_message(sb, b);
        ot_lane_stats s;
        ot_solution_lane_stats(sb, b, &s);
        if (b == 2 || b == 4 || b == 6) {
            ck_assert_int_eq(ot_solution_lane_status(sb, b), OT_ERR_CALLBACK);
            const char *want = b == 2   ? "jac returned -1"
                               : b == 4 ? "init returned -1"
                                        : "out returned -1";
            ck_assert_msg(strstr(msg, want) != NULL, "lane %d: %s", (int)b, msg);
            /* jac fails at the first step (only t0 is out), init before
             * it, out at t = 1.6. */
            ck_assert_int_eq(c, b == 2 ? 1 : b == 4 ? 0 : 3);
            ck_assert(s.final_time == (c ? t[c - 1] : 0.1));
            for (int64_t i = 0; i < c; i++)
                ck_assert(st_y(sb, 0, i, b) == st_y(sg, 0, i, b));
            for (int64_t i = c; i < NT; i++)
                ck_assert(isnan(st_y(sb, 0, i, b)));
        } else {
            ck_assert_int_eq(ot_solution_lane_status(sb, b), OT_OK);
            ck_assert_int_eq(c, NT);
            ck_assert(st_lane_equal(ot_solution_ys(sb), b, ot_solution_ys(sg), b));
            st_assert_stats_equal(sb, b, sg, b);
        }
    }
    ot_solution_free(sb);
    ot_solution_free(sg);
    ot_ode_free(ode);
}
END_TEST

/* ---- Progress ------------------------------------------------------------- */

enum { PL = 23 };
static int64_t progress_done[PL + 4], progress_total[PL + 4];
static int progress_calls, progress_wrong_user;

/* Runs on worker threads (one call at a time): records, asserts nothing.
 * A call with the done of the one before is a poll while lanes run (a
 * chance to cancel; any number of them on a slow machine): not recorded. */
static int record_progress(int64_t done, int64_t total, void *u)
{
    progress_wrong_user += u != &progress_calls;
    if (done == (progress_calls ? progress_done[progress_calls - 1] : 0))
        return 0;
    if (progress_calls < PL + 4) {
        progress_done[progress_calls] = done;
        progress_total[progress_calls] = total;
    }
    progress_calls++;
    return 0;
}

/* Once per lane, done 1..nbatch in order, from two threads; failed lanes
 * count too. */
START_TEST(progress_once_per_lane)
{
    progress_calls = progress_wrong_user = 0;
    double p[3 * PL], t[3] = {0.5, 1, 2};
    for (int64_t b = 0; b < PL; b++) {
        p[3 * b] = 0.1 * (double)(b + 1);
        p[3 * b + 1] = 1.0;
        p[3 * b + 2] = b == 9 ? F_INIT_NEG : F_NONE;
    }
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 3, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_init(ode, decay_fault_init), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, 2), OT_OK, NULL);
    ck_assert_status(ot_ode_set_progress(ode, record_progress, &progress_calls), OT_OK,
                     NULL);
    ot_solution *sol = NULL;
    ck_assert_status(
        ot_solve_dense(ode, ot_view_absent(), st_mat(p, 3, PL), st_vec(t, 3), &sol),
        OT_ERR_LANES_FAILED, "init returned -1");
    ck_assert_int_eq(progress_calls, PL);
    ck_assert_int_eq(progress_wrong_user, 0);
    for (int i = 0; i < PL; i++) {
        ck_assert_int_eq(progress_done[i], i + 1);
        ck_assert_int_eq(progress_total[i], PL);
    }
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

/* ---- Cancel ---------------------------------------------------------------- */

enum { CL = 23 };
typedef struct {
    int64_t cancel_at; /* return nonzero once done >= this */
    int calls, after_cancel, cancelled;
    int64_t last;
} cancel_log;

static int cancel_progress(int64_t done, int64_t total, void *u)
{
    cancel_log *c = u;
    ck_assert_int_eq(total, CL);
    c->after_cancel += c->cancelled;
    if (done == c->last) /* a poll while lanes run (progress.h) */
        return c->cancelled;
    c->calls++;
    ck_assert_int_gt(done, c->last);
    c->last = done;
    c->cancelled = done >= c->cancel_at;
    return c->cancelled;
}

/* y' = -k y (st_decay_rhs), k = 0.1 (b + 1), 23 lanes, mode and blocks as
 * given; outputs at t; the callback cancels once done >= cancel_at. */
static int solve_cancelled(int lockstep, int64_t block, int steps, int64_t cancel_at,
                           const double *t, int nt, cancel_log *log, ot_solution **sol)
{
    static double k[CL], y0[2] = {1, 2};
    for (int64_t b = 0; b < CL; b++)
        k[b] = 0.1 * (double)(b + 1);
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, 2), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-8), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-10), OT_OK, NULL);
    if (lockstep) {
        ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
        ck_assert_status(ot_ode_set_lockstep_block(ode, block), OT_OK, NULL);
    }
    memset(log, 0, sizeof *log);
    log->cancel_at = cancel_at;
    ck_assert_status(ot_ode_set_progress(ode, cancel_progress, log), OT_OK, NULL);
    const int st =
        steps ? ot_solve(ode, st_vec(y0, 2), st_mat(k, 1, CL), t[nt - 1], sol)
              : ot_solve_dense(ode, st_vec(y0, 2), st_mat(k, 1, CL), st_vec(t, nt), sol);
    ot_ode_free(ode);
    return st;
}

/* Every lane either finished (OK, every output, the analytic values) or
 * was cancelled (OT_ERR_CANCELLED, fewer outputs, each of them right, NaN
 * after); returns how many finished. */
static int64_t check_cancelled(const ot_solution *s, const double *t, int nt, int steps)
{
    int64_t finished = 0;
    for (int64_t b = 0; b < CL; b++) {
        const double k = 0.1 * (double)(b + 1);
        const int64_t c = ot_solution_lane_count(s, b);
        const int st = ot_solution_lane_status(s, b);
        if (st == OT_OK) {
            finished++;
            if (!steps)
                ck_assert_int_eq(c, nt);
        } else {
            ck_assert_int_eq(st, OT_ERR_CANCELLED);
            ck_assert_msg(
                strstr(ot_solution_lane_message(s, b), "cancelled by the progress"), "%s",
                ot_solution_lane_message(s, b));
            if (!steps)
                ck_assert_int_lt(c, nt);
        }
        const ot_tensor *ts = ot_solution_ts(s);
        for (int64_t i = 0; i < c; i++) {
            const double ti = steps ? st_at(ts, i, b, 0) : t[i];
            ck_assert_double_eq_tol(st_y(s, 1, i, b), st_decay_exact(1, 2, k, ti), 1e-6);
        }
        if (!steps && c < nt)
            ck_assert(isnan(st_y(s, 0, c, b)));
    }
    return finished;
}

/* Van der Pol, mu = p[0]: stiff, thousands of steps a cycle. */
static int vdp_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *x = ot_view_col_f64(y, b, 0), mu = ot_view_col_f64(p, b, 0)[0];
        double *d = ot_view_mut_col_f64(f, b, 0);
        d[0] = x[1];
        d[1] = mu * (1 - x[0] * x[0]) * x[1] - x[0];
    }
    return 0;
}

typedef struct {
    int calls;
    int64_t first_done;
} first_call;

static int cancel_at_first_call(int64_t done, int64_t total, void *u)
{
    (void)total;
    first_call *c = u;
    if (c->calls++ == 0)
        c->first_done = done;
    return 1;
}

/* Issue 23: cancel was read only where progress is reported (a lane's end,
 * a block's output time), so two long lanes with one output time ran for
 * 17.6 s (lanes mode) or to the end (lockstep) after the callback wanted to
 * stop. The callback is now also called while lanes run (every 20 ms or
 * so, done as it was): here its first call comes before any lane is done,
 * and the lanes stop where they were, far from t_eval, with status
 * OT_ERR_CANCELLED. */
START_TEST(a_cancel_reaches_long_lanes_between_their_outputs)
{
    const double mu[2] = {1000, 900}, y0[2] = {2, 0}, t[1] = {1e7};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, vdp_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, 2), OT_OK, NULL);
    ck_assert_status(ot_ode_set_max_steps(ode, 100000000), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, _i ? OT_LOCKSTEP : OT_LANES), OT_OK, NULL);
    first_call c = {0, -1};
    ck_assert_status(ot_ode_set_progress(ode, cancel_at_first_call, &c), OT_OK, NULL);
    ot_solution *s = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_mat(mu, 1, 2), st_vec(t, 1), &s),
        OT_ERR_CANCELLED, "cancelled by the progress callback");
    ck_assert_int_eq(c.calls, 1);
    ck_assert_int_eq(c.first_done, 0);
    for (int64_t b = 0; b < 2; b++) {
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_ERR_CANCELLED);
        ck_assert_int_eq(ot_solution_lane_count(s, b), 0);
        ot_lane_stats ls;
        ck_assert_status(ot_solution_lane_stats(s, b, &ls), OT_OK, NULL);
        ck_assert_double_lt(ls.final_time, 1e6);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* Lanes mode, two threads: the callback asks to stop at 6 lanes done; no
 * call after that; the lanes that finished are whole, the others cancelled
 * with what they had; the call says so. */
START_TEST(cancel_in_lanes_mode_keeps_what_finished)
{
    const double t[3] = {0.5, 1, 2};
    cancel_log log;
    ot_solution *s = NULL;
    ck_assert_status(solve_cancelled(0, 0, 0, 6, t, 3, &log, &s), OT_ERR_CANCELLED,
                     "cancelled by the progress callback");
    ck_assert_int_eq(log.after_cancel, 0);
    ck_assert_int_eq(log.last, 6);
    const int64_t fin = check_cancelled(s, t, 3, 0);
    ck_assert_int_ge(fin, 6);
    ck_assert_int_lt(fin, CL);
    ot_solution_free(s);
}
END_TEST

/* Lockstep, one block of every lane: progress comes at each output time
 * (23 lanes x 1/4 of the outputs: 5, 11, 17, 23); cancelling at the first
 * stops the block there: every lane cancelled with one output. */
START_TEST(cancel_in_lockstep_stops_at_an_output_time)
{
    const double t[4] = {0.5, 1, 2, 3};
    cancel_log log;
    ot_solution *s = NULL;
    ck_assert_status(solve_cancelled(1, 0, 0, 1, t, 4, &log, &s), OT_ERR_CANCELLED,
                     "23 of 23 lanes did not finish");
    ck_assert_int_eq(log.calls, 1);
    ck_assert_int_eq(log.last, 5);
    ck_assert_int_eq(check_cancelled(s, t, 4, 0), 0);
    for (int64_t b = 0; b < CL; b++)
        ck_assert_int_eq(ot_solution_lane_count(s, b), 1);
    ot_solution_free(s);
    /* Not cancelled: progress at every output, ending at every lane. */
    ck_assert_status(solve_cancelled(1, 0, 0, CL + 1, t, 4, &log, &s), OT_OK, NULL);
    ck_assert_int_eq(log.calls, 4);
    ck_assert_int_eq(log.last, CL);
    ot_solution_free(s);
}
END_TEST

/* Lockstep in blocks of 4 on two threads, and every-step output in both
 * modes: cancelled lanes keep their steps so far, blocks never started have
 * none beyond t0. */
START_TEST(cancel_blocks_and_every_step_output)
{
    const double t[4] = {0.5, 1, 2, 3};
    cancel_log log;
    ot_solution *s = NULL;
    ck_assert_status(solve_cancelled(1, 4, 0, 8, t, 4, &log, &s), OT_ERR_CANCELLED, NULL);
    const int64_t fin = check_cancelled(s, t, 4, 0);
    ck_assert_int_lt(fin, CL);
    ck_assert_int_eq(ot_solution_lane_count(s, CL - 1),
                     0); /* the last block: never run */
    ot_solution_free(s);
    for (int lockstep = 0; lockstep < 2; lockstep++) {
        ck_assert_status(
            solve_cancelled(lockstep, 0, 1, lockstep ? 1 : 3, t, 4, &log, &s),
            OT_ERR_CANCELLED, NULL);
        ck_assert_int_lt(check_cancelled(s, t, 4, 1), CL);
        ot_solution_free(s);
    }
}
END_TEST

/* ---- Refused solve arguments ---------------------------------------------- */

typedef struct {
    const char *what;
    int want;
    const char *needle;
} refusal;

static const refusal solve_refusals[] = {
    {"NULL ode", OT_ERR_ARG, "ode: NULL"},
    {"NULL out (dense)", OT_ERR_ARG, "out: NULL"},
    {"NULL out (steps)", OT_ERR_ARG, "out: NULL"},
    {"NULL out (sens)", OT_ERR_ARG, "out: NULL"},
    {"y0 with 3 rows", OT_ERR_SHAPE, "y0: shape is [3, 4]"},
    {"y0 4 lanes, params 5", OT_ERR_SHAPE, "params: shape is [1, 5]"},
    {"params absent, np = 1", OT_ERR_ARG, "params: absent"},
    {"y0 absent, no init", OT_ERR_ARG, "y0: absent"},
    {"t_eval repeats", OT_ERR_VALUE, "t_eval: t_eval[2] = 1"},
    {"t_eval decreases", OT_ERR_VALUE, "t_eval: t_eval[2] = 1"},
    {"t_eval NaN", OT_ERR_VALUE, "t_eval: t_eval[1] is nan"},
    {"t_eval Inf", OT_ERR_VALUE, "t_eval: t_eval[2] is inf"},
    {"t_eval before t0", OT_ERR_VALUE, "before t0"},
    {"t_eval [1, 3] for 4 lanes", OT_ERR_SHAPE,
     "t_eval: shape [1, 3]; expected [nt], [nt, 1] or [nt, 4]"},
    {"t_eval empty", OT_ERR_SHAPE, "t_eval: needs shape [nt]"},
    {"t_eval absent", OT_ERR_ARG, "t_eval: absent"},
    /* every lane's (broadcast): refused; a lane's own fails that lane
     * alone (check_lanes_alone.c) */
    {"NaN in y0", OT_ERR_VALUE, "y0: [1, 0] is nan"},
    {"Inf in params", OT_ERR_VALUE, "params: [0, 0] is inf"},
    {"NaN in f32 y0", OT_ERR_VALUE, "y0: [0, 0] is nan"},
    {"y0 with 0 lanes", OT_ERR_SHAPE, "y0: has 0 lanes"},
    {"params with 0 lanes", OT_ERR_SHAPE, "params: has 0 lanes"},
    {"final_time == t0", OT_ERR_VALUE, "final_time: 0"},
    {"final_time < t0", OT_ERR_VALUE, "final_time: -1"},
    {"final_time NaN", OT_ERR_VALUE, "final_time: nan"},
    {"sens with np = 0", OT_ERR_ARG, "nparams >= 1"},
    {"y0 on a CUDA device", OT_ERR_DEVICE, "y0: device memory"},
};

/* Calls the solve of case i; ode is a decay problem (n 2, np 1, t0 0). */
static int refused_call(int i, ot_ode *ode, ot_solution **out)
{
    static double y0[8] = {1, 2, 1, 2, 1, 2, 1, 2}, k[5] = {0.1, 0.2, 0.3, 0.4, 0.5};
    static double t[3] = {0, 1, 2}, bad_t[3], bad_v[8];
    static float y0f[8] = {1, 2, 1, 2, 1, 2, 1, 2};
    const ot_view Y = st_mat(y0, 2, 4), K = st_mat(k, 1, 4), T = st_vec(t, 3);
    memcpy(bad_t, t, sizeof t);
    memcpy(bad_v, y0, sizeof y0);
    ot_ode *np0 = NULL;
    int st;
    switch (i) {
    case 0:
        return ot_solve_dense(NULL, Y, K, T, out);
    case 1:
        return ot_solve_dense(ode, Y, K, T, NULL);
    case 2:
        return ot_solve(ode, Y, K, 1.0, NULL);
    case 3:
        return ot_solve_fwd_sens(ode, Y, K, T, NULL);
    case 4:
        return ot_solve_dense(ode, st_mat(y0, 3, 4), K, T, out);
    case 5:
        return ot_solve_dense(ode, Y, st_mat(k, 1, 5), T, out);
    case 6:
        return ot_solve_dense(ode, Y, ot_view_absent(), T, out);
    case 7:
        return ot_solve_dense(ode, ot_view_absent(), K, T, out);
    case 8:
        bad_t[2] = 1;
        return ot_solve_dense(ode, Y, K, st_vec(bad_t, 3), out);
    case 9:
        bad_t[1] = 1.5, bad_t[2] = 1;
        return ot_solve_dense(ode, Y, K, st_vec(bad_t, 3), out);
    case 10:
        bad_t[1] = NAN;
        return ot_solve_dense(ode, Y, K, st_vec(bad_t, 3), out);
    case 11:
        bad_t[2] = INFINITY;
        return ot_solve_dense(ode, Y, K, st_vec(bad_t, 3), out);
    case 12:
        ck_assert_status(ot_ode_set_t0(ode, 0.5), OT_OK, NULL);
        return ot_solve_dense(ode, Y, K, T, out);
    case 13:
        return ot_solve_dense(ode, Y, K, st_mat(t, 1, 3), out);
    case 14:
        return ot_solve_dense(ode, Y, K, st_vec(t, 0), out);
    case 15:
        return ot_solve_dense(ode, Y, K, ot_view_absent(), out);
    case 16:
        bad_v[1] = NAN;
        return ot_solve_dense(ode, st_vec(bad_v, 2), K, T, out);
    case 17:
        bad_v[0] = INFINITY;
        return ot_solve_dense(ode, Y, st_vec(bad_v, 1), T, out);
    case 18:
        y0f[0] = NAN;
        return ot_solve_dense(ode, st_view_t(y0f, OT_F32, 2, 1), K, T, out);
    case 19:
        return ot_solve_dense(ode, st_mat(y0, 2, 0), st_vec(k, 1), T, out);
    case 20:
        return ot_solve_dense(ode, st_vec(y0, 2), st_mat(k, 1, 0), T, out);
    case 21:
        return ot_solve(ode, Y, K, 0.0, out);
    case 22:
        return ot_solve(ode, Y, K, -1.0, out);
    case 23:
        return ot_solve(ode, Y, K, NAN, out);
    case 24:
        ck_assert_status(ot_ode_new(&np0, 2, 0, st_decay_rhs, NULL), OT_OK, NULL);
        st = ot_solve_fwd_sens(np0, Y, ot_view_absent(), T, out);
        ot_ode_free(np0);
        return st;
    default: {
        ot_view dev;
        const int64_t shape[2] = {2, 4};
        const ot_device cuda = {OT_CUDA, 0};
        ck_assert_status(ot_view_make(&dev, y0, OT_F64, cuda, 2, shape, NULL), OT_OK,
                         NULL);
        return ot_solve_dense(ode, dev, K, T, out);
    }
    }
}

START_TEST(solve_refuses_bad_input)
{
    const refusal *c = &solve_refusals[_i];
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    static char untouched;
    ot_solution *sol = (ot_solution *)(void *)&untouched;
    ot_clear_error();
    const int st = refused_call(_i, ode, &sol);
    ck_assert_msg(st == c->want, "%s: got %s, expected %s (%s)", c->what,
                  ot_status_name(st), ot_status_name(c->want), ot_last_error());
    ck_assert_msg(strstr(ot_last_error(), c->needle) != NULL,
                  "%s: message \"%s\" lacks \"%s\"", c->what, ot_last_error(), c->needle);
    ck_assert_ptr_eq(sol, &untouched);
    ot_ode_free(ode);
}
END_TEST

/* ---- Refused problem settings --------------------------------------------- */

static int ignore_out(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)t, (void)y, (void)p, (void)o, (void)u;
    return 0;
}

START_TEST(ode_new_refusals)
{
    ot_ode *keep = (ot_ode *)(void *)&keep, *ode = keep;
    ck_assert_status(ot_ode_new(&ode, 0, 1, st_decay_rhs, NULL), OT_ERR_ARG,
                     "nstates: 0");
    ck_assert_status(ot_ode_new(&ode, -3, 1, st_decay_rhs, NULL), OT_ERR_ARG,
                     "nstates: -3");
    ck_assert_status(ot_ode_new(&ode, 2, -1, st_decay_rhs, NULL), OT_ERR_ARG,
                     "nparams: -1");
    ck_assert_status(ot_ode_new(&ode, 2, 1, NULL, NULL), OT_ERR_ARG, "rhs: NULL");
    ck_assert_status(ot_ode_new(NULL, 2, 1, st_decay_rhs, NULL), OT_ERR_ARG,
                     "out is NULL");
    ck_assert_ptr_eq(ode, keep);
    ck_assert_status(ot_ode_new(&ode, 2, 0, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_int_eq(ot_ode_nstates(ode), 2);
    ck_assert_int_eq(ot_ode_nparams(ode), 0);
    ot_ode_free(ode);
    ot_ode_free(NULL);
}
END_TEST

/* Every refused setting names itself and leaves the problem as it was: the
 * solve afterwards equals the one before. */
START_TEST(setters_refuse_and_keep_old_values)
{
    const double y0[2] = {1, 2}, k[1] = {0.7}, t[3] = {0, 1, 2};
    const double atol_bad_shape[3] = {1, 1, 1}, atol_neg[2] = {1e-8, -1e-8};
    const double atol_nan[2] = {NAN, 1e-8};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-5), OT_OK, NULL);
    ot_solution *before = NULL, *after = NULL;
    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_vec(k, 1), st_vec(t, 3), &before), OT_OK,
        NULL);

    ck_assert_status(ot_ode_set_rtol(ode, -1e-6), OT_ERR_VALUE, "rtol");
    ck_assert_status(ot_ode_set_rtol(ode, NAN), OT_ERR_VALUE, "rtol");
    ck_assert_status(ot_ode_set_rtol(ode, INFINITY), OT_ERR_VALUE, "rtol");
    ck_assert_status(ot_ode_set_atol(ode, -1.0), OT_ERR_VALUE, "atol");
    ck_assert_status(ot_ode_set_atol(ode, NAN), OT_ERR_VALUE, "atol");
    ck_assert_status(ot_ode_set_atol_vector(ode, st_vec(atol_bad_shape, 3)), OT_ERR_SHAPE,
                     "atol: needs shape [2]");
    ck_assert_status(ot_ode_set_atol_vector(ode, st_vec(atol_neg, 2)), OT_ERR_VALUE,
                     "atol: atol[1]");
    ck_assert_status(ot_ode_set_atol_vector(ode, st_vec(atol_nan, 2)), OT_ERR_VALUE,
                     "atol: atol[0]");
    ck_assert_status(ot_ode_set_threads(ode, -1), OT_ERR_VALUE, "threads");
    ck_assert_status(ot_ode_set_method(ode, (ot_method)0), OT_ERR_ARG, "method");
    ck_assert_status(ot_ode_set_method(ode, (ot_method)(OT_METHOD_LAST + 1)), OT_ERR_ARG,
                     "method");
    ck_assert_status(ot_ode_set_mode(ode, (ot_mode)9), OT_ERR_ARG, "mode");
    ck_assert_status(ot_ode_set_out(ode, 2, NULL), OT_ERR_ARG, "nout");
    ck_assert_status(ot_ode_set_out(ode, 0, ignore_out), OT_ERR_ARG, "nout");
    ck_assert_status(ot_ode_set_out(ode, -1, ignore_out), OT_ERR_ARG, "nout");
    ck_assert_status(ot_ode_set_roots(ode, 1, NULL), OT_ERR_ARG, "nroots");
    ck_assert_status(ot_ode_set_max_steps(ode, 0), OT_ERR_VALUE, "max_steps");
    ck_assert_status(ot_ode_set_max_steps(ode, -5), OT_ERR_VALUE, "max_steps");
    ck_assert_status(ot_ode_set_output_dtype(ode, (ot_dtype)7), OT_ERR_DTYPE,
                     "output_dtype");
    ck_assert_status(ot_ode_set_t0(ode, NAN), OT_ERR_VALUE, "t0");
    ck_assert_status(ot_ode_set_first_step(ode, -0.1), OT_ERR_VALUE, "first_step");
    ck_assert_status(ot_ode_set_max_step(ode, INFINITY), OT_ERR_VALUE, "max_step");
    ck_assert_status(ot_ode_set_sens_tolerances(ode, -1, 0), OT_ERR_VALUE, "sens_rtol");
    ck_assert_status(ot_ode_set_sens_tolerances(ode, 0, NAN), OT_ERR_VALUE, "sens_atol");
    ck_assert_status(ot_ode_set_rtol(NULL, 1e-6), OT_ERR_ARG, "ode is NULL");
    ck_assert_status(ot_ode_set_jac(NULL, NULL), OT_ERR_ARG, "ode is NULL");

    ck_assert_status(
        ot_solve_dense(ode, st_vec(y0, 2), st_vec(k, 1), st_vec(t, 3), &after), OT_OK,
        NULL);
    ck_assert(memcmp(ot_tensor_layout(ot_solution_ys(before))->data,
                     ot_tensor_layout(ot_solution_ys(after))->data,
                     st_bytes(ot_solution_ys(before))) == 0);
    st_assert_stats_equal(before, 0, after, 0);
    ot_solution_free(before);
    ot_solution_free(after);
    ot_ode_free(ode);
}
END_TEST

/* Per-lane accessors refuse lanes out of range. */
START_TEST(solution_accessors_refuse)
{
    const double y0[2] = {1, 2}, k[1] = {0.7}, t[1] = {1};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_dense(ode, st_vec(y0, 2), st_vec(k, 1), st_vec(t, 1), &sol),
                     OT_OK, NULL);
    ot_lane_stats s;
    int idx = 7;
    double when = 0;
    ck_assert_status(ot_solution_lane_status(sol, 1), OT_ERR_ARG,
                     "lane 1 is outside 0..0");
    ck_assert_status(ot_solution_lane_stats(sol, -1, &s), OT_ERR_ARG, "lane -1");
    ck_assert_status(ot_solution_lane_stats(sol, 0, NULL), OT_ERR_ARG, "out is NULL");
    ck_assert_status(ot_solution_lane_root(sol, 2, &idx, &when), OT_ERR_ARG, "lane 2");
    ck_assert_status(ot_solution_lane_root(sol, 0, &idx, &when), OT_OK, NULL);
    ck_assert(idx == -1 && isnan(when));
    ck_assert_int_eq(ot_solution_lane_count(sol, 0), 1);
    ck_assert_int_eq(ot_solution_nsens(sol), 0);
    ck_assert_ptr_null(ot_solution_sens(sol, 0));
    ot_solution_free(sol);
    ot_solution_free(NULL);
    ot_ode_free(ode);
}
END_TEST

Suite *solve_faults_suite(void)
{
    Suite *s = suite_create("solve_faults");
    TCase *tc = tcase_create("lanes fail alone");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, lanes_fail_alone, 0, 4);
    tcase_add_test(tc, jac_init_out_fail_their_lanes);
    tcase_add_test(tc, progress_once_per_lane);
    tcase_add_test(tc, cancel_in_lanes_mode_keeps_what_finished);
    tcase_add_test(tc, cancel_in_lockstep_stops_at_an_output_time);
    tcase_add_loop_test(tc, a_cancel_reaches_long_lanes_between_their_outputs, 0, 2);
    tcase_add_test(tc, cancel_blocks_and_every_step_output);
    suite_add_tcase(s, tc);
    tc = tcase_create("refusals");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, solve_refuses_bad_input, 0,
                        (int)(sizeof solve_refusals / sizeof *solve_refusals));
    tcase_add_test(tc, ode_new_refusals);
    tcase_add_test(tc, setters_refuse_and_keep_old_values);
    tcase_add_test(tc, solution_accessors_refuse);
    suite_add_tcase(s, tc);
    return s;
}

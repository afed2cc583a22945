/* The fault model shared by the numerical-fault suites (check_faults_numeric.c,
 * check_faults_scale.c): a decay problem whose lanes misbehave on request,
 * and assertions on lanes that failed or did not. */
#ifndef OT_TESTS_FAULTS_MODEL_H
#define OT_TESTS_FAULTS_MODEL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solve_common.h"

/* ---- A decay problem whose lanes misbehave on request ----------------------
 * y_i' = -(i + 1) k y_i, y(0) = (1, 1); params (k, code, id): from t > tf
 * of lane id the lane's callbacks do what code says. tf is kept out of the
 * parameters, where sensitivity difference quotients would perturb it. */
enum { P_K, P_CODE, P_ID, NP };
enum {
    F_NONE,
    F_RHS_NEG,      /* rhs returns -1 */
    F_RHS_POS,      /* rhs returns +1, for good */
    F_RHS_POS_ONCE, /* rhs returns +1 once */
    F_RHS_NAN,      /* rhs writes NaN to dydt[1] */
    F_RHS_PINF,     /* rhs writes +Inf to dydt[0] */
    F_RHS_NINF,     /* rhs writes -Inf to dydt[1] */
    F_JAC_NAN,      /* jac writes NaN to J[1, 1] (at any t) */
    F_INIT_NAN,     /* init writes NaN to y0[1] */
    F_OUT_INF,      /* out writes +Inf to o[1] */
    F_ROOT_NAN,     /* root writes NaN to g[0] */
    F_ROOT_STOP,    /* root g = t - tf: the lane stops at tf */
    F_KINDS
};

enum { MAXL = 256, NT = 9 };
static const double T_END = 2.0, HMAX = 0.1; /* t_eval 0, 0.25, .., T_END */
static unsigned char fired[MAXL];            /* F_RHS_POS_ONCE, per lane id */
static double tf_of[MAXL];                   /* fault time, per lane id */

/* Params are doubles; CVODES perturbs them for difference quotients, so
 * codes and ids are rounded, not truncated. */
static inline int code_of(ot_view p, int64_t b)
{
    return (int)lround(ot_view_col_f64(p, b, 0)[P_CODE]);
}

static inline int code_at(ot_view p, int64_t b, double t)
{
    return t > tf_of[lround(ot_view_col_f64(p, b, 0)[P_ID])] ? code_of(p, b) : F_NONE;
}

static inline int fm_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double *yb = ot_view_col_f64(y, b, 0), k = ot_view_col_f64(p, b, 0)[P_K];
        double *fb = ot_view_mut_col_f64(f, b, 0);
        fb[0] = -k * yb[0];
        fb[1] = -2.0 * k * yb[1];
        switch (code_at(p, b, t)) {
        case F_RHS_NEG:
            return -1;
        case F_RHS_POS:
            return 1;
        case F_RHS_POS_ONCE: {
            unsigned char *once = &fired[lround(ot_view_col_f64(p, b, 0)[P_ID])];
            if (!*once) {
                *once = 1;
                return 1;
            }
            break;
        }
        case F_RHS_NAN:
            fb[1] = NAN;
            break;
        case F_RHS_PINF:
            fb[0] = INFINITY;
            break;
        case F_RHS_NINF:
            fb[1] = -INFINITY;
            break;
        default:
            break;
        }
    }
    return 0;
}

static inline int fm_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double k = ot_view_col_f64(p, b, 0)[P_K];
        ot_view_mut_col_f64(J, 0, b)[0] = -k;
        ot_view_mut_col_f64(J, 1, b)[1] = code_of(p, b) == F_JAC_NAN ? NAN : -2.0 * k;
    }
    return 0;
}

static inline int fm_init(ot_view p, ot_view_mut y0, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(y0); b++) {
        double *y = ot_view_mut_col_f64(y0, b, 0);
        y[0] = 1.0;
        y[1] = code_of(p, b) == F_INIT_NAN ? NAN : 1.0;
    }
    return 0;
}

static inline int fm_out(double t, ot_view y, ot_view p, ot_view_mut o, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        double *ob = ot_view_mut_col_f64(o, b, 0);
        memcpy(ob, ot_view_col_f64(y, b, 0), 2 * sizeof *ob);
        if (code_at(p, b, t) == F_OUT_INF)
            ob[1] = INFINITY;
    }
    return 0;
}

static inline int fm_root(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++) {
        const double tf = tf_of[lround(ot_view_col_f64(p, b, 0)[P_ID])];
        double *gb = ot_view_mut_col_f64(g, b, 0);
        gb[0] = code_of(p, b) == F_ROOT_STOP     ? t - tf
                : code_at(p, b, t) == F_ROOT_NAN ? NAN
                                                 : 1.0;
    }
    return 0;
}

static inline double fm_exact(int64_t i, double k, double t)
{
    return exp(-(double)(i + 1) * k * t);
}

static inline ot_ode *fm_ode(ot_mode mode, ot_method method, int kind)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, NP, fm_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, 1e-8), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-10), OT_OK, NULL);
    /* With steps of at most HMAX, every output up to tf - HMAX comes from
     * steps that never looked past tf: a fault cannot have lost it. */
    ck_assert_status(ot_ode_set_max_step(ode, HMAX), OT_OK, NULL);
    ck_assert_status(ot_ode_set_max_steps(ode, 2000), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, 2), OT_OK, NULL);
    if (method == OT_BDF)
        ck_assert_status(ot_ode_set_jac(ode, fm_jac), OT_OK, NULL);
    if (kind == F_INIT_NAN)
        ck_assert_status(ot_ode_set_init(ode, fm_init), OT_OK, NULL);
    if (kind == F_OUT_INF)
        ck_assert_status(ot_ode_set_out(ode, 2, fm_out), OT_OK, NULL);
    if (kind == F_ROOT_NAN || kind == F_ROOT_STOP)
        ck_assert_status(ot_ode_set_roots(ode, 1, fm_root), OT_OK, NULL);
    return ode;
}

static inline void fm_lane(double *p, int64_t b, double k, int code, double tf)
{
    p[NP * b + P_K] = k;
    p[NP * b + P_CODE] = code;
    p[NP * b + P_ID] = (double)b;
    tf_of[b] = tf;
}

static inline int fm_code(const double *p, int64_t b) { return (int)p[NP * b + P_CODE]; }

/* Lanes of p [NP, nb] whose code is F_NONE (all: keep_faulty) into q, with
 * every code cleared; returns their number. */
static inline int64_t fm_select(const double *p, int64_t nb, int keep_faulty, double *q)
{
    int64_t m = 0;
    for (int64_t b = 0; b < nb; b++)
        if (keep_faulty || fm_code(p, b) == F_NONE) {
            memcpy(q + NP * m, p + NP * b, NP * sizeof *q);
            q[NP * m++ + P_CODE] = F_NONE;
        }
    return m;
}

enum { DENSE, STEPS, SENS };

/* Solves lanes p [NP, nb] at t_eval 0, 0.25, .., 2 (or to 2 for STEPS). */
static inline int fm_run(const ot_ode *ode, int how, int kind, const double *p,
                         int64_t nb, ot_solution **out)
{
    static const double y0[2] = {1, 1};
    double t[NT];
    for (int i = 0; i < NT; i++)
        t[i] = 0.25 * i;
    memset(fired, 0, sizeof fired);
    const ot_view Y = kind == F_INIT_NAN ? ot_view_absent() : st_vec(y0, 2);
    const ot_view P = st_mat(p, NP, nb), T = st_vec(t, NT);
    *out = NULL;
    return how == STEPS  ? ot_solve(ode, Y, P, T_END, out)
           : how == SENS ? ot_solve_fwd_sens(ode, Y, P, T, out)
                         : ot_solve_dense(ode, Y, P, T, out);
}

/* Time of output i of lane b (t_eval, or the lane's step times). */
static inline double fm_t(const ot_solution *s, int how, int64_t i, int64_t b)
{
    return how == STEPS ? st_at(ot_solution_ts(s), i, b, 0) : 0.25 * (double)i;
}

/* How many leading outputs of lane ba of a and bb of b hold the same bytes
 * (times too, for steps), up to a's count. */
static inline int64_t fm_same(const ot_solution *a, int64_t ba, const ot_solution *b,
                              int64_t bb, int how)
{
    const int64_t c = ot_solution_lane_count(a, ba);
    int64_t i = 0;
    for (; i < c && i < ot_solution_lane_count(b, bb); i++) {
        const double ta = fm_t(a, how, i, ba), tb = fm_t(b, how, i, bb);
        const double x[2] = {st_y(a, 0, i, ba), st_y(a, 1, i, ba)};
        const double y[2] = {st_y(b, 0, i, bb), st_y(b, 1, i, bb)};
        if (memcmp(&ta, &tb, sizeof ta) || memcmp(x, y, sizeof x))
            break;
        for (int64_t j = 0; j < ot_solution_nsens(a); j++)
            for (int r = 0; r < 2; r++)
                if (st_at(ot_solution_sens(a, j), r, i, ba) !=
                    st_at(ot_solution_sens(b, j), r, i, bb))
                    return i;
    }
    return i;
}

/* Lane ba of a is lane bb of b: every output, the count and the statistics. */
static inline void fm_assert_lane_same(const ot_solution *a, int64_t ba,
                                       const ot_solution *b, int64_t bb, int how)
{
    ck_assert_int_eq(ot_solution_lane_status(a, ba), OT_OK);
    ck_assert_int_eq(ot_solution_lane_count(a, ba), ot_solution_lane_count(b, bb));
    ck_assert_msg(fm_same(a, ba, b, bb, how) == ot_solution_lane_count(a, ba),
                  "lane %lld differs from lane %lld of the run without faults",
                  (long long)ba, (long long)bb);
    st_assert_stats_equal(a, ba, b, bb);
}

/* NaN in every output of lane b from i on (times too, for steps; and the
 * sensitivities). */
static inline void fm_assert_nan_from(const ot_solution *s, int64_t b, int64_t i)
{
    const ot_layout *l = ot_tensor_layout(ot_solution_ys(s));
    const int steps = ot_tensor_layout(ot_solution_ts(s))->ndim == 2;
    for (; i < l->shape[1]; i++) {
        ck_assert(isnan(st_y(s, 0, i, b)) && isnan(st_y(s, 1, i, b)));
        ck_assert(!steps || isnan(st_at(ot_solution_ts(s), i, b, 0)));
        for (int64_t j = 0; j < ot_solution_nsens(s); j++)
            ck_assert(isnan(st_at(ot_solution_sens(s, j), 0, i, b)) &&
                      isnan(st_at(ot_solution_sens(s, j), 1, i, b)));
    }
}

/* Every output of lane b before its count within 1e-6 of the exact one. */
static inline void fm_assert_exact(const ot_solution *s, int64_t b, double k, int how)
{
    for (int64_t i = 0; i < ot_solution_lane_count(s, b); i++)
        for (int r = 0; r < 2; r++) {
            const double want = fm_exact(r, k, fm_t(s, how, i, b));
            ck_assert_msg(fabs(st_y(s, r, i, b) - want) <= 1e-6,
                          "lane %lld y%d(%g) = %.12g, exact %.12g", (long long)b, r,
                          fm_t(s, how, i, b), st_y(s, r, i, b), want);
        }
}

/* The time written after "at t = " that follows needle in msg. */
static inline double msg_time(const char *msg, const char *needle)
{
    const char *at = strstr(msg, needle);
    ck_assert_msg(at != NULL, "message \"%s\" lacks \"%s\"", msg, needle);
    at = strstr(at, "at t = ");
    ck_assert_msg(at != NULL, "message \"%s\": no time after \"%s\"", msg, needle);
    return strtod(at + 7, NULL);
}

/* The cause of a fault, as every message names it. */
static inline const char *cause_of(int code)
{
    switch (code) {
    case F_RHS_NEG:
        return "rhs returned -1";
    case F_RHS_POS:
        return "rhs returned 1";
    case F_JAC_NAN:
        return "jac wrote NaN or Inf";
    case F_INIT_NAN:
        return "init wrote NaN or Inf";
    case F_OUT_INF:
        return "out wrote NaN or Inf";
    case F_ROOT_NAN:
        return "root wrote NaN or Inf";
    default:
        return "rhs wrote NaN or Inf";
    }
}

/* Lanes mode, lane b of bad was given fault code from tf on; good is the
 * same batch without faults. The lane reports the cause and when; its
 * outputs are the good lane's up to its last good time, NaN after. */
static inline void fm_assert_failed_lane(const ot_solution *bad, const ot_solution *good,
                                         int64_t b, int code, double tf, int how)
{
    const char *msg = ot_solution_lane_message(bad, b);
    const int st = ot_solution_lane_status(bad, b);
    ck_assert_msg(st == OT_ERR_CALLBACK, "lane %lld: %s: %s", (long long)b,
                  ot_status_name(st), msg);
    const char *cause = cause_of(code);
    ck_assert_msg(strstr(msg, cause) != NULL, "lane %lld: \"%s\" lacks \"%s\"",
                  (long long)b, msg, cause);
    const int64_t c = ot_solution_lane_count(bad, b),
                  same = fm_same(bad, b, good, b, how);
    ot_lane_stats s;
    ck_assert_status(ot_solution_lane_stats(bad, b, &s), OT_OK, NULL);
    ck_assert(s.final_time == (c ? fm_t(bad, how, c - 1, b) : 0.0));
    fm_assert_nan_from(bad, b, c);
    if (code == F_INIT_NAN || code == F_JAC_NAN) { /* before the first step */
        ck_assert_int_eq(c, code == F_INIT_NAN ? 0 : 1);
        ck_assert_int_eq(same, c);
        return;
    }
    ck_assert_msg(msg_time(msg, cause) >= tf * (1 - 1e-5), "lane %lld, tf %g: %s",
                  (long long)b, tf, msg);
    ck_assert_msg(fm_t(bad, how, c - 1, b) <= tf, "lane %lld, tf %g: output at %g",
                  (long long)b, tf, fm_t(bad, how, c - 1, b));
    if (how != STEPS && c < NT)
        ck_assert_msg(0.25 * (double)c > tf - HMAX, "lane %lld, tf %g: lost t = %g",
                      (long long)b, tf, 0.25 * (double)c);
    /* A return < 0 stops at once: every output is the good lane's. A
     * recoverable fault makes CVODE retry shorter steps up to tf, so the
     * last outputs may come from those; but a step that starts by
     * tf - HMAX never looks past tf, so what it and the steps before it
     * gave is the good lane's. */
    const int at_once = code == F_RHS_NEG || code == F_OUT_INF || code == F_ROOT_NAN;
    int64_t safe = 0;
    while (safe < ot_solution_lane_count(good, b) &&
           fm_t(good, how, safe, b) <= tf - HMAX)
        safe++;
    if (how == STEPS && safe < ot_solution_lane_count(good, b))
        safe++;
    ck_assert_msg(same >= (at_once ? c : safe),
                  "lane %lld: %lld of %lld outputs as without the fault, %lld safe (%s)",
                  (long long)b, (long long)same, (long long)c, (long long)safe, msg);
}

#endif

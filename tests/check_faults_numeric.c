/* Numerical faults (issue 6, item 5), in both modes: callbacks that write NaN
 * or +-Inf, return < 0 or > 0 (once, or for good), at one lane or at
 * seeded-random lanes and times; jac, init, out and root faults; a lane that
 * blows up in finite time; output times from 1e-300 to 1e300; every lane
 * failing; one lane failing among 100,000.
 *
 * The contracts tested (include/odetensor/ode.h, README "Solving"):
 * - OT_LANES: a faulty lane fails alone with OT_ERR_CALLBACK (or
 *   OT_ERR_SOLVER) and a message naming the callback, what it did and when;
 *   its outputs up to its last good time are those of the lane without the
 *   fault, NaN after; every other lane is bit for bit what a run without the
 *   faulty lanes gives, statistics included.
 * - OT_LOCKSTEP (issue 22): the same, except that the other lanes shared
 *   their steps with the faulty one until it left its block: each finishes
 *   with OT_OK and meets its tolerance against the analytic solution, and a
 *   faulty lane's outputs before its fault are bit for bit those of the
 *   batch without the fault. A > 0 return once is retried and the batch
 *   goes on. */
#include "faults_model.h"

/* ---- One faulty lane, every kind, both modes ------------------------------ */

static const int KINDS[] = {F_RHS_NEG,  F_RHS_POS, F_RHS_POS_ONCE, F_RHS_NAN, F_RHS_PINF,
                            F_RHS_NINF, F_JAC_NAN, F_INIT_NAN,     F_OUT_INF, F_ROOT_NAN};
enum { NKINDS = sizeof KINDS / sizeof *KINDS, L1 = 12, F1 = 5 };

/* The message detail both modes give: which element of which lane was
 * written NaN or Inf (one rule, kit/callback.c). */
static const char *fault_detail(int code)
{
    switch (code) {
    case F_RHS_NAN:
    case F_RHS_NINF:
        return "to dydt[1] of lane 5";
    case F_RHS_PINF:
        return "to dydt[0] of lane 5";
    case F_JAC_NAN:
        return "to J[3] of lane 5"; /* J[1, 1], column-major */
    case F_INIT_NAN:
        return "init wrote NaN or Inf to y0[1] of lane 5";
    case F_OUT_INF:
        return "to o[1] of lane 5";
    case F_ROOT_NAN:
        return "to g[0] of lane 5";
    default:
        return " at t = ";
    }
}

START_TEST(one_faulty_lane)
{
    const int code = KINDS[_i % NKINDS], lock = _i >= NKINDS;
    const double tf = 1.1;
    double p[NP * L1], all_good[NP * L1], rest[NP * L1];
    for (int64_t b = 0; b < L1; b++) /* lane F1 is a copy of lane 0, faulty */
        fm_lane(p, b, b == F1 ? 0.5 : 0.5 + 0.1 * (double)b, b == F1 ? code : F_NONE, tf);
    fm_select(p, L1, 1, all_good);
    ck_assert_int_eq(fm_select(p, L1, 0, rest), L1 - 1);
    ot_ode *ode = fm_ode(lock ? OT_LOCKSTEP : OT_LANES, OT_BDF, code);
    ot_solution *sb, *sg, *sr;
    const int st = fm_run(ode, DENSE, code, p, L1, &sb);
    ck_assert_status(fm_run(ode, DENSE, code, all_good, L1, &sg), OT_OK, NULL);
    ck_assert_status(fm_run(ode, DENSE, code, rest, L1 - 1, &sr), OT_OK, NULL);
    if (code == F_RHS_POS_ONCE) { /* retried: every lane goes on */
        ck_assert_status(st, OT_OK, NULL);
        for (int64_t b = 0; b < L1; b++)
            fm_assert_exact(sb, b, p[NP * b], DENSE);
        ck_assert_int_eq(ot_solution_lane_count(sb, F1), NT);
    } else {
        ck_assert_status(st, OT_ERR_LANES_FAILED, "1 of 12 lanes failed; lane 5: ");
        ck_assert_int_eq(ot_solution_nfailed(sb), 1);
        fm_assert_failed_lane(sb, sg, F1, code, tf, DENSE);
        const char *msg = ot_solution_lane_message(sb, F1);
        ck_assert_msg(strstr(msg, fault_detail(code)) != NULL, "%s", msg);
    }
    /* In lockstep every other lane finishes and is right. */
    for (int64_t b = 0; lock && b < L1; b++)
        if (b != F1) {
            ck_assert_int_eq(ot_solution_lane_status(sb, b), OT_OK);
            ck_assert_int_eq(ot_solution_lane_count(sb, b), NT);
            fm_assert_exact(sb, b, p[NP * b + P_K], DENSE);
        }
    /* In lanes mode every other lane is what the run without lane F1 gave. */
    for (int64_t b = 0; !lock && b < L1; b++)
        if (b != F1)
            fm_assert_lane_same(sb, b, sr, b - (b > F1), DENSE);
    ot_solution_free(sb);
    ot_solution_free(sg);
    ot_solution_free(sr);
    ot_ode_free(ode);
}
END_TEST

/* ---- Faults at seeded-random lanes and times ------------------------------ */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }

/* Lanes with k in [0.5, 1.5); about a third get one of codes at a tf in
 * [tf_lo, 1.95). Returns how many. */
static int random_faults(double *p, int64_t nb, uint64_t seed, double tf_lo,
                         const int *codes, int ncodes)
{
    uint64_t s = seed;
    int nf = 0;
    for (int64_t b = 0; b < nb; b++) {
        const double k = 0.5 + rng_unit(&s), tf = tf_lo + (1.95 - tf_lo) * rng_unit(&s);
        const int faulty = rng_next(&s) % 3 == 0;
        fm_lane(p, b, k, faulty ? codes[rng_next(&s) % (uint64_t)ncodes] : F_NONE, tf);
        nf += faulty;
    }
    return nf;
}

enum { LR = 64 };
static const int HOWS[][2] = {
    {DENSE, OT_BDF}, {STEPS, OT_BDF}, {DENSE, OT_ADAMS}, {SENS, OT_BDF}};

/* Lanes mode, dense, steps and sensitivities, BDF and Adams: each faulty
 * lane reports its own fault; the rest are the run without them. */
START_TEST(random_faulty_lanes)
{
    static const int codes[] = {F_RHS_NEG,  F_RHS_POS,  F_RHS_POS_ONCE, F_RHS_NAN,
                                F_RHS_PINF, F_RHS_NINF, F_JAC_NAN};
    const int how = HOWS[_i][0];
    const ot_method method = (ot_method)HOWS[_i][1];
    double p[NP * LR], all_good[NP * LR], rest[NP * LR];
    ck_assert_int_ge(random_faults(p, LR, 1234 + (uint64_t)_i, 0.05, codes, 7), 12);
    fm_select(p, LR, 1, all_good);
    const int64_t nrest = fm_select(p, LR, 0, rest);
    ot_ode *ode = fm_ode(OT_LANES, method, F_NONE);
    ot_solution *sb, *sg, *sr;
    const int st = fm_run(ode, how, F_NONE, p, LR, &sb);
    ck_assert_status(fm_run(ode, how, F_NONE, all_good, LR, &sg), OT_OK, NULL);
    ck_assert_status(fm_run(ode, how, F_NONE, rest, nrest, &sr), OT_OK, NULL);
    int64_t failed = 0, r = 0;
    for (int64_t b = 0; b < LR; b++) {
        const int code = fm_code(p, b);
        if (code == F_NONE) {
            fm_assert_lane_same(sb, b, sr, r++, how);
        } else if (code == F_JAC_NAN && method == OT_ADAMS) { /* no Jacobian */
            fm_assert_lane_same(sb, b, sg, b, how);
        } else if (code == F_RHS_POS_ONCE) {
            ck_assert_int_eq(ot_solution_lane_status(sb, b), OT_OK);
            fm_assert_exact(sb, b, p[NP * b + P_K], how);
        } else {
            fm_assert_failed_lane(sb, sg, b, code, tf_of[b], how);
            failed++;
        }
    }
    ck_assert_int_eq(r, nrest);
    ck_assert_int_eq(ot_solution_nfailed(sb), failed);
    ck_assert_int_eq(st, failed ? OT_ERR_LANES_FAILED : OT_OK);
    ot_solution_free(sb);
    ot_solution_free(sg);
    ot_solution_free(sr);
    ot_ode_free(ode);
}
END_TEST

/* Lockstep, BDF and Adams: each faulty lane leaves its block alone and
 * reports its own fault, its outputs before it those of the batch without
 * faults; every other lane finishes and is right. */
START_TEST(random_faults_fail_their_lockstep_lanes_alone)
{
    static const int codes[] = {F_RHS_NEG, F_RHS_POS, F_RHS_NAN, F_RHS_PINF, F_RHS_NINF};
    double p[NP * LR], all_good[NP * LR];
    ck_assert_int_ge(random_faults(p, LR, 99 + (uint64_t)_i, 0.3, codes, 5), 12);
    fm_select(p, LR, 1, all_good);
    ot_ode *ode = fm_ode(OT_LOCKSTEP, _i % 2 ? OT_ADAMS : OT_BDF, F_NONE);
    ot_solution *s, *sg;
    const int st = fm_run(ode, DENSE, F_NONE, p, LR, &s);
    ck_assert_status(fm_run(ode, DENSE, F_NONE, all_good, LR, &sg), OT_OK, NULL);
    int64_t failed = 0;
    for (int64_t b = 0; b < LR; b++) {
        if (fm_code(p, b) == F_NONE) {
            ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
            ck_assert_int_eq(ot_solution_lane_count(s, b), NT);
            fm_assert_exact(s, b, p[NP * b + P_K], DENSE);
            continue;
        }
        /* Its own fault, at or after its tf; its outputs up to it right
         * (lanes that left before it changed the block's steps). */
        const char *msg = ot_solution_lane_message(s, b),
                   *cause = cause_of(fm_code(p, b));
        const int64_t c = ot_solution_lane_count(s, b);
        ck_assert_msg(ot_solution_lane_status(s, b) == OT_ERR_CALLBACK &&
                          strstr(msg, cause) &&
                          msg_time(msg, cause) >= tf_of[b] * (1 - 1e-5),
                      "lane %lld, tf %g: %s", (long long)b, tf_of[b], msg);
        ck_assert(c >= 1 && 0.25 * (double)(c - 1) <= tf_of[b]);
        fm_assert_exact(s, b, p[NP * b + P_K], DENSE);
        fm_assert_nan_from(s, b, c);
        failed++;
    }
    ck_assert_int_eq(ot_solution_nfailed(s), failed);
    ck_assert_int_eq(st, OT_ERR_LANES_FAILED);
    (void)sg;
    ot_solution_free(s);
    ot_solution_free(sg);
    ot_ode_free(ode);
}
END_TEST

/* ---- Every lane failing --------------------------------------------------- */

/* Each lane's rhs returns -1 at its own time: each reports it; the call says
 * how many failed and names the first. */
START_TEST(all_lanes_fail)
{
    enum { L = 16 };
    double p[NP * L], all_good[NP * L];
    for (int64_t b = 0; b < L; b++)
        fm_lane(p, b, 0.5 + 0.05 * (double)b, F_RHS_NEG, 0.3 + 0.1 * (double)b);
    fm_select(p, L, 1, all_good);
    ot_ode *ode = fm_ode(OT_LANES, OT_BDF, F_NONE);
    ot_solution *sb, *sg;
    ck_assert_status(fm_run(ode, DENSE, F_NONE, p, L, &sb), OT_ERR_LANES_FAILED,
                     "16 of 16 lanes failed; lane 0: rhs returned -1 at t = ");
    ck_assert_status(fm_run(ode, DENSE, F_NONE, all_good, L, &sg), OT_OK, NULL);
    ck_assert_int_eq(ot_solution_nfailed(sb), L);
    for (int64_t b = 0; b < L; b++)
        fm_assert_failed_lane(sb, sg, b, F_RHS_NEG, tf_of[b], DENSE);
    ot_solution_free(sb);
    ot_solution_free(sg);
    ot_ode_free(ode);
}
END_TEST

/* ot_solve where init fails in every lane, both modes: no lane has a
 * record, so ts [1, nbatch] and ys [2, 1, nbatch] are all NaN. */
START_TEST(all_lanes_fail_in_init)
{
    enum { L = 16 };
    double p[NP * L];
    for (int64_t b = 0; b < L; b++)
        fm_lane(p, b, 1.0, F_INIT_NAN, 0.0);
    ot_ode *ode = fm_ode(_i ? OT_LOCKSTEP : OT_LANES, OT_BDF, F_INIT_NAN);
    ot_solution *s;
    ck_assert_status(
        fm_run(ode, STEPS, F_INIT_NAN, p, L, &s), OT_ERR_LANES_FAILED,
        "16 of 16 lanes failed; lane 0: init wrote NaN or Inf to y0[1] of lane 0");
    st_assert_shape(ot_solution_ts(s), 2, 1, L, 1);
    st_assert_shape(ot_solution_ys(s), 3, 2, 1, L);
    for (int64_t b = 0; b < L; b++) {
        ot_lane_stats st;
        ck_assert_status(ot_solution_lane_stats(s, b, &st), OT_OK, NULL);
        ck_assert(st.final_time == 0.0);
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_ERR_CALLBACK);
        ck_assert_ptr_nonnull(strstr(ot_solution_lane_message(s, b), "init wrote NaN"));
        ck_assert_int_eq(ot_solution_lane_count(s, b), 0);
        ck_assert(isnan(st_at(ot_solution_ts(s), 0, b, 0)));
        fm_assert_nan_from(s, b, 0);
    }
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

/* A lane its root stopped before another lane's fault keeps OT_OK and its
 * event; in both modes only the faulty lane fails. */
START_TEST(root_stopped_lane_keeps_ok)
{
    enum { L = 8 };
    double p[NP * L];
    for (int64_t b = 0; b < L; b++)
        fm_lane(p, b, 0.5 + 0.1 * (double)b,
                b == 2   ? F_ROOT_STOP
                : b == 6 ? F_RHS_NEG
                         : 0,
                b == 2 ? 0.3 : 1.1);
    ot_ode *ode = fm_ode(_i ? OT_LOCKSTEP : OT_LANES, OT_BDF, F_ROOT_STOP);
    ot_solution *s;
    ck_assert_status(fm_run(ode, DENSE, F_NONE, p, L, &s), OT_ERR_LANES_FAILED,
                     "1 of 8 lanes failed; lane 6");
    int idx;
    double when;
    ck_assert_status(ot_solution_lane_root(s, 2, &idx, &when), OT_OK, NULL);
    ck_assert(idx == 0 && fabs(when - 0.3) < 1e-9);
    ck_assert_int_eq(ot_solution_lane_status(s, 2), OT_OK);
    ck_assert_str_eq(ot_solution_lane_message(s, 2), "");
    ck_assert_int_eq(ot_solution_lane_count(s, 2), 2); /* t = 0, 0.25 */
    fm_assert_exact(s, 2, p[NP * 2], DENSE);
    fm_assert_nan_from(s, 2, 2);
    for (int64_t b = 0; b < L; b++)
        if (b != 2)
            ck_assert_int_eq(ot_solution_lane_status(s, b),
                             b == 6 ? OT_ERR_CALLBACK : OT_OK);
    ot_solution_free(s);
    ot_ode_free(ode);
}
END_TEST

Suite *faults_numeric_suite(void)
{
    Suite *s = suite_create("faults_numeric");
    TCase *tc = tcase_create("one faulty lane");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, one_faulty_lane, 0, 2 * NKINDS);
    suite_add_tcase(s, tc);
    tc = tcase_create("random faults");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, random_faulty_lanes, 0, 4);
    tcase_add_loop_test(tc, random_faults_fail_their_lockstep_lanes_alone, 0, 4);
    suite_add_tcase(s, tc);
    tc = tcase_create("all lanes fail");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, all_lanes_fail);
    tcase_add_loop_test(tc, all_lanes_fail_in_init, 0, 2);
    tcase_add_loop_test(tc, root_stopped_lane_keeps_ok, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

/* Concurrency suite: solves from several threads at once, on separate
 * problems and on one shared ot_ode (the rules in ode.h, "Thread safety"),
 * each compared bit for bit with the same solve run alone on one thread.
 * Worker threads only record what they got; every assertion runs on the
 * test's own thread (Check's assertions are not thread-safe). `make check
 * TSAN=1` runs this suite in a ThreadSanitizer build. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solve_common.h"

#define CC_THREADS 4 /* caller threads solving at once */
#define CC_ROUNDS 3  /* times each caller thread repeats its solve */
#define CC_NB 12     /* lanes per solve */
#define CC_NT 16     /* output times */

typedef enum cc_kind { CC_DENSE, CC_STEPS, CC_SENS, CC_BAD } cc_kind;

/* One solve request and what it gave. */
typedef struct cc_job {
    const ot_ode *ode;
    cc_kind kind;
    int64_t n; /* states: 2 (decay) or 3 (Robertson) */
    double y0[3 * CC_NB];
    double k[3 * CC_NB];
    int64_t np;
    double t[CC_NT];
    /* results */
    int status;
    char message[256];
    ot_solution *sol;
} cc_job;

/* Decay inputs that differ per job (seed) and per lane. */
static void cc_decay_job(cc_job *j, const ot_ode *ode, cc_kind kind, int seed)
{
    memset(j, 0, sizeof *j);
    j->ode = ode, j->kind = kind, j->n = 2, j->np = 1;
    for (int64_t b = 0; b < CC_NB; b++) {
        j->k[b] = 0.2 + 0.07 * (double)b + 0.011 * seed;
        j->y0[2 * b] = 1.0 + (double)((b + seed) % 3);
        j->y0[2 * b + 1] = 0.5 + 0.25 * (double)((b + seed) % 2);
    }
    for (int i = 0; i < CC_NT; i++)
        j->t[i] = 0.2 * (double)i * (1.0 + 0.01 * seed);
    if (kind == CC_BAD)
        j->t[5] = j->t[4]; /* not strictly increasing */
}

/* Robertson inputs: rate constants scaled per lane. */
static void cc_rober_job(cc_job *j, const ot_ode *ode, cc_kind kind, int seed)
{
    memset(j, 0, sizeof *j);
    j->ode = ode, j->kind = kind, j->n = 3, j->np = 3;
    for (int64_t b = 0; b < CC_NB; b++) {
        const double s = 1.0 + 0.03 * (double)b + 0.005 * seed;
        for (int r = 0; r < 3; r++)
            j->k[3 * b + r] = ST_ROBER_K[r] * s;
        j->y0[3 * b] = 1.0, j->y0[3 * b + 1] = 0.0, j->y0[3 * b + 2] = 0.0;
    }
    for (int i = 0; i < CC_NT; i++)
        j->t[i] = 0.4 * (double)i * (double)i;
}

/* Runs one job; no Check call here (it runs on worker threads). */
static void cc_run(cc_job *j)
{
    ot_view y0, p, t;
    const int64_t sy[2] = {j->n, CC_NB}, sp[2] = {j->np, CC_NB}, st[1] = {CC_NT};
    int s = ot_view_make(&y0, j->y0, OT_F64, ST_CPU, 2, sy, NULL);
    if (s == OT_OK)
        s = ot_view_make(&p, j->k, OT_F64, ST_CPU, 2, sp, NULL);
    if (s == OT_OK)
        s = ot_view_make(&t, j->t, OT_F64, ST_CPU, 1, st, NULL);
    j->sol = NULL;
    if (s == OT_OK) {
        switch (j->kind) {
        case CC_STEPS:
            s = ot_solve(j->ode, y0, p, j->t[CC_NT - 1], &j->sol);
            break;
        case CC_SENS:
            s = ot_solve_fwd_sens(j->ode, y0, p, t, &j->sol);
            break;
        case CC_DENSE:
        case CC_BAD:
            s = ot_solve_dense(j->ode, y0, p, t, &j->sol);
            break;
        }
    }
    j->status = s;
    snprintf(j->message, sizeof j->message, "%s", s == OT_OK ? "" : ot_last_error());
}

/* Asserts that two tensors hold the same shape and bytes. */
static void cc_tensor_same(const ot_tensor *a, const ot_tensor *b, const char *what,
                           int job)
{
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    const ot_layout *la = ot_tensor_layout(a), *lb = ot_tensor_layout(b);
    ck_assert_int_eq(la->ndim, lb->ndim);
    for (int d = 0; d < la->ndim; d++)
        ck_assert_int_eq(la->shape[d], lb->shape[d]);
    ck_assert_msg(memcmp(la->data, lb->data, st_bytes(a)) == 0,
                  "job %d: %s differs from the single-threaded solve", job, what);
}

/* Asserts that a concurrent job got exactly what the reference got. */
static void cc_same(const cc_job *got, const cc_job *ref, int job)
{
    ck_assert_msg(got->status == ref->status, "job %d: status %s, alone %s (%s)", job,
                  ot_status_name(got->status), ot_status_name(ref->status), got->message);
    ck_assert_str_eq(got->message, ref->message);
    if (ref->sol == NULL) {
        ck_assert_ptr_null(got->sol);
        return;
    }
    const ot_solution *a = got->sol, *b = ref->sol;
    ck_assert_int_eq(ot_solution_nbatch(a), ot_solution_nbatch(b));
    ck_assert_int_eq(ot_solution_nfailed(a), ot_solution_nfailed(b));
    ck_assert_int_eq(ot_solution_nsens(a), ot_solution_nsens(b));
    cc_tensor_same(ot_solution_ts(a), ot_solution_ts(b), "ts", job);
    cc_tensor_same(ot_solution_ys(a), ot_solution_ys(b), "ys", job);
    for (int64_t s = 0; s < ot_solution_nsens(b); s++)
        cc_tensor_same(ot_solution_sens(a, s), ot_solution_sens(b, s), "sens", job);
    for (int64_t l = 0; l < ot_solution_nbatch(b); l++) {
        ck_assert_int_eq(ot_solution_lane_status(a, l), ot_solution_lane_status(b, l));
        ck_assert_int_eq(ot_solution_lane_count(a, l), ot_solution_lane_count(b, l));
        st_assert_stats_equal(a, l, b, l);
    }
}

/* Caller threads start together at a barrier, then each runs its job
 * CC_ROUNDS times, keeping every result. */
typedef struct cc_thread {
    pthread_barrier_t *go;
    cc_job *rounds; /* CC_ROUNDS copies of the same job */
} cc_thread;

static void *cc_main(void *arg)
{
    cc_thread *t = arg;
    pthread_barrier_wait(t->go);
    for (int r = 0; r < CC_ROUNDS; r++)
        cc_run(&t->rounds[r]);
    return NULL;
}

/* Solves jobs[i] alone, one after the other, then all at once from
 * CC_THREADS threads (CC_ROUNDS times each), and compares. */
static void cc_compare(const cc_job *jobs)
{
    static cc_job ref[CC_THREADS], got[CC_THREADS][CC_ROUNDS];
    for (int i = 0; i < CC_THREADS; i++) {
        ref[i] = jobs[i];
        cc_run(&ref[i]);
        for (int r = 0; r < CC_ROUNDS; r++)
            got[i][r] = jobs[i];
    }
    pthread_barrier_t go;
    ck_assert_int_eq(pthread_barrier_init(&go, NULL, CC_THREADS), 0);
    pthread_t tid[CC_THREADS];
    cc_thread arg[CC_THREADS];
    for (int i = 0; i < CC_THREADS; i++) {
        arg[i] = (cc_thread){&go, got[i]};
        ck_assert_int_eq(pthread_create(&tid[i], NULL, cc_main, &arg[i]), 0);
    }
    for (int i = 0; i < CC_THREADS; i++)
        ck_assert_int_eq(pthread_join(tid[i], NULL), 0);
    pthread_barrier_destroy(&go);
    for (int i = 0; i < CC_THREADS; i++) {
        for (int r = 0; r < CC_ROUNDS; r++) {
            cc_same(&got[i][r], &ref[i], i);
            ot_solution_free(got[i][r].sol);
        }
        ot_solution_free(ref[i].sol);
    }
}

static ot_ode *cc_decay_ode(ot_method method, ot_mode mode, int threads, double rtol)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_method(ode, method), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, threads), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, rtol), OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol(ode, 1e-10), OT_OK, NULL);
    return ode;
}

static ot_ode *cc_rober_ode(ot_mode mode, int threads)
{
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 3, 3, st_rober_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_jac(ode, st_rober_jac), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, threads), OT_OK, NULL);
    ck_assert_status(ot_ode_set_rtol(ode, ST_ROBER_RTOL), OT_OK, NULL);
    ot_view atol;
    const int64_t s[1] = {3};
    ck_assert_status(ot_view_make(&atol, ST_ROBER_ATOL, OT_F64, ST_CPU, 1, s, NULL),
                     OT_OK, NULL);
    ck_assert_status(ot_ode_set_atol_vector(ode, atol), OT_OK, NULL);
    return ode;
}

/* Every thread has its own problem (different methods, modes, options). */
START_TEST(separate_problems_at_once)
{
    ot_ode *odes[CC_THREADS] = {
        cc_decay_ode(OT_BDF, OT_LANES, 2, 1e-8),
        cc_decay_ode(OT_ADAMS, OT_LANES, 1, 1e-6),
        cc_rober_ode(OT_LOCKSTEP, 1),
        cc_rober_ode(OT_LANES, 2),
    };
    static cc_job jobs[CC_THREADS];
    cc_decay_job(&jobs[0], odes[0], CC_DENSE, 0);
    cc_decay_job(&jobs[1], odes[1], CC_STEPS, 1);
    cc_rober_job(&jobs[2], odes[2], CC_DENSE, 2);
    cc_rober_job(&jobs[3], odes[3], _i ? CC_SENS : CC_DENSE, 3);
    cc_compare(jobs);
    for (int i = 0; i < CC_THREADS; i++)
        ot_ode_free(odes[i]);
}
END_TEST

/* One ot_ode, set up first, then solved by every thread at once with
 * different inputs and entry points; a bad request on one thread fails alone
 * with its own message (ot_last_error is per thread). */
START_TEST(shared_problem_at_once)
{
    const ot_mode mode = _i == 0 ? OT_LANES : OT_LOCKSTEP;
    ot_ode *ode = cc_decay_ode(OT_BDF, mode, 2, 1e-7);
    static cc_job jobs[CC_THREADS];
    cc_decay_job(&jobs[0], ode, CC_DENSE, 0);
    cc_decay_job(&jobs[1], ode, CC_STEPS, 1);
    cc_decay_job(&jobs[2], ode, CC_SENS, 2);
    cc_decay_job(&jobs[3], ode, CC_BAD, 3);
    cc_compare(jobs);
    ot_ode_free(ode);

    /* A shared stiff problem with a user Jacobian: the same job everywhere. */
    ot_ode *rober = cc_rober_ode(mode, 2);
    for (int i = 0; i < CC_THREADS; i++)
        cc_rober_job(&jobs[i], rober, i == 1 ? CC_SENS : CC_DENSE, i % 2);
    cc_compare(jobs);
    ot_ode_free(rober);
}
END_TEST

/* The reference for a bad request really is a refusal (so the comparison
 * above checks a failing thread too). */
START_TEST(bad_request_is_refused)
{
    ot_ode *ode = cc_decay_ode(OT_BDF, OT_LANES, 2, 1e-7);
    static cc_job j;
    cc_decay_job(&j, ode, CC_BAD, 0);
    cc_run(&j);
    ck_assert_int_eq(j.status, OT_ERR_VALUE);
    ck_assert_ptr_null(j.sol);
    ck_assert_ptr_nonnull(strstr(j.message, "t_eval"));
    ot_ode_free(ode);
}
END_TEST

Suite *concurrency_suite(void)
{
    Suite *s = suite_create("concurrency");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, separate_problems_at_once, 0, 2);
    tcase_add_loop_test(tc, shared_problem_at_once, 0, 2);
    tcase_add_test(tc, bad_request_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

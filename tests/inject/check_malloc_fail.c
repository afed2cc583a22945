/* Memory running out anywhere (issue 23, item 3): this program replaces the
 * process's malloc, calloc, realloc and the aligned allocators (glibc lets a
 * program do so; the real ones are its __libc_* entry points), so that
 * SUNDIALS' own allocations, which odetensor's failure points
 * (check_alloc_inject.c) cannot reach, fail too. For every case of
 * solve_cases.h and every k up to the number of allocations its solve
 * makes, the k-th fails, once alone ("one-shot") and with every later one
 * failing too ("sticky"), in a forked child, so that a crash is one failed
 * k and not the end of the run. Each child must end in OT_ERR_NOMEM for the
 * call, or for the lanes it hit with the other lanes the reference's bit
 * for bit, or in the reference's answer itself; and it must hand back every
 * allocation it made (the replaced free counts them). It cannot run under
 * ASan, which owns malloc: `make test-malloc-fail` uses the plain build. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "solve_cases.h"

/* ---- The replaced allocator ---------------------------------------------- */

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void *__libc_memalign(size_t align, size_t size);
void __libc_free(void *ptr);

static atomic_int g_armed;
static atomic_long g_seen; /* allocations while armed */
static long g_fail_at = -1;
static int g_sticky;

/* The blocks allocated while armed and not yet freed, in an open-addressed
 * set under a spin lock (lanes mode allocates from two threads): what is
 * left in it when a run ends is what the run leaked. Frees of blocks from
 * before the run (a thread's old error message, say) are not in it. */
#define LIVE_CAP (1u << 18)
static void *g_live[LIVE_CAP];
static void *const TOMB = (void *)&g_live;
static long g_nlive;
static atomic_flag g_lock = ATOMIC_FLAG_INIT;

static size_t slot_of(const void *p)
{
    return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15u) & (LIVE_CAP - 1);
}

static void live_add(void *p)
{
    if (p == NULL || !atomic_load_explicit(&g_armed, memory_order_relaxed))
        return;
    while (atomic_flag_test_and_set_explicit(&g_lock, memory_order_acquire))
        ;
    size_t i = slot_of(p);
    while (g_live[i] != NULL && g_live[i] != TOMB)
        i = (i + 1) & (LIVE_CAP - 1);
    g_live[i] = p;
    g_nlive++;
    atomic_flag_clear_explicit(&g_lock, memory_order_release);
}

static void live_remove(void *p)
{
    if (p == NULL || !atomic_load_explicit(&g_armed, memory_order_relaxed))
        return;
    while (atomic_flag_test_and_set_explicit(&g_lock, memory_order_acquire))
        ;
    for (size_t i = slot_of(p); g_live[i] != NULL; i = (i + 1) & (LIVE_CAP - 1))
        if (g_live[i] == p) {
            g_live[i] = TOMB;
            g_nlive--;
            break;
        }
    atomic_flag_clear_explicit(&g_lock, memory_order_release);
}

static int fail_now(void)
{
    if (!atomic_load_explicit(&g_armed, memory_order_relaxed))
        return 0;
    const long n = atomic_fetch_add(&g_seen, 1);
    return n == g_fail_at || (g_sticky && g_fail_at >= 0 && n > g_fail_at);
}

static void *counted(void *p)
{
    live_add(p);
    return p;
}

void *malloc(size_t size)
{
    if (fail_now()) {
        errno = ENOMEM;
        return NULL;
    }
    return counted(__libc_malloc(size));
}

void *calloc(size_t count, size_t size)
{
    if (fail_now()) {
        errno = ENOMEM;
        return NULL;
    }
    return counted(__libc_calloc(count, size));
}

void *realloc(void *ptr, size_t size)
{
    if (fail_now()) {
        errno = ENOMEM;
        return NULL;
    }
    void *q = __libc_realloc(ptr, size);
    if (q != NULL || size == 0)
        live_remove(ptr);
    return counted(q);
}

void *aligned_alloc(size_t align, size_t size)
{
    if (fail_now()) {
        errno = ENOMEM;
        return NULL;
    }
    return counted(__libc_memalign(align, size));
}

int posix_memalign(void **out, size_t align, size_t size)
{
    if (fail_now())
        return ENOMEM;
    void *p = counted(__libc_memalign(align, size));
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

void free(void *ptr)
{
    live_remove(ptr);
    __libc_free(ptr);
}

/* k < 0: count only. */
static void arm(long k, int sticky)
{
    g_fail_at = k;
    g_sticky = sticky;
    atomic_store(&g_seen, 0);
    memset(g_live, 0, sizeof g_live);
    g_nlive = 0;
    atomic_store(&g_armed, 1);
}

static void disarm(void) { atomic_store(&g_armed, 0); }

/* ---- One failing allocation, in a child ------------------------------------ */

enum { SAME = 0, WRONG = 1, NOMEM_CALL = 2, NOMEM_LANES = 3, LEAKED = 4 };

static char g_why[512];

/* The child's verdict on a run in which allocation k failed. */
static int judge(const sc_case *c, const ot_ode *ode, const sc_inputs *in,
                 const ot_solution *ref, long k, int sticky)
{
    ot_solution *sentinel = (ot_solution *)&g_why, *sol = sentinel;
    ot_clear_error();
    arm(k, sticky);
    const int st = sc_run_solve(c, ode, in, &sol);
    int verdict = SAME;
    if (st == OT_ERR_NOMEM) {
        verdict = NOMEM_CALL;
        if (ot_last_error()[0] == '\0' || sol != sentinel) {
            snprintf(g_why, sizeof g_why, "OT_ERR_NOMEM without a message, or *out set");
            verdict = WRONG;
        }
    } else if (st != OT_OK && st != OT_ERR_LANES_FAILED) {
        snprintf(g_why, sizeof g_why, "the call gave %s: %s", ot_status_name(st),
                 ot_last_error());
        verdict = WRONG;
    } else {
        if ((st == OT_ERR_LANES_FAILED) != (ot_solution_nfailed(sol) > 0)) {
            snprintf(g_why, sizeof g_why, "%s with %lld failed lanes", ot_status_name(st),
                     (long long)ot_solution_nfailed(sol));
            verdict = WRONG;
        }
        for (int64_t b = 0; b < SC_NB && verdict != WRONG; b++) {
            const int ls = ot_solution_lane_status(sol, b);
            const char *differs = ls == OT_OK ? sc_lane_differs(sol, ref, b) : NULL;
            if (differs) {
                snprintf(g_why, sizeof g_why, "lane %lld is OK but differs in %s",
                         (long long)b, differs);
                verdict = WRONG;
            } else if (ls != OT_OK && (ls != OT_ERR_NOMEM ||
                                       ot_solution_lane_message(sol, b)[0] == '\0')) {
                snprintf(g_why, sizeof g_why, "lane %lld failed with %s: %s",
                         (long long)b, ot_status_name(ls),
                         ot_solution_lane_message(sol, b));
                verdict = WRONG;
            } else if (ls != OT_OK) {
                verdict = NOMEM_LANES;
            }
        }
        ot_solution_free(sol);
    }
    disarm();
    const long live = g_nlive;
    if (verdict != WRONG && live != 0) {
        snprintf(g_why, sizeof g_why, "%ld allocations not freed (%s)", live,
                 verdict == NOMEM_CALL ? "OT_ERR_NOMEM" : "a result");
        verdict = LEAKED;
    }
    return verdict;
}

typedef struct {
    long runs, outcome[5], crashed;
} tally;

/* Forks, runs judge in the child, and records what came back. */
static void run_child(const sc_case *c, const ot_ode *ode, const sc_inputs *in,
                      const ot_solution *ref, long k, int sticky, tally *t)
{
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    fflush(stdout);
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fd[0]);
        g_why[0] = '\0';
        const int v = judge(c, ode, in, ref, k, sticky);
        if (write(fd[1], g_why, strlen(g_why)) < 0)
            _exit(WRONG);
        _exit(v);
    }
    close(fd[1]);
    char why[512] = {0};
    ssize_t got = 0, r;
    while (got < (ssize_t)sizeof why - 1 &&
           (r = read(fd[0], why + got, sizeof why - 1 - (size_t)got)) > 0)
        got += r;
    close(fd[0]);
    int ws = 0;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    t->runs++;
    const char *mode = sticky ? "sticky" : "one-shot";
    if (WIFSIGNALED(ws)) {
        t->crashed++;
        if (t->crashed <= 3)
            printf("malloc-fail: %s: allocation %ld (%s) failing killed the solve with "
                   "signal %d (%s)\n",
                   c->name, k, mode, WTERMSIG(ws), strsignal(WTERMSIG(ws)));
        return;
    }
    const int v = WIFEXITED(ws) ? WEXITSTATUS(ws) : WRONG;
    if (v > LEAKED) {
        t->outcome[WRONG]++;
        printf("malloc-fail: %s: allocation %ld (%s): child exited with %d\n", c->name, k,
               mode, v);
        return;
    }
    t->outcome[v]++;
    if ((v == WRONG || v == LEAKED) && t->outcome[v] <= 3)
        printf("malloc-fail: %s: allocation %ld (%s) failing: %s\n", c->name, k, mode,
               why);
}

static tally g_total;

START_TEST(solve_survives_every_failing_malloc)
{
    if (!sc_in_shard(_i))
        return;
    const sc_case *c = &SC_CASES[_i];
    sc_inputs in;
    sc_inputs_init(&in);
    ot_ode *ode = sc_make_ode(c, &in);
    ot_solution *ref = NULL;
    ck_assert_status(sc_run_solve(c, ode, &in, &ref), OT_OK, NULL);
    arm(-1, 0); /* count: how many allocations the solve makes */
    ot_solution *again = NULL;
    const int st = sc_run_solve(c, ode, &in, &again);
    const long allocs = atomic_load(&g_seen), live = g_nlive;
    ot_solution_free(again);
    disarm();
    const long live_after = g_nlive;
    ck_assert_status(st, OT_OK, NULL);
    ck_assert_msg(live > 0 && live_after == 0,
                  "%s: the counting allocator saw %ld live blocks with a result and "
                  "%ld after freeing it",
                  c->name, live, live_after);

    tally t = {0};
    /* Threads take their allocations in either order: a few more k than
     * the count, so that a run whose count came out higher is covered. */
    const long ks = allocs + (c->threads > 1 ? 8 : 0);
    for (int sticky = 0; sticky < 2; sticky++)
        for (long k = 0; k < ks; k++)
            run_child(c, ode, &in, ref, k, sticky, &t);
    printf("malloc-fail: %-56s %4ld allocations: %5ld runs, %4ld OT_ERR_NOMEM, %4ld "
           "NOMEM lanes, %4ld same answer, %ld wrong, %ld leaked, %ld crashed\n",
           c->name, allocs, t.runs, t.outcome[NOMEM_CALL], t.outcome[NOMEM_LANES],
           t.outcome[SAME], t.outcome[WRONG], t.outcome[LEAKED], t.crashed);
    g_total.runs += t.runs, g_total.crashed += t.crashed;
    for (int v = 0; v < 5; v++)
        g_total.outcome[v] += t.outcome[v];
    ot_solution_free(ref);
    ot_ode_free(ode);
    ck_assert_msg(t.crashed == 0 && t.outcome[WRONG] == 0 && t.outcome[LEAKED] == 0,
                  "%s: %ld crashed, %ld wrong, %ld leaked of %ld runs", c->name,
                  t.crashed, t.outcome[WRONG], t.outcome[LEAKED], t.runs);
}
END_TEST

/* MALLOC_FAIL_ONE=case,k,sticky runs that one failure in this process,
 * for a debugger: `MALLOC_FAIL_ONE=10,57,1 gdb check_malloc_fail`. */
START_TEST(one_failure_in_process)
{
    int ci = -1, sticky = 0;
    long k = 0;
    ck_assert_msg(sscanf(getenv("MALLOC_FAIL_ONE"), "%d,%ld,%d", &ci, &k, &sticky) == 3 &&
                      ci >= 0 && ci < SC_NCASES,
                  "MALLOC_FAIL_ONE=case,k,sticky (case 0..%d)", SC_NCASES - 1);
    const sc_case *c = &SC_CASES[ci];
    sc_inputs in;
    sc_inputs_init(&in);
    ot_ode *ode = sc_make_ode(c, &in);
    ot_solution *ref = NULL;
    ck_assert_status(sc_run_solve(c, ode, &in, &ref), OT_OK, NULL);
    const int v = judge(c, ode, &in, ref, k, sticky);
    printf("malloc-fail: %s, allocation %ld (%s): verdict %d %s\n", c->name, k,
           sticky ? "sticky" : "one-shot", v, g_why);
    ot_solution_free(ref);
    ot_ode_free(ode);
    ck_assert(v != WRONG && v != LEAKED);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("malloc_fail");
    TCase *tc = tcase_create("solve");
    tcase_set_timeout(tc, 900);
    if (getenv("MALLOC_FAIL_ONE"))
        tcase_add_test(tc, one_failure_in_process);
    else
        tcase_add_loop_test(tc, solve_survives_every_failing_malloc, 0, SC_NCASES);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* each k forks its own child */
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    printf(
        "malloc-fail (%s): %ld runs with one allocation failing (or all from it on): "
        "%ld OT_ERR_NOMEM, %ld with OT_ERR_NOMEM lanes, %ld the same answer; %ld wrong, "
        "%ld leaked, %ld crashed\n",
        sc_shard_name(), g_total.runs, g_total.outcome[NOMEM_CALL],
        g_total.outcome[NOMEM_LANES], g_total.outcome[SAME], g_total.outcome[WRONG],
        g_total.outcome[LEAKED], g_total.crashed);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

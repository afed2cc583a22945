/* Size limits (issue 6, item 6): a solve adds up the bytes it will need and
 * refuses, before it allocates anything or reads any input value, a request
 * whose byte count overflows (OT_ERR_OVERFLOW) or exceeds the memory the
 * process may have (OT_ERR_NOMEM), naming the arrays and their factors.
 *
 * The huge requests use views over a PROT_NONE mapping: a view's layout is
 * checked without reading it, so shapes of 2^59 lanes cost nothing, and a
 * solve that read one value would die of SIGSEGV. The heap is measured
 * around each refusal (ASan's or TSan's counter, else glibc's mallinfo2)
 * and must not have grown by a byte. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "solve_common.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define OT_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define OT_TEST_SANITIZED 1
#endif
#endif

#ifdef OT_TEST_SANITIZED
/* From the sanitizer runtime (<sanitizer/allocator_interface.h>, which gcc
 * does not always ship). */
size_t __sanitizer_get_current_allocated_bytes(void);
static size_t heap_bytes(void) { return __sanitizer_get_current_allocated_bytes(); }
#else
#include <malloc.h>
static size_t heap_bytes(void)
{
    const struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}
#endif

/* Private test hooks (src/core/test_hooks.h). */
#include "core/test_hooks.h"
uint64_t ot__memory_limit(const char **what);

/* ---- Requests too big to exist -------------------------------------------- */

static void *guard; /* 64 KiB, PROT_NONE */

static void map_guard(void)
{
    guard = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(guard != MAP_FAILED);
}

static void unmap_guard(void) { munmap(guard, 1 << 16); }

/* A [rows, lanes] (lanes < 0: [rows]) f64 view over the guard. */
static ot_view huge(int64_t rows, int64_t lanes)
{
    ot_view v;
    const int64_t shape[2] = {rows, lanes};
    ck_assert_status(
        ot_view_make(&v, guard, OT_F64, ST_CPU, lanes < 0 ? 1 : 2, shape, NULL), OT_OK,
        NULL);
    return v;
}

static int no_root(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)y, (void)p, (void)g, (void)u;
    return 0;
}

typedef struct {
    const char *what;
    int want;
    const char *needle;
} refusal;

#define NB59 "576460752303423488"
static const refusal refusals[] = {
    {"nbatch 2^59, dense", OT_ERR_OVERFLOW,
     "ys: 8 * rows=2 * nt=3 * nbatch=" NB59 " bytes overflows int64"},
    {"nbatch 2^59, lockstep", OT_ERR_OVERFLOW,
     "ys: 8 * rows=2 * nt=3 * nbatch=" NB59 " bytes overflows int64"},
    {"nbatch 2^59, ot_solve", OT_ERR_OVERFLOW,
     "ys (2 steps a lane at least): 8 * rows=2 * nt=2 * nbatch=" NB59 " bytes overflows"},
    {"nbatch 2^59, sensitivities", OT_ERR_OVERFLOW,
     "ys: 8 * rows=2 * nt=3 * nbatch=" NB59 " bytes overflows int64"},
    {"nt 2^20 * nbatch 2^42", OT_ERR_OVERFLOW,
     "ys: 8 * rows=2 * nt=1048576 * nbatch=4398046511104 bytes overflows int64"},
    {"ys + sens > int64", OT_ERR_OVERFLOW,
     "add up to more than int64 bytes (sensitivities: 8 * np=1 * rows=2 * nt=8 * "
     "nbatch=36028797018963968 bytes)"},
    {"lockstep roots", OT_ERR_OVERFLOW,
     "roots: nroots=2 * nbatch=1073741824 root functions in lockstep; CVODE counts at "
     "most 2147483647"},
    {"n 2^31 - 1, lanes", OT_ERR_OVERFLOW,
     "lanes working memory: a worker for n=2147483647, np=0 overflows int64"},
    {"n 2^31 - 1, lockstep", OT_ERR_OVERFLOW,
     "lockstep working memory: a lane of n=2147483647, np=0 overflows int64"},
    {"1e13 lanes, dense", OT_ERR_NOMEM,
     "; ys: 8 * rows=2 * nt=3 * nbatch=10000000000000 = 480000000000000 bytes"},
    {"1e13 lanes, lockstep", OT_ERR_NOMEM, "; lockstep working memory: "},
    {"1e13 lanes, f32 ys", OT_ERR_NOMEM,
     "; ys: 4 * rows=2 * nt=3 * nbatch=10000000000000 = 240000000000000 bytes"},
    {"1e13 lanes, ot_solve", OT_ERR_NOMEM,
     "; per-lane step records: 8 * (rows + 1)=3 * nt=2 * nbatch=10000000000000 = "
     "480000000000000 bytes"},
    {"1e13 lanes, f32 y0", OT_ERR_NOMEM,
     "; f64 copy of y0: 8 * rows=2 * lanes=10000000000000 = 160000000000000 bytes"},
};
enum { NREFUSALS = sizeof refusals / sizeof *refusals };

/* The solve of case i, on views over the guard (t_eval real: times must be
 * read; case 4's has 2^20 entries in *tbig). */
static int refused_call(int i, ot_ode *ode, double *tbig, ot_solution **out)
{
    static const double y0[2] = {1, 2}, t[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const ot_view Y = st_vec(y0, 2), T = st_vec(t, 3);
    switch (i) {
    case 1:
    case 10:
        ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
        return ot_solve_dense(ode, Y, huge(1, i == 1 ? INT64_C(1) << 59 : 10000000000000),
                              T, out);
    case 2:
        return ot_solve(ode, Y, huge(1, INT64_C(1) << 59), 1.0, out);
    case 3:
        return ot_solve_fwd_sens(ode, Y, huge(1, INT64_C(1) << 59), T, out);
    case 4:
        for (int64_t k = 0; k < 1 << 20; k++)
            tbig[k] = (double)k;
        return ot_solve_dense(ode, Y, huge(1, INT64_C(1) << 42), st_vec(tbig, 1 << 20),
                              out);
    case 5:
        return ot_solve_fwd_sens(ode, Y, huge(1, INT64_C(1) << 55), st_vec(t, 8), out);
    case 6:
        ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
        ck_assert_status(ot_ode_set_roots(ode, 2, no_root), OT_OK, NULL);
        return ot_solve_dense(ode, Y, huge(1, INT64_C(1) << 30), st_vec(t, 1), out);
    case 7: /* ode has n = 2^31 - 1, np = 0 */
    case 8:
        ck_assert_status(ot_ode_set_mode(ode, i == 8 ? OT_LOCKSTEP : OT_LANES), OT_OK,
                         NULL);
        return ot_solve_dense(ode, huge(INT32_MAX, -1), ot_view_absent(), T, out);
    case 11:
        ck_assert_status(ot_ode_set_output_dtype(ode, OT_F32), OT_OK, NULL);
        return ot_solve_dense(ode, Y, huge(1, 10000000000000), T, out);
    case 12:
        return ot_solve(ode, Y, huge(1, 10000000000000), 1.0, out);
    case 13: {
        ot_view y0f;
        const int64_t shape[2] = {2, 10000000000000};
        ck_assert_status(ot_view_make(&y0f, guard, OT_F32, ST_CPU, 2, shape, NULL), OT_OK,
                         NULL);
        return ot_solve_dense(ode, y0f, st_vec(y0, 1), T, out);
    }
    default: /* 0 and 9 */
        return ot_solve_dense(ode, Y, huge(1, i ? 10000000000000 : INT64_C(1) << 59), T,
                              out);
    }
}

/* Refused with the right status and message, *out untouched, the heap as
 * it was, and no input value read (the guard would have faulted). */
START_TEST(too_big_refused_before_anything)
{
    const refusal *c = &refusals[_i];
    map_guard();
    double *tbig = _i == 4 ? malloc(sizeof(double) << 20) : NULL;
    const int big = _i == 7 || _i == 8;
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, big ? INT32_MAX : 2, !big, st_decay_rhs, NULL),
                     OT_OK, NULL);
    static char untouched;
    ot_solution *sol = (ot_solution *)(void *)&untouched;
    /* The first failing call on this thread may set up libc's own state. */
    refused_call(_i, ode, tbig, &sol);
    const size_t before = heap_bytes();
    ot_clear_error();
    const int st = refused_call(_i, ode, tbig, &sol);
    const size_t after = heap_bytes();
    ck_assert_msg(st == c->want, "%s: %s, expected %s (%s)", c->what, ot_status_name(st),
                  ot_status_name(c->want), ot_last_error());
    ck_assert_msg(strstr(ot_last_error(), c->needle) != NULL, "%s: \"%s\" lacks \"%s\"",
                  c->what, ot_last_error(), c->needle);
    ck_assert_ptr_eq(sol, &untouched);
    ck_assert_msg(after == before, "%s: the heap went from %zu to %zu bytes", c->what,
                  before, after);
    if (c->want == OT_ERR_NOMEM) { /* names the total and the machine's memory */
        const char *what;
        const uint64_t limit = ot__memory_limit(&what);
        char head[160];
        snprintf(head, sizeof head, "bytes, more than the %llu bytes %s; ",
                 (unsigned long long)limit, what);
        ck_assert_msg(strstr(ot_last_error(), "solve: needs ") == ot_last_error() &&
                          strstr(ot_last_error(), head),
                      "\"%s\" lacks \"%s\"", ot_last_error(), head);
    }
    ot_ode_free(ode);
    free(tbig);
    unmap_guard();
}
END_TEST

/* With no resource limit set, the limit is the physical memory. */
START_TEST(limit_is_physical_memory)
{
    struct rlimit as, data;
    ck_assert_int_eq(getrlimit(RLIMIT_AS, &as), 0);
    ck_assert_int_eq(getrlimit(RLIMIT_DATA, &data), 0);
    const char *what;
    const uint64_t lim = ot__memory_limit(&what);
    if (as.rlim_cur == RLIM_INFINITY && data.rlim_cur == RLIM_INFINITY) {
        ck_assert_uint_eq(lim, (uint64_t)sysconf(_SC_PHYS_PAGES) *
                                   (uint64_t)sysconf(_SC_PAGESIZE));
        ck_assert_str_eq(what, "on this machine (physical memory)");
    }
    ck_assert(lim <= (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE));
}
END_TEST

#ifndef OT_TEST_SANITIZED
/* A lower RLIMIT_DATA is the limit. (Not under ASan or TSan: their shadow
 * memory already counts against it.) */
START_TEST(rlimit_data_lowers_the_limit)
{
    map_guard();
    struct rlimit old, low;
    ck_assert_int_eq(getrlimit(RLIMIT_DATA, &old), 0);
    low = old;
    low.rlim_cur = (rlim_t)1 << 30;
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < low.rlim_cur)
        low.rlim_cur = old.rlim_max;
    ck_assert_int_eq(setrlimit(RLIMIT_DATA, &low), 0);
    static const double y0[2] = {1, 2}, t[3] = {0, 1, 2};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ot_solution *sol = NULL;
    char want[120];
    snprintf(want, sizeof want, "more than the %llu bytes allowed by RLIMIT_DATA; ",
             (unsigned long long)low.rlim_cur);
    const int st =
        ot_solve_dense(ode, st_vec(y0, 2), huge(1, 100000000), st_vec(t, 3), &sol);
    setrlimit(RLIMIT_DATA, &old);
    ck_assert_status(st, OT_ERR_NOMEM, want);
    ck_assert_ptr_null(sol);
    ot_ode_free(ode);
    unmap_guard();
}
END_TEST
#endif

/* ---- The estimate on real solves ------------------------------------------ */

enum { LB = 100, NTB = 5 };

/* A decay batch of LB lanes at NTB (or 2 NTB) times; variant: 0 plain,
 * 1 f32 params, 2 f32 ys, 3 sensitivities, 4 twice the times. */
static int batch(ot_mode mode, int variant, ot_solution **out)
{
    static double y0[2] = {1, 2}, k[LB], t[2 * NTB];
    static float kf[LB];
    for (int64_t b = 0; b < LB; b++)
        kf[b] = (float)(k[b] = 0.5 + 0.01 * (double)b);
    for (int i = 0; i < 2 * NTB; i++)
        t[i] = 0.5 * i;
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 1, st_decay_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_mode(ode, mode), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, 2), OT_OK, NULL);
    if (variant == 2)
        ck_assert_status(ot_ode_set_output_dtype(ode, OT_F32), OT_OK, NULL);
    const ot_view K = variant == 1 ? st_view_t(kf, OT_F32, 1, LB) : st_mat(k, 1, LB);
    const ot_view T = st_vec(t, variant == 4 ? 2 * NTB : NTB);
    *out = NULL;
    const int st = variant == 3 ? ot_solve_fwd_sens(ode, st_vec(y0, 2), K, T, out)
                                : ot_solve_dense(ode, st_vec(y0, 2), K, T, out);
    ot_ode_free(ode);
    return st;
}

/* The check admits a solve needing exactly the limit and refuses one byte
 * less, naming the arrays; the estimate moves by the exact size of what
 * changes: the f64 copy of f32 params, f32 instead of f64 ys, the
 * sensitivities, more output times. */
START_TEST(limit_boundary_and_estimate)
{
    const ot_mode mode = _i ? OT_LOCKSTEP : OT_LANES;
    ot_solution *s;
    uint64_t e[5];
    for (int v = 0; v < 5; v++) {
        ck_assert_status(batch(mode, v, &s), OT_OK, NULL);
        ot_solution_free(s);
        e[v] = ot__size_last_estimate();
    }
    const uint64_t ys = 8 * 2 * NTB * LB, ts = 8 * NTB,
                   lane = sizeof(int) + sizeof(int64_t) + sizeof(ot_lane_stats) +
                          sizeof(char *);
    ck_assert_uint_gt(e[0], ys + ts + lane * LB);
    ck_assert_uint_eq(e[1] - e[0], 8 * LB);  /* f64 copy of params */
    ck_assert_uint_eq(e[0] - e[2], ys / 2);  /* f32 ys */
    ck_assert_uint_ge(e[3] - e[0], ys);      /* sens: ys and more */
    ck_assert_uint_eq(e[4] - e[0], ys + ts); /* twice nt */
    for (int v = 0; v < 5; v++) {
        ot__size_set_limit(e[v]);
        ck_assert_status(batch(mode, v, &s), OT_OK, NULL);
        ck_assert_int_eq(ot_solution_nfailed(s), 0);
        ot_solution_free(s);
        ot__size_set_limit(e[v] - 1);
        char want[96];
        snprintf(want, sizeof want, "solve: needs %llu bytes, more than the %llu bytes",
                 (unsigned long long)e[v], (unsigned long long)(e[v] - 1));
        ck_assert_status(batch(mode, v, &s), OT_ERR_NOMEM, want);
        ck_assert_ptr_null(s);
        ck_assert(strstr(ot_last_error(), " set by the test limit; "));
        ck_assert(strstr(ot_last_error(), v == 2 ? "ys: 4 * rows=2 * nt=5 * nbatch=100 = "
                                                   "4000 bytes"
                                          : v == 4
                                              ? "ys: 8 * rows=2 * nt=10 * nbatch=100 = "
                                                "16000 bytes"
                                              : "ys: 8 * rows=2 * nt=5 * nbatch=100 = "
                                                "8000 bytes"));
        if (v == 1)
            ck_assert(strstr(ot_last_error(),
                             "f64 copy of params: 8 * rows=1 * lanes=100 = 800 bytes"));
        if (v == 3)
            ck_assert(strstr(ot_last_error(), "sensitivities: 8 * np=1 * rows=2 * nt=5 * "
                                              "nbatch=100 = 8000 bytes"));
    }
    ot__size_set_limit(0);
}
END_TEST

Suite *size_limits_suite(void)
{
    Suite *s = suite_create("size_limits");
    TCase *tc = tcase_create("refusals");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, too_big_refused_before_anything, 0, NREFUSALS);
    tcase_add_test(tc, limit_is_physical_memory);
#ifndef OT_TEST_SANITIZED
    tcase_add_test(tc, rlimit_data_lowers_the_limit);
#endif
    tcase_add_loop_test(tc, limit_boundary_and_estimate, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

/* Allocation-failure injection (issue 6): built against a library compiled
 * with -DOT_FAULT_INJECT and ASan (mk/inject.mk). For every public call that
 * allocates, and for every k until the call completes, the k-th failure
 * point (an allocation by odetensor, or a SUNDIALS constructor or setup call
 * made through src/core/alloc.h) fails; once alone ("one-shot") and once with
 * every later point failing too ("sticky", memory stays short). Each run
 * must end in an out-of-memory status with a message (or degrade to the
 * same answer, e.g. fewer threads), leave the caller's buffers and *out
 * untouched, give the untouched lanes of a partial result bit for bit, and
 * leak nothing: LSan checks after every run. */
#include <sanitizer/lsan_interface.h>
#include <stdio.h>
#include <stdlib.h>

#include "solve_cases.h"
#include "core/test_hooks.h"

static long g_points;     /* failure points exercised, all tests */
static long g_runs;       /* runs with a failure injected */
static long g_outcome[3]; /* solves: OT_ERR_NOMEM, lanes failed, same answer */

/* What one armed run must satisfy, whatever k was. */
static void assert_no_leak(const char *what, long k, int sticky)
{
    ck_assert_msg(__lsan_do_recoverable_leak_check() == 0,
                  "%s: leak after failing point %ld (%s)", what, k,
                  sticky ? "sticky" : "one-shot");
}

static void assert_nomem_message(const char *what, long k)
{
    ck_assert_msg(ot_last_error()[0] != '\0',
                  "%s: OT_ERR_NOMEM without a message (k %ld)", what, k);
}

/* ---- Tensors and DLPack -------------------------------------------------- */

static int g_released, g_deleted;

static void count_release(void *ctx)
{
    (void)ctx;
    g_released++;
}

static void count_delete(DLManagedTensorVersioned *mt)
{
    (void)mt;
    g_deleted++;
}

static void count_delete_legacy(DLManagedTensor *mt)
{
    (void)mt;
    g_deleted++;
}

/* Drives op(k) for k = 0, 1, ... until it runs without an injected failure;
 * op returns nonzero once it saw no failure. */
typedef int (*tensor_op)(long k, int sticky);

static void drive(const char *what, tensor_op op)
{
    for (int sticky = 0; sticky < 2; sticky++) {
        long k = 0;
        for (;; k++) {
            const int clean = op(k, sticky);
            assert_no_leak(what, k, sticky);
            if (clean)
                break;
            g_runs++;
        }
        g_points += k;
        ck_assert_msg(k > 0, "%s: no failure point at all", what);
        if (sticky == 0)
            printf("alloc-inject: %-52s %3ld points\n", what, k);
    }
}

static int op_tensor_new(long k, int sticky)
{
    const int64_t shape[3] = {3, 4, 5};
    ot_tensor *t = (ot_tensor *)&g_released; /* sentinel: must stay */
    ot__inject_arm(k, sticky);
    const int st = ot_tensor_new(&t, OT_F64, 3, shape);
    const long failed = ot__inject_failed();
    ot__inject_arm(-1, 0);
    if (failed) {
        ck_assert_status(st, OT_ERR_NOMEM, "cannot allocate");
        ck_assert_ptr_eq(t, (ot_tensor *)&g_released);
        return 0;
    }
    ck_assert_status(st, OT_OK, NULL);
    ck_assert_double_eq(st_at(t, 2, 3, 4), 0.0);
    ot_tensor_free(t);
    return 1;
}

static int op_tensor_wrap_and_export(long k, int sticky)
{
    double buf[6] = {1, 2, 3, 4, 5, 6};
    ot_layout l = {0};
    l.data = buf;
    l.dtype = OT_F64;
    l.device = ST_CPU;
    l.ndim = 2;
    l.shape[0] = 3, l.shape[1] = 2, l.shape[2] = 1;
    l.strides[0] = 8, l.strides[1] = 24, l.strides[2] = 48;
    g_released = 0;
    ot_tensor *t = NULL;
    ot__inject_arm(k, sticky);
    int st = ot_tensor_wrap(&t, &l, 0, count_release, NULL);
    if (st != OT_OK) {
        ot__inject_arm(-1, 0);
        ck_assert_status(st, OT_ERR_NOMEM, "cannot allocate");
        ck_assert_int_eq(g_released, 0); /* the buffer stays the caller's */
        return 0;
    }
    DLManagedTensorVersioned *mv = NULL;
    st = ot_dlpack_export(t, &mv);
    if (st == OT_OK) {
        DLManagedTensor *ml = NULL;
        ot_tensor *t2 = NULL;
        st = ot_dlpack_import(mv, &t2); /* consumes mv whatever happens */
        if (st == OT_OK && (st = ot_dlpack_export_legacy(t2, &ml)) == OT_OK) {
            ck_assert_int_eq(g_released, 0);
            ml->deleter(ml);
        } else if (st != OT_OK && t2 != NULL) {
            ot_tensor_free(t2); /* legacy export failed: t2 is still ours */
        }
        t = NULL;
    }
    const long failed = ot__inject_failed();
    ot__inject_arm(-1, 0);
    if (st != OT_OK)
        ck_assert_status(st, OT_ERR_NOMEM, "cannot allocate");
    ot_tensor_free(t); /* export failed: the tensor is still ours, unchanged */
    ck_assert_int_eq(g_released, 1);
    for (int i = 0; i < 6; i++)
        ck_assert_double_eq(buf[i], i + 1);
    return failed == 0;
}

static int op_import(long k, int sticky)
{
    double buf[4] = {1, 2, 3, 4};
    int64_t shape[1] = {4};
    DLManagedTensorVersioned mv = {0};
    mv.version.major = 1;
    mv.dl_tensor.data = buf;
    mv.dl_tensor.device.device_type = kDLCPU;
    mv.dl_tensor.ndim = 1;
    mv.dl_tensor.dtype.code = kDLFloat;
    mv.dl_tensor.dtype.bits = 64;
    mv.dl_tensor.dtype.lanes = 1;
    mv.dl_tensor.shape = shape;
    mv.deleter = count_delete;
    DLManagedTensor ml = {0};
    ml.dl_tensor = mv.dl_tensor;
    ml.deleter = count_delete_legacy;
    g_deleted = 0;
    ot_tensor *a = NULL, *b = NULL;
    ot__inject_arm(k, sticky);
    const int sa = ot_dlpack_import(&mv, &a);
    const int sb = ot_dlpack_import_legacy(&ml, &b);
    const long failed = ot__inject_failed();
    ot__inject_arm(-1, 0);
    if (sa != OT_OK)
        ck_assert_status(sa, OT_ERR_NOMEM, "cannot allocate");
    if (sb != OT_OK)
        ck_assert_status(sb, OT_ERR_NOMEM, "cannot allocate");
    ot_tensor_free(a);
    ot_tensor_free(b);
    ck_assert_int_eq(g_deleted, 2); /* consumed exactly once either way */
    return failed == 0;
}

static int op_copy_colmajor(long k, int sticky)
{
    float rm[6] = {1, 2, 3, 4, 5, 6}; /* [2, 3] row-major */
    ot_layout l = {0};
    l.data = rm;
    l.dtype = OT_F32;
    l.device = ST_CPU;
    l.ndim = 2;
    l.shape[0] = 2, l.shape[1] = 3, l.shape[2] = 1;
    l.strides[0] = 12, l.strides[1] = 4;
    ot_tensor *t = (ot_tensor *)&g_released;
    ot__inject_arm(k, sticky);
    const int st = ot_tensor_copy_colmajor(&t, &l, OT_F64);
    const long failed = ot__inject_failed();
    ot__inject_arm(-1, 0);
    if (failed) {
        ck_assert_status(st, OT_ERR_NOMEM, "cannot allocate");
        ck_assert_ptr_eq(t, (ot_tensor *)&g_released);
        return 0;
    }
    ck_assert_status(st, OT_OK, NULL);
    ck_assert_double_eq(st_at(t, 1, 2, 0), 6.0);
    ot_tensor_free(t);
    return 1;
}

static int op_ode(long k, int sticky)
{
    const double atol[2] = {1e-9, 1e-10};
    ot_ode *ode = (ot_ode *)&g_released;
    ot__inject_arm(k, sticky);
    int st = ot_ode_new(&ode, 2, 2, st_decay_rhs, NULL);
    if (st == OT_OK) {
        st = ot_ode_set_atol_vector(ode, st_vec(atol, 2));
        if (st != OT_OK)
            ot_ode_free(ode);
    } else {
        ck_assert_ptr_eq(ode, (ot_ode *)&g_released);
        ode = NULL;
    }
    const long failed = ot__inject_failed();
    ot__inject_arm(-1, 0);
    if (st != OT_OK) {
        ck_assert_status(st, OT_ERR_NOMEM, "cannot allocate");
        return 0;
    }
    ot_ode_free(ode);
    return failed == 0;
}

START_TEST(tensor_layer_under_injection)
{
    if (!sc_in_shard(0)) /* shard 0's */
        return;
    drive("ot_tensor_new", op_tensor_new);
    drive("ot_tensor_wrap + DLPack export/import", op_tensor_wrap_and_export);
    drive("ot_dlpack_import", op_import);
    drive("ot_tensor_copy_colmajor", op_copy_colmajor);
    drive("ot_ode_new + ot_ode_set_atol_vector", op_ode);
}
END_TEST

/* ---- Solves (the cases of solve_cases.h) --------------------------------- */

static void assert_lane_as_ref(const ot_solution *got, const ot_solution *ref, int64_t b,
                               const char *what, long k)
{
    const char *differs = sc_lane_differs(got, ref, b);
    ck_assert_msg(
        differs == NULL,
        "%s: lane %lld differs from the reference in %s after failing point %ld", what,
        (long long)b, differs, k);
}

START_TEST(solve_under_injection)
{
    if (!sc_in_shard(_i))
        return;
    const sc_case *c = &SC_CASES[_i];
    sc_inputs in;
    sc_inputs_init(&in);
    const sc_inputs saved = in;
    ot_ode *ode = sc_make_ode(c, &in);
    ot_solution *ref = NULL;
    ck_assert_status(sc_run_solve(c, ode, &in, &ref), OT_OK, NULL);
    if (c->roots) { /* the case exercises the root path: the last lane has one */
        int ri;
        double rt;
        ck_assert_status(ot_solution_lane_root(ref, SC_NB - 1, &ri, &rt), OT_OK, NULL);
        ck_assert_int_eq(ri, 0);
    }

    for (int sticky = 0; sticky < 2; sticky++) {
        long k = 0;
        for (;; k++) {
            ot_solution *sol = (ot_solution *)&g_runs; /* sentinel: must stay on error */
            ot_clear_error();
            ot__inject_arm(k, sticky);
            const int st = sc_run_solve(c, ode, &in, &sol);
            const long failed = ot__inject_failed();
            ot__inject_arm(-1, 0);
            ck_assert_msg(memcmp(&in, &saved, sizeof in) == 0,
                          "%s: inputs changed (k %ld)", c->name, k);
            if (st == OT_ERR_NOMEM) {
                ck_assert_int_gt(failed, 0);
                assert_nomem_message(c->name, k);
                ck_assert_ptr_eq(sol, (ot_solution *)&g_runs);
            } else {
                ck_assert_msg(st == OT_OK || st == OT_ERR_LANES_FAILED,
                              "%s: failing point %ld (%s) gave %s: %s", c->name, k,
                              sticky ? "sticky" : "one-shot", ot_status_name(st),
                              ot_last_error());
                ck_assert_int_eq(st == OT_ERR_LANES_FAILED, ot_solution_nfailed(sol) > 0);
                for (int64_t b = 0; b < SC_NB; b++) {
                    const int ls = ot_solution_lane_status(sol, b);
                    if (ls == OT_OK)
                        assert_lane_as_ref(sol, ref, b, c->name, k);
                    else
                        ck_assert_msg(ls == OT_ERR_NOMEM,
                                      "%s: lane %lld failed with %s (%s) at point %ld",
                                      c->name, (long long)b, ot_status_name(ls),
                                      ot_solution_lane_message(sol, b), k);
                }
                ot_solution_free(sol);
            }
            assert_no_leak(c->name, k, sticky);
            if (failed == 0) {
                ck_assert_int_eq(st, OT_OK);
                break;
            }
            g_runs++;
            g_outcome[st == OT_ERR_NOMEM ? 0 : st == OT_ERR_LANES_FAILED ? 1 : 2]++;
        }
        g_points += k;
        ck_assert_int_gt(k, 0);
        if (sticky == 0)
            printf("alloc-inject: %-52s %3ld points\n", c->name, k);
    }
    ot_solution_free(ref);
    ot_ode_free(ode);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("alloc_inject");
    TCase *tc = tcase_create("tensor");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tensor_layer_under_injection);
    suite_add_tcase(s, tc);
    tc = tcase_create("solve");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, solve_under_injection, 0, SC_NCASES);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    /* In-process: the totals below add up over every test. */
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    printf("alloc-inject (%s): %ld failure points exercised, %ld runs with a failure; "
           "solves: %ld OT_ERR_NOMEM, %ld with OT_ERR_NOMEM lanes, %ld the same answer\n",
           sc_shard_name(), g_points, g_runs, g_outcome[0], g_outcome[1], g_outcome[2]);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

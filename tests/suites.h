/* The Check suites, one per layer, and helpers the test files share. */
#ifndef OT_TESTS_SUITES_H
#define OT_TESTS_SUITES_H

#include <check.h>
#include <string.h>

#include <odetensor.h>

Suite *tensor_suite(void);
Suite *dlpack_suite(void);
Suite *dlpack_import_suite(void);
Suite *solve_suite(void);
Suite *sens_roots_suite(void);
Suite *sens_events_suite(void);
Suite *adjoint_events_suite(void);
Suite *adjoint_models_suite(void);
Suite *solve_faults_suite(void);
Suite *lockstep_suite(void);
Suite *concurrency_suite(void);
Suite *faults_numeric_suite(void);
Suite *faults_scale_suite(void);
Suite *size_limits_suite(void);
Suite *core_api_suite(void);
Suite *lockstep_blocks_suite(void);
Suite *traps_suite(void);
Suite *events_suite(void);
Suite *sens_derivs_suite(void);
Suite *adjoint_suite(void);
Suite *methods_suite(void);
Suite *linsol_suite(void);
Suite *mode_events_suite(void);
Suite *lanes_alone_suite(void);
Suite *callback_lane_suite(void);
Suite *layer_api_suite(void);
Suite *assemble_suite(void);
Suite *solve_options_suite(void);
Suite *messages_suite(void);
Suite *zeno_suite(void);
Suite *dosing_suite(void);
Suite *dosing_plan_suite(void);
Suite *dose_solve_suite(void);
Suite *dose_ss_suite(void);
Suite *dose_grad_suite(void);
Suite *stop_outputs_suite(void);
Suite *kernel_suite(void);
Suite *kernel_model_suite(void);
Suite *kernel_events_suite(void);

/* A test case named name in s, each test limited to timeout seconds. */
static inline TCase *ot_test_tcase(Suite *s, const char *name, double timeout)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, timeout);
    suite_add_tcase(s, tc);
    return tc;
}

/* Whether this thread's last message contains needle (NULL: no demand). */
static inline int ot_test_msg_has(const char *needle)
{
    return needle == NULL || strstr(ot_last_error(), needle) != NULL;
}

/* Asserts a status and, for a failure, that the message contains needle. */
#define ck_assert_status(expr, want, needle)                                             \
    do {                                                                                 \
        const int got_ = (expr);                                                         \
        ck_assert_msg(got_ == (want), "%s returned %s, expected %s (%s)", #expr,         \
                      ot_status_name(got_), ot_status_name(want), ot_last_error());      \
        if ((want) != OT_OK)                                                             \
            ck_assert_msg(ot_test_msg_has(needle), "message \"%s\" lacks \"%s\"",        \
                          ot_last_error(), (const char *)(needle));                      \
    } while (0)

#endif

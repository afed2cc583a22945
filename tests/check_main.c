/* Runs every Check suite in one runner so `make check` ends on one summary
 * line. Fork mode (Check's default) isolates each test; CK_FORK=no runs them
 * in-process (for valgrind). */
#include <check.h>
#include <stdlib.h>

#include "suites.h"

int main(void)
{
    SRunner *sr = srunner_create(tensor_suite());
    srunner_add_suite(sr, dlpack_suite());
    srunner_add_suite(sr, dlpack_import_suite());
    srunner_add_suite(sr, solve_suite());
    srunner_add_suite(sr, sens_roots_suite());
    srunner_add_suite(sr, sens_events_suite());
    srunner_add_suite(sr, adjoint_events_suite());
    srunner_add_suite(sr, adjoint_models_suite());
    srunner_add_suite(sr, solve_faults_suite());
    srunner_add_suite(sr, lockstep_suite());
    srunner_add_suite(sr, concurrency_suite());
    srunner_add_suite(sr, faults_numeric_suite());
    srunner_add_suite(sr, faults_scale_suite());
    srunner_add_suite(sr, size_limits_suite());
    srunner_add_suite(sr, core_api_suite());
    srunner_add_suite(sr, lockstep_blocks_suite());
    srunner_add_suite(sr, traps_suite());
    srunner_add_suite(sr, events_suite());
    srunner_add_suite(sr, sens_derivs_suite());
    srunner_add_suite(sr, adjoint_suite());
    srunner_add_suite(sr, methods_suite());
    srunner_add_suite(sr, linsol_suite());
    srunner_add_suite(sr, mode_events_suite());
    srunner_add_suite(sr, lanes_alone_suite());
    srunner_add_suite(sr, callback_lane_suite());
    srunner_add_suite(sr, layer_api_suite());
    srunner_add_suite(sr, assemble_suite());
    srunner_add_suite(sr, solve_options_suite());
    srunner_add_suite(sr, messages_suite());
    srunner_add_suite(sr, zeno_suite());
    srunner_add_suite(sr, dosing_suite());
    srunner_add_suite(sr, dosing_plan_suite());
    srunner_add_suite(sr, dose_solve_suite());
    srunner_add_suite(sr, dose_ss_suite());
    srunner_add_suite(sr, dose_grad_suite());
    srunner_add_suite(sr, stop_outputs_suite());
    srunner_add_suite(sr, kernel_suite());
    srunner_add_suite(sr, kernel_model_suite());
    srunner_add_suite(sr, kernel_events_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

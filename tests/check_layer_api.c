/* The public API for layers built on odetensor (libodetensor_mpi, bindings,
 * schedulers), which use the public headers only: messages set from above
 * (ot_set_error). Each function's refusals (status and message) and its
 * results. */
#include <math.h>
#include <string.h>

#include "solve_common.h"
#include "suites.h"

/* ---- ot_set_error ------------------------------------------------------- */

START_TEST(a_layer_above_sets_the_message_and_gets_its_status_back)
{
    ot_clear_error();
    ck_assert_int_eq(ot_set_error(OT_ERR_MPI, "comm: rank %d of %d", 3, 4), OT_ERR_MPI);
    ck_assert_str_eq(ot_last_error(), "comm: rank 3 of 4");
    ck_assert_int_eq(ot_set_error(OT_ERR_VALUE, "plain"), OT_ERR_VALUE);
    ck_assert_str_eq(ot_last_error(), "plain");
}
END_TEST

START_TEST(the_message_may_quote_the_last_one)
{
    /* "...: %s", ot_last_error(): formatted before the old one is replaced. */
    ot_set_error(OT_ERR_SHAPE, "y0: shape [2, 3]");
    ck_assert_int_eq(ot_set_error(OT_ERR_SHAPE, "block 4 on rank 1: %s", ot_last_error()),
                     OT_ERR_SHAPE);
    ck_assert_str_eq(ot_last_error(), "block 4 on rank 1: y0: shape [2, 3]");
}
END_TEST

START_TEST(a_long_message_is_cut_at_511_bytes)
{
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ck_assert_int_eq(ot_set_error(OT_ERR_ARG, "%s", big), OT_ERR_ARG);
    ck_assert_uint_eq(strlen(ot_last_error()), 511);
}
END_TEST

START_TEST(set_error_refuses_success_unknown_codes_and_a_null_format)
{
    ck_assert_status(ot_set_error(OT_OK, "fine"), OT_ERR_ARG,
                     "ot_set_error: status is 0; give a failure code");
    ck_assert_status(ot_set_error(-77, "what"), OT_ERR_ARG,
                     "ot_set_error: status is -77");
    const char *none = NULL;
    ck_assert_status(ot_set_error(OT_ERR_VALUE, none, 0), OT_ERR_ARG,
                     "ot_set_error: fmt is NULL");
}
END_TEST

Suite *layer_api_suite(void)
{
    Suite *s = suite_create("layer_api");
    TCase *tc = ot_test_tcase(s, "layer_api", 30);
    tcase_add_test(tc, a_layer_above_sets_the_message_and_gets_its_status_back);
    tcase_add_test(tc, the_message_may_quote_the_last_one);
    tcase_add_test(tc, a_long_message_is_cut_at_511_bytes);
    tcase_add_test(tc, set_error_refuses_success_unknown_codes_and_a_null_format);
    return s;
}

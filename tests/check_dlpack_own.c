/* odetensor's own DLPack definitions, which its header uses where the
 * compiler finds no <dlpack/dlpack.h> (issue 23: the installed header
 * needed libdlpack-dev, which the install neither shipped nor named): the
 * ABI is DLPack 1.0's, and tensors cross the library's boundary with them
 * (the library itself is built with the system header). */
#define OT_DLPACK_OWN_ABI
#include "dlpack_abi.h"

START_TEST(own_definitions_have_the_dlpack_abi)
{
    assert_dlpack_abi();
    ck_assert_int_eq(kDLFloat, 2);
    ck_assert_int_eq(DLPACK_MAJOR_VERSION, 1);
}
END_TEST

START_TEST(a_tensor_exports_and_imports_through_the_own_definitions)
{
    ot_tensor *t = NULL, *back = NULL;
    const int64_t shape[2] = {3, 2};
    ck_assert_int_eq(ot_tensor_new(&t, OT_F64, 2, shape), OT_OK);
    double *data = (double *)ot_tensor_layout(t)->data;
    for (int i = 0; i < 6; i++)
        data[i] = 0.5 * i;
    DLManagedTensorVersioned *mt = NULL;
    ck_assert_int_eq(ot_dlpack_export(t, &mt), OT_OK);
    const DLTensor *d = &mt->dl_tensor;
    ck_assert_int_eq(mt->version.major, 1);
    ck_assert_ptr_eq(d->data, data);
    ck_assert_int_eq(d->ndim, 2);
    ck_assert_int_eq(d->device.device_type, kDLCPU);
    ck_assert_int_eq(d->dtype.code, kDLFloat);
    ck_assert_int_eq(d->dtype.bits, 64);
    ck_assert_int_eq(d->shape[0], 3);
    ck_assert_int_eq(d->shape[1], 2);
    ck_assert_int_eq(d->strides[0], 1); /* column-major, in elements */
    ck_assert_int_eq(d->strides[1], 3);
    ck_assert_int_eq(ot_dlpack_import(mt, &back), OT_OK);
    const ot_layout *l = ot_tensor_layout(back);
    ck_assert_ptr_eq(l->data, data);
    ck_assert_int_eq(l->strides[1], 3 * 8);
    ot_tensor_free(back);
}
END_TEST

void dlpack_own_abi_tests(TCase *tc)
{
    tcase_add_test(tc, own_definitions_have_the_dlpack_abi);
    tcase_add_test(tc, a_tensor_exports_and_imports_through_the_own_definitions);
}

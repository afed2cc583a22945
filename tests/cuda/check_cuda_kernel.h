/* check_cuda's compiled-model tests (check_cuda_kernel.c). */
#ifndef OT_TESTS_CUDA_CHECK_CUDA_KERNEL_H
#define OT_TESTS_CUDA_CHECK_CUDA_KERNEL_H

#include <check.h>

/* Adds the compiled-model tests to tc: with a device the GPU ones, else the
 * no-device ones. @return how many GPU tests were left out (0 with one). */
int ot_cuda_kernel_tests(TCase *tc, int have_gpu);

#endif

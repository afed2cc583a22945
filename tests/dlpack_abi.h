/* The DLPack 1.0 ABI as the tests expect it, for the suites that check the
 * header's definitions: check_dlpack.c (the system header's, with the 1.0
 * additions) and check_dlpack_own.c (odetensor's own, OT_DLPACK_OWN_ABI).
 * Define OT_DLPACK_OWN_ABI, if at all, before including this. */
#ifndef OT_TESTS_DLPACK_ABI_H
#define OT_TESTS_DLPACK_ABI_H

#include "dlpack_common.h"

typedef struct {
    char c;
    uint64_t v;
} u64_probe; /* offsetof(v): the alignment of uint64_t inside structs */

typedef DLManagedTensorVersioned MTV;

/* clang-format off */
#define ABI(e) {#e, e}
static const struct {
    const char *what;
    size_t got;
} abi_got[] = {
    ABI(sizeof(void *)), ABI(offsetof(u64_probe, v)), ABI(sizeof(DLTensor)),
    ABI(offsetof(DLTensor, device)), ABI(offsetof(DLTensor, ndim)),
    ABI(offsetof(DLTensor, dtype)), ABI(offsetof(DLTensor, shape)),
    ABI(offsetof(DLTensor, strides)), ABI(offsetof(DLTensor, byte_offset)),
    ABI(sizeof(MTV)), ABI(offsetof(MTV, manager_ctx)), ABI(offsetof(MTV, deleter)),
    ABI(offsetof(MTV, flags)), ABI(offsetof(MTV, dl_tensor)),
    ABI(sizeof(DLManagedTensor)), ABI(offsetof(DLManagedTensor, manager_ctx)),
    ABI(offsetof(DLManagedTensor, deleter)),
    /* The same on every target. */
    ABI(offsetof(DLTensor, data)), ABI(offsetof(MTV, version)),
    ABI(offsetof(DLManagedTensor, dl_tensor)), ABI(sizeof(DLPackVersion)),
    ABI(offsetof(DLPackVersion, minor)), ABI(sizeof(((MTV *)0)->flags)),
    ABI(sizeof(DLDevice)), ABI(sizeof(DLDataType)),
    ABI(DLPACK_FLAG_BITMASK_READ_ONLY), ABI(DLPACK_FLAG_BITMASK_IS_COPIED),
};

/* From DLPack 1.0's field order and C's alignment rules, for LP64, wasm32
 * (4-byte pointers, 8-byte int64 alignment) and i386 (4-byte alignment). */
static const size_t abi_rows[][N(abi_got)] = {
    {8, 8, 48, 8, 16, 20, 24, 32, 40, 80, 8, 16, 24, 32, 64, 48, 56,
     0, 0, 0, 8, 4, 8, 8, 4, 1, 2},
    {4, 8, 40, 4, 12, 16, 20, 24, 32, 64, 8, 12, 16, 24, 48, 40, 44,
     0, 0, 0, 8, 4, 8, 8, 4, 1, 2},
    {4, 4, 36, 4, 12, 16, 20, 24, 28, 60, 8, 12, 16, 24, 44, 36, 40,
     0, 0, 0, 8, 4, 8, 8, 4, 1, 2},
};
/* clang-format on */

/* Every size and offset above equals DLPack 1.0's for this target. */
static void assert_dlpack_abi(void)
{
    int matched = 0; /* the row for this pointer size and int64 alignment */
    for (int r = 0; r < N(abi_rows); r++) {
        if (abi_rows[r][0] != abi_got[0].got || abi_rows[r][1] != abi_got[1].got)
            continue;
        matched++;
        for (int i = 0; i < N(abi_got); i++)
            ck_assert_msg(abi_got[i].got == abi_rows[r][i],
                          "%s is %zu; DLPack 1.0 gives %zu", abi_got[i].what,
                          abi_got[i].got, abi_rows[r][i]);
    }
    ck_assert_msg(matched == 1, "no ABI table for %zu-byte pointers", sizeof(void *));
    ck_assert_int_eq(OT_DLPACK_MAJOR, 1);
    ck_assert_int_eq(OT_DLPACK_MINOR, 0);
    ck_assert_int_eq(kDLCPU, OT_CPU);
    ck_assert_int_eq(kDLCUDA, OT_CUDA);
}

#endif

/* Fuzz target: view construction and layouts from arbitrary dtype, ndim,
 * shape, strides and data offset (ot_view_make, ot_view_mut_make,
 * ot_layout_check, ot_tensor_copy_colmajor). Every data pointer points into
 * a real buffer; a layout handed to the copy must address only that buffer
 * (the copy reads what the layout describes: the caller's promise). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    const uint8_t flags = fz_u8(&in);
    const int dtype = (flags & 0x80) ? (int)(int32_t)fz_u64(&in, 4) : 1 + (flags & 1);
    const int ndim = (int)(int8_t)fz_u8(&in) % 6; /* -5 .. 5 */
    ot_device dev = {OT_CPU, 0};
    if (flags & 0x40)
        dev.type = (int32_t)(fz_u8(&in) % 4), dev.id = (int32_t)(int8_t)fz_u8(&in);
    const size_t off = (size_t)fz_u64(&in, 2) % FZ_BUF;
    int64_t shape[8] = {0}, strides[8] = {0};
    for (int d = 0; d < 8; d++)
        shape[d] = fz_i64(&in);
    for (int d = 0; d < 8; d++)
        strides[d] = fz_i64(&in);
    const int null_strides = (flags & 2) != 0;
    void *ptr = (flags & 4) ? NULL : fz_buf + off;

    /* Views: success means the rules hold (fz_check_view) and *out is set;
     * failure leaves *out untouched and says why. */
    ot_view v;
    memset(&v, 0xA5, sizeof v);
    const ot_view before = v;
    const int s = ot_view_make(&v, ptr, (ot_dtype)dtype, dev, ndim, shape,
                               null_strides ? NULL : strides);
    if (s == OT_OK)
        fz_check_view(v);
    else {
        FZ_EXPECT(memcmp(&v, &before, sizeof v) == 0);
        FZ_EXPECT(ot_last_error()[0] != '\0');
    }
    ot_view_mut vm;
    const int sm = ot_view_mut_make(&vm, ptr, (ot_dtype)dtype, dev, ndim, shape,
                                    null_strides ? NULL : strides);
    FZ_EXPECT(sm == s);
    if (sm == OT_OK) {
        FZ_EXPECT(memcmp(&vm.layout, &v.layout, sizeof v.layout) == 0);
        fz_check_view(ot_view_const(vm));
    }

    /* The same fields as a raw layout. */
    ot_layout l;
    memset(&l, 0, sizeof l);
    l.data = ptr;
    l.dtype = dtype;
    l.device = dev;
    l.ndim = ndim;
    for (int d = 0; d < 3; d++)
        l.shape[d] = shape[d], l.strides[d] = strides[d];
    /* ot_layout_check judges a layout as ot_view_make judges the same fields
     * (it does not normalize the caller's copy, so that is no view itself). */
    const int sl = ot_layout_check(&l, "fuzz");
    if (ndim >= 0 && ndim <= 3 && !null_strides)
        FZ_EXPECT(sl == s);
    if (ndim < 0 || ndim > 3)
        FZ_EXPECT(sl != OT_OK);

    /* The copy reads every element the layout addresses: give it only
     * layouts inside the buffer, or ones whose size cannot fit (which it must
     * refuse before reading). Skip copies too large to make quickly. */
    const size_t is = ot_dtype_size(dtype);
    if (ndim < 0 || ndim > 3 || is == 0 || dev.type != OT_CPU || ptr == NULL)
        return 0;
    __int128 bytes = (__int128)is;
    int huge = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return 0;
        bytes *= shape[d];
        if (bytes == 0)
            huge = 0;
        if (bytes > ((__int128)1 << 63))
            bytes = (__int128)1 << 63, huge = 1;
    }
    const int inside = fz_in_buffer(ptr, is, ndim, shape, strides);
    const ot_dtype to = (flags & 8) ? OT_F32 : OT_F64;
    if (inside && bytes <= (1 << 24)) {
        ot_tensor *t = NULL;
        const int c = ot_tensor_copy_colmajor(&t, &l, to);
        FZ_EXPECT((c == OT_OK) == (t != NULL));
        if (c == OT_OK) {
            fz_check_view(ot_tensor_view(t));
            ot_tensor_free(t);
        }
    } else if ((huge || bytes > INT64_MAX) && bytes != 0) {
        ot_tensor *t = NULL;
        const int c = ot_tensor_copy_colmajor(&t, &l, to);
        FZ_EXPECT(c != OT_OK && t == NULL);
    }
    return 0;
}

/* Fuzz target: DLPack import from arbitrary DLTensor and managed-tensor
 * fields (versions, flags, devices, dtypes, ndim, shapes, NULL strides, byte
 * offsets): ot_dlpack_import, ot_dlpack_import_legacy, ot_dlpack_view,
 * ot_dlpack_layout. Data, shape and strides point at real arrays (ndim is
 * kept within their 64 entries); the deleter must run exactly once. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int deleted;
static void del_v(DLManagedTensorVersioned *m) { (void)m, deleted++; }
static void del_l(DLManagedTensor *m) { (void)m, deleted++; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    static int64_t shape[64], strides[64];
    const uint8_t flags = fz_u8(&in);
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.data = (flags & 1) ? NULL : fz_buf + fz_u64(&in, 2) % FZ_BUF;
    t.device.device_type = (flags & 2) ? (DLDeviceType)(int32_t)fz_u64(&in, 4) : kDLCPU;
    t.device.device_id = (int32_t)(int8_t)fz_u8(&in);
    t.ndim = (int32_t)((int8_t)fz_u8(&in) % 65); /* -64 .. 64 */
    if (flags & 4) {
        t.dtype.code = fz_u8(&in), t.dtype.bits = fz_u8(&in);
        t.dtype.lanes = (uint16_t)fz_u64(&in, 2);
    } else {
        t.dtype.code = kDLFloat, t.dtype.bits = (fz_u8(&in) & 1) ? 32 : 64,
        t.dtype.lanes = 1;
    }
    for (int d = 0; d < 64; d++)
        shape[d] = fz_i64(&in), strides[d] = d < 4 ? fz_i64(&in) : 1;
    t.shape = shape;
    t.strides = (flags & 8) ? NULL : strides;
    t.byte_offset = (flags & 16) ? fz_u64(&in, 8) : fz_u64(&in, 2) % 64;

    /* A bare tensor: view and raw layout. Views must obey the rules, and
     * are read only when they lie in the buffer. */
    ot_view v;
    if (ot_dlpack_view(&t, &v) == OT_OK)
        fz_check_view(v);
    ot_view_mut vm;
    if (ot_dlpack_view_mut(&t, &vm) == OT_OK)
        fz_check_view(ot_view_const(vm));
    ot_layout l;
    if (ot_dlpack_layout(&t, &l) == OT_OK && l.device.type == OT_CPU &&
        fz_in_buffer(l.data, ot_dtype_size(l.dtype), l.ndim, l.shape, l.strides)) {
        __int128 bytes = 8;
        for (int d = 0; d < l.ndim; d++)
            bytes *= l.shape[d];
        if (bytes <= (1 << 24)) {
            ot_tensor *c = NULL;
            if (ot_tensor_copy_colmajor(&c, &l, OT_F64) == OT_OK)
                fz_check_view(ot_tensor_view(c));
            ot_tensor_free(c);
        }
    }

    /* Managed tensors: consumed either way, deleter called exactly once. */
    ot_tensor *o = NULL;
    if (flags & 32) {
        DLManagedTensor m = {t, NULL, del_l};
        deleted = 0;
        const int s = ot_dlpack_import_legacy((flags & 64) ? NULL : &m, &o);
        if (s == OT_OK) {
            fz_check_view(ot_tensor_view(o));
            FZ_EXPECT(deleted == 0);
            ot_tensor_free(o);
        } else
            FZ_EXPECT(o == NULL);
        FZ_EXPECT(deleted == ((flags & 64) ? 0 : 1));
    } else {
        DLManagedTensorVersioned m;
        memset(&m, 0, sizeof m);
        m.version.major = (flags & 64) ? (uint32_t)fz_u8(&in) : OT_DLPACK_MAJOR;
        m.version.minor = fz_u8(&in);
        m.flags = fz_u64(&in, 8);
        m.deleter = (flags & 128) ? NULL : del_v;
        m.dl_tensor = t;
        deleted = 0;
        const int s = ot_dlpack_import(&m, &o);
        if (s == OT_OK) {
            fz_check_view(ot_tensor_view(o));
            FZ_EXPECT(deleted == 0);
            ot_tensor_free(o);
        } else
            FZ_EXPECT(o == NULL);
        FZ_EXPECT(deleted == (m.deleter ? 1 : 0));
    }
    return 0;
}

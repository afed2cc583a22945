/* Shared by the libFuzzer targets (tests/fuzz/fuzz_*.c, built by
 * mk/hardening.mk with clang 14, ASan and UBSan): a reader that takes typed
 * values from the fuzzer's bytes (zeros once they run out), the real buffer
 * every data pointer points into, and the check that a layout only addresses
 * bytes inside it. A failed expectation aborts, which libFuzzer reports. */
#ifndef OT_FUZZ_COMMON_H
#define OT_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <odetensor.h>

#define FZ_EXPECT(cond)                                                                  \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: expectation failed: %s (last error: %s)\n",          \
                    __FILE__, __LINE__, #cond, ot_last_error());                         \
            abort();                                                                     \
        }                                                                                \
    } while (0)

typedef struct fz_in {
    const uint8_t *p;
    size_t n;
} fz_in;

static inline uint64_t fz_u64(fz_in *in, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++) {
        v |= (uint64_t)(in->n ? *in->p : 0) << (8 * i);
        if (in->n)
            in->p++, in->n--;
    }
    return v;
}

static inline uint8_t fz_u8(fz_in *in) { return (uint8_t)fz_u64(in, 1); }

/* An int64: one selector byte picks a small value (most often), an edge
 * value, or 8 raw bytes, so shapes and strides are mostly plausible. */
static inline int64_t fz_i64(fz_in *in)
{
    const uint8_t sel = fz_u8(in);
    switch (sel % 8) {
    case 0:
    case 1:
    case 2:
    case 3:
        return (int64_t)(fz_u8(in) % 17) - 2; /* -2 .. 14 */
    case 4:
        return (int64_t)(int8_t)fz_u8(in) * 4; /* byte-ish strides */
    case 5: {
        static const int64_t edge[] = {0,
                                       1,
                                       -1,
                                       INT64_MAX,
                                       INT64_MIN,
                                       INT64_MAX / 8 + 1,
                                       INT64_C(1) << 32,
                                       INT64_C(1) << 62,
                                       3,
                                       8,
                                       24};
        return edge[fz_u8(in) % (sizeof edge / sizeof *edge)];
    }
    default:
        return (int64_t)fz_u64(in, 8);
    }
}

/* The buffer all data pointers point into: FZ_BUF bytes, 64-byte aligned. */
#define FZ_BUF 4096
static _Alignas(64) unsigned char fz_buf[FZ_BUF];

/* Whether every element that (data, itemsize, ndim, shape, strides) addresses
 * lies in fz_buf (strides in bytes, any sign). Empty layouts address none. */
static inline int fz_in_buffer(const void *data, size_t itemsize, int ndim,
                               const int64_t *shape, const int64_t *strides)
{
    __int128 lo = 0, hi = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 0)
            return 1;
        if (shape[d] < 0)
            return 0;
        const __int128 e = (__int128)(shape[d] - 1) * strides[d];
        if (e > FZ_BUF || e < -FZ_BUF)
            return 0; /* lo and hi never cancel: this alone leaves the buffer */
        if (e < 0)
            lo += e;
        else
            hi += e;
    }
    const __int128 base = (const unsigned char *)data - fz_buf;
    return data != NULL && base + lo >= 0 && base + hi + (__int128)itemsize <= FZ_BUF;
}

/* Reads every element of a valid view (ASan catches a read outside fz_buf)
 * and checks the column-major rules the view promises. */
static inline void fz_check_view(ot_view v)
{
    const ot_layout *l = &v.layout;
    const int64_t is = (int64_t)ot_dtype_size(l->dtype);
    FZ_EXPECT(is == 4 || is == 8);
    FZ_EXPECT(l->ndim >= 0 && l->ndim <= 3);
    for (int d = 0; d < 3; d++) {
        FZ_EXPECT(l->shape[d] >= 0);
        if (d >= l->ndim)
            FZ_EXPECT(l->shape[d] == 1);
    }
    if (ot_view_numel(v) == 0)
        return; /* addresses nothing: its strides are all the item size */
    __int128 span = is;
    for (int d = 0; d < 3; d++) {
        if (l->shape[d] > 1) {
            FZ_EXPECT(l->strides[d] >= span && l->strides[d] % is == 0);
            if (d == 0)
                FZ_EXPECT(l->strides[0] == is);
            span = (__int128)l->strides[d] * (l->shape[d] - 1) + span;
        }
    }
    if (!fz_in_buffer(l->data, (size_t)is, 3, l->shape, l->strides))
        return; /* valid, but larger than the caller's buffer: not ours to read */
    if (l->device.type != OT_CPU)
        return;
    double sum = 0.0, x;
    for (int64_t k = 0; k < l->shape[2]; k++)
        for (int64_t j = 0; j < l->shape[1]; j++)
            for (int64_t i = 0; i < l->shape[0]; i++) {
                FZ_EXPECT(ot_view_get(v, i, j, k, &x) == OT_OK);
                sum += x;
            }
    (void)sum;
}

#endif

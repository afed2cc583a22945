/* A tour of odetensor's tensor and DLPack layers: build [n, nbatch] inputs,
 * broadcast one lane, refuse a row-major array (and copy it on request), and
 * hand a tensor to a DLPack consumer and back without copying. */
#include <stdio.h>

#include <odetensor.h>

static const ot_device CPU = {OT_CPU, 0};

static int report(int st, const char *what)
{
    if (st != OT_OK)
        printf("  %-34s -> %s: %s\n", what, ot_status_name(st), ot_last_error());
    return st;
}

int main(void)
{
    printf("odetensor %s: tensors and DLPack\n\n", ot_version_string());

    /* Rate constants for 4 lanes of a 3-parameter model, column-major. */
    double rates[3 * 4];
    for (int b = 0; b < 4; b++) {
        rates[3 * b + 0] = 0.04 * (1 + 0.1 * b);
        rates[3 * b + 1] = 1e4;
        rates[3 * b + 2] = 3e7;
    }
    int64_t pshape[2] = {3, 4};
    ot_view params;
    if (report(ot_view_make(&params, rates, OT_F64, CPU, 2, pshape, NULL), "params"))
        return 1;
    double y0[3] = {1, 0, 0}; /* one lane: broadcast to all four */
    int64_t yshape[1] = {3};
    ot_view init;
    if (report(ot_view_make(&init, y0, OT_F64, CPU, 1, yshape, NULL), "y0"))
        return 1;
    if (report(ot_view_check_lanes(params, 3, 4, "params"), "params lanes") ||
        report(ot_view_check_lanes(init, 3, 4, "y0"), "y0 lanes"))
        return 1;
    printf("lane  k1        y0[0]  (params [3, 4], y0 [3] broadcast)\n");
    for (int b = 0; b < 4; b++) {
        const double *p = ot_view_lane(params, b), *y = ot_view_lane(init, b);
        printf("%4d  %.4f    %.1f\n", b, p[0], y[0]);
    }

    /* A C-ordered [3][4] array is row-major: refused, then copied on request. */
    printf("\nrow-major input:\n");
    double rm[3][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}};
    int64_t rstrides[2] = {4 * sizeof(double), sizeof(double)};
    ot_view bad;
    report(ot_view_make(&bad, rm, OT_F64, CPU, 2, pshape, rstrides), "ot_view_make");
    ot_layout raw = {rm, OT_F64, 2, {OT_CPU, 0}, {3, 4, 1}, {32, 8, 0}};
    ot_tensor *copy;
    if (report(ot_tensor_copy_colmajor(&copy, &raw, OT_F64), "copy"))
        return 1;
    const double *c1 = ot_view_col_f64(ot_tensor_view(copy), 1, 0);
    printf("  ot_tensor_copy_colmajor: column 1 = [%g, %g, %g]\n", c1[0], c1[1], c1[2]);

    /* Export to DLPack: the consumer sees the same memory, no copy. */
    const void *data = ot_tensor_layout(copy)->data;
    DLManagedTensorVersioned *mt;
    if (report(ot_dlpack_export(copy, &mt), "export"))
        return 1;
    const DLTensor *d = &mt->dl_tensor;
    printf("\nDLPack %u.%u export: data %s, shape [%lld, %lld], strides [%lld, %lld] "
           "(elements)\n",
           mt->version.major, mt->version.minor,
           d->data == data ? "shared (zero copy)" : "COPIED", (long long)d->shape[0],
           (long long)d->shape[1], (long long)d->strides[0], (long long)d->strides[1]);

    /* ... and back: importing takes ownership; freeing calls the deleter once. */
    ot_tensor *back;
    if (report(ot_dlpack_import(mt, &back), "import"))
        return 1;
    printf("import back: data %s\n",
           ot_tensor_layout(back)->data == data ? "shared (zero copy)" : "COPIED");
    ot_tensor_free(back);
    printf("freed: ot_tensor_free called the DLPack deleter, which freed the buffer\n");
    return 0;
}

/* The CUDA solver's entries in a build without the CUDA backend: every one
 * says so, so a CUDA request fails cleanly with OT_ERR_NO_CUDA. */
#include "core/error.h"
#include "cuda/backend.h"

static int no_backend(const char *what)
{
    return ot__fail(
        OT_ERR_NO_CUDA,
        "%s: this odetensor was built without the CUDA backend (build it with "
        "make cuda and link build/cuda/libodetensor.a)",
        what);
}

int ot__cuda_run(const ot__plan *plan, const ot__sink *sink)
{
    (void)plan, (void)sink;
    return no_backend("device");
}

int ot__cuda_alloc_output(ot_tensor **out, const ot__plan *plan, const char *name)
{
    (void)out, (void)plan, (void)name;
    return no_backend("device");
}

int ot__cuda_pad_outputs(const ot__plan *plan, ot_solution *sol)
{
    (void)plan, (void)sol;
    return no_backend("device");
}

int ot__cuda_host_copy(ot_view v, ot_tensor **out, const char *name)
{
    (void)v, (void)out;
    return no_backend(name);
}

int ot_cuda_device_count(int *count)
{
    if (count)
        *count = 0;
    return no_backend("ot_cuda_device_count");
}

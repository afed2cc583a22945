/* Fuzz target: solve-argument validation with arbitrary shapes, dtypes and
 * values on a tiny model (decay, dy_i/dt = -(i+1) p0 y_i), in lanes or
 * lockstep mode, with CVODE's methods or the kernel methods (Rodas4,
 * Tsit5), with or without a root (y_0 = 0.5, stopping or recorded), at
 * most a few lanes and times and few steps so each input runs quickly.
 * Whatever the request, the result is a status with a message: a solution
 * only on OT_OK / OT_ERR_LANES_FAILED, with its promised shape. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int decay(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *yb = ot_view_col_f64(y, b, 0);
        const double k = p.layout.shape[0] > 0 ? ot_view_col_f64(p, b, 0)[0] : 1.0;
        double *fb = ot_view_mut_col_f64(f, b, 0);
        for (int64_t i = 0; i < y.layout.shape[0]; i++)
            fb[i] = -(double)(i + 1) * k * yb[i];
    }
    return 0;
}

/* g = y_0 - 0.5 in every lane. */
static int half(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0] - 0.5;
    return 0;
}

/* A view over arr (64 elements of 8 bytes) with a fuzzed dtype, ndim and
 * small shape, values taken from the input; absent when asked or too big. */
static ot_view fuzz_view(fz_in *in, double *arr)
{
    const uint8_t f = fz_u8(in);
    ot_view v = ot_view_absent();
    if (f & 1)
        return v;
    const int ndim = (f >> 1) % 4;
    int64_t shape[3] = {1, 1, 1}, n = 1;
    for (int d = 0; d < ndim; d++)
        shape[d] = (int64_t)(fz_u8(in) % 7), n *= shape[d];
    if (n > 64)
        return v;
    const ot_dtype dt = (f & 8) ? OT_F32 : OT_F64;
    const int wild = (f & 16) != 0; /* raw bytes: NaN, Inf, huge */
    for (int64_t i = 0; i < n; i++) {
        double x = wild ? 0.0 : (double)(int8_t)fz_u8(in) / 16.0;
        if (wild) {
            uint64_t b = fz_u64(in, 8);
            memcpy(&x, &b, sizeof x);
        }
        if (dt == OT_F32)
            ((float *)arr)[i] = (float)x;
        else
            arr[i] = x;
    }
    if (ot_view_make(&v, arr, dt, (ot_device){OT_CPU, 0}, ndim, shape, NULL) != OT_OK)
        return ot_view_absent();
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    const uint8_t f = fz_u8(&in);
    const int64_t n = 1 + f % 3, np = (f >> 2) % 3;
    ot_ode *ode = NULL;
    if (ot_ode_new(&ode, n, np, decay, NULL) != OT_OK)
        return 0;
    ot_ode_set_threads(ode, 1 + (f >> 4) % 2);
    ot_ode_set_max_steps(ode, 50);
    ot_ode_set_method(ode, (f & 64) ? OT_ADAMS : OT_BDF);
    ot_ode_set_mode(ode, (f & 128) ? OT_LOCKSTEP : OT_LANES);
    double r;
    uint64_t b = fz_u64(&in, 8);
    memcpy(&r, &b, sizeof r);
    if (r > 1e-10 || !(r == r)) /* fuzzed tolerances, refused when invalid */
        ot_ode_set_rtol(ode, r);
    ot_ode_set_t0(ode, (double)(int8_t)fz_u8(&in) / 8.0);

    static _Alignas(64) double ay[64], ap[64], at[64];
    const ot_view y0 = fuzz_view(&in, ay), p = fuzz_view(&in, ap), t = fuzz_view(&in, at);
    ot_solution *sol = NULL;
    int s;
    const uint8_t w = fz_u8(&in), which = w % 3, kernel = (w / 3) % 3;
    if (kernel)
        ot_ode_set_method(ode, kernel == 1 ? OT_RODAS4 : OT_TSIT5);
    if ((w / 9) % 3) {
        const int action = (w / 9) % 3 == 1 ? OT_EVENT_STOP : OT_EVENT_RECORD;
        ot_ode_set_roots(ode, 1, half);
        ot_ode_set_event_actions(ode, &action);
    }
    if (which == 0)
        s = ot_solve_dense(ode, y0, np ? p : ot_view_absent(), t, &sol);
    else if (which == 1)
        s = ot_solve(ode, y0, np ? p : ot_view_absent(), (double)(int8_t)fz_u8(&in) / 4.0,
                     &sol);
    else
        s = ot_solve_fwd_sens(ode, y0, np ? p : ot_view_absent(), t, &sol);
    if (s == OT_OK || s == OT_ERR_LANES_FAILED) {
        FZ_EXPECT(sol != NULL);
        const int64_t nb = ot_solution_nbatch(sol);
        FZ_EXPECT(nb >= 1 && nb <= 64);
        FZ_EXPECT((ot_solution_nfailed(sol) > 0) == (s == OT_ERR_LANES_FAILED));
        const ot_layout *ly = ot_tensor_layout(ot_solution_ys(sol));
        FZ_EXPECT(ly->shape[0] == n && ly->shape[2] == nb);
        fz_check_view(ot_tensor_view(ot_solution_ys(sol)));
        for (int64_t l = 0; l < nb; l++)
            FZ_EXPECT((ot_solution_lane_status(sol, l) == OT_OK) ==
                      (ot_solution_lane_message(sol, l)[0] == '\0'));
        ot_solution_free(sol);
    } else {
        FZ_EXPECT(sol == NULL);
        FZ_EXPECT(ot_last_error()[0] != '\0');
    }
    ot_ode_free(ode);
    return 0;
}

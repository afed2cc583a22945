/* A population of 1,000 patients, each with its own absorption and
 * elimination rates, 14 oral doses at its own times and amounts, and its own
 * sampling times: one ot_solve_dense_with call per mode, the doses as
 * scheduled stops (the event handler adds each bolus to the gut). Checked
 * against the closed form, the superposition of one-dose solutions:
 *   gut(t)     = sum_d D_d e^{-ka tau_d}
 *   central(t) = sum_d D_d ka / (ka - ke) (e^{-ke tau_d} - e^{-ka tau_d}),
 * tau_d = t - t_d over the doses given by t. Prints both modes' times.
 *   population_pk [patients]     (1000) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <odetensor.h>

enum { ND = 14, NS = 24 };

/* gut' = -ka gut, central' = ka gut - ke central; p = (ka, ke, D_0..D_13). */
static int pk(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *z = ot_view_col_f64(y, b, 0), *q = ot_view_col_f64(p, b, 0);
        double *d = ot_view_mut_col_f64(dydt, b, 0);
        d[0] = -q[0] * z[0];
        d[1] = q[0] * z[0] - q[1] * z[1];
    }
    return 0;
}

/* Scheduled stop k (root -1 - k) is dose k: D_k into the gut. */
static int give(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                void *user)
{
    (void)t, (void)lane, (void)user;
    const int k = -1 - root;
    if (root >= 0 || k >= ND)
        return -1;
    ot_view_mut_col_f64(y, 0, 0)[0] += ot_view_mut_col_f64(p, 0, 0)[2 + k];
    return 0;
}

static uint64_t rng = 20261130;
static double uniform(void) /* splitmix64 */
{
    uint64_t z = (rng += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const int64_t nb = argc > 1 ? atoll(argv[1]) : 1000;
    const int np = 2 + ND;
    double *p = malloc(sizeof(double) * (size_t)(np * nb)),
           *stops = malloc(sizeof(double) * (size_t)(ND * nb)),
           *t = malloc(sizeof(double) * (size_t)(NS * nb));
    if (!p || !stops || !t)
        return 1;
    for (int64_t b = 0; b < nb; b++) {
        double *q = p + np * b;
        q[0] = 1.0 * (0.7 + 0.6 * uniform()); /* ka, 1/h */
        q[1] = 0.1 * (0.7 + 0.6 * uniform()); /* ke, 1/h */
        for (int k = 0; k < ND; k++) {
            stops[ND * b + k] = 12.0 * k + 2.0 * uniform(); /* every 12 h, +0-2 h */
            q[2 + k] = 100 * (0.8 + 0.4 * uniform());       /* mg */
        }
        const int ns = NS - (int)(8 * uniform()); /* 17 to 24 samples */
        for (int i = 0; i < NS; i++)
            t[NS * b + i] = i < ns ? 170.0 * (i + uniform()) / ns : NAN;
    }
    const ot_device cpu = {OT_CPU, 0};
    const int64_t two = 2, ps[2] = {np, nb}, ss[2] = {ND, nb}, ts[2] = {NS, nb};
    const double y0[2] = {0, 0};
    ot_view y0v, pv, sv, tv;
    int st = ot_view_make(&y0v, y0, OT_F64, cpu, 1, &two, NULL);
    st = st ? st : ot_view_make(&pv, p, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&sv, stops, OT_F64, cpu, 2, ss, NULL);
    st = st ? st : ot_view_make(&tv, t, OT_F64, cpu, 2, ts, NULL);
    double worst = 0;
    for (int mode = OT_LANES; st == OT_OK && mode <= OT_LOCKSTEP; mode++) {
        ot_ode *ode = NULL;
        ot_solution *sol = NULL;
        st = ot_ode_new(&ode, 2, np, pk, NULL);
        st = st ? st : ot_ode_set_mode(ode, (ot_mode)mode);
        st = st ? st : ot_ode_set_event_handler(ode, give);
        st = st ? st : ot_ode_set_rtol(ode, 1e-8);
        st = st ? st : ot_ode_set_atol(ode, 1e-8);
        ot_solve_inputs in = ot_solve_inputs_make(y0v, pv, tv);
        in.stops = sv;
        const double a = seconds();
        st = st ? st : ot_solve_dense_with(ode, &in, &sol);
        const double secs = seconds() - a;
        double err = 0; /* relative to the largest central amount */
        for (int64_t b = 0; st == OT_OK && b < nb; b++) {
            const double *q = p + np * b, ka = q[0], ke = q[1];
            const ot_view ys = ot_tensor_view(ot_solution_ys(sol));
            for (int i = 0; i < ot_solution_lane_count(sol, b); i++) {
                const double ti = t[NS * b + i];
                double gut = 0, central = 0;
                for (int k = 0; k < ND && stops[ND * b + k] <= ti; k++) {
                    const double tau = ti - stops[ND * b + k], D = q[2 + k];
                    gut += D * exp(-ka * tau);
                    central += D * ka / (ka - ke) * (exp(-ke * tau) - exp(-ka * tau));
                }
                const double *z = ot_view_col_f64(ys, i, b);
                err = fmax(err, fmax(fabs(z[0] - gut), fabs(z[1] - central)) / 1000.0);
            }
            if (ot_solution_lane_count(sol, b) < NS - 8 ||
                ot_solution_lane_event_count(sol, b) != ND)
                err = INFINITY;
        }
        if (st == OT_OK)
            printf(
                "%s: %lld patients x %d doses in %.3f s (%.1f us a patient); worst error "
                "%.1e of 1000 mg\n",
                mode == OT_LANES ? "lanes   " : "lockstep", (long long)nb, ND, secs,
                1e6 * secs / (double)nb, err);
        worst = fmax(worst, err);
        ot_solution_free(sol);
        ot_ode_free(ode);
    }
    free(p);
    free(stops);
    free(t);
    if (st != OT_OK) {
        fprintf(stderr, "%s: %s\n", ot_status_name(st), ot_last_error());
        return 1;
    }
    return worst < 1e-6 ? 0 : 1;
}

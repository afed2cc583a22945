/* What a gradient through doses costs (issue 25): a dosed oral population
 * (each patient 12 doses at its own times and amounts, a lag, 13 samples
 * of its own) solved plainly (ot_solve_dense_with) and with forward
 * sensitivities through the doses (ot_solve_fwd_sens_with), in lanes mode
 * and lockstep, for np = 4 (ka, CL, V, lag; amounts in a table) and np =
 * 16 (the 12 amounts as parameters too) by differences, and np = 4 with
 * the user's J and df/dp (J s + df/dp dp/dp), and the adjoint of a
 * sum-of-squares loss through the same doses (ot_solve_adjoint_with: the
 * gradient of one loss, where sensitivities give every output's). Each
 * round runs a row's three solves interleaved, so the machine's drift hits
 * them alike; the minimum over rounds is reported, with the gradient's
 * cost against a plain solve and against forward differences (np + 1
 * plain solves).
 *   sens_doses [patients] [rounds]     (1000 3) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <odetensor.h>

enum { ND = 12, NS = 13, NPMAX = 4 + ND };

static double amounts[ND]; /* np = 4: every patient's, scaled by its lane */

/* gut' = -ka gut, central' = ka gut - CL / V central. */
static int pk(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *z = ot_view_col_f64(y, b, 0), *q = ot_view_col_f64(p, b, 0);
        double *d = ot_view_mut_col_f64(dydt, b, 0);
        d[0] = -q[0] * z[0];
        d[1] = q[0] * z[0] - q[1] / q[2] * z[1];
    }
    return 0;
}

/* J and df/dp, for the rows with derivatives (ot_ode_set_dfdp). */
static int pk_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *q = ot_view_col_f64(p, b, 0);
        ot_view_mut_set(J, 0, 0, b, -q[0]);
        ot_view_mut_set(J, 1, 0, b, q[0]);
        ot_view_mut_set(J, 1, 1, b, -q[1] / q[2]);
    }
    return 0;
}

static int pk_dfdp(double t, ot_view y, ot_view p, ot_view_mut D, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *q = ot_view_col_f64(p, b, 0), *z = ot_view_col_f64(y, b, 0);
        ot_view_mut_set(D, 0, 0, b, -z[0]);
        ot_view_mut_set(D, 1, 0, b, z[0]);
        ot_view_mut_set(D, 1, 1, b, -z[1] / q[2]);
        ot_view_mut_set(D, 1, 2, b, q[1] / (q[2] * q[2]) * z[1]);
    }
    return 0;
}

static int conc(double t, ot_view y, ot_view p, ot_view_mut o, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        *ot_view_mut_col_f64(o, b, 0) =
            ot_view_col_f64(y, b, 0)[1] / ot_view_col_f64(p, b, 0)[2];
    return 0;
}

/* Dose k: a table's amount (np = 4) or p[4 + k] (np = 16). */
static int give(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                void *user)
{
    (void)t;
    const int k = -1 - root, np = (int)(intptr_t)user;
    const double *q = ot_view_mut_col_f64(p, 0, 0);
    ot_view_mut_col_f64(y, 0, 0)[0] +=
        np > 4 ? q[4 + k] : amounts[k] * (1 + 0.001 * (double)(lane % 100));
    return 0;
}

static uint64_t rng = 42;
static double uniform(void)
{
    uint64_t z = (rng += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static ot_view view(const double *d, int ndim, int64_t a, int64_t b, int64_t c)
{
    ot_view v;
    const int64_t shape[3] = {a, b, c};
    const ot_device cpu = {OT_CPU, 0};
    if (ot_view_make(&v, d, OT_F64, cpu, ndim, shape, NULL) != OT_OK) {
        fprintf(stderr, "view: %s\n", ot_last_error());
        exit(1);
    }
    return v;
}

int main(int argc, char **argv)
{
    const int64_t nb = argc > 1 ? atoll(argv[1]) : 1000;
    const int rounds = argc > 2 ? atoi(argv[2]) : 3;
    for (int k = 0; k < ND; k++)
        amounts[k] = 100 + 10 * k;
    double *p = malloc((size_t)(NPMAX * nb) * sizeof *p),
           *stops = malloc((size_t)(ND * nb) * sizeof *stops),
           *dp = calloc((size_t)(NPMAX * ND * nb), sizeof *dp),
           *t = malloc((size_t)(NS * nb) * sizeof *t),
           *td = malloc((size_t)(ND * nb) * sizeof *td);
    if (!p || !stops || !dp || !t || !td)
        return 1;
    for (int64_t b = 0; b < nb; b++) {
        for (int k = 0; k < ND; k++)
            td[b * ND + k] = 12.0 * k + 2 * uniform();
        for (int i = 0; i < NS; i++)
            t[b * NS + i] = 1 + 12.0 * ND * (i + uniform()) / NS;
    }
    const double y0[2] = {0, 0};
    double data[NS]; /* the loss's: every sample 1 mg/L */
    for (int i = 0; i < NS; i++)
        data[i] = 1.0;
    printf("sens_doses: %lld patients, %d doses, %d samples each; best of %d rounds\n",
           (long long)nb, ND, NS, rounds);
    for (int mode = 0; mode < 2; mode++)
        for (int npi = 0; npi < 3; npi++) {
            /* np = 4 and 16 by differences; np = 4 with J and df/dp */
            const int np = npi == 1 ? NPMAX : 4, derivs = npi == 2;
            for (int64_t b = 0; b < nb; b++) {
                double *q = p + b * np;
                q[0] = 1.0 * exp(0.3 * (uniform() - 0.5));
                q[1] = 4.0 * exp(0.3 * (uniform() - 0.5));
                q[2] = 30.0 * exp(0.3 * (uniform() - 0.5));
                q[3] = 0.5 * exp(0.3 * (uniform() - 0.5));
                for (int k = 0; k < ND && np > 4; k++)
                    q[4 + k] = amounts[k];
                for (int k = 0; k < ND; k++) {
                    stops[b * ND + k] = td[b * ND + k] + q[3];
                    for (int j = 0; j < np; j++)
                        dp[(b * ND + k) * np + j] = j == 3 ? 1.0 : 0.0;
                }
            }
            ot_ode *ode = NULL;
            if (ot_ode_new(&ode, 2, np, pk, (void *)(intptr_t)np) != OT_OK ||
                ot_ode_set_out(ode, 1, conc) != OT_OK ||
                ot_ode_set_event_handler(ode, give) != OT_OK ||
                ot_ode_set_rtol(ode, 1e-6) != OT_OK ||
                ot_ode_set_atol(ode, 1e-8) != OT_OK ||
                ot_ode_set_threads(ode, 1) != OT_OK ||
                ot_ode_set_mode(ode, mode ? OT_LOCKSTEP : OT_LANES) != OT_OK ||
                (derivs && (ot_ode_set_jac(ode, pk_jac) != OT_OK ||
                            ot_ode_set_dfdp(ode, pk_dfdp) != OT_OK)))
                return 1;
            ot_solve_inputs in = ot_solve_inputs_make(
                view(y0, 1, 2, 1, 1), view(p, 2, np, nb, 1), view(t, 2, NS, nb, 1));
            in.stops = view(stops, 2, ND, nb, 1);
            double best[3] = {INFINITY, INFINITY, INFINITY};
            int64_t steps[3] = {0, 0, 0};
            const ot_loss loss =
                ot_loss_squares(view(data, 2, 1, NS, 1), ot_view_absent());
            for (int r = 0; r < rounds; r++)
                for (int s = 0; s < 3; s++) {
                    in.stops_dp = s ? view(dp, 3, np, ND, nb) : ot_view_absent();
                    ot_solution *sol = NULL;
                    const double t0 = now();
                    const int st = s == 2   ? ot_solve_adjoint_with(ode, &in, &loss, &sol)
                                   : s == 1 ? ot_solve_fwd_sens_with(ode, &in, &sol)
                                            : ot_solve_dense_with(ode, &in, &sol);
                    const double dt = now() - t0;
                    if (st != OT_OK) {
                        fprintf(stderr, "solve: %s\n", ot_last_error());
                        return 1;
                    }
                    ot_lane_stats ls;
                    ot_solution_lane_stats(sol, 0, &ls);
                    steps[s] = ls.steps;
                    best[s] = dt < best[s] ? dt : best[s];
                    ot_solution_free(sol);
                }
            printf(
                "%-8s np=%-2d%s plain %8.1f ms (%5.1f us/lane)  sensitivities %8.1f ms "
                "= %5.2f x plain, %5.2f x forward differences (np + 1 plain)  "
                "adjoint %8.1f ms = %5.2f x plain, %5.2f x sensitivities; lane 0's "
                "steps %lld / %lld / %lld\n",
                mode ? "lockstep" : "lanes", np, derivs ? " J, df/dp" : "         ",
                1e3 * best[0], 1e6 * best[0] / (double)nb, 1e3 * best[1],
                best[1] / best[0], best[1] / ((np + 1) * best[0]), 1e3 * best[2],
                best[2] / best[0], best[2] / best[1], (long long)steps[0],
                (long long)steps[1], (long long)steps[2]);
            ot_ode_free(ode);
        }
    free(p), free(stops), free(dp), free(t), free(td);
    return 0;
}

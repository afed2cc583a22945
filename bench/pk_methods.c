/* Which method for dosed problems (issue 23, item 13): a population of
 * patients, oral one-compartment PK with 14 doses each at its own times
 * (scheduled stops: a restart per dose), 17-24 samples each, solved in
 * lanes mode (1 thread) by BDF, Adams, the explicit 3(2) and 5(4) pairs and
 * the ESDIRK methods, at rtol 1e-6 and 1e-8 (atol the same), interleaved
 * round by round (this machine's speed drifts: compare within a run).
 * Prints per method and rtol: median ms per patient, steps and rhs calls
 * per patient, and the worst error against the closed form (the
 * superposition of one-dose solutions) relative to 1000 mg.
 *   pk_methods [patients=500] [rounds=3] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <odetensor.h>

enum { ND = 14, NS = 24, NM = 6 };

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

static int give(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p, void *u)
{
    (void)t, (void)lane, (void)u;
    const int k = -1 - root;
    if (root >= 0 || k >= ND)
        return -1;
    ot_view_mut_col_f64(y, 0, 0)[0] += ot_view_col_f64(ot_view_const(p), 0, 0)[2 + k];
    return 0;
}

static uint64_t rng = 20261202;
static double uniform(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const int64_t nb = argc > 1 ? atoll(argv[1]) : 500;
    const int rounds = argc > 2 ? atoi(argv[2]) : 3;
    const int np = 2 + ND;
    double *p = malloc(sizeof(double) * (size_t)(np * nb)),
           *stops = malloc(sizeof(double) * (size_t)(ND * nb)),
           *t = malloc(sizeof(double) * (size_t)(NS * nb));
    if (!p || !stops || !t)
        return 1;
    for (int64_t b = 0; b < nb; b++) {
        double *q = p + np * b;
        q[0] = 1.0 * (0.7 + 0.6 * uniform());
        q[1] = 0.1 * (0.7 + 0.6 * uniform());
        for (int k = 0; k < ND; k++) {
            stops[ND * b + k] = 12.0 * k + 2.0 * uniform();
            q[2 + k] = 100 * (0.8 + 0.4 * uniform());
        }
        const int ns = NS - (int)(8 * uniform());
        for (int i = 0; i < NS; i++)
            t[NS * b + i] = i < ns ? 170.0 * (i + uniform()) / ns : NAN;
    }
    const ot_device cpu = {OT_CPU, 0};
    const int64_t two = 2, ps[2] = {np, nb}, ss[2] = {ND, nb}, ts[2] = {NS, nb};
    const double y0[2] = {0, 0};
    ot_view y0v, pv, sv, tv;
    ot_view_make(&y0v, y0, OT_F64, cpu, 1, &two, NULL);
    ot_view_make(&pv, p, OT_F64, cpu, 2, ps, NULL);
    ot_view_make(&sv, stops, OT_F64, cpu, 2, ss, NULL);
    ot_view_make(&tv, t, OT_F64, cpu, 2, ts, NULL);
    static const ot_method methods[NM] = {OT_BDF,      OT_ADAMS,    OT_ERK_BS32,
                                          OT_ERK_DP54, OT_ESDIRK32, OT_ESDIRK43};
    static const char *names[NM] = {"bdf",  "adams",    "bs32",
                                    "dp54", "esdirk32", "esdirk43"};
    static const double rtols[2] = {1e-6, 1e-8};
    double ms[NM][2][16];
    double steps[NM][2], rhs[NM][2], err[NM][2];
    for (int r = 0; r < rounds && r < 16; r++)
        for (int m = 0; m < NM; m++)
            for (int k = 0; k < 2; k++) {
                ot_ode *ode = NULL;
                ot_solution *sol = NULL;
                int st = ot_ode_new(&ode, 2, np, pk, NULL);
                st = st ? st : ot_ode_set_method(ode, methods[m]);
                st = st ? st : ot_ode_set_threads(ode, 1);
                st = st ? st : ot_ode_set_event_handler(ode, give);
                st = st ? st : ot_ode_set_rtol(ode, rtols[k]);
                st = st ? st : ot_ode_set_atol(ode, rtols[k]);
                ot_solve_inputs in = ot_solve_inputs_make(y0v, pv, tv);
                in.stops = sv;
                const double a = seconds();
                st = st ? st : ot_solve_dense_with(ode, &in, &sol);
                ms[m][k][r] = 1e3 * (seconds() - a) / (double)nb;
                if (st != OT_OK) {
                    fprintf(stderr, "%s rtol %g: %s\n", names[m], rtols[k],
                            ot_last_error());
                    return 1;
                }
                double e = 0, nst = 0, nrhs = 0;
                const ot_view ys = ot_tensor_view(ot_solution_ys(sol));
                for (int64_t b = 0; b < nb; b++) {
                    const double *q = p + np * b, ka = q[0], ke = q[1];
                    ot_lane_stats ls;
                    ot_solution_lane_stats(sol, b, &ls);
                    nst += (double)ls.steps;
                    nrhs += (double)ls.rhs_evals;
                    for (int i = 0; i < ot_solution_lane_count(sol, b); i++) {
                        const double ti = t[NS * b + i];
                        double gut = 0, central = 0;
                        for (int d = 0; d < ND && stops[ND * b + d] <= ti; d++) {
                            const double tau = ti - stops[ND * b + d], D = q[2 + d];
                            gut += D * exp(-ka * tau);
                            central +=
                                D * ka / (ka - ke) * (exp(-ke * tau) - exp(-ka * tau));
                        }
                        const double *z = ot_view_col_f64(ys, i, b);
                        e = fmax(e,
                                 fmax(fabs(z[0] - gut), fabs(z[1] - central)) / 1000.0);
                    }
                }
                steps[m][k] = nst / (double)nb;
                rhs[m][k] = nrhs / (double)nb;
                err[m][k] = e;
                ot_solution_free(sol);
                ot_ode_free(ode);
            }
    printf(
        "| method | rtol | ms per patient (median of %d) | steps per patient | rhs calls "
        "per patient | worst error / 1000 mg |\n|---|---|---|---|---|---|\n",
        rounds);
    for (int m = 0; m < NM; m++)
        for (int k = 0; k < 2; k++) {
            qsort(ms[m][k], (size_t)rounds, sizeof(double), cmp);
            printf("| %s | %g | %.4f | %.0f | %.0f | %.1e |\n", names[m], rtols[k],
                   ms[m][k][rounds / 2], steps[m][k], rhs[m][k], err[m][k]);
        }
    free(p);
    free(stops);
    free(t);
    return 0;
}

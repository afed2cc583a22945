/* Balls dropped from 16 heights bounce with restitution e: each solve stops
 * every lane at its own impact (a root of h), the batch restarts from the
 * reflected states, and the impact times are checked against the analytic
 * ones: t1 = sqrt(2 h0 / g), then flights of 2 e^k v1 / g. */
#include <math.h>
#include <stdio.h>

#include <odetensor.h>

enum { NB = 16, BOUNCES = 4 };
static const double G = 9.81, E = 0.8;

static int rhs(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)p, (void)user;
    const double *z = ot_view_col_f64(y, 0, 0); /* (height, velocity) */
    double *d = ot_view_mut_col_f64(dydt, 0, 0);
    d[0] = z[1];
    d[1] = -G;
    return 0;
}

static int ground(double t, ot_view y, ot_view p, ot_view_mut g, void *user)
{
    (void)t, (void)p, (void)user;
    ot_view_mut_col_f64(g, 0, 0)[0] = ot_view_col_f64(y, 0, 0)[0];
    return 0;
}

int main(void)
{
    double state[2 * NB], clock[NB] = {0}, worst = 0;
    for (int b = 0; b < NB; b++) {
        state[2 * b] = 1.0 + 0.5 * b; /* drop heights 1 .. 8.5 m */
        state[2 * b + 1] = 0.0;
    }
    ot_ode *ode = NULL;
    int st = ot_ode_new(&ode, 2, 0, rhs, NULL);
    st = st ? st : ot_ode_set_roots(ode, 1, ground);
    st = st ? st : ot_ode_set_rtol(ode, 1e-10);
    st = st ? st : ot_ode_set_atol(ode, 1e-12);
    printf("%-5s %-7s %-7s %-12s %-12s\n", "lane", "h0", "bounce", "impact t",
           "analytic");
    for (int k = 1; st == OT_OK && k <= BOUNCES; k++) {
        /* Autonomous system: each flight runs in its own time from 0. */
        const int64_t shape[2] = {2, NB};
        ot_view y0;
        ot_solution *sol = NULL;
        st = ot_view_make(&y0, state, OT_F64, (ot_device){OT_CPU, 0}, 2, shape, NULL);
        st = st ? st : ot_solve(ode, y0, ot_view_absent(), 100.0, &sol);
        if (st != OT_OK) {
            ot_solution_free(sol);
            break;
        }
        const ot_view ts = ot_tensor_view(ot_solution_ts(sol));
        const ot_view ys = ot_tensor_view(ot_solution_ys(sol));
        for (int b = 0; b < NB; b++) {
            int root;
            double troot;
            ot_solution_lane_root(sol, b, &root, &troot);
            const int64_t last = ot_solution_lane_count(sol, b) - 1;
            const double *y = ot_view_col_f64(ys, last, b);
            const double h0 = 1.0 + 0.5 * b, v1 = sqrt(2 * G * h0);
            double want = v1 / G; /* t1 = sqrt(2 h0 / g) */
            for (int i = 1; i < k; i++)
                want += 2 * pow(E, i) * v1 / G;
            clock[b] += ot_view_col_f64(ts, b, 0)[last];
            worst = fmax(worst, fabs(clock[b] - want));
            if (root != 0)
                worst = INFINITY; /* every lane must stop at its impact */
            if (b % 5 == 0)
                printf("%-5d %-7.2f %-7d %-12.8f %-12.8f\n", b, h0, k, clock[b], want);
            state[2 * b] = 0.0;
            state[2 * b + 1] = -E * y[1]; /* reflect with restitution */
        }
        ot_solution_free(sol);
    }
    ot_ode_free(ode);
    if (st != OT_OK) {
        fprintf(stderr, "%s: %s\n", ot_status_name(st), ot_last_error());
        return 1;
    }
    printf("worst impact-time error over %d lanes x %d bounces: %.1e s\n", NB, BOUNCES,
           worst);
    return worst < 1e-6 ? 0 : 1;
}

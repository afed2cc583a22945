/* Balls with restitution e bounce 20 times in one solve: a falling root on
 * the height (ot_ode_set_root_directions) with an event handler that
 * reverses the velocity (OT_EVENT_HANDLE); the integrator restarts at each
 * impact. Lane b has e = 0.7 + 0.02 b and is dropped from the height whose
 * bouncing would never end at T = 4 s, so every lane gets its 20 bounces
 * before 0.9995 T. The recorded impact times are checked against the
 * analytic ones: t_0 = sqrt(2 h0 / g), then flights of 2 e^k v_0 / g. */
#include <math.h>
#include <stdio.h>

#include <odetensor.h>

enum { NB = 6, BOUNCES = 20 };
static const double G = 9.81, T_END = 4.0;

/* Callbacks loop over the k lanes they get: one in OT_LANES, a block in
 * OT_LOCKSTEP. */
static int rhs(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)p, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        double *d = ot_view_mut_col_f64(dydt, b, 0);
        d[0] = ot_view_col_f64(y, b, 0)[1]; /* (height, velocity) */
        d[1] = -G;
    }
    return 0;
}

static int ground(double t, ot_view y, ot_view p, ot_view_mut g, void *user)
{
    (void)t, (void)p, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0];
    return 0;
}

/* One lane's impact: v -> -e v (e is the lane's parameter). */
static int bounce(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                  void *user)
{
    (void)t, (void)root, (void)lane, (void)user;
    double *z = ot_view_mut_col_f64(y, 0, 0);
    z[1] = -ot_view_mut_col_f64(p, 0, 0)[0] * z[1];
    return 0;
}

int main(int argc, char **argv)
{
    double y0[2 * NB], e[NB], t[2] = {0, 0.9995 * T_END}, worst = 0;
    for (int b = 0; b < NB; b++) {
        e[b] = 0.7 + 0.02 * b;
        const double t0 = T_END * (1 - e[b]) / (1 + e[b]); /* T = t0 (1 + e) / (1 - e) */
        y0[2 * b] = G * t0 * t0 / 2;
        y0[2 * b + 1] = 0;
    }
    const int falling = OT_ROOT_FALLING, handle = OT_EVENT_HANDLE;
    const ot_device cpu = {OT_CPU, 0};
    const int64_t ys[2] = {2, NB}, ps[2] = {1, NB}, two = 2;
    ot_view y0v, pv, tv;
    ot_ode *ode = NULL;
    ot_solution *sol = NULL;
    int st = ot_view_make(&y0v, y0, OT_F64, cpu, 2, ys, NULL);
    st = st ? st : ot_view_make(&pv, e, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&tv, t, OT_F64, cpu, 1, &two, NULL);
    st = st ? st : ot_ode_new(&ode, 2, 1, rhs, NULL);
    st = st ? st : ot_ode_set_roots(ode, 1, ground);
    st = st ? st : ot_ode_set_root_directions(ode, &falling);
    st = st ? st : ot_ode_set_event_actions(ode, &handle);
    st = st ? st : ot_ode_set_event_handler(ode, bounce);
    st = st ? st : ot_ode_set_rtol(ode, 1e-10);
    st = st ? st : ot_ode_set_atol(ode, 1e-12);
    if (st == OT_OK && argc > 1 && argv[1][0] == 'l') /* `bouncing_ball lockstep` */
        st = ot_ode_set_mode(ode, OT_LOCKSTEP);
    st = st ? st : ot_solve_dense(ode, y0v, pv, tv, &sol);
    if (st != OT_OK) {
        fprintf(stderr, "%s: %s\n", ot_status_name(st), ot_last_error());
        ot_solution_free(sol);
        ot_ode_free(ode);
        return 1;
    }
    const ot_view times = ot_tensor_view(ot_solution_event_tensor(sol, OT_EVENT_TIMES));
    printf("%-5s %-6s %-8s %-7s %-14s %-14s\n", "lane", "e", "h0", "bounce", "impact t",
           "analytic");
    for (int b = 0; b < NB; b++) {
        const double t0 = sqrt(2 * y0[2 * b] / G), v0 = G * t0;
        if (ot_solution_lane_event_count(sol, b) < BOUNCES)
            worst = INFINITY;
        double want = t0, ek = 1;
        for (int k = 0; k < BOUNCES && isfinite(worst); k++) {
            const double got = ot_view_col_f64(times, b, 0)[k]; /* times [m, nbatch] */
            worst = fmax(worst, fabs(got - want));
            if (k == BOUNCES - 1 && b % 2 == 0)
                printf("%-5d %-6.2f %-8.4f %-7d %-14.10f %-14.10f\n", b, e[b], y0[2 * b],
                       k + 1, got, want);
            ek *= e[b];
            want += 2 * ek * v0 / G;
        }
    }
    printf("worst impact-time error over %d lanes x %d bounces: %.1e s\n", NB, BOUNCES,
           worst);
    ot_solution_free(sol);
    ot_ode_free(ode);
    return worst < 1e-6 ? 0 : 1;
}

/* Lotka-Volterra predator-prey for 200 parameter sets with Adams (non-stiff,
 * fixed-point iteration). Checks the conserved quantity of each lane:
 *   V = c x - d ln x + b y - a ln y  stays constant along every orbit. */
#include <math.h>
#include <stdio.h>

#include <odetensor.h>

enum { NB = 200, NT = 101 };

/* x' = a x - b x y, y' = c x y - d y with p = (a, b, c, d). */
static int rhs(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)user;
    const double *z = ot_view_col_f64(y, 0, 0), *k = ot_view_col_f64(p, 0, 0);
    double *d = ot_view_mut_col_f64(dydt, 0, 0);
    d[0] = k[0] * z[0] - k[1] * z[0] * z[1];
    d[1] = k[2] * z[0] * z[1] - k[3] * z[1];
    return 0;
}

static double invariant(const double *z, const double *k)
{
    return k[2] * z[0] - k[3] * log(z[0]) + k[1] * z[1] - k[0] * log(z[1]);
}

int main(void)
{
    static double k[4 * NB], t[NT];
    for (int b = 0; b < NB; b++) {
        k[4 * b + 0] = 1.0 + 0.5 * b / (NB - 1); /* prey growth 1.0 .. 1.5 */
        k[4 * b + 1] = 0.1;
        k[4 * b + 2] = 0.075;
        k[4 * b + 3] = 1.5;
    }
    for (int i = 0; i < NT; i++)
        t[i] = 0.3 * i; /* 0 .. 30 */
    const double y0[2] = {10, 5};
    const ot_device cpu = {OT_CPU, 0};
    const int64_t ps[2] = {4, NB}, n2 = 2, nt = NT;
    ot_view params, y0v, tv;
    ot_ode *ode = NULL;
    ot_solution *sol = NULL;
    int st = ot_view_make(&params, k, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&y0v, y0, OT_F64, cpu, 1, &n2, NULL);
    st = st ? st : ot_view_make(&tv, t, OT_F64, cpu, 1, &nt, NULL);
    st = st ? st : ot_ode_new(&ode, 2, 4, rhs, NULL);
    st = st ? st : ot_ode_set_method(ode, OT_ADAMS);
    st = st ? st : ot_ode_set_rtol(ode, 1e-8);
    st = st ? st : ot_ode_set_atol(ode, 1e-10);
    st = st ? st : ot_solve_dense(ode, y0v, params, tv, &sol);
    if (st != OT_OK) {
        fprintf(stderr, "%s: %s\n", ot_status_name(st), ot_last_error());
        ot_solution_free(sol);
        ot_ode_free(ode);
        return 1;
    }
    const ot_view ys = ot_tensor_view(ot_solution_ys(sol));
    double drift = 0;
    int64_t steps = 0;
    for (int64_t b = 0; b < NB; b++) {
        const double *kb = &k[4 * b], v0 = invariant(y0, kb);
        for (int i = 0; i < NT; i++)
            drift = fmax(drift,
                         fabs(invariant(ot_view_col_f64(ys, i, b), kb) - v0) / fabs(v0));
        ot_lane_stats s;
        ot_solution_lane_stats(sol, b, &s);
        steps += s.steps;
    }
    printf("Lotka-Volterra, %d lanes, Adams, rtol 1e-8: mean %.0f steps per lane\n", NB,
           (double)steps / NB);
    printf("max relative drift of the invariant over all lanes: %.2e\n", drift);
    printf("%-6s %-6s %-10s %-10s\n", "lane", "a", "prey(30)", "pred(30)");
    for (int b = 0; b < NB; b += NB / 4) {
        const double *z = ot_view_col_f64(ys, NT - 1, b);
        printf("%-6d %-6.3f %-10.4f %-10.4f\n", b, k[4 * b], z[0], z[1]);
    }
    ot_solution_free(sol);
    ot_ode_free(ode);
    return drift < 1e-5 ? 0 : 1;
}

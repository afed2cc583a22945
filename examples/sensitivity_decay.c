/* Forward sensitivities of exponential decay y' = -k y, y(0) = y0, for 8
 * rates, against the analytic derivative dy/dk = -t y0 exp(-k t). */
#include <math.h>
#include <stdio.h>

#include <odetensor.h>

enum { NB = 8, NT = 11 };

static int rhs(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)user;
    ot_view_mut_col_f64(dydt, 0, 0)[0] =
        -ot_view_col_f64(p, 0, 0)[0] * ot_view_col_f64(y, 0, 0)[0];
    return 0;
}

int main(void)
{
    double k[NB], t[NT];
    for (int b = 0; b < NB; b++)
        k[b] = 0.25 * (b + 1);
    for (int i = 0; i < NT; i++)
        t[i] = 0.5 * i;
    const double y0 = 2.0;
    const ot_device cpu = {OT_CPU, 0};
    const int64_t ps[2] = {1, NB}, one = 1, nt = NT;
    ot_view params, y0v, tv;
    ot_ode *ode = NULL;
    ot_solution *sol = NULL;
    int st = ot_view_make(&params, k, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&y0v, &y0, OT_F64, cpu, 1, &one, NULL);
    st = st ? st : ot_view_make(&tv, t, OT_F64, cpu, 1, &nt, NULL);
    st = st ? st : ot_ode_new(&ode, 1, 1, rhs, NULL);
    st = st ? st : ot_ode_set_rtol(ode, 1e-8);
    st = st ? st : ot_ode_set_atol(ode, 1e-12);
    st = st ? st : ot_solve_fwd_sens(ode, y0v, params, tv, &sol);
    if (st != OT_OK) {
        fprintf(stderr, "%s: %s\n", ot_status_name(st), ot_last_error());
        ot_solution_free(sol);
        ot_ode_free(ode);
        return 1;
    }
    const ot_view s = ot_tensor_view(ot_solution_sens(sol, 0));
    double worst = 0;
    printf("%-6s %-6s %-14s %-14s %-10s\n", "k", "t", "dy/dk", "analytic", "rel. err");
    for (int b = 0; b < NB; b++)
        for (int i = 1; i < NT; i++) {
            const double got = ot_view_col_f64(s, i, b)[0];
            const double want = -t[i] * y0 * exp(-k[b] * t[i]);
            const double err = fabs(got - want) / fabs(want);
            worst = fmax(worst, err);
            if (i == NT - 1 && b % 2 == 1)
                printf("%-6.2f %-6.1f %-14.6e %-14.6e %-10.1e\n", k[b], t[i], got, want,
                       err);
        }
    printf("worst relative error over %d lanes x %d times: %.1e\n", NB, NT - 1, worst);
    ot_solution_free(sol);
    ot_ode_free(ode);
    return worst < 1e-4 ? 0 : 1;
}

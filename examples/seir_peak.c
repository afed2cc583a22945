/* The peak of an epidemic in 500 SEIR lanes (R0 from 1.5 to 4): a falling
 * root on dI/dt (ot_ode_set_root_directions) stops each lane at its peak.
 * Without the direction the first root is the rising crossing at t ~ 1
 * (dI/dt starts negative: E is 0), not the peak. The state at the peak is
 * the stop event's (ot_solution_event_tensor). Each lane's peak is checked
 * against the largest I on a fine grid (steps of 0.1) of a tight solve (rtol
 * 1e-10): the peak's time within one step, its I at least the grid's largest
 * (to 1e-6, this solve's rtol being 1e-8). */
#include <math.h>
#include <stdio.h>

#include <odetensor.h>

enum { NB = 500, NFINE = 4001 };
static const double SIGMA = 1 / 5.2, GAMMA = 1 / 10.0, T_END = 400;

/* S, E, I, R (fractions); p = beta. */
static int seir(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *z = ot_view_col_f64(y, b, 0), beta = ot_view_col_f64(p, b, 0)[0];
        double *d = ot_view_mut_col_f64(dydt, b, 0);
        const double infect = beta * z[0] * z[2];
        d[0] = -infect;
        d[1] = infect - SIGMA * z[1];
        d[2] = SIGMA * z[1] - GAMMA * z[2];
        d[3] = GAMMA * z[2];
    }
    return 0;
}

static int di_dt(double t, ot_view y, ot_view p, ot_view_mut g, void *user)
{
    (void)t, (void)p, (void)user;
    for (int64_t b = 0; b < y.layout.shape[1]; b++) {
        const double *z = ot_view_col_f64(y, b, 0);
        ot_view_mut_col_f64(g, b, 0)[0] = SIGMA * z[1] - GAMMA * z[2];
    }
    return 0;
}

int main(void)
{
    static double beta[NB], tfine[NFINE];
    const double y0[4] = {0.999, 0, 0.001, 0}, tend[2] = {0, T_END};
    for (int b = 0; b < NB; b++)
        beta[b] = GAMMA * (1.5 + 2.5 * b / (NB - 1)); /* R0 = beta / gamma */
    for (int i = 0; i < NFINE; i++)
        tfine[i] = T_END * i / (NFINE - 1);
    const ot_device cpu = {OT_CPU, 0};
    const int64_t four = 4, ps[2] = {1, NB}, two = 2, nf = NFINE;
    const int falling = OT_ROOT_FALLING;
    ot_view y0v, pv, tv, fv;
    ot_ode *ode = NULL, *fine = NULL;
    ot_solution *peak = NULL, *ref = NULL;
    int st = ot_view_make(&y0v, y0, OT_F64, cpu, 1, &four, NULL);
    st = st ? st : ot_view_make(&pv, beta, OT_F64, cpu, 2, ps, NULL);
    st = st ? st : ot_view_make(&tv, tend, OT_F64, cpu, 1, &two, NULL);
    st = st ? st : ot_view_make(&fv, tfine, OT_F64, cpu, 1, &nf, NULL);
    st = st ? st : ot_ode_new(&ode, 4, 1, seir, NULL);
    st = st ? st : ot_ode_set_roots(ode, 1, di_dt);
    st = st ? st : ot_ode_set_root_directions(ode, &falling);
    st = st ? st : ot_ode_set_rtol(ode, 1e-8);
    st = st ? st : ot_ode_set_atol(ode, 1e-12);
    st = st ? st : ot_solve_dense(ode, y0v, pv, tv, &peak);
    st = st ? st : ot_ode_new(&fine, 4, 1, seir, NULL);
    st = st ? st : ot_ode_set_rtol(fine, 1e-10);
    st = st ? st : ot_ode_set_atol(fine, 1e-14);
    st = st ? st : ot_solve_dense(fine, y0v, pv, fv, &ref);
    int bad = st != OT_OK;
    double worst_t = 0;
    for (int b = 0; !bad && b < NB; b++) {
        int root;
        double tp;
        ot_solution_lane_root(peak, b, &root, &tp);
        /* The grid's largest I and its neighbours bracket the peak. */
        const ot_view ys = ot_tensor_view(ot_solution_ys(ref));
        int imax = 0;
        for (int i = 1; i < NFINE; i++)
            if (ot_view_col_f64(ys, i, b)[2] > ot_view_col_f64(ys, imax, b)[2])
                imax = i;
        const double dt = T_END / (NFINE - 1);
        /* The state at the root: the event's (before: [n, m, nbatch]). */
        const ot_view ev =
            ot_tensor_view(ot_solution_event_tensor(peak, OT_EVENT_BEFORE));
        const double ipeak = ot_view_col_f64(ev, 0, b)[2];
        bad |= root != 0 || !(fabs(tp - tfine[imax]) <= dt) ||
               !(ipeak >= ot_view_col_f64(ys, imax, b)[2] * (1 - 1e-6));
        worst_t = fmax(worst_t, fabs(tp - tfine[imax]));
        if (bad)
            printf("lane %d: root %d at t = %.4f, I = %.8f; fine grid %.8f at %.1f\n", b,
                   root, tp, ipeak, ot_view_col_f64(ys, imax, b)[2], tfine[imax]);
        if (b % 100 == 0 || b == NB - 1)
            printf("R0 %.2f: peak I = %.5f at t = %.3f (fine grid: %.5f at %.1f)\n",
                   beta[b] / GAMMA, ipeak, tp, ot_view_col_f64(ys, imax, b)[2],
                   tfine[imax]);
    }
    if (st != OT_OK)
        fprintf(stderr, "%s: %s\n", ot_status_name(st), ot_last_error());
    printf("%d lanes: every peak within one grid step (%.2f) of the fine grid's: %s\n",
           NB, T_END / (NFINE - 1), bad ? "NO" : "yes");
    ot_solution_free(peak);
    ot_solution_free(ref);
    ot_ode_free(ode);
    ot_ode_free(fine);
    return bad;
}

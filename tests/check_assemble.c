/* A solution assembled from lanes solved elsewhere (solution.h), as
 * libodetensor_mpi and schedulers build them through the public API alone:
 * ot_solution_new, the attach functions and the lane setters. A copy made
 * lane by lane reads exactly as the solve it copies; each refusal has its
 * status and message and leaves the solution as it was. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "solve_common.h"
#include "suites.h"

static ot_solution *fresh(int64_t nbatch, int64_t nsens, int with_roots)
{
    ot_solution *s = NULL;
    ck_assert_status(ot_solution_new(&s, nbatch, nsens, with_roots), OT_OK, NULL);
    return s;
}

static ot_tensor *tensor(ot_dtype dt, int ndim, int64_t s0, int64_t s1, int64_t s2)
{
    const int64_t shape[3] = {s0, s1, s2};
    ot_tensor *t = NULL;
    ck_assert_status(ot_tensor_new(&t, dt, ndim, shape), OT_OK, NULL);
    return t;
}

START_TEST(a_new_solution_reads_as_a_solve_with_nothing_done)
{
    ot_solution *s = fresh(3, 2, 1);
    ck_assert_int_eq(ot_solution_nbatch(s), 3);
    ck_assert_int_eq(ot_solution_nsens(s), 2);
    ck_assert_int_eq(ot_solution_nfailed(s), 0);
    ck_assert_ptr_null(ot_solution_ts(s));
    ck_assert_ptr_null(ot_solution_ys(s));
    ck_assert_ptr_null(ot_solution_sens(s, 1));
    ck_assert_ptr_null(ot_solution_grad_tensor(s, OT_GRAD_LOSS));
    for (int64_t b = 0; b < 3; b++) {
        int index = 7;
        double time = 0;
        ot_lane_stats st;
        ck_assert_int_eq(ot_solution_lane_status(s, b), OT_OK);
        ck_assert_str_eq(ot_solution_lane_message(s, b), "");
        ck_assert_int_eq(ot_solution_lane_count(s, b), 0);
        ck_assert_status(ot_solution_lane_root(s, b, &index, &time), OT_OK, NULL);
        ck_assert(index == -1 && isnan(time));
        ck_assert_status(ot_solution_lane_stats(s, b, &st), OT_OK, NULL);
        ck_assert(st.steps == 0 && st.final_time == 0);
        ck_assert_int_eq(ot_solution_lane_adjoint_bytes(s, b), 0);
    }
    ot_solution_free(s);
    /* A rank may own no lane at all. */
    s = fresh(0, 0, 0);
    ck_assert_int_eq(ot_solution_nbatch(s), 0);
    ck_assert_status(ot_solution_set_lane_count(s, 0, 1), OT_ERR_ARG, "outside 0..-1");
    ot_solution_free(s);
}
END_TEST

START_TEST(solution_new_refuses_null_negative_sizes_and_overflow)
{
    ot_solution *keep = (ot_solution *)&keep, *s = keep;
    ck_assert_status(ot_solution_new(NULL, 1, 0, 0), OT_ERR_ARG,
                     "ot_solution_new: out is NULL");
    ck_assert_status(ot_solution_new(&s, -1, 0, 0), OT_ERR_VALUE,
                     "ot_solution_new: nbatch is -1; must be >= 0");
    ck_assert_status(ot_solution_new(&s, 1, -2, 0), OT_ERR_VALUE, "nsens is -2");
    ck_assert_status(ot_solution_new(&s, 1, 0, 2), OT_ERR_ARG, "with_roots is 2");
    ck_assert_status(ot_solution_new(&s, INT64_MAX, 0, 0), OT_ERR_OVERFLOW,
                     "overflow the address space");
    ck_assert_ptr_eq(s, keep);
}
END_TEST

/* Lane b of ref copied into lane b of copy: what mpi_collect.c does with a
 * lane that travelled. */
static void copy_lane(const ot_solution *ref, ot_solution *copy, int64_t b)
{
    const int st = ot_solution_lane_status(ref, b);
    ck_assert_status(
        ot_solution_set_lane_status(copy, b, st, ot_solution_lane_message(ref, b)), OT_OK,
        NULL);
    ck_assert_status(ot_solution_set_lane_count(copy, b, ot_solution_lane_count(ref, b)),
                     OT_OK, NULL);
    int index;
    double time;
    ot_lane_stats stats;
    ck_assert_status(ot_solution_lane_root(ref, b, &index, &time), OT_OK, NULL);
    ck_assert_status(ot_solution_set_lane_root(copy, b, index, time), OT_OK, NULL);
    ck_assert_status(ot_solution_lane_stats(ref, b, &stats), OT_OK, NULL);
    ck_assert_status(ot_solution_set_lane_stats(copy, b, &stats), OT_OK, NULL);
    ck_assert_status(ot_solution_set_lane_adjoint_bytes(
                         copy, b, ot_solution_lane_adjoint_bytes(ref, b)),
                     OT_OK, NULL);
    if (ot_solution_event_tensor(copy, OT_EVENT_TIMES))
        ck_assert_status(ot_solution_set_lane_event_count(
                             copy, b, ot_solution_lane_event_count(ref, b)),
                         OT_OK, NULL);
}

/* A new tensor with t's shape and bytes, attached by the caller. */
static ot_tensor *clone(const ot_tensor *t)
{
    const ot_layout *l = ot_tensor_layout(t);
    ot_tensor *c = NULL;
    ck_assert_status(ot_tensor_new(&c, l->dtype, l->ndim, l->shape), OT_OK, NULL);
    memcpy(ot_tensor_layout(c)->data, l->data, st_bytes(t));
    return c;
}

static void assert_same_lanes(const ot_solution *a, const ot_solution *b)
{
    ck_assert_int_eq(ot_solution_nbatch(a), ot_solution_nbatch(b));
    ck_assert_int_eq(ot_solution_nfailed(a), ot_solution_nfailed(b));
    for (int64_t k = 0; k < ot_solution_nbatch(a); k++) {
        int ia, ib;
        double ta, tb;
        ck_assert_int_eq(ot_solution_lane_status(a, k), ot_solution_lane_status(b, k));
        ck_assert_str_eq(ot_solution_lane_message(a, k), ot_solution_lane_message(b, k));
        ck_assert_int_eq(ot_solution_lane_count(a, k), ot_solution_lane_count(b, k));
        ot_solution_lane_root(a, k, &ia, &ta);
        ot_solution_lane_root(b, k, &ib, &tb);
        ck_assert(ia == ib && memcmp(&ta, &tb, sizeof ta) == 0);
        st_assert_stats_equal(a, k, b, k);
        ck_assert_int_eq(ot_solution_lane_adjoint_bytes(a, k),
                         ot_solution_lane_adjoint_bytes(b, k));
        ck_assert_int_eq(ot_solution_lane_event_count(a, k),
                         ot_solution_lane_event_count(b, k));
    }
}

static int same_bytes(const ot_tensor *a, const ot_tensor *b)
{
    return a && b && st_bytes(a) == st_bytes(b) &&
           memcmp(ot_tensor_layout(a)->data, ot_tensor_layout(b)->data, st_bytes(a)) == 0;
}

/* Decay lanes, one whose rate is NaN (it fails alone), stopped by a root at
 * y0 = 1.9 for some lanes; forward sensitivities. */
static int below(double t, ot_view y, ot_view p, ot_view_mut g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int64_t b = 0; b < ST_LANES(y); b++)
        ot_view_mut_col_f64(g, b, 0)[0] = ot_view_col_f64(y, b, 0)[0] - 1.9;
    return 0;
}

START_TEST(a_copy_made_lane_by_lane_reads_as_the_solve)
{
    enum { NB = 7 };
    double k[NB], y0[2 * NB];
    decay_inputs(k, y0, NB);
    k[4] = NAN;
    const double t[3] = {0.5, 1.0, 3.0};
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    ck_assert_status(ot_ode_set_roots(ode, 1, below), OT_OK, NULL);
    ot_solution *ref = NULL;
    ck_assert_status(
        ot_solve_fwd_sens(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB), st_vec(t, 3), &ref),
        OT_ERR_LANES_FAILED, "lane 4");
    ot_solution *copy = fresh(NB, 1, 1);
    ck_assert_status(ot_solution_attach_ts(copy, clone(ot_solution_ts(ref))), OT_OK,
                     NULL);
    ck_assert_status(ot_solution_attach_ys(copy, clone(ot_solution_ys(ref))), OT_OK,
                     NULL);
    ck_assert_status(ot_solution_attach_sens(copy, 0, clone(ot_solution_sens(ref, 0))),
                     OT_OK, NULL);
    for (int w = OT_EVENT_TIMES; w <= OT_EVENT_AFTER; w++) /* the root's events */
        ck_assert_status(ot_solution_attach_event_tensor(
                             copy, w, clone(ot_solution_event_tensor(ref, w))),
                         OT_OK, NULL);
    for (int64_t b = NB - 1; b >= 0; b--) /* any order */
        copy_lane(ref, copy, b);
    assert_same_lanes(copy, ref);
    ck_assert(same_bytes(ot_solution_ts(copy), ot_solution_ts(ref)));
    ck_assert(same_bytes(ot_solution_ys(copy), ot_solution_ys(ref)));
    ck_assert(same_bytes(ot_solution_sens(copy, 0), ot_solution_sens(ref, 0)));
    for (int w = OT_EVENT_TIMES; w <= OT_EVENT_AFTER; w++)
        ck_assert(same_bytes(ot_solution_event_tensor(copy, w),
                             ot_solution_event_tensor(ref, w)));
    ck_assert_int_eq(ot_solution_lane_event_count(copy, 1), 1);
    int index;
    double time;
    ot_solution_lane_root(copy, 1, &index, &time);
    ck_assert(index == 0 && time > 0); /* lane 1 did stop at the root */
    ot_solution_free(ref);
    ot_solution_free(copy);
    ot_ode_free(ode);
}
END_TEST

START_TEST(an_adjoint_copy_carries_the_gradients_and_checkpoint_bytes)
{
    enum { NB = 4 };
    double k[NB], y0[2 * NB];
    decay_inputs(k, y0, NB);
    const double t[2] = {0.5, 1.0}, data[4] = {1, 0.5, 0.6, 0.3};
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    const ot_loss loss = ot_loss_squares(st_mat(data, 2, 2), ot_view_absent());
    ot_solution *ref = NULL;
    ck_assert_status(ot_solve_adjoint(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB),
                                      st_vec(t, 2), &loss, &ref),
                     OT_OK, NULL);
    ot_solution *copy = fresh(NB, 0, 0);
    ck_assert_status(ot_solution_attach_ys(copy, clone(ot_solution_ys(ref))), OT_OK,
                     NULL);
    for (int w = 0; w < 3; w++)
        ck_assert_status(ot_solution_attach_grad_tensor(
                             copy, w, clone(ot_solution_grad_tensor(ref, w))),
                         OT_OK, NULL);
    for (int64_t b = 0; b < NB; b++) {
        const int st = ot_solution_lane_status(ref, b);
        ot_lane_stats stats;
        ot_solution_lane_stats(ref, b, &stats);
        ck_assert_status(ot_solution_set_lane_status(copy, b, st, ""), OT_OK, NULL);
        ck_assert_status(
            ot_solution_set_lane_count(copy, b, ot_solution_lane_count(ref, b)), OT_OK,
            NULL);
        ck_assert_status(ot_solution_set_lane_stats(copy, b, &stats), OT_OK, NULL);
        ck_assert_status(ot_solution_set_lane_adjoint_bytes(
                             copy, b, ot_solution_lane_adjoint_bytes(ref, b)),
                         OT_OK, NULL);
    }
    assert_same_lanes(copy, ref);
    ck_assert_int_gt(ot_solution_lane_adjoint_bytes(copy, 2), 0);
    for (int w = 0; w < 3; w++)
        ck_assert(same_bytes(ot_solution_grad_tensor(copy, w),
                             ot_solution_grad_tensor(ref, w)));
    ot_solution_free(ref);
    ot_solution_free(copy);
    ot_ode_free(ode);
}
END_TEST

START_TEST(an_attached_tensor_is_the_solutions_until_taken)
{
    ot_solution *s = fresh(2, 0, 0);
    ot_tensor *ys = tensor(OT_F64, 3, 2, 3, 2);
    ck_assert_status(ot_solution_attach_ys(s, ys), OT_OK, NULL);
    ck_assert_ptr_eq(ot_solution_ys(s), ys);
    /* The caller may still write it through its pointer. */
    ((double *)ot_tensor_layout(ys)->data)[0] = 4.5;
    ck_assert(st_y(s, 0, 0, 0) == 4.5);
    ck_assert_ptr_eq(ot_solution_take_ys(s), ys);
    ck_assert_ptr_null(ot_solution_ys(s));
    ck_assert_status(ot_solution_attach_ys(s, ys), OT_OK, NULL); /* the slot is free */
    ot_solution_free(s);                                         /* frees ys */
}
END_TEST

START_TEST(attach_refuses_null_a_full_slot_and_tensors_no_solve_makes)
{
    ot_solution *s = fresh(3, 2, 0);
    ot_tensor *ys = tensor(OT_F64, 3, 2, 4, 3);
    ck_assert_status(ot_solution_attach_ys(NULL, ys), OT_ERR_ARG, "ys: sol is NULL");
    ck_assert_status(ot_solution_attach_ys(s, NULL), OT_ERR_ARG,
                     "ys: the tensor is NULL");
    ot_tensor *lanes2 = tensor(OT_F64, 3, 2, 4, 2), *two = tensor(OT_F64, 2, 2, 3, 1);
    ck_assert_status(
        ot_solution_attach_ys(s, lanes2), OT_ERR_SHAPE,
        "ys: 3 axes, the last 2; expected [rows, nt, nbatch] with nbatch = 3");
    ck_assert_status(ot_solution_attach_ys(s, two), OT_ERR_SHAPE, "ys: 2 axes");
    ck_assert_status(ot_solution_attach_ys(s, ys), OT_OK, NULL);
    ck_assert_status(ot_solution_attach_ys(s, lanes2), OT_ERR_ARG,
                     "ys: the solution holds one already; take it first");
    /* Sensitivities: in range, and shaped as ys. */
    ot_tensor *f32 = tensor(OT_F32, 3, 2, 4, 3), *rows = tensor(OT_F64, 1, 3, 0, 0);
    ot_tensor *rows3 = tensor(OT_F64, 3, 5, 4, 3);
    ck_assert_status(ot_solution_attach_sens(s, 2, f32), OT_ERR_ARG,
                     "sens: j is 2; the solution has room for 2 sensitivities");
    ck_assert_status(ot_solution_attach_sens(s, -1, f32), OT_ERR_ARG, "j is -1");
    ck_assert_status(ot_solution_attach_sens(s, 0, f32), OT_ERR_SHAPE,
                     "sens: [2, 4, 3] f32; the outputs held are [2, 4, 3] f64");
    ck_assert_status(ot_solution_attach_sens(s, 0, rows3), OT_ERR_SHAPE, "[5, 4, 3]");
    ck_assert_status(ot_solution_attach_sens(s, 0, rows), OT_ERR_SHAPE, "sens: 1 axes");
    /* Times: [nt] or [nt, nbatch], f64, nt as the outputs'. */
    ot_tensor *t3 = tensor(OT_F64, 1, 3, 0, 0), *t4f = tensor(OT_F32, 1, 4, 0, 0);
    ot_tensor *tl = tensor(OT_F64, 2, 4, 2, 0), *t4 = tensor(OT_F64, 2, 4, 3, 0);
    ck_assert_status(ot_solution_attach_ts(s, t3), OT_ERR_SHAPE,
                     "ts: 3 times, but the outputs held have nt = 4");
    ck_assert_status(ot_solution_attach_ts(s, t4f), OT_ERR_DTYPE, "ts: must be f64");
    ck_assert_status(ot_solution_attach_ts(s, tl), OT_ERR_SHAPE,
                     "expected [nt] (every lane) or [nt, nbatch = 3] (per lane)");
    ck_assert_status(ot_solution_attach_ts(s, t4), OT_OK, NULL); /* per lane */
    /* Gradients: which in range, f64, lanes last. */
    ot_tensor *loss = tensor(OT_F64, 1, 3, 0, 0), *gp = tensor(OT_F64, 2, 1, 2, 0);
    ck_assert_status(ot_solution_attach_grad_tensor(s, 3, loss), OT_ERR_ARG,
                     "grad: which is 3; use OT_GRAD_LOSS");
    ck_assert_status(ot_solution_attach_grad_tensor(s, OT_GRAD_PARAMS, gp), OT_ERR_SHAPE,
                     "OT_GRAD_PARAMS: 2 axes, the last 2; expected [np, nbatch]");
    ck_assert_status(ot_solution_attach_grad_tensor(s, OT_GRAD_Y0, loss), OT_ERR_SHAPE,
                     "OT_GRAD_Y0: 1 axes");
    ck_assert_status(ot_solution_attach_grad_tensor(s, OT_GRAD_PARAMS, f32), OT_ERR_SHAPE,
                     "OT_GRAD_PARAMS: 3 axes");
    ck_assert_status(ot_solution_attach_grad_tensor(s, OT_GRAD_LOSS, loss), OT_OK, NULL);
    /* Events: which in range, f64, [m, nbatch] or [n, m, nbatch], one m. */
    ot_tensor *ev2 = tensor(OT_F64, 2, 2, 3, 0), *ev5 = tensor(OT_F64, 2, 5, 3, 0);
    ot_tensor *ev3 = tensor(OT_F64, 3, 2, 5, 3), *ev3b = tensor(OT_F64, 3, 4, 2, 3);
    ck_assert_status(ot_solution_set_lane_event_count(s, 0, 1), OT_ERR_ARG,
                     "the solution holds no event tensor; attach them first");
    ck_assert_status(ot_solution_attach_event_tensor(s, 4, ev2), OT_ERR_ARG,
                     "event: which is 4; use OT_EVENT_TIMES");
    ck_assert_status(ot_solution_attach_event_tensor(s, OT_EVENT_BEFORE, ev2),
                     OT_ERR_SHAPE, "OT_EVENT_BEFORE: 2 axes, the last 3; expected [n, m");
    ck_assert_status(ot_solution_attach_event_tensor(s, OT_EVENT_TIMES, f32),
                     OT_ERR_SHAPE, "OT_EVENT_TIMES: 3 axes");
    ck_assert_status(ot_solution_attach_event_tensor(s, OT_EVENT_TIMES, ev2), OT_OK,
                     NULL);
    ck_assert_status(ot_solution_attach_event_tensor(s, OT_EVENT_TIMES, ev5), OT_ERR_ARG,
                     "OT_EVENT_TIMES: the solution holds one already");
    ck_assert_status(ot_solution_attach_event_tensor(s, OT_EVENT_ROOTS, ev5),
                     OT_ERR_SHAPE,
                     "OT_EVENT_ROOTS: m is 5, but the event tensors held have 2");
    ck_assert_status(ot_solution_attach_event_tensor(s, OT_EVENT_AFTER, ev3),
                     OT_ERR_SHAPE, "OT_EVENT_AFTER: m is 5");
    ck_assert_status(ot_solution_attach_event_tensor(s, OT_EVENT_AFTER, ev3b), OT_OK,
                     NULL);
    ot_tensor *ev3c = tensor(OT_F64, 3, 3, 2, 3);
    ck_assert_status(ot_solution_attach_event_tensor(s, OT_EVENT_BEFORE, ev3c),
                     OT_ERR_SHAPE, "OT_EVENT_BEFORE: 3 states, but OT_EVENT_AFTER has 4");
    ck_assert_status(ot_solution_set_lane_event_count(s, 2, 3), OT_ERR_VALUE,
                     "count is 3; must be in 0..2 (the event tensors' m)");
    ck_assert_status(ot_solution_set_lane_event_count(s, 2, 2), OT_OK, NULL);
    ck_assert_int_eq(ot_solution_lane_event_count(s, 2), 2);
    ck_assert_int_eq(ot_solution_lane_event_count(s, 1), 0);
    /* Refused tensors stayed ours (a double free would show under ASan). */
    ot_tensor *mine[] = {lanes2, two, f32, rows, rows3, t3, t4f, tl, gp, ev5, ev3, ev3c};
    for (size_t i = 0; i < sizeof mine / sizeof *mine; i++)
        ot_tensor_free(mine[i]);
    ot_solution_free(s);
}
END_TEST

START_TEST(ys_shorter_than_a_lanes_count_is_refused)
{
    ot_solution *s = fresh(2, 0, 0);
    ck_assert_status(ot_solution_set_lane_count(s, 1, 5), OT_OK, NULL);
    ot_tensor *ys = tensor(OT_F64, 3, 1, 4, 2);
    ck_assert_status(ot_solution_attach_ys(s, ys), OT_ERR_SHAPE,
                     "ys: nt is 4, but lane 1's count is 5");
    ck_assert_status(ot_solution_set_lane_count(s, 1, 4), OT_OK, NULL);
    ck_assert_status(ot_solution_attach_ys(s, ys), OT_OK, NULL);
    ck_assert_status(ot_solution_set_lane_count(s, 0, 5), OT_ERR_VALUE,
                     "ot_solution_set_lane_count: count is 5; must be in 0..4 (ys' nt)");
    ck_assert_int_eq(ot_solution_lane_count(s, 0), 0);
    ot_solution_free(s);
}
END_TEST

START_TEST(lane_setters_refuse_bad_lanes_and_values_and_change_nothing)
{
    ot_solution *s = fresh(2, 0, 0), *r = fresh(2, 0, 1);
    const ot_lane_stats stats = {1, 2, 3, 4, 5, 6, 7, 8, 9, 1.5, 0, 0};
    ck_assert_status(ot_solution_set_lane_status(NULL, 0, OT_ERR_SOLVER, "x"), OT_ERR_ARG,
                     "ot_solution_set_lane_status: sol is NULL");
    ck_assert_status(ot_solution_set_lane_status(s, 2, OT_ERR_SOLVER, "x"), OT_ERR_ARG,
                     "ot_solution_set_lane_status: lane 2 is outside 0..1");
    ck_assert_status(ot_solution_set_lane_status(s, 0, -77, "x"), OT_ERR_ARG,
                     "status is -77, not a code of odetensor/status.h");
    ck_assert_status(ot_solution_set_lane_status(s, 0, OT_OK, "fine"), OT_ERR_ARG,
                     "message given with OT_OK");
    ck_assert_status(ot_solution_set_lane_count(s, -1, 1), OT_ERR_ARG, "lane -1");
    ck_assert_status(ot_solution_set_lane_count(s, 0, -1), OT_ERR_VALUE, "count is -1");
    ck_assert_status(ot_solution_set_lane_root(s, 0, 0, 1.0), OT_ERR_ARG,
                     "the solution has no roots (ot_solution_new's with_roots is 0)");
    ck_assert_status(ot_solution_set_lane_root(r, 0, -2, NAN), OT_ERR_VALUE,
                     "index is -2");
    ck_assert_status(ot_solution_set_lane_root(r, 0, 0, NAN), OT_ERR_VALUE,
                     "time is nan with index 0; a root has a finite time");
    ck_assert_status(ot_solution_set_lane_root(r, 0, -1, 2.0), OT_ERR_VALUE,
                     "index -1 (none) has NaN");
    ck_assert_status(ot_solution_set_lane_stats(s, 0, NULL), OT_ERR_ARG,
                     "ot_solution_set_lane_stats: stats is NULL");
    ck_assert_status(ot_solution_set_lane_stats(s, 5, &stats), OT_ERR_ARG, "lane 5");
    ck_assert_status(ot_solution_set_lane_adjoint_bytes(s, 0, -8), OT_ERR_VALUE,
                     "bytes is -8; must be >= 0");
    ck_assert_status(ot_solution_set_lane_adjoint_bytes(NULL, 0, 8), OT_ERR_ARG,
                     "sol is NULL");
    /* Nothing changed. */
    int index;
    double time;
    ck_assert_int_eq(ot_solution_lane_status(s, 0), OT_OK);
    ck_assert_int_eq(ot_solution_lane_count(s, 0), 0);
    ot_solution_lane_root(r, 0, &index, &time);
    ck_assert(index == -1 && isnan(time));
    ck_assert_int_eq(ot_solution_lane_adjoint_bytes(s, 0), 0);
    /* And what they accept reads back. */
    ot_lane_stats back;
    ck_assert_status(ot_solution_set_lane_root(r, 1, 0, 2.5), OT_OK, NULL);
    ot_solution_lane_root(r, 1, &index, &time);
    ck_assert(index == 0 && time == 2.5);
    ck_assert_status(ot_solution_set_lane_stats(s, 1, &stats), OT_OK, NULL);
    ot_solution_lane_stats(s, 1, &back);
    ck_assert(memcmp(&back, &stats, sizeof stats) == 0);
    ot_solution_free(s);
    ot_solution_free(r);
}
END_TEST

START_TEST(a_lane_status_carries_its_message_and_ok_clears_it)
{
    ot_solution *s = fresh(3, 0, 0);
    char big[400];
    memset(big, 'm', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ck_assert_status(ot_solution_set_lane_status(s, 1, OT_ERR_CALLBACK, big), OT_OK,
                     NULL);
    ck_assert_int_eq(ot_solution_lane_status(s, 1), OT_ERR_CALLBACK);
    ck_assert_uint_eq(strlen(ot_solution_lane_message(s, 1)), 255);
    ck_assert_int_eq(ot_solution_nfailed(s), 1);
    ck_assert_status(ot_solution_set_lane_status(s, 2, OT_ERR_SOLVER, NULL), OT_OK, NULL);
    ck_assert_str_eq(ot_solution_lane_message(s, 2), "");
    ck_assert_int_eq(ot_solution_nfailed(s), 2);
    ck_assert_status(ot_solution_set_lane_status(s, 1, OT_OK, ""), OT_OK, NULL);
    ck_assert_str_eq(ot_solution_lane_message(s, 1), "");
    ck_assert_int_eq(ot_solution_nfailed(s), 1);
    ot_solution_free(s);
}
END_TEST

/* Threads set their own lanes at once: the first message makes the
 * message table, the first checkpoint bytes theirs, under the solution's
 * lock. */
typedef struct {
    ot_solution *s;
    int64_t first, step;
} setter;

static void *set_lanes(void *arg)
{
    const setter *w = arg;
    char msg[64];
    for (int64_t b = w->first; b < ot_solution_nbatch(w->s); b += w->step) {
        snprintf(msg, sizeof msg, "lane %lld failed", (long long)b);
        if (ot_solution_set_lane_status(w->s, b, OT_ERR_CALLBACK, msg) != OT_OK ||
            ot_solution_set_lane_count(w->s, b, b % 5) != OT_OK ||
            ot_solution_set_lane_adjoint_bytes(w->s, b, 8 * b + 8) != OT_OK)
            return arg;
    }
    return NULL;
}

START_TEST(lanes_set_from_several_threads_at_once_each_keep_their_own)
{
    enum { NB = 4000, NT = 4 };
    ot_solution *s = fresh(NB, 0, 0);
    pthread_t th[NT];
    setter w[NT];
    for (int i = 0; i < NT; i++) {
        w[i] = (setter){s, i, NT};
        ck_assert_int_eq(pthread_create(&th[i], NULL, set_lanes, &w[i]), 0);
    }
    for (int i = 0; i < NT; i++) {
        void *ret = &ret;
        pthread_join(th[i], &ret);
        ck_assert_ptr_null(ret);
    }
    char want[64];
    for (int64_t b = 0; b < NB; b++) {
        snprintf(want, sizeof want, "lane %lld failed", (long long)b);
        ck_assert_str_eq(ot_solution_lane_message(s, b), want);
        ck_assert_int_eq(ot_solution_lane_count(s, b), b % 5);
        ck_assert_int_eq(ot_solution_lane_adjoint_bytes(s, b), 8 * b + 8);
    }
    ck_assert_int_eq(ot_solution_nfailed(s), NB);
    ot_solution_free(s);
}
END_TEST

Suite *assemble_suite(void)
{
    Suite *s = suite_create("assemble");
    TCase *tc = ot_test_tcase(s, "assemble", 30);
    tcase_add_test(tc, a_new_solution_reads_as_a_solve_with_nothing_done);
    tcase_add_test(tc, solution_new_refuses_null_negative_sizes_and_overflow);
    tcase_add_test(tc, a_copy_made_lane_by_lane_reads_as_the_solve);
    tcase_add_test(tc, an_adjoint_copy_carries_the_gradients_and_checkpoint_bytes);
    tcase_add_test(tc, an_attached_tensor_is_the_solutions_until_taken);
    tcase_add_test(tc, attach_refuses_null_a_full_slot_and_tensors_no_solve_makes);
    tcase_add_test(tc, ys_shorter_than_a_lanes_count_is_refused);
    tcase_add_test(tc, lane_setters_refuse_bad_lanes_and_values_and_change_nothing);
    tcase_add_test(tc, a_lane_status_carries_its_message_and_ok_clears_it);
    tcase_add_test(tc, lanes_set_from_several_threads_at_once_each_keep_their_own);
    return s;
}

/* Solves of a part of a batch, for layers built on odetensor (the MPI
 * layer's blocks, a scheduler's): ot_solve_dense_opts, ot_solve_fwd_sens_opts
 * and ot_solve_adjoint_opts (and their _with_opts forms) with ot_solve_options, a
 * progress hook in place of the problem's and the caller's index of lane 0. Every refusal
 * (status and message), and results that are the plain call's bit for bit. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "solve_common.h"
#include "suites.h"

typedef struct {
    int64_t calls, last_done, last_total;
} progress_log;

/* Lanes mode calls it under a lock, one call at a time. */
static int log_progress(int64_t done, int64_t total, void *user)
{
    progress_log *l = user;
    l->calls++;
    l->last_done = done;
    l->last_total = total;
    return 0;
}

static ot_solve_options options(void)
{
    ot_solve_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    return o;
}

START_TEST(a_solve_reports_to_the_progress_hook_it_is_given)
{
    enum { NB = 6 };
    double k[NB], y0[2 * NB];
    decay_inputs(k, y0, NB);
    const double t[2] = {0.5, 1.0};
    progress_log own = {0, 0, 0}, given = {0, 0, 0};
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    ck_assert_status(ot_ode_set_progress(ode, log_progress, &own), OT_OK, NULL);
    if (_i)
        ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
    ot_solve_options o = options();
    o.replace_progress = 1;
    o.progress = log_progress;
    o.progress_user = &given;
    ot_solution *a = NULL, *b = NULL;
    ck_assert_status(ot_solve_dense_opts(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB),
                                         st_vec(t, 2), &o, &a),
                     OT_OK, NULL);
    ck_assert_int_eq(own.calls, 0);
    ck_assert_int_eq(given.last_done, NB);
    ck_assert_int_eq(given.last_total, NB);
    ck_assert_int_eq(given.calls, _i ? 2 : NB); /* lockstep: at each output time */
    /* The same answer as the plain entry, bit for bit. */
    ck_assert_status(
        ot_solve_dense(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB), st_vec(t, 2), &b), OT_OK,
        NULL);
    ck_assert_int_eq(own.last_done, NB);
    ck_assert(memcmp(ot_tensor_layout(ot_solution_ys(a))->data,
                     ot_tensor_layout(ot_solution_ys(b))->data,
                     st_bytes(ot_solution_ys(a))) == 0);
    ot_solution_free(a);
    ot_solution_free(b);
    ot_ode_free(ode);
}
END_TEST

START_TEST(a_null_progress_hook_silences_the_problems)
{
    enum { NB = 4 };
    double k[NB], y0[2 * NB];
    decay_inputs(k, y0, NB);
    const double t[2] = {0.5, 1.0};
    progress_log own = {0, 0, 0};
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    ck_assert_status(ot_ode_set_progress(ode, log_progress, &own), OT_OK, NULL);
    ot_solve_options o = options();
    o.replace_progress = 1;
    ot_solution *a = NULL;
    ck_assert_status(ot_solve_dense_opts(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB),
                                         st_vec(t, 2), &o, &a),
                     OT_OK, NULL);
    ck_assert_int_eq(own.calls, 0);
    ot_solution_free(a);
    /* Options left at 0 keep the problem's hook, as the plain call. */
    o = options();
    ck_assert_status(ot_solve_dense_opts(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB),
                                         st_vec(t, 2), &o, &a),
                     OT_OK, NULL);
    ck_assert_int_eq(own.last_done, NB);
    ot_solution_free(a);
    ot_ode_free(ode);
}
END_TEST

/* Lane b's params are (k_b, b); callbacks count the calls whose
 * ot_callback_lane() is not OFFSET + the local index p[1]. */
enum { OFFSET = 1000 };
static int lane_calls, lane_wrong, loss_calls, loss_wrong;

static void check_offset(ot_view p, int *calls, int *wrong)
{
    const int64_t lane = ot_callback_lane();
    int ok = 1;
    for (int64_t b = 0; b < ST_LANES(p); b++) /* ~1e-8 |p| steps: sens, adjoint */
        ok &= fabs(ot_view_col_f64(p, b, 0)[1] + OFFSET - (double)(lane + b)) < 0.25;
    __atomic_fetch_add(calls, 1, __ATOMIC_RELAXED);
    if (!ok)
        __atomic_fetch_add(wrong, 1, __ATOMIC_RELAXED);
}

static int offset_rhs(double t, ot_view y, ot_view p, ot_view_mut f, void *u)
{
    check_offset(p, &lane_calls, &lane_wrong);
    return st_decay_rhs(t, y, p, f, u);
}

/* Sum of squares of y; its lane argument counts from 0 in the call. */
static int offset_loss(double t, int64_t i, int64_t lane, ot_view y, ot_view p,
                       ot_view_mut g, ot_view_mut dgdy, ot_view_mut dgdp, void *u)
{
    (void)t, (void)i, (void)dgdp, (void)u;
    check_offset(p, &loss_calls, &loss_wrong);
    if (fabs(ot_view_col_f64(p, 0, 0)[1] - (double)lane) > 0.25)
        __atomic_fetch_add(&loss_wrong, 1, __ATOMIC_RELAXED);
    const double *yy = ot_view_col_f64(y, 0, 0);
    ot_view_mut_col_f64(g, 0, 0)[0] = yy[0] * yy[0] + yy[1] * yy[1];
    ot_view_mut_col_f64(dgdy, 0, 0)[0] = 2 * yy[0];
    ot_view_mut_col_f64(dgdy, 0, 0)[1] = 2 * yy[1];
    return 0;
}

/* A dose at each scheduled stop: y0 += 0.5 (one lane a call). */
static int offset_dose(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                       void *u)
{
    (void)t, (void)root, (void)lane, (void)p, (void)u;
    ot_view_mut_col_f64(y, 0, 0)[0] += 0.5;
    return 0;
}

/* Every byte of a's tensor t equals b's. */
static int same_bytes(const ot_tensor *a, const ot_tensor *b)
{
    return a && b && st_bytes(a) == st_bytes(b) &&
           memcmp(ot_tensor_layout(a)->data, ot_tensor_layout(b)->data, st_bytes(a)) == 0;
}

/* _i: entry (0 dense, 1 sens, 2 adjoint) x mode (lanes on 2 threads,
 * lockstep in blocks of 4 on 2 threads) x (the plain inputs, or through
 * ot_solve_*_with_opts with per-lane stops and a dose at each). */
START_TEST(callbacks_read_the_lane_offset_and_no_bit_changes)
{
    enum { NB = 10 };
    const int entry = _i % 6 / 2, lockstep = _i % 2, with = _i >= 6;
    double p[2 * NB], y0[2 * NB];
    for (int b = 0; b < NB; b++) {
        p[2 * b] = decay_k(b), p[2 * b + 1] = b;
        y0[2 * b] = 1, y0[2 * b + 1] = 0.5;
    }
    const double t[3] = {0.5, 1.0, 2.0};
    ot_ode *ode = NULL;
    ck_assert_status(ot_ode_new(&ode, 2, 2, offset_rhs, NULL), OT_OK, NULL);
    ck_assert_status(ot_ode_set_threads(ode, 2), OT_OK, NULL);
    if (lockstep) {
        ck_assert_status(ot_ode_set_mode(ode, OT_LOCKSTEP), OT_OK, NULL);
        ck_assert_status(ot_ode_set_lockstep_block(ode, 4), OT_OK, NULL);
    }
    const ot_loss loss = ot_loss_custom(offset_loss, NULL);
    const ot_view Y = st_mat(y0, 2, NB), P = st_mat(p, 2, NB), T = st_vec(t, 3);
    ot_solve_inputs in = ot_solve_inputs_make(Y, P, T);
    double stops[2 * NB];
    for (int b = 0; b < NB; b++) /* per lane, one before the last output */
        stops[2 * b] = 0.25 + 0.05 * b, stops[2 * b + 1] = 1.5;
    in.stops = st_mat(stops, 2, NB);
    if (with)
        ck_assert_status(ot_ode_set_event_handler(ode, offset_dose), OT_OK, NULL);
    ot_solve_options o = options();
    o.lane_offset = OFFSET;
    ot_solution *a = NULL, *b = NULL;
    if (with)
        ck_assert_status(entry == 0 ? ot_solve_dense_with_opts(ode, &in, &o, &a)
                         : entry == 1
                             ? ot_solve_fwd_sens_with_opts(ode, &in, &o, &a)
                             : ot_solve_adjoint_with_opts(ode, &in, &loss, &o, &a),
                         OT_OK, NULL);
    else
        ck_assert_status(entry == 0 ? ot_solve_dense_opts(ode, Y, P, T, &o, &a)
                         : entry == 1
                             ? ot_solve_fwd_sens_opts(ode, Y, P, T, &o, &a)
                             : ot_solve_adjoint_opts(ode, Y, P, T, &loss, &o, &a),
                         OT_OK, NULL);
    ck_assert_int_gt(lane_calls, 0);
    ck_assert_int_eq(lane_wrong, 0);
    ck_assert_int_eq(loss_calls > 0, entry == 2);
    ck_assert_int_eq(loss_wrong, 0);
    ck_assert_int_eq(ot_callback_lane(), -1); /* restored after the call */
    /* The plain call reports local lanes and gives the same bits. */
    if (with)
        ck_assert_status(entry == 0   ? ot_solve_dense_with(ode, &in, &b)
                         : entry == 1 ? ot_solve_fwd_sens_with(ode, &in, &b)
                                      : ot_solve_adjoint_with(ode, &in, &loss, &b),
                         OT_OK, NULL);
    else
        ck_assert_status(entry == 0   ? ot_solve_dense(ode, Y, P, T, &b)
                         : entry == 1 ? ot_solve_fwd_sens(ode, Y, P, T, &b)
                                      : ot_solve_adjoint(ode, Y, P, T, &loss, &b),
                         OT_OK, NULL);
    ck_assert_int_gt(lane_wrong, 0);
    ck_assert_int_eq(ot_solution_nbatch(a), NB);
    ck_assert(same_bytes(ot_solution_ys(a), ot_solution_ys(b)));
    for (int64_t j = 0; j < ot_solution_nsens(a); j++)
        ck_assert(same_bytes(ot_solution_sens(a, j), ot_solution_sens(b, j)));
    for (int w = 0; entry == 2 && w < 3; w++)
        ck_assert(
            same_bytes(ot_solution_grad_tensor(a, w), ot_solution_grad_tensor(b, w)));
    for (int w = OT_EVENT_TIMES; with && w <= OT_EVENT_AFTER; w++)
        ck_assert(
            same_bytes(ot_solution_event_tensor(a, w), ot_solution_event_tensor(b, w)));
    if (with) { /* the doses happened: 2 events a lane, y0 above the decay */
        ck_assert_int_eq(ot_solution_lane_event_count(a, NB - 1), 2);
        const double *ys = ot_tensor_layout(ot_solution_ys(a))->data;
        ck_assert(ys[2 * 2 + 2 * 3 * (NB - 1)] > exp(-2 * decay_k(NB - 1)) + 0.5);
    }
    ot_solution_free(a);
    ot_solution_free(b);
    ot_ode_free(ode);
}
END_TEST

START_TEST(solve_options_refuse_a_bad_size_flag_hook_or_offset)
{
    enum { NB = 6 };
    double k[NB], y0[2 * NB];
    decay_inputs(k, y0, NB);
    const double t[2] = {0.5, 1.0};
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    const ot_view Y = st_mat(y0, 2, NB), K = st_mat(k, 1, NB), T = st_vec(t, 2);
    const ot_loss loss = ot_loss_squares(st_mat(y0, 2, 2), ot_view_absent());
    ot_solution *keep = (ot_solution *)&keep, *sol = keep;
    ot_solve_options o = options();
    o.size = 0;
    ck_assert_status(ot_solve_dense_opts(ode, Y, K, T, &o, &sol), OT_ERR_ARG,
                     "opts: size is 0 bytes; set opts->size = sizeof(ot_solve_options)");
    o.size = offsetof(ot_solve_options, lane_offset);
    ck_assert_status(ot_solve_fwd_sens_opts(ode, Y, K, T, &o, &sol), OT_ERR_ARG,
                     "bytes at least");
    o = options();
    o.replace_progress = 2;
    ck_assert_status(ot_solve_adjoint_opts(ode, Y, K, T, &loss, &o, &sol), OT_ERR_ARG,
                     "opts: replace_progress is 2; use 0");
    o = options();
    o.progress = log_progress;
    ck_assert_status(ot_solve_dense_opts(ode, Y, K, T, &o, &sol), OT_ERR_ARG,
                     "opts: progress is set but replace_progress is 0");
    o = options();
    o.progress_user = &o;
    ck_assert_status(ot_solve_dense_opts(ode, Y, K, T, &o, &sol), OT_ERR_ARG,
                     "replace_progress is 0");
    o = options();
    o.lane_offset = -1;
    ck_assert_status(ot_solve_dense_opts(ode, Y, K, T, &o, &sol), OT_ERR_VALUE,
                     "opts: lane_offset is -1; must be >= 0");
    o.lane_offset = INT64_MAX - NB + 1;
    ck_assert_status(ot_solve_adjoint_opts(ode, Y, K, T, &loss, &o, &sol),
                     OT_ERR_OVERFLOW, "lanes overflows int64");
    o = options();
    ck_assert_status(ot_solve_dense_opts(ode, Y, K, T, &o, NULL), OT_ERR_ARG,
                     "out: NULL");
    ck_assert_ptr_eq(sol, keep); /* untouched by every refusal */
    /* The last lane that fits is fine. */
    o.lane_offset = INT64_MAX - NB;
    ck_assert_status(ot_solve_dense_opts(ode, Y, K, T, &o, &sol), OT_OK, NULL);
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

START_TEST(options_from_a_newer_header_are_read_up_to_this_librarys_fields)
{
    enum { NB = 3 };
    double k[NB], y0[2 * NB];
    decay_inputs(k, y0, NB);
    const double t[2] = {0.5, 1.0};
    ot_ode *ode = decay_ode(1, 1e-8, 1e-10);
    struct {
        ot_solve_options known;
        double later[4]; /* fields this library does not know */
    } newer;
    memset(&newer, 0xff, sizeof newer);
    newer.known = options();
    newer.known.size = sizeof newer;
    newer.known.lane_offset = 5;
    ot_solution *sol = NULL;
    ck_assert_status(ot_solve_dense_opts(ode, st_mat(y0, 2, NB), st_mat(k, 1, NB),
                                         st_vec(t, 2), &newer.known, &sol),
                     OT_OK, NULL);
    ck_assert_int_eq(ot_solution_nbatch(sol), NB);
    ot_solution_free(sol);
    ot_ode_free(ode);
}
END_TEST

Suite *solve_options_suite(void)
{
    Suite *s = suite_create("solve_options");
    TCase *tc = ot_test_tcase(s, "solve_options", 30);
    tcase_add_loop_test(tc, a_solve_reports_to_the_progress_hook_it_is_given, 0, 2);
    tcase_add_test(tc, a_null_progress_hook_silences_the_problems);
    tcase_add_loop_test(tc, callbacks_read_the_lane_offset_and_no_bit_changes, 0, 12);
    tcase_add_test(tc, solve_options_refuse_a_bad_size_flag_hook_or_offset);
    tcase_add_test(tc, options_from_a_newer_header_are_read_up_to_this_librarys_fields);
    return s;
}

/* odetensor for JavaScript: a C API over the library with int, double and
 * pointer arguments only (no struct crosses the JS boundary by value), built
 * into the wasm module by `make wasm` and called by ../index.mjs.
 *
 * Callbacks are plain C function pointers (from JS: Module.addFunction):
 *   int eval(double t, const double *y, const double *p, double *out,
 *            int k, int lane, void *user)      rhs, jac, dfdp, out, root
 *   int init(const double *p, double *y0, int k, int lane, void *user)
 * y [n, k], p [np, k], out [rows, k] (jac: [n, n, k]; dfdp: [n, np, k]) are
 * compact column-major
 * f64 arrays valid only during the call; k = 1 in lanes mode (lane is then the
 * lane's index) and k = the block's lanes in lockstep mode (lane: the block's
 * first lane; blocks of a size chosen from n unless lockstepBlock is set). The return
 * codes are odetensor's: 0 ok, > 0 retry with a smaller step, < 0 stop the lane.
 *
 * Lanes run one after another on the calling thread (threads = 1): wasm here
 * has no threads, and the lane index passed to callbacks relies on it.
 *
 * Every entry point answers NULL or out-of-range arguments with a status (or
 * NULL / 0) instead of touching memory: in wasm, address 0 is ordinary
 * memory, so a NULL dereference would corrupt the module rather than trap.
 * A NULL problem goes on to the library as a NULL ot_ode, whose message
 * ("ot_ode_set_rtol: ode is NULL") becomes the status's message. */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <odetensor.h>

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#define OTW_API EMSCRIPTEN_KEEPALIVE
#else
#define OTW_API
#endif

typedef int (*otw_eval_fn)(double t, const double *y, const double *p, double *out, int k,
                           int lane, void *user);
typedef int (*otw_init_fn)(const double *p, double *y0, int k, int lane, void *user);
/* A loss term at output i: g [1, k], dgdy [n, k], dgdp [np, k], zeroed. */
typedef int (*otw_loss_fn)(double t, int i, const double *y, const double *p, double *g,
                           double *dgdy, double *dgdp, int k, int lane, void *user);
/* A loss's integrand for one lane: q [1], dqdy [n], dqdp [np], zeroed. */
typedef int (*otw_integrand_fn)(double t, const double *y, const double *p, double *q,
                                double *dqdy, double *dqdp, int lane, void *user);
/* An event handler: y [n] and p [np] of one lane, writable. */
typedef int (*otw_event_fn)(double t, int root, int lane, double *y, double *p,
                            void *user);

typedef struct otw_problem {
    ot_ode *ode;
    otw_eval_fn rhs, jac, dfdp, out, root;
    otw_init_fn init;
    otw_event_fn event;
    otw_loss_fn loss; /* otw_solve_adjoint's, during that call */
    otw_integrand_fn integrand;
    int nout; /* out's rows (0 without out) */
    void *user;
    int lockstep;
    int t_cols; /* t_eval's columns: > 1 per-lane times [nt, t_cols] (otw_set_t_cols) */
    int lane;   /* lanes mode: the lane being solved (lanes run in order) */
} otw_problem;

/* ---- Views as flat arrays ---------------------------------------------- */

/* True when the view's elements are one compact column-major block. The
 * solver's views always are; anything else goes through a scratch copy. */
static int is_compact(const ot_layout *l)
{
    int64_t want = 8;
    for (int a = 0; a < OT_MAX_NDIM; a++) {
        if (l->shape[a] > 1 && l->strides[a] != want)
            return 0;
        want *= l->shape[a] > 0 ? l->shape[a] : 1;
    }
    return 1;
}

static int64_t numel(const ot_layout *l)
{
    return l->shape[0] * l->shape[1] * l->shape[2];
}

/* Copies the columns of l into (to_flat) or out of a compact buffer. */
static void copy_cols(const ot_layout *l, double *flat, int to_flat)
{
    const size_t rows = (size_t)l->shape[0];
    for (int64_t k = 0; k < l->shape[2]; k++)
        for (int64_t j = 0; j < l->shape[1]; j++) {
            char *col = (char *)l->data + j * l->strides[1] + k * l->strides[2];
            double *f = flat + (k * l->shape[1] + j) * l->shape[0];
            if (to_flat)
                memcpy(f, col, rows * sizeof *f);
            else
                memcpy(col, f, rows * sizeof *f);
        }
}

/* A flat pointer to the view's elements in *flat: its own data, or a
 * scratch copy in *tmp that the caller frees. @return 0, or -1 out of memory. */
static int flat_of(const ot_layout *l, double **flat, double **tmp)
{
    *tmp = NULL;
    *flat = l->data;
    if (l->data == NULL || is_compact(l))
        return 0;
    *tmp = *flat = malloc((size_t)numel(l) * sizeof **tmp);
    if (*tmp == NULL)
        return -1;
    copy_cols(l, *tmp, 1);
    return 0;
}

/* The lane index callbacks get: in lanes mode the lane; in lockstep the
 * first lane of the block being solved (0 without blocks). */
static int lane_of(const otw_problem *P) { return P->lane; }

static int call_eval(otw_problem *P, otw_eval_fn fn, double t, ot_view y, ot_view p,
                     ot_view_mut o)
{
    double *fy, *fp, *fo, *ty, *tp, *to;
    int rc = -1;
    const int bad = flat_of(&y.layout, &fy, &ty) | flat_of(&p.layout, &fp, &tp) |
                    flat_of(&o.layout, &fo, &to);
    if (!bad) {
        rc = fn(t, fy, fp, fo, (int)y.layout.shape[1], lane_of(P), P->user);
        if (to)
            copy_cols(&o.layout, to, 0);
    }
    free(ty);
    free(tp);
    free(to);
    return rc;
}

static int rhs_tramp(double t, ot_view y, ot_view p, ot_view_mut dydt, void *user)
{
    otw_problem *P = user;
    return call_eval(P, P->rhs, t, y, p, dydt);
}

static int jac_tramp(double t, ot_view y, ot_view p, ot_view_mut J, void *user)
{
    otw_problem *P = user;
    return call_eval(P, P->jac, t, y, p, J);
}

static int dfdp_tramp(double t, ot_view y, ot_view p, ot_view_mut d, void *user)
{
    otw_problem *P = user;
    return call_eval(P, P->dfdp, t, y, p, d);
}

static int out_tramp(double t, ot_view y, ot_view p, ot_view_mut o, void *user)
{
    otw_problem *P = user;
    return call_eval(P, P->out, t, y, p, o);
}

static int root_tramp(double t, ot_view y, ot_view p, ot_view_mut g, void *user)
{
    otw_problem *P = user;
    return call_eval(P, P->root, t, y, p, g);
}

static int init_tramp(ot_view p, ot_view_mut y0, void *user)
{
    otw_problem *P = user;
    double *fp, *fy, *tp, *ty;
    int rc = -1;
    if (!(flat_of(&p.layout, &fp, &tp) | flat_of(&y0.layout, &fy, &ty))) {
        rc = P->init(fp, fy, (int)y0.layout.shape[1], lane_of(P), P->user);
        if (ty)
            copy_cols(&y0.layout, ty, 0);
    }
    free(tp);
    free(ty);
    return rc;
}

/* The lane's views are compact [n, 1] and [np, 1] columns of the solver's. */
static int event_tramp(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                       void *user)
{
    otw_problem *P = user;
    return P->event(t, root, (int)lane, ot_view_mut_col_f64(y, 0, 0),
                    p.layout.shape[0] > 0 ? ot_view_mut_col_f64(p, 0, 0) : NULL, P->user);
}

/* Called after each lane (lanes mode) or block of lanes (lockstep in
 * blocks); with one thread they finish in order, so the next lane to be
 * solved, or the next block's first lane, is the number done. */
static void on_progress(int64_t done, int64_t total, void *user)
{
    (void)total;
    ((otw_problem *)user)->lane = (int)done;
}

/* ---- Status and memory -------------------------------------------------- */

OTW_API const char *otw_last_error(void) { return ot_last_error(); }
OTW_API const char *otw_status_name(int status) { return ot_status_name(status); }
OTW_API const char *otw_version(void) { return ot_version_string(); }

/* Bytes currently allocated by malloc: flat across solves unless something
 * leaks. */
OTW_API double otw_heap_in_use(void) { return (double)mallinfo().uordblks; }

OTW_API void *otw_malloc(int bytes) { return bytes > 0 ? malloc((size_t)bytes) : NULL; }
OTW_API void otw_free(void *ptr) { free(ptr); }

/* ---- Problem ------------------------------------------------------------ */

/* A new problem in *out (the caller frees it with otw_problem_free). */
OTW_API int otw_problem_new(otw_problem **out, int nstates, int nparams, otw_eval_fn rhs,
                            void *user)
{
    if (out == NULL)
        return ot_ode_new(NULL, nstates, nparams, NULL, NULL); /* sets the message */
    otw_problem *P = calloc(1, sizeof *P);
    if (P == NULL)
        return OT_ERR_NOMEM;
    int st = ot_ode_new(&P->ode, nstates, nparams, rhs ? rhs_tramp : NULL, P);
    if (st == OT_OK)
        st = ot_ode_set_threads(P->ode, 1);
    if (st == OT_OK)
        st = ot_ode_set_progress(P->ode, on_progress, P);
    if (st != OT_OK) {
        ot_ode_free(P->ode);
        free(P);
        return st;
    }
    P->rhs = rhs;
    P->user = user;
    *out = P;
    return OT_OK;
}

OTW_API void otw_problem_free(otw_problem *P)
{
    if (P == NULL)
        return;
    ot_ode_free(P->ode);
    free(P);
}

/* The problem's ot_ode, or NULL (the library then fails with its message). */
static ot_ode *ode_of(const otw_problem *P) { return P ? P->ode : NULL; }

/* The callback setters keep the function only once the library took the
 * trampoline, so a refused call leaves the problem as it was. */
OTW_API int otw_set_jac(otw_problem *P, otw_eval_fn jac)
{
    const int st = ot_ode_set_jac(ode_of(P), jac ? jac_tramp : NULL);
    if (st == OT_OK)
        P->jac = jac;
    return st;
}

OTW_API int otw_set_dfdp(otw_problem *P, otw_eval_fn dfdp)
{
    const int st = ot_ode_set_dfdp(ode_of(P), dfdp ? dfdp_tramp : NULL);
    if (st == OT_OK)
        P->dfdp = dfdp;
    return st;
}

OTW_API int otw_set_init(otw_problem *P, otw_init_fn init)
{
    const int st = ot_ode_set_init(ode_of(P), init ? init_tramp : NULL);
    if (st == OT_OK)
        P->init = init;
    return st;
}

OTW_API int otw_set_out(otw_problem *P, int nout, otw_eval_fn out)
{
    const int st = ot_ode_set_out(ode_of(P), nout, out ? out_tramp : NULL);
    if (st == OT_OK) {
        P->out = out;
        P->nout = out ? nout : 0;
    }
    return st;
}

OTW_API int otw_set_roots(otw_problem *P, int nroots, otw_eval_fn root)
{
    const int st = ot_ode_set_roots(ode_of(P), nroots, root ? root_tramp : NULL);
    if (st == OT_OK)
        P->root = root;
    return st;
}

/* nroots ints each (-1 falling, 0 both, 1 rising; 0 stop, 1 record, 2
 * handle), or NULL for the defaults. */
OTW_API int otw_set_root_directions(otw_problem *P, const int32_t *dirs)
{
    return ot_ode_set_root_directions(ode_of(P), (const int *)dirs);
}

OTW_API int otw_set_event_actions(otw_problem *P, const int32_t *actions)
{
    return ot_ode_set_event_actions(ode_of(P), (const int *)actions);
}

OTW_API int otw_set_event_handler(otw_problem *P, otw_event_fn event)
{
    const int st = ot_ode_set_event_handler(ode_of(P), event ? event_tramp : NULL);
    if (st == OT_OK)
        P->event = event;
    return st;
}

/* Per-lane output times: t_eval [nt, cols] column-major (cols > 1), else [nt]. */
OTW_API int otw_set_t_cols(otw_problem *P, int cols)
{
    if (P == NULL)
        return OT_ERR_ARG;
    P->t_cols = cols;
    return OT_OK;
}

OTW_API int otw_set_max_events(otw_problem *P, int v)
{
    return ot_ode_set_max_events(ode_of(P), v);
}

/* method: 1 BDF, 2 Adams (ot_method). */
OTW_API int otw_set_method(otw_problem *P, int method)
{
    return ot_ode_set_method(ode_of(P), (ot_method)method);
}

/* mode: 1 lanes, 2 lockstep (ot_mode). */
OTW_API int otw_set_mode(otw_problem *P, int mode)
{
    int st = ot_ode_set_mode(ode_of(P), (ot_mode)mode);
    if (st == OT_OK)
        P->lockstep = mode == OT_LOCKSTEP;
    return st;
}

OTW_API int otw_set_rtol(otw_problem *P, double v)
{
    return ot_ode_set_rtol(ode_of(P), v);
}
OTW_API int otw_set_atol(otw_problem *P, double v)
{
    return ot_ode_set_atol(ode_of(P), v);
}
OTW_API int otw_set_t0(otw_problem *P, double v) { return ot_ode_set_t0(ode_of(P), v); }

OTW_API int otw_set_first_step(otw_problem *P, double v)
{
    return ot_ode_set_first_step(ode_of(P), v);
}

OTW_API int otw_set_max_step(otw_problem *P, double v)
{
    return ot_ode_set_max_step(ode_of(P), v);
}

OTW_API int otw_set_max_steps(otw_problem *P, int v)
{
    return ot_ode_set_max_steps(ode_of(P), v);
}

OTW_API int otw_set_max_order(otw_problem *P, int v)
{
    return ot_ode_set_max_order(ode_of(P), v);
}

OTW_API int otw_set_sens_initial(otw_problem *P, int on)
{
    return ot_ode_set_sens_initial(ode_of(P), on);
}

OTW_API int otw_set_stability_limit_detection(otw_problem *P, int on)
{
    return ot_ode_set_stability_limit_detection(ode_of(P), on);
}

OTW_API int otw_set_lockstep_block(otw_problem *P, int v)
{
    return ot_ode_set_lockstep_block(ode_of(P), v);
}

OTW_API int otw_set_sens_tolerances(otw_problem *P, double rtol, double atol)
{
    return ot_ode_set_sens_tolerances(ode_of(P), rtol, atol);
}

/* One absolute tolerance per state: atol[nstates]. */
OTW_API int otw_set_atol_vector(otw_problem *P, const double *atol)
{
    const int64_t n = ot_ode_nstates(ode_of(P));
    ot_view v = ot_view_absent();
    const int st =
        n > 0 ? ot_view_make(&v, atol, OT_F64, (ot_device){OT_CPU, 0}, 1, &n, NULL)
              : OT_OK;
    return st == OT_OK ? ot_ode_set_atol_vector(ode_of(P), v) : st;
}

/* ---- Solves ------------------------------------------------------------- */

/* A compact [rows, cols] input view over data; absent when data is NULL. */
static int input_view(ot_view *v, const double *data, int rows, int cols)
{
    if (data == NULL) {
        *v = ot_view_absent();
        return OT_OK;
    }
    const int64_t shape[2] = {rows, cols};
    return ot_view_make(v, data, OT_F64, (ot_device){OT_CPU, 0}, 2, shape, NULL);
}

enum { SOLVE_DENSE, SOLVE_STEPS, SOLVE_SENS };

static int run(int kind, ot_solution **out, otw_problem *P, const double *y0, int y0_cols,
               const double *params, int p_cols, const double *t_eval, int nt,
               double final_time)
{
    ot_view y0v = ot_view_absent(), pv = ot_view_absent(), tv = ot_view_absent();
    ot_ode *ode = ode_of(P);
    if (ode != NULL) { /* else the library refuses the NULL ode, with its message */
        const int n = (int)ot_ode_nstates(ode), np = (int)ot_ode_nparams(ode);
        int st = input_view(&y0v, y0, n, y0_cols);
        if (st == OT_OK)
            st = input_view(&pv, params, np, p_cols);
        if (st == OT_OK && kind != SOLVE_STEPS) {
            const int64_t shape[2] = {nt, P->t_cols};
            st = ot_view_make(&tv, t_eval, OT_F64, (ot_device){OT_CPU, 0},
                              P->t_cols > 1 ? 2 : 1, shape, NULL);
        }
        if (st != OT_OK)
            return st;
        P->lane = 0;
    }
    switch (kind) {
    case SOLVE_DENSE:
        return ot_solve_dense(ode, y0v, pv, tv, out);
    case SOLVE_STEPS:
        return ot_solve(ode, y0v, pv, final_time, out);
    default:
        return ot_solve_fwd_sens(ode, y0v, pv, tv, out);
    }
}

/* y0 [nstates, y0_cols] or NULL (init computes it), params [nparams, p_cols]
 * or NULL (nparams 0), t_eval [nt]; the solution in *out on OT_OK and
 * OT_ERR_LANES_FAILED (free it with otw_solution_free). */
OTW_API int otw_solve_dense(ot_solution **out, otw_problem *P, const double *y0,
                            int y0_cols, const double *params, int p_cols,
                            const double *t_eval, int nt)
{
    return run(SOLVE_DENSE, out, P, y0, y0_cols, params, p_cols, t_eval, nt, 0);
}

/* As otw_solve_dense, with per-lane starts t0s [n_t0] (NULL: none) and
 * scheduled stops [nstops, stop_cols] (NULL: none), NaN-padded. */
OTW_API int otw_solve_dense_with(ot_solution **out, otw_problem *P, const double *y0,
                                 int y0_cols, const double *params, int p_cols,
                                 const double *t_eval, int nt, const double *t0s,
                                 int n_t0, const double *stops, int nstops, int stop_cols)
{
    ot_ode *ode = ode_of(P);
    if (ode == NULL)
        return run(SOLVE_DENSE, out, P, y0, y0_cols, params, p_cols, t_eval, nt, 0);
    const int n = (int)ot_ode_nstates(ode), np = (int)ot_ode_nparams(ode);
    ot_solve_inputs in =
        ot_solve_inputs_make(ot_view_absent(), ot_view_absent(), ot_view_absent());
    const int64_t tshape[2] = {nt, P->t_cols}, len = n_t0,
                  sshape[2] = {nstops, stop_cols};
    const ot_device cpu = {OT_CPU, 0};
    int st = input_view(&in.y0, y0, n, y0_cols);
    if (st == OT_OK)
        st = input_view(&in.params, params, np, p_cols);
    if (st == OT_OK)
        st = ot_view_make(&in.t_eval, t_eval, OT_F64, cpu, P->t_cols > 1 ? 2 : 1, tshape,
                          NULL);
    if (st == OT_OK && t0s)
        st = ot_view_make(&in.t0, t0s, OT_F64, cpu, 1, &len, NULL);
    if (st == OT_OK && stops)
        st = ot_view_make(&in.stops, stops, OT_F64, cpu, stop_cols > 1 ? 2 : 1, sshape,
                          NULL);
    if (st != OT_OK)
        return st;
    P->lane = 0;
    return ot_solve_dense_with(ode, &in, out);
}

OTW_API int otw_solve(ot_solution **out, otw_problem *P, const double *y0, int y0_cols,
                      const double *params, int p_cols, double final_time)
{
    return run(SOLVE_STEPS, out, P, y0, y0_cols, params, p_cols, NULL, 0, final_time);
}

OTW_API int otw_solve_fwd_sens(ot_solution **out, otw_problem *P, const double *y0,
                               int y0_cols, const double *params, int p_cols,
                               const double *t_eval, int nt)
{
    return run(SOLVE_SENS, out, P, y0, y0_cols, params, p_cols, t_eval, nt, 0);
}

/* The library's loss views are compact: flat arrays as they are. */
static int loss_tramp(double t, int64_t i, int64_t lane, ot_view y, ot_view p,
                      ot_view_mut g, ot_view_mut dgdy, ot_view_mut dgdp, void *user)
{
    otw_problem *P = user;
    return P->loss(t, (int)i, y.layout.data, p.layout.data, g.layout.data,
                   dgdy.layout.data, dgdp.layout.data, 1, (int)lane, P->user);
}

static int integrand_tramp(double t, int64_t lane, ot_view y, ot_view p, ot_view_mut q,
                           ot_view_mut dqdy, ot_view_mut dqdp, void *user)
{
    otw_problem *P = user;
    return P->integrand(t, y.layout.data, p.layout.data, q.layout.data, dqdy.layout.data,
                        dqdp.layout.data, (int)lane, P->user);
}

/* As otw_solve_dense, plus the loss and its gradients by the adjoint
 * (ot_solve_adjoint): a sum of squares against data [rows, nt, data_lanes]
 * (rows: nout with out, else nstates; data_lanes 1: every lane) with
 * weights of the same shape (NULL: 1), or, with data NULL, the loss
 * function loss (or neither); plus the integral of integrand (NULL: none). */
OTW_API int otw_solve_adjoint(ot_solution **out, otw_problem *P, const double *y0,
                              int y0_cols, const double *params, int p_cols,
                              const double *t_eval, int nt, const double *data,
                              int data_lanes, const double *weights, otw_loss_fn loss,
                              otw_integrand_fn integrand)
{
    ot_ode *ode = ode_of(P);
    ot_view y0v = ot_view_absent(), pv = ot_view_absent(), tv = ot_view_absent();
    ot_loss l = ot_loss_custom(loss ? loss_tramp : NULL, P);
    if (ode != NULL) {
        const int n = (int)ot_ode_nstates(ode), np = (int)ot_ode_nparams(ode);
        const int64_t tshape[2] = {nt, P->t_cols},
                      dshape[3] = {P->nout ? P->nout : n, nt, data_lanes};
        const ot_device cpu = {OT_CPU, 0};
        int st = input_view(&y0v, y0, n, y0_cols);
        if (st == OT_OK)
            st = input_view(&pv, params, np, p_cols);
        if (st == OT_OK)
            st = ot_view_make(&tv, t_eval, OT_F64, cpu, P->t_cols > 1 ? 2 : 1, tshape,
                              NULL);
        if (st == OT_OK && data) {
            l = ot_loss_squares(ot_view_absent(), ot_view_absent());
            st = ot_view_make(&l.data, data, OT_F64, cpu, data_lanes > 1 ? 3 : 2, dshape,
                              NULL);
            if (st == OT_OK && weights)
                st = ot_view_make(&l.weights, weights, OT_F64, cpu,
                                  data_lanes > 1 ? 3 : 2, dshape, NULL);
        }
        if (st != OT_OK)
            return st;
        P->lane = 0;
        P->loss = loss;
        P->integrand = integrand;
        l.integrand = integrand ? integrand_tramp : NULL;
    }
    return ot_solve_adjoint(ode, y0v, pv, tv, &l, out);
}

/* Lane b's checkpoint bytes (ot_solution_lane_adjoint_bytes). */
OTW_API double otw_adjoint_bytes(const ot_solution *s, int b)
{
    return (double)ot_solution_lane_adjoint_bytes(s, b);
}

/* ---- Solution ----------------------------------------------------------- */

OTW_API void otw_solution_free(ot_solution *s) { ot_solution_free(s); }
OTW_API int otw_solution_nbatch(const ot_solution *s)
{
    return (int)ot_solution_nbatch(s);
}
OTW_API int otw_solution_nsens(const ot_solution *s) { return (int)ot_solution_nsens(s); }

/* Lane b's recorded events (0 without events). */
OTW_API int otw_event_count(const ot_solution *s, int b)
{
    return (int)ot_solution_lane_event_count(s, b);
}

/* Output tensor `which` (0 ts, 1 ys, 2 + j sens(j), 100 + k event tensor k
 * (ot_event_tensor), 200 + k gradient tensor k (ot_grad_tensor)): returns
 * its data and
 * fills info[8] with dtype, ndim, shape[3] and strides[3] in elements; NULL
 * (and info untouched) when there is no such tensor or info is NULL. */
OTW_API const void *otw_tensor(const ot_solution *s, int which, int32_t *info)
{
    const ot_tensor *t = which >= 200   ? ot_solution_grad_tensor(s, which - 200)
                         : which >= 100 ? ot_solution_event_tensor(s, which - 100)
                         : which == 0   ? ot_solution_ts(s)
                         : which == 1   ? ot_solution_ys(s)
                                        : ot_solution_sens(s, (int64_t)which - 2);
    if (t == NULL || info == NULL)
        return NULL;
    const ot_layout *l = ot_tensor_layout(t);
    const int64_t item = (int64_t)ot_dtype_size(l->dtype);
    info[0] = l->dtype;
    info[1] = l->ndim;
    for (int a = 0; a < OT_MAX_NDIM; a++) {
        info[2 + a] = (int32_t)l->shape[a];
        info[5 + a] = (int32_t)(l->strides[a] / item);
    }
    return l->data;
}

/* Per-lane results for all nbatch lanes at once: status, count, root index
 * and time, and stats[9 * b + i] = steps, rhs_evals, jac_rhs_evals,
 * jac_evals, lin_setups, err_test_fails, nonlin_iters, nonlin_fails,
 * final_time. @return the number of lanes filled; 0 (nothing written) when
 * s or an array is NULL. */
OTW_API int otw_lanes(const ot_solution *s, int32_t *status, int32_t *count,
                      int32_t *root_index, double *root_time, double *stats)
{
    if (!status || !count || !root_index || !root_time || !stats)
        return 0;
    const int64_t nb = ot_solution_nbatch(s);
    for (int64_t b = 0; b < nb; b++) {
        ot_lane_stats ls;
        int index = -1;
        double time = 0;
        status[b] = ot_solution_lane_status(s, b);
        count[b] = (int32_t)ot_solution_lane_count(s, b);
        ot_solution_lane_root(s, b, &index, &time);
        root_index[b] = index;
        root_time[b] = time;
        memset(&ls, 0, sizeof ls);
        ot_solution_lane_stats(s, b, &ls);
        double *o = stats + 9 * b;
        o[0] = (double)ls.steps;
        o[1] = (double)ls.rhs_evals;
        o[2] = (double)ls.jac_rhs_evals;
        o[3] = (double)ls.jac_evals;
        o[4] = (double)ls.lin_setups;
        o[5] = (double)ls.err_test_fails;
        o[6] = (double)ls.nonlin_iters;
        o[7] = (double)ls.nonlin_fails;
        o[8] = ls.final_time;
    }
    return (int)nb;
}

OTW_API const char *otw_lane_message(const ot_solution *s, int b)
{
    return ot_solution_lane_message(s, b);
}

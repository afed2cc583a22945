/* odetensor for JavaScript: a C API over the library with int, double and
 * pointer arguments only (no struct crosses the JS boundary by value), built
 * into the wasm module by `make wasm` and called by ../index.mjs.
 *
 * Callbacks are plain C function pointers (from JS: Module.addFunction):
 *   int eval(double t, const double *y, const double *p, double *out,
 *            int k, int lane, void *user)      rhs, jac, dfdp, out, root
 *   int init(const double *p, double *y0, int k, int lane, void *user)
 * y [n, k], p [np, k], out [rows, k] (jac: [n, n, k]; dfdp: [n, np, k]) are
 * compact column-major f64 arrays valid only during the call; k = 1 in lanes
 * mode and k = the block's lanes in lockstep mode. lane is the library's
 * ot_callback_lane(): the lane in lanes mode, the block's first lane in
 * lockstep (column b is lane + b), right for any block size and thread
 * count. The return codes are odetensor's: 0 ok, > 0 retry with a smaller
 * step, < 0 stop the lane.
 *
 * Lanes run one after another on the calling thread (threads = 1): wasm here
 * has no threads. The shim uses the public headers only.
 *
 * Every entry point answers NULL or out-of-range arguments with a status (or
 * NULL / 0) instead of touching memory: in wasm, address 0 is ordinary
 * memory, so a NULL dereference would corrupt the module rather than trap.
 * A NULL problem goes on to the library as a NULL ot_ode, whose message
 * ("ot_ode_set_rtol: ode is NULL") becomes the status's message. */
#include "shim.h"

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

/* The lane index callbacks get: the first lane of their views. */
static int lane_of(void) { return (int)ot_callback_lane(); }

static int call_eval(otw_problem *P, otw_eval_fn fn, double t, ot_view y, ot_view p,
                     ot_view_mut o)
{
    double *fy, *fp, *fo, *ty, *tp, *to;
    int rc = -1;
    const int bad = flat_of(&y.layout, &fy, &ty) | flat_of(&p.layout, &fp, &tp) |
                    flat_of(&o.layout, &fo, &to);
    if (!bad) {
        rc = fn(t, fy, fp, fo, (int)y.layout.shape[1], lane_of(), P->user);
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

static int rhs_explicit_tramp(double t, ot_view y, ot_view p, ot_view_mut dydt,
                              void *user)
{
    otw_problem *P = user;
    return call_eval(P, P->rhs_explicit, t, y, p, dydt);
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
        rc = P->init(fp, fy, (int)y0.layout.shape[1], lane_of(), P->user);
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

/* The views are compact: y [n, 1], p [np, 1], dz [n + np, n + np], dzdt. */
static int event_jac_tramp(double t, int root, int64_t lane, ot_view y, ot_view p,
                           ot_view_mut dz, ot_view_mut dzdt, void *user)
{
    otw_problem *P = user;
    return P->event_jac(t, root, (int)lane, ot_view_col_f64(y, 0, 0),
                        p.layout.shape[0] > 0 ? ot_view_col_f64(p, 0, 0) : NULL,
                        ot_view_mut_col_f64(dz, 0, 0), ot_view_mut_col_f64(dzdt, 0, 0),
                        P->user);
}

/* JS's onProgress, whose nonzero return cancels the solve. */
static int on_progress(int64_t done, int64_t total, void *user)
{
    otw_problem *P = user;
    return P->progress ? P->progress((double)done, (double)total, P->user) : 0;
}

OTW_API int otw_set_progress(otw_problem *P, otw_progress_fn fn)
{
    if (P == NULL)
        return ot_ode_set_progress(NULL, NULL, NULL); /* sets the message */
    P->progress = fn;
    return OT_OK;
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

/* The callback setters keep the function only once the library took the
 * trampoline, so a refused call leaves the problem as it was. */
OTW_API int otw_set_jac(otw_problem *P, otw_eval_fn jac)
{
    const int st = ot_ode_set_jac(ode_of(P), jac ? jac_tramp : NULL);
    if (st == OT_OK)
        P->jac = jac;
    return st;
}

/* The explicit part of an IMEX split (the rhs is then the implicit part). */
OTW_API int otw_set_rhs_explicit(otw_problem *P, otw_eval_fn fe)
{
    const int st = ot_ode_set_rhs_explicit(ode_of(P), fe ? rhs_explicit_tramp : NULL);
    if (st == OT_OK)
        P->rhs_explicit = fe;
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

OTW_API int otw_set_event_jac(otw_problem *P, otw_event_jac_fn jac)
{
    const int st = ot_ode_set_event_jac(ode_of(P), jac ? event_jac_tramp : NULL);
    if (st == OT_OK)
        P->event_jac = jac;
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

/* before: 1 outputs at a stop's time show the state before it, 0 after. */
OTW_API int otw_set_outputs_before_stops(otw_problem *P, int before)
{
    return ot_ode_set_outputs_before_stops(ode_of(P), before);
}

/* autonomous: 1 rhs and jac do not read t (the kernel methods' groups). */
OTW_API int otw_set_autonomous(otw_problem *P, int autonomous)
{
    return ot_ode_set_autonomous(ode_of(P), autonomous);
}

/* The kernel methods' lane group (0: chosen). */
OTW_API int otw_set_lane_group(otw_problem *P, int lanes)
{
    return ot_ode_set_lane_group(ode_of(P), lanes);
}

/* method: an ot_method (1 BDF, 2 Adams, 3-11 ARKODE's Runge-Kutta pairs,
 * 12-16 the kernel methods). */
OTW_API int otw_set_method(otw_problem *P, int method)
{
    return ot_ode_set_method(ode_of(P), (ot_method)method);
}

/* mode: 1 lanes, 2 lockstep (ot_mode). */
OTW_API int otw_set_mode(otw_problem *P, int mode)
{
    return ot_ode_set_mode(ode_of(P), (ot_mode)mode);
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

OTW_API int otw_set_linear_solver(otw_problem *P, int linsol)
{
    return ot_ode_set_linear_solver(ode_of(P), (ot_linsol)linsol);
}

OTW_API int otw_set_bandwidths(otw_problem *P, int mupper, int mlower)
{
    return ot_ode_set_bandwidths(ode_of(P), mupper, mlower);
}

OTW_API int otw_set_krylov_dim(otw_problem *P, int maxl)
{
    return ot_ode_set_krylov_dim(ode_of(P), maxl);
}

/* The JS preconditioner gets flat [n] arrays (lanes mode: one lane a
 * call); it recomputes its Jacobian data exactly when jok is 0. */
static int psetup_tramp(double t, ot_view y, ot_view p, double gamma, int jok, int *jcur,
                        ot_view_mut work, void *user)
{
    otw_problem *P = user;
    *jcur = !jok;
    return P->psetup(t, ot_view_col_f64(y, 0, 0),
                     p.layout.shape[0] ? ot_view_col_f64(p, 0, 0) : NULL, gamma, jok,
                     work.layout.shape[0] ? ot_view_mut_col_f64(work, 0, 0) : NULL,
                     lane_of(), P->user);
}

static int psolve_tramp(double t, ot_view y, ot_view p, double gamma, ot_view r,
                        ot_view_mut z, ot_view_mut work, void *user)
{
    otw_problem *P = user;
    return P->psolve(t, ot_view_col_f64(y, 0, 0),
                     p.layout.shape[0] ? ot_view_col_f64(p, 0, 0) : NULL, gamma,
                     ot_view_col_f64(r, 0, 0), ot_view_mut_col_f64(z, 0, 0),
                     work.layout.shape[0] ? ot_view_mut_col_f64(work, 0, 0) : NULL,
                     lane_of(), P->user);
}

OTW_API int otw_set_preconditioner(otw_problem *P, otw_psetup_fn setup,
                                   otw_psolve_fn solve, int nwork)
{
    const int st = ot_ode_set_preconditioner(ode_of(P), setup ? psetup_tramp : NULL,
                                             solve ? psolve_tramp : NULL, nwork);
    if (st == OT_OK) {
        P->psetup = setup;
        P->psolve = solve;
    }
    return st;
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

OTW_API int otw_set_adjoint_steps(otw_problem *P, int v)
{
    return ot_ode_set_adjoint_steps(ode_of(P), v);
}

OTW_API int otw_set_adjoint_tolerances(otw_problem *P, double rtol, double atol)
{
    return ot_ode_set_adjoint_tolerances(ode_of(P), rtol, atol);
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

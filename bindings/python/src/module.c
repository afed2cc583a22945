/* odetensor._core: the entry solve(spec, kind, ...), which builds an
 * ot_ode for the call from the problem (odetensor.Problem, whose attributes
 * it reads), solves without the GIL and hands back the solution's tensors
 * and per-lane arrays. A problem per call makes concurrent solves of one
 * Problem independent: each has its own callbacks' state. The call's
 * problem, the released solve and the result are shared with dosing.c's
 * entries (core.h). */
#define PY_ARRAY_UNIQUE_SYMBOL otpy_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "core.h"

#include <numpy/arrayobject.h>
#include <pthread.h>
#include <pythread.h>
#include <time.h>
#include <stdarg.h>
#include <string.h>

PyObject *otpy_error;

PyObject *otpy_raise(int status)
{
    PyObject *v = Py_BuildValue("(sis)", ot_status_name(status), status, ot_last_error());
    if (v != NULL) {
        PyErr_SetObject(otpy_error, v);
        Py_DECREF(v);
    }
    return NULL;
}

PyObject *otpy_raise_msg(int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ot_set_error(status, "%s", msg);
    return otpy_raise(status);
}

/* ---- Reading the problem --------------------------------------------------- */

/* spec.name as a new reference; NULL (no exception) for None. */
static PyObject *attr(PyObject *spec, const char *name, int *bad)
{
    PyObject *v = PyObject_GetAttrString(spec, name);
    if (v == NULL) {
        *bad = 1;
        return NULL;
    }
    if (v == Py_None) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

static int attr_int64(PyObject *spec, const char *name, int64_t *out, int *bad)
{
    PyObject *v = attr(spec, name, bad);
    if (v == NULL)
        return 0;
    const long long x = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred()) {
        *bad = 1;
        return 0;
    }
    *out = (int64_t)x;
    return 1;
}

static int attr_double(PyObject *spec, const char *name, double *out, int *bad)
{
    PyObject *v = attr(spec, name, bad);
    if (v == NULL)
        return 0;
    const double x = PyFloat_AsDouble(v);
    Py_DECREF(v);
    if (x == -1.0 && PyErr_Occurred()) {
        *bad = 1;
        return 0;
    }
    *out = x;
    return 1;
}

/* A compiled callback's address: spec.name holds an int (0: none). */
static void *attr_address(PyObject *spec, const char *name, int *bad)
{
    PyObject *v = attr(spec, name, bad);
    if (v == NULL)
        return NULL;
    void *p = PyLong_AsVoidPtr(v);
    Py_DECREF(v);
    if (p == NULL && PyErr_Occurred())
        *bad = 1;
    return p;
}

static int set_ints(ot_ode *ode, PyObject *spec, const char *name,
                    int (*setter)(ot_ode *, const int *), int64_t count, int *bad)
{
    PyObject *v = attr(spec, name, bad);
    if (v == NULL)
        return OT_OK;
    int *vals = PyMem_Calloc((size_t)(count > 0 ? count : 1), sizeof *vals);
    PyObject *seq = vals ? PySequence_Fast(v, name) : NULL;
    int st = OT_OK;
    if (seq == NULL) {
        *bad = 1;
    } else if (PySequence_Fast_GET_SIZE(seq) != count) {
        st = ot_set_error(OT_ERR_SHAPE, "%s: %zd entries; needs nroots = %lld", name,
                          PySequence_Fast_GET_SIZE(seq), (long long)count);
    } else {
        for (int64_t i = 0; i < count; i++)
            vals[i] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (PyErr_Occurred())
            *bad = 1;
        else
            st = setter(ode, vals);
    }
    Py_XDECREF(seq);
    PyMem_Free(vals);
    Py_DECREF(v);
    return st;
}

/* A Python exception is set (no status of the library's list). */
#define OTPY_PYERR (-100000)

/* Every option of the problem onto ode; OT_OK, a setter's status (its
 * message set), or OTPY_PYERR. */
static int configure(ot_ode *ode, PyObject *spec, otpy_solve *s, otpy_input *atol_keep)
{
    int bad = 0, st = OT_OK;
    int64_t i;
    double x, y;
#define INT_OPT(name, call)                                                              \
    if (st == OT_OK && !bad && attr_int64(spec, name, &i, &bad))                         \
    st = (call)
#define DBL_OPT(name, call)                                                              \
    if (st == OT_OK && !bad && attr_double(spec, name, &x, &bad))                        \
    st = (call)
    INT_OPT("method", ot_ode_set_method(ode, (ot_method)i));
    INT_OPT("linear_solver", ot_ode_set_linear_solver(ode, (ot_linsol)i));
    INT_OPT("krylov_dim", ot_ode_set_krylov_dim(ode, (int)i));
    INT_OPT("mode", ot_ode_set_mode(ode, (ot_mode)i));
    INT_OPT("threads", ot_ode_set_threads(ode, (int)i));
    INT_OPT("lockstep_block", ot_ode_set_lockstep_block(ode, i));
    INT_OPT("max_steps", ot_ode_set_max_steps(ode, i));
    INT_OPT("max_order", ot_ode_set_max_order(ode, (int)i));
    INT_OPT("stability_limit_detection",
            ot_ode_set_stability_limit_detection(ode, (int)i));
    INT_OPT("max_events", ot_ode_set_max_events(ode, i));
    INT_OPT("outputs_before_stops", ot_ode_set_outputs_before_stops(ode, (int)i));
    INT_OPT("autonomous", ot_ode_set_autonomous(ode, (int)i));
    INT_OPT("lane_group", ot_ode_set_lane_group(ode, i));
    INT_OPT("sens_initial", ot_ode_set_sens_initial(ode, (int)i));
    INT_OPT("adjoint_max_steps", ot_ode_set_adjoint_steps(ode, i));
    INT_OPT("output_dtype", ot_ode_set_output_dtype(ode, (ot_dtype)i));
    DBL_OPT("rtol", ot_ode_set_rtol(ode, x));
    DBL_OPT("atol", ot_ode_set_atol(ode, x));
    DBL_OPT("t0", ot_ode_set_t0(ode, x));
    DBL_OPT("first_step", ot_ode_set_first_step(ode, x));
    DBL_OPT("max_step", ot_ode_set_max_step(ode, x));
    int64_t mu = 0, ml = 0;
    if (st == OT_OK && !bad && attr_int64(spec, "mupper", &mu, &bad) &&
        attr_int64(spec, "mlower", &ml, &bad))
        st = ot_ode_set_bandwidths(ode, mu, ml);
    if (st == OT_OK && !bad && attr_double(spec, "sens_rtol", &x, &bad) &&
        attr_double(spec, "sens_atol", &y, &bad))
        st = ot_ode_set_sens_tolerances(ode, x, y);
    if (st == OT_OK && !bad && attr_double(spec, "adjoint_rtol", &x, &bad) &&
        attr_double(spec, "adjoint_atol", &y, &bad))
        st = ot_ode_set_adjoint_tolerances(ode, x, y);
    if (st == OT_OK && !bad) {
        PyObject *av = attr(spec, "atol_vector", &bad);
        ot_view v;
        if (av != NULL) {
            if (otpy_input_view(av, "atol", &v, atol_keep) != 0)
                bad = 1;
            else
                st = ot_ode_set_atol_vector(ode, v);
            Py_DECREF(av);
        }
    }
#undef INT_OPT
#undef DBL_OPT
    if (st == OT_OK && !bad && otpy_set_callbacks(ode, s) != 0)
        return OTPY_PYERR;
    /* after the callbacks: the directions and actions are the roots' */
    if (st == OT_OK && !bad)
        st = set_ints(ode, spec, "root_directions", ot_ode_set_root_directions, s->nroots,
                      &bad);
    if (st == OT_OK && !bad)
        st = set_ints(ode, spec, "event_actions", ot_ode_set_event_actions, s->nroots,
                      &bad);
    return bad ? OTPY_PYERR : st;
}

static void state_clear(otpy_solve *s)
{
    PyObject **refs[] = {&s->rhs,       &s->rhs_explicit, &s->jac,    &s->init,
                         &s->out,       &s->root,         &s->event,  &s->dfdp,
                         &s->progress,  &s->psetup,       &s->psolve, &s->loss,
                         &s->integrand, &s->errors,       &s->batch,  &s->interrupt,
                         &s->event_jac};
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
        Py_CLEAR(*refs[i]);
}

int otpy_call_open(otpy_call *c, PyObject *spec)
{
    memset(c, 0, sizeof *c);
    otpy_solve *s = &c->s;
    int bad = 0;
    int64_t n = 0, np = 0;
    attr_int64(spec, "nstates", &n, &bad);
    attr_int64(spec, "nparams", &np, &bad);
    attr_int64(spec, "nout", &s->nout, &bad);
    attr_int64(spec, "nroots", &s->nroots, &bad);
    s->n = n, s->np = np;
    s->rhs = attr(spec, "rhs", &bad);
    s->rhs_explicit = attr(spec, "rhs_explicit", &bad);
    s->jac = attr(spec, "jac", &bad);
    s->init = attr(spec, "init", &bad);
    s->out = attr(spec, "out", &bad);
    s->root = attr(spec, "roots", &bad);
    s->event = attr(spec, "on_event", &bad);
    s->event_jac = attr(spec, "event_jac", &bad);
    s->dfdp = attr(spec, "dfdp", &bad);
    s->progress = attr(spec, "progress", &bad);
    s->psetup = attr(spec, "precondition_setup", &bad);
    s->psolve = attr(spec, "precondition_solve", &bad);
    attr_int64(spec, "nwork", &s->nwork, &bad);
    s->loss = attr(spec, "loss", &bad);
    s->integrand = attr(spec, "integrand", &bad);
    s->c_rhs = attr_address(spec, "c_rhs", &bad);
    s->c_jac = attr_address(spec, "c_jac", &bad);
    s->c_user = attr_address(spec, "c_user", &bad);
    s->c_kmodel = attr_address(spec, "c_kernel_model", &bad);
    s->errors = PyDict_New();
    if (bad || s->errors == NULL)
        return -1;
    int st = ot_ode_new(&c->ode, n, np, otpy_rhs_fn(s), s);
    if (st == OT_OK)
        st = configure(c->ode, spec, s, &c->atol);
    if (st != OT_OK && st != OTPY_PYERR)
        otpy_raise(st);
    return st == OT_OK ? 0 : -1;
}

void otpy_call_close(otpy_call *c)
{
    otpy_input_release(&c->atol);
    ot_ode_free(c->ode);
    c->ode = NULL;
    state_clear(&c->s);
}

ot_loss otpy_loss_of(otpy_solve *s, ot_view data, ot_view weights)
{
    ot_loss l =
        s->loss ? ot_loss_custom(otpy_loss_fn(), s) : ot_loss_squares(data, weights);
    l.user = s; /* the integrand's too */
    if (s->integrand)
        l.integrand = otpy_integrand_fn();
    return l;
}

/* ---- Running it ------------------------------------------------------------ */

enum { K_DENSE, K_STEPS, K_SENS, K_ADJ, K_WITH, K_SENS_WITH, K_ADJ_WITH };

static void run_solve(otpy_run *r)
{
    switch (r->call != NULL ? -1 : r->kind) {
    case -1: /* another file's solve (dosing.c) */
        r->status = r->call(r);
        break;
    case K_STEPS:
        r->status = ot_solve(r->ode, r->in.y0, r->in.params, r->final_time, &r->sol);
        break;
    case K_SENS:
        r->status = ot_solve_fwd_sens_opts(r->ode, r->in.y0, r->in.params, r->in.t_eval,
                                           &r->opts, &r->sol);
        break;
    case K_ADJ:
        r->status = ot_solve_adjoint_opts(r->ode, r->in.y0, r->in.params, r->in.t_eval,
                                          &r->loss, &r->opts, &r->sol);
        break;
    case K_WITH:
        r->status = ot_solve_dense_with(r->ode, &r->in, &r->sol);
        break;
    case K_SENS_WITH:
        r->status = ot_solve_fwd_sens_with(r->ode, &r->in, &r->sol);
        break;
    case K_ADJ_WITH:
        r->status = ot_solve_adjoint_with(r->ode, &r->in, &r->loss, &r->sol);
        break;
    default:
        r->status = ot_solve_dense_opts(r->ode, r->in.y0, r->in.params, r->in.t_eval,
                                        &r->opts, &r->sol);
    }
    snprintf(r->message, sizeof r->message, "%s", ot_last_error());
}

static void *solve_thread(void *arg)
{
    otpy_run *r = arg;
    run_solve(r);
    pthread_mutex_lock(&r->lock);
    r->done = 1;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

static unsigned long main_thread; /* the interpreter's (module init runs there) */

/* Solves without the GIL. On the main thread the solve runs on a thread of
 * its own while this one wakes every 50 ms to let Python see Ctrl-C, which
 * cancels the solve (its lanes keep what they reached). */
void otpy_solve_released(otpy_run *r, otpy_solve *s)
{
    PyThreadState *ts = NULL;
    pthread_t tid;
    int started = 0;
    if (PyThread_get_thread_ident() == main_thread &&
        pthread_mutex_init(&r->lock, NULL) == 0) {
        if (pthread_cond_init(&r->cond, NULL) == 0) {
            r->done = 0;
            started = pthread_create(&tid, NULL, solve_thread, r) == 0;
            if (!started)
                pthread_cond_destroy(&r->cond);
        }
        if (!started)
            pthread_mutex_destroy(&r->lock);
    }
    if (!started) {
        ts = PyEval_SaveThread();
        run_solve(r);
        PyEval_RestoreThread(ts);
        return;
    }
    for (;;) {
        ts = PyEval_SaveThread();
        pthread_mutex_lock(&r->lock);
        if (!r->done) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 50 * 1000 * 1000;
            if (until.tv_nsec >= 1000000000L)
                until.tv_sec++, until.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&r->cond, &r->lock, &until);
        }
        const int finished = r->done;
        pthread_mutex_unlock(&r->lock);
        PyEval_RestoreThread(ts);
        if (finished)
            break;
        if (PyErr_CheckSignals() != 0) { /* Ctrl-C (or a signal handler raised) */
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_NormalizeException(&type, &value, &tb);
            atomic_store(&s->cancel, 1);
            if (s->interrupt == NULL) {
                s->interrupt = value;
                value = NULL;
            }
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
        }
    }
    ts = PyEval_SaveThread();
    pthread_join(tid, NULL);
    PyEval_RestoreThread(ts);
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->lock);
}

/* ---- The result ------------------------------------------------------------- */

static PyObject *lanes_of(const ot_solution *sol)
{
    const int64_t nb = ot_solution_nbatch(sol);
    static const char *keys[] = {"status",    "message",     "count", "root_index",
                                 "root_time", "event_count", "stats", "adjoint_bytes"};
    PyObject *lists[8] = {NULL};
    for (int i = 0; i < 8; i++)
        lists[i] = PyList_New((Py_ssize_t)nb);
    PyObject *d = PyDict_New();
    int ok = d != NULL;
    for (int i = 0; i < 8; i++)
        ok = ok && lists[i] != NULL;
    for (int64_t b = 0; ok && b < nb; b++) {
        int ri = -1;
        double rt = 0.0;
        ot_lane_stats st;
        memset(&st, 0, sizeof st);
        ot_solution_lane_root(sol, b, &ri, &rt);
        ot_solution_lane_stats(sol, b, &st);
        PyObject *items[8] = {
            PyLong_FromLong(ot_solution_lane_status(sol, b)),
            PyUnicode_DecodeUTF8(ot_solution_lane_message(sol, b),
                                 (Py_ssize_t)strlen(ot_solution_lane_message(sol, b)),
                                 "replace"),
            PyLong_FromLongLong((long long)ot_solution_lane_count(sol, b)),
            PyLong_FromLong(ri),
            PyFloat_FromDouble(rt),
            PyLong_FromLongLong((long long)ot_solution_lane_event_count(sol, b)),
            Py_BuildValue("(LLLLLLLLLdLL)", (long long)st.steps, (long long)st.rhs_evals,
                          (long long)st.jac_rhs_evals, (long long)st.jac_evals,
                          (long long)st.lin_setups, (long long)st.err_test_fails,
                          (long long)st.nonlin_iters, (long long)st.nonlin_fails,
                          (long long)st.lin_iters, st.final_time, (long long)st.adj_steps,
                          (long long)st.adj_max_steps),
            PyLong_FromLongLong((long long)ot_solution_lane_adjoint_bytes(sol, b))};
        for (int i = 0; i < 8; i++) {
            if (items[i] == NULL)
                ok = 0;
            else
                PyList_SET_ITEM(lists[i], (Py_ssize_t)b, items[i]);
        }
    }
    for (int i = 0; ok && i < 8; i++)
        ok = PyDict_SetItemString(d, keys[i], lists[i]) == 0;
    for (int i = 0; i < 8; i++)
        Py_XDECREF(lists[i]);
    if (!ok) {
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

/* The solution's tensors, taken, as Tensors; its lanes as lists. */
static PyObject *result_of(ot_solution *sol, int status, otpy_solve *s)
{
    PyObject *d = lanes_of(sol);
    if (d == NULL)
        return NULL;
    const int64_t ns = ot_solution_nsens(sol);
    PyObject *sens = PyList_New((Py_ssize_t)ns), *grads = PyList_New(3),
             *events = PyList_New(4);
    int ok = sens && grads && events;
    for (int64_t j = 0; ok && j < ns; j++) {
        PyObject *t = otpy_tensor_new(ot_solution_take_sens(sol, j));
        ok = t != NULL;
        if (ok)
            PyList_SET_ITEM(sens, (Py_ssize_t)j, t);
    }
    for (int g = 0; ok && g < 3; g++) {
        PyObject *t = otpy_tensor_new(ot_solution_take_grad_tensor(sol, g));
        ok = t != NULL;
        if (ok)
            PyList_SET_ITEM(grads, g, t);
    }
    for (int e = 0; ok && e < 4; e++) {
        PyObject *t = otpy_tensor_new(ot_solution_take_event_tensor(sol, e));
        ok = t != NULL;
        if (ok)
            PyList_SET_ITEM(events, e, t);
    }
    PyObject *ts = ok ? otpy_tensor_new(ot_solution_take_ts(sol)) : NULL;
    PyObject *ys = ts ? otpy_tensor_new(ot_solution_take_ys(sol)) : NULL;
    PyObject *st = PyLong_FromLong(status);
    ok = ok && ys && st && PyDict_SetItemString(d, "ts", ts) == 0 &&
         PyDict_SetItemString(d, "ys", ys) == 0 &&
         PyDict_SetItemString(d, "sens", sens) == 0 &&
         PyDict_SetItemString(d, "grads", grads) == 0 &&
         PyDict_SetItemString(d, "events", events) == 0 &&
         PyDict_SetItemString(d, "call_status", st) == 0 &&
         PyDict_SetItemString(d, "errors", s->errors) == 0 &&
         PyDict_SetItemString(d, "batch_error", s->batch ? s->batch : Py_None) == 0 &&
         PyDict_SetItemString(d, "interrupt", s->interrupt ? s->interrupt : Py_None) == 0;
    Py_XDECREF(sens);
    Py_XDECREF(grads);
    Py_XDECREF(events);
    Py_XDECREF(ts);
    Py_XDECREF(ys);
    Py_XDECREF(st);
    if (!ok) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

PyObject *otpy_run_result(const otpy_run *r, otpy_solve *s)
{
    if (r->status != OT_OK && r->status != OT_ERR_LANES_FAILED &&
        r->status != OT_ERR_CANCELLED) {
        /* the message is the solve thread's (ot_last_error is per thread) */
        ot_set_error(r->status, "%s", r->message);
        return otpy_raise(r->status);
    }
    return result_of(r->sol, r->status, s);
}

/* solve(spec, kind, y0, params, times, final_time, stops, t0, loss_data,
 * loss_weights, stops_dp) -> dict (module docstring in odetensor/_api.py). */
static PyObject *py_solve(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *spec, *y0o, *po, *to, *stopso, *t0o, *ldo, *lwo, *dpo;
    int kind;
    double final_time;
    if (!PyArg_ParseTuple(args, "OiOOOdOOOOO", &spec, &kind, &y0o, &po, &to, &final_time,
                          &stopso, &t0o, &ldo, &lwo, &dpo))
        return NULL;
    otpy_call c;
    if (otpy_call_open(&c, spec) != 0) {
        otpy_call_close(&c);
        return NULL;
    }
    otpy_run r;
    memset(&r, 0, sizeof r);
    r.ode = c.ode;
    otpy_input keep[8];
    memset(keep, 0, sizeof keep);
    PyObject *result = NULL;
    ot_view y0, p, t, stops, t0, ld, lw, dp;
    if (otpy_input_view(y0o, "y0", &y0, &keep[0]) ||
        otpy_input_view(po, "params", &p, &keep[1]) ||
        otpy_input_view(to, "t_eval", &t, &keep[2]) ||
        otpy_input_view(stopso, "stops", &stops, &keep[3]) ||
        otpy_input_view(t0o, "t0", &t0, &keep[4]) ||
        otpy_input_view(ldo, "data", &ld, &keep[5]) ||
        otpy_input_view(lwo, "weights", &lw, &keep[6]) ||
        otpy_input_view(dpo, "stops_dp", &dp, &keep[7]))
        goto done;
    r.kind = kind;
    r.in = ot_solve_inputs_make(y0, p, t);
    r.in.stops = stops;
    r.in.stops_dp = dp;
    r.in.t0 = t0;
    r.final_time = final_time;
    r.loss = otpy_loss_of(&c.s, ld, lw);
    r.opts.size = sizeof r.opts;
    r.opts.replace_progress = 1;
    r.opts.progress = otpy_progress;
    r.opts.progress_user = &c.s;
    int bad = 0;
    attr_int64(spec, "lane_offset", &r.opts.lane_offset, &bad);
    if (bad)
        goto done;
    if (kind == K_STEPS || kind == K_WITH || kind == K_SENS_WITH || kind == K_ADJ_WITH)
        ot_ode_set_progress(r.ode, otpy_progress, &c.s);
    otpy_solve_released(&r, &c.s);
    result = otpy_run_result(&r, &c.s);
done:
    for (int i = 0; i < 8; i++)
        otpy_input_release(&keep[i]);
    ot_solution_free(r.sol);
    otpy_call_close(&c);
    return result;
}

static PyObject *py_status_name(PyObject *self, PyObject *arg)
{
    (void)self;
    const long c = PyLong_AsLong(arg);
    if (c == -1 && PyErr_Occurred())
        return NULL;
    return PyUnicode_FromString(ot_status_name((int)c));
}

static PyObject *py_callback_lane(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyLong_FromLongLong((long long)ot_callback_lane());
}

static PyMethodDef methods[] = {
    {"solve", py_solve, METH_VARARGS, "The solve entry of odetensor._api (private)."},
    {"status_name", py_status_name, METH_O, "A status code's name: 'OT_ERR_ARG'."},
    {"callback_lane", py_callback_lane, METH_NOARGS,
     "Inside a callback, the index of the first lane of its views; -1 outside."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "odetensor._core",
    "odetensor's C extension (use the odetensor package).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    main_thread = PyThread_get_thread_ident();
    if (PyType_Ready(&otpy_tensor_type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    otpy_error = PyErr_NewExceptionWithDoc(
        "odetensor.OdeTensorError",
        "A call odetensor refused or could not make: args (name, code, message).", NULL,
        NULL);
    Py_XINCREF(otpy_error);
    if (otpy_error == NULL || PyModule_AddObject(m, "OdeTensorError", otpy_error) < 0 ||
        PyModule_AddFunctions(m, otpy_dosing_methods) < 0 ||
        PyModule_AddObject(m, "Tensor", (PyObject *)&otpy_tensor_type) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&otpy_tensor_type);
    PyModule_AddStringConstant(m, "version", ot_version_string());
    return m;
}

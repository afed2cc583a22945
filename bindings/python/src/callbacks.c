/* The problem's callbacks for one solve: Python callables (the GIL taken
 * for each call, the views handed over as NumPy arrays without a copy) or
 * compiled functions of the flat signature the package documents
 * (odetensor.FLAT_SIGNATURE):
 *
 *   int f(double t, const double *y, const double *p, double *out,
 *         int64_t n, int64_t k, void *user)
 *
 * y [n, k], p [np, k] and out (rhs: [n, k]; jac: [n, n, k], zeroed) are
 * compact column-major; such a function never enters the interpreter. */
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL otpy_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "core.h"

#include <numpy/arrayobject.h>
#include <pthread.h>

/* The GIL for a callback. A thread of the library's (a worker of its
 * pool, the solve's own thread) has no Python thread state: the first
 * callback on it makes one (PyGILState_Ensure) and keeps it for the
 * thread's life, so that later calls only take the GIL; a pthread key's
 * destructor deletes it when the thread ends (made and deleted per call,
 * it cost more than the call). */
static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

/* Runs as the thread ends, when Python's own thread-local slot may be
 * cleared already: the state comes from this key's value. */
static void drop_kept(void *kept)
{
    PyThreadState *ts = kept;
    PyEval_RestoreThread(ts);
    PyThreadState_Clear(ts);
    PyThreadState_DeleteCurrent(); /* and the GIL goes */
}

static void make_kept_key(void) { pthread_key_create(&kept_key, drop_kept); }

typedef struct {
    int first; /* this call made the thread's state: PyEval_SaveThread after */
    PyGILState_STATE state;
} gil;

static void gil_take(gil *g)
{
    g->first = PyGILState_GetThisThreadState() == NULL;
    g->state = PyGILState_Ensure();
    if (g->first) {
        pthread_once(&kept_once, make_kept_key);
        pthread_setspecific(kept_key, PyGILState_GetThisThreadState());
    }
}

static void gil_give(gil *g)
{
    if (g->first)
        PyEval_SaveThread(); /* the GIL goes, the thread state stays */
    else
        PyGILState_Release(g->state);
}

typedef int (*flat_fn)(double t, const double *y, const double *p, double *out, int64_t n,
                       int64_t k, void *user);

static double empty_slot; /* data for an array of no element: never read */

/* A NumPy array over a callback's view, no copy; 1-D of its first axis
 * when flat (the event handler's one lane). New reference, or NULL. */
static PyObject *array_of(ot_layout l, int writable, int flat)
{
    if (l.dtype != OT_F64) {
        PyErr_SetString(PyExc_TypeError, "odetensor: a callback view is not float64");
        return NULL;
    }
    const int nd = flat ? 1 : l.ndim;
    npy_intp dims[3], strides[3];
    for (int d = 0; d < nd; d++) {
        dims[d] = (npy_intp)l.shape[d];
        strides[d] = (npy_intp)l.strides[d];
    }
    void *data = l.data ? l.data : &empty_slot;
    return PyArray_New(&PyArray_Type, nd, dims, NPY_DOUBLE, strides, data, 8,
                       NPY_ARRAY_ALIGNED | (writable ? NPY_ARRAY_WRITEABLE : 0), NULL);
}

/* n arrays over the views l, writable where w has 'w' (else read-only);
 * 0, or -1 with none left made. */
static int arrays_of(PyObject **v, int n, const ot_layout *l, const char *w, int flat)
{
    for (int i = 0; i < n; i++) {
        v[i] = array_of(l[i], w[i] == 'w', flat);
        if (v[i] == NULL) {
            while (i-- > 0)
                Py_CLEAR(v[i]);
            return -1;
        }
    }
    return 0;
}

static void drop(PyObject **v, int n)
{
    for (int i = 0; i < n; i++)
        Py_XDECREF(v[i]);
}

/* What a callable raised: KeyboardInterrupt cancels the solve; anything
 * else fails the callback's lane (a block's call in lockstep: the library
 * then calls lane by lane and the failing lane's own call records it). */
static int raised(otpy_solve *s, const char *name, int64_t k)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL)
        PyException_SetTraceback(value, tb);
    if (type != NULL && PyErr_GivenExceptionMatches(type, PyExc_KeyboardInterrupt)) {
        atomic_store(&s->cancel, 1);
        if (s->interrupt == NULL) {
            s->interrupt = value;
            value = NULL;
        }
    } else if (value != NULL) {
        PyObject *entry = Py_BuildValue("(sO)", name, value);
        if (entry != NULL) {
            const int64_t lane = ot_callback_lane();
            if (k != 1) {
                if (s->batch == NULL) {
                    s->batch = entry;
                    entry = NULL;
                }
            } else {
                PyObject *key = PyLong_FromLongLong((long long)lane);
                if (key != NULL && PyDict_GetItemWithError(s->errors, key) == NULL &&
                    !PyErr_Occurred())
                    PyDict_SetItem(s->errors, key, entry);
                Py_XDECREF(key);
            }
            Py_XDECREF(entry);
        }
        PyErr_Clear();
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return -1;
}

/* Calls f(*args) (args stolen; NULL: building them failed) and reads its
 * result: None, the output array itself (what NumPy's out= returns), or an
 * int (0 success, > 0 retry, < 0 fail). */
static int call(otpy_solve *s, const char *name, PyObject *f, PyObject *args, int64_t k)
{
    PyObject *written = args != NULL && PyTuple_GET_SIZE(args) > 0
                            ? PyTuple_GET_ITEM(args, PyTuple_GET_SIZE(args) - 1)
                            : NULL;
    if (args == NULL)
        return raised(s, name, k);
    Py_XINCREF(written);
    PyObject *r = PyObject_CallObject(f, args);
    Py_DECREF(args);
    Py_XDECREF(written); /* r holds it when it is r */
    if (r == NULL)
        return raised(s, name, k);
    int rc = 0;
    if (r == written) {
        rc = 0;
    } else if (PyLong_Check(r)) {
        const long v = PyLong_AsLong(r);
        rc = v > 0 ? 1 : v < 0 ? -1 : 0;
        if (v == -1 && PyErr_Occurred())
            rc = -1, PyErr_Clear();
    } else if (r != Py_None) {
        PyErr_Format(PyExc_TypeError,
                     "%s returned %.80s; write the results into the output array in "
                     "place and return None (or an int: > 0 to retry with a smaller "
                     "step, < 0 to fail the lane)",
                     name, Py_TYPE(r)->tp_name);
        Py_DECREF(r);
        return raised(s, name, k);
    }
    Py_DECREF(r);
    return rc;
}

/* (t, y, p, out): the shape of rhs, jac, out, root and dfdp. */
static int call4(otpy_solve *s, const char *name, PyObject *f, double t, ot_view y,
                 ot_view p, ot_view_mut o)
{
    if (atomic_load(&s->cancel))
        return -1;
    const int64_t k = y.layout.ndim > 1 ? y.layout.shape[1] : 1;
    gil g;
    gil_take(&g);
    PyObject *v[3] = {NULL};
    PyObject *args =
        arrays_of(v, 3, (ot_layout[]){y.layout, p.layout, o.layout}, "rrw", 0)
            ? NULL
            : Py_BuildValue("(dOOO)", t, v[0], v[1], v[2]);
    drop(v, 3);
    const int rc = call(s, name, f, args, k);
    gil_give(&g);
    return rc;
}

#define TRAMPOLINE(fn, field, name)                                                      \
    static int fn(double t, ot_view y, ot_view p, ot_view_mut o, void *user)             \
    {                                                                                    \
        otpy_solve *s = user;                                                            \
        return call4(s, name, s->field, t, y, p, o);                                     \
    }
TRAMPOLINE(rhs_py, rhs, "rhs")
TRAMPOLINE(rhs_explicit_py, rhs_explicit, "rhs_explicit")
TRAMPOLINE(jac_py, jac, "jac")
TRAMPOLINE(out_py, out, "out")
TRAMPOLINE(root_py, root, "roots")
TRAMPOLINE(dfdp_py, dfdp, "dfdp")

static int init_py(ot_view p, ot_view_mut y0, void *user)
{
    otpy_solve *s = user;
    const int64_t k = p.layout.ndim > 1 ? p.layout.shape[1] : 1;
    gil g;
    gil_take(&g);
    PyObject *v[2] = {NULL};
    PyObject *args = arrays_of(v, 2, (ot_layout[]){p.layout, y0.layout}, "rw", 0)
                         ? NULL
                         : Py_BuildValue("(OO)", v[0], v[1]);
    drop(v, 2);
    const int rc = call(s, "init", s->init, args, k);
    gil_give(&g);
    return rc;
}

/* on_event(t, root, y, p, lane) with y [n] and p [np] of the lane, writable. */
static int event_py(double t, int root, int64_t lane, ot_view_mut y, ot_view_mut p,
                    void *user)
{
    otpy_solve *s = user;
    gil g;
    gil_take(&g);
    PyObject *v[2] = {NULL};
    PyObject *args = arrays_of(v, 2, (ot_layout[]){y.layout, p.layout}, "ww", 1)
                         ? NULL
                         : Py_BuildValue("(diOOL)", t, root, v[0], v[1], (long long)lane);
    drop(v, 2);
    const int rc = call(s, "on_event", s->event, args, 1);
    gil_give(&g);
    return rc < 0 ? -1 : 0;
}

/* event_jac(t, root, lane, y, p, dz, dzdt): the handler's derivatives at
 * the lane's state before the event, y [n] and p [np] read-only, dz
 * [n + np, n + np] (Fortran order, the identity) and dzdt [n + np]
 * (zeroed) writable. */
static int event_jac_py(double t, int root, int64_t lane, ot_view y, ot_view p,
                        ot_view_mut dz, ot_view_mut dzdt, void *user)
{
    otpy_solve *s = user;
    gil g;
    gil_take(&g);
    PyObject *v[4] = {NULL};
    const int made = arrays_of(v, 2, (ot_layout[]){y.layout, p.layout}, "rr", 1) == 0 &&
                     arrays_of(v + 2, 1, &dz.layout, "w", 0) == 0 &&
                     arrays_of(v + 3, 1, &dzdt.layout, "w", 1) == 0;
    PyObject *args = made ? Py_BuildValue("(diLOOOO)", t, root, (long long)lane, v[0],
                                          v[1], v[2], v[3])
                          : NULL;
    drop(v, 4);
    const int rc = call(s, "event_jac", s->event_jac, args, 1);
    gil_give(&g);
    return rc < 0 ? -1 : 0;
}

/* The GMRES preconditioner, one lane a call: setup(t, y, p, gamma, jok,
 * work) and solve(t, y, p, gamma, r, z, work), 1-D views of the lane. */
static int psetup_py(double t, ot_view y, ot_view p, double gamma, int jok, int *jcur,
                     ot_view_mut work, void *user)
{
    otpy_solve *s = user;
    *jcur = !jok; /* setup recomputes what it keeps unless it may reuse it */
    gil g;
    gil_take(&g);
    PyObject *v[3] = {NULL};
    PyObject *args =
        arrays_of(v, 3, (ot_layout[]){y.layout, p.layout, work.layout}, "rrw", 1)
            ? NULL
            : Py_BuildValue("(dOOdOO)", t, v[0], v[1], gamma, jok ? Py_True : Py_False,
                            v[2]);
    drop(v, 3);
    const int rc = call(s, "precondition setup", s->psetup, args, 1);
    gil_give(&g);
    return rc;
}

static int psolve_py(double t, ot_view y, ot_view p, double gamma, ot_view r,
                     ot_view_mut z, ot_view_mut work, void *user)
{
    otpy_solve *s = user;
    gil g;
    gil_take(&g);
    PyObject *v[5] = {NULL};
    PyObject *args =
        arrays_of(v, 5,
                  (ot_layout[]){y.layout, p.layout, r.layout, z.layout, work.layout},
                  "rrrww", 1)
            ? NULL
            : Py_BuildValue("(dOOdOOO)", t, v[0], v[1], gamma, v[2], v[3], v[4]);
    drop(v, 5);
    /* z is not the last argument: a returned z is read as success too */
    const int rc = call(s, "precondition solve", s->psolve, args, 1);
    gil_give(&g);
    return rc;
}

/* The adjoint's loss term g_i of one lane: loss(t, i, lane, y, p, g, dgdy,
 * dgdp), 1-D views, g of one element. */
static int loss_py(double t, int64_t i, int64_t lane, ot_view y, ot_view p,
                   ot_view_mut gv, ot_view_mut dgdy, ot_view_mut dgdp, void *user)
{
    otpy_solve *s = user;
    gil g;
    gil_take(&g);
    PyObject *v[5] = {NULL};
    PyObject *args =
        arrays_of(v, 5,
                  (ot_layout[]){y.layout, p.layout, gv.layout, dgdy.layout, dgdp.layout},
                  "rrwww", 1)
            ? NULL
            : Py_BuildValue("(dLLOOOOO)", t, (long long)i, (long long)lane, v[0], v[1],
                            v[2], v[3], v[4]);
    drop(v, 5);
    const int rc = call(s, "loss", s->loss, args, 1);
    gil_give(&g);
    return rc < 0 ? -1 : 0;
}

/* The integral term q(t, y, p) of one lane: integrand(t, lane, y, p, q, dqdy,
 * dqdp). */
static int integrand_py(double t, int64_t lane, ot_view y, ot_view p, ot_view_mut q,
                        ot_view_mut dqdy, ot_view_mut dqdp, void *user)
{
    otpy_solve *s = user;
    gil g;
    gil_take(&g);
    PyObject *v[5] = {NULL};
    PyObject *args =
        arrays_of(v, 5,
                  (ot_layout[]){y.layout, p.layout, q.layout, dqdy.layout, dqdp.layout},
                  "rrwww", 1)
            ? NULL
            : Py_BuildValue("(dLOOOOO)", t, (long long)lane, v[0], v[1], v[2], v[3],
                            v[4]);
    drop(v, 5);
    const int rc = call(s, "integrand", s->integrand, args, 1);
    gil_give(&g);
    return rc < 0 ? -1 : 0;
}

ot_loss_fn otpy_loss_fn(void) { return loss_py; }
ot_integrand_fn otpy_integrand_fn(void) { return integrand_py; }

/* ---- Compiled callbacks ---------------------------------------------------- */

static int compact(ot_layout l, int64_t rows)
{
    return l.ndim < 2 || l.shape[1] <= 1 ||
           (l.strides[0] == 8 && l.strides[1] == 8 * rows &&
            (l.ndim < 3 || l.shape[2] <= 1 || l.strides[2] == 8 * rows * l.shape[1]));
}

static int flat(flat_fn f, otpy_solve *s, double t, ot_view y, ot_view p, ot_view_mut o,
                int64_t orows)
{
    if (!compact(y.layout, s->n) || !compact(p.layout, s->np) ||
        !compact(o.layout, orows))
        return -1; /* never in a CPU mode: the library's views are compact */
    const int64_t k = y.layout.ndim > 1 ? y.layout.shape[1] : 1;
    return f(t, y.layout.data, p.layout.data, o.layout.data, s->n, k, s->c_user);
}

static int rhs_c(double t, ot_view y, ot_view p, ot_view_mut o, void *user)
{
    otpy_solve *s = user;
    return flat((flat_fn)s->c_rhs, s, t, y, p, o, s->n);
}

static int jac_c(double t, ot_view y, ot_view p, ot_view_mut o, void *user)
{
    otpy_solve *s = user;
    return flat((flat_fn)s->c_jac, s, t, y, p, o, s->n);
}

/* ---- Installing them ------------------------------------------------------- */

static int check(int st)
{
    if (st != OT_OK) {
        otpy_raise(st);
        return -1;
    }
    return 0;
}

int otpy_set_callbacks(ot_ode *ode, otpy_solve *s)
{
    /* rhs is given to ot_ode_new: the kernel model's, rhs_c or rhs_py
     * (module.c). A kernel model is checked first (its ABI and shape), then
     * its per-lane callbacks serve the lane groups too. */
    const ot_kernel_model *m = s->c_kmodel;
    if (m && check(ot_ode_set_kernel_model(ode, m)))
        return -1;
    if (m && check(ot_ode_set_rhs_lanes(ode, m->rhs_lanes)))
        return -1;
    if (m && m->jac_lanes && check(ot_ode_set_jac_lanes(ode, m->jac_lanes)))
        return -1;
    if (s->c_jac && check(ot_ode_set_jac(ode, jac_c)))
        return -1;
    if (!s->c_jac && s->jac && check(ot_ode_set_jac(ode, jac_py)))
        return -1;
    if (s->rhs_explicit && check(ot_ode_set_rhs_explicit(ode, rhs_explicit_py)))
        return -1;
    if (s->init && check(ot_ode_set_init(ode, init_py)))
        return -1;
    if (s->out && check(ot_ode_set_out(ode, s->nout, out_py)))
        return -1;
    if (s->root && check(ot_ode_set_roots(ode, s->nroots, root_py)))
        return -1;
    if (s->event_jac && check(ot_ode_set_event_jac(ode, event_jac_py)))
        return -1;
    if (s->event && check(ot_ode_set_event_handler(ode, event_py)))
        return -1;
    if (s->dfdp && check(ot_ode_set_dfdp(ode, dfdp_py)))
        return -1;
    if (s->psetup && s->psolve &&
        check(ot_ode_set_preconditioner(ode, psetup_py, psolve_py, s->nwork)))
        return -1;
    return 0;
}

ot_rhs_fn otpy_rhs_fn(const otpy_solve *s)
{
    /* A model of another ABI is refused by otpy_set_callbacks, before any
     * solve: its fields are not read here. */
    if (s->c_kmodel && s->c_kmodel->abi == OT_KERNEL_ABI)
        return s->c_kmodel->rhs;
    return s->c_rhs ? rhs_c : rhs_py;
}

int otpy_progress(int64_t done, int64_t total, void *user)
{
    otpy_solve *s = user;
    if (atomic_load(&s->cancel))
        return 1;
    if (s->progress == NULL)
        return 0;
    gil g;
    gil_take(&g);
    PyObject *r =
        PyObject_CallFunction(s->progress, "LL", (long long)done, (long long)total);
    int stop = 0;
    if (r == NULL) {
        raised(s, "progress", 0);
        stop = 1;
    } else {
        stop = PyObject_IsTrue(r) == 1;
        Py_DECREF(r);
    }
    gil_give(&g);
    if (stop)
        atomic_store(&s->cancel, 1);
    return stop;
}

/* odetensor._core's event tables (dosing.h): records read from CSV text, a
 * file or columns, each held by a capsule; their contents copied out as
 * NumPy arrays; and solve_doses, a solve of every subject of the records'
 * plan through module.c's call, released solve and result (core.h), so
 * that a dose solve takes the Problem, cancels on Ctrl-C and returns as
 * every other solve does. */
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL otpy_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "core.h"

#include <numpy/arrayobject.h>
#include <string.h>

/* ---- Records ---------------------------------------------------------------- */

/* Each ot_records has one owner, the capsule made with it, which frees it
 * when Python drops the capsule (odetensor.Records holds it); records are
 * immutable, so any thread may read them, and a plan made from them does
 * not refer to them. */
static const char RECORDS[] = "odetensor.records";

static void records_destroy(PyObject *cap)
{
    ot_records_free(PyCapsule_GetPointer(cap, RECORDS));
}

/* A new capsule owning rec (freed here when none can be made), or NULL with
 * OdeTensorError for a failed read st. */
static PyObject *records_capsule(int st, ot_records *rec)
{
    if (st != OT_OK)
        return otpy_raise(st);
    PyObject *cap = PyCapsule_New(rec, RECORDS, records_destroy);
    if (cap == NULL)
        ot_records_free(rec);
    return cap;
}

/* The records a capsule holds (borrowed while it lives), or NULL with
 * TypeError: anything else passed here is refused, never dereferenced. */
static const ot_records *records_of(PyObject *cap)
{
    if (!PyCapsule_IsValid(cap, RECORDS)) {
        PyErr_Format(PyExc_TypeError,
                     "records: a %s; expected odetensor records (odetensor.read_records)",
                     Py_TYPE(cap)->tp_name);
        return NULL;
    }
    return PyCapsule_GetPointer(cap, RECORDS);
}

/* records_csv(text: str | bytes) -> capsule */
static PyObject *py_records_csv(PyObject *self, PyObject *args)
{
    (void)self;
    const char *text;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "s#", &text, &len))
        return NULL;
    ot_records *rec = NULL;
    /* text is an immutable object's, which args holds: read without the GIL
     * (a large table takes a while); the message stays on this thread */
    PyThreadState *ts = PyEval_SaveThread();
    const int st = ot_records_parse_csv(text, (size_t)len, &rec);
    PyEval_RestoreThread(ts);
    return records_capsule(st, rec);
}

/* records_file(path: str | os.PathLike) -> capsule */
static PyObject *py_records_file(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path = NULL;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path))
        return NULL;
    ot_records *rec = NULL;
    PyThreadState *ts = PyEval_SaveThread();
    const int st = ot_records_read_csv(PyBytes_AS_STRING(path), &rec);
    PyEval_RestoreThread(ts);
    Py_DECREF(path);
    return records_capsule(st, rec);
}

/* Column j of a records_columns call as a float64 vector: the view's data,
 * its row count in *rows; NULL with an exception otherwise. */
static const double *column_data(PyObject *col, const char *name, otpy_input *keep,
                                 int64_t *rows)
{
    ot_view v;
    if (otpy_input_view(col, name, &v, keep) != 0)
        return NULL;
    const ot_layout *l = &v.layout;
    if (ot_view_is_absent(v) || l->dtype != OT_F64 || l->ndim != 1 ||
        l->device.type != OT_CPU || (l->shape[0] > 1 && l->strides[0] != 8)) {
        otpy_raise_msg(OT_ERR_ARG,
                       "records[%s]: expected a contiguous 1-D float64 array on the CPU "
                       "(NaN for missing)",
                       name);
        return NULL;
    }
    *rows = l->shape[0];
    return l->data;
}

/* records_columns(names: sequence of str, columns: sequence of 1-D float64
 * arrays) -> capsule; the library copies the values. */
static PyObject *py_records_columns(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *names_o, *cols_o;
    if (!PyArg_ParseTuple(args, "OO", &names_o, &cols_o))
        return NULL;
    PyObject *names = PySequence_Fast(names_o, "records: names must be a sequence");
    PyObject *cols =
        names ? PySequence_Fast(cols_o, "records: columns must be a sequence") : NULL;
    if (cols == NULL) {
        Py_XDECREF(names);
        return NULL;
    }
    const Py_ssize_t ncols = PySequence_Fast_GET_SIZE(names);
    PyObject *result = NULL;
    const char **cname = PyMem_Calloc((size_t)(ncols > 0 ? ncols : 1), sizeof *cname);
    const double **data = PyMem_Calloc((size_t)(ncols > 0 ? ncols : 1), sizeof *data);
    otpy_input *keep = PyMem_Calloc((size_t)(ncols > 0 ? ncols : 1), sizeof *keep);
    int64_t nrows = 0;
    if (!cname || !data || !keep) {
        PyErr_NoMemory();
        goto done;
    }
    if (PySequence_Fast_GET_SIZE(cols) != ncols) {
        PyErr_Format(PyExc_ValueError, "records: %zd names for %zd columns", ncols,
                     PySequence_Fast_GET_SIZE(cols));
        goto done;
    }
    for (Py_ssize_t j = 0; j < ncols; j++) {
        int64_t rows = 0;
        /* borrowed from the str, which the names sequence holds */
        cname[j] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(names, j));
        if (cname[j] == NULL)
            goto done;
        data[j] =
            column_data(PySequence_Fast_GET_ITEM(cols, j), cname[j], &keep[j], &rows);
        if (data[j] == NULL)
            goto done;
        if (j > 0 && rows != nrows) {
            otpy_raise_msg(OT_ERR_ARG,
                           "records[%s]: %lld values; every column needs %lld (as %s)",
                           cname[j], (long long)rows, (long long)nrows, cname[0]);
            goto done;
        }
        nrows = rows;
    }
    ot_records *rec = NULL;
    const int st = ot_records_from_columns(nrows, (int64_t)ncols, cname, data, &rec);
    result = records_capsule(st, rec);
done:
    for (Py_ssize_t j = 0; keep && j < ncols; j++)
        otpy_input_release(&keep[j]);
    PyMem_Free(keep);
    PyMem_Free(data);
    PyMem_Free(cname);
    Py_DECREF(cols);
    Py_DECREF(names);
    return result;
}

/* A new float64 NumPy array of n values copied from v. */
static PyObject *copy_of(const double *v, int64_t n)
{
    npy_intp dims[1] = {(npy_intp)n};
    PyObject *a = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (a != NULL && n > 0)
        memcpy(PyArray_DATA((PyArrayObject *)a), v, (size_t)n * sizeof *v);
    return a;
}

/* records_rows(capsule) -> int */
static PyObject *py_records_rows(PyObject *self, PyObject *cap)
{
    (void)self;
    const ot_records *r = records_of(cap);
    return r ? PyLong_FromLongLong((long long)ot_records_rows(r)) : NULL;
}

/* records_column_values(capsule) -> {name: array}, in the table's order,
 * each a copy (the records stay immutable). */
static PyObject *py_records_column_values(PyObject *self, PyObject *cap)
{
    (void)self;
    const ot_records *r = records_of(cap);
    PyObject *d = r ? PyDict_New() : NULL;
    const int64_t rows = ot_records_rows(r);
    for (int64_t j = 0; d != NULL && j < ot_records_columns(r); j++) {
        const char *name = ot_records_column_name(r, j);
        const double *v = NULL;
        const int st = ot_records_column(r, name, &v);
        if (st != OT_OK) {
            Py_CLEAR(d);
            return otpy_raise(st);
        }
        PyObject *key = PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "replace");
        PyObject *a = key ? copy_of(v, rows) : NULL;
        if (a == NULL || PyDict_SetItem(d, key, a) != 0)
            Py_CLEAR(d);
        Py_XDECREF(key);
        Py_XDECREF(a);
    }
    return d;
}

/* records_subjects(capsule) -> [(id, first_row, nrows)] */
static PyObject *py_records_subjects(PyObject *self, PyObject *cap)
{
    (void)self;
    const ot_records *r = records_of(cap);
    const int64_t ns = ot_records_subjects(r);
    PyObject *list = r ? PyList_New((Py_ssize_t)ns) : NULL;
    for (int64_t s = 0; list != NULL && s < ns; s++) {
        double id = 0.0;
        int64_t first = 0, n = 0;
        const int st = ot_records_subject(r, s, &id, &first, &n);
        if (st != OT_OK) {
            Py_CLEAR(list);
            return otpy_raise(st);
        }
        PyObject *t = Py_BuildValue("(dLL)", id, (long long)first, (long long)n);
        if (t == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)s, t);
    }
    return list;
}

/* records_covariate(capsule, name) -> array [subjects] */
static PyObject *py_records_covariate(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap;
    const char *name;
    if (!PyArg_ParseTuple(args, "Os", &cap, &name))
        return NULL;
    const ot_records *r = records_of(cap);
    if (r == NULL)
        return NULL;
    npy_intp dims[1] = {(npy_intp)ot_records_subjects(r)};
    PyObject *a = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (a == NULL)
        return NULL;
    const int st = ot_records_covariate(r, name, PyArray_DATA((PyArrayObject *)a));
    if (st != OT_OK) {
        Py_DECREF(a);
        return otpy_raise(st);
    }
    return a;
}

/* ---- Solves from a plan ------------------------------------------------------ */

/* count integers from a sequence (None: *out NULL, the C default), freed
 * with PyMem_Free; what names them in a message. 0, or -1 with an
 * exception (OdeTensorError for a wrong count, TypeError for a non-int). */
static int int64s(PyObject *obj, const char *name, int64_t count, const char *what,
                  int64_t **out)
{
    *out = NULL;
    if (obj == Py_None)
        return 0;
    if (!PySequence_Check(obj) || PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: a %s; expected a sequence of %lld %s", name,
                     Py_TYPE(obj)->tp_name, (long long)count, what);
        return -1;
    }
    PyObject *seq = PySequence_Fast(obj, name);
    if (seq == NULL)
        return -1;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int ok = 0;
    if (n != count) {
        otpy_raise_msg(OT_ERR_ARG,
                       "%s: %zd entries; expected %lld %s (one per compartment)", name, n,
                       (long long)count, what);
    } else if ((*out = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof **out)) == NULL) {
        PyErr_NoMemory();
    } else {
        ok = 1;
        for (Py_ssize_t i = 0; ok && i < n; i++) {
            PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
            if (!PyIndex_Check(item) || PyBool_Check(item)) {
                PyErr_Format(PyExc_TypeError, "%s[%zd]: a %s; expected an integer", name,
                             i, Py_TYPE(item)->tp_name);
                ok = 0;
                break;
            }
            const long long x = PyLong_AsLongLong(item);
            ok = !(x == -1 && PyErr_Occurred());
            (*out)[i] = (int64_t)x;
        }
    }
    Py_DECREF(seq);
    if (!ok) {
        PyMem_Free(*out);
        *out = NULL;
    }
    return ok ? 0 : -1;
}

/* A dose solve's inputs beyond otpy_run's (its call_arg). */
typedef struct {
    const ot_dose_plan *plan;
    ot_dose_model model;
} dose_job;

enum { DOSE_DENSE, DOSE_SENS, DOSE_ADJ };

/* Runs on the solve's thread (otpy_solve_released): plan and model are
 * read-only there. */
static int dose_call(otpy_run *r)
{
    const dose_job *j = r->call_arg;
    switch (r->kind) {
    case DOSE_SENS:
        return ot_dose_solve_fwd_sens(r->ode, j->plan, &j->model, r->in.y0, r->in.params,
                                      &r->sol);
    case DOSE_ADJ:
        return ot_dose_solve_adjoint(r->ode, j->plan, &j->model, r->in.y0, r->in.params,
                                     &r->loss, &r->sol);
    default:
        return ot_dose_solve_dense(r->ode, j->plan, &j->model, r->in.y0, r->in.params,
                                   &r->sol);
    }
}

/* solve_doses(spec, kind, records, ncmt, cmt_state, f, lag, rate, duration,
 * post_dose, ss_tol, ss_max_iter, ss_interval, y0, params, data, weights)
 * -> dict, as solve's (odetensor/_api.py's _dose_solve). */
static PyObject *py_solve_doses(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *spec, *reco, *cmto, *idxo[4], *y0o, *po, *ldo, *lwo;
    int kind, post_dose;
    long long ncmt, ss_max_iter;
    double ss_tol, ss_interval;
    if (!PyArg_ParseTuple(args, "OiOLOOOOOpdLdOOOO", &spec, &kind, &reco, &ncmt, &cmto,
                          &idxo[0], &idxo[1], &idxo[2], &idxo[3], &post_dose, &ss_tol,
                          &ss_max_iter, &ss_interval, &y0o, &po, &ldo, &lwo))
        return NULL;
    const ot_records *rec = records_of(reco);
    if (rec == NULL)
        return NULL;
    if (kind < DOSE_DENSE || kind > DOSE_ADJ)
        return PyErr_Format(PyExc_ValueError, "solve_doses: kind %d", kind);
    static const char *const idx_name[4] = {"f", "lag", "rate", "duration"};
    PyObject *result = NULL;
    int64_t *cmt_state = NULL, *idx[4] = {NULL, NULL, NULL, NULL};
    ot_dose_plan *plan = NULL;
    otpy_call c;
    memset(&c, 0, sizeof c); /* closed below however far this gets */
    otpy_input keep[4];
    memset(keep, 0, sizeof keep);
    otpy_run r;
    memset(&r, 0, sizeof r);
    /* ncmt < 1 is the library's to refuse, in ot_dose_plan_new */
    if (ncmt >= 1 && int64s(cmto, "cmt_state", ncmt, "state indices", &cmt_state) != 0)
        goto done;
    int st = ot_dose_plan_new(rec, (int64_t)ncmt, cmt_state, &plan);
    if (st != OT_OK) {
        otpy_raise(st);
        goto done;
    }
    dose_job job = {plan, ot_dose_model_make()};
    for (int i = 0; i < 4; i++)
        if (int64s(idxo[i], idx_name[i], ncmt, "parameter indices, -1 for none",
                   &idx[i]) != 0)
            goto done;
    job.model.f = idx[0];
    job.model.lag = idx[1];
    job.model.rate = idx[2];
    job.model.duration = idx[3];
    job.model.post_dose = post_dose;
    job.model.ss_tol = ss_tol;
    job.model.ss_max_iter = (int64_t)ss_max_iter;
    job.model.ss_interval = ss_interval;
    if (otpy_call_open(&c, spec) != 0)
        goto done;
    ot_view y0, p, ld, lw;
    if (otpy_input_view(y0o, "y0", &y0, &keep[0]) ||
        otpy_input_view(po, "params", &p, &keep[1]) ||
        otpy_input_view(ldo, "data", &ld, &keep[2]) ||
        otpy_input_view(lwo, "weights", &lw, &keep[3]))
        goto done;
    /* the dose layer forwards the problem's progress to its main solve:
     * how a Ctrl-C seen by otpy_solve_released reaches the lanes */
    st = ot_ode_set_progress(c.ode, otpy_progress, &c.s);
    if (st != OT_OK) {
        otpy_raise(st);
        goto done;
    }
    r.ode = c.ode;
    r.kind = kind;
    r.call = dose_call;
    r.call_arg = &job;
    r.in = ot_solve_inputs_make(y0, p, ot_view_absent());
    r.loss = otpy_loss_of(&c.s, ld, lw);
    otpy_solve_released(&r, &c.s);
    result = otpy_run_result(&r, &c.s);
done:
    for (int i = 0; i < 4; i++)
        otpy_input_release(&keep[i]);
    ot_solution_free(r.sol);
    otpy_call_close(&c);
    ot_dose_plan_free(plan);
    for (int i = 0; i < 4; i++)
        PyMem_Free(idx[i]);
    PyMem_Free(cmt_state);
    return result;
}

PyMethodDef otpy_dosing_methods[] = {
    {"records_csv", py_records_csv, METH_VARARGS, "Records from CSV text (private)."},
    {"records_file", py_records_file, METH_VARARGS, "Records from a CSV file (private)."},
    {"records_columns", py_records_columns, METH_VARARGS,
     "Records from names and float64 columns (private)."},
    {"records_rows", py_records_rows, METH_O, "The records' row count (private)."},
    {"records_column_values", py_records_column_values, METH_O,
     "The records' columns, copied (private)."},
    {"records_subjects", py_records_subjects, METH_O,
     "The records' subjects: (id, first_row, nrows) (private)."},
    {"records_covariate", py_records_covariate, METH_VARARGS,
     "A covariate per subject (private)."},
    {"solve_doses", py_solve_doses, METH_VARARGS,
     "The dose solves of odetensor._api (private)."},
    {NULL, NULL, 0, NULL}};

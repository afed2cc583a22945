/* Arrays across the boundary. Out: odetensor._core.Tensor owns a result
 * tensor and lends it without a copy, through the buffer protocol (NumPy's
 * np.asarray) and DLPack (__dlpack__, a legacy capsule any consumer takes:
 * torch.from_dlpack, np.from_dlpack), each keeping the Tensor alive. In:
 * any object with the buffer protocol or __dlpack__, as a view. */
#include "core.h"

#include <string.h>

typedef struct {
    PyObject_HEAD ot_tensor *t;
    Py_ssize_t shape[OT_MAX_NDIM], strides[OT_MAX_NDIM];
} tensor_obj;

static void tensor_dealloc(PyObject *self)
{
    ot_tensor_free(((tensor_obj *)self)->t);
    Py_TYPE(self)->tp_free(self);
}

static int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    tensor_obj *o = (tensor_obj *)self;
    const ot_layout *l = ot_tensor_layout(o->t);
    const int ro = ot_tensor_is_read_only(o->t);
    if ((flags & PyBUF_WRITABLE) && ro) {
        PyErr_SetString(PyExc_BufferError, "odetensor: the tensor is read-only");
        return -1;
    }
    const Py_ssize_t item = (Py_ssize_t)ot_dtype_size(l->dtype);
    Py_ssize_t len = item;
    for (int d = 0; d < l->ndim; d++) {
        o->shape[d] = (Py_ssize_t)l->shape[d];
        o->strides[d] = (Py_ssize_t)l->strides[d];
        len *= o->shape[d];
    }
    view->buf = l->data;
    view->obj = self;
    Py_INCREF(self);
    view->len = len;
    view->readonly = ro;
    view->itemsize = item;
    view->format = (flags & PyBUF_FORMAT) ? (l->dtype == OT_F64 ? "d" : "f") : NULL;
    view->ndim = l->ndim;
    view->shape = o->shape;
    view->strides = o->strides;
    view->suboffsets = NULL;
    view->internal = NULL;
    return 0;
}

static PyBufferProcs tensor_buffer = {tensor_getbuffer, NULL};

/* The DLPack export: a managed tensor whose manager is the Tensor itself. */
typedef struct {
    DLManagedTensor mt;
    int64_t shape[OT_MAX_NDIM], strides[OT_MAX_NDIM];
} export_block;

static void export_deleter(DLManagedTensor *mt)
{
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XDECREF((PyObject *)mt->manager_ctx);
    PyMem_RawFree(mt);
    PyGILState_Release(g);
}

/* A capsule nobody consumed frees its tensor. */
static void capsule_destructor(PyObject *cap)
{
    if (!PyCapsule_IsValid(cap, "dltensor"))
        return; /* consumed: the consumer calls the deleter */
    DLManagedTensor *mt = PyCapsule_GetPointer(cap, "dltensor");
    if (mt && mt->deleter)
        mt->deleter(mt);
}

static PyObject *tensor_dlpack(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"stream", NULL};
    PyObject *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O", kw, &stream))
        return NULL;
    tensor_obj *o = (tensor_obj *)self;
    const ot_layout *l = ot_tensor_layout(o->t);
    if (ot_tensor_is_read_only(o->t))
        return otpy_raise_msg(OT_ERR_READ_ONLY,
                              "__dlpack__: the tensor is read-only, which a legacy "
                              "DLPack tensor cannot say; use np.asarray(tensor)");
    export_block *b = PyMem_RawCalloc(1, sizeof *b);
    if (b == NULL)
        return PyErr_NoMemory();
    const int64_t item = (int64_t)ot_dtype_size(l->dtype);
    for (int d = 0; d < l->ndim; d++) {
        b->shape[d] = l->shape[d];
        b->strides[d] = l->strides[d] / item; /* DLPack counts elements */
    }
    DLTensor *t = &b->mt.dl_tensor;
    t->data = l->data;
    t->device.device_type = (DLDeviceType)l->device.type;
    t->device.device_id = l->device.id;
    t->ndim = l->ndim;
    t->dtype.code = kDLFloat;
    t->dtype.bits = (uint8_t)(8 * item);
    t->dtype.lanes = 1;
    t->shape = b->shape;
    t->strides = b->strides;
    t->byte_offset = 0;
    b->mt.manager_ctx = self;
    b->mt.deleter = export_deleter;
    Py_INCREF(self);
    PyObject *cap = PyCapsule_New(&b->mt, "dltensor", capsule_destructor);
    if (cap == NULL) {
        Py_DECREF(self);
        PyMem_RawFree(b);
    }
    return cap;
}

static PyObject *tensor_dlpack_device(PyObject *self, PyObject *unused)
{
    (void)unused;
    const ot_layout *l = ot_tensor_layout(((tensor_obj *)self)->t);
    return Py_BuildValue("(ii)", (int)l->device.type, (int)l->device.id);
}

static PyMethodDef tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack,
     METH_VARARGS | METH_KEYWORDS,
     "A legacy DLPack capsule of the tensor, no copy; it keeps the tensor alive."},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS,
     "(device type, device id): (1, 0) for host memory."},
    {NULL, NULL, 0, NULL}};

PyTypeObject otpy_tensor_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "odetensor._core.Tensor",
    .tp_basicsize = sizeof(tensor_obj),
    .tp_dealloc = tensor_dealloc,
    .tp_as_buffer = &tensor_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An owned result tensor; np.asarray(t) and torch.from_dlpack(t) view it.",
    .tp_methods = tensor_methods,
};

PyObject *otpy_tensor_new(ot_tensor *t)
{
    if (t == NULL)
        Py_RETURN_NONE;
    tensor_obj *o = PyObject_New(tensor_obj, &otpy_tensor_type);
    if (o == NULL) {
        ot_tensor_free(t);
        return NULL;
    }
    o->t = t;
    return (PyObject *)o;
}

/* ---- Inputs ----------------------------------------------------------------- */

static int c_ordered_hint(const ot_layout *l)
{
    return l->ndim >= 2 && l->shape[0] > 1 && l->shape[1] > 1 &&
           l->strides[l->ndim - 1] == (int64_t)ot_dtype_size(l->dtype);
}

static int view_failed(int st, const char *name, const ot_layout *l)
{
    if (!c_ordered_hint(l)) {
        otpy_raise(st);
        return -1;
    }
    /* The C library's advice names its own copy function: Python's here. */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", ot_last_error());
    char *c_advice = strstr(msg, " (this layout is row-major");
    if (c_advice != NULL)
        *c_advice = '\0';
    otpy_raise_msg(st,
                   "%s; %s is C-ordered (row-major) and odetensor reads column-major "
                   "[n, nbatch]: pass np.asfortranarray(%s), or copy=True to let the "
                   "binding copy it",
                   msg, name, name);
    return -1;
}

int otpy_input_view(PyObject *obj, const char *name, ot_view *out, otpy_input *keep)
{
    memset(keep, 0, sizeof *keep);
    *out = ot_view_absent();
    if (obj == Py_None)
        return 0;
    ot_layout l;
    memset(&l, 0, sizeof l);
    if (PyObject_CheckBuffer(obj)) {
        if (PyObject_GetBuffer(obj, &keep->buf, PyBUF_STRIDES | PyBUF_FORMAT) != 0)
            return -1;
        keep->has_buf = 1;
        const char *f = keep->buf.format ? keep->buf.format : "B";
        if (f[0] == '=' || f[0] == '<' || f[0] == '@')
            f++;
        const int dt = strcmp(f, "d") == 0 ? OT_F64 : strcmp(f, "f") == 0 ? OT_F32 : 0;
        if (dt == 0) {
            otpy_raise_msg(OT_ERR_DTYPE,
                           "%s: element format '%s'; needs float64 or float32 "
                           "(np.asarray(%s, dtype=float))",
                           name, keep->buf.format ? keep->buf.format : "B", name);
            otpy_input_release(keep);
            return -1;
        }
        if (keep->buf.ndim > OT_MAX_NDIM) {
            otpy_raise_msg(OT_ERR_SHAPE, "%s: %d axes; at most %d", name, keep->buf.ndim,
                           OT_MAX_NDIM);
            otpy_input_release(keep);
            return -1;
        }
        int64_t shape[OT_MAX_NDIM], strides[OT_MAX_NDIM];
        for (int d = 0; d < keep->buf.ndim; d++) {
            shape[d] = (int64_t)keep->buf.shape[d];
            strides[d] = (int64_t)keep->buf.strides[d];
        }
        const ot_device cpu = {OT_CPU, 0};
        const int st = ot_view_make(out, keep->buf.buf, (ot_dtype)dt, cpu, keep->buf.ndim,
                                    shape, strides);
        if (st != OT_OK) {
            l.dtype = dt, l.ndim = keep->buf.ndim;
            memcpy(l.shape, shape, sizeof shape);
            memcpy(l.strides, strides, sizeof strides);
            ot_set_error(st, "%s: %s", name, ot_last_error());
            view_failed(st, name, &l);
            otpy_input_release(keep);
            return -1;
        }
        return 0;
    }
    PyObject *cap = PyObject_CallMethod(obj, "__dlpack__", NULL);
    if (cap == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            otpy_raise_msg(OT_ERR_ARG,
                           "%s: a %.80s is no array; give a NumPy array (or any object "
                           "with __dlpack__ or the buffer protocol)",
                           name, Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    DLManagedTensor *mt = PyCapsule_GetPointer(cap, "dltensor");
    if (mt == NULL) {
        Py_DECREF(cap);
        return -1;
    }
    PyCapsule_SetName(cap, "used_dltensor"); /* ours to delete now */
    keep->capsule = cap;
    keep->buf.buf = mt; /* the managed tensor, for release */
    const int st = ot_dlpack_view(&mt->dl_tensor, out);
    if (st != OT_OK) {
        ot_set_error(st, "%s: %s", name, ot_last_error());
        if (ot_dlpack_layout(&mt->dl_tensor, &l) != OT_OK)
            l.ndim = 0;
        view_failed(st, name, &l);
        otpy_input_release(keep);
        return -1;
    }
    return 0;
}

void otpy_input_release(otpy_input *keep)
{
    if (keep->has_buf)
        PyBuffer_Release(&keep->buf);
    if (keep->capsule) {
        DLManagedTensor *mt = keep->buf.buf;
        if (mt && mt->deleter)
            mt->deleter(mt);
        Py_DECREF(keep->capsule);
    }
    memset(keep, 0, sizeof *keep);
}

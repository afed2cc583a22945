/* odetensor's CPython extension (odetensor._core): private declarations
 * shared by its files. It uses the public C API only. */
#ifndef OT_PY_CORE_H
#define OT_PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <odetensor.h>
#include <stdatomic.h>

/* ---- Errors (module.c) ---------------------------------------------------- */

/* odetensor.OdeTensorError: raised with (status name, status code, message). */
extern PyObject *otpy_error;
/* Raises OdeTensorError for status with the library's last message; NULL. */
PyObject *otpy_raise(int status);
/* Raises OdeTensorError for status with a message of the binding's own. */
PyObject *otpy_raise_msg(int status, const char *fmt, ...);

/* ---- Tensors (tensor.c) --------------------------------------------------- */

/* odetensor._core.Tensor: owns an ot_tensor; the buffer protocol (NumPy
 * views), __dlpack__ and __dlpack_device__. */
extern PyTypeObject otpy_tensor_type;
/* A new Tensor owning t (taken, freed with the object); Py_None for NULL. */
PyObject *otpy_tensor_new(ot_tensor *t);

/* An input array as a view: any object with __dlpack__ (kept alive in
 * *keep, a capsule or buffer holder the caller releases with
 * otpy_input_release) or the buffer protocol. None: the absent view.
 * name is the C argument's name, for messages. 0, or -1 with an exception. */
typedef struct {
    Py_buffer buf;
    int has_buf;
    PyObject *capsule; /* a consumed DLPack capsule */
} otpy_input;
int otpy_input_view(PyObject *obj, const char *name, ot_view *out, otpy_input *keep);
void otpy_input_release(otpy_input *keep);

/* ---- Callbacks (callbacks.c) --------------------------------------------- */

/* A solve's state, the problem's user pointer: its callables, what they
 * raised (per lane), and its cancel flag. */
typedef struct {
    PyObject *rhs, *rhs_explicit, *jac, *init, *out, *root, *event, *dfdp, *progress;
    PyObject *psetup, *psolve, *loss, *integrand, *event_jac;
    int64_t nwork;
    /* Compiled callbacks: flat C functions (callbacks.c, FLAT_SIGNATURE). */
    void *c_rhs, *c_jac;
    void *c_user;
    int64_t n, np, nout, nroots;
    PyObject *errors;    /* dict lane -> (name, exception), under the GIL */
    PyObject *batch;     /* a block's failure (lockstep), or NULL */
    atomic_int cancel;   /* KeyboardInterrupt or the progress callable asked */
    PyObject *interrupt; /* the KeyboardInterrupt, re-raised after the solve */
} otpy_solve;

/* Installs the state's callbacks on ode (user = s). 0, or -1 with an
 * exception. */
int otpy_set_callbacks(ot_ode *ode, otpy_solve *s);
/* The adjoint's loss and integrand trampolines (user = the otpy_solve). */
ot_loss_fn otpy_loss_fn(void);
ot_integrand_fn otpy_integrand_fn(void);
/* The rhs to give ot_ode_new: the compiled one or the Python one. */
ot_rhs_fn otpy_rhs_fn(const otpy_solve *s);
/* The binding's progress callback (user = s): the user's progress callable,
 * KeyboardInterrupt and the cancel flag. */
int otpy_progress(int64_t done, int64_t total, void *user);

#endif

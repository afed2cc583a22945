/* odetensor's CPython extension (odetensor._core): private declarations
 * shared by its files. It uses the public C API only. */
#ifndef OT_PY_CORE_H
#define OT_PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <odetensor.h>
#include <pthread.h>
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
    /* A compiled kernel model (odetensor/kernel.h) whose rhs and Jacobian
     * serve, or NULL. */
    const ot_kernel_model *c_kmodel;
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
/* The rhs to give ot_ode_new: the kernel model's, the compiled one or the
 * Python one. */
ot_rhs_fn otpy_rhs_fn(const otpy_solve *s);
/* The binding's progress callback (user = s): the user's progress callable,
 * KeyboardInterrupt and the cancel flag. */
int otpy_progress(int64_t done, int64_t total, void *user);

/* ---- One call's problem and its solve (module.c) ------------------------ */

/* The problem of one call: the Problem's callables and options (spec, the
 * _Spec of odetensor/_api.py) in s, the ot_ode made from them (user = &s,
 * so the struct must not move while ode lives), and the view of the atol
 * vector. */
typedef struct {
    otpy_solve s;
    ot_ode *ode;
    otpy_input atol;
} otpy_call;
/* Reads spec into c and makes c->ode. 0, or -1 with an exception; either
 * way otpy_call_close(c) frees what was made. */
int otpy_call_open(otpy_call *c, PyObject *spec);
void otpy_call_close(otpy_call *c);
/* The adjoint's loss: s's Python loss (and integrand) if given, else the
 * sum of squares of data and weights. */
ot_loss otpy_loss_of(otpy_solve *s, ot_view data, ot_view weights);

/* One solve as otpy_solve_released runs it: kind and inputs of module.c's
 * entries, or call, when set, in their place (a solve of another file's,
 * with call_arg its inputs). Written by the solve: sol, status and its
 * message (copied on the solve's thread: ot_last_error is per thread). */
typedef struct otpy_run otpy_run;
struct otpy_run {
    ot_ode *ode;
    int kind;
    ot_solve_inputs in;
    double final_time;
    ot_loss loss;
    ot_solve_options opts;
    int (*call)(otpy_run *r);
    const void *call_arg;
    ot_solution *sol;
    int status;
    char message[512];
    /* the caller waits on done when the solve runs on its own thread */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
};
/* Solves r without the GIL: on the main thread, on a thread of its own
 * while this one lets Python see Ctrl-C, which sets s->cancel (the solve
 * must poll it: otpy_progress on the problem or in r->opts). */
void otpy_solve_released(otpy_run *r, otpy_solve *s);
/* After the solve: the result dict _api._result reads (r->sol's tensors
 * taken), or NULL with OdeTensorError when the solve refused the call. */
PyObject *otpy_run_result(const otpy_run *r, otpy_solve *s);

/* ---- Event tables (dosing.c) ---------------------------------------------- */

/* records_* and solve_doses, added to the module by its init. */
extern PyMethodDef otpy_dosing_methods[];

#endif

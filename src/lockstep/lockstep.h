/* Private: the lockstep solver state, shared by its setup and loops
 * (lockstep.c) and its callback wrappers (lockstep_callbacks.c). */
#ifndef OT_SRC_LOCKSTEP_SOLVER_H
#define OT_SRC_LOCKSTEP_SOLVER_H

#include <cvodes/cvodes.h>
#include <sundials/sundials_nonlinearsolver.h>

#include "lockstep/lockstep_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ot__lockstep ot__lockstep;

/* What differs between the CPU and CUDA lockstep: moving results out of
 * solver vectors. */
typedef struct {
    /* Stores output i at time t from state y (and sensitivities in L->yS) for
     * every running lane; OT_ERR_CALLBACK when the out callback fails. */
    int (*emit)(ot__lockstep *L, ot_solution *sol, int64_t i, double t, N_Vector y);
    /* Writes the recorded rows of every lane at (t, y) into host dst
     * [rows, nb]. */
    int (*host_rows)(ot__lockstep *L, double t, N_Vector y, double *dst);
    /* NaN past each lane's count in ys and the sensitivities. */
    void (*nan_fill)(ot__lockstep *L, ot_solution *sol);
    /* Setup: the CVODE callbacks on this backend's vectors, */
    CVRhsFn rhs;
    CVLsJacFn jac;
    CVRootFn root;
    CVSensRhsFn sens_rhs;
    /* the per-lane atol vector filled from ode->atol_vec into L->atolv, */
    int (*make_atol)(ot__lockstep *L);
    /* and the block matrix and solver into L->A, L->LS (NULL: no memory). */
    void (*make_linear)(ot__lockstep *L);
    /* Lanes were just added to L->stopped (NULL: the backend reads it as is). */
    void (*stopped_changed)(ot__lockstep *L);
    /* y0 of every lane into L->y and the initial sensitivities into L->yS;
     * OT_ERR_CALLBACK when init fails (message in L->cb_msg). */
    int (*initial_state)(ot__lockstep *L);
} ot__ls_backend;

struct ot__lockstep {
    const ot__ls_backend *be;
    void *dev; /* backend state (CUDA) */
    const ot__plan *plan;
    int64_t n, nb, np, rows;
    SUNContext ctx;
    void *cv;
    N_Vector y, yout, ewt; /* lane vectors [n, nb] */
    N_Vector atolv;
    SUNMatrix A;
    SUNLinearSolver LS;
    SUNNonlinearSolver NLS, NLSsens;
    N_Vector *yS;    /* [np] lane vectors */
    double *p;       /* [np, nb]: the params every callback sees (broadcast expanded) */
    double *pp;      /* [np, nb]: perturbed params for difference quotients */
    double *o, *o2;  /* [rows, nb]: out scratch */
    double *yp, *ym; /* [n, nb]: perturbed states */
    double *inc;     /* [nb]: per-lane increments */
    unsigned char *stopped; /* [nb]: lanes stopped by a root */
    int *rootsfound;        /* [nroots * nb] */
    int64_t dq_rhs_evals;   /* rhs calls made by our difference quotients */
    int cb_failed;          /* 0, 1: a callback asked for a retry, 2: one failed */
    int nan_count;
    char cb_msg[256];
    char cv_msg[256];
};

/* [rows, nb] (and [n, n, nb]) f64 views over compact solver storage. */
ot_view ot__ls_view(const double *d, int64_t rows, int64_t nb);
ot_view_mut ot__ls_mut(double *d, int64_t rows, int64_t nb);

/* The CVODE callbacks, with user_data = the ot__lockstep. */
int ot__ls_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *ud);
int ot__ls_jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud, N_Vector t1,
               N_Vector t2, N_Vector t3);
int ot__ls_root(sunrealtype t, N_Vector y, sunrealtype *g, void *ud);
int ot__ls_sens_rhs(int ns, sunrealtype t, N_Vector y, N_Vector ydot, N_Vector *yS,
                    N_Vector *ySdot, void *ud, N_Vector t1, N_Vector t2);
void ot__ls_err(int code, const char *module, const char *function, char *msg, void *ud);

/* Central-difference step for a parameter of value v. */
double ot__ls_fd_step(double v);

/* The backend-neutral parts (lockstep.c). */
/* CVodeInit on L->y and every setting, through L->be's callbacks.
 * @return OT_OK, OT_ERR_NOMEM or OT_ERR_SOLVER. */
int ot__ls_configure(ot__lockstep *L);
/* After the backend made L->y: its clones (yout, ewt, yS), the initial
 * state, CVodeCreate and ot__ls_configure. @return OT_OK, OT_ERR_NOMEM,
 * OT_ERR_CALLBACK (init failed) or OT_ERR_SOLVER. */
int ot__ls_finish_setup(ot__lockstep *L);
/* Frees the CVODE(S) objects, vectors, context and the host lane arrays
 * (stopped, rootsfound); the backend frees its own scratch. */
void ot__ls_free_common(ot__lockstep *L);
void ot__ls_fail_batch(ot__lockstep *L, ot_solution *sol, int status, double t,
                       const char *why);
int ot__ls_all_stopped(const ot__lockstep *L);
/* Solves a configured batch (dense, sens or steps) into sk, then fills the
 * statistics and reports progress. */
void ot__lockstep_loop(ot__lockstep *L, const ot__sink *sk);
/* NaN past each lane's count in host ys and sensitivities. */
void ot__ls_nan_fill_host(ot__lockstep *L, ot_solution *sol);
/* init failed: every lane fails with L->cb_msg, outputs NaN. */
void ot__lockstep_init_failed(ot__lockstep *L, const ot__sink *sk);

#ifdef __cplusplus
}
#endif

#endif

/* Private: the problem struct, read by the solve layer only. Layers above
 * the core read what they need through ot_ode_describe (odetensor/ode.h). */
#ifndef OT_SRC_ODE_IMPL_H
#define OT_SRC_ODE_IMPL_H

#include "odetensor/ode.h"

/* sizeof(struct ot_ode) on 64-bit targets; ode_info.c checks it so that a
 * new field is not forgotten in the options fingerprint. */
#define OT__ODE_STRUCT_SIZE 384

/* The default step limit: per output interval in dense and sensitivity
 * solves, in all for every-step solves (ot_solve). CVODE's own 500 stops
 * the standard stiff problems on sparse output grids (Robertson with outputs
 * at 1e4 and 1e5 at rtol 1e-6). */
#define OT__DEFAULT_MAX_STEPS 100000
/* Recorded events a lane may have by default. */
#define OT__DEFAULT_MAX_EVENTS 10000

struct ot_ode {
    int64_t n, np, nout, nroots;
    ot_rhs_fn rhs;
    ot_rhs_fn rhs_explicit; /* the explicit part of an IMEX split, or NULL */
    ot_jac_fn jac;
    ot_init_fn init;
    ot_out_fn out;
    ot_root_fn root;
    void *user;
    ot_progress_fn progress;
    void *progress_user;
    int method, mode, threads, out_dtype;
    double rtol, atol, t0, h0, hmax, sens_rtol, sens_atol;
    double *atol_vec; /* [n] or NULL: owned */
    int64_t max_steps;
    /* The adjoint's backward problem: steps between two output times (0:
     * from the forward pass, ot__adj_max_steps_b) and tolerances (0: the
     * forward ones). */
    int64_t adj_max_steps;
    double adj_rtol, adj_atol;
    int64_t lockstep_block; /* 0: the whole batch */
    int max_order;          /* 0: the method's own (BDF 5, Adams 12) */
    int stab_limit;         /* BDF stability limit detection on/off */
    int *root_dir;          /* [nroots] or NULL (all OT_ROOT_BOTH): owned */
    int *event_action;      /* [nroots] or NULL (all OT_EVENT_STOP): owned */
    ot_event_fn event_fn;
    ot_event_jac_fn event_jac; /* the handler's derivatives, or NULL */
    ot_dfdp_fn dfdp;
    int64_t max_events;
    ot_device device;
    int outputs_on_device;
    int sens_initial;       /* sensitivities to y0 after the parameters' */
    int linsol;             /* ot_linsol of the implicit methods */
    int krylov_maxl;        /* OT_LINSOL_GMRES's Krylov dimension (0: SUNDIALS') */
    int64_t mupper, mlower; /* OT_LINSOL_BAND's half-bandwidths */
    ot_psetup_fn psetup;    /* OT_LINSOL_GMRES's preconditioner, or NULL */
    ot_psolve_fn psolve;
    int64_t pwork; /* doubles of work per lane for the preconditioner */
    /* 1: an output at a stop's time shows the state before the stop. */
    int outputs_before_stops;
    int autonomous;            /* rhs and jac do not read t (the kernel methods) */
    ot_rhs_lanes_fn rhs_lanes; /* per-lane times (kernel lane groups), or NULL */
    ot_jac_lanes_fn jac_lanes;
    int64_t lane_group; /* the kernel methods' lane group (0: chosen) */
    /* A compiled model the kernel methods run instead of the callbacks
     * (ot_ode_set_kernel_model; not owned), or NULL. */
    const struct ot_kernel_model *kmodel;
};

/* Whether any root records events (OT_EVENT_RECORD or OT_EVENT_HANDLE). */
static inline int ot__ode_records_events(const struct ot_ode *o)
{
    for (int64_t r = 0; o->event_action && r < o->nroots; r++)
        if (o->event_action[r] != OT_EVENT_STOP)
            return 1;
    return 0;
}

/* Whether any root calls the handler. */
static inline int ot__ode_handles_events(const struct ot_ode *o)
{
    for (int64_t r = 0; o->event_action && r < o->nroots; r++)
        if (o->event_action[r] == OT_EVENT_HANDLE)
            return 1;
    return 0;
}

#endif

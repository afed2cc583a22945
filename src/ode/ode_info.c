/* What the layers above the core read of a problem: ot_ode_describe
 * (odetensor/ode.h), with the options fingerprint. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "ode/ode_impl.h"

/* A new field of struct ot_ode that can change a lane's result must enter
 * the fingerprint below, or ranks built differently would pass the MPI
 * layer's check. This size check fails the build until the fingerprint is
 * looked at (64-bit builds; wasm32 has other sizes). */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(struct ot_ode) == OT__ODE_STRUCT_SIZE,
               "struct ot_ode changed: update ot_ode_describe's fingerprint, then "
               "OT__ODE_STRUCT_SIZE in ode_impl.h");
#endif

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    return h;
}

static uint64_t fingerprint(const struct ot_ode *o)
{
    const int64_t ints[] = {o->n,
                            o->np,
                            o->nout,
                            o->nroots,
                            o->method,
                            o->mode,
                            o->out_dtype,
                            o->max_steps,
                            o->jac != NULL,
                            o->init != NULL,
                            o->out != NULL,
                            o->root != NULL,
                            o->device.type,
                            o->device.id,
                            o->outputs_on_device,
                            o->lockstep_block,
                            o->max_order,
                            o->event_fn != NULL,
                            o->event_jac != NULL,
                            o->dfdp != NULL,
                            o->sens_initial,
                            o->max_events,
                            o->stab_limit,
                            o->rhs_explicit != NULL,
                            o->linsol,
                            o->krylov_maxl,
                            o->mupper,
                            o->mlower,
                            o->psetup != NULL,
                            o->pwork,
                            o->adj_max_steps,
                            o->outputs_before_stops,
                            o->autonomous,
                            o->rhs_lanes != NULL,
                            o->jac_lanes != NULL,
                            o->lane_group,
                            o->kmodel != NULL};
    const double dbl[] = {o->rtol,      o->atol,      o->t0,       o->h0,      o->hmax,
                          o->sens_rtol, o->sens_atol, o->adj_rtol, o->adj_atol};
    uint64_t h = fnv(UINT64_C(0xcbf29ce484222325), ints, sizeof ints);
    h = fnv(h, dbl, sizeof dbl);
    if (o->atol_vec)
        h = fnv(h, o->atol_vec, (size_t)o->n * sizeof *o->atol_vec);
    for (int64_t r = 0; r < o->nroots; r++) {
        const int per_root[2] = {o->root_dir ? o->root_dir[r] : 0,
                                 o->event_action ? o->event_action[r] : 0};
        h = fnv(h, per_root, sizeof per_root);
    }
    return h;
}

/* The first version of ot_ode_info ends after its fingerprint: a caller's
 * size below that cannot hold what every version fills. */
#define OT__ODE_INFO_V1 (offsetof(ot_ode_info, fingerprint) + sizeof(uint64_t))

int ot_ode_describe(const ot_ode *ode, ot_ode_info *info)
{
    if (ode == NULL || info == NULL)
        return ot__fail(OT_ERR_ARG, "%s: NULL", ode == NULL ? "ode" : "info");
    if (info->size < OT__ODE_INFO_V1)
        return ot__fail(OT_ERR_ARG,
                        "info: size is %zu bytes; set info->size = sizeof(ot_ode_info) "
                        "first (%zu bytes at least; %zu in this library)",
                        info->size, (size_t)OT__ODE_INFO_V1, sizeof(ot_ode_info));
    ot_ode_info d;
    memset(&d, 0, sizeof d);
    d.nstates = ode->n;
    d.nparams = ode->np;
    d.nsens = ode->np + (ode->sens_initial ? ode->n : 0);
    d.nout = ode->nout;
    d.nroots = ode->nroots;
    d.rows = ode->out ? ode->nout : ode->n;
    d.mode = ode->mode;
    d.threads = ode->threads;
    d.out_dtype = ode->out_dtype;
    d.has_init = ode->init != NULL;
    d.device = ode->device;
    d.records_events = ot__ode_records_events(ode);
    d.outputs_on_device = ode->device.type == OT_CUDA && ode->outputs_on_device;
    d.t0 = ode->t0;
    d.fingerprint = fingerprint(ode);
    /* Only the bytes the caller's struct has; the rest it keeps. */
    d.size = info->size < sizeof d ? info->size : sizeof d;
    memcpy(info, &d, d.size);
    return OT_OK;
}

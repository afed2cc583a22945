// Every value the JS side mirrors from odetensor's C headers, in one place:
// the status codes (include/odetensor/status.h), the option enums (ode.h),
// the event and gradient tensors (solution.h) and DLPack's codes. Written by
// tools/gen_constants.mjs from the headers (`make js-constants`): do not edit;
// test/constants.test.mjs fails while it differs. Internal: not a package export.

const table = (o) => Object.freeze({ __proto__: null, ...o });

/** ot_status codes by name (OT_STATUS_LIST of status.h). */
export const STATUS = table({
  OT_OK: 0, OT_ERR_ARG: -1, OT_ERR_LAYOUT: -2, OT_ERR_SHAPE: -3, OT_ERR_DTYPE: -4,
  OT_ERR_DEVICE: -5, OT_ERR_READ_ONLY: -6, OT_ERR_VERSION: -7, OT_ERR_OVERFLOW: -8,
  OT_ERR_NOMEM: -9, OT_ERR_NO_CUDA: -10, OT_ERR_LANES_FAILED: -11, OT_ERR_SOLVER: -12,
  OT_ERR_CALLBACK: -13, OT_ERR_VALUE: -14, OT_ERR_CANCELLED: -15, OT_ERR_MPI: -20,
  OT_ERR_INTERNAL: -99,
});
/** ot_method: CVODE's multistep methods, ARKODE's explicit, ESDIRK and IMEX pairs, and the kernel methods (odetensor's own per-lane Rosenbrock and explicit RK). */
export const METHODS = table({
  bdf: 1, adams: 2, bs32: 3, dp54: 4, verner65: 5, esdirk32: 6, esdirk43: 7, esdirk54: 8,
  imex32: 9, imex43: 10, imex54: 11, ros23: 12, rodas4: 13, rodas5p: 14, tsit5: 15, vern7: 16,
});
/** ot_mode */
export const MODES = table({
  lanes: 1, lockstep: 2,
});
/** ot_linsol */
export const LINEAR_SOLVERS = table({
  dense: 1, band: 2, gmres: 3,
});
/** ot_root_direction */
export const DIRECTIONS = table({
  falling: -1, both: 0, rising: 1,
});
/** ot_event_action */
export const ACTIONS = table({
  stop: 0, record: 1, handle: 2,
});
/** ot_event_tensor, by the Solution.events field each fills */
export const EVENT_TENSORS = table({
  times: 0, roots: 1, before: 2, after: 3,
});
/** ot_grad_tensor, by the Solution field each fills */
export const GRAD_TENSORS = table({
  loss: 0, gradParams: 1, gradY0: 2,
});
/** DLPack's codes (dlpack.h): kDLFloat, kDLCPU. */
export const DLPACK = table({
  kDLFloat: 2, kDLCPU: 1,
});
/** The JS words for the option enumerators C messages name (jsWords). */
export const C_NAMES = table({
  OT_BDF: "'bdf'", OT_ADAMS: "'adams'", OT_ERK_BS32: "'bs32'", OT_ERK_DP54: "'dp54'",
  OT_ERK_VERNER65: "'verner65'", OT_ESDIRK32: "'esdirk32'", OT_ESDIRK43: "'esdirk43'",
  OT_ESDIRK54: "'esdirk54'", OT_IMEX_ARK32: "'imex32'", OT_IMEX_ARK43: "'imex43'",
  OT_IMEX_ARK54: "'imex54'", OT_ROS23: "'ros23'", OT_RODAS4: "'rodas4'", OT_RODAS5P: "'rodas5p'",
  OT_TSIT5: "'tsit5'", OT_VERN7: "'vern7'", OT_LANES: "'lanes'", OT_LOCKSTEP: "'lockstep'",
  OT_LINSOL_DENSE: "'dense'", OT_LINSOL_BAND: "'band'", OT_LINSOL_GMRES: "'gmres'",
  OT_ROOT_FALLING: "'falling'", OT_ROOT_BOTH: "'both'", OT_ROOT_RISING: "'rising'",
  OT_EVENT_STOP: "'stop'", OT_EVENT_RECORD: "'record'", OT_EVENT_HANDLE: "'handle'",
});

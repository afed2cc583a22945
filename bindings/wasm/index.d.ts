// Types of odetensor's JavaScript API (index.mjs; index.d.cts for require()).
// Checked with TypeScript 5.9 (module node16). Solution[Symbol.dispose] needs
// lib "esnext.disposable" (TypeScript >= 5.2) or skipLibCheck.
// Arrays are column-major: element [i, j, k] of a [d0, d1, d2] tensor is at
// i + d0 * (j + d1 * k).

/** Numbers accepted as input; copied into wasm memory as f64 (a Float64Array
 * over a live solution's tensor, `sol.ys.data`, is used in place; one over
 * a disposed solution's memory is refused). Plain arrays must hold numbers
 * only (a string, null or hole throws OT_ERR_DTYPE); typed arrays other than
 * Float64Array and Float32Array (Int8Array, Uint8Array, BigInt64Array, ...)
 * are refused with OT_ERR_DTYPE. */
export type NumericArray = Float64Array | Float32Array | number[] | readonly number[];

/** Return value of a callback: nothing (undefined, null) or 0 = ok, > 0 =
 * recoverable (the solver retries with a smaller step), < 0 = stop the lane
 * (lockstep: the call is made again lane by lane, and each lane whose own
 * call fails leaves its block; the others go on). Throwing also stops it, and the exception is
 * reported; so does returning NaN or anything else (a TypeError: results are
 * written in place, never returned), and returning a number that the
 * callback also wrote into its output (the expression-bodied arrow
 * `(t, y, p, dydt) => dydt[0] = ...` returns what it assigns; use a block
 * body). In 'lockstep' mode a callback must write every one of its k
 * columns: a column left unwritten at its first call fails the batch. */
export type CallbackResult = number | void;

/**
 * dydt = f(t, y, p), written in place. y [n, k] and p [np, k] are read-only
 * inputs, as in C: copies, so writing into them changes nothing; dydt [n, k]
 * is a view over wasm memory, valid only during the call. k = 1 in 'lanes' mode
 * (lane = that lane's index); in 'lockstep' mode k = the lanes of the block
 * being solved and lane = its first lane, column b being lane lane + b
 * (blocks of a size chosen from nstates unless lockstepBlock is set).
 */
export type RhsFunction = (t: number, y: Float64Array, p: Float64Array, dydt: Float64Array,
  k: number, lane: number) => CallbackResult;
/** J [n, n, k] (column-major, arrives zeroed): J[i + n * j + n * n * b] = d f_i / d y_j. */
export type JacFunction = (t: number, y: Float64Array, p: Float64Array, J: Float64Array,
  k: number, lane: number) => CallbackResult;
/** dfdp [n, np, k] (column-major, entries not written are zero):
 * dfdp[i + n * j + n * np * b] = d f_i / d p_j. With jac, solveFwdSens takes
 * each sensitivity's rhs as J s_j + dfdp_j instead of difference quotients
 * of rhs; write every lane's block (a lane left wholly unwritten fails). */
export type DfdpFunction = (t: number, y: Float64Array, p: Float64Array, dfdp: Float64Array,
  k: number, lane: number) => CallbackResult;
/** y0 [n, k] from p [np, k]: used when y0 is omitted. */
export type InitFunction = (p: Float64Array, y0: Float64Array, k: number, lane: number) => CallbackResult;
/** o [nout, k]: what the solution records instead of y. */
export type OutFunction = (t: number, y: Float64Array, p: Float64Array, o: Float64Array,
  k: number, lane: number) => CallbackResult;
/** g [nroots, k]: a sign change of any g_i is an event (by default it stops
 * the lane; rootDirections, eventActions). */
export type RootFunction = (t: number, y: Float64Array, p: Float64Array, g: Float64Array,
  k: number, lane: number) => CallbackResult;

export type Method = 'bdf' | 'adams' | 'bs32' | 'dp54' | 'verner65' | 'esdirk32' | 'esdirk43'
  | 'esdirk54' | 'imex32' | 'imex43' | 'imex54' | 'ros23' | 'rodas4' | 'rodas5p' | 'tsit5' | 'vern7';

export interface SolveOptions {
  /** Relative tolerance (default 1e-6). */
  rtol?: number;
  /** Absolute tolerance: one number, or one per state (default 1e-8). */
  atol?: number | NumericArray;
  /** The integrator (default 'bdf'). CVODE: 'bdf' (stiff) or 'adams'
   * (non-stiff), the only ones with sensitivities and the adjoint. ARKODE's
   * Runge-Kutta pairs, order(embedded order): explicit, for non-stiff
   * problems, 'bs32' (loose tolerances), 'dp54' (the usual choice, as
   * ode45), 'verner65' (tight tolerances); diagonally implicit (Newton with
   * jac), for moderately stiff problems, 'esdirk32', 'esdirk43',
   * 'esdirk54'; IMEX, for a stiff part (rhs, with jac) plus a non-stiff
   * part (rhsExplicit), 'imex32', 'imex43', 'imex54'. odetensor's own
   * per-lane methods, each lane its own steps and a dense output at tEval
   * (lanes mode; no sensitivities, adjoint, stops or roots yet):
   * Rosenbrock, for stiff problems (jac, or difference quotients), 'ros23'
   * (loose tolerances), 'rodas4', 'rodas5p'; explicit, 'tsit5', 'vern7'
   * (tight tolerances). maxOrder and
   * stabilityLimitDetection are CVODE options. */
  method?: Method;
  /** The implicit methods' linear solver (lanes mode): 'dense' (default),
   * 'band' (with bandwidths; jac then fills the band storage
   * [mupper + mlower + 1, n]: J[mupper + i - j + (mupper + mlower + 1) j] =
   * d f_i / d y_j), or 'gmres' (matrix-free; optional precondition). */
  linearSolver?: 'dense' | 'band' | 'gmres';
  /** 'band': [mupper, mlower], d f_i / d y_j nonzero only for j - i <=
   * mupper and i - j <= mlower. */
  bandwidths?: [number, number];
  /** 'gmres': Krylov vectors per linear solve (0: SUNDIALS' 5). */
  krylovDim?: number;
  /** 'lanes' (default): each lane its own solver; 'lockstep': one solver over
   * all lanes, callbacks called once for all of them. */
  mode?: 'lanes' | 'lockstep';
  /** Initial time (default 0). */
  t0?: number;
  /** First step size; 0 (default) lets CVODE estimate it. */
  firstStep?: number;
  /** Largest step size; 0 (default) means no limit. */
  maxStep?: number;
  /** Step limit (default 100000): per output interval in solveDense,
   * solveFwdSens and both passes of solveAdjoint, in all in solve(); a lane
   * that needs more fails alone (in lockstep too: in solveAdjoint its
   * block's forward pass starts again without it, or its backward pass
   * goes on without it). */
  maxSteps?: number;
  /** Highest order: 1-5 for 'bdf', 1-12 for 'adams'; 0 (default) the
   * method's own. A lower BDF order is more stable on stiff oscillations. */
  maxOrder?: number;
  /** 'bdf' only: CVODE's stability limit detection (default false), which
   * lowers the order near the stability limit (eigenvalues near the
   * imaginary axis). */
  stabilityLimitDetection?: boolean;
  /** solveFwdSens: also the sensitivities to the initial values, sens[np + i]
   * = d ys / d y0_i after the parameters' (default false). */
  sensInitial?: boolean;
  /** At most this many recorded events per lane (default 10000); a lane with
   * more fails alone, keeping them. */
  maxEvents?: number;
  /** Where an output at a stop's time (stops) stands: false (default) after
   * the stop, showing its handler's changes; true before it, the state
   * onEvent gets (NONMEM's pre-dose observation at a dose time). With true
   * a stop at t0 comes after outputs at t0, and a stop at a lane's last
   * output time is past its outputs and not taken; sensitivities and
   * solveAdjoint's loss terms at such outputs are those before the jump.
   * Handled roots are not stops: unaffected. */
  outputsBeforeStops?: boolean;
  /** rhs and jac do not read t (default false). The kernel methods ('ros23',
   * 'rodas4', 'rodas5p', 'tsit5', 'vern7': each lane its own steps) then
   * call them once for a lane group whose lanes stand at different times,
   * with the first lane's t, and the Rosenbrock methods take df/dt as 0. A
   * problem declared autonomous whose rhs reads t gets wrong answers. */
  autonomous?: boolean;
  /** The kernel methods' lane group: lanes stepped together, each its own
   * t and h (1: a lane at a time). 0 (default): 8 for an autonomous
   * problem, else 1. A lane's result does not depend on its group. */
  laneGroup?: number;
  /** 'lockstep': solve the lanes in blocks of this many, one lockstep
   * integrator each (in order: wasm here has one thread). Results depend on
   * the block size only; 0 (default): chosen from nstates alone (3 or 4
   * states: 256 lanes; 16: 32; 64 or more: 16); nbatch or more: one block. */
  lockstepBlock?: number;
  /** Sensitivity tolerances; 0 (default) lets CVODES estimate them. */
  sensRtol?: number;
  sensAtol?: number;
  /** solveAdjoint's backward pass: steps between two output times (0, the
   * default: 10 times the lane's forward steps, at least 500, at most
   * maxSteps); each lane's stats give adjSteps and adjMaxSteps. */
  adjointMaxSteps?: number;
  /** The backward pass's tolerances: both, or neither (the forward ones). */
  adjointRtol?: number;
  adjointAtol?: number;
}

export interface Problem {
  /** Number of states n >= 1. */
  nstates: number;
  /** Number of parameters np >= 0 (default 0). */
  nparams?: number;
  /** dydt = f(t, y); with an IMEX method the implicit (stiff) part. */
  rhs: RhsFunction;
  /** The explicit (non-stiff) part of an IMEX split, for 'imex32', 'imex43'
   * and 'imex54' only: dydt = rhsExplicit + rhs. */
  rhsExplicit?: RhsFunction;
  /** The Jacobian of rhs (of its implicit part with IMEX). */
  jac?: JacFunction;
  /** Progress: done of total lanes (lanes mode: after each lane; lockstep:
   * as each block reaches its output times; and every 20 ms or so while
   * lanes run, with done as it was). Return true to cancel: running
   * lanes stop at their next callback, every lane that did not finish gets status
   * 'OT_ERR_CANCELLED' with its results so far (the solution comes back, ok
   * false). A throw cancels too, and the solve throws it. */
  onProgress?: (done: number, total: number) => boolean | void;
  /** 'gmres's preconditioner, one lane a call: setup prepares P ~ I -
   * gamma J in work [nwork] (recompute your Jacobian data when jok is
   * false); solve writes z with P z = r. */
  precondition?: {
    setup: (t: number, y: Float64Array, p: Float64Array, gamma: number, jok: boolean,
      work: Float64Array, lane: number) => CallbackResult;
    solve: (t: number, y: Float64Array, p: Float64Array, gamma: number, r: Float64Array,
      z: Float64Array, work: Float64Array, lane: number) => CallbackResult;
    nwork?: number;
  };
  /** df/dp for solveFwdSens (needs jac): exact sensitivities, no extra rhs calls. */
  dfdp?: DfdpFunction;
  init?: InitFunction;
  out?: OutFunction;
  /** Number of outputs of `out` (only with `out`). */
  nout?: number;
  roots?: RootFunction;
  /** Number of root functions of `roots` (only with `roots`). */
  nroots?: number;
  /** Per root function: which crossings count (default 'both'). */
  rootDirections?: readonly ('falling' | 'both' | 'rising')[];
  /** Per root function: 'stop' the lane there (default), 'record' the event
   * and go on, or 'handle' it: record, call onEvent, go on from the state it
   * leaves (the integrator restarts). Recorded events: Solution.events. */
  eventActions?: readonly ('stop' | 'record' | 'handle')[];
  /** The handler of 'handle' roots: root `root` of lane `lane` fired at t;
   * y [n] and p [np] are that lane's state and params, writable (views valid
   * during the call). Return nothing or 0; < 0, a throw or NaN left in y
   * fails the lane alone. */
  onEvent?: (t: number, root: number, y: Float64Array, p: Float64Array, lane: number) => CallbackResult;
  /** The handler's derivatives for solveFwdSens through events: at the
   * lane's state before the event (y [n], p [np], read them only), write
   * dz [(n + np)^2] = d (y+, p+) / d (y-, p-), column-major
   * (dz[i + (n + np) * j]), which arrives as the identity, and dzdt [n + np]
   * = d (y+, p+) / dt, which arrives as zeros. Without it the jump takes
   * central differences of onEvent. */
  eventJac?: (t: number, root: number, y: Float64Array, p: Float64Array, dz: Float64Array,
    dzdt: Float64Array, lane: number) => CallbackResult;
  /** [n] (every lane) or [n, nbatch], column-major; omit to use `init`. */
  y0?: NumericArray | null;
  /** [np] (every lane) or [np, nbatch], column-major. nbatch is the lane count
   * of y0 or params (1 when both are one lane). With nparams 0: absent or
   * empty. */
  params?: NumericArray | null;
  options?: SolveOptions;
}

export interface DenseProblem extends Problem {
  /** Output times [nt], strictly increasing, tEval[0] >= t0; or per lane an
   * array of nbatch such arrays (ragged: a lane with fewer times gets NaN
   * past its count; ts is then [nt, nbatch]). */
  tEval: NumericArray | readonly NumericArray[];
  /** Scheduled stops (doses), for solveDense, solveFwdSens and solveAdjoint
   * (solve() refuses them): one array for every lane, or one per lane
   * (ragged), increasing. The integrator stops exactly at each; onEvent runs
   * with root -1 - k for a lane's stop k (y and p writable), and the lane
   * restarts. A stop at an output time comes before that output. */
  stops?: NumericArray | readonly NumericArray[];
  /** solveFwdSens and solveAdjoint only: the stops' derivatives in p, for
   * stop times that move with a parameter (a dose lag: stop = tDose +
   * p[lag]). One array of nparams * nstops values, stopsDp[k * nparams + j]
   * = d stop_k / d p_j, for every lane, or one per lane. Absent: the stops
   * are fixed. The sensitivities (and the adjoint's lambda, backward) jump
   * at every stop and handled root (the handler's derivatives from eventJac,
   * or by central differences of onEvent, so onEvent must depend on its
   * arguments alone); see ot_solve_fwd_sens_with and ot_solve_adjoint_with
   * in solution.h. */
  stopsDp?: NumericArray | readonly NumericArray[];
  /** Per-lane starts [nbatch] ('lanes' mode only); else options.t0. */
  starts?: NumericArray;
}

export interface StepsProblem extends Problem {
  /** Solve from t0 to finalTime, recording every internal step. */
  finalTime: number;
}

/** A NONMEM-style event table: CSV text (a header row of column names, one
 * record a line, `.` or empty for missing) or columns { ID: [...], TIME:
 * [...], ... } (NaN for missing). Columns: ID, TIME, EVID, AMT, RATE, DUR,
 * CMT, II, ADDL, SS, DV, MDV; any other is a covariate (see dosing.h). */
export type EventRecords = string | Readonly<Record<string, NumericArray>>;

/** How the model takes doses, per compartment (CMT c is index c - 1): the
 * parameter index (0-based, -1 none) of its bioavailability F, its lag
 * ALAG, the rate of its RATE -1 doses and the duration of its RATE -2
 * doses; postDose: observations at a dose time after the dose (default:
 * before it, NONMEM's trough); the steady states' Newton tolerance in
 * tolerance units (ssTol, default 1), iterations (ssMaxIter, 20) and a
 * constant infusion's interval (ssInterval, 1). */
export interface DosingModel {
  f?: readonly number[];
  lag?: readonly number[];
  rate?: readonly number[];
  duration?: readonly number[];
  postDose?: boolean;
  ssTol?: number;
  ssMaxIter?: number;
  ssInterval?: number;
}

export interface DoseProblem extends Problem {
  /** The event table; each subject is a lane, solved at its observations
   * (ts [nobs, nsubjects], NaN-padded). */
  records: EventRecords;
  /** The model's compartments (default nstates). */
  compartments?: number;
  /** Each compartment's state index (default: CMT c is state c - 1). */
  cmtState?: readonly number[];
  dosing?: DosingModel;
}

export interface DoseAdjointProblem extends DoseProblem {
  /** As AdjointProblem's, with nt the most observations of a subject. */
  loss: AdjointProblem['loss'];
}

/** What readRecords found: the columns, the subjects (ID, first row
 * 1-based, rows) and each covariate per subject (its first value). */
export interface RecordsInfo {
  readonly rows: number;
  readonly columns: Readonly<Record<string, Float64Array>>;
  readonly subjects: readonly { readonly id: number; readonly firstRow: number; readonly rows: number }[];
  readonly covariates: Readonly<Record<string, Float64Array>>;
  /** A covariate per subject; throws why when it has none. */
  covariate(name: string): Float64Array;
}

/** DLPack's dtype: kDLFloat (2), 64 bits, 1 lane. */
export interface DLDataType { readonly code: number; readonly bits: number; readonly lanes: number }
/** DLPack's device: kDLCPU (1), id 0. */
export interface DLDevice { readonly deviceType: number; readonly deviceId: number }

/** An output tensor in wasm memory, described the way DLPack describes one. */
export interface Tensor {
  /** Zero-copy view of the elements, valid until the solution is disposed;
   * read it again after other odetensor calls (memory growth detaches old
   * views). Throws once the solution is disposed. */
  readonly data: Float64Array;
  readonly shape: readonly number[];
  /** In elements (DLPack's unit), column-major. */
  readonly strides: readonly number[];
  readonly ndim: number;
  readonly dtype: DLDataType;
  readonly device: DLDevice;
  readonly byteOffset: number;
  /** Number of elements. */
  readonly size: number;
  /** Element [i, j, k]; throws an OdeTensorError (OT_ERR_ARG) for an index
   * outside the shape. */
  get(i: number, j?: number, k?: number): number;
  /** A copy owned by JS (survives dispose()). */
  toFloat64Array(): Float64Array;
}

export interface LaneStats {
  steps: number;
  rhsEvals: number;
  jacRhsEvals: number;
  jacEvals: number;
  linSetups: number;
  errTestFails: number;
  nonlinIters: number;
  nonlinFails: number;
  /** 'gmres': Krylov iterations (0 for the direct solvers). */
  linIters: number;
  /** The time the lane reached. */
  finalTime: number;
  /** solveAdjoint: the backward pass's steps and its limit between outputs (else 0). */
  adjSteps: number;
  adjMaxSteps: number;
}

export type StatusName =
  | 'OT_OK' | 'OT_ERR_ARG' | 'OT_ERR_LAYOUT' | 'OT_ERR_SHAPE' | 'OT_ERR_DTYPE' | 'OT_ERR_DEVICE'
  | 'OT_ERR_READ_ONLY' | 'OT_ERR_VERSION' | 'OT_ERR_OVERFLOW' | 'OT_ERR_NOMEM' | 'OT_ERR_NO_CUDA'
  | 'OT_ERR_LANES_FAILED' | 'OT_ERR_SOLVER' | 'OT_ERR_CALLBACK' | 'OT_ERR_VALUE'
  | 'OT_ERR_CANCELLED' | 'OT_ERR_MPI' | 'OT_ERR_INTERNAL' | 'OT_UNKNOWN_STATUS';

/** A solve's result. Per-lane arrays are JS copies; the tensors live in wasm
 * memory until dispose() (or `using`, or garbage collection). A solve whose
 * lanes failed still returns one (ok false); only bad input throws. */
export interface Solution {
  /** solveDense/solveFwdSens: [nt]; solve: [ntMax, nbatch], NaN past count. */
  readonly ts: Tensor;
  /** [n or nout, nt, nbatch]; NaN after a lane's last good time. */
  readonly ys: Tensor;
  /** solveFwdSens: sens[j] = d ys / d p_j, [n or nout, nt, nbatch]; else []. */
  readonly sens: readonly Tensor[];
  readonly nbatch: number;
  readonly nfailed: number;
  readonly ok: boolean;
  /** Per lane: 'OT_OK', 'OT_ERR_CALLBACK', 'OT_ERR_SOLVER'. */
  readonly status: readonly StatusName[];
  readonly statusCode: Int32Array;
  /** Per lane: '' or why it failed (a thrown callback's message first). */
  readonly message: readonly string[];
  /** Per lane: the value a callback threw, if one did. */
  readonly errors: readonly unknown[];
  /** Per lane: number of valid time points. */
  readonly count: Int32Array;
  /** Per lane: index of the root that fired, -1 if none; and its time. */
  readonly rootIndex: Int32Array;
  readonly rootTime: Float64Array;
  /** Events (every root that fired: 'stop' ones too, with the state at the
   * root), null without root functions: times
   * and roots [m, nbatch] (root indices as numbers), the state before and
   * after each [n, m, nbatch], NaN past each lane's count; m the largest
   * count (1 at least). */
  readonly events: {
    readonly times: Tensor; readonly roots: Tensor; readonly before: Tensor; readonly after: Tensor;
    readonly count: Int32Array;
  } | null;
  readonly stats: readonly LaneStats[];
  readonly disposed: boolean;
  /** Frees the wasm memory; idempotent. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/** solveAdjoint's loss term at output i (time t) of lane `lane` (k = 1: one
 * lane a call, in both modes): write g [1], dgdy [n] = d g / d y and dgdp
 * [np] = d g / d p (zeroed) in place; y and p are copies. */
export type LossFunction = (t: number, i: number, y: Float64Array, p: Float64Array,
  g: Float64Array, dgdy: Float64Array, dgdp: Float64Array, k: number, lane: number) => CallbackResult;

/** An integral term of solveAdjoint's loss, q(t, y, p) of one lane: write
 * q [1], dqdy [n], dqdp [np] (zeroed) in place. */
export type IntegrandFunction = (t: number, y: Float64Array, p: Float64Array, q: Float64Array,
  dqdy: Float64Array, dqdp: Float64Array, lane: number) => CallbackResult;

export interface AdjointProblem extends DenseProblem {
  /** A sum of squares, sum over outputs of w (o - data)^2 with o = y (or
   * out's rows): data [rows, nt] for every lane or [rows, nt, nbatch],
   * column-major, NaN for no datum; weights the same shape (default 1).
   * Or the user's loss terms (a function, or { fn }). Either may add the
   * integral of `integrand` from t0 to the last output time. */
  loss: { data: NumericArray; weights?: NumericArray; integrand?: IntegrandFunction }
    | { fn: LossFunction; integrand?: IntegrandFunction }
    | { integrand: IntegrandFunction }
    | LossFunction;
}

export interface AdjointSolution extends Solution {
  /** The loss of each lane [nbatch] (NaN for a failed lane). */
  loss: Tensor;
  /** dL/dp [np, nbatch]. */
  gradParams: Tensor;
  /** dL/dy0 [n, nbatch]. */
  gradY0: Tensor;
  /** Each lane's checkpoint memory in bytes. */
  adjointBytes: Float64Array;
}

export interface SensSolution extends Solution {}

/** An odetensor failure: status name, numeric code, the library's message
 * (naming the argument and the rule it broke); `cause` is the exception a
 * callback threw, when one did. */
export declare class OdeTensorError extends Error {
  constructor(status: StatusName, code: number, message: string, options?: { cause?: unknown });
  readonly name: 'OdeTensorError';
  readonly status: StatusName;
  readonly code: number;
}

export interface OdeTensor {
  /** Library version, e.g. '0.1.0'. */
  readonly version: string;
  readonly OdeTensorError: typeof OdeTensorError;
  /** ys [n|nout, nt, nbatch] at the times tEval. */
  solveDense(problem: DenseProblem): Solution;
  /** Every internal step to finalTime: ts [ntMax, nbatch], ys [n|nout, ntMax, nbatch]. */
  solve(problem: StepsProblem): Solution;
  /** As solveDense, plus forward sensitivities (needs nparams >= 1). */
  solveFwdSens(problem: DenseProblem): SensSolution;
  /** As solveDense plus the loss and its gradients per lane by the adjoint
   * method (CVODES); lanes or lockstep mode, not on CUDA. */
  solveAdjoint(problem: AdjointProblem): AdjointSolution;
  /** Each subject of an event table as a lane at its observation times,
   * its doses (boluses, infusions, resets, steady states, F and ALAG)
   * applied around the model. */
  solveDoses(problem: DoseProblem): Solution;
  /** As solveDoses, plus sensitivities through every dose. */
  solveDosesFwdSens(problem: DoseProblem): SensSolution;
  /** As solveDoses, plus the loss and its gradients by the adjoint. */
  solveDosesAdjoint(problem: DoseAdjointProblem): AdjointSolution;
  /** Reads an event table (throws the row and column of a bad record). */
  readRecords(records: EventRecords): RecordsInfo;
  /** The name of a status code ('OT_UNKNOWN_STATUS' for an integer that is
   * none); throws an OdeTensorError for a non-integer. */
  statusName(code: number): StatusName;
  /** Size of wasm memory in bytes. */
  heapSize(): number;
  /** Bytes currently allocated in wasm memory. */
  heapInUse(): number;
  /** Bytes of the wasm (C) stack in use: 0 outside solves. */
  stackInUse(): number;
}

export interface LoadOptions {
  /** A new module instance with its own memory instead of the shared one. */
  fresh?: boolean;
}

/** Loads (once) and instantiates the wasm module. */
export declare function load(options?: LoadOptions): Promise<OdeTensor>;
export default load;

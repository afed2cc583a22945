// odetensor for JavaScript: many lanes of one ODE system solved with SUNDIALS
// CVODE(S), compiled to WebAssembly. Runs in Node (ESM here, CommonJS in
// index.cjs) and in browsers and workers: dist/odetensor.mjs (made by
// `make wasm`) holds the emscripten glue and the wasm binary in one file.
//
//   import { load } from 'odetensor';
//   const ot = await load();
//   using sol = ot.solveDense({ nstates, nparams, rhs, y0, params, tEval, options });
//   sol.ys.data  // Float64Array view, [n, nt, nbatch] column-major
//
// Memory: a solution's tensors live in wasm memory until sol.dispose() (also
// [Symbol.dispose], so `using` frees it; a FinalizationRegistry frees a
// forgotten one eventually). `tensor.data` is a zero-copy view, re-made on
// every read when wasm memory has grown in between; keep the solution alive
// while using it, or take a copy with tensor.toFloat64Array().
import createOdeTensorModule from './dist/odetensor.mjs';
import {
  INT_MAX, OdeTensorError, callbackEntry, describe, eventJacEntry, handlerEntry, jsWords, lossEntries, preconditionEntries, progressEntry,
  show,
} from './callbacks.mjs';
import { ACTIONS, DIRECTIONS, LINEAR_SOLVERS, METHODS, MODES, STATUS } from './constants.mjs';
import { dosingIn, planIn, recordsIn, recordsOut } from './doses.mjs';
import { Solution, live } from './solution.mjs';

export { OdeTensorError };

const {
  OT_ERR_ARG, OT_ERR_SHAPE, OT_ERR_DTYPE, OT_ERR_OVERFLOW, OT_ERR_NOMEM, OT_ERR_LANES_FAILED,
  OT_ERR_CANCELLED, OT_ERR_CALLBACK,
} = STATUS;
// wasm32 memory ends at 2 GiB (emscripten's MAXIMUM_MEMORY with growth): no
// input larger than that can be copied in, and byte counts must fit an int.
const MAX_INPUT = Math.floor(INT_MAX / 8);
// Solves started from callbacks of running solves: each level holds about
// 6 KB of the 5 MB wasm stack, which has no overflow check of its own.
const MAX_NESTING = 64;
// Frames of headroom() that must fit on the JS stack before a solve enters
// wasm (see #enter): far more than the solver's frames and a callback's entry.
const HEADROOM_FRAMES = 256;
const OPTIONS = ['rtol', 'atol', 'method', 'mode', 't0', 'firstStep', 'maxSteps', 'maxStep', 'lockstepBlock',
  'sensRtol', 'sensAtol', 'sensInitial', 'maxOrder', 'stabilityLimitDetection', 'maxEvents',
  'outputsBeforeStops', 'autonomous', 'laneGroup', 'linearSolver', 'bandwidths', 'krylovDim', 'adjointMaxSteps', 'adjointRtol', 'adjointAtol'];
// otw_solve_with's kinds.
const KINDS_WITH = { dense: 0, sens: 1, adjoint: 2 };
const SPEC_KEYS = ['nstates', 'nparams', 'rhs', 'rhsExplicit', 'jac', 'precondition', 'onProgress', 'dfdp', 'init', 'out', 'nout', 'roots', 'nroots',
  'rootDirections', 'eventActions', 'onEvent', 'eventJac', 'stops', 'stopsDp', 'starts', 'y0', 'params', 'tEval',
  'finalTime', 'options', 'loss', 'records', 'compartments', 'cmtState', 'dosing'];

// Recursion as a probe for free JS stack: throws a RangeError when less is left.
function headroom(n) {
  return n > 0 ? headroom(n - 1) + 1 : 0;
}

class OdeTensor {
  #m; #slot; #sp0; #depth = 0;

  constructor(m) {
    this.#m = m;
    this.#slot = m._otw_malloc(8); // out-parameter of the create/solve calls
    if (this.#slot === 0) throw new OdeTensorError('OT_ERR_NOMEM', OT_ERR_NOMEM, 'load: out of wasm memory');
    this.#sp0 = m.stackSave();
    // The first call of an export goes through a JS stub that then replaces
    // itself; make that happen now, so that #enter's stackRestore needs the
    // least stack when it is needed.
    m.stackRestore(this.#sp0);
    this.version = m.UTF8ToString(m._otw_version());
    this.OdeTensorError = OdeTensorError;
  }

  /** Solves every lane at the times tEval: ys [n|nout, nt, nbatch]. */
  solveDense(spec) { return this.#run('dense', spec); }
  /** Every internal step up to finalTime: ts [ntMax, nbatch], ys [n|nout, ntMax,
   * nbatch], NaN past each lane's count. */
  solve(spec) { return this.#run('steps', spec); }
  /** As solveDense plus sens[j] = d ys / d p_j, [n|nout, nt, nbatch] each. */
  solveFwdSens(spec) { return this.#run('sens', spec); }
  /** As solveDense plus, per lane, a loss and its gradients by the adjoint
   * method: loss [nbatch], gradParams [np, nbatch], gradY0 [n, nbatch].
   * spec.loss: { data, weights } (a sum of squares; data [rows, nt] or
   * [rows, nt, nbatch] column-major, NaN: no term) or a function
   * (t, i, y, p, g, dgdy, dgdp, k, lane), called for one lane (k = 1). */
  solveAdjoint(spec) { return this.#run('adjoint', spec); }
  /** Each subject of NONMEM-style records (spec.records: CSV text or columns
   * { ID: [...], ... }) as a lane at its observation times, its doses applied
   * around the model: spec.compartments (default nstates), spec.cmtState,
   * spec.dosing { f, lag, rate, duration: per-compartment parameter indices
   * (-1 none), postDose, ssTol, ssMaxIter, ssInterval }; no tEval or stops.
   * ts [nobs, nsubjects]; as solveDense, solveFwdSens and solveAdjoint. */
  solveDoses(spec) { return this.#run('dense', spec, true); }
  solveDosesFwdSens(spec) { return this.#run('sens', spec, true); }
  solveDosesAdjoint(spec) { return this.#run('adjoint', spec, true); }
  /** Records' contents: { rows, columns, subjects [{ id, firstRow, rows }],
   * covariates, covariate(name) }; throws the row and column of a bad one. */
  readRecords(input) {
    const held = [], err = (c, msg) => this.#error(c, msg);
    try {
      return recordsOut(this.#m, recordsIn(this.#m, input, err, (st) => this.#check(st), held, this.#slot), err);
    } finally {
      for (const release of held.reverse()) release();
    }
  }

  /** The name of a status code ('OT_ERR_SHAPE'); 'OT_UNKNOWN_STATUS' for an
   * integer that is none. */
  statusName(code) {
    if (!Number.isInteger(code) || Math.abs(code) > INT_MAX)
      throw new OdeTensorError('OT_ERR_ARG', OT_ERR_ARG, `statusName: ${show(code)}; expected an integer status code`);
    return this.#m.UTF8ToString(this.#m._otw_status_name(code));
  }
  /** The wasm memory size in bytes (it only grows). */
  heapSize() { return this.#m.HEAP8.length; }
  /** Bytes allocated by malloc in wasm memory now (mallinfo). */
  heapInUse() { return this.#m._otw_heap_in_use(); }
  /** Bytes of the wasm (C) stack in use: 0 outside solves. */
  stackInUse() { return this.#sp0 - this.#m.stackSave(); }

  #error(code, message, cause) {
    return new OdeTensorError(this.statusName(code), code, message,
      cause === undefined ? undefined : { cause });
  }

  #check(st) {
    if (st !== 0) throw this.#error(st, jsWords(this.#m.UTF8ToString(this.#m._otw_last_error())));
  }

  #int(v, name, min) {
    if (!Number.isInteger(v) || v < min || v > INT_MAX)
      throw this.#error(OT_ERR_ARG, `${name}: ${show(v)}; expected an integer >= ${min} (at most ${INT_MAX})`);
    return v;
  }

  #num(v, name) {
    if (typeof v !== 'number')
      throw this.#error(OT_ERR_ARG, `${name}: ${show(v)}; expected a number`);
    return v;
  }

  // An f64 array in wasm memory: the caller's own when it already lives there,
  // else a copy freed by `held`. Returns [pointer, columns].
  // Everything is checked before wasm memory is touched: the kind, the
  // length, the size, and for plain arrays each element (read once).
  #input(x, rows, name, rowsName, held) {
    const m = this.#m;
    if (x === undefined || x === null) return [0, 0];
    const len = this.#length(x, name);
    if (len === 0 || len % rows !== 0)
      throw this.#error(OT_ERR_SHAPE, `${name}: length ${len} is not a positive multiple of ${rowsName} (${rows})`);
    if (len > MAX_INPUT)
      throw this.#error(OT_ERR_OVERFLOW, `${name}: ${len} values (${len * 8} bytes) do not fit in wasm32 memory (2 GiB)`);
    let src = x;
    if (Array.isArray(x)) {
      src = new Float64Array(len);
      for (let i = 0; i < len; i++) {
        const v = x[i];
        if (typeof v !== 'number')
          throw this.#error(OT_ERR_DTYPE, `${name}[${i}]: ${show(v)}; expected a number`);
        src[i] = v;
      }
    } else if (x.buffer === m.HEAPF64.buffer) {
      const start = x.byteOffset, end = start + x.byteLength;
      for (const [a, b] of live(m))
        if (x instanceof Float64Array && start >= a && end <= b)
          return [start, len / rows]; // a live solution's memory: used in place
      throw this.#error(OT_ERR_ARG, `${name}: a view of wasm memory that no live solution owns ` +
        '(its solution was disposed?); pass a copy (tensor.toFloat64Array())');
    }
    const ptr = m._otw_malloc(len * 8);
    if (ptr === 0) throw this.#error(OT_ERR_NOMEM, `${name}: cannot allocate ${len * 8} bytes in wasm memory`);
    held.push(() => m._otw_free(ptr));
    m.HEAPF64.set(src, ptr >> 3);
    return [ptr, len / rows];
  }

  // The length of an input array, after checking that it is one of numbers.
  #length(x, name) {
    if (ArrayBuffer.isView(x) && !(x instanceof DataView)) {
      if (!(x instanceof Float64Array || x instanceof Float32Array))
        throw this.#error(OT_ERR_DTYPE, `${name}: ${show(x)}; expected a Float64Array, Float32Array ` +
          'or array of numbers (integer typed arrays are refused: convert with Float64Array.from)');
      return x.length;
    }
    if (!Array.isArray(x))
      throw this.#error(OT_ERR_ARG, `${name}: ${show(x)}; expected a Float64Array, Float32Array or array of numbers`);
    const len = x.length; // a Proxy of an array can claim any length
    if (!Number.isSafeInteger(len) || len < 0)
      throw this.#error(OT_ERR_SHAPE, `${name}: length ${show(len)}; expected an array length`);
    return len;
  }

  // A JS callback as a wasm table entry (callbacks.mjs), after its type check.
  #callback(f, name, rows, sig, dims, thrown, held) {
    if (f === undefined || f === null) return 0;
    if (typeof f !== 'function') throw this.#error(OT_ERR_ARG, `${name}: expected a function, not ${show(f)}`);
    return callbackEntry(this.#m, f, name, rows, sig, dims, thrown, held);
  }

  // solveAdjoint's loss: [data, dataLanes, weights, lossFn, integrand] for the
  // shim. A function: the loss terms (t, i, y, p, g, dgdy, dgdp, k, lane),
  // writing g [k] and dgdy [n, k], dgdp [np, k] (zeroed) in place; or an
  // object { data, weights } (data [rows, nt] or [rows, nt, nbatch]
  // column-major, rows = nout with out, else nstates; weights the same or
  // absent) or { fn } (the function), either with an optional integrand
  // (t, y, p, q, dqdy, dqdp, lane) for an integral term; { integrand }
  // alone is an integral loss.
  #loss(loss, dims, nt, nout, thrown, held) {
    const { n } = dims;
    const spec = typeof loss === 'function' ? { fn: loss } : loss;
    if (spec === null || typeof spec !== 'object' || Array.isArray(spec))
      throw this.#error(OT_ERR_ARG, `loss: ${show(loss)}; expected { data, weights } (a sum of squares), a function (t, i, y, p, g, dgdy, dgdp, k, lane), or { fn } / { integrand }`);
    for (const key of Object.keys(spec))
      if (!['data', 'weights', 'fn', 'integrand'].includes(key))
        throw this.#error(OT_ERR_ARG, `loss: unknown field '${key}' (known: data, weights, fn, integrand)`);
    const has = (x) => x !== undefined && x !== null;
    for (const key of ['fn', 'integrand'])
      if (has(spec[key]) && typeof spec[key] !== 'function')
        throw this.#error(OT_ERR_ARG, `loss.${key}: expected a function, not ${show(spec[key])}`);
    if (!has(spec.data) && !has(spec.fn) && !has(spec.integrand))
      throw this.#error(OT_ERR_ARG, `loss: ${show(loss)}; expected { data, weights } (a sum of squares), a function (t, i, y, p, g, dgdy, dgdp, k, lane), or { fn } / { integrand }`);
    let dp = 0, lanes = 1, wp = 0;
    const [lf, qf] = lossEntries(this.#m, spec, dims, thrown, held);
    if (has(spec.data)) {
      const rows = nout > 0 ? nout : n, per = rows * nt;
      const len = this.#length(spec.data, 'loss.data');
      if (per === 0 || len % per !== 0)
        throw this.#error(OT_ERR_SHAPE, `loss.data: ${len} values; expected ${rows} x ${nt} (rows x nt) or ${rows} x ${nt} x nbatch`);
      lanes = len / per;
      [dp] = this.#input(spec.data, per, 'loss.data', 'rows x nt', held);
      if (has(spec.weights)) {
        if (this.#length(spec.weights, 'loss.weights') !== len)
          throw this.#error(OT_ERR_SHAPE, `loss.weights: ${this.#length(spec.weights, 'loss.weights')} values; expected ${len}, as data`);
        [wp] = this.#input(spec.weights, per, 'loss.weights', 'rows x nt', held);
      }
    } else if (has(spec.weights)) {
      throw this.#error(OT_ERR_ARG, 'loss.weights: only with loss.data');
    }
    return [dp, lanes, wp, lf, qf];
  }

  // 'gmres's preconditioner { setup(t, y, p, gamma, jok, work, lane),
  // solve(t, y, p, gamma, r, z, work, lane), nwork }: setup prepares P ~ I -
  // gamma J in work [nwork] (recomputing its Jacobian data when jok is
  // false), solve writes z with P z = r; y, p, r are copies, z and work
  // writable views. Lanes mode (one lane a call).
  #precondition(P, spec, dims, thrown, held) {
    const m = this.#m;
    if (spec === null || typeof spec !== 'object' || typeof spec.setup !== 'function' ||
        typeof spec.solve !== 'function')
      throw this.#error(OT_ERR_ARG, `precondition: ${show(spec)}; expected { setup, solve, nwork }`);
    for (const key of Object.keys(spec))
      if (!['setup', 'solve', 'nwork'].includes(key))
        throw this.#error(OT_ERR_ARG, `precondition: unknown field '${key}' (known: setup, solve, nwork)`);
    const nwork = this.#num(spec.nwork ?? 0, 'precondition.nwork');
    if (!Number.isInteger(nwork) || nwork < 0 || nwork > INT_MAX)
      throw this.#error(OT_ERR_ARG, `precondition.nwork: ${nwork}; expected an integer >= 0`);
    const [sf, vf] = preconditionEntries(m, spec, nwork, dims, thrown, held);
    this.#check(m._otw_set_preconditioner(P, sf, vf, nwork));
  }

  // The event handler as a wasm table entry: onEvent(t, root, y, p, lane)
  // gets that lane's y [n] and p [np] as writable views (its changes are the
  // point), calls it; a throw or a Promise fails the lane.
  #handler(f, dims, thrown, held) {
    if (typeof f !== 'function') throw this.#error(OT_ERR_ARG, `onEvent: expected a function, not ${show(f)}`);
    return handlerEntry(this.#m, f, dims, thrown, held);
  }

  #options(P, o, n, held) {
    const m = this.#m;
    if (o === undefined || o === null) return false;
    if (typeof o !== 'object') throw this.#error(OT_ERR_ARG, `options: ${show(o)}; expected an object`);
    o = Object.assign(Object.create(null), o); // own properties only (see #solve)
    for (const key of Object.keys(o))
      if (!OPTIONS.includes(key))
        throw this.#error(OT_ERR_ARG, `options: unknown option '${key}' (known: ${OPTIONS.join(', ')})`);
    const pick = (key, table) => {
      const v = o[key];
      if (typeof v !== 'string' || !Object.hasOwn(table, v))
        throw this.#error(OT_ERR_ARG, `options.${key}: ${show(v)}; expected ${Object.keys(table).map((k) => `'${k}'`).join(' or ')}`);
      return table[v];
    };
    if (o.method !== undefined) this.#check(m._otw_set_method(P, pick('method', METHODS)));
    if (o.mode !== undefined) this.#check(m._otw_set_mode(P, pick('mode', MODES)));
    if (o.linearSolver !== undefined)
      this.#check(m._otw_set_linear_solver(P, pick('linearSolver', LINEAR_SOLVERS)));
    if (o.bandwidths !== undefined) {
      const bw = o.bandwidths;
      if (!Array.isArray(bw) || bw.length !== 2 || !bw.every((x) => Number.isInteger(x) && x >= 0 && x <= INT_MAX))
        throw this.#error(OT_ERR_ARG, `options.bandwidths: ${show(bw)}; expected [mupper, mlower], integers >= 0 (d f_i / d y_j nonzero only for j - i <= mupper and i - j <= mlower)`);
      this.#check(m._otw_set_bandwidths(P, bw[0], bw[1]));
    }
    if (o.krylovDim !== undefined) {
      const v = this.#num(o.krylovDim, 'options.krylovDim');
      if (!Number.isInteger(v) || Math.abs(v) > INT_MAX)
        throw this.#error(OT_ERR_ARG, `options.krylovDim: ${v}; expected an integer >= 0 (0: SUNDIALS' 5)`);
      this.#check(m._otw_set_krylov_dim(P, v));
    }
    if (o.rtol !== undefined) this.#check(m._otw_set_rtol(P, this.#num(o.rtol, 'options.rtol')));
    if (typeof o.atol === 'number') this.#check(m._otw_set_atol(P, o.atol));
    else if (o.atol === null)
      throw this.#error(OT_ERR_ARG, 'options.atol: null; expected a number or an array of one per state');
    else if (o.atol !== undefined) {
      const [ptr, cols] = this.#input(o.atol, n, 'options.atol', 'nstates', held);
      if (cols !== 1)
        throw this.#error(OT_ERR_SHAPE, `options.atol: length ${o.atol.length}; expected a number or ${n} values (one per state)`);
      this.#check(m._otw_set_atol_vector(P, ptr));
    }
    if (o.t0 !== undefined) this.#check(m._otw_set_t0(P, this.#num(o.t0, 'options.t0')));
    if (o.firstStep !== undefined) this.#check(m._otw_set_first_step(P, this.#num(o.firstStep, 'options.firstStep')));
    if (o.maxStep !== undefined) this.#check(m._otw_set_max_step(P, this.#num(o.maxStep, 'options.maxStep')));
    if (o.maxSteps !== undefined) {
      const v = this.#num(o.maxSteps, 'options.maxSteps');
      if (!Number.isInteger(v) || Math.abs(v) > INT_MAX)
        throw this.#error(OT_ERR_ARG, `options.maxSteps: ${v}; expected an integer > 0`);
      this.#check(m._otw_set_max_steps(P, v));
    }
    if (o.lockstepBlock !== undefined) {
      const v = this.#num(o.lockstepBlock, 'options.lockstepBlock');
      if (!Number.isInteger(v) || Math.abs(v) > INT_MAX)
        throw this.#error(OT_ERR_ARG, `options.lockstepBlock: ${v}; expected an integer >= 0 (0: chosen from nstates)`);
      this.#check(m._otw_set_lockstep_block(P, v));
    }
    if (o.maxEvents !== undefined) {
      const v = this.#num(o.maxEvents, 'options.maxEvents');
      if (!Number.isInteger(v) || Math.abs(v) > INT_MAX)
        throw this.#error(OT_ERR_ARG, `options.maxEvents: ${v}; expected an integer >= 1`);
      this.#check(m._otw_set_max_events(P, v));
    }
    if (o.outputsBeforeStops !== undefined) {
      if (typeof o.outputsBeforeStops !== 'boolean')
        throw this.#error(OT_ERR_ARG, `options.outputsBeforeStops: ${show(o.outputsBeforeStops)}; expected true or false`);
      this.#check(m._otw_set_outputs_before_stops(P, o.outputsBeforeStops ? 1 : 0));
    }
    if (o.autonomous !== undefined) {
      if (typeof o.autonomous !== 'boolean')
        throw this.#error(OT_ERR_ARG, `options.autonomous: ${show(o.autonomous)}; expected true or false`);
      this.#check(m._otw_set_autonomous(P, o.autonomous ? 1 : 0));
    }
    if (o.laneGroup !== undefined) {
      const v = this.#num(o.laneGroup, 'options.laneGroup');
      if (!Number.isInteger(v) || Math.abs(v) > INT_MAX)
        throw this.#error(OT_ERR_ARG, `options.laneGroup: ${v}; expected an integer >= 0 (0: chosen)`);
      this.#check(m._otw_set_lane_group(P, v));
    }
    if (o.maxOrder !== undefined) {
      const v = this.#num(o.maxOrder, 'options.maxOrder');
      if (!Number.isInteger(v) || Math.abs(v) > INT_MAX)
        throw this.#error(OT_ERR_ARG, `options.maxOrder: ${v}; expected an integer (1-5 for 'bdf', 1-12 for 'adams', 0: the method's own)`);
      this.#check(m._otw_set_max_order(P, v));
    }
    if (o.sensInitial !== undefined) {
      if (typeof o.sensInitial !== 'boolean')
        throw this.#error(OT_ERR_ARG, `options.sensInitial: ${show(o.sensInitial)}; expected true or false`);
      this.#check(m._otw_set_sens_initial(P, o.sensInitial ? 1 : 0));
    }
    if (o.stabilityLimitDetection !== undefined) {
      if (typeof o.stabilityLimitDetection !== 'boolean')
        throw this.#error(OT_ERR_ARG, `options.stabilityLimitDetection: ${show(o.stabilityLimitDetection)}; expected true or false`);
      this.#check(m._otw_set_stability_limit_detection(P, o.stabilityLimitDetection ? 1 : 0));
    }
    if (o.adjointMaxSteps !== undefined) {
      const v = this.#num(o.adjointMaxSteps, 'options.adjointMaxSteps');
      if (!Number.isInteger(v) || Math.abs(v) > INT_MAX)
        throw this.#error(OT_ERR_ARG, `options.adjointMaxSteps: ${v}; expected an integer >= 0 (0: from the forward pass)`);
      this.#check(m._otw_set_adjoint_steps(P, v));
    }
    if (o.adjointRtol !== undefined || o.adjointAtol !== undefined) {
      const tol = (key) => (o[key] === undefined ? 0 : this.#num(o[key], `options.${key}`));
      this.#check(m._otw_set_adjoint_tolerances(P, tol('adjointRtol'), tol('adjointAtol')));
    }
    if (o.sensRtol !== undefined || o.sensAtol !== undefined) {
      const sensTol = (key) => (o[key] === undefined ? 0 : this.#num(o[key], `options.${key}`));
      this.#check(m._otw_set_sens_tolerances(P, sensTol('sensRtol'), sensTol('sensAtol')));
    }
    return o.mode === 'lockstep';
  }

  #run(kind, spec, doses = false) {
    if (this.#depth >= MAX_NESTING)
      throw this.#error(OT_ERR_ARG, `solve: ${MAX_NESTING} solves already running (started from callbacks); not nesting deeper`);
    this.#depth++;
    const lost = { sp: 0 }; // set while #enter has a stack pointer to restore
    try {
      return this.#solve(kind, spec, lost, doses);
    } finally {
      this.#depth--;
      if (lost.sp !== 0) this.#m.stackRestore(lost.sp); // #enter had no stack left to do it
    }
  }

  #solve(kind, spec, lost, doses) {
    const m = this.#m, slot = this.#slot;
    if (spec === null || typeof spec !== 'object')
      throw this.#error(OT_ERR_ARG, `solve: ${show(spec)}; expected an object {nstates, nparams, rhs, y0, params, ...}`);
    // Own properties only, each read once: a field inherited from a
    // prototype (Object.prototype.rtol = ..., say) must not change a solve.
    spec = Object.assign(Object.create(null), spec);
    for (const key of Object.keys(spec))
      if (!SPEC_KEYS.includes(key))
        throw this.#error(OT_ERR_ARG, `solve: unknown field '${key}' (known: ${SPEC_KEYS.join(', ')})`);
    const n = this.#int(spec.nstates, 'nstates', 1);
    const np = this.#int(spec.nparams ?? 0, 'nparams', 0);
    // A count goes with its callback: one without the other is a mistake.
    const count = (f, fname, c, cname) => {
      if (f !== undefined && f !== null) return this.#int(c, cname, 1);
      if (c !== undefined && c !== null)
        throw this.#error(OT_ERR_ARG, `${cname}: ${show(c)} given without ${fname}`);
      return 0;
    };
    const nout = count(spec.out, 'out', spec.nout, 'nout');
    const nroots = count(spec.roots, 'roots', spec.nroots, 'nroots');
    const has = (f) => f !== undefined && f !== null;
    const held = [];
    const thrown = { lanes: new Map(), batch: undefined };
    const progressError = { error: undefined }; // onProgress threw: the solve throws it
    const dims = { n, np, lockstep: false };
    try {
      const cb = (f, name, rows) => this.#callback(f, name, rows, 'idiiiiii', dims, thrown, held);
      if (typeof spec.rhs !== 'function')
        throw this.#error(OT_ERR_ARG, `rhs: expected a function (t, y, p, dydt) => void, not ${show(spec.rhs)}`);
      this.#check(m._otw_problem_new(slot, n, np, cb(spec.rhs, 'rhs', n), 0));
      const P = m.HEAP32[slot >> 2];
      held.push(() => m._otw_problem_free(P));
      if (has(spec.rhsExplicit))
        this.#check(m._otw_set_rhs_explicit(P, cb(spec.rhsExplicit, 'rhsExplicit', n)));
      if (has(spec.jac)) this.#check(m._otw_set_jac(P, cb(spec.jac, 'jac', n * n)));
      if (has(spec.dfdp)) this.#check(m._otw_set_dfdp(P, cb(spec.dfdp, 'dfdp', n * np)));
      if (has(spec.out)) this.#check(m._otw_set_out(P, nout, cb(spec.out, 'out', nout)));
      if (has(spec.roots)) this.#check(m._otw_set_roots(P, nroots, cb(spec.roots, 'roots', nroots)));
      for (const [key, table, setter] of [['rootDirections', DIRECTIONS, '_otw_set_root_directions'],
        ['eventActions', ACTIONS, '_otw_set_event_actions']]) {
        const v = spec[key];
        if (v === undefined || v === null) continue;
        if (!Array.isArray(v) || v.length !== nroots)
          throw this.#error(OT_ERR_ARG, `${key}: ${show(v)}; expected an array of ${nroots} (one per root function) of ${Object.keys(table).map((k) => `'${k}'`).join(', ')}`);
        const codes = v.map((x, i) => {
          if (typeof x !== 'string' || !Object.hasOwn(table, x))
            throw this.#error(OT_ERR_ARG, `${key}[${i}]: ${show(x)}; expected ${Object.keys(table).map((k) => `'${k}'`).join(' or ')}`);
          return table[x];
        });
        const ptr = m._otw_malloc(4 * nroots);
        if (ptr === 0) throw this.#error(OT_ERR_NOMEM, `${key}: cannot allocate ${4 * nroots} bytes`);
        held.push(() => m._otw_free(ptr));
        m.HEAP32.set(codes, ptr >> 2);
        this.#check(m[setter](P, ptr));
      }
      if (has(spec.onEvent)) this.#check(m._otw_set_event_handler(P, this.#handler(spec.onEvent, dims, thrown, held)));
      if (has(spec.eventJac)) {
        if (typeof spec.eventJac !== 'function')
          throw this.#error(OT_ERR_ARG, `eventJac: expected a function, not ${show(spec.eventJac)}`);
        this.#check(m._otw_set_event_jac(P, eventJacEntry(m, spec.eventJac, dims, thrown, held)));
      }
      if (has(spec.precondition)) this.#precondition(P, spec.precondition, dims, thrown, held);
      if (has(spec.onProgress)) {
        const f = spec.onProgress;
        if (typeof f !== 'function')
          throw this.#error(OT_ERR_ARG, `onProgress: expected a function (done, total) => boolean | void, not ${show(f)}`);
        const idx = progressEntry(m, f, progressError, held);
        this.#check(m._otw_set_progress(P, idx));
      }
      if (has(spec.init))
        this.#check(m._otw_set_init(P, this.#callback(spec.init, 'init', n, 'iiiiii', dims, thrown, held)));
      dims.lockstep = this.#options(P, spec.options, n, held);
      const [y0, y0c] = this.#input(spec.y0, n, 'y0', 'nstates', held);
      let pp = 0, pc = 0;
      if (np > 0) [pp, pc] = this.#input(spec.params, np, 'params', 'nparams', held);
      else if (has(spec.params) && this.#length(spec.params, 'params') > 0)
        throw this.#error(OT_ERR_SHAPE, `params: ${spec.params.length} values, but nparams is 0`);
      if (kind === 'steps' && spec.tEval !== undefined)
        throw this.#error(OT_ERR_ARG, 'tEval: solve() records every step up to finalTime; use solveDense() for output times');
      if (kind !== 'steps' && spec.finalTime !== undefined)
        throw this.#error(OT_ERR_ARG, 'finalTime: only for solve(); solveDense() and solveFwdSens() take tEval');
      let call, tEvalPtr;
      if (kind !== 'adjoint' && has(spec.loss))
        throw this.#error(OT_ERR_ARG, 'loss: only for solveAdjoint()');
      // The solve at output times tp [nt, cols]: dense, sens or adjoint.
      const timed = (tp, nt) => {
        if (kind === 'dense') return () => m._otw_solve_dense(slot, P, y0, y0c, pp, pc, tp, nt);
        if (kind === 'sens') return () => m._otw_solve_fwd_sens(slot, P, y0, y0c, pp, pc, tp, nt);
        const [dp, dl, wp, lf, qf] = this.#loss(spec.loss, dims, nt, nout, thrown, held);
        this.#check(m._otw_set_loss(P, dp, dl, wp, lf, qf));
        return () => m._otw_solve_adjoint(slot, P, y0, y0c, pp, pc, tp, nt);
      };
      for (const key of doses ? ['tEval', 'stops', 'starts', 'stopsDp'] : ['records', 'compartments', 'cmtState', 'dosing'])
        if (has(spec[key]))
          throw this.#error(OT_ERR_ARG, doses ? `${key}: the records give each subject's doses and observation times; leave it out`
            : `${key}: only for solveDoses(), solveDosesFwdSens() and solveDosesAdjoint()`);
      if (doses) {
        const err = (c, msg) => this.#error(c, msg), chk = (st) => this.#check(st);
        const R = recordsIn(m, spec.records, err, chk, held, slot);
        const [plan, ncmt, nobs] = planIn(m, R, spec, n, err, chk, held, slot);
        const d = dosingIn(m, spec.dosing, ncmt, err, held);
        if (kind === 'adjoint') this.#check(m._otw_set_loss(P, ...this.#loss(spec.loss, dims, nobs, nout, thrown, held)));
        call = () => m._otw_solve_doses(slot, P, KINDS_WITH[kind], plan, ...d, y0, y0c, pp, pc);
      } else if (kind === 'steps') {
        for (const key of ['stops', 'starts', 'stopsDp'])
          if (has(spec[key]))
            throw this.#error(OT_ERR_ARG, `${key}: solve() records every step from t = 0; stops and starts are for solveDense(), solveFwdSens() and solveAdjoint()`);
        const tf = this.#num(spec.finalTime, 'finalTime');
        call = () => m._otw_solve(slot, P, y0, y0c, pp, pc, tf);
      } else {
        if (!has(spec.tEval)) throw this.#error(OT_ERR_ARG, 'tEval: required (the output times)');
        // Per-lane times: an array of arrays (one per lane, ragged), NaN-padded
        // into [nt, nbatch] column-major.
        let tEval = spec.tEval;
        if (Array.isArray(tEval) && tEval.length > 0 && typeof tEval[0] === 'object' && tEval[0] !== null) {
          const cols = tEval.length;
          const rows = Math.max(...tEval.map((c, b) => this.#length(c, `tEval[${b}]`)));
          const flat = new Float64Array(rows * cols).fill(NaN);
          tEval.forEach((c, b) => { for (let i = 0; i < c.length; i++) flat[b * rows + i] = this.#num(c[i], `tEval[${b}][${i}]`); });
          this.#check(m._otw_set_t_cols(P, cols));
          tEval = flat;
          const [tp] = this.#input(tEval, rows, 'tEval', 'nt', held);
          tEvalPtr = [tp, rows];
          call = timed(tp, rows);
        }
        const [tp, nt] = call ? [0, 0] : this.#input(tEval, 1, 'tEval', 'one', held);
        if (!call) call = timed(tp, nt);
        const grad = kind === 'sens' || kind === 'adjoint';
        if (has(spec.stopsDp) && (!grad || !has(spec.stops)))
          throw this.#error(OT_ERR_ARG, !grad
            ? 'stopsDp: the stops\' derivatives in p are for solveFwdSens() and solveAdjoint(); leave it out'
            : 'stopsDp: given, but there are no stops');
        if (has(spec.stops) || has(spec.starts)) {
          // The times solveDense() got: [rows, cols] column-major.
          const [tpp, tnt] = tEvalPtr ?? [tp, nt];
          let sp = 0, sn = 0, sc = 1, t0p = 0, t0n = 0;
          if (has(spec.stops)) {
            const nested = Array.isArray(spec.stops) && spec.stops.length > 0 &&
              typeof spec.stops[0] === 'object' && spec.stops[0] !== null;
            let flat = spec.stops;
            if (nested) {
              sc = spec.stops.length;
              sn = Math.max(...spec.stops.map((c, b) => this.#length(c, `stops[${b}]`)));
              flat = new Float64Array(sn * sc).fill(NaN);
              spec.stops.forEach((c, b) => { for (let i = 0; i < c.length; i++) flat[b * sn + i] = this.#num(c[i], `stops[${b}][${i}]`); });
            } else {
              sn = this.#length(flat, 'stops');
            }
            if (sn === 0) // the C rule's words (stops [0] is no schedule)
              throw this.#error(OT_ERR_SHAPE, `stops: ${nested ? 'every lane\'s list is empty' : 'length 0'}; ` +
                'give at least one stop time (n >= 1), or leave stops out');
            [sp] = this.#input(flat, sn, 'stops', 'its length', held);
          }
          if (has(spec.starts)) [t0p, t0n] = [this.#input(spec.starts, 1, 'starts', 'one', held)[0], this.#length(spec.starts, 'starts')];
          let dpp = 0, dpc = 1;
          if (has(spec.stopsDp)) [dpp, dpc] = this.#stopsDp(spec.stopsDp, np, sn, held);
          call = () => m._otw_solve_with(slot, P, KINDS_WITH[kind], y0, y0c, pp, pc, tpp, tnt,
            t0p, t0n, sp, sn, sc, dpp, dpc);
        }
      }
      const st = this.#enter(call, lost);
      const made = st === 0 || st === OT_ERR_LANES_FAILED || st === OT_ERR_CANCELLED;
      if (progressError.error !== undefined) { // it cancelled the solve: its error, not a result
        if (made) m._otw_solution_free(m.HEAP32[slot >> 2]);
        throw this.#error(OT_ERR_CANCELLED, `onProgress threw ${describe(progressError.error)}; the solve was cancelled`, progressError.error);
      }
      if (!made) {
        const t = thrown.lanes.values().next().value ?? thrown.batch;
        let msg = jsWords(m.UTF8ToString(m._otw_last_error()));
        if (t) msg = `${t.name} threw ${describe(t.error)}; ${msg}`;
        throw this.#error(st, msg, t?.error);
      }
      const sol = m.HEAP32[slot >> 2];
      try {
        return new Solution(m, sol, thrown);
      } catch (e) {
        m._otw_solution_free(sol);
        throw e;
      }
    } finally {
      for (const release of held.reverse()) release();
    }
  }

  // stopsDp: d stop_k / d p_j as one array [np * nstops] (k-major:
  // stopsDp[k * np + j]) for every lane, or one such array per lane (ragged
  // with its stops: entries past a lane's own are not read), into
  // [np, sn, cols] column-major. Returns [pointer, cols].
  #stopsDp(v, np, sn, held) {
    if (np === 0) throw this.#error(OT_ERR_ARG, 'stopsDp: nparams is 0; there is no p to move the stops');
    const nested = Array.isArray(v) && v.length > 0 && typeof v[0] === 'object' && v[0] !== null;
    const lanes = nested ? v : [v], cols = lanes.length;
    const flat = new Float64Array(np * sn * cols);
    lanes.forEach((c, b) => {
      const name = nested ? `stopsDp[${b}]` : 'stopsDp', len = this.#length(c, name);
      if (len > np * sn || len % Math.max(np, 1) !== 0)
        throw this.#error(OT_ERR_SHAPE, `${name}: ${len} values; needs nparams (${np}) per stop, ` +
          `at most ${sn} stops (stopsDp[k * nparams + j] = d stop_k / d p_j)`);
      for (let i = 0; i < len; i++) flat[b * np * sn + i] = this.#num(c[i], `${name}[${i}]`);
    });
    const [ptr] = this.#input(flat, np * sn, 'stopsDp', 'nparams * nstops', held);
    return [ptr, cols];
  }

  // Runs a C solve, which calls back into JS. The callback wrappers catch
  // everything, but when the JS stack is nearly full, entering one (or a wasm
  // function) throws a RangeError that unwinds the C frames without running
  // their cleanup: the solver's memory is lost (about 10 KB) and the wasm
  // stack pointer stays where the deepest frame left it (wasm's stack then
  // creeps down into static data, one lost solve at a time). So: refuse to
  // start with too little JS stack left; should it happen anyway, restore the
  // stack pointer and report the solve as abandoned. If even stackRestore
  // finds no stack here, #run's finally, a few frames up, restores it. (A
  // solve nested in a callback restores the value at its own start, the
  // outer C frames' level; their returns then restore theirs.)
  #enter(call, lost) {
    const m = this.#m, sp = m.stackSave();
    try {
      headroom(HEADROOM_FRAMES);
    } catch (e) {
      throw this.#error(OT_ERR_NOMEM,
        'solve: too little JS stack left to run the solver; call it from a shallower stack', e);
    }
    try {
      return call();
    } catch (e) {
      lost.sp = sp;
      m.stackRestore(sp);
      lost.sp = 0;
      throw this.#error(OT_ERR_CALLBACK,
        `solve: abandoned: ${describe(e)} unwound through wasm (the JS stack is nearly full); call solve from a shallower stack`, e);
    }
  }
}

let shared = null;

/** Loads the wasm module: `const ot = await load()`. Calls share one instance
 * unless `{ fresh: true }` asks for a new one (with its own memory). */
export function load(options = {}) {
  const make = () => createOdeTensorModule().then((m) => new OdeTensor(m));
  if (options && options.fresh) return make();
  if (shared === null) {
    shared = make();
    shared.catch(() => { shared = null; });
  }
  return shared;
}

export default load;

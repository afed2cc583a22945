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

const OT_ERR_ARG = -1;
const OT_ERR_SHAPE = -3;
const OT_ERR_LANES_FAILED = -11;
const METHODS = { bdf: 1, adams: 2 };
const MODES = { lanes: 1, lockstep: 2 };
const OPTIONS = ['rtol', 'atol', 'method', 'mode', 't0', 'firstStep', 'maxSteps', 'maxStep',
  'sensRtol', 'sensAtol'];
const SPEC_KEYS = ['nstates', 'nparams', 'rhs', 'jac', 'init', 'out', 'nout', 'roots', 'nroots',
  'y0', 'params', 'tEval', 'finalTime', 'options'];
const STATS = ['steps', 'rhsEvals', 'jacRhsEvals', 'jacEvals', 'linSetups', 'errTestFails',
  'nonlinIters', 'nonlinFails', 'finalTime'];
// DLPack's codes: kDLFloat, kDLCPU.
const DL_FLOAT64 = Object.freeze({ code: 2, bits: 64, lanes: 1 });
const DL_CPU = Object.freeze({ deviceType: 1, deviceId: 0 });

/** An odetensor failure: `status` is the code's name ('OT_ERR_SHAPE'), `code`
 * its number (-3), `message` the library's message naming the argument. */
export class OdeTensorError extends Error {
  constructor(status, code, message, options) {
    super(message, options);
    this.name = 'OdeTensorError';
    this.status = status;
    this.code = code;
  }
}

// Frees solutions that were never disposed, once they are garbage. The held
// value must not reach the solution: [module, pointer], made outside any
// closure scope that holds `this`.
const finalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(([m, ptr]) => m._otw_solution_free(ptr)) : null;

function describe(e) {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

// A callback's return value as odetensor's code: 0 ok, > 0 retry, < 0 stop.
// Called inside the wrapper's try: a Promise (an async callback) fails.
function returnCode(r, name) {
  if (typeof r === 'number') {
    if (!(r === r) || r === 0) return 0;
    const i = Math.trunc(Math.max(-2147483647, Math.min(2147483647, r)));
    return i !== 0 ? i : (r > 0 ? 1 : -1);
  }
  if (r !== null && typeof r === 'object' && typeof r.then === 'function')
    throw new TypeError(`${name} returned a Promise; callbacks must be synchronous`);
  return 0;
}

/** An output tensor: DLPack-shaped metadata over wasm memory (f64, CPU,
 * column-major; strides in elements). */
class Tensor {
  #m; #owner; #ptr; #view = null;

  constructor(m, owner, ptr, info) {
    this.#m = m;
    this.#owner = owner;
    this.#ptr = ptr;
    const ndim = info[1];
    this.ndim = ndim;
    this.shape = Object.freeze(Array.from(info.subarray(2, 2 + ndim)));
    this.strides = Object.freeze(Array.from(info.subarray(5, 5 + ndim)));
    this.dtype = DL_FLOAT64;
    this.device = DL_CPU;
    this.byteOffset = 0;
    this.size = this.shape.reduce((a, b) => a * b, 1);
  }

  /** Zero-copy Float64Array over the tensor's elements (column-major). */
  get data() {
    if (this.#owner.disposed) throw new Error('odetensor: this solution was disposed');
    const buf = this.#m.HEAPF64.buffer;
    if (this.#view === null || this.#view.buffer !== buf)
      this.#view = new Float64Array(buf, this.#ptr, this.size);
    return this.#view;
  }

  /** Element [i, j, k] (missing indices are 0). */
  get(i, j = 0, k = 0) {
    const s = this.strides;
    return this.data[i * (s[0] ?? 1) + j * (s[1] ?? 0) + k * (s[2] ?? 0)];
  }

  /** A copy that belongs to JS and outlives dispose(). */
  toFloat64Array() { return this.data.slice(); }
}

/** The result of a solve: output tensors plus per-lane status and statistics.
 * The lane arrays are plain JS copies; the tensors live in wasm memory until
 * dispose(). */
class Solution {
  #m; #ptr;

  constructor(m, ptr, thrown) {
    this.#m = m;
    this.#ptr = ptr;
    const nb = m._otw_solution_nbatch(ptr);
    const nsens = m._otw_solution_nsens(ptr);
    this.nbatch = nb;
    const info = m._otw_malloc(32);
    const lanes = m._otw_malloc(nb * 12 + nb * 80 + 8);
    try {
      const tensor = (which) => {
        const data = m._otw_tensor(ptr, which, info);
        return data ? new Tensor(m, this, data, m.HEAP32.slice(info >> 2, (info >> 2) + 8)) : null;
      };
      this.ts = tensor(0);
      this.ys = tensor(1);
      this.sens = Array.from({ length: nsens }, (_, j) => tensor(2 + j));
      const st = lanes, cnt = st + 4 * nb, ri = cnt + 4 * nb;
      const rt = (ri + 4 * nb + 7) & ~7, stats = rt + 8 * nb;
      m._otw_lanes(ptr, st, cnt, ri, rt, stats);
      this.statusCode = m.HEAP32.slice(st >> 2, (st >> 2) + nb);
      this.count = m.HEAP32.slice(cnt >> 2, (cnt >> 2) + nb);
      this.rootIndex = m.HEAP32.slice(ri >> 2, (ri >> 2) + nb);
      this.rootTime = m.HEAPF64.slice(rt >> 3, (rt >> 3) + nb);
      const sv = m.HEAPF64.slice(stats >> 3, (stats >> 3) + 9 * nb);
      this.stats = Array.from({ length: nb }, (_, b) =>
        Object.fromEntries(STATS.map((key, i) => [key, sv[9 * b + i]])));
    } finally {
      m._otw_free(lanes);
      m._otw_free(info);
    }
    this.status = Array.from(this.statusCode, (c) => m.UTF8ToString(m._otw_status_name(c)));
    this.errors = new Array(nb).fill(undefined);
    this.message = Array.from({ length: nb }, (_, b) => {
      const msg = m.UTF8ToString(m._otw_lane_message(ptr, b));
      const t = thrown.batch ?? thrown.lanes.get(b);
      if (t === undefined || this.statusCode[b] === 0) return msg;
      this.errors[b] = t.error;
      return `${t.name} threw ${describe(t.error)}; ${msg}`;
    });
    this.nfailed = this.statusCode.reduce((a, c) => a + (c !== 0), 0);
    this.ok = this.nfailed === 0;
    finalizer?.register(this, [m, ptr], this);
  }

  get disposed() { return this.#ptr === 0; }

  /** Frees the solution's wasm memory; its tensors' data can no longer be
   * read. Idempotent. */
  dispose() {
    if (this.#ptr === 0) return;
    finalizer?.unregister(this);
    this.#m._otw_solution_free(this.#ptr);
    this.#ptr = 0;
  }
}
if (typeof Symbol.dispose === 'symbol')
  Solution.prototype[Symbol.dispose] = function dispose() { this.dispose(); };

class OdeTensor {
  #m; #slot;

  constructor(m) {
    this.#m = m;
    this.#slot = m._otw_malloc(8); // out-parameter of the create/solve calls
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

  /** The name of a status code ('OT_ERR_SHAPE'). */
  statusName(code) { return this.#m.UTF8ToString(this.#m._otw_status_name(code)); }
  /** The wasm memory size in bytes (it only grows). */
  heapSize() { return this.#m.HEAP8.length; }
  /** Bytes allocated by malloc in wasm memory now (mallinfo). */
  heapInUse() { return this.#m._otw_heap_in_use(); }

  #error(code, message, cause) {
    return new OdeTensorError(this.statusName(code), code, message,
      cause === undefined ? undefined : { cause });
  }

  #check(st) {
    if (st !== 0) throw this.#error(st, this.#m.UTF8ToString(this.#m._otw_last_error()));
  }

  #int(v, name, min) {
    if (!Number.isInteger(v) || v < min || v > 2147483647)
      throw this.#error(OT_ERR_ARG, `${name}: ${String(v)}; expected an integer >= ${min}`);
    return v;
  }

  #num(v, name) {
    if (typeof v !== 'number')
      throw this.#error(OT_ERR_ARG, `${name}: ${String(v)}; expected a number`);
    return v;
  }

  // An f64 array in wasm memory: the caller's own when it already lives there,
  // else a copy freed by `held`. Returns [pointer, columns].
  #input(x, rows, name, rowsName, held) {
    const m = this.#m;
    if (x === undefined || x === null) return [0, 0];
    if (!(Array.isArray(x) || (ArrayBuffer.isView(x) && !(x instanceof DataView))))
      throw this.#error(OT_ERR_ARG, `${name}: expected a Float64Array, Float32Array or array of numbers`);
    const len = x.length;
    if (len === 0 || len % rows !== 0)
      throw this.#error(OT_ERR_SHAPE, `${name}: length ${len} is not a positive multiple of ${rowsName} (${rows})`);
    if (x instanceof Float64Array && x.buffer === m.HEAPF64.buffer) return [x.byteOffset, len / rows];
    const ptr = m._otw_malloc(len * 8);
    if (ptr === 0) throw this.#error(-9, `${name}: cannot allocate ${len * 8} bytes in wasm memory`);
    held.push(() => m._otw_free(ptr));
    m.HEAPF64.set(x, ptr >> 3);
    return [ptr, len / rows];
  }

  // A JS callback as a wasm table entry (removed by `held`). Exceptions fail
  // the lane (lanes mode) or the batch (lockstep) and are kept for its message.
  #callback(f, name, rows, sig, dims, thrown, held) {
    if (f === undefined || f === null) return 0;
    if (typeof f !== 'function') throw this.#error(OT_ERR_ARG, `${name}: expected a function`);
    const m = this.#m;
    const { n, np } = dims;
    const fail = (e, lane) => {
      const t = { name, error: e };
      if (dims.lockstep) thrown.batch ??= t;
      else if (!thrown.lanes.has(lane)) thrown.lanes.set(lane, t);
      return -1;
    };
    const wrapped = sig === 'iiiiii'
      ? (pp, yp, k, lane) => {
        try {
          const buf = m.HEAPF64.buffer;
          return returnCode(f(new Float64Array(buf, pp, np * k), new Float64Array(buf, yp, n * k), k, lane), name);
        } catch (e) { return fail(e, lane); }
      }
      : (t, yp, pp, op, k, lane) => {
        try {
          const buf = m.HEAPF64.buffer;
          return returnCode(f(t, new Float64Array(buf, yp, n * k), new Float64Array(buf, pp, np * k),
            new Float64Array(buf, op, rows * k), k, lane), name);
        } catch (e) { return fail(e, lane); }
      };
    const idx = m.addFunction(wrapped, sig);
    held.push(() => m.removeFunction(idx));
    return idx;
  }

  #options(P, o, n, held) {
    const m = this.#m;
    if (o === undefined || o === null) return false;
    if (typeof o !== 'object') throw this.#error(OT_ERR_ARG, 'options: expected an object');
    for (const key of Object.keys(o))
      if (!OPTIONS.includes(key))
        throw this.#error(OT_ERR_ARG, `options: unknown option '${key}' (known: ${OPTIONS.join(', ')})`);
    const pick = (key, table) => {
      const v = table[o[key]];
      if (v === undefined)
        throw this.#error(OT_ERR_ARG, `options.${key}: '${o[key]}'; expected ${Object.keys(table).map((k) => `'${k}'`).join(' or ')}`);
      return v;
    };
    if (o.method !== undefined) this.#check(m._otw_set_method(P, pick('method', METHODS)));
    if (o.mode !== undefined) this.#check(m._otw_set_mode(P, pick('mode', MODES)));
    if (o.rtol !== undefined) this.#check(m._otw_set_rtol(P, this.#num(o.rtol, 'options.rtol')));
    if (typeof o.atol === 'number') this.#check(m._otw_set_atol(P, o.atol));
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
      if (!Number.isInteger(v) || Math.abs(v) > 2147483647)
        throw this.#error(OT_ERR_ARG, `options.maxSteps: ${v}; expected an integer > 0`);
      this.#check(m._otw_set_max_steps(P, v));
    }
    if (o.sensRtol !== undefined || o.sensAtol !== undefined)
      this.#check(m._otw_set_sens_tolerances(P, this.#num(o.sensRtol ?? 0, 'options.sensRtol'),
        this.#num(o.sensAtol ?? 0, 'options.sensAtol')));
    return o.mode === 'lockstep';
  }

  #run(kind, spec) {
    const m = this.#m, slot = this.#slot;
    if (spec === null || typeof spec !== 'object')
      throw this.#error(OT_ERR_ARG, 'solve: expected an object {nstates, nparams, rhs, y0, params, ...}');
    for (const key of Object.keys(spec))
      if (!SPEC_KEYS.includes(key))
        throw this.#error(OT_ERR_ARG, `solve: unknown field '${key}' (known: ${SPEC_KEYS.join(', ')})`);
    const n = this.#int(spec.nstates, 'nstates', 1);
    const np = this.#int(spec.nparams ?? 0, 'nparams', 0);
    const nout = spec.out ? this.#int(spec.nout, 'nout', 1) : 0;
    const nroots = spec.roots ? this.#int(spec.nroots, 'nroots', 1) : 0;
    const held = [];
    const thrown = { lanes: new Map(), batch: undefined };
    const dims = { n, np, lockstep: false };
    try {
      const cb = (f, name, rows) => this.#callback(f, name, rows, 'idiiiiii', dims, thrown, held);
      if (typeof spec.rhs !== 'function') throw this.#error(OT_ERR_ARG, 'rhs: expected a function (t, y, p, dydt) => void');
      this.#check(m._otw_problem_new(slot, n, np, cb(spec.rhs, 'rhs', n), 0));
      const P = m.HEAP32[slot >> 2];
      held.push(() => m._otw_problem_free(P));
      if (spec.jac) this.#check(m._otw_set_jac(P, cb(spec.jac, 'jac', n * n)));
      if (spec.out) this.#check(m._otw_set_out(P, nout, cb(spec.out, 'out', nout)));
      if (spec.roots) this.#check(m._otw_set_roots(P, nroots, cb(spec.roots, 'roots', nroots)));
      if (spec.init)
        this.#check(m._otw_set_init(P, this.#callback(spec.init, 'init', n, 'iiiiii', dims, thrown, held)));
      dims.lockstep = this.#options(P, spec.options, n, held);
      const [y0, y0c] = this.#input(spec.y0, n, 'y0', 'nstates', held);
      const [pp, pc] = np > 0 ? this.#input(spec.params, np, 'params', 'nparams', held) : [0, 0];
      if (kind === 'steps' && spec.tEval !== undefined)
        throw this.#error(OT_ERR_ARG, 'tEval: solve() records every step up to finalTime; use solveDense() for output times');
      if (kind !== 'steps' && spec.finalTime !== undefined)
        throw this.#error(OT_ERR_ARG, 'finalTime: only for solve(); solveDense() and solveFwdSens() take tEval');
      let st;
      if (kind === 'steps') {
        const tf = this.#num(spec.finalTime, 'finalTime');
        st = m._otw_solve(slot, P, y0, y0c, pp, pc, tf);
      } else {
        if (spec.tEval === undefined || spec.tEval === null) throw this.#error(OT_ERR_ARG, 'tEval: required (the output times)');
        const [tp, nt] = this.#input(spec.tEval, 1, 'tEval', 'one', held);
        st = (kind === 'dense' ? m._otw_solve_dense : m._otw_solve_fwd_sens)(slot, P, y0, y0c, pp, pc, tp, nt);
      }
      if (st !== 0 && st !== OT_ERR_LANES_FAILED) {
        const t = thrown.batch ?? thrown.lanes.values().next().value;
        let msg = m.UTF8ToString(m._otw_last_error());
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

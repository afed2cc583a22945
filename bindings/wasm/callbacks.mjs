// Values crossing into and out of JS callbacks, for index.mjs: the error
// class, messages about values, the views and copies callbacks get, their
// return codes, and the wasm table entries that wrap each kind of callback.

import { C_NAMES } from './constants.mjs';

export const INT_MAX = 2147483647;

// What C's messages call the problem's setters, entry points and enumerators,
// in the JS API's words: "(ot_ode_set_event_handler)" reads "(onEvent)".
// constants.test.mjs checks that every setter in ode.h has its JS name here
// or is C-only.
export const SETTER_NAMES = Object.freeze({
  __proto__: null, event_handler: 'onEvent', event_jac: 'eventJac', jac: 'jac', dfdp: 'dfdp', init: 'init', out: 'out',
  roots: 'roots', root_directions: 'rootDirections', event_actions: 'eventActions',
  rhs_explicit: 'rhsExplicit', preconditioner: 'precondition', progress: 'onProgress',
  sens_initial: 'options.sensInitial', mode: 'options.mode', method: 'options.method',
  linear_solver: 'options.linearSolver', bandwidths: 'options.bandwidths',
  krylov_dim: 'options.krylovDim', max_order: 'options.maxOrder',
  stability_limit_detection: 'options.stabilityLimitDetection',
  lockstep_block: 'options.lockstepBlock', max_events: 'options.maxEvents',
  outputs_before_stops: 'options.outputsBeforeStops',
  autonomous: 'options.autonomous', lane_group: 'options.laneGroup',
  rhs_lanes: 'rhs', jac_lanes: 'jac',
  max_steps: 'options.maxSteps', first_step: 'options.firstStep', max_step: 'options.maxStep',
  rtol: 'options.rtol', atol: 'options.atol', t0: 'options.t0',
  sens_tolerances: 'options.sensRtol and options.sensAtol',
  adjoint_steps: 'options.adjointMaxSteps',
  adjoint_tolerances: 'options.adjointRtol and options.adjointAtol',
});
const ENTRY_NAMES = Object.freeze({
  __proto__: null, ot_solve_dense: 'solveDense', ot_solve_dense_with: 'solveDense',
  ot_solve: 'solve', ot_solve_fwd_sens: 'solveFwdSens', ot_solve_adjoint: 'solveAdjoint',
  ot_loss_squares: 'loss.data', ot_loss_custom: 'loss.fn',
});

/** A message of the C library in the JS API's words. */
export function jsWords(text) {
  return text
    .replace(/\bot_ode_set_([a-z_0-9]+)\b/g, (w, s) => SETTER_NAMES[s] ?? w)
    .replace(/\bot_(solve|loss)[a-z_]*\b/g, (w) => ENTRY_NAMES[w] ?? w)
    .replace(/\bOT_[A-Z0-9_]+\b(?!\*)/g, (w) => C_NAMES[w] ?? w);
}

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

// Any value as a short text for a message. Never throws and never calls the
// value's own methods (a symbol, a null-prototype object or a throwing
// toString must not turn an argument error into a TypeError).
export function show(v) {
  try {
    switch (typeof v) {
    case 'string': return `'${v.length > 40 ? `${v.slice(0, 40)}...` : v}'`;
    case 'bigint': return `${v}n (a BigInt)`;
    case 'symbol': return `a symbol`;
    case 'function': return 'a function';
    case 'object':
      if (v === null) return 'null';
      if (Array.isArray(v)) return `an array of length ${v.length}`;
      if (ArrayBuffer.isView(v)) return `a ${Object.prototype.toString.call(v).slice(8, -1)}`;
      return 'an object';
    default: return String(v); // number, boolean, undefined
    }
  } catch {
    return 'a value';
  }
}

// A thrown value as text: 'RangeError: boom', the string itself, or show().
export function describe(e) {
  try {
    if (e instanceof Error) return `${e.name}: ${e.message}`;
    return typeof e === 'string' ? e : show(e);
  } catch {
    return show(e);
  }
}

// A callback's return value as odetensor's code: 0 ok, > 0 retry, < 0 stop.
// Called inside the wrapper's try, so what it throws fails the lane: a
// Promise (an async callback), NaN, and anything but a number or nothing
// (an array of results, say: results are written in place).
// Float64Array views over wasm memory for one callback argument, reused while
// the pointer and length repeat: CVODE hands a callback the same few vectors
// again and again (and a lane's params for all of its calls), so a small
// round-robin cache turns a view allocation per argument per call into a few
// compares. Memory growth replaces the heap's buffer and empties the cache.
// A view is valid only during the call (index.d.ts), as before.
export function viewCache(size = 8) {
  const ptrs = new Array(size).fill(-1), lens = new Array(size).fill(-1);
  const views = new Array(size).fill(null);
  let buf = null, next = 0, last = 0;
  return (b, ptr, len) => {
    if (ptrs[last] === ptr && lens[last] === len && b === buf) return views[last];
    if (b !== buf) {
      buf = b;
      ptrs.fill(-1);
    }
    for (let i = 0; i < size; i++)
      if (ptrs[i] === ptr && lens[i] === len) return views[(last = i)];
    const v = new Float64Array(b, ptr, len);
    ptrs[next] = ptr;
    lens[next] = len;
    views[next] = v;
    last = next;
    next = (next + 1) % size;
    return v;
  };
}

// A JS-owned Float64Array holding a copy of src, reused while the length
// repeats (it does for a whole solve).
export function copier() {
  let buf = new Float64Array(0);
  return (src) => {
    if (buf.length !== src.length) buf = new Float64Array(src.length);
    buf.set(src);
    return buf;
  };
}

export function returnCode(r, name, out) {
  if (r === undefined || r === null) return 0;
  if (typeof r === 'number') {
    if (r === 0) return 0;
    // `(t, y, p, dydt) => dydt[0] = ...` returns what it assigns: a result
    // taken for a code (> 0: retry, < 0: stop) made the lane fail with
    // "rhs returned 1". A number the callback also wrote is that slip.
    if (out !== undefined && out.includes(r))
      throw new TypeError(`${name} returned ${r}, a value it also wrote into its output: an arrow ` +
        'function `(...) => out[i] = ...` returns what it assigns. Use a block body `(...) => { out[i] = ...; }`; ' +
        'a returned number means retry (> 0) or stop (< 0)');
    if (r !== r) throw new TypeError(`${name} returned NaN; expected nothing, 0, > 0 (retry) or < 0 (stop)`);
    const i = Math.trunc(Math.max(-INT_MAX, Math.min(INT_MAX, r)));
    return i !== 0 ? i : (r > 0 ? 1 : -1);
  }
  if (typeof r === 'object' && typeof r.then === 'function') {
    // Its rejection, if it comes, is this failure already: mark it handled,
    // or Node ends the process on the unhandled rejection after the solve.
    try { r.then(undefined, () => {}); } catch { /* a thenable that throws */ }
    throw new TypeError(`${name} returned a Promise; callbacks must be synchronous`);
  }
  throw new TypeError(`${name} returned ${show(r)}; write the results into the output array in place and return nothing or a number`);
}

// ---- Callbacks as wasm table entries ---------------------------------------
// Each is removed again by `held` when its solve is over. A callback that
// throws fails its lane (in lockstep: the lane whose own call throws, or
// the whole block when none does), and is kept under its name for the
// message; the solver gets -1.

function tableEntry(m, fn, sig, held) {
  const idx = m.addFunction(fn, sig);
  held.push(() => m.removeFunction(idx));
  return idx;
}

// dims: { lockstep } read at each failure (the mode is set after the
// entries are made), or null for callbacks that fail their lane in either.
// A lockstep call over several lanes that throws is the block's (the core
// then calls it again lane by lane, and the lane whose own call throws is
// the one that fails); k = 1 is one lane's own call.
function failer(thrown, dims) {
  return (name, lane, error, k = 1) => {
    if (dims?.lockstep && k !== 1) thrown.batch ??= { name, error };
    else if (!thrown.lanes.has(lane)) thrown.lanes.set(lane, { name, error });
    return -1;
  };
}

// A solve nested in a callback can grow wasm memory, which detaches the
// views the callback wrote into: what it wrote is then lost.
function checkNotGrown(m, b, name, nestedIn = 'it', lost = 'results') {
  if (m.HEAPF64.buffer !== b)
    throw new Error(`${name}: wasm memory grew during the call (a solve nested in ${nestedIn}?); its ${lost} were lost`);
}

const f64 = (b, ptr, len) => new Float64Array(b, ptr, ptr ? len : 0);

/** rhs, rhsExplicit, jac, dfdp, out, roots (sig 'idiiiiii': (t, y, p, out,
 * k, lane), out rows x k) or init ('iiiiii': (p, y0, k, lane)). */
export function callbackEntry(m, f, name, rows, sig, dims, thrown, held) {
  const { n, np } = dims;
  const fail = failer(thrown, dims);
  // One cache of views per argument: the callback sees the same few
  // solver vectors over and over, and a fresh view per call is most of
  // what crossing into JS costs.
  const yv = viewCache(), pv = viewCache(), ov = viewCache();
  // Wasm memory that grows during the call (a solve nested in the
  // callback) detaches the views the callback holds: its writes after
  // that are lost. The callback is a function of its inputs, so it runs
  // again on fresh views; growing memory twice in a row fails the lane.
  const call = (once) => {
    let b = m.HEAPF64.buffer, r = once(b);
    if (m.HEAPF64.buffer !== b) {
      b = m.HEAPF64.buffer;
      r = once(b);
      if (m.HEAPF64.buffer !== b)
        throw new Error(`${name}: wasm memory grew during the call twice (a solve nested in the ` +
          'callback?), detaching its arrays; its results would be lost');
    }
    return r;
  };
  // y and p are inputs, read-only as C's const views: the callback gets
  // copies (one memcpy each), so a write to them (a rhs that clamps y)
  // cannot change the solver's state behind its back.
  const yc = copier(), pc = copier();
  const wrapped = sig === 'iiiiii'
    ? (pp, yp, k, lane) => {
      try {
        let o;
        const r = call((b) => f(pc(pv(b, pp, np * k)), (o = ov(b, yp, n * k)), k, lane));
        return returnCode(r, name, o);
      } catch (e) { return fail(name, lane, e, k); }
    }
    : (t, yp, pp, op, k, lane) => {
      try {
        let o;
        const r = call((b) => f(t, yc(yv(b, yp, n * k)), pc(pv(b, pp, np * k)), (o = ov(b, op, rows * k)), k, lane));
        return returnCode(r, name, o);
      } catch (e) { return fail(name, lane, e, k); }
    };
  return tableEntry(m, wrapped, sig, held);
}

/** solveAdjoint's loss terms (spec.fn: (t, i, y, p, g, dgdy, dgdp, k,
 * lane)) and integrand (spec.integrand: (t, y, p, q, dqdy, dqdp, lane)):
 * [loss entry, integrand entry], 0 for one not given. */
export function lossEntries(m, spec, dims, thrown, held) {
  const { n, np } = dims;
  const fail = failer(thrown, dims);
  const has = (x) => x !== undefined && x !== null;
  let lf = 0, qf = 0;
  if (has(spec.fn)) {
    const f = spec.fn;
    lf = tableEntry(m, (t, i, yp, pp, gp, dyp, dpp, k, lane) => {
      try {
        const b = m.HEAPF64.buffer;
        const r = f(t, i, new Float64Array(b, yp, n * k).slice(), f64(b, pp, np * k).slice(),
          new Float64Array(b, gp, k), new Float64Array(b, dyp, n * k), f64(b, dpp, np * k), k, lane);
        checkNotGrown(m, b, 'loss');
        return returnCode(r, 'loss');
      } catch (e) { return fail('loss', lane, e); }
    }, 'idiiiiiiiii', held);
  }
  if (has(spec.integrand)) {
    const f = spec.integrand;
    qf = tableEntry(m, (t, yp, pp, qp, dyp, dpp, lane) => {
      try {
        const b = m.HEAPF64.buffer;
        const r = f(t, new Float64Array(b, yp, n).slice(), f64(b, pp, np).slice(),
          new Float64Array(b, qp, 1), new Float64Array(b, dyp, n), f64(b, dpp, np), lane);
        checkNotGrown(m, b, 'integrand');
        return returnCode(r, 'integrand');
      } catch (e) { return fail('integrand', lane, e); }
    }, 'idiiiiiii', held);
  }
  return [lf, qf];
}

/** 'gmres's preconditioner (lanes mode, one lane a call): setup(t, y, p,
 * gamma, jok, work, lane) and solve(t, y, p, gamma, r, z, work, lane); y, p,
 * r are copies, z and work [nwork] writable views. [setup, solve] entries. */
export function preconditionEntries(m, spec, nwork, dims, thrown, held) {
  const { n, np } = dims;
  const fail = failer(thrown, null);
  const setup = tableEntry(m, (t, yp, pp, gamma, jok, wp, lane) => {
    try {
      const b = m.HEAPF64.buffer;
      const r = spec.setup(t, f64(b, yp, n).slice(), f64(b, pp, np).slice(), gamma, jok !== 0,
        f64(b, wp, nwork), lane);
      checkNotGrown(m, b, 'precondition.setup');
      return returnCode(r, 'precondition.setup');
    } catch (e) { return fail('precondition.setup', lane, e); }
  }, 'idiidiiii', held);
  const solve = tableEntry(m, (t, yp, pp, gamma, rp, zp, wp, lane) => {
    try {
      const b = m.HEAPF64.buffer;
      const r = spec.solve(t, f64(b, yp, n).slice(), f64(b, pp, np).slice(), gamma,
        f64(b, rp, n).slice(), f64(b, zp, n), f64(b, wp, nwork), lane);
      checkNotGrown(m, b, 'precondition.solve');
      return returnCode(r, 'precondition.solve');
    } catch (e) { return fail('precondition.solve', lane, e); }
  }, 'idiidiiiii', held);
  return [setup, solve];
}

/** onEvent(t, root, y, p, lane): that lane's y [n] and p [np] as writable
 * views (its changes are the point); a throw or a Promise fails the lane
 * alone, in lockstep too. */
export function handlerEntry(m, f, dims, thrown, held) {
  const { n, np } = dims;
  const fail = failer(thrown, null);
  return tableEntry(m, (t, root, lane, yp, pp) => {
    try {
      const b = m.HEAPF64.buffer;
      const r = f(t, root, new Float64Array(b, yp, n), f64(b, pp, np), lane);
      checkNotGrown(m, b, 'onEvent', 'the handler', 'changes');
      return returnCode(r, 'onEvent');
    } catch (e) { return fail('onEvent', lane, e); }
  }, 'idiiiii', held);
}

/** eventJac(t, root, y, p, dz, dzdt, lane): the handler's derivatives at
 * the lane's state before the event (y [n], p [np]), into dz [(n + np)^2]
 * column-major (the identity) and dzdt [n + np] (zeros). */
export function eventJacEntry(m, f, dims, thrown, held) {
  const { n, np } = dims, w = n + np;
  const fail = failer(thrown, null);
  return tableEntry(m, (t, root, lane, yp, pp, dzp, dtp) => {
    try {
      const b = m.HEAPF64.buffer;
      const r = f(t, root, new Float64Array(b, yp, n), f64(b, pp, np), new Float64Array(b, dzp, w * w),
        new Float64Array(b, dtp, w), lane);
      checkNotGrown(m, b, 'eventJac', 'the event Jacobian', 'changes');
      return returnCode(r, 'eventJac');
    } catch (e) { return fail('eventJac', lane, e); }
  }, 'idiiiiiii', held);
}

/** onProgress(done, total): true cancels; a throw cancels too, kept in
 * progressError.error for the solve to throw (its results are freed). */
export function progressEntry(m, f, progressError, held) {
  return tableEntry(m, (done, total) => {
    try {
      return f(done, total) === true ? 1 : 0;
    } catch (e) {
      progressError.error = e;
      return 1;
    }
  }, 'iddi', held);
}

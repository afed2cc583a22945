// Values crossing into and out of JS callbacks, for index.mjs: the error
// class, messages about values, the views and copies callbacks get, and
// their return codes.

export const INT_MAX = 2147483647;

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

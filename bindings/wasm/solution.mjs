// The result of a solve as the JS API hands it out: output tensors over
// wasm memory, and the lanes' status and statistics (index.mjs makes them).
import { INT_MAX, OdeTensorError, describe, jsWords, show } from './callbacks.mjs';
import { DLPACK, EVENT_TENSORS, GRAD_TENSORS, STATUS } from './constants.mjs';

const { OT_ERR_ARG, OT_ERR_NOMEM, OT_ERR_INTERNAL } = STATUS;
const STATS = ['steps', 'rhsEvals', 'jacRhsEvals', 'jacEvals', 'linSetups', 'errTestFails',
  'nonlinIters', 'nonlinFails', 'linIters', 'finalTime', 'adjSteps', 'adjMaxSteps'];
const DL_FLOAT64 = Object.freeze({ code: DLPACK.kDLFloat, bits: 64, lanes: 1 });
const DL_CPU = Object.freeze({ deviceType: DLPACK.kDLCPU, deviceId: 0 });
// otw_tensor's `which`: 100 + an event tensor, 200 + a gradient tensor.
const EVENT_AT = 100, GRAD_AT = 200;

// Frees solutions that were never disposed, once they are garbage. The held
// value must not reach the solution: [module, pointer], made outside any
// closure scope that holds `this`.
const finalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(([m, ptr, ranges]) => {
    for (const r of ranges) live(m).delete(r);
    m._otw_solution_free(ptr);
  }) : null;

// The wasm memory each module's live solutions own, as [start, end) byte
// ranges: an input that is a Float64Array over wasm memory is used in place
// only inside one of these. A view of a disposed solution would otherwise
// read freed memory, which a later allocation reuses.
const liveRanges = new WeakMap();
export function live(m) {
  let s = liveRanges.get(m);
  if (s === undefined) liveRanges.set(m, (s = new Set()));
  return s;
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

  /** Element [i, j, k] (missing indices are 0); an index outside the shape
   * throws (it would otherwise read another element). */
  get(i, j = 0, k = 0) {
    const s = this.strides, n = this.shape;
    if (!(Number.isInteger(i) && i >= 0 && i < n[0]) || !(Number.isInteger(j) && j >= 0 && j < (n[1] ?? 1))
        || !(Number.isInteger(k) && k >= 0 && k < (n[2] ?? 1)))
      throw new OdeTensorError('OT_ERR_ARG', OT_ERR_ARG,
        `get: index [${show(i)}, ${show(j)}, ${show(k)}] is outside the shape [${n.join(', ')}]`);
    return this.data[i * s[0] + j * (s[1] ?? 0) + k * (s[2] ?? 0)];
  }

  /** A copy that belongs to JS and outlives dispose(). */
  toFloat64Array() { return this.data.slice(); }
}

/** The result of a solve: output tensors plus per-lane status and statistics.
 * The lane arrays are plain JS copies; the tensors live in wasm memory until
 * dispose(). */
export class Solution {
  #m; #ptr; #ranges;

  constructor(m, ptr, thrown) {
    this.#m = m;
    this.#ptr = ptr;
    const nb = m._otw_solution_nbatch(ptr);
    const nsens = m._otw_solution_nsens(ptr);
    this.nbatch = nb;
    const info = m._otw_malloc(32);
    const ranges = (this.#ranges = []);
    const bytes = nb * 12 + nb * 8 * (1 + STATS.length) + 8;
    const lanes = bytes <= INT_MAX ? m._otw_malloc(bytes) : 0;
    try {
      if (info === 0 || lanes === 0) // a NULL here would write over address 0
        throw new OdeTensorError('OT_ERR_NOMEM', OT_ERR_NOMEM,
          `solution: cannot allocate ${bytes} bytes in wasm memory for the lanes' results`);
      const tensor = (which) => {
        const data = m._otw_tensor(ptr, which, info);
        if (!data) return null;
        const t = new Tensor(m, this, data, m.HEAP32.slice(info >> 2, (info >> 2) + 8));
        const range = [data, data + 8 * t.size];
        ranges.push(range);
        live(m).add(range);
        return t;
      };
      this.ts = tensor(0);
      this.ys = tensor(1);
      this.sens = Array.from({ length: nsens }, (_, j) => tensor(2 + j));
      // Recorded events (roots with 'record' or 'handle'), or null.
      const times = tensor(EVENT_AT + EVENT_TENSORS.times);
      this.events = times === null ? null : {
        times, roots: tensor(EVENT_AT + EVENT_TENSORS.roots),
        before: tensor(EVENT_AT + EVENT_TENSORS.before), after: tensor(EVENT_AT + EVENT_TENSORS.after),
        count: Int32Array.from({ length: nb }, (_, b) => m._otw_event_count(ptr, b)),
      };
      // solveAdjoint: the loss [nbatch] and its gradients, or null.
      this.loss = tensor(GRAD_AT + GRAD_TENSORS.loss);
      this.gradParams = tensor(GRAD_AT + GRAD_TENSORS.gradParams);
      this.gradY0 = tensor(GRAD_AT + GRAD_TENSORS.gradY0);
      this.adjointBytes = this.loss === null ? null
        : Float64Array.from({ length: nb }, (_, b) => m._otw_adjoint_bytes(ptr, b));
      const st = lanes, cnt = st + 4 * nb, ri = cnt + 4 * nb;
      const rt = (ri + 4 * nb + 7) & ~7, stats = rt + 8 * nb;
      if (m._otw_lanes(ptr, st, cnt, ri, rt, stats) !== nb)
        throw new OdeTensorError('OT_ERR_INTERNAL', OT_ERR_INTERNAL, 'solution: lanes not filled');
      this.statusCode = m.HEAP32.slice(st >> 2, (st >> 2) + nb);
      this.count = m.HEAP32.slice(cnt >> 2, (cnt >> 2) + nb);
      this.rootIndex = m.HEAP32.slice(ri >> 2, (ri >> 2) + nb);
      this.rootTime = m.HEAPF64.slice(rt >> 3, (rt >> 3) + nb);
      const ns = STATS.length, sv = m.HEAPF64.slice(stats >> 3, (stats >> 3) + ns * nb);
      this.stats = Array.from({ length: nb }, (_, b) =>
        Object.fromEntries(STATS.map((key, i) => [key, sv[ns * b + i]])));
    } finally {
      m._otw_free(lanes);
      m._otw_free(info);
    }
    this.status = Array.from(this.statusCode, (c) => m.UTF8ToString(m._otw_status_name(c)));
    this.errors = new Array(nb).fill(undefined);
    this.message = Array.from({ length: nb }, (_, b) => {
      const msg = jsWords(m.UTF8ToString(m._otw_lane_message(ptr, b)));
      // a lane's own throw; a block's only when no lane failed alone
      const t = thrown.lanes.get(b) ?? (thrown.lanes.size === 0 ? thrown.batch : undefined);
      if (t === undefined || this.statusCode[b] === 0) return msg;
      this.errors[b] = t.error;
      return `${t.name} threw ${describe(t.error)}; ${msg}`;
    });
    this.nfailed = this.statusCode.reduce((a, c) => a + (c !== 0), 0);
    this.ok = this.nfailed === 0;
    finalizer?.register(this, [m, ptr, ranges], this);
  }

  get disposed() { return this.#ptr === 0; }

  /** Frees the solution's wasm memory; its tensors' data can no longer be
   * read. Idempotent. */
  dispose() {
    if (this.#ptr === 0) return;
    finalizer?.unregister(this);
    for (const r of this.#ranges) live(this.#m).delete(r);
    this.#m._otw_solution_free(this.#ptr);
    this.#ptr = 0;
  }
}
if (typeof Symbol.dispose === 'symbol')
  Solution.prototype[Symbol.dispose] = function dispose() { this.dispose(); };

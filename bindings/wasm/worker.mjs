// Solves in a Worker, so that the thread asking (a page's, or Node's main
// thread) stays free: createSolverWorker(modelUrl) starts a worker (Node:
// worker_threads; browsers: a module Worker) that loads odetensor and the
// model module, whose default export is the problem's sizes and callbacks
// ({ nstates, nparams, rhs, jac, out, nout, roots, ... }: functions cannot
// cross to a worker, so they live there). Each solve sends only the inputs
// (y0, params, tEval or finalTime, options, stops, starts, loss data) and
// returns a promise of the results: plain arrays whose buffers the worker
// transfers (no copy on the way back), tensors as { data, shape, strides,
// get(i, j, k) }. Progress arrives through onProgress; cancel() stops the
// running solve through a shared flag (Node, and cross-origin-isolated
// pages) whose lanes then report 'OT_ERR_CANCELLED' with their results so
// far, or else terminates the worker.

const inNode = typeof process === 'object' && typeof process.versions?.node === 'string' &&
  typeof window === 'undefined' && typeof self === 'undefined';

/** A result tensor: column-major data with strides in elements. */
export class ResultTensor {
  constructor({ data, shape, strides }) {
    this.data = data;
    this.shape = shape;
    this.strides = strides;
    this.ndim = shape.length;
  }

  get(i, j = 0, k = 0) {
    const s = this.strides;
    return this.data[i * s[0] + j * (s[1] ?? 0) + k * (s[2] ?? 0)];
  }
}

const wrap = (t) => (t === null ? null : new ResultTensor(t));

function unpack(r) {
  return {
    ...r,
    ts: wrap(r.ts), ys: wrap(r.ys), sens: r.sens.map(wrap),
    events: r.events === null ? null : {
      times: wrap(r.events.times), roots: wrap(r.events.roots), before: wrap(r.events.before),
      after: wrap(r.events.after), count: r.events.count,
    },
    loss: wrap(r.loss), gradParams: wrap(r.gradParams), gradY0: wrap(r.gradY0),
  };
}

class SolverWorker {
  #worker; #on; #cancel; #pending = new Map(); #next = 1; #queue = Promise.resolve(); #dead = null;

  constructor(worker, on, cancel) {
    this.#worker = worker;
    this.#on = on;
    this.#cancel = cancel;
    on('message', (msg) => {
      const p = this.#pending.get(msg.id);
      if (p === undefined) return;
      if (msg.type === 'progress') {
        p.onProgress?.(msg.done, msg.total);
        return;
      }
      this.#pending.delete(msg.id);
      if (msg.type === 'result') p.resolve(unpack(msg.result));
      else p.reject(Object.assign(new Error(msg.message), { name: msg.name ?? 'Error', status: msg.status, code: msg.code }));
    });
    on('error', (e) => this.#fail(e instanceof Error ? e : new Error(String(e?.message ?? e))));
    // Node: the thread ended (the model called process.exit, or it ran out
    // of memory) while solves were pending: they would never settle.
    on('exit', (code) => this.#fail(this.#dead ?? new Error(
      `odetensor worker: the worker thread exited (code ${code}) while solving; ` +
      'pending solves are lost (did the model call process.exit?)')));
  }

  #fail(e) {
    this.#dead = e;
    for (const p of this.#pending.values()) p.reject(e);
    this.#pending.clear();
  }

  /** Runs ot[kind](model + inputs) in the worker, one solve at a time in
   * the order asked. kind: 'solveDense', 'solve', 'solveFwdSens',
   * 'solveAdjoint', 'solveDoses', 'solveDosesFwdSens' or 'solveDosesAdjoint'. */
  run(kind, inputs, { onProgress } = {}) {
    const id = this.#next++; // now, so that a cancel() that follows covers it
    const start = () => new Promise((resolve, reject) => {
      if (this.#dead) { reject(this.#dead); return; }
      this.#pending.set(id, { resolve, reject, onProgress });
      this.#worker.postMessage({ type: 'solve', id, kind, inputs });
    });
    const p = this.#queue.then(start, start);
    this.#queue = p.catch(() => {});
    return p;
  }

  solveDense(inputs, opts) { return this.run('solveDense', inputs, opts); }
  solve(inputs, opts) { return this.run('solve', inputs, opts); }
  solveFwdSens(inputs, opts) { return this.run('solveFwdSens', inputs, opts); }
  solveAdjoint(inputs, opts) { return this.run('solveAdjoint', inputs, opts); }
  solveDoses(inputs, opts) { return this.run('solveDoses', inputs, opts); }
  solveDosesFwdSens(inputs, opts) { return this.run('solveDosesFwdSens', inputs, opts); }
  solveDosesAdjoint(inputs, opts) { return this.run('solveDosesAdjoint', inputs, opts); }

  /** Whether cancel() can stop a running solve and keep its results (a
   * shared flag: Node, or a cross-origin-isolated page). */
  get canCancel() { return this.#cancel !== null; }

  /** Stops the running solve and every solve asked before this call (one
   * that has not begun stops at its first progress call): their unfinished
   * lanes come back cancelled. Solves asked later run. Without a shared flag
   * the worker is terminated and every pending solve rejects. */
  cancel() {
    if (this.#cancel !== null) Atomics.store(this.#cancel, 0, this.#next - 1);
    else this.terminate();
  }

  terminate() {
    this.#fail(new Error('odetensor worker: terminated'));
    this.#worker.terminate();
  }
}

/** Starts a worker for the model module at modelUrl (a URL or an absolute
 * URL string, e.g. new URL('./model.mjs', import.meta.url)); resolves once
 * it has loaded odetensor and the model. */
export async function createSolverWorker(modelUrl) {
  const href = new URL(modelUrl).href;
  const script = new URL('./worker_main.mjs', import.meta.url);
  const shared = typeof SharedArrayBuffer === 'function' && (inNode || globalThis.crossOriginIsolated === true)
    ? new Int32Array(new SharedArrayBuffer(4)) : null;
  let worker, on;
  if (inNode) {
    const { Worker } = await import('node:worker_threads');
    worker = new Worker(script);
    on = (ev, fn) => worker.on(ev, fn);
  } else {
    worker = new Worker(script, { type: 'module' });
    on = (ev, fn) => worker.addEventListener(ev, (e) => fn(ev === 'message' ? e.data : (e.error ?? e)));
  }
  const started = new Promise((resolve, reject) => {
    const done = (msg) => {
      if (msg.type === 'loaded') worker.postMessage({ type: 'init', modelUrl: href, cancel: shared });
      else if (msg.type === 'ready') resolve();
      else if (msg.type === 'failed') reject(new Error(`odetensor worker: ${msg.message}`));
    };
    if (inNode) {
      worker.on('message', done);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`odetensor worker: exited (code ${code}) while starting`)));
    } else {
      worker.addEventListener('message', (e) => done(e.data));
      worker.addEventListener('error', (e) => reject(e.error ?? new Error(e.message)), { once: true });
    }
  });
  try {
    await started;
  } catch (e) {
    worker.terminate(); // nothing to serve: do not keep the process or page alive
    throw e;
  }
  return new SolverWorker(worker, on, shared);
}

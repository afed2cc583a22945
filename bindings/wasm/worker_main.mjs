// The Worker side of worker.mjs: loads odetensor and the model module, then
// solves one request at a time, posting progress as it goes and the results
// as plain arrays whose buffers are transferred (no copy on the way back).
// Node (worker_threads) and browsers (module Workers) alike.
import { load } from './index.mjs';

const inNode = typeof process === 'object' && typeof process.versions?.node === 'string' &&
  typeof self === 'undefined';
const port = inNode ? (await import('node:worker_threads')).parentPort : null;
const send = (msg, transfer = []) => (inNode ? port.postMessage(msg, transfer) : self.postMessage(msg, transfer));
const listen = (fn) => (inNode ? port.on('message', fn) : self.addEventListener('message', (e) => fn(e.data)));

const ot = await load();
let model = null, cancel = null;

// A tensor as { data, shape, strides } (data a copy out of wasm memory, whose
// buffer goes in the transfer list).
function tensor(t, transfer) {
  if (t === null || t === undefined) return null;
  const data = t.toFloat64Array();
  transfer.push(data.buffer);
  return { data, shape: [...t.shape], strides: [...t.strides] };
}

function pack(sol) {
  const transfer = [];
  const ev = sol.events;
  const result = {
    nbatch: sol.nbatch, ok: sol.ok, nfailed: sol.nfailed,
    status: sol.status, statusCode: sol.statusCode, message: sol.message,
    count: sol.count, rootIndex: sol.rootIndex, rootTime: sol.rootTime, stats: sol.stats,
    ts: tensor(sol.ts, transfer), ys: tensor(sol.ys, transfer),
    sens: sol.sens.map((s) => tensor(s, transfer)),
    events: ev === null ? null : {
      times: tensor(ev.times, transfer), roots: tensor(ev.roots, transfer),
      before: tensor(ev.before, transfer), after: tensor(ev.after, transfer), count: ev.count,
    },
    loss: tensor(sol.loss, transfer), gradParams: tensor(sol.gradParams, transfer),
    gradY0: tensor(sol.gradY0, transfer),
  };
  for (const a of [result.statusCode, result.count, result.rootIndex, result.rootTime])
    transfer.push(a.buffer);
  return { result, transfer };
}

const KINDS = ['solveDense', 'solve', 'solveFwdSens', 'solveAdjoint', 'solveDoses', 'solveDosesFwdSens', 'solveDosesAdjoint'];

listen(async (msg) => {
  if (msg.type === 'init') {
    try {
      const mod = await import(msg.modelUrl);
      model = mod.default ?? mod.model;
      if (model === null || typeof model !== 'object')
        throw new Error(`${msg.modelUrl}: expected a default export { nstates, nparams, rhs, ... }`);
      cancel = msg.cancel ?? null;
      send({ type: 'ready' });
    } catch (e) {
      send({ type: 'failed', message: String(e?.message ?? e) });
    }
    return;
  }
  const { id, kind, inputs } = msg;
  try {
    if (!KINDS.includes(kind)) throw new Error(`worker: unknown solve '${kind}'`);
    const spec = {
      ...model, ...inputs,
      // The flag holds the last solve cancel() covers: this one, or a later one.
      onProgress(done, total) {
        send({ type: 'progress', id, done, total });
        return cancel !== null && Atomics.load(cancel, 0) >= id;
      },
    };
    const sol = ot[kind](spec);
    try {
      const { result, transfer } = pack(sol);
      send({ type: 'result', id, result }, transfer);
    } finally {
      sol.dispose();
    }
  } catch (e) {
    send({ type: 'error', id, name: e?.name, status: e?.status, code: e?.code, message: String(e?.message ?? e) });
  }
});
send({ type: 'loaded' });

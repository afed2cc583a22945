// Solves in a worker (issue 17): the same bits as in this thread, results
// whose buffers were transferred, progress messages, cancel through the
// shared flag (the unfinished lanes come back cancelled with their outputs
// so far), errors as rejections, and this thread free while it runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../index.mjs';
import { createSolverWorker } from '../worker.mjs';
import model from './decay_model.mjs';

const ot = await load();
const MODEL = new URL('./decay_model.mjs', import.meta.url);
const NB = 50;
const params = (wait) => Float64Array.from({ length: 2 * NB }, (_, i) => (i % 2 ? wait : 0.05 * (i / 2 + 1)));
const inputs = (wait, mode = 'lanes') => ({ y0: [1], params: params(wait), tEval: [0.5, 1, 2], options: { mode, rtol: 1e-9, atol: 1e-11 } });

test('a worker solve equals the same solve here, bit for bit, in both modes', async () => {
  const w = await createSolverWorker(MODEL);
  try {
    for (const mode of ['lanes', 'lockstep']) {
      let calls = 0;
      const r = await w.solveDense(inputs(0, mode), { onProgress: () => { calls++; } });
      const here = ot.solveDense({ ...model, ...inputs(0, mode) });
      assert.ok(r.ok);
      assert.deepEqual(r.ys.shape, [1, 3, NB]);
      assert.ok(r.ys.data.buffer instanceof ArrayBuffer);
      assert.deepEqual(Array.from(r.ys.data), Array.from(here.ys.data));
      assert.equal(r.ys.get(0, 2, 7), here.ys.get(0, 2, 7));
      assert.deepEqual(r.stats[3], here.stats[3]);
      assert.ok(calls >= 1, `${mode}: progress messages`);
      here.dispose();
    }
  } finally {
    w.terminate();
  }
});

test('cancel stops the running solve; its lanes keep what they reached', async () => {
  const w = await createSolverWorker(MODEL);
  try {
    assert.ok(w.canCancel);
    let ticks = 0;
    const timer = setInterval(() => { ticks++; }, 1); // this thread stays free
    const pending = w.solveDense(inputs(0.02), {
      onProgress: (done) => { if (done >= 5) w.cancel(); },
    });
    const r = await pending;
    clearInterval(timer);
    assert.equal(r.ok, false);
    assert.ok(ticks > 0, 'the main thread ran timers during the solve');
    const cancelled = r.status.filter((s) => s === 'OT_ERR_CANCELLED').length;
    assert.ok(cancelled > 0 && cancelled < NB, `${cancelled} cancelled`);
    for (let b = 0; b < NB; b++) {
      const k = 0.05 * (b + 1);
      [0.5, 1, 2].slice(0, r.count[b]).forEach((t, j) => assert.ok(Math.abs(r.ys.get(0, j, b) - Math.exp(-k * t)) < 1e-6));
    }
    // The worker goes on serving: the next solve is whole.
    const again = await w.solveDense(inputs(0));
    assert.ok(again.ok);
  } finally {
    w.terminate();
  }
});

test('errors reject; a bad model module fails to start; terminate rejects what is pending', async () => {
  const w = await createSolverWorker(MODEL);
  await assert.rejects(w.solveDense({ y0: [1], params: params(0), tEval: [2, 1] }), /t_eval/);
  const slow = w.solveDense(inputs(1));
  w.terminate();
  await assert.rejects(slow, /terminated/);
  await assert.rejects(createSolverWorker(new URL('./no_such_model.mjs', import.meta.url)), /odetensor worker/);
});

test('a worker thread that exits mid-solve rejects the solve and those after it (issue 23)', async () => {
  const w = await createSolverWorker(new URL('./exit_model.mjs', import.meta.url));
  const first = w.solveDense({ y0: [1], params: [0.5, 1], tEval: [0, 1, 2] });
  const second = w.solveDense({ y0: [1], params: [0.5], tEval: [0, 1] });
  await assert.rejects(first, /worker thread exited \(code 3\) while solving/);
  await assert.rejects(second, /worker thread exited/);
  await assert.rejects(w.solveDense({ y0: [1], params: [0.5], tEval: [0, 1] }), /exited/);
});

test('cancel() right after solve() cancels that solve; one asked later runs whole (issue 23)', async () => {
  const w = await createSolverWorker(MODEL);
  try {
    const pending = w.solveDense(inputs(0.02));
    w.cancel(); // before the worker has begun it
    const r = await pending;
    assert.equal(r.ok, false);
    assert.ok(r.status.every((s) => s === 'OT_ERR_CANCELLED' || s === 'OT_OK'));
    assert.ok(r.status.filter((s) => s === 'OT_ERR_CANCELLED').length > 0, r.status.join());
    const later = await w.solveDense(inputs(0));
    assert.ok(later.ok, later.message.join('; '));
  } finally {
    w.terminate();
  }
});

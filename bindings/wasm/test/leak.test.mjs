// 1,000 solves in a loop (successes, failing lanes, thrown errors, every
// solve kind and mode) leave the wasm heap as it was: no leak in C, in the
// shim or in the JS wrapper's temporary buffers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../index.mjs';
import { robertsonRhs, robertsonJac, lotkaVolterraRhs } from './models.mjs';

const ot = await load({ fresh: true });

const robertson = {
  nstates: 3, nparams: 3, rhs: robertsonRhs, jac: robertsonJac, y0: [1, 0, 0],
  params: [0.04, 1e4, 3e7, 0.05, 1e4, 3e7], tEval: [0, 1, 10, 100],
  options: { rtol: 1e-6, atol: [1e-8, 1e-14, 1e-6] },
};
const lv = {
  nstates: 2, nparams: 4, rhs: lotkaVolterraRhs, y0: [10, 5], params: [1.5, 1, 1, 3, 1.4, 1, 1, 3],
  tEval: [0, 1, 2, 5], options: { method: 'adams', rtol: 1e-6 },
};

// One of six kinds of call, each freeing what it got.
function once(i) {
  switch (i % 6) {
  case 0: ot.solveDense(robertson).dispose(); break;
  case 1: ot.solveDense({ ...lv, options: { ...lv.options, mode: 'lockstep' } }).dispose(); break;
  case 2: ot.solve({ ...lv, tEval: undefined, finalTime: 2 }).dispose(); break;
  case 3: { // [Symbol.dispose] where the runtime has it (Node >= 18.18)
    const sol = ot.solveFwdSens(lv);
    (sol[Symbol.dispose] ?? sol.dispose).call(sol);
    break;
  }
  case 4: { // a lane fails with a thrown exception
    const sol = ot.solveDense({ ...lv, rhs: (t, y, p, d, k, lane) => {
      if (lane === 1) throw new Error('leak test');
      lotkaVolterraRhs(t, y, p, d, k);
    } });
    assert.equal(sol.nfailed, 1);
    sol.dispose();
    break;
  }
  default: // the call throws after the wrapper copied its inputs
    assert.throws(() => ot.solveDense({ ...robertson, options: { ...robertson.options, rtol: -1 } }), /rtol/);
  }
}

test('1,000 solves leave the wasm heap flat', () => {
  for (let i = 0; i < 12; i++) once(i); // warm-up: first-use allocations
  const size = ot.heapSize(), used = ot.heapInUse();
  const t0 = performance.now();
  for (let i = 0; i < 1000; i++) once(i);
  const ms = performance.now() - t0;
  assert.equal(ot.heapInUse(), used, 'bytes allocated by malloc');
  assert.equal(ot.heapSize(), size, 'wasm memory size');
  console.log(`1000 solves in ${ms.toFixed(0)} ms; heap ${size} bytes, ${used} in use before and after`);
});

test('solutions left to the garbage collector are freed by the finalizer', { skip: typeof gc !== 'function' && 'run node with --expose-gc' }, async () => {
  const used = ot.heapInUse();
  for (let i = 0; i < 50; i++) ot.solveDense(lv);
  assert.ok(ot.heapInUse() > used);
  for (let i = 0; i < 20 && ot.heapInUse() > used; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(ot.heapInUse(), used);
});

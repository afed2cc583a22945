// wasm against the native library: the same problems (inputs read from the
// JSON that native_ref.c writes, see `make test-wasm`) must give the same
// values to 1e-12 relative, and the same step counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load } from '../index.mjs';
import { robertsonRhs, robertsonJac, lotkaVolterraRhs } from './models.mjs';

const refPath = process.env.OT_NATIVE_REF
  ?? fileURLToPath(new URL('../../../build/wasm/native_ref.json', import.meta.url));
const ref = existsSync(refPath) ? JSON.parse(readFileSync(refPath, 'utf8')) : null;
const skip = ref ? false : `no native reference at ${refPath} (make test-wasm writes it)`;
const ot = await load();

// JSON has no NaN: native_ref writes null for it.
function assertClose(actual, expected, what, rel = 1e-12) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i], e = expected[i] === null ? NaN : expected[i];
    if (Number.isNaN(e) || Number.isNaN(a)) {
      assert.ok(Number.isNaN(e) && Number.isNaN(a), `${what}[${i}]: ${a} vs native ${e}`);
      continue;
    }
    const err = Math.abs(a - e), scale = Math.max(Math.abs(a), Math.abs(e));
    assert.ok(err <= rel * scale, `${what}[${i}]: ${a} vs native ${e} (relative ${err / scale})`);
    if (scale > 0) worst = Math.max(worst, err / scale);
  }
  return worst;
}

// Runs body(sol) and frees the solution whatever happens.
function withSolution(sol, body) {
  try {
    body(sol);
  } finally {
    sol.dispose();
  }
}

function assertLanes(sol, r, what) {
  assert.deepEqual(Array.from(sol.statusCode), r.status, `${what}: status`);
  assert.deepEqual(Array.from(sol.count), r.count, `${what}: count`);
  assert.deepEqual(sol.stats.map((s) => s.steps), r.steps, `${what}: steps`);
  assert.deepEqual(sol.stats.map((s) => s.rhsEvals), r.rhsEvals, `${what}: rhs evaluations`);
}

function robertson(mode, kind = 'dense') {
  const r = ref.robertson;
  const spec = {
    nstates: 3, nparams: 3, rhs: robertsonRhs, jac: robertsonJac,
    y0: r.y0, params: Float64Array.from(r.params),
    options: { method: 'bdf', mode, rtol: r.rtol, atol: r.atol },
  };
  return kind === 'steps' ? ot.solve({ ...spec, finalTime: r.finalTime })
    : ot.solveDense({ ...spec, tEval: r.tEval });
}

test('Robertson, BDF with a Jacobian, lanes mode: equals native', { skip }, () => {
  withSolution(robertson('lanes'), (sol) => {
    assert.deepEqual(sol.ys.shape, [3, ref.robertson.tEval.length, 4]);
    assertLanes(sol, ref.robertson.dense, 'robertson');
    assertClose(sol.ys.data, ref.robertson.dense.ys, 'robertson ys');
    assertClose(sol.ts.data, ref.robertson.dense.ts, 'robertson ts');
  });
});

test('Robertson, every internal step (solve): equals native', { skip }, () => {
  const sol = robertson('lanes', 'steps');
  try {
    const r = ref.robertson.steps;
    assertLanes(sol, r, 'robertson steps');
    assert.equal(sol.ts.shape[0], Math.max(...r.count));
    assertClose(sol.ts.data, r.ts, 'robertson steps ts');
    assertClose(sol.ys.data, r.ys, 'robertson steps ys');
  } finally {
    sol.dispose();
  }
});

test('Robertson in lockstep mode: equals native lockstep', { skip }, () => {
  withSolution(robertson('lockstep'), (sol) => {
    assertLanes(sol, ref.robertson.lockstep, 'robertson lockstep');
    assertClose(sol.ys.data, ref.robertson.lockstep.ys, 'robertson lockstep ys');
  });
});

function lotkaVolterra(fn) {
  const r = ref.lotkaVolterra;
  return fn({
    nstates: 2, nparams: 4, rhs: lotkaVolterraRhs,
    y0: Float64Array.from(r.y0), params: r.params, tEval: r.tEval,
    options: { method: 'adams', rtol: r.rtol, atol: r.atol },
  });
}

test('Lotka-Volterra, Adams: equals native', { skip }, () => {
  withSolution(lotkaVolterra((s) => ot.solveDense(s)), (sol) => {
    assertLanes(sol, ref.lotkaVolterra.dense, 'lotka-volterra');
    assertClose(sol.ys.data, ref.lotkaVolterra.dense.ys, 'lotka-volterra ys');
  });
});

test('Lotka-Volterra forward sensitivities: equal native', { skip }, () => {
  withSolution(lotkaVolterra((s) => ot.solveFwdSens(s)), (sol) => {
    const r = ref.lotkaVolterra.sens;
    assertLanes(sol, r, 'lotka-volterra sens');
    assertClose(sol.ys.data, r.ys, 'lotka-volterra sens ys');
    assert.equal(sol.sens.length, 4);
    sol.sens.forEach((s, j) => {
      assert.deepEqual(s.shape, [2, ref.lotkaVolterra.tEval.length, 5]);
      assertClose(s.data, r.sens[j].data, `lotka-volterra sens[${j}]`);
    });
  });
});

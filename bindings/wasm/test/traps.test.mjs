// Issue 13's JavaScript traps: each returned a wrong answer with status OK,
// or ended the process, before its fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { load } from '../index.mjs';
import { decayRhs } from './models.mjs';

const ot = await load();
const rates = [0.5, 1, 2];
const decay = (extra = {}, options = {}) => ot.solveDense({
  nstates: 1, nparams: 1, rhs: decayRhs, y0: [1], params: rates, tEval: [0, 1, 2],
  ...extra, options: { rtol: 1e-10, atol: 1e-12, ...options },
});

test("the README's JS example gives the same answer in both modes", async () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const block = readme.match(/```js\n([\s\S]*?)```/)[1];
  const index = pathToFileURL(new URL('../index.mjs', import.meta.url).pathname).href;
  const dir = mkdtempSync(join(tmpdir(), 'ot-readme-'));
  try {
    const out = {};
    for (const mode of ['lanes', 'lockstep']) {
      const src = block.replace("'./bindings/wasm/index.mjs'", `'${index}'`)
        .replace("method: 'adams',", `method: 'adams', mode: '${mode}',`)
        .replace(/console\.log\((.*)\); \/\//, 'globalThis.readmeOut = [$1]; //');
      assert.notEqual(src, block);
      const file = join(dir, `${mode}.mjs`);
      writeFileSync(file, src);
      await import(pathToFileURL(file).href);
      out[mode] = globalThis.readmeOut;
    }
    const [shape, prey, status] = out.lanes;
    assert.deepEqual(shape, [2, 5, 3]);
    assert.deepEqual(status, ['OT_OK', 'OT_OK', 'OT_OK']);
    assert.deepEqual(out.lockstep[0], shape);
    assert.deepEqual(out.lockstep[2], status);
    // rtol 1e-8 each; lockstep's shared steps differ, not the answer.
    assert.ok(Math.abs(out.lockstep[1] - prey) < 1e-5 * Math.abs(prey), `${out.lockstep[1]} vs ${prey}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a lockstep rhs that writes only lane 0 fails naming lane 1 (it returned OK with lanes 1.. unsolved)', () => {
  const rhs = (t, y, p, dydt) => { dydt[0] = -p[0] * y[0]; };
  const sol = decay({ rhs }, { mode: 'lockstep' });
  assert.equal(sol.nfailed, 3);
  assert.match(sol.message[2], /rhs did not write dydt for lane 1: in 'lockstep' mode a callback gets every lane at once and must write every column/);
  sol.dispose();
  const lanes = decay({ rhs }); // k = 1: right in lanes mode
  assert.ok(lanes.ok);
  assert.ok(Math.abs(lanes.ys.get(0, 2, 2) - Math.exp(-4)) < 1e-8);
  lanes.dispose();
});

test('a solve nested in a callback that grows wasm memory leaves the outer answer right', () => {
  const plain = decay();
  const want = plain.ys.toFloat64Array();
  plain.dispose();
  let grew = false;
  const rhs = (t, y, p, dydt, k) => {
    if (!grew) {
      grew = true;
      const before = ot.heapSize();
      // Copies its y0 into wasm memory (growing it), then refuses tEval.
      assert.throws(() => ot.solveDense({ nstates: 1, rhs: decayRhs, y0: new Float64Array(before / 4), tEval: [] }),
        /tEval: length 0/);
      assert.ok(ot.heapSize() > before, 'memory did not grow');
    }
    decayRhs(t, y, p, dydt, k);
  };
  const sol = decay({ rhs });
  assert.ok(grew && sol.ok, sol.message.join('; '));
  assert.deepEqual(sol.ys.toFloat64Array(), want); // bit for bit
  sol.dispose();
});

test('an async callback that throws fails its lanes and leaves no unhandled rejection', async () => {
  let unhandled = 0;
  const count = () => { unhandled++; };
  process.on('unhandledRejection', count);
  try {
    const sol = decay({ rhs: async () => { throw new Error('async boom'); } });
    assert.equal(sol.nfailed, 3);
    assert.match(sol.message[0], /returned a Promise; callbacks must be synchronous/);
    sol.dispose();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(unhandled, 0);
  } finally {
    process.off('unhandledRejection', count);
  }
});

test('options and problem fields are read from the object itself, never its prototype', () => {
  const want = decay();
  const ref = want.ys.toFloat64Array();
  want.dispose();
  const inherited = { rtol: 0.5, maxSteps: 1, mode: 'lockstep', options: { rtol: 0.5 }, jac: () => -1,
    roots: () => -1, nroots: 1, maxOrder: 1 };
  try {
    Object.assign(Object.prototype, inherited);
    const sol = decay();
    assert.ok(sol.ok, sol.message.join('; '));
    assert.deepEqual(sol.ys.toFloat64Array(), ref);
    sol.dispose();
    const bare = ot.solveDense({ nstates: 1, nparams: 1, rhs: decayRhs, y0: [1], params: rates, tEval: [0, 1, 2] });
    assert.ok(bare.ok, bare.message.join('; '));
    bare.dispose();
  } finally {
    for (const key of Object.keys(inherited)) delete Object.prototype[key];
  }
});

test("a view of a disposed solution's memory is refused as input; a live one is used", () => {
  const first = decay();
  const live = first.ys.data.subarray(0, 1); // y(t = 0) of lane 0: 1
  const inPlace = decay({ y0: live });
  assert.ok(inPlace.ok);
  inPlace.dispose();
  const view = first.ys.data.subarray(3, 4); // y(1) of lane 0
  first.dispose();
  assert.throws(() => decay({ y0: view }), (e) => e.status === 'OT_ERR_ARG' &&
    /^y0: a view of wasm memory that no live solution owns/.test(e.message));
});

test('an expression-bodied arrow rhs fails its lanes with a message saying what happened', () => {
  const sol = decay({ rhs: (t, y, p, dydt) => dydt[0] = -p[0] * y[0] }); // eslint-disable-line no-return-assign
  assert.equal(sol.nfailed, 3);
  assert.match(sol.message[0], /^rhs threw TypeError: rhs returned -0\.5, a value it also wrote into its output: an arrow function/);
  sol.dispose();
  // A number it did not write is still a code: > 0 retries, < 0 stops.
  const stop = decay({ rhs: (t, y, p, dydt) => { dydt[0] = -p[0] * y[0]; return t > 0.5 ? -7 : 0; } });
  assert.match(stop.message[0], /rhs returned -7/);
  stop.dispose();
});

test("a solve too big for wasm memory is refused naming wasm32's limit, not physical memory", () => {
  const n = 1 << 20; // ys [n, 1000, 1]: 8 GiB
  assert.throws(() => ot.solveDense({ nstates: n, rhs: () => {}, y0: new Float64Array(n), tEval: Array.from({ length: 1000 }, (_, i) => i) }),
    (e) => e.status === 'OT_ERR_NOMEM' && /in wasm32 memory \(at most 2 GiB\)/.test(e.message) && !/physical/.test(e.message));
});

test('y and p are read-only inputs: a callback that writes them cannot change the result', () => {
  for (const mode of ['lanes', 'lockstep']) {
    const plain = decay({}, { mode });
    const want = plain.ys.toFloat64Array();
    plain.dispose();
    const writer = (t, y, p, dydt, k) => {
      decayRhs(t, y, p, dydt, k);
      for (let b = 0; b < k; b++) {
        y[b] = Math.max(y[b], 0.5); // a clamp: C's const views forbid it
        p[b] = 100;
      }
    };
    const sol = decay({ rhs: writer, jac: (t, y, p, J, k) => { for (let b = 0; b < k; b++) { J[b] = -p[b]; p[b] = 0; } } }, { mode });
    assert.ok(sol.ok, sol.message.join('; '));
    const plainJac = decay({ jac: (t, y, p, J, k) => { for (let b = 0; b < k; b++) J[b] = -p[b]; } }, { mode });
    assert.deepEqual(sol.ys.toFloat64Array(), plainJac.ys.toFloat64Array());
    assert.ok(Math.abs(sol.ys.get(0, 2, 2) - Math.exp(-4)) < 1e-9);
    assert.equal(want.length, 9);
    sol.dispose();
    plainJac.dispose();
  }
});

test('maxOrder and stabilityLimitDetection reach the solver', () => {
  const q1 = decay({}, { maxOrder: 1, rtol: 1e-6, atol: 1e-9 });
  const q5 = decay({}, { rtol: 1e-6, atol: 1e-9 });
  assert.ok(q1.ok && q5.ok);
  assert.ok(q1.stats[0].steps > 10 * q5.stats[0].steps, `${q1.stats[0].steps} vs ${q5.stats[0].steps}`);
  q1.dispose();
  q5.dispose();
  const sld = decay({}, { stabilityLimitDetection: true });
  assert.ok(sld.ok);
  sld.dispose();
  assert.throws(() => decay({}, { stabilityLimitDetection: 1 }), /expected true or false/);
  assert.throws(() => decay({}, { method: 'adams', stabilityLimitDetection: true }), /only 'bdf'/);
  assert.throws(() => decay({}, { maxOrder: 6 }), /'bdf' allows 1 to 5/);
});

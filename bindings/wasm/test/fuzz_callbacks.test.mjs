// JS hardening (issue 6, item 7), callbacks: every way a callback can
// misbehave, in both modes; writes past or kept views; solves nested in
// callbacks; solves started at the edge of the JS stack.
//
//   node --test test/fuzz_callbacks.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OdeTensorError } from '../index.mjs';
import { decayRhs } from './models.mjs';
import { ot, caught, sameBits, decay, assertIntact } from './fuzz_common.mjs';

// ---- Callbacks that misbehave ---------------------------------------------

const fills = {
  rhs: decayRhs,
  jac: (t, y, p, J, k) => { for (let b = 0; b < k; b++) J[b] = -p[b]; },
  init: (p, y0, k) => { for (let b = 0; b < k; b++) y0[b] = 1; },
  out: (t, y, p, o, k) => { for (let b = 0; b < k; b++) o[b] = y[b]; },
  roots: (t, y, p, g, k) => { for (let b = 0; b < k; b++) g[b] = y[b] - 0.01; },
};
const outIndex = { rhs: 3, jac: 3, init: 1, out: 3, roots: 3 };
// [name, make(callback name) => callback, message pattern for the lane]
const misbehaviours = [
  ['throws an Error', () => () => { throw new RangeError('boom'); }, (cb) => `^${cb} threw RangeError: boom; `],
  ['throws a string', () => () => { throw 'plain'; }, (cb) => `^${cb} threw plain; `],
  ['throws undefined', () => () => { throw undefined; }, (cb) => `^${cb} threw undefined; `],
  ['throws a symbol', () => () => { throw Symbol('s'); }, (cb) => `^${cb} threw a symbol; `],
  ['throws a null-prototype object', () => () => { throw Object.create(null); }, (cb) => `^${cb} threw an object; `],
  ['returns NaN', () => () => NaN, (cb) => `^${cb} threw TypeError: ${cb} returned NaN`],
  ['returns a string', () => () => '0', (cb) => `^${cb} threw TypeError: ${cb} returned '0'`],
  ['returns true', () => () => true, (cb) => `^${cb} threw TypeError: ${cb} returned true`],
  ['returns a BigInt', () => () => 0n, (cb) => `^${cb} threw TypeError: ${cb} returned 0n`],
  ['returns its results', () => () => [1, 2], (cb) => `^${cb} threw TypeError: ${cb} returned an array of length 2`],
  ['returns a Promise', () => async () => 0, (cb) => `^${cb} threw TypeError: ${cb} returned a Promise`],
  ['returns -1', () => () => -1, (cb) => `${cb === 'roots' ? 'root' : cb} returned -1`],
  ['returns -Infinity', () => () => -Infinity, (cb) => `${cb === 'roots' ? 'root' : cb} returned -2147483647`],
  ['writes NaN', (cb) => (...a) => { fills[cb](...a); a[outIndex[cb]][0] = NaN; }, (cb) => `${cb === 'roots' ? 'root' : cb} wrote NaN or Inf`],
  ['writes -Infinity', (cb) => (...a) => { fills[cb](...a); a[outIndex[cb]][0] = -Infinity; }, (cb) => `${cb === 'roots' ? 'root' : cb} wrote NaN or Inf`],
  ['overflows the stack', () => function deep() { return deep() + 1; }, (cb) => `^${cb} threw RangeError: Maximum call stack size exceeded`],
];

test('misbehaving callbacks fail their lane alone in both modes, with the reason', () => {
  let n = 0;
  for (const mode of ['lanes', 'lockstep'])
    for (const cb of Object.keys(fills))
      for (const [what, make, pattern] of misbehaviours) {
        const spec = { ...decay, options: { mode } };
        if (cb === 'init') spec.y0 = undefined;
        if (cb === 'out') spec.nout = 1;
        if (cb === 'roots') spec.nroots = 1;
        // Only lane 1 misbehaves: a call whose lanes [lane, lane + k) hold
        // it (lockstep: the block's call, then lane 1's own when the core
        // calls lane by lane); a write goes to lane 1's column.
        const bad = make(cb);
        spec[cb] = (...a) => {
          const lane = a[a.length - 1], k = a[a.length - 2];
          if (!(lane <= 1 && 1 < lane + k)) return fills[cb](...a);
          if (what.startsWith('writes')) {
            fills[cb](...a);
            a[outIndex[cb]][1 - lane] = what === 'writes NaN' ? NaN : -Infinity;
            return undefined;
          }
          return bad(...a);
        };
        const label = `${mode} ${cb} ${what}`;
        const e = caught(() => {
          const sol = ot.solveDense(spec);
          try {
            assert.deepEqual(Array.from(sol.statusCode, (c, b) => (c === 0 ? -1 : b)).filter((b) => b >= 0), [1], label);
            assert.equal(sol.status[1], 'OT_ERR_CALLBACK', label);
            assert.match(sol.message[1], new RegExp(pattern(cb)), label);
            assert.ok(Number.isNaN(sol.ys.get(0, 2, 1)), `${label}: NaN after the failure`);
            // The other lanes: lanes mode exactly a clean solve's; lockstep
            // (they shared steps with lane 1 until it left) within 1e-6.
            const clean = ot.solveDense({ ...spec, [cb]: fills[cb] });
            for (const b of [0, 2]) for (let j = 0; j < 3; j++)
              if (mode === 'lanes') assert.equal(sol.ys.get(0, j, b), clean.ys.get(0, j, b), label);
              else assert.ok(Math.abs(sol.ys.get(0, j, b) - clean.ys.get(0, j, b)) <= 1e-6, label);
            clean.dispose();
          } finally {
            sol.dispose();
          }
        });
        assert.equal(e, null, `${label}: ${e?.message}`);
        n++;
      }
  console.log(`callback faults: ${n} cases`);
  assertIntact('after the callback faults');
});

test('callbacks that write past their views or keep them change nothing else', () => {
  let kept = null;
  const sol = ot.solveDense({ ...decay, rhs: (t, y, p, dydt, k) => {
    decayRhs(t, y, p, dydt, k);
    dydt[1] = 1e300; dydt[-1] = 5; dydt[2 ** 40] = 7; y[3] = 9; p[1] = 0; // outside the views: dropped
    kept = dydt;
  } });
  const clean = ot.solveDense(decay);
  assert.ok(sameBits(sol.ys.toFloat64Array(), clean.ys.toFloat64Array()));
  // A kept view may be stale or detached: writing to it must not trap.
  kept[0] = 1;
  [sol, clean].forEach((s) => s.dispose());
  assertIntact('after out-of-view writes');
});

test('solves nested in callbacks: 64 levels, then a clean refusal', () => {
  let depth = 0, deepest = 0, refusal = null;
  const nest = () => {
    let first = true;
    return (t, y, p, dydt, k) => {
      if (first) {
        first = false;
        depth++;
        deepest = Math.max(deepest, depth);
        try {
          ot.solveDense({ ...decay, params: [1], tEval: [0, 0.01], rhs: nest() }).dispose();
        } catch (e) {
          refusal ??= e;
        } finally {
          depth--;
        }
      }
      decayRhs(t, y, p, dydt, k);
    };
  };
  const sol = ot.solveDense({ ...decay, rhs: nest() });
  assert.equal(sol.ok, true);
  sol.dispose();
  assert.equal(deepest, 64);
  assert.ok(refusal instanceof OdeTensorError);
  assert.match(refusal.message, /^solve: 64 solves already running/);
  assertIntact('after nesting');
});

test('solves started with the JS stack nearly full: an Error, never a trap or a leak', () => {
  const outcomes = new Map();
  const tally = (k) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
  // Recurses to depth `target`, solves there and hands what it threw back up
  // (checking it down there could overflow the stack again).
  function at(n, target) {
    if (n < target) return at(n + 1, target);
    try {
      ot.solveDense(decay).dispose();
      return null;
    } catch (e) {
      return { e };
    }
  }
  const outcome = (res) => {
    if (res === null) return 'ok';
    const e = caught(() => { throw res.e; });
    return `${e.name}${e.status ? ` ${e.status}` : ''}`;
  };
  // The deepest recursion that still returns (searched three times: frames
  // shrink as the JIT warms up), then every depth near it.
  let limit = 0;
  for (let round = 0; round < 3; round++) {
    limit = 0;
    for (let step = 1 << 15; step >= 1; step >>= 1) {
      try { outcome(at(0, limit + step)); limit += step; } catch { /* too deep */ }
    }
  }
  for (let t = Math.max(0, limit - 600); t <= limit + 100; t++) {
    let res;
    try { res = at(0, t); } catch (e) {
      assert.ok(e instanceof RangeError, String(e)); // the recursion itself overflowed
      tally('recursion overflowed');
      continue;
    }
    tally(outcome(res));
  }
  console.log(`near the stack limit (${limit} frames):`, Object.fromEntries(outcomes));
  assert.ok(outcomes.get('ok') > 0);
  assert.ok(outcomes.get('recursion overflowed') > 0, 'the scan reached the limit');
  assert.ok(outcomes.size >= 3, 'the scan saw solves refused near the limit');
  assertIntact('after the stack-limit scan');
});

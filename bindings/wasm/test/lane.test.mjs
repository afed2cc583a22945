// The lane index JS callbacks get is the library's ot_callback_lane(): the
// lane in lanes mode, the block's first lane in lockstep (column b is lane
// + b), the lane itself for one-lane calls (onEvent, the loss, its
// integrand, out under a sum-of-squares loss), for any lockstepBlock. Lane
// b's params are [b, rate], so each call checks p[np * col] === lane + col.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../index.mjs';

const ot = await load();
const NB = 8, NP = 2;
const params = Array.from({ length: NB }, (_, b) => [b, 0.1 + 0.05 * b]).flat();

// Records [kind, what went wrong] for calls whose lane index is off.
function recorder() {
  const calls = {}, wrong = [];
  const check = (kind, p, k, lane) => {
    calls[kind] = (calls[kind] ?? 0) + 1;
    for (let b = 0; b < k; b++) // the adjoint's differences move p by ~1e-8 |p|
      if (!(Math.abs(p[NP * b] - (lane + b)) < 0.25)) {
        wrong.push(`${kind}: lane ${lane} column ${b} holds lane ${p[NP * b]}'s params`);
        return;
      }
  };
  return { calls, wrong, check };
}

// y' = -rate y, y0 from init; roots at y = 0.5 (handled, nothing changed).
function problem(r) {
  return {
    nstates: 1, nparams: NP, params, tEval: [0, 1, 2, 4],
    rhs(t, y, p, dydt, k, lane) {
      r.check('rhs', p, k, lane);
      for (let b = 0; b < k; b++) dydt[b] = -p[NP * b + 1] * y[b];
    },
    jac(t, y, p, J, k, lane) {
      r.check('jac', p, k, lane);
      for (let b = 0; b < k; b++) J[b] = -p[NP * b + 1];
    },
    init(p, y0, k, lane) {
      r.check('init', p, k, lane);
      for (let b = 0; b < k; b++) y0[b] = 1;
    },
    out(t, y, p, o, k, lane) {
      r.check('out', p, k, lane);
      for (let b = 0; b < k; b++) o[b] = 2 * y[b];
    },
    nout: 1,
    roots(t, y, p, g, k, lane) {
      r.check('roots', p, k, lane);
      for (let b = 0; b < k; b++) g[b] = y[b] - 0.5;
    },
    nroots: 1, eventActions: ['handle'],
    onEvent(t, root, y, p, lane) { r.check('onEvent', p, 1, lane); },
  };
}

const MODES = [
  ['lanes', {}], ['lockstep, blocks of 3', { mode: 'lockstep', lockstepBlock: 3 }],
  ['lockstep, one block', { mode: 'lockstep' }],
];

test('every forward callback gets its first lane, in lanes mode and any lockstep block', () => {
  for (const [name, options] of MODES) {
    const r = recorder();
    const sol = ot.solveDense({ ...problem(r), options: { rtol: 1e-8, atol: 1e-10, ...options } });
    assert.ok(sol.ok, sol.message.join('; '));
    assert.deepEqual(r.wrong, [], name);
    for (const kind of ['rhs', 'jac', 'init', 'out', 'roots', 'onEvent'])
      assert.ok(r.calls[kind] > 0, `${name}: ${kind} never called`);
    sol.dispose();
  }
});

test('the adjoint\'s one-lane calls get their own lane in lockstep blocks too', () => {
  for (const [name, options] of MODES) {
    const r = recorder();
    const { roots, nroots, eventActions, onEvent, ...spec } = problem(r);
    const tEval = [0.5, 1, 2];
    // a sum of squares through out: out is called one lane at a time
    const a = ot.solveAdjoint({ ...spec, tEval, loss: { data: [1, 1, 1] }, options });
    // a loss function and an integrand, one lane a call
    const b = ot.solveAdjoint({
      ...spec, tEval, options,
      loss: {
        fn(t, i, y, p, g, dgdy, dgdp, k, lane) { r.check('loss', p, k, lane); g[0] = y[0]; dgdy[0] = 1; },
        integrand(t, y, p, q, dqdy, dqdp, lane) { r.check('integrand', p, 1, lane); q[0] = y[0]; dqdy[0] = 1; },
      },
    });
    assert.ok(a.ok && b.ok, [...a.message, ...b.message].join('; '));
    assert.deepEqual(r.wrong, [], name);
    for (const kind of ['rhs', 'out', 'loss', 'integrand'])
      assert.ok(r.calls[kind] > 0, `${name}: ${kind} never called`);
    a.dispose();
    b.dispose();
  }
});

test('a solve nested in a callback has its own lanes and leaves the outer ones right', () => {
  const outer = recorder(), inner = recorder();
  const sol = ot.solveDense({
    ...problem(outer), roots: undefined, nroots: undefined, eventActions: undefined, onEvent: undefined,
    init(p, y0, k, lane) {
      // three lanes of their own: indices 0..2 inside
      const { init: _, out: __, nout: ___, ...spec } = problem(inner);
      ot.solveDense({ ...spec, y0: [1], params: params.slice(0, 3 * NP), tEval: [0, 1] }).dispose();
      outer.check('init', p, k, lane);
      for (let b = 0; b < k; b++) y0[b] = 1;
    },
    options: { mode: 'lockstep', lockstepBlock: 3 },
  });
  assert.ok(sol.ok, sol.message.join('; '));
  assert.deepEqual(outer.wrong, []);
  assert.deepEqual(inner.wrong, []);
  assert.equal(outer.calls.init, 3);
  sol.dispose();
});

// The kernel methods from JS (issue 27): odetensor's own per-lane
// integrators by name, each against the analytic oscillator; an autonomous
// problem in lane groups bit for bit a lane at a time; refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../index.mjs';

const ot = await load();

const KERNEL = ['ros23', 'rodas4', 'rodas5p', 'tsit5', 'vern7'];
const T = [0.5, 1, 2, 5];

// Rosenbrock23 at its own (loose) tolerances, within a wider bound: on an
// undamped oscillator its global error grows like rtol^(-1/3) in tolerance
// units (order 2, each step's error within the tolerance): 290 units at
// 1e-3, 1280 at 1e-5, where BDF is at 40 and 160 and Rodas4 at 10 and 13.
const rtolOf = (method) => (method === 'ros23' ? 1e-3 : 1e-8);
const boundOf = (method) => (method === 'ros23' ? 500 : 100);

// y1' = y2, y2' = -w y1 from (0, 1) for lane b's w = 1 + b / 4.
function oscillator(method, options = {}, lanes = 9) {
  return ot.solveDense({
    nstates: 2,
    nparams: 1,
    rhs: (t, y, p, f, k) => {
      for (let b = 0; b < k; b++) { f[2 * b] = y[2 * b + 1]; f[2 * b + 1] = -p[b] * y[2 * b]; }
    },
    jac: (t, y, p, J, k) => { for (let b = 0; b < k; b++) { J[4 * b + 1] = -p[b]; J[4 * b + 2] = 1; } },
    y0: [0, 1],
    params: Array.from({ length: lanes }, (_, b) => 1 + b / 4),
    tEval: T,
    options: { method, rtol: rtolOf(method), atol: 1e-10, ...options },
  });
}

test('every kernel method follows the oscillator within its tolerance', () => {
  for (const method of KERNEL) {
    const sol = oscillator(method);
    assert.ok(sol.ok, `${method}: ${sol.message.join('; ')}`);
    for (let b = 0; b < 9; b++) {
      const w = Math.sqrt(1 + b / 4);
      T.forEach((t, j) => {
        const exact = Math.sin(w * t) / w;
        const rtol = rtolOf(method);
        const units = Math.abs(sol.ys.get(0, j, b) - exact) / (1e-10 + rtol * Math.abs(exact));
        assert.ok(units < boundOf(method), `${method}, lane ${b}, t = ${t}: ${units} units`);
      });
    }
  }
});

test('an autonomous problem runs in lane groups bit for bit a lane at a time', () => {
  for (const method of ['rodas4', 'tsit5']) {
    const one = oscillator(method, { laneGroup: 1 });
    const grp = oscillator(method, { autonomous: true, laneGroup: 4 });
    assert.ok(one.ok && grp.ok);
    assert.deepEqual(grp.ys.toFloat64Array(), one.ys.toFloat64Array());
  }
});

test('a lane group of an rhs that reads t, and sensitivities, are refused', () => {
  assert.throws(() => oscillator('rodas4', { laneGroup: 4 }), /laneGroup: 4, but .*autonomous/);
  assert.throws(() => oscillator('rodas4', { autonomous: 'yes' }), /options\.autonomous: .*true or false/);
  assert.throws(() => ot.solveFwdSens({ nstates: 1, nparams: 1, rhs: (t, y, p, f, k) => { for (let b = 0; b < k; b++) f[b] = -p[b] * y[b]; },
    y0: [1], params: [1], tEval: [1], options: { method: 'rodas5p' } }), /the kernel solver has no forward sensitivities/);
});

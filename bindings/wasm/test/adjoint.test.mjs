// Gradients by the adjoint method through the JS API (issue 15): against
// central differences of the loss, a loss function against the same sum of
// squares, and what is refused or fails a lane.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../index.mjs';

const ot = await load();

// Lotka-Volterra, p = (alpha, beta, delta, gamma), with jac and dfdp.
const lv = {
  nstates: 2, nparams: 4,
  rhs(t, y, p, f, k) {
    for (let b = 0; b < k; b++) {
      const [x, z] = [y[2 * b], y[2 * b + 1]], [a, be, d, g] = p.subarray(4 * b, 4 * b + 4);
      f[2 * b] = a * x - be * x * z; f[2 * b + 1] = d * x * z - g * z;
    }
  },
  jac(t, y, p, J, k) {
    for (let b = 0; b < k; b++) {
      const [x, z] = [y[2 * b], y[2 * b + 1]], [a, be, d, g] = p.subarray(4 * b, 4 * b + 4);
      J[4 * b] = a - be * z; J[4 * b + 1] = d * z; J[4 * b + 2] = -be * x; J[4 * b + 3] = d * x - g;
    }
  },
  dfdp(t, y, p, D, k) {
    for (let b = 0; b < k; b++) {
      const [x, z] = [y[2 * b], y[2 * b + 1]], o = 8 * b;
      D[o] = x; D[o + 2] = -x * z; D[o + 5] = x * z; D[o + 7] = -z;
    }
  },
};
const tEval = Array.from({ length: 10 }, (_, i) => 1 + i);
const data = tEval.flatMap((t) => [2 + 0.8 * Math.sin(0.9 * t), 1.5 + 0.6 * Math.cos(0.7 * t)]);
const params = [1, 0.4, 0.3, 0.8, 1.05, 0.4, 0.29, 0.8];
const y0 = [2, 1];
const options = { rtol: 1e-10, atol: 1e-12 };

const squares = (sol, b) => {
  let l = 0;
  tEval.forEach((_, i) => { for (let r = 0; r < 2; r++) l += (sol.ys.get(r, i, b) - data[2 * i + r]) ** 2; });
  return l;
};

test('adjoint gradients match central differences of the loss, params and y0', () => {
  const sol = ot.solveAdjoint({ ...lv, y0, params, tEval, loss: { data }, options });
  assert.deepEqual(sol.loss.shape, [2]);
  assert.deepEqual(sol.gradParams.shape, [4, 2]);
  assert.deepEqual(sol.gradY0.shape, [2, 2]);
  assert.ok(sol.adjointBytes[0] > 0);
  for (let b = 0; b < 2; b++) {
    assert.ok(Math.abs(sol.loss.get(b) - squares(sol, b)) <= 1e-12 * squares(sol, b));
    // 12 perturbed lanes in one lockstep solve (shared steps: clean differences).
    const p = params.slice(4 * b, 4 * b + 4), h = 1e-5, ps = [], ys = [];
    for (let k = 0; k < 6; k++) for (const s of [1, -1]) {
      const q = p.slice(), z = y0.slice();
      if (k < 4) q[k] *= 1 + s * h; else z[k - 4] *= 1 + s * h;
      ps.push(...q); ys.push(...z);
    }
    const fd = ot.solveDense({ ...lv, y0: ys, params: ps, tEval, options: { ...options, mode: 'lockstep' } });
    const grads = [0, 1, 2, 3].map((j) => sol.gradParams.get(j, b)).concat([0, 1].map((k) => sol.gradY0.get(k, b)));
    const big = Math.max(...grads.map(Math.abs));
    for (let k = 0; k < 6; k++) {
      const x = k < 4 ? p[k] : y0[k - 4];
      const d = (squares(fd, 2 * k) - squares(fd, 2 * k + 1)) / (2 * h * x);
      assert.ok(Math.abs(grads[k] - d) <= 1e-6 * big, `lane ${b} gradient ${k}: ${grads[k]} vs ${d}`);
    }
    fd.dispose();
  }
  sol.dispose();
});

test('a loss function gives the sum of squares; a throwing one fails its lane', () => {
  const fn = (t, i, y, p, g, dgdy) => {
    const e0 = y[0] - data[2 * i], e1 = y[1] - data[2 * i + 1];
    g[0] = e0 * e0 + e1 * e1; dgdy[0] = 2 * e0; dgdy[1] = 2 * e1;
  };
  const a = ot.solveAdjoint({ ...lv, y0, params, tEval, loss: { data }, options });
  const b = ot.solveAdjoint({ ...lv, y0, params, tEval, loss: fn, options });
  for (let lane = 0; lane < 2; lane++)
    for (let j = 0; j < 4; j++)
      assert.ok(Math.abs(a.gradParams.get(j, lane) - b.gradParams.get(j, lane)) <= 1e-12 * Math.abs(a.gradParams.get(j, lane)));
  const thrower = (t, i, y, p, g, dgdy, dgdp, k, lane) => { if (lane === 1 && i === 3) throw new Error('bad datum'); fn(t, i, y, p, g, dgdy); };
  const c = ot.solveAdjoint({ ...lv, y0, params, tEval, loss: thrower, options });
  assert.equal(c.status[0], 'OT_OK');
  assert.equal(c.status[1], 'OT_ERR_CALLBACK');
  assert.match(c.message[1], /^loss threw Error: bad datum/);
  assert.ok(Number.isNaN(c.gradParams.get(0, 1)));
  for (const s of [a, b, c]) s.dispose();
});

test('lockstep gives lanes mode\'s gradients', () => {
  const a = ot.solveAdjoint({ ...lv, y0, params, tEval, loss: { data }, options });
  const b = ot.solveAdjoint({ ...lv, y0, params, tEval, loss: { data }, options: { ...options, mode: 'lockstep' } });
  for (let lane = 0; lane < 2; lane++) {
    for (let j = 0; j < 4; j++)
      assert.ok(Math.abs(a.gradParams.get(j, lane) - b.gradParams.get(j, lane)) <= 1e-6 * Math.abs(a.gradParams.get(j, lane)));
    for (let k = 0; k < 2; k++)
      assert.ok(Math.abs(a.gradY0.get(k, lane) - b.gradY0.get(k, lane)) <= 1e-6 * Math.abs(a.gradY0.get(k, lane)));
  }
  a.dispose();
  b.dispose();
});

test('solveAdjoint refusals: a missing or malformed loss, loss elsewhere', () => {
  const is = (re) => (e) => e.status === 'OT_ERR_ARG' || e.status === 'OT_ERR_SHAPE' ? re.test(e.message) : false;
  assert.throws(() => ot.solveAdjoint({ ...lv, y0, params, tEval }), is(/^loss: undefined/));
  assert.throws(() => ot.solveAdjoint({ ...lv, y0, params, tEval, loss: { data: data.slice(3) } }), is(/^loss\.data: 17 values/));
  assert.throws(() => ot.solveDense({ ...lv, y0, params, tEval, loss: { data } }), is(/only for solveAdjoint/));
});

test('an integral term: L = integral of y^2 matches the analytic gradient, both modes', () => {
  const rhs = (t, y, p, f, k) => { for (let b = 0; b < k; b++) f[b] = -p[b] * y[b]; };
  const integrand = (t, y, p, q, dqdy) => { q[0] = y[0] * y[0]; dqdy[0] = 2 * y[0]; };
  const ks = [0.3, 0.7], as = [1, 1.2], T = 3;
  for (const mode of ['lanes', 'lockstep']) {
    const sol = ot.solveAdjoint({ nstates: 1, nparams: 1, rhs, y0: as, params: ks, tEval: [1, 2, T],
      loss: { integrand }, options: { mode, rtol: 1e-10, atol: 1e-12 } });
    ks.forEach((k, b) => {
      const a = as[b], e = Math.exp(-2 * k * T);
      const l = a * a * (1 - e) / (2 * k), dk = a * a * (T * e / k - (1 - e) / (2 * k * k)), da = a * (1 - e) / k;
      assert.ok(Math.abs(sol.loss.get(b) - l) <= 1e-8 * l, `${mode} L`);
      assert.ok(Math.abs(sol.gradParams.get(0, b) - dk) <= 1e-7 * Math.abs(dk), `${mode} dL/dk`);
      assert.ok(Math.abs(sol.gradY0.get(0, b) - da) <= 1e-7 * Math.abs(da), `${mode} dL/da`);
    });
    sol.dispose();
  }
});

// Issue 22: lanes fail alone in the lockstep adjoint. y0' = -k y0 beside an
// oscillator (y1, y2)' = w (y2, -y1), p = (k, w): lane 2's oscillator rests
// (an easy forward pass) but its lambda does not, and with w = 1e4 its
// backward pass needs more than maxSteps; with the oscillator moving, its
// forward pass does.
const osc = {
  nstates: 3, nparams: 2,
  rhs(t, y, p, f, k) {
    for (let b = 0; b < k; b++) {
      const [kk, w] = [p[2 * b], p[2 * b + 1]];
      f[3 * b] = -kk * y[3 * b]; f[3 * b + 1] = w * y[3 * b + 2]; f[3 * b + 2] = -w * y[3 * b + 1];
    }
  },
  jac(t, y, p, J, k) {
    for (let b = 0; b < k; b++) {
      J[9 * b] = -p[2 * b]; J[9 * b + 7] = p[2 * b + 1]; J[9 * b + 5] = -p[2 * b + 1];
    }
  },
};

test('a lane whose forward or backward pass hits maxSteps fails alone in a lockstep adjoint', () => {
  const oscT = [1, 2, 3, 4, 5], oscData = oscT.flatMap(() => [0.5, 0.3, NaN]);
  const oscParams = [0.5, 1, 0.6, 1.3, 0.7, 1e4, 0.8, 0.7];
  const opts = { rtol: 1e-8, atol: 1e-10, maxSteps: 3000 };
  for (const pass of ['backward', 'forward']) {
    const y0s = [0, 1, 2, 3].flatMap((b) => [1, b === 2 && pass === 'backward' ? 0 : 0.5, 0]);
    const run = (mode) => ot.solveAdjoint({ ...osc, y0: y0s, params: oscParams, tEval: oscT,
      loss: { data: oscData }, options: { ...opts, mode } });
    const lock = run('lockstep'), lanes = run('lanes');
    assert.deepEqual(lock.status, ['OT_OK', 'OT_OK', 'OT_ERR_SOLVER', 'OT_OK'], pass);
    assert.deepEqual(lanes.status, lock.status, pass);
    assert.match(lock.message[2], pass === 'backward' ? /backward integration stopped/ : /CVODE stopped before t = 1/);
    for (const b of [0, 1, 3]) {
      const big = Math.max(...[0, 1].map((j) => Math.abs(lanes.gradParams.get(j, b))));
      for (let j = 0; j < 2; j++)
        assert.ok(Math.abs(lock.gradParams.get(j, b) - lanes.gradParams.get(j, b)) <= 1e-6 * big,
          `${pass} lane ${b} dL/dp${j}: ${lock.gradParams.get(j, b)} vs ${lanes.gradParams.get(j, b)}`);
    }
    assert.ok(Number.isNaN(lock.gradParams.get(0, 2)));
    lock.dispose();
    lanes.dispose();
  }
});

test('the backward pass has its own step limit and tolerances, reported per lane (issue 23)', () => {
  const oscT = [1, 2, 3, 4, 5], oscData = oscT.flatMap(() => [0.5, 0.3, NaN]);
  const oscParams = [0.5, 1, 0.6, 1.3, 0.7, 1e4, 0.8, 0.7];
  const y0s = [0, 1, 2, 3].flatMap((b) => [1, b === 2 ? 0 : 0.5, 0]);
  const run = (options) => ot.solveAdjoint({ ...osc, y0: y0s, params: oscParams, tEval: oscT,
    loss: { data: oscData }, options: { rtol: 1e-8, atol: 1e-10, ...options } });
  // The default maxSteps (100,000): lane 2's runaway backward pass stops at its own limit.
  const sol = run({});
  assert.deepEqual(sol.status, ['OT_OK', 'OT_OK', 'OT_ERR_SOLVER', 'OT_OK']);
  for (const s of sol.stats) {
    assert.equal(s.adjMaxSteps, Math.max(500, 10 * s.steps));
    assert.ok(s.adjSteps > 0);
  }
  sol.dispose();
  const byHand = run({ adjointMaxSteps: 40 });
  assert.equal(byHand.stats[0].adjMaxSteps, 40);
  assert.equal(byHand.status[0], 'OT_ERR_SOLVER');
  byHand.dispose();
  assert.throws(() => run({ adjointRtol: 1e-6 }), (e) => e.status === 'OT_ERR_VALUE' && /give both/.test(e.message));
  const tight = run({ adjointRtol: 1e-11, adjointAtol: 1e-13 }), loose = run({});
  assert.ok(tight.stats[0].adjSteps > loose.stats[0].adjSteps);
  tight.dispose();
  loose.dispose();
});

// Forward sensitivities from df/dp (issue 15) through the JS API: against
// central differences of extra solves and against difference quotients, in
// both modes; a lockstep dfdp written for lane 0 only fails with a message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../index.mjs';

const ot = await load();

// SEIR with waning immunity, p = (beta, sigma, gamma, omega); all lanes.
const seir = {
  nstates: 4, nparams: 4,
  rhs(t, y, p, f, k) {
    for (let b = 0; b < k; b++) {
      const [S, E, I, R] = y.subarray(4 * b, 4 * b + 4), [be, si, ga, om] = p.subarray(4 * b, 4 * b + 4);
      f[4 * b] = -be * S * I + om * R; f[4 * b + 1] = be * S * I - si * E;
      f[4 * b + 2] = si * E - ga * I; f[4 * b + 3] = ga * I - om * R;
    }
  },
  jac(t, y, p, J, k) {
    for (let b = 0; b < k; b++) {
      const o = 16 * b, [S, , I] = y.subarray(4 * b, 4 * b + 4), [be, si, ga, om] = p.subarray(4 * b, 4 * b + 4);
      J[o] = -be * I; J[o + 1] = be * I;
      J[o + 5] = -si; J[o + 6] = si;
      J[o + 8] = -be * S; J[o + 9] = be * S; J[o + 10] = -ga; J[o + 11] = ga;
      J[o + 12] = om; J[o + 15] = -om;
    }
  },
  dfdp(t, y, p, d, k) {
    for (let b = 0; b < k; b++) {
      const o = 16 * b, [S, E, I, R] = y.subarray(4 * b, 4 * b + 4);
      d[o] = -S * I; d[o + 1] = S * I;
      d[o + 5] = -E; d[o + 6] = E;
      d[o + 10] = -I; d[o + 11] = I;
      d[o + 12] = R; d[o + 15] = -R;
    }
  },
  y0: [0.99, 0.01, 0, 0],
};
const tEval = [1, 10, 40, 100];
const params = [0.6, 0.2, 0.1, 0.01, 0.8, 0.21, 0.12, 0.02];

test('sensitivities from dfdp match central differences and difference quotients, both modes', () => {
  for (const mode of ['lanes', 'lockstep']) {
    const options = { mode, rtol: 1e-10, atol: 1e-12 };
    const sol = ot.solveFwdSens({ ...seir, params, tEval, options });
    const { dfdp, ...plain } = seir;
    assert.equal(typeof dfdp, 'function');
    const dq = ot.solveFwdSens({ ...plain, params, tEval, options: { ...options, rtol: 1e-8, atol: 1e-10 } });
    for (let b = 0; b < 2; b++) {
      // Central differences in one lockstep batch (shared steps, no step-selection noise).
      const p = params.slice(4 * b, 4 * b + 4), h = 1e-5, pp = [];
      for (let j = 0; j < 4; j++) for (const s of [1, -1]) { const q = p.slice(); q[j] *= 1 + s * h; pp.push(...q); }
      const fd = ot.solveDense({ ...plain, params: pp, tEval, options: { ...options, mode: 'lockstep' } });
      for (let j = 0; j < 4; j++) for (let r = 0; r < 4; r++) {
        const d = tEval.map((_, i) => (fd.ys.get(r, i, 2 * j) - fd.ys.get(r, i, 2 * j + 1)) / (2 * h * p[j]));
        const big = Math.max(...d.map(Math.abs));
        tEval.forEach((t, i) => {
          const s = sol.sens[j].get(r, i, b), q = dq.sens[j].get(r, i, b);
          assert.ok(Math.abs(s - d[i]) <= 1e-6 * big, `${mode} lane ${b} p${j} y${r} t ${t}: ${s} vs ${d[i]}`);
          assert.ok(Math.abs(q - d[i]) <= 1e-5 * big, `${mode} DQ lane ${b} p${j} y${r} t ${t}: ${q} vs ${d[i]}`);
        });
      }
      fd.dispose();
    }
    sol.dispose();
    dq.dispose();
  }
});

test('dfdp needs jac; a lockstep dfdp written for lane 0 only fails naming lane 1', () => {
  const { jac, ...noJac } = seir;
  assert.equal(typeof jac, 'function');
  assert.throws(() => ot.solveFwdSens({ ...noJac, params, tEval }),
    (e) => e.status === 'OT_ERR_ARG' && /\(jac\)/.test(e.message));
  const lane0 = (t, y, p, d) => { d[0] = -y[0] * y[2]; d[1] = y[0] * y[2]; };
  const sol = ot.solveFwdSens({ ...seir, dfdp: lane0, params, tEval, options: { mode: 'lockstep' } });
  assert.equal(sol.status[1], 'OT_ERR_CALLBACK');
  assert.match(sol.message[1], /dfdp wrote nothing for lane 1/);
  sol.dispose();
});

test('sensInitial: sensitivities to the initial values after the parameters\', both modes', () => {
  const rhs = (t, y, p, f, k) => { for (let b = 0; b < k; b++) f[b] = -p[b] * y[b]; };
  for (const mode of ['lanes', 'lockstep']) {
    const sol = ot.solveFwdSens({ nstates: 1, nparams: 1, rhs, y0: [1, 2], params: [0.5, 1.5], tEval: [1, 2],
      options: { mode, sensInitial: true, rtol: 1e-9, atol: 1e-11 } });
    assert.equal(sol.sens.length, 2);
    [0.5, 1.5].forEach((k, b) => [1, 2].forEach((t, i) => {
      assert.ok(Math.abs(sol.sens[1].get(0, i, b) - Math.exp(-k * t)) <= 1e-7, `${mode} dy/dy0 lane ${b}`);
      assert.ok(Math.abs(sol.sens[0].get(0, i, b) + t * (b + 1) * Math.exp(-k * t)) <= 1e-6, `${mode} dy/dk lane ${b}`);
    }));
    sol.dispose();
  }
});

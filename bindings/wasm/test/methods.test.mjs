// The integrators from JS (issue 16): ARKODE's explicit, ESDIRK and IMEX
// Runge-Kutta pairs through the same options as 'bdf' and 'adams', in both
// modes, against the analytic oscillator; an IMEX split; refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../index.mjs';

const ot = await load();

const METHODS = ['bs32', 'dp54', 'verner65', 'esdirk32', 'esdirk43', 'esdirk54', 'imex32', 'imex43', 'imex54'];
const T = [0.5, 1, 2, 5];

// y1' = y2, y2' = -y1 from (0, 1): y1 = sin t. For IMEX the first equation
// is the explicit part, the second the implicit one (with its Jacobian).
function oscillator(method, mode, lanes = 3) {
  const imex = method.startsWith('imex');
  const spec = {
    nstates: 2,
    rhs: imex
      ? (t, y, p, f, k) => { for (let b = 0; b < k; b++) { f[2 * b] = 0; f[2 * b + 1] = -y[2 * b]; } }
      : (t, y, p, f, k) => { for (let b = 0; b < k; b++) { f[2 * b] = y[2 * b + 1]; f[2 * b + 1] = -y[2 * b]; } },
    jac: imex
      ? (t, y, p, J, k) => { for (let b = 0; b < k; b++) J[4 * b + 1] = -1; }
      : (t, y, p, J, k) => { for (let b = 0; b < k; b++) { J[4 * b + 1] = -1; J[4 * b + 2] = 1; } },
    y0: Array.from({ length: lanes }, () => [0, 1]).flat(),
    tEval: T,
    options: { method, mode, rtol: 1e-9, atol: 1e-11 },
  };
  if (imex) spec.rhsExplicit = (t, y, p, f, k) => { for (let b = 0; b < k; b++) { f[2 * b] = y[2 * b + 1]; f[2 * b + 1] = 0; } };
  return ot.solveDense(spec);
}

test('every method follows sin t in both modes, lockstep lanes equal to lanes mode', () => {
  for (const method of METHODS) {
    const lanes = oscillator(method, 'lanes');
    const lock = oscillator(method, 'lockstep');
    for (const sol of [lanes, lock]) assert.ok(sol.ok, `${method}: ${sol.message.join('; ')}`);
    for (let b = 0; b < 3; b++) {
      T.forEach((t, j) => {
        const y = lanes.ys.get(0, j, b);
        assert.ok(Math.abs(y - Math.sin(t)) < 1e-7, `${method} lane ${b} t ${t}: ${y}`);
        assert.equal(lock.ys.get(0, j, b), y, `${method} lockstep lane ${b} t ${t}`);
      });
    }
    assert.ok(lanes.stats[0].steps > 0);
    assert.deepEqual(lock.stats[2], lanes.stats[0], method);
    lanes.dispose();
    lock.dispose();
  }
});

test('the Runge-Kutta methods refuse what they lack, naming the method', () => {
  const base = {
    nstates: 1, nparams: 1,
    rhs: (t, y, p, f, k) => { for (let b = 0; b < k; b++) f[b] = -p[b] * y[b]; },
    y0: [1], params: [0.5], tEval: [1],
  };
  assert.throws(() => ot.solveFwdSens({ ...base, options: { method: 'dp54' } }),
    /OT_ERK_DP54 has no forward sensitivities/);
  assert.throws(() => ot.solveDense({ ...base, options: { method: 'imex43' } }),
    /OT_IMEX_ARK43 splits the rhs/);
  assert.throws(() => ot.solveDense({ ...base, rhsExplicit: base.rhs, options: { method: 'bdf' } }),
    /OT_BDF does not split the rhs/);
  assert.throws(() => ot.solveDense({ ...base, options: { method: 'dp54', maxOrder: 3 } }),
    /fixed order/);
  assert.throws(() => ot.solveDense({ ...base, options: { method: 'rk4' } }),
    /options.method: 'rk4'; expected 'bdf' or 'adams' or 'bs32'/);
});

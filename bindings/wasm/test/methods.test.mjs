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
    /'dp54' has no forward sensitivities/);
  assert.throws(() => ot.solveDense({ ...base, options: { method: 'imex43' } }),
    /'imex43' splits the rhs/);
  assert.throws(() => ot.solveDense({ ...base, rhsExplicit: base.rhs, options: { method: 'bdf' } }),
    /'bdf' does not split the rhs/);
  assert.throws(() => ot.solveDense({ ...base, options: { method: 'dp54', maxOrder: 3 } }),
    /fixed order/);
  assert.throws(() => ot.solveDense({ ...base, options: { method: 'rk4' } }),
    /options.method: 'rk4'; expected 'bdf' or 'adams' or 'bs32'/);
});

// ---- Linear solvers: band and GMRES against dense ---------------------------

// The 1-D Brusselator on N points (n = 2N, (u_i, v_i) interleaved), diffusion
// a = p[0]: bandwidth 2 each side.
const N = 40, NS = 2 * N;
function rdRhs(t, y, p, f) {
  const c = p[0] * (N + 1) * (N + 1), ends = [1, 3];
  for (let i = 0; i < N; i++) {
    const u = y[2 * i], v = y[2 * i + 1];
    f[2 * i] = 1 + u * u * v - 4 * u;
    f[2 * i + 1] = 3 * u - u * u * v;
    for (let s = 0; s < 2; s++) {
      const l = i > 0 ? y[2 * (i - 1) + s] : ends[s], r = i < N - 1 ? y[2 * (i + 1) + s] : ends[s];
      f[2 * i + s] += c * (l - 2 * y[2 * i + s] + r);
    }
  }
}
// J into dense [n, n] or band [5, n] storage (mupper = mlower = 2).
function rdJac(band) {
  return (t, y, p, J) => {
    const c = p[0] * (N + 1) * (N + 1);
    const put = (i, j, v) => { J[band ? 2 + i - j + 5 * j : i + NS * j] += v; };
    for (let k = 0; k < NS; k++) {
      put(k, k, -2 * c);
      if (k >= 2) put(k, k - 2, c);
      if (k + 2 < NS) put(k, k + 2, c);
    }
    for (let i = 0; i < N; i++) {
      const u = y[2 * i], v = y[2 * i + 1];
      put(2 * i, 2 * i, 2 * u * v - 4); put(2 * i, 2 * i + 1, u * u);
      put(2 * i + 1, 2 * i, 3 - 2 * u * v); put(2 * i + 1, 2 * i + 1, -u * u);
    }
  };
}
// P = I - gamma D (diffusion), one tridiagonal solve per species.
const precondition = {
  nwork: N,
  setup(t, y, p, gamma, jok, work) {
    const c = p[0] * (N + 1) * (N + 1), off = -gamma * c, diag = 1 + 2 * gamma * c;
    work[0] = off / diag;
    for (let i = 1; i < N; i++) work[i] = off / (diag - off * work[i - 1]);
  },
  solve(t, y, p, gamma, r, z, work) {
    const c = p[0] * (N + 1) * (N + 1), off = -gamma * c, diag = 1 + 2 * gamma * c, d = new Float64Array(N);
    for (let s = 0; s < 2; s++) {
      d[0] = r[s] / diag;
      for (let i = 1; i < N; i++) d[i] = (r[2 * i + s] - off * d[i - 1]) / (diag - off * work[i - 1]);
      z[2 * (N - 1) + s] = d[N - 1];
      for (let i = N - 2; i >= 0; i--) z[2 * i + s] = d[i] - work[i] * z[2 * (i + 1) + s];
    }
  },
};
const rdY0 = Array.from({ length: NS }, (_, k) => (k % 2 ? 3 : 1 + Math.sin((2 * Math.PI * (k / 2 + 1)) / (N + 1))));
const rdSolve = (method, extra, options) => ot.solveDense({
  nstates: NS, nparams: 1, rhs: rdRhs, y0: rdY0, params: [0.02], tEval: [0.5, 1, 2],
  ...extra, options: { method, rtol: 1e-7, atol: 1e-9, bandwidths: [2, 2], ...options },
});

test('band and gmres (bare and preconditioned) equal dense within tolerance', () => {
  for (const method of ['bdf', 'esdirk43']) {
    const dense = rdSolve(method, { jac: rdJac(false) }, {});
    assert.ok(dense.ok, dense.message.join('; '));
    const others = [
      ['band + jac', rdSolve(method, { jac: rdJac(true) }, { linearSolver: 'band' })],
      ['band, difference quotients', rdSolve(method, {}, { linearSolver: 'band' })],
      ['gmres', rdSolve(method, {}, { linearSolver: 'gmres' })],
      ['gmres + precondition', rdSolve(method, { precondition }, { linearSolver: 'gmres', krylovDim: 10 })],
    ];
    for (const [label, sol] of others) {
      assert.ok(sol.ok, `${method} ${label}: ${sol.message.join('; ')}`);
      let worst = 0;
      for (let j = 0; j < 3; j++) for (let r = 0; r < NS; r++) worst = Math.max(worst, Math.abs(sol.ys.get(r, j, 0) - dense.ys.get(r, j, 0)));
      assert.ok(worst < 2e-6, `${method} ${label}: ${worst} from dense`);
    }
    assert.ok(others[2][1].stats[0].linIters > others[3][1].stats[0].linIters, `${method}: the preconditioner cuts Krylov iterations`);
    assert.equal(others[0][1].stats[0].linIters, 0);
    for (const [, s] of others) s.dispose();
    dense.dispose();
  }
});

test('linear solver options are checked, and lockstep refuses band and gmres', () => {
  assert.throws(() => rdSolve('bdf', {}, { linearSolver: 'lu' }), /options.linearSolver: 'lu'; expected 'dense' or 'band' or 'gmres'/);
  assert.throws(() => rdSolve('bdf', {}, { linearSolver: 'band', bandwidths: [2] }), /options.bandwidths/);
  assert.throws(() => rdSolve('bdf', {}, { linearSolver: 'band', mode: 'lockstep' }), /'band' runs in 'lanes' mode/);
  assert.throws(() => rdSolve('dp54', {}, { linearSolver: 'gmres' }), /'dp54' solves no linear systems/);
  assert.throws(() => rdSolve('bdf', { precondition }, {}), /the linear solver is not 'gmres'/);
  const thrown = rdSolve('bdf', { precondition: { ...precondition, solve() { throw new Error('no'); } } }, { linearSolver: 'gmres' });
  assert.equal(thrown.ok, false);
  assert.match(thrown.message[0], /precondition.solve threw/);
  thrown.dispose();
});

// The adjoint through doses and events from JS (issue 25): solveAdjoint
// with stops, stopsDp and handled roots against closed forms, against
// solveFwdSens, in both modes; per-lane output times in lockstep; what is
// refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../index.mjs';

const ot = await load();
const G = 9.81;
const tight = { rtol: 1e-10, atol: 1e-12 };

// An oral one-compartment model, p = (ka, CL, V, F, lag), doses of F * 100
// at tDose + lag, C = central / V; the loss a sum of squares of C.
const np = 5, doses = [0, 12], tEval = [0.75, 2, 6, 13, 20];
const params = [1.2, 3.0, 20.0, 0.8, 0.5, 0.7, 5.0, 35.0, 0.6, 0.25];
const closed = (t, [ka, CL, V, F, lag]) => doses.reduce((c, d) => {
  const s = t - d - lag, ke = CL / V;
  return s < 0 ? c : c + F * 100 * ka / (V * (ka - ke)) * (Math.exp(-ke * s) - Math.exp(-ka * s));
}, 0);
const data = [0, 1].flatMap((b) => tEval.map((t, i) => 1.1 * closed(t, params.slice(np * b, np * b + np)) + 0.05 * i));
const pk = (jac) => ({
  nstates: 2, nparams: np, nout: 1,
  rhs(t, y, p, d, k) {
    for (let b = 0; b < k; b++) {
      d[2 * b] = -p[np * b] * y[2 * b];
      d[2 * b + 1] = p[np * b] * y[2 * b] - p[np * b + 1] / p[np * b + 2] * y[2 * b + 1];
    }
  },
  out(t, y, p, o, k) { for (let b = 0; b < k; b++) o[b] = y[2 * b + 1] / p[np * b + 2]; },
  onEvent(t, root, y, p) { y[0] += p[3] * 100; },
  eventJac: jac ? (t, root, y, p, dz) => { dz[0 + (2 + np) * (2 + 3)] = 100; } : undefined,
  y0: [0, 0], params, tEval,
  stops: [0, 1].map((b) => doses.map((d) => d + params[np * b + 4])),
  stopsDp: doses.flatMap(() => [0, 0, 0, 0, 1]), // d stop / d lag = 1
});

test('solveAdjoint through doses with a lag matches the closed form and solveFwdSens, both modes', () => {
  for (const mode of ['lanes', 'lockstep']) for (const jac of [false, true]) {
    const what = `${mode} ${jac ? 'eventJac' : 'differences'}`;
    const adj = ot.solveAdjoint({ ...pk(jac), loss: { data }, options: { mode, ...tight } });
    const fwd = ot.solveFwdSens({ ...pk(jac), options: { mode, ...tight } });
    assert.ok(adj.ok, adj.message.join('; '));
    assert.ok(fwd.ok, fwd.message.join('; '));
    for (let b = 0; b < 2; b++) {
      const p = params.slice(np * b, np * b + np), d = data.slice(5 * b, 5 * b + 5);
      const loss = (q) => tEval.reduce((l, t, i) => l + (closed(t, q) - d[i]) ** 2, 0);
      assert.ok(Math.abs(adj.loss.get(b) - loss(p)) <= 1e-8 * loss(p), `${what} L lane ${b}`);
      for (let j = 0; j < np; j++) {
        const h = 1e-6 * Math.max(Math.abs(p[j]), 1), pp = [...p], pm = [...p];
        pp[j] += h; pm[j] -= h;
        const want = (loss(pp) - loss(pm)) / (2 * h), got = adj.gradParams.get(j, b);
        const viaSens = tEval.reduce((s, t, i) => s + 2 * (fwd.ys.get(0, i, b) - d[i]) * fwd.sens[j].get(0, i, b), 0);
        const scale = Math.max(Math.abs(want), 1e-3);
        assert.ok(Math.abs(got - want) < 1e-6 * scale, `${what} lane ${b} dL/dp${j}: ${got} vs ${want}`);
        assert.ok(Math.abs(got - viaSens) < 1e-6 * scale, `${what} lane ${b} dL/dp${j}: ${got} vs forward ${viaSens}`);
      }
    }
    adj.dispose();
    fwd.dispose();
  }
});

// A ball dropped from h0 with restitution e, p = (e); L = h(T) by a loss
// function; its derivatives in e and h0 against the flight formula's.
function height(T, h0, e) {
  const tFall = Math.sqrt(2 * h0 / G), v0 = G * tFall;
  if (T < tFall) return h0 - G * T * T / 2;
  let t = tFall, v = e * v0; // bounce 0 at tFall, upward at v after it
  while (t + 2 * v / G <= T) { t += 2 * v / G; v *= e; }
  return v * (T - t) - G * (T - t) ** 2 / 2;
}

test('the bouncing ball through handled roots against the flight formula: solveAdjoint and solveFwdSens, both modes', () => {
  const T = 2.5, h0s = [1, 2], es = [0.8, 0.7];
  const ball = {
    nstates: 2, nparams: 1,
    rhs(t, y, p, d, k) { for (let b = 0; b < k; b++) { d[2 * b] = y[2 * b + 1]; d[2 * b + 1] = -G; } },
    roots(t, y, p, g, k) { for (let b = 0; b < k; b++) g[b] = y[2 * b]; },
    nroots: 1, rootDirections: ['falling'], eventActions: ['handle'],
    onEvent(t, root, y, p) { y[1] = -p[0] * y[1]; },
    y0: [h0s[0], 0, h0s[1], 0], params: es, tEval: [T],
  };
  for (const mode of ['lanes', 'lockstep']) {
    const sol = ot.solveAdjoint({
      ...ball, loss: (t, i, y, p, g, dgdy) => { g[0] = y[0]; dgdy[0] = 1; }, options: { mode, ...tight },
    });
    const fwd = ot.solveFwdSens({ ...ball, options: { mode, sensInitial: true, ...tight } });
    assert.ok(sol.ok, sol.message.join('; '));
    assert.ok(fwd.ok, fwd.message.join('; '));
    assert.equal(fwd.sens.length, 3); // d / d e, then d / d y0 (h0, v0)
    for (let b = 0; b < 2; b++) {
      const [h0, e] = [h0s[b], es[b]], dh = 1e-6 * h0, de = 1e-6;
      assert.ok(Math.abs(sol.loss.get(b) - height(T, h0, e)) < 1e-8, `${mode} h(T) lane ${b}`);
      const dE = (height(T, h0, e + de) - height(T, h0, e - de)) / (2 * de);
      const dH = (height(T, h0 + dh, e) - height(T, h0 - dh, e)) / (2 * dh);
      assert.ok(Math.abs(sol.gradParams.get(0, b) - dE) < 1e-6 * Math.abs(dE), `${mode} lane ${b} dh/de ${sol.gradParams.get(0, b)} vs ${dE}`);
      assert.ok(Math.abs(sol.gradY0.get(0, b) - dH) < 1e-6 * Math.abs(dH), `${mode} lane ${b} dh/dh0 ${sol.gradY0.get(0, b)} vs ${dH}`);
      const [fE, fH] = [fwd.sens[0].get(0, 0, b), fwd.sens[1].get(0, 0, b)];
      assert.ok(Math.abs(fE - dE) < 1e-6 * Math.abs(dE), `${mode} lane ${b} forward dh/de ${fE} vs ${dE}`);
      assert.ok(Math.abs(fH - dH) < 1e-6 * Math.abs(dH), `${mode} lane ${b} forward dh/dh0 ${fH} vs ${dH}`);
    }
    sol.dispose();
    fwd.dispose();
  }
});

// Per-lane starts before the first dose leave y = 0 until it: the same
// gradients as from t = 0 (lanes mode: lockstep starts a block together).
test('solveAdjoint with per-lane output times: lockstep gives lanes mode\'s gradients; starts before the doses change nothing', () => {
  const times = [tEval, tEval.slice(1, 4)];
  const fn = (t, i, y, p, g, dgdy, dgdp, k, lane) => {
    const r = y[1] / p[2] - data[5 * lane + i];
    g[0] = r * r; dgdy[1] = 2 * r / p[2]; dgdp[2] = -2 * r * y[1] / (p[2] * p[2]);
  };
  const sols = [['lanes', undefined], ['lockstep', undefined], ['lanes', [-0.5, 0.1]]].map(([mode, starts]) => ot.solveAdjoint({
    ...pk(false), out: undefined, nout: undefined, tEval: times, starts, loss: fn, options: { mode, ...tight },
  }));
  for (const s of sols) assert.ok(s.ok, s.message.join('; '));
  for (const other of [1, 2]) for (let b = 0; b < 2; b++) {
    assert.ok(Math.abs(sols[0].loss.get(b) - sols[other].loss.get(b)) <= 1e-8 * sols[0].loss.get(b));
    for (let j = 0; j < np; j++) {
      const a = sols[0].gradParams.get(j, b), c = sols[other].gradParams.get(j, b);
      assert.ok(Math.abs(a - c) <= 1e-6 * Math.max(Math.abs(a), 1e-3), `run ${other} lane ${b} dL/dp${j}: ${a} vs ${c}`);
    }
  }
  const ref = (t, i, b) => closed(t, params.slice(np * b, np * b + np)) - data[5 * b + i]; // against the closed form
  [0, 1].forEach((b) => {
    const l = times[b].reduce((s, t, i) => s + ref(t, i, b) ** 2, 0);
    assert.ok(Math.abs(sols[1].loss.get(b) - l) <= 1e-8 * l, `lockstep L lane ${b}`);
  });
  for (const s of sols) s.dispose();
});

test('what the adjoint through events refuses', () => {
  const base = { nstates: 1, nparams: 1, rhs(t, y, p, d) { d[0] = -p[0] * y[0]; }, onEvent() {}, y0: [1], params: [1], tEval: [1] };
  const loss = { data: [0.5] };
  assert.throws(() => ot.solveAdjoint({ ...base, loss, stopsDp: [0] }), /stopsDp: given, but there are no stops/);
  assert.throws(() => ot.solveDense({ ...base, stops: [0.5], stopsDp: [0] }), /stopsDp: the stops' derivatives in p are for solveFwdSens\(\) and solveAdjoint\(\)/);
  assert.throws(() => ot.solve({ ...base, tEval: undefined, finalTime: 1, stops: [0.5] }), /stops: solve\(\) records every step/);
  // a root that stops its lane ends the loss early: refused, with the rule
  assert.throws(() => ot.solveAdjoint({
    ...base, roots(t, y, p, g) { g[0] = y[0] - 0.5; }, nroots: 1, eventActions: ['stop'], loss,
  }), /event_actions: root 0 stops its lane .*solveAdjoint takes roots that are handled or recorded/);
});

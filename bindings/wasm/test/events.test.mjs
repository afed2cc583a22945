// Events from JS (issue 14): root directions, recorded events, an onEvent
// handler that changes a lane's state, in both modes, against analytic
// times; a handler that throws fails its lane alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../index.mjs';

const ot = await load();
const G = 9.81;

const ball = (mode, extra = {}, method = undefined) => ot.solveDense({
  nstates: 2, nparams: 1,
  rhs(t, y, p, dydt, k) { for (let b = 0; b < k; b++) { dydt[2 * b] = y[2 * b + 1]; dydt[2 * b + 1] = -G; } },
  roots(t, y, p, g, k) { for (let b = 0; b < k; b++) g[b] = y[2 * b]; },
  nroots: 1, rootDirections: ['falling'], eventActions: ['handle'],
  onEvent(t, root, y, p) { y[1] = -p[0] * y[1]; },
  y0: [1, 0, 2, 0], params: [0.8, 0.8], tEval: [0, 2.5],
  options: { mode, rtol: 1e-10, atol: 1e-12, ...(method ? { method } : {}) }, ...extra,
});

// Bounce k of a ball dropped from h0 (restitution e) at rest.
function bounceTime(h0, e, k) {
  const t0 = Math.sqrt(2 * h0 / G), v0 = G * t0;
  let t = t0, ej = 1;
  for (let j = 0; j < k; j++) { ej *= e; t += 2 * ej * v0 / G; }
  return t;
}

test('onEvent bounces a ball at its analytic times, in both modes and the kernel methods', () => {
  for (const [mode, method] of [['lanes'], ['lockstep'], ['lanes', 'rodas5p'], ['lanes', 'vern7']]) {
    const sol = ball(mode, {}, method);
    assert.ok(sol.ok, sol.message.join('; '));
    const { times, before, after, count } = sol.events;
    for (let b = 0; b < 2; b++) {
      const h0 = [1, 2][b], v0 = Math.sqrt(2 * G * h0);
      let want = 0;
      while (bounceTime(h0, 0.8, want) < 2.5) want++;
      assert.equal(count[b], want, `${mode} lane ${b}`);
      for (let k = 0; k < want; k++) {
        assert.ok(Math.abs(times.get(k, b) - bounceTime(h0, 0.8, k)) < 1e-6, `${mode} lane ${b} bounce ${k}`);
        assert.ok(Math.abs(before.get(1, k, b) + v0 * 0.8 ** k) < 1e-5 * v0);
        assert.ok(Math.abs(after.get(1, k, b) - v0 * 0.8 ** (k + 1)) < 1e-5 * v0);
      }
    }
    sol.dispose();
  }
});

test("rootDirections: 'rising' skips the falling crossing; 'record' lets the lane go on", () => {
  const sine = (dirs, actions) => ot.solveDense({
    nstates: 2, rhs(t, y, p, d, k) { for (let b = 0; b < k; b++) { d[2 * b] = y[2 * b + 1]; d[2 * b + 1] = -y[2 * b]; } },
    roots(t, y, p, g, k) { for (let b = 0; b < k; b++) g[b] = y[2 * b]; }, nroots: 1,
    rootDirections: dirs, eventActions: actions, y0: [0, 1], tEval: [0, 10], options: { rtol: 1e-10, atol: 1e-12 },
  });
  const rising = sine(['rising'], undefined);
  assert.ok(Math.abs(rising.rootTime[0] - 2 * Math.PI) < 1e-7);
  assert.equal(rising.events.count[0], 1); // the stop, with its state
  assert.ok(Math.abs(rising.events.before.get(1, 0, 0) - 1) < 1e-6); // y2 = cos(2 pi)
  rising.dispose();
  const rec = sine(['both'], ['record']);
  assert.equal(rec.events.count[0], 3); // pi, 2 pi, 3 pi
  assert.equal(rec.count[0], 2); // reached t = 10
  assert.ok(Math.abs(rec.events.times.get(2, 0) - 3 * Math.PI) < 1e-6);
  rec.dispose();
});

test('a handler that throws fails its lane alone; bad event fields are refused', () => {
  for (const mode of ['lanes', 'lockstep']) {
    const sol = ball(mode, {
      onEvent(t, root, y, p, lane) { if (lane === 1) throw new Error('no bounce'); y[1] = -p[0] * y[1]; },
    });
    assert.equal(sol.status[0], 'OT_OK');
    assert.equal(sol.status[1], 'OT_ERR_CALLBACK');
    assert.match(sol.message[1], /^onEvent threw Error: no bounce; event handler returned -1/);
    sol.dispose();
  }
  assert.throws(() => ball('lanes', { rootDirections: ['up'] }), /rootDirections\[0\]: 'up'; expected 'falling' or 'both' or 'rising'/);
  assert.throws(() => ball('lanes', { eventActions: ['handle', 'stop'] }), /eventActions: an array of length 2; expected an array of 1/);
  assert.throws(() => ball('lanes', { onEvent: undefined }), /no event handler/);
  assert.throws(() => ball('lanes', { options: { maxEvents: 0 } }), /max_events: 0; must be >= 1/);
});

test('per-lane tEval: an array of arrays, one per lane (ragged), in both modes', () => {
  const k = [0.5, 1, 2];
  const times = [[0.1, 0.5, 1], [0.2], [0.3, 3]];
  for (const mode of ['lanes', 'lockstep']) {
    const sol = ot.solveDense({
      nstates: 1, nparams: 1, rhs(t, y, p, d, n) { for (let b = 0; b < n; b++) d[b] = -p[b] * y[b]; },
      y0: [1], params: k, tEval: times, options: { mode, rtol: 1e-10, atol: 1e-12 },
    });
    assert.ok(sol.ok, sol.message.join('; '));
    assert.deepEqual(sol.ts.shape, [3, 3]);
    for (let b = 0; b < 3; b++) {
      assert.equal(sol.count[b], times[b].length);
      times[b].forEach((t, i) => {
        assert.equal(sol.ts.get(i, b), t);
        assert.ok(Math.abs(sol.ys.get(0, i, b) - Math.exp(-k[b] * t)) < 1e-8, `${mode} lane ${b} t ${t}`);
      });
      for (let i = times[b].length; i < 3; i++) assert.ok(Number.isNaN(sol.ys.get(0, i, b)));
    }
    sol.dispose();
  }
  assert.throws(() => ot.solveDense({ nstates: 1, rhs() {}, y0: [1], tEval: [[1, 0.5]] }), /not after/);
});

test('stops: per-lane doses by onEvent (root -1 - k), against the superposition, both modes', () => {
  const ke = [0.3, 0.5], amount = [1, 2];
  const stops = [[0, 2, 5], [1, 3]], tEval = [[0, 1, 2.5, 6], [0.5, 3, 4]];
  const dosed = (b, t, t0 = 0) => 0.2 * Math.exp(-ke[b] * (t - t0)) +
    stops[b].filter((s) => s <= t).reduce((a, s) => a + amount[b] * Math.exp(-ke[b] * (t - s)), 0);
  for (const mode of ['lanes', 'lockstep']) {
    const roots = [];
    const sol = ot.solveDense({
      nstates: 1, nparams: 2, rhs(t, y, p, d, k) { for (let b = 0; b < k; b++) d[b] = -p[2 * b] * y[b]; },
      onEvent(t, root, y, p) { roots.push(root); y[0] += p[1]; },
      y0: [0.2], params: [ke[0], amount[0], ke[1], amount[1]], tEval, stops, options: { mode, rtol: 1e-10, atol: 1e-12 },
    });
    assert.ok(sol.ok, sol.message.join('; '));
    assert.ok(roots.every((r) => r < 0));
    for (let b = 0; b < 2; b++) {
      tEval[b].forEach((t, i) => assert.ok(Math.abs(sol.ys.get(0, i, b) - dosed(b, t)) < 1e-8, `${mode} lane ${b} t ${t}`));
      assert.equal(sol.events.count[b], stops[b].length);
    }
    sol.dispose();
  }
  const late = ot.solveDense({
    nstates: 1, nparams: 2, rhs(t, y, p, d) { d[0] = -p[0] * y[0]; }, onEvent(t, r, y, p) { y[0] += p[1]; },
    y0: [0.2], params: [ke[0], amount[0], ke[1], amount[1]], tEval: [7], stops, starts: [0, 0.5],
    options: { rtol: 1e-10, atol: 1e-12 },
  });
  assert.ok(Math.abs(late.ys.get(0, 0, 1) - dosed(1, 7, 0.5)) < 1e-8);
  late.dispose();
});

test('a ball solved past its accumulation time fails instead of falling through the floor (issue 23)', () => {
  // e = 0.5 from 1 m: the bounces accumulate at t_inf = t_1 (1 + 2e / (1 - e)).
  const tInf = Math.sqrt(2 / G) * 3;
  for (const mode of ['lanes', 'lockstep']) {
    const sol = ball(mode, { y0: [1, 0, 1, 0], params: [0.5, 0.5], tEval: [0.25, tInf + 1], options: { mode, maxEvents: 100000 } });
    assert.equal(sol.ok, false, mode);
    for (let b = 0; b < 2; b++) {
      assert.equal(sol.status[b], 'OT_ERR_SOLVER', `${mode}: ${sol.message[b]}`);
      assert.match(sol.message[b], /surface|pile up/);
      assert.equal(sol.count[b], 1); // its output at 0.25, none below the floor
    }
    sol.dispose();
  }
});

// Sensitivities through doses (issue 25): an oral one-compartment model,
// p = (ka, CL, V, F, lag), doses of F * 100 at tDose + lag; C = central / V
// against central differences of the closed-form superposition, both modes,
// with onEvent's differences and with eventJac.
test('solveFwdSens through doses with a lag matches the closed form, both modes', () => {
  const doses = [0, 12], tEval = [0.75, 2, 6, 13, 20], np = 5; // no output at a dose: a kink
  const params = [1.2, 3.0, 20.0, 0.8, 0.5, 0.7, 5.0, 35.0, 0.6, 0.25];
  const closed = (t, [ka, CL, V, F, lag]) => doses.reduce((c, d) => {
    const s = t - d - lag, ke = CL / V;
    return s < 0 ? c : c + F * 100 * ka / (V * (ka - ke)) * (Math.exp(-ke * s) - Math.exp(-ka * s));
  }, 0);
  const stopsDp = doses.flatMap(() => [0, 0, 0, 0, 1]); // d stop / d lag = 1
  for (const mode of ['lanes', 'lockstep']) for (const jac of [false, true]) {
    const sol = ot.solveFwdSens({
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
      y0: [0, 0], params, tEval, stops: [0, 1].map((b) => doses.map((d) => d + params[np * b + 4])), stopsDp,
      options: { mode, rtol: 1e-10, atol: 1e-12 },
    });
    assert.ok(sol.ok, sol.message.join('; '));
    assert.equal(sol.sens.length, np);
    for (let b = 0; b < 2; b++) {
      const p = params.slice(np * b, np * b + np);
      tEval.forEach((t, i) => {
        assert.ok(Math.abs(sol.ys.get(0, i, b) - closed(t, p)) < 1e-8, `${mode} C lane ${b} t ${t}`);
        for (let j = 0; j < np; j++) {
          const h = 1e-6 * Math.max(Math.abs(p[j]), 1), pp = [...p], pm = [...p];
          pp[j] += h; pm[j] -= h;
          const want = (closed(t, pp) - closed(t, pm)) / (2 * h), got = sol.sens[j].get(0, i, b);
          assert.ok(Math.abs(got - want) < 1e-6 * Math.max(Math.abs(want), 1e-2),
            `${mode} ${jac ? 'eventJac' : 'differences'} lane ${b} d C(${t}) / d p${j}: ${got} vs ${want}`);
        }
      });
    }
    sol.dispose();
  }
  const base = { nstates: 1, nparams: 1, rhs(t, y, p, d) { d[0] = -p[0] * y[0]; }, onEvent() {}, y0: [1], params: [1], tEval: [1] };
  assert.throws(() => ot.solveDense({ ...base, stops: [0.5], stopsDp: [0] }), /stopsDp: the stops' derivatives in p are for solveFwdSens/);
  assert.throws(() => ot.solveFwdSens({ ...base, stopsDp: [0] }), /stopsDp: given, but there are no stops/);
  assert.throws(() => ot.solveFwdSens({ ...base, stops: [0.5], stopsDp: [0, 1] }), /stopsDp: 2 values; needs nparams \(1\) per stop, at most 1 stops/);
  assert.throws(() => ot.solveFwdSens({ ...base, stops: [0.5], eventJac: 3 }), /eventJac: expected a function/);
  // a throwing eventJac fails its lane, with the exception
  const bad = ot.solveFwdSens({ ...base, stops: [0.5], eventJac() { throw new Error('no derivative'); } });
  assert.equal(bad.ok, false);
  assert.match(bad.message[0], /no derivative|event Jacobian/);
  bad.dispose();
});

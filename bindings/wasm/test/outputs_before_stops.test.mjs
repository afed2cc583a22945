// options.outputsBeforeStops (ot_ode_set_outputs_before_stops): an output at
// a dose's time shows the state before the dose (NONMEM's trough) or, by
// default, after it; against the closed form of a bolus model in both
// modes, with the adjoint's dL/dD; the option's refusal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../index.mjs';

const ot = await load();

// y' = -k y, p = (k, D); each stop adds D. Two lanes, doses at 0, 1 and 2.
const k = [0.7, 1.3], D = [2, 0.5], y0 = 1;
const stops = [0, 1, 2], tEval = [0, 0.5, 1, 2, 3];
const bolus = (options) => ({
  nstates: 1, nparams: 2,
  rhs(t, y, p, d, n) { for (let b = 0; b < n; b++) d[b] = -p[2 * b] * y[b]; },
  onEvent(t, root, y, p) { y[0] += p[1]; },
  y0: [y0], params: [k[0], D[0], k[1], D[1]], tEval, stops,
  options: { rtol: 1e-8, atol: 1e-10, ...options },
});
// y(t) of lane b: the doses before t, and at t unless outputs stand before them.
const closed = (b, t, before, kb = k[b], Db = D[b]) => y0 * Math.exp(-kb * t) +
  stops.filter((s) => s < t || (!before && s === t)).reduce((a, s) => a + Db * Math.exp(-kb * (t - s)), 0);
const near = (got, want, what) => assert.ok(Math.abs(got - want) <= 3e-6 * Math.abs(want) + 1e-9, `${what}: ${got} vs ${want}`);

test('outputs at doses show the state before them with outputsBeforeStops, after without; both modes', () => {
  for (const mode of ['lanes', 'lockstep']) {
    for (const before of [false, true]) {
      const sol = ot.solveDense(bolus({ mode, outputsBeforeStops: before }));
      assert.ok(sol.ok, sol.message.join('; '));
      for (let b = 0; b < 2; b++) {
        tEval.forEach((t, i) => near(sol.ys.get(0, i, b), closed(b, t, before), `${mode} ${before} lane ${b} t ${t}`));
        // The trough at 1 and the start: y0 e^{-k} after one dose at 0, y0 at 0.
        if (before) {
          near(sol.ys.get(0, 0, b), y0, `${mode} lane ${b} at t0`);
          near(sol.ys.get(0, 2, b), (y0 + D[b]) * Math.exp(-k[b]), `${mode} lane ${b} trough at 1`);
        }
        assert.equal(sol.events.count[b], 3);
      }
      sol.dispose();
    }
  }
});

test('solveAdjoint takes the loss at a dose before its jump: dL/dD against the closed form, both modes', () => {
  const data = [1.5, 0.4, 1.2, 0.9, 0.3];
  const loss = (b, before, kb, Db) => tEval.reduce((l, t, i) => l + (closed(b, t, before, kb, Db) - data[i]) ** 2, 0);
  for (const mode of ['lanes', 'lockstep']) {
    for (const before of [false, true]) {
      const sol = ot.solveAdjoint({ ...bolus({ mode, outputsBeforeStops: before }), loss: { data } });
      assert.ok(sol.ok, sol.message.join('; '));
      for (let b = 0; b < 2; b++) {
        near(sol.loss.get(b), loss(b, before, k[b], D[b]), `${mode} ${before} L lane ${b}`);
        // Central differences of the closed-form loss (smooth in k and D).
        const h = 1e-5;
        const dk = (loss(b, before, k[b] + h, D[b]) - loss(b, before, k[b] - h, D[b])) / (2 * h);
        const dD = (loss(b, before, k[b], D[b] + h) - loss(b, before, k[b], D[b] - h)) / (2 * h);
        near(sol.gradParams.get(0, b), dk, `${mode} ${before} dL/dk lane ${b}`);
        near(sol.gradParams.get(1, b), dD, `${mode} ${before} dL/dD lane ${b}`);
      }
      sol.dispose();
    }
  }
});

test('outputsBeforeStops takes true or false', () => {
  assert.throws(() => ot.solveDense(bolus({ outputsBeforeStops: 1 })), /options\.outputsBeforeStops: 1; expected true or false/);
});

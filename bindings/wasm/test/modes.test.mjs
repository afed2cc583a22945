// Issue 22 from JS: lanes mode and lockstep run one time loop, so a lane gets
// the same events in both modes (tests/check_mode_events.c), and a lockstep
// lane whose callback fails leaves its block alone while the others finish
// (tests/check_faults_numeric.c). Each case runs in both modes against its
// analytic values. On the previous lockstep loop lane 0 below got lane 1's
// event, a recorded root at an output time was recorded until maxEvents, a
// lane took a stop past its own last output, and one failing lane failed
// every lane of its block.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../index.mjs';

const ot = await load();
const BASE_IN_USE = ot.heapInUse();
const MODES = ['lanes', 'lockstep'];
const near = (got, want, tol, what) =>
  assert.ok(Math.abs(got - want) <= tol, `${what}: ${got}, expected ${want} (tol ${tol})`);

// y' = 1 (n = 1, np = 1): y = y0 + t. Handled roots subtract 1.5 from y;
// scheduled stops (root < 0) add p[0].
const ramp = (mode, extra) => ot.solveDense({
  nstates: 1, nparams: 1,
  rhs(t, y, p, dydt, k) { for (let b = 0; b < k; b++) dydt[b] = 1; },
  onEvent(t, root, y, p) { y[0] += root < 0 ? p[0] : -1.5; },
  ...extra,
  options: { mode, rtol: 1e-10, atol: 1e-12, ...extra.options },
});

// Lane b's recorded events: exactly want.length, at want's times within tol.
function assertEvents(sol, b, want, tol, what) {
  assert.equal(sol.events.count[b], want.length, `${what}: lane ${b}'s event count`);
  want.forEach((t, i) => near(sol.events.times.get(i, b), t, tol, `${what}: lane ${b} event ${i}`));
}

test('a lane has no events past its own last output time, for every action, in both modes', async (t) => {
  for (const mode of MODES) await t.test(mode, () => {
    for (const action of ['stop', 'record', 'handle']) {
      const what = `${mode} ${action}`;
      // Lane 0 asks for {0, 1} and never reaches y = 2; lane 1 for {0, 3}.
      const sol = ramp(mode, {
        roots(t, y, p, g, k) { for (let b = 0; b < k; b++) g[b] = y[b] - 2; },
        nroots: 1, eventActions: [action],
        y0: [0], params: [0, 0], tEval: [[0, 1], [0, 3]],
      });
      try {
        assert.deepEqual(sol.ts.shape, [2, 2]);
        assert.deepEqual([...sol.status], ['OT_OK', 'OT_OK'], `${what}: ${sol.message.join('; ')}`);
        // Lane 0: no event, not stopped, both outputs, reached t = 1.
        assert.equal(sol.count[0], 2, what);
        near(sol.ys.get(0, 1, 0), 1, 1e-9, `${what}: lane 0 at t = 1`);
        assertEvents(sol, 0, [], 0, what);
        assert.equal(sol.rootIndex[0], -1, what);
        assert.ok(Number.isNaN(sol.rootTime[0]), what);
        assert.equal(sol.stats[0].finalTime, 1, what);
        // Lane 1: one event at t = 2.
        assertEvents(sol, 1, [2], 1e-8, what);
        if (action === 'stop') {
          assert.equal(sol.rootIndex[1], 0, what);
          near(sol.rootTime[1], 2, 1e-8, `${what}: lane 1's root time`);
          assert.equal(sol.count[1], 1, what);
          assert.ok(Number.isNaN(sol.ys.get(0, 1, 1)), what);
        } else {
          assert.equal(sol.rootIndex[1], -1, what);
          assert.equal(sol.count[1], 2, what);
          near(sol.ys.get(0, 1, 1), action === 'handle' ? 1.5 : 3, 1e-8, `${what}: lane 1 at t = 3`);
        }
      } finally {
        sol.dispose();
      }
    }
  });
});

test('a root exactly at an output time is taken once (maxEvents 1e6), in both modes', async (t) => {
  const y0 = [0, 0.5, 1];
  for (const mode of MODES) await t.test(mode, () => {
    for (const action of ['record', 'handle']) {
      const what = `${mode} ${action}`;
      const drop = action === 'handle' ? 1.5 : 0;
      // g = t - 1 with tEval {0, 1, 2}: the root is the output time 1.
      const sol = ramp(mode, {
        roots(t, y, p, g, k) { for (let b = 0; b < k; b++) g[b] = t - 1; },
        nroots: 1, eventActions: [action],
        y0, params: [0], tEval: [0, 1, 2], options: { maxEvents: 1e6 },
      });
      try {
        for (let b = 0; b < 3; b++) {
          assert.equal(sol.status[b], 'OT_OK', `${what}: lane ${b}: ${sol.message[b]}`);
          assert.equal(sol.count[b], 3, `${what}: lane ${b}`);
          assertEvents(sol, b, [1], 1e-9, what);
          near(sol.ys.get(0, 1, b), y0[b] + 1 - drop, 1e-8, `${what}: lane ${b} at t = 1`);
          near(sol.ys.get(0, 2, b), y0[b] + 2 - drop, 1e-8, `${what}: lane ${b} at t = 2`);
        }
      } finally {
        sol.dispose();
      }
    }
  });
});

test('scheduled stops past a lane\'s last output time are never taken, in both modes', async (t) => {
  // Doses of p[0] = 1 into the ramp; lane 0's stop at 5 is after its last
  // output 2 (its block goes on to lane 1's 6 in lockstep).
  const tEval = [[0, 1, 2], [0, 1, 2, 3, 4, 6]];
  const stops = [[0, 1.5, 5], [0.5, 3, 5]];
  const taken = [[0, 1.5], [0.5, 3, 5]];
  for (const mode of MODES) await t.test(mode, () => {
    const calls = [[], []];
    const sol = ramp(mode, {
      onEvent(t, root, y, p, lane) {
        assert.ok(root < 0, `${mode}: root ${root}`);
        calls[lane].push(t);
        y[0] += p[0];
      },
      y0: [0], params: [1, 1], tEval, stops,
    });
    try {
      assert.ok(sol.ok, `${mode}: ${sol.message.join('; ')}`);
      for (let b = 0; b < 2; b++) {
        assertEvents(sol, b, taken[b], 0, mode);
        assert.deepEqual(calls[b], taken[b], `${mode}: lane ${b}'s handler calls`);
        assert.equal(sol.count[b], tEval[b].length, `${mode}: lane ${b}`);
        tEval[b].forEach((t, i) => {
          const doses = stops[b].filter((s) => s <= t).length;
          near(sol.ys.get(0, i, b), t + doses, 1e-8, `${mode}: lane ${b} at t = ${t}`);
        });
      }
    } finally {
      sol.dispose();
    }
  });
});

// Eight lanes of y' = -k y, k = 0.5 + 0.1 b, y(0) = 1, outputs every 0.5 to 2
// with steps of at most 0.1 (so the outputs up to t = 1 come from steps that
// never looked past the fault at t > 1.1). Lane 5 (k = 1, found by its
// parameter, not its position in the k columns a lockstep call gets) does
// `fault` from t > 1.1.
const RATES = Array.from({ length: 8 }, (_, b) => 0.5 + 0.1 * b);
const TIMES = [0, 0.5, 1, 1.5, 2];
const FAULTY = 5;
const decayWithFault = (mode, fault) => ot.solveDense({
  nstates: 1, nparams: 1,
  rhs(t, y, p, dydt, k) {
    let hit = false;
    for (let b = 0; b < k; b++) {
      dydt[b] = -p[b] * y[b];
      if (t > 1.1 && p[b] === RATES[FAULTY]) {
        hit = true;
        if (fault === 'nan') dydt[b] = NaN;
      }
    }
    if (hit && fault === 'negative') return -1;
    if (hit && fault === 'retry') return 1;
    return 0;
  },
  y0: [1], params: RATES, tEval: TIMES,
  options: { mode, rtol: 1e-8, atol: 1e-10, maxStep: 0.1, maxSteps: 2000 },
});

test('a lane whose rhs fails fails alone, in both modes (rhs returns -1, writes NaN, asks to retry for good)', async (t) => {
  const cause = { negative: /rhs returned -1 at t = /, nan: /NaN/, retry: /rhs returned 1/ };
  assert.equal(RATES[FAULTY], 1);
  for (const mode of MODES) await t.test(mode, () => {
    for (const fault of ['negative', 'nan', 'retry']) {
      const what = `${mode} ${fault}`;
      const sol = decayWithFault(mode, fault);
      try {
        assert.equal(sol.ok, false, what);
        assert.equal(sol.nfailed, 1, `${what}: ${sol.message.join('; ')}`);
        for (let b = 0; b < 8; b++) {
          const k = RATES[b];
          if (b === FAULTY) {
            assert.equal(sol.status[b], 'OT_ERR_CALLBACK', `${what}: ${sol.message[b]}`);
            assert.match(sol.message[b], cause[fault], what);
            // Its outputs up to t = 1, exact; NaN after.
            assert.equal(sol.count[b], 3, `${what}: ${sol.message[b]}`);
            for (let i = 0; i < 3; i++)
              near(sol.ys.get(0, i, b), Math.exp(-k * TIMES[i]), 1e-6, `${what}: lane ${b} at t = ${TIMES[i]}`);
            for (let i = 3; i < TIMES.length; i++)
              assert.ok(Number.isNaN(sol.ys.get(0, i, b)), `${what}: lane ${b} at t = ${TIMES[i]}`);
          } else {
            assert.equal(sol.status[b], 'OT_OK', `${what}: lane ${b}: ${sol.message[b]}`);
            assert.equal(sol.message[b], '', what);
            assert.equal(sol.count[b], TIMES.length, `${what}: lane ${b}`);
            TIMES.forEach((t, i) =>
              near(sol.ys.get(0, i, b), Math.exp(-k * t), 1e-6, `${what}: lane ${b} at t = ${t}`));
          }
        }
      } finally {
        sol.dispose();
      }
    }
  });
});

test('the solves above left nothing allocated in wasm memory', () => {
  assert.equal(ot.heapInUse(), BASE_IN_USE);
  assert.equal(ot.stackInUse(), 0);
});

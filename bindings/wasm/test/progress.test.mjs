// Progress and cancel from JS (issue 17): onProgress in both modes, true
// cancels (unfinished lanes: 'OT_ERR_CANCELLED' with their results so far),
// a throw cancels and the solve throws it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../index.mjs';

const ot = await load();
const NB = 40;
const decay = (extra, options) => ot.solveDense({
  nstates: 1, nparams: 1,
  rhs(t, y, p, f, k) { for (let b = 0; b < k; b++) f[b] = -p[b] * y[b]; },
  y0: [1], params: Float64Array.from({ length: NB }, (_, b) => 0.05 * (b + 1)), tEval: [0.5, 1, 2, 3],
  ...extra, options: { rtol: 1e-8, atol: 1e-10, ...options },
});

test('onProgress reports every lane in both modes, increasing, ending at total', () => {
  for (const mode of ['lanes', 'lockstep']) {
    const seen = [];
    const sol = decay({ onProgress(done, total) { seen.push([done, total]); } }, { mode });
    assert.ok(sol.ok, sol.message.join('; '));
    assert.ok(seen.length > 1, `${mode}: ${seen.length} calls`);
    assert.deepEqual(seen.at(-1), [NB, NB]);
    // increasing; a repeat is a poll while lanes run (a chance to cancel)
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i][0] >= seen[i - 1][0]);
    sol.dispose();
  }
});

test('returning true cancels: finished lanes whole, the others cancelled with what they had', () => {
  for (const mode of ['lanes', 'lockstep']) {
    const seen = new Set(); // the done values reported (polls repeat one)
    const sol = decay({ onProgress(done) { if (done > 0) seen.add(done); return done >= 10; } }, { mode });
    assert.equal(sol.ok, false);
    let finished = 0;
    for (let b = 0; b < NB; b++) {
      const k = 0.05 * (b + 1), n = sol.count[b];
      if (sol.status[b] === 'OT_OK') { finished++; assert.equal(n, 4); } else {
        assert.equal(sol.status[b], 'OT_ERR_CANCELLED', `${mode} lane ${b}`);
        assert.match(sol.message[b], /cancelled by the progress callback/);
        assert.ok(n < 4);
      }
      [0.5, 1, 2, 3].slice(0, n).forEach((t, j) => assert.ok(Math.abs(sol.ys.get(0, j, b) - Math.exp(-k * t)) < 1e-6));
    }
    assert.ok(finished < NB, mode);
    if (mode === 'lanes') assert.equal(finished, 10);
    else assert.deepEqual([...seen], [10]); // lockstep: one block stopped at its first output (10 of 40 lanes' worth)
    sol.dispose();
  }
});

test('a throwing onProgress cancels and the solve throws its error', () => {
  const boom = new Error('stop now');
  assert.throws(() => decay({ onProgress() { throw boom; } }, {}), (e) => e.cause === boom && /onProgress threw/.test(e.message));
});

test('a cancel reaches long lanes between their outputs, in both modes (issue 23)', () => {
  // Van der Pol, mu = 1000 and 900, one output at t = 1e7: the lanes run for
  // seconds. onProgress is also called while they run (done as it was), so
  // returning true at its first call stops them before any lane is done.
  for (const mode of ['lanes', 'lockstep']) {
    const calls = [];
    const sol = ot.solveDense({
      nstates: 2, nparams: 1,
      rhs(t, y, p, f, k) {
        for (let b = 0; b < k; b++) {
          const x = y[2 * b], v = y[2 * b + 1];
          f[2 * b] = v;
          f[2 * b + 1] = p[b] * (1 - x * x) * v - x;
        }
      },
      y0: [2, 0], params: [1000, 900], tEval: [1e7],
      onProgress(done) { calls.push(done); return true; },
      options: { mode, maxSteps: 100000000 },
    });
    assert.deepEqual(calls, [0], mode);
    assert.deepEqual(sol.status, ['OT_ERR_CANCELLED', 'OT_ERR_CANCELLED'], mode);
    assert.deepEqual(Array.from(sol.count), [0, 0]);
    for (const s of sol.stats) assert.ok(s.finalTime < 1e6, `${mode}: stopped at ${s.finalTime}`);
    sol.dispose();
  }
});

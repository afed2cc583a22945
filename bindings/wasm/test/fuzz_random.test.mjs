// JS hardening (issue 6, item 7): seeded random argument sets mixing valid
// and invalid pieces; each gives a checked result or an Error, never a trap.
//
//   FUZZ_SEED=123 FUZZ_RUNS=50000 node --test test/fuzz_random.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OdeTensorError } from '../index.mjs';
import { decayRhs, lotkaVolterraRhs, robertsonRhs, robertsonJac } from './models.mjs';
import { ot, SEED, RUNS, caught, decay, assertIntact } from './fuzz_common.mjs';

// ---- Random argument sets -------------------------------------------------

// A 32-bit generator: a Weyl sequence through a murmur3-style mixer.
function rng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  const r = {
    u32: next,
    float: () => next() / 2 ** 32,
    int: (lo, hi) => lo + Math.floor((next() / 2 ** 32) * (hi - lo + 1)),
    chance: (p) => next() / 2 ** 32 < p,
    pick: (xs) => xs[Math.floor((next() / 2 ** 32) * xs.length)],
  };
  return r;
}

const junk = [undefined, null, NaN, Infinity, -Infinity, -1, 0, -0, 0.5, 1.5, 2 ** 31, 2 ** 53, 1e300, -1e-300,
  '1', '', 'bdf', {}, [], [1], [NaN], true, false, 1n, Symbol('j'), () => 0, Object.create(null),
  new Float64Array(0), new Float32Array(2), new Int8Array(3), new BigInt64Array(1),
  new DataView(new ArrayBuffer(8)), new ArrayBuffer(8)];

// A model: n states, np parameters, y' = -p0 * y (+ coupling) for every lane.
function model(r) {
  switch (r.int(0, 3)) {
  case 0: return { n: 1, np: 1, rhs: decayRhs, p: () => r.float() * 3 };
  case 1: return { n: 2, np: 4, rhs: lotkaVolterraRhs, p: (i) => [1.5, 1, 1, 3][i % 4] * (0.8 + 0.4 * r.float()) };
  case 2: return { n: 3, np: 3, rhs: robertsonRhs, jac: robertsonJac, p: (i) => [0.04, 1e4, 3e7][i % 3] };
  default: {
    const n = r.int(1, 4), np = r.int(0, 2);
    return { n, np, p: () => r.float(), rhs: (t, y, p, d, k) => {
      for (let b = 0; b < k; b++) for (let i = 0; i < n; i++) d[n * b + i] = -(1 + (np ? p[np * b] : 0)) * y[n * b + i];
    } };
  }
  }
}

// An input array of `len` values: mostly valid, sometimes of the wrong kind.
function numbers(r, len, value) {
  const v = Array.from({ length: len }, (_, i) => value(i));
  switch (r.int(0, 30)) {
  case 0: return new Float32Array(v);
  case 1: return Float64Array.from(v);
  case 2: v[r.int(0, Math.max(0, len - 1))] = r.pick([NaN, Infinity, -Infinity, '1', null, undefined, 1n]); return v;
  case 3: return v.slice(0, Math.max(0, len - r.int(1, 2))); // too short
  case 4: return [...v, r.float()]; // too long
  case 5: return r.pick(junk);
  default: return v;
  }
}

const nestedProblems = [];

// A callback that behaves, or misbehaves in one of many ways at a random
// lane and time; `write` does the correct work.
function callback(r, name, write) {
  if (r.chance(0.8)) return write;
  const lane = r.int(0, 3), after = r.pick([0, 0.1, 1, Infinity]);
  const act = r.int(0, 9);
  return (...a) => {
    const t = name === 'init' ? 0 : a[0], l = a[a.length - 1];
    write(...a);
    if (l !== lane && l !== 0) return undefined;
    if (t < after) return undefined;
    switch (act) {
    case 0: throw new Error(`${name} fuzz`);
    case 1: throw r.pick(['str', 7, null, undefined, Symbol('x')]);
    case 2: return r.pick([NaN, '0', true, [0], {}, 1n]);
    case 3: return r.pick([-1, 1, -Infinity, Infinity, 0.5, -0.5]);
    case 4: a[name === 'init' ? 1 : 3][0] = r.pick([NaN, Infinity, -Infinity]); return undefined;
    case 5: a[name === 'init' ? 1 : 3][r.int(0, 50)] = 1e300; return undefined; // maybe past the view
    case 6: { // a nested solve, good or bad; what it throws is checked after the set
      try {
        ot.solveDense(r.chance(0.5) ? decay : { ...decay, tEval: [1, 0] }).dispose();
        return 0;
      } catch (e) {
        if (!(e instanceof OdeTensorError) || e.status !== 'OT_ERR_VALUE') nestedProblems.push(e);
        return -1;
      }
    }
    case 7: return (async () => 0)();
    default: return undefined;
    }
  };
}

// One random call: its kind and arguments, and what a valid result must show.
function randomCall(r) {
  const kind = r.pick(['dense', 'dense', 'dense', 'steps', 'sens']);
  const M = model(r);
  const nb = r.pick([1, 1, 2, 3, 4]);
  const spec = { nstates: M.n, nparams: M.np, rhs: M.rhs };
  if (M.jac && r.chance(0.7)) spec.jac = M.jac;
  const laneY0 = r.chance(0.5) ? nb : 1;
  const laneP = laneY0 === nb && r.chance(0.5) ? 1 : nb;
  if (r.chance(0.1)) {
    spec.init = callback(r, 'init', (p, y0, k) => { for (let i = 0; i < M.n * k; i++) y0[i] = 1 + (i % 3); });
    if (r.chance(0.2)) spec.y0 = numbers(r, M.n * laneY0, () => 1);
  } else {
    spec.y0 = numbers(r, M.n * laneY0, (i) => (M.rhs === robertsonRhs ? [1, 0, 0][i % 3] : 1 + r.float() * 5));
  }
  if (M.np > 0 || r.chance(0.05)) spec.params = numbers(r, M.np * laneP, M.p);
  spec.rhs = callback(r, 'rhs', M.rhs);
  if (spec.jac) spec.jac = callback(r, 'jac', spec.jac);
  if (r.chance(0.15)) {
    spec.out = callback(r, 'out', (t, y, p, o, k) => { for (let b = 0; b < k; b++) { o[2 * b] = y[M.n * b]; o[2 * b + 1] = t; } });
    spec.nout = r.chance(0.9) ? 2 : r.pick(junk);
  }
  if (r.chance(0.15)) {
    spec.roots = callback(r, 'roots', (t, y, p, g, k) => { for (let b = 0; b < k; b++) g[b] = y[M.n * b] - 0.5; });
    spec.nroots = r.chance(0.9) ? 1 : r.pick(junk);
  }
  let nt = 0;
  if (kind === 'steps') {
    spec.finalTime = r.chance(0.9) ? r.pick([0.5, 1, 2]) : r.pick([...junk, 0, -1, 1e300]);
  } else {
    nt = r.int(1, 6);
    const ts = Array.from({ length: nt }, (_, i) => i * r.pick([0.1, 0.5, 1]));
    if (r.chance(0.05)) ts[r.int(0, nt - 1)] = r.pick([NaN, Infinity, -1, 1e300, 5e-324]);
    if (r.chance(0.03)) ts.reverse();
    spec.tEval = r.chance(0.95) ? numbers(r, nt, (i) => ts[i]) : r.pick(junk);
  }
  if (r.chance(0.6)) {
    const o = {};
    if (r.chance(0.4)) o.rtol = r.chance(0.9) ? r.pick([1e-4, 1e-6, 1e-8]) : r.pick(junk);
    if (r.chance(0.3)) o.atol = r.chance(0.5) ? r.pick([1e-6, 1e-10]) : numbers(r, M.n, () => 1e-8);
    if (r.chance(0.3)) o.method = r.chance(0.9) ? r.pick(['bdf', 'adams']) : r.pick([...junk, 'rk4', 'constructor']);
    if (r.chance(0.4)) o.mode = r.chance(0.9) ? r.pick(['lanes', 'lockstep']) : r.pick([...junk, '__proto__']);
    if (r.chance(0.1)) o.t0 = r.chance(0.8) ? r.pick([0, -0.5]) : r.pick(junk);
    if (r.chance(0.1)) o.firstStep = r.chance(0.8) ? r.pick([0, 1e-4]) : r.pick(junk);
    if (r.chance(0.1)) o.maxStep = r.chance(0.8) ? r.pick([0, 0.5]) : r.pick(junk);
    if (r.chance(0.15)) o.maxSteps = r.chance(0.7) ? r.pick([3, 10, 500]) : r.pick(junk);
    if (r.chance(0.1)) o.sensRtol = r.chance(0.8) ? 1e-6 : r.pick(junk);
    if (r.chance(0.1)) o.sensAtol = r.chance(0.8) ? 1e-8 : r.pick(junk);
    if (r.chance(0.03)) o[r.pick(['rtoll', 'Method', '0'])] = 1;
    spec.options = r.chance(0.97) ? o : r.pick(junk);
  }
  // Now and then, break one field outright.
  if (r.chance(0.1)) {
    const field = r.pick(['nstates', 'nparams', 'rhs', 'jac', 'init', 'y0', 'params', 'tEval', 'finalTime', 'nout', 'nroots', 'out', 'roots']);
    spec[field] = r.pick(junk);
  }
  if (r.chance(0.02)) spec[r.pick(['tEvals', 'nstate', 'param'])] = 1;
  return { kind, spec };
}

// A result that came back: shapes consistent with the arguments, per-lane
// fields consistent with each other, times as asked.
function checkResult(call, sol) {
  const { kind, spec } = call;
  // The arguments were accepted, so they are well-formed: read the sizes off them.
  const n = spec.nstates, np = spec.nparams ?? 0;
  const rows = spec.out !== undefined && spec.out !== null ? spec.nout : n;
  const cols = (x, r) => (x === undefined || x === null || r === 0 ? 1 : x.length / r);
  const nb = sol.nbatch;
  assert.equal(nb, Math.max(cols(spec.y0, n), cols(spec.params, np)), 'nbatch');
  const nt = kind === 'steps' ? 0 : spec.tEval.length;
  for (const key of ['statusCode', 'count', 'rootIndex', 'rootTime', 'status', 'message', 'errors', 'stats'])
    assert.equal(sol[key].length, nb, key);
  assert.equal(sol.nfailed, sol.statusCode.filter((c) => c !== 0).length);
  assert.equal(sol.ok, sol.nfailed === 0);
  sol.statusCode.forEach((c, b) => {
    assert.equal(sol.status[b], ot.statusName(c));
    assert.equal(sol.message[b] === '', c === 0, `lane ${b}: message iff failed`);
  });
  const { ys, ts } = sol;
  assert.equal(ys.size, ys.data.length);
  if (kind === 'steps') {
    const ntMax = ts.shape[0];
    assert.deepEqual(ts.shape, [ntMax, nb]);
    assert.deepEqual(ys.shape, [rows, ntMax, nb]);
    for (let b = 0; b < nb; b++) {
      assert.ok(sol.count[b] >= 0 && sol.count[b] <= ntMax);
      for (let j = 1; j < sol.count[b]; j++) assert.ok(ts.get(j, b) > ts.get(j - 1, b), 'steps increase');
      for (let j = sol.count[b]; j < ntMax; j++) assert.ok(Number.isNaN(ts.get(j, b)), 'NaN past count');
    }
  } else {
    assert.deepEqual(ts.shape, [nt]);
    assert.deepEqual(ys.shape, [rows, nt, nb]);
    assert.deepEqual(Array.from(ts.data), Array.from(spec.tEval, Number));
    for (let b = 0; b < nb; b++) {
      assert.ok(sol.count[b] >= 0 && sol.count[b] <= nt);
      if (sol.statusCode[b] === 0 && sol.rootIndex[b] < 0) assert.equal(sol.count[b], nt, 'a good lane has every time');
      for (let j = sol.count[b]; j < nt; j++) assert.ok(Number.isNaN(ys.get(0, j, b)), 'NaN after the last good time');
      for (let j = 0; j < sol.count[b]; j++)
        for (let i = 0; i < rows; i++) assert.ok(Number.isFinite(ys.get(i, j, b)), 'finite before it');
    }
  }
  assert.equal(sol.sens.length, kind === 'sens' ? np : 0);
  for (const s of sol.sens) assert.deepEqual(s.shape, ys.shape);
}

test(`${RUNS} random argument sets (seed ${SEED}): a result or an Error, never a trap`, () => {
  const r = rng(SEED);
  const tally = { results: 0, lanesFailed: 0, thrown: 0, byStatus: {} };
  const size0 = ot.heapSize();
  const t0 = performance.now();
  for (let i = 1; i <= RUNS; i++) {
    const call = randomCall(r);
    let sol = null;
    const e = caught(() => {
      sol = call.kind === 'steps' ? ot.solve(call.spec)
        : call.kind === 'sens' ? ot.solveFwdSens(call.spec) : ot.solveDense(call.spec);
    });
    if (e === null) {
      try {
        checkResult(call, sol);
      } catch (err) {
        err.message = `set ${i} (seed ${SEED}): ${err.message}`;
        throw err;
      } finally {
        sol.dispose();
      }
      tally.results++;
      if (!sol.ok) tally.lanesFailed++;
    } else {
      tally.thrown++;
      const key = e instanceof OdeTensorError ? e.status : e.name;
      tally.byStatus[key] = (tally.byStatus[key] ?? 0) + 1;
      // The library's message names the argument: 'y0: ...', 'options.rtol: ...'.
      if (e instanceof OdeTensorError)
        assert.match(e.message, /^([A-Za-z_][\w.]*(\[\d+\])?: |\w+ threw )/, `set ${i}: ${e.message}`);
    }
    assert.deepEqual(nestedProblems, [], `set ${i}: a nested solve threw something odd`);
    if (i % 1000 === 0) assertIntact(`after ${i} random sets (seed ${SEED})`);
  }
  const ms = performance.now() - t0;
  assertIntact(`after ${RUNS} random sets (seed ${SEED})`);
  assert.ok(ot.heapSize() <= Math.max(size0, 64 << 20), `wasm memory grew to ${ot.heapSize()} bytes`);
  assert.ok(tally.results > RUNS / 10 && tally.thrown > RUNS / 10, JSON.stringify(tally));
  console.log(`fuzz: ${RUNS} sets, seed ${SEED}, ${ms.toFixed(0)} ms: ${JSON.stringify(tally)}; heap ${ot.heapSize()} bytes, ${ot.heapInUse()} in use`);
});

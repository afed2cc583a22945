// odetensor (wasm, JS callbacks) against the npm package odex (Hairer and
// Wanner's ODEX, a Gragg-Bulirsch-Stoer extrapolation code, pure JS,
// non-stiff), for `make bench-wasm` (bench/wasm/run.sh runs it). Prints
// markdown tables.
//
//   node odex.mjs [LV_LANES [REPS]]     (1000 lanes, 5 rounds)
//
// Lotka-Volterra, LV_LANES lanes: x' = a x - b x y, y' = c x y - d y,
// (x, y)(0) = (10, 5), (a, b, c, d) = (1.5, 1, 1, 3) each scaled by a factor
// in [0.9, 1.1) (a 32-bit LCG, seed 20240503), 41 output times 0, 0.5, .. 20.
// Stiff Van der Pol, mu = 1000 (the classic "vdp1000"): y1' = y2,
// y2' = mu (1 - y1^2) y2 - y1, y(0) = (2, 0), 31 output times 0, 100, .. 3000.
// Both at rtol 1e-6, atol 1e-8 for every solver. odex gets the same
// tolerances (its relativeTolerance, absoluteTolerance), dense output for the
// output times (its interpolant, called from its step callback), one Solver
// per lane in a loop, and its rhs in its own style (returns a new array).
//
// Timing: performance.now() around each whole solve (all lanes), after one
// untimed warm-up of every solver (JIT, wasm tier-up); REPS rounds in which
// the solvers take turns in a rotating order, so that all of them see the
// machine's drift alike. Accuracy: every output against a reference (odetensor
// at rtol 1e-12 / 1e-10), in tolerance units |v - ref| / (atol + rtol |ref|)
// with the benchmark's rtol and atol; for LV a second reference (odex at rtol
// 1e-13) checks the first.
import { load } from '../../bindings/wasm/index.mjs';
import odex from './node_modules/odex/src/odex.js';

const RTOL = 1e-6, ATOL = 1e-8; // the tables' titles say so too
const LV_LANES = Number(process.argv[2] ?? 1000);
const REPS = Number(process.argv[3] ?? 5);
const ot = await load();

const linspace = (a, b, n) => Float64Array.from({ length: n }, (_, j) => a + ((b - a) * j) / (n - 1));
const median = (v) => {
  const s = [...v].sort((x, y) => x - y), h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
};
const fmt = (x, d = 3) => (x >= 100 ? x.toFixed(0) : x.toPrecision(d));

// ---- Problems ---------------------------------------------------------------

function lvParams(nbatch) {
  const base = [1.5, 1, 1, 3], p = new Float64Array(4 * nbatch);
  let s = 20240503;
  for (let i = 0; i < p.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    p[i] = base[i % 4] * (0.9 + (0.2 * s) / 4294967296);
  }
  return p;
}

const LV = {
  name: 'Lotka-Volterra', n: 2, np: 4, y0: [10, 5], tEval: linspace(0, 20, 41),
  // odetensor: lanes mode (k = 1) and lockstep mode (k = nbatch) alike.
  rhs(t, y, p, dy, k) {
    for (let b = 0; b < k; b++) {
      const Y = 2 * b, P = 4 * b, xy = y[Y] * y[Y + 1];
      dy[Y] = p[P] * y[Y] - p[P + 1] * xy;
      dy[Y + 1] = p[P + 2] * xy - p[P + 3] * y[Y + 1];
    }
  },
  jac(t, y, p, J, k) {
    for (let b = 0; b < k; b++) {
      const Y = 2 * b, P = 4 * b, o = 4 * b;
      J[o] = p[P] - p[P + 1] * y[Y + 1];
      J[o + 1] = p[P + 2] * y[Y + 1];
      J[o + 2] = -p[P + 1] * y[Y];
      J[o + 3] = p[P + 2] * y[Y] - p[P + 3];
    }
  },
  // odex: a closure per lane, as in odex's README.
  odexRhs(p, b) {
    const a = p[4 * b], bb = p[4 * b + 1], c = p[4 * b + 2], d = p[4 * b + 3];
    return (x, y) => [a * y[0] - bb * y[0] * y[1], c * y[0] * y[1] - d * y[1]];
  },
};

const VDP = {
  name: 'Van der Pol mu = 1000', n: 2, np: 1, y0: [2, 0], tEval: linspace(0, 3000, 31),
  rhs(t, y, p, dy) {
    dy[0] = y[1];
    dy[1] = p[0] * (1 - y[0] * y[0]) * y[1] - y[0];
  },
  jac(t, y, p, J) {
    J[0] = 0;
    J[1] = -2 * p[0] * y[0] * y[1] - 1;
    J[2] = 1;
    J[3] = p[0] * (1 - y[0] * y[0]);
  },
  odexRhs(p, b) {
    const mu = p[b];
    return (x, y) => [y[1], mu * (1 - y[0] * y[0]) * y[1] - y[0]];
  },
};

// ---- Solvers: each returns { ys [n, nt, nbatch], steps, evals, failed, note } --

function otSolve(P, params, options, { jac = false } = {}) {
  const sol = ot.solveDense({
    nstates: P.n, nparams: P.np, rhs: P.rhs, jac: jac ? P.jac : undefined, y0: P.y0, params,
    tEval: P.tEval, options: { rtol: RTOL, atol: ATOL, ...options },
  });
  try {
    // Per lane (lockstep: every lane reports the one shared solver's counts).
    const steps = sol.stats.reduce((a, s) => a + s.steps, 0) / sol.nbatch;
    const evals = sol.stats.reduce((a, s) => a + s.rhsEvals + s.jacRhsEvals, 0) / sol.nbatch;
    return { ys: sol.ys.toFloat64Array(), steps, evals, failed: sol.nfailed,
      note: sol.ok ? '' : sol.message.find((m) => m) };
  } finally {
    sol.dispose();
  }
}

// One odex Solver per lane, dense output at P.tEval from its step callback.
function odexSolve(P, params, { rtol = RTOL, atol = ATOL, maxSteps } = {}) {
  const nb = params.length / P.np, nt = P.tEval.length, tEnd = P.tEval[nt - 1];
  const ys = new Float64Array(P.n * nt * nb).fill(NaN);
  let steps = 0, evals = 0, failed = 0, reached = Infinity;
  for (let b = 0; b < nb; b++) {
    const s = new odex.Solver(P.n);
    s.relativeTolerance = rtol;
    s.absoluteTolerance = atol;
    s.denseOutput = true;
    if (maxSteps !== undefined) s.maxSteps = maxSteps;
    let j = 0, last = P.tEval[0];
    const base = P.n * nt * b;
    const r = s.solve(P.odexRhs(params, b), P.tEval[0], P.y0, tEnd, (n, xOld, x, y, interp) => {
      last = x;
      for (; j < nt && P.tEval[j] <= x; j++)
        for (let i = 0; i < P.n; i++) ys[base + P.n * j + i] = n === 1 ? y[i] : interp(i, P.tEval[j]);
    });
    steps += r.nStep;
    evals += r.nEval;
    if (r.outcome !== odex.Outcome.Converged) {
      failed++;
      reached = Math.min(reached, last);
    }
  }
  const note = failed ? `${failed} lane(s) stopped: ${odex.Outcome[1]} (maxSteps ${maxSteps ?? 10000}) at t = ${fmt(reached, 4)} of ${tEnd}` : '';
  return { ys, steps: steps / nb, evals: evals / nb, failed, note };
}

// Largest |v - ref| / (ATOL + RTOL |ref|) over all outputs (Infinity for NaN).
function tolErr(v, ref) {
  let e = 0;
  for (let i = 0; i < v.length; i++) {
    const d = Math.abs(v[i] - ref[i]) / (ATOL + RTOL * Math.abs(ref[i]));
    e = Math.max(e, Number.isNaN(d) ? Infinity : d);
  }
  return e;
}

// Runs every solver once untimed, then REPS rounds in a rotating order.
function race(solvers, reps) {
  const last = solvers.map((s) => s.run());
  const times = solvers.map(() => []);
  for (let r = 0; r < reps; r++)
    for (let i = 0; i < solvers.length; i++) {
      const w = (r + i) % solvers.length;
      const t0 = performance.now();
      last[w] = solvers[w].run();
      times[w].push((performance.now() - t0) / 1e3);
    }
  return solvers.map((s, i) => ({ ...s, ...last[i], times: times[i] }));
}

function table(title, rows, ref, refNote, base, lanes) {
  const b = rows.find((r) => r.label === base);
  const bMed = median(b.times);
  console.log(`${title}\n`);
  console.log('| solver | time, min (s) | time, median (s) | x odetensor (medians) | steps per lane | rhs evals per lane | µs per lane-evaluation (median) | failed lanes | err vs reference (tol units) | max \\|odetensor - this\\| (tol units) |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.label} | ${fmt(Math.min(...r.times), 4)} | ${fmt(median(r.times), 4)} | ` +
      `${fmt(median(r.times) / bMed)} | ${fmt(r.steps, 4)} | ${fmt(r.evals, 4)} | ` +
      `${fmt((1e6 * median(r.times)) / (r.evals * lanes))} | ` +
      `${r.failed}${r.note ? ` (${r.note})` : ''} | ${fmt(tolErr(r.ys, ref))} | ${r === b ? 0 : fmt(tolErr(r.ys, b.ys))} |`);
  }
  console.log(`\n${refNote}\n`);
}

// ---- Lotka-Volterra -----------------------------------------------------------

{
  const p = lvParams(LV_LANES);
  const ref = otSolve(LV, p, { method: 'adams', rtol: 1e-12, atol: 1e-14, maxSteps: 100000 });
  const ref2 = odexSolve(LV, p, { rtol: 1e-13, atol: 1e-13, maxSteps: 1e6 });
  const rows = race([
    { label: 'odetensor Adams, lanes', run: () => otSolve(LV, p, { method: 'adams' }) },
    { label: 'odetensor Adams, lockstep', run: () => otSolve(LV, p, { method: 'adams', mode: 'lockstep' }) },
    { label: 'odetensor BDF + jac, lanes', run: () => otSolve(LV, p, { method: 'bdf' }, { jac: true }) },
    { label: 'odex (loop over lanes)', run: () => odexSolve(LV, p) },
  ], REPS);
  table(`Lotka-Volterra, ${LV_LANES} lanes, rtol 1e-6, atol 1e-8, 41 times 0..20; ${REPS} rounds`,
    rows, ref.ys,
    `Reference: odetensor Adams at rtol 1e-12, atol 1e-14; odex at rtol = atol = 1e-13 is ` +
    `${tolErr(ref2.ys, ref.ys).toPrecision(2)} tol units from it. "x odetensor": median time / median of ` +
    `odetensor Adams, lanes. Steps and rhs evaluations are per lane (lockstep: of the one shared solver; ` +
    `odex's evaluations are its own count); µs per lane-evaluation: median time / (lanes x evaluations per lane).`,
    'odetensor Adams, lanes', LV_LANES);
}

// ---- Van der Pol, mu = 1000 ---------------------------------------------------

{
  const p = new Float64Array([1000]);
  const ref = otSolve(VDP, p, { method: 'bdf', rtol: 1e-10, atol: 1e-12, maxSteps: 1000000 }, { jac: true });
  const rows = race([
    { label: 'odetensor BDF + jac', run: () => otSolve(VDP, p, { method: 'bdf', maxSteps: 100000 }, { jac: true }) },
    { label: 'odetensor BDF (difference-quotient Jacobian)', run: () => otSolve(VDP, p, { method: 'bdf', maxSteps: 100000 }) },
    { label: 'odex, default maxSteps (10000)', run: () => odexSolve(VDP, p) },
    { label: 'odex, maxSteps 1e8', run: () => odexSolve(VDP, p, { maxSteps: 1e8 }) },
  ], Math.max(3, Math.min(REPS, 5)));
  table(`Van der Pol mu = 1000, 1 lane, y0 (2, 0), rtol 1e-6, atol 1e-8, 31 times 0..3000`,
    rows, ref.ys,
    `Reference: odetensor BDF + jac at rtol 1e-10, atol 1e-12 (y1(3000) = ${ref.ys[2 * 30].toPrecision(8)}). ` +
    `"x odetensor": median time / median of odetensor BDF + jac. Errors are largest at output times ` +
    `close to a relaxation jump, where a small error in the jump's timing is a large error in y.`,
    'odetensor BDF + jac', 1);
}

// odetensor (wasm, JS callbacks) against the pure-JS ODE solvers on npm, at
// equal accuracy, for `make bench-wasm` (bench/wasm/run.sh runs it; issue 12,
// item 6). Prints markdown tables.
//
//   node peers.mjs [LV_LANES [REPS]]     (1000 lanes, 5 rounds)
//
// Peers: odex 2.0.4 (Hairer and Wanner's ODEX, Gragg-Bulirsch-Stoer
// extrapolation, dense output, non-stiff) and ode45-cash-karp 1.1.0 (an
// explicit 5(4) Runge-Kutta pair, one scalar tolerance, no dense output).
// Both solve one lane at a time in a loop; the rhs is written in each one's
// own style (odex: returns a new array; ode45-cash-karp: fills dydt).
//
// Problems:
//   Lotka-Volterra, LV_LANES lanes: x' = a x - b x y, y' = c x y - d y,
//   (x, y)(0) = (10, 5), (a, b, c, d) = (1.5, 1, 1, 3) each scaled by a factor
//   in [0.9, 1.1) (a 32-bit LCG, seed 20240503), 41 output times 0, 0.5, ..
//   20; rtol 1e-8, atol 1e-10.
//   Stiff Van der Pol, mu = 1000 ("vdp1000"), 1 lane: y1' = y2,
//   y2' = mu (1 - y1^2) y2 - y1, y(0) = (2, 0), 31 output times 0, 100, ..
//   3000; rtol 1e-6, atol 1e-8.
//
// Equal accuracy: every solver's error is the largest over all outputs of
// |v - ref| / (atol + rtol |ref|) with the problem's rtol and atol (tolerance
// units), against a tight reference. odetensor runs at the problem's
// tolerances in each mode. Each peer is first run (untimed) on a ladder of
// tolerances r in half-decade steps around the problem's rtol (odex:
// relativeTolerance r, absoluteTolerance r atol / rtol; ode45-cash-karp:
// tol r, its error being relative to |y| + |dt y'|); for each odetensor mode
// the peer's rung is the loosest r at which it and every tighter rung tried
// reach at most that mode's error. Those rungs are then timed with the rest.
//
// Timing: performance.now() around each whole solve (all lanes), after one
// untimed run of every row (JIT, wasm tier-up); REPS rounds in which the rows
// take turns in a rotating order, so that all see the machine's drift alike.
// "paired" ratios are the median (min..max) over rounds of each round's own
// ratio.
import { createRequire } from 'node:module';
import { load } from '../../bindings/wasm/index.mjs';
import odex from './node_modules/odex/src/odex.js';

const ode45 = createRequire(import.meta.url)('./node_modules/ode45-cash-karp/lib/index.js');
const LV_LANES = Number(process.argv[2] ?? 1000);
const REPS = Number(process.argv[3] ?? 5);
const ODE45_MAX_STEPS = 2e7; // per lane; ode45-cash-karp has no limit of its own
const ot = await load();

const linspace = (a, b, n) => Float64Array.from({ length: n }, (_, j) => a + ((b - a) * j) / (n - 1));
const median = (v) => {
  const s = [...v].sort((x, y) => x - y), h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
};
const fmt = (x, d = 3) => (!Number.isFinite(x) ? String(x) : x >= 100 ? x.toFixed(0) : x.toPrecision(d));
const fmtTol = (r) => r.toExponential(0);
const say = (m) => process.stderr.write(`peers: ${m}\n`);

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
  rtol: 1e-8, atol: 1e-10, dt0: 1e-3,
  // odetensor: lanes mode (k = 1) and lockstep mode (k = lanes of the block) alike.
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
  // odex: a closure per lane returning a new array, as in odex's README.
  odexRhs(p, b) {
    const a = p[4 * b], bb = p[4 * b + 1], c = p[4 * b + 2], d = p[4 * b + 3];
    return (x, y) => [a * y[0] - bb * y[0] * y[1], c * y[0] * y[1] - d * y[1]];
  },
  // ode45-cash-karp: deriv(dydt, y, t) in place, as in its README.
  ode45Rhs(p, b) {
    const a = p[4 * b], bb = p[4 * b + 1], c = p[4 * b + 2], d = p[4 * b + 3];
    return (dy, y) => {
      dy[0] = a * y[0] - bb * y[0] * y[1];
      dy[1] = c * y[0] * y[1] - d * y[1];
    };
  },
};

const VDP = {
  name: 'Van der Pol mu = 1000', n: 2, np: 1, y0: [2, 0], tEval: linspace(0, 3000, 31),
  rtol: 1e-6, atol: 1e-8, dt0: 1e-6,
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
  ode45Rhs(p, b) {
    const mu = p[b];
    return (dy, y) => {
      dy[0] = y[1];
      dy[1] = mu * (1 - y[0] * y[0]) * y[1] - y[0];
    };
  },
};

// ---- Solvers: each returns { ys [n, nt, nbatch], steps, evals, failed, note } --

function otSolve(P, params, options, { jac = false } = {}) {
  const sol = ot.solveDense({
    nstates: P.n, nparams: P.np, rhs: P.rhs, jac: jac ? P.jac : undefined, y0: P.y0, params,
    tEval: P.tEval, options: { rtol: P.rtol, atol: P.atol, maxSteps: 100000, ...options },
  });
  try {
    // Per lane (lockstep: every lane reports its block's shared counts).
    const steps = sol.stats.reduce((a, s) => a + s.steps, 0) / sol.nbatch;
    const evals = sol.stats.reduce((a, s) => a + s.rhsEvals + s.jacRhsEvals, 0) / sol.nbatch;
    return { ys: sol.ys.toFloat64Array(), steps, evals, failed: sol.nfailed,
      note: sol.ok ? '' : sol.message.find((m) => m) };
  } finally {
    sol.dispose();
  }
}

// One odex Solver per lane, dense output at P.tEval from its step callback.
function odexSolve(P, params, { rtol, maxSteps } = {}) {
  const nb = params.length / P.np, nt = P.tEval.length, tEnd = P.tEval[nt - 1];
  const ys = new Float64Array(P.n * nt * nb).fill(NaN);
  let steps = 0, evals = 0, failed = 0, reached = Infinity;
  for (let b = 0; b < nb; b++) {
    const s = new odex.Solver(P.n);
    s.relativeTolerance = rtol;
    s.absoluteTolerance = (rtol * P.atol) / P.rtol;
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
  const note = failed ? `stopped: MaxStepsExceeded (maxSteps ${maxSteps ?? 10000}) at t = ${fmt(reached, 4)} of ${tEnd}` : '';
  return { ys, steps: steps / nb, evals: evals / nb, failed, note };
}

// One ode45-cash-karp integrator per lane, stepping to each output time
// exactly (step(tLimit) shortens the step that would pass it: it has no
// dense output), at most ODE45_MAX_STEPS accepted steps per lane.
function ode45Solve(P, params, { rtol, maxSteps = ODE45_MAX_STEPS } = {}) {
  const nb = params.length / P.np, nt = P.tEval.length, tEnd = P.tEval[nt - 1];
  const ys = new Float64Array(P.n * nt * nb).fill(NaN);
  let steps = 0, evals = 0, failed = 0, reached = Infinity;
  for (let b = 0; b < nb; b++) {
    const f = P.ode45Rhs(params, b);
    let ne = 0;
    const y = Float64Array.from(P.y0);
    const it = ode45(y, (dy, yy, t) => { ne++; f(dy, yy, t); }, P.tEval[0], P.dt0,
      { tol: rtol, verbose: false });
    const base = P.n * nt * b;
    let ns = 0, ok = true;
    for (let i = 0; i < P.n; i++) ys[base + i] = y[i];
    for (let j = 1; j < nt && ok; j++) {
      while (it.step(P.tEval[j])) {
        if (++ns >= maxSteps) { ok = false; break; }
      }
      if (ok) {
        ns++;
        for (let i = 0; i < P.n; i++) ys[base + P.n * j + i] = y[i];
      }
    }
    steps += ns;
    evals += ne;
    if (!ok) {
      failed++;
      reached = Math.min(reached, it.t);
    }
  }
  const note = failed ? `stopped at the cap of ${fmt(maxSteps)} steps, at t = ${fmt(reached, 4)} of ${tEnd}` : '';
  return { ys, steps: steps / nb, evals: evals / nb, failed, note };
}

// Largest |v - ref| / (atol + rtol |ref|) over all outputs (Infinity for NaN).
function tolErr(P, v, ref) {
  let e = 0;
  for (let i = 0; i < v.length; i++) {
    const d = Math.abs(v[i] - ref[i]) / (P.atol + P.rtol * Math.abs(ref[i]));
    e = Math.max(e, Number.isNaN(d) ? Infinity : d);
  }
  return e;
}

// ---- Equal accuracy ---------------------------------------------------------

// Runs peer `solve` untimed on the ladder r = rtol * 10^(k/2), from rtol
// towards tighter rungs until its error is <= the smallest target (or
// `tightest`), and towards looser ones while it is <= the largest target (up
// to `loosest`). Returns the rungs tried, sorted tight to loose, with errors.
function ladder(P, solve, ref, targets, { tightest, loosest }) {
  const lo = Math.min(...targets), hi = Math.max(...targets), tried = [];
  const at = (k) => {
    const r = P.rtol * 10 ** (k / 2);
    const t0 = performance.now();
    const res = solve(r);
    const e = tolErr(P, res.ys, ref);
    tried.push({ r, k, err: e, seconds: (performance.now() - t0) / 1e3 });
    say(`  rung ${fmtTol(r)}: err ${fmt(e)} tol units, ${fmt((performance.now() - t0) / 1e3)} s`);
    return e;
  };
  for (let k = 0, e = at(0); e > lo && P.rtol * 10 ** ((k - 1) / 2) >= tightest * 0.99;)
    e = at(--k);
  for (let k = 1; P.rtol * 10 ** (k / 2) <= loosest * 1.01; k++)
    if (at(k) > hi) break;
  return tried.sort((a, b) => a.k - b.k);
}

// The loosest rung at which this and every tighter rung tried reach <= target.
function pick(rungs, target) {
  let best = null;
  for (const g of rungs) {
    if (g.err > target) break;
    best = g;
  }
  return best;
}

// Runs every row once untimed, then REPS rounds in a rotating order.
function race(rows, reps) {
  const last = rows.map((s) => s.run());
  const times = rows.map(() => []);
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < rows.length; i++) {
      const w = (r + i) % rows.length;
      const t0 = performance.now();
      last[w] = rows[w].run();
      times[w].push((performance.now() - t0) / 1e3);
    }
    say(`  round ${r + 1} of ${reps}`);
  }
  return rows.map((s, i) => ({ ...s, ...last[i], times: times[i] }));
}

function paired(a, b) {
  const v = a.times.map((t, i) => t / b.times[i]).sort((x, y) => x - y);
  return `${fmt(median(v))} (${fmt(v[0])}..${fmt(v[v.length - 1])})`;
}

// Our rows, the peers' ladders, the race and the tables for one problem.
function compare(P, params, lanes, reps, ours, peers, ref, refNote) {
  say(`${P.name}: odetensor's modes (untimed, for their errors)`);
  for (const o of ours) o.err = tolErr(P, o.run().ys, ref);
  const targets = ours.map((o) => o.err);
  const peerRows = [];
  for (const peer of peers) {
    say(`${P.name}: ${peer.name} on the tolerance ladder`);
    peer.rungs = ladder(P, peer.solve, ref, targets, peer.range);
    const chosen = new Set([P.rtol]);
    for (const o of ours) {
      const g = pick(peer.rungs, o.err);
      if (g) chosen.add(g.r);
    }
    for (const r of [...chosen].sort((a, b) => b - a))
      peerRows.push({ label: `${peer.name}, tol ${fmtTol(r)}${r === P.rtol ? ' (same as odetensor)' : ''}`,
        peer: peer.name, r, run: () => peer.solve(r) });
    for (const x of peer.extra ?? []) peerRows.push(x);
  }
  say(`${P.name}: timing ${ours.length + peerRows.length} rows, ${reps} rounds`);
  const rows = race([...ours, ...peerRows], reps);
  for (const r of rows) r.err = tolErr(P, r.ys, ref);
  const base = rows[0], bMed = median(base.times);

  console.log(`${P.name}, ${lanes} lane${lanes > 1 ? 's' : ''}, rtol ${fmtTol(P.rtol)}, atol ${fmtTol(P.atol)}, ` +
    `${P.tEval.length} times ${P.tEval[0]}..${P.tEval[P.tEval.length - 1]}; ${reps} rounds\n`);
  console.log('| solver | time, min (s) | time, median (s) | / first row (medians) | steps per lane | ' +
    'rhs evals per lane | µs per lane-evaluation (median) | failed lanes | err vs reference (tol units) |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(`| ${r.label} | ${fmt(Math.min(...r.times), 4)} | ${fmt(median(r.times), 4)} | ` +
      `${fmt(median(r.times) / bMed)} | ${fmt(r.steps, 4)} | ${fmt(r.evals, 4)} | ` +
      `${fmt((1e6 * median(r.times)) / (r.evals * lanes))} | ` +
      `${r.failed}${r.note ? ` (${r.note})` : ''} | ${fmt(r.err)} |`);
  console.log(`\n${refNote} Steps and rhs evaluations are per lane (lockstep: its block's shared ` +
    `solver's); µs per lane-evaluation: median time / (lanes x evaluations per lane).\n`);

  for (const peer of peers)
    console.log(`- ${peer.name}, tolerance ladder (untimed; error in tol units, seconds of one run): ` +
      peer.rungs.map((g) => `${fmtTol(g.r)}: ${fmt(g.err)} (${fmt(g.seconds)} s)`).join(', '));
  console.log('\nAt equal accuracy: each peer at the loosest rung that reaches the mode\'s error ' +
    '(x = peer time / odetensor time, > 1: odetensor faster)\n');
  console.log(`| odetensor mode | its err (tol units) | its median (s) | ${peers.map((p) =>
    `${p.name}: tol, err | x (medians) | x paired, median (min..max)`).join(' | ')} |`);
  console.log(`|---|---|---|${peers.map(() => '---|---|---|').join('')}`);
  const verdicts = [];
  for (const o of rows.slice(0, ours.length)) {
    const cells = [];
    for (const peer of peers) {
      const g = pick(peer.rungs, o.err);
      const pr = g && rows.find((r) => r.peer === peer.name && r.r === g.r);
      if (!pr) {
        cells.push(`none of ${peer.rungs.map((x) => fmtTol(x.r)).join(', ')} reaches it | - | -`);
        verdicts.push({ mode: o.label, peer: peer.name, x: NaN });
        continue;
      }
      const x = median(pr.times) / median(o.times);
      cells.push(`${fmtTol(g.r)}, ${fmt(pr.err)}${pr.failed ? ' (failed)' : ''} | **${fmt(x)}** | ${paired(pr, o)}`);
      verdicts.push({ mode: o.label, peer: peer.name, x });
    }
    console.log(`| ${o.label} | ${fmt(o.err)} | ${fmt(median(o.times), 4)} | ${cells.join(' | ')} |`);
  }
  console.log('');
  for (const peer of peers) {
    const v = verdicts.filter((x) => x.peer === peer.name && x.x > 1);
    console.log(`- beats ${peer.name} at equal accuracy: ${v.length ? v.map((x) => `${x.mode} (${fmt(x.x)}x)`).join(', ') : 'none of our modes'}`);
  }
  console.log('');
}

// ---- Lotka-Volterra -----------------------------------------------------------

{
  const P = LV, p = lvParams(LV_LANES);
  say(`Lotka-Volterra: references (${LV_LANES} lanes)`);
  const ref = otSolve(P, p, { method: 'adams', rtol: 1e-13, atol: 1e-15, maxSteps: 1000000 });
  const ref2 = odexSolve(P, p, { rtol: 1e-14, maxSteps: 1e6 });
  const ours = [
    { label: 'odetensor Adams, lanes', run: () => otSolve(P, p, { method: 'adams' }) },
    { label: 'odetensor Adams, lockstep', run: () => otSolve(P, p, { method: 'adams', mode: 'lockstep' }) },
    { label: 'odetensor BDF + jac, lanes', run: () => otSolve(P, p, { method: 'bdf' }, { jac: true }) },
    { label: 'odetensor BDF + jac, lockstep', run: () => otSolve(P, p, { method: 'bdf', mode: 'lockstep' }, { jac: true }) },
    { label: 'odetensor Dormand-Prince 5(4), lanes', run: () => otSolve(P, p, { method: 'dp54' }) },
    { label: 'odetensor Dormand-Prince 5(4), lockstep', run: () => otSolve(P, p, { method: 'dp54', mode: 'lockstep' }) },
    { label: 'odetensor Verner 6(5), lanes', run: () => otSolve(P, p, { method: 'verner65' }) },
    { label: 'odetensor Verner 6(5), lockstep', run: () => otSolve(P, p, { method: 'verner65', mode: 'lockstep' }) },
  ];
  const peers = [
    { name: 'odex', solve: (r) => odexSolve(P, p, { rtol: r, maxSteps: 1e6 }),
      range: { tightest: 1e-13, loosest: 1e-5 } },
    { name: 'ode45-cash-karp', solve: (r) => ode45Solve(P, p, { rtol: r }),
      range: { tightest: 1e-13, loosest: 1e-5 } },
  ];
  compare(P, p, LV_LANES, REPS, ours, peers, ref.ys,
    `Reference: odetensor Adams at rtol 1e-13, atol 1e-15; odex at rtol 1e-14, atol 1e-16 is ` +
    `${tolErr(P, ref2.ys, ref.ys).toPrecision(2)} tol units from it. "/ first row": median time / ` +
    `median of odetensor Adams, lanes.`);
}

// ---- Van der Pol, mu = 1000 ---------------------------------------------------

{
  const P = VDP, p = new Float64Array([1000]);
  say('Van der Pol: references');
  const ref = otSolve(P, p, { method: 'bdf', rtol: 1e-11, atol: 1e-13, maxSteps: 1000000 }, { jac: true });
  const ref2 = odexSolve(P, p, { rtol: 1e-10, maxSteps: 1e8 });
  const ours = [
    { label: 'odetensor BDF + jac', run: () => otSolve(P, p, { method: 'bdf' }, { jac: true }) },
    { label: 'odetensor BDF (difference-quotient Jacobian)', run: () => otSolve(P, p, { method: 'bdf' }) },
    { label: 'odetensor ESDIRK 4(3) + jac', run: () => otSolve(P, p, { method: 'esdirk43' }, { jac: true }) },
  ];
  const peers = [
    { name: 'odex', solve: (r) => odexSolve(P, p, { rtol: r, maxSteps: 1e8 }),
      range: { tightest: 1e-9, loosest: 1e-3 },
      extra: [{ label: 'odex, tol 1e-6, default maxSteps (10000)', run: () => odexSolve(P, p, { rtol: 1e-6 }) }] },
    { name: 'ode45-cash-karp', solve: (r) => ode45Solve(P, p, { rtol: r }),
      range: { tightest: 1e-9, loosest: 1e-3 } },
  ];
  compare(P, p, 1, Math.max(3, Math.min(REPS, 5)), ours, peers, ref.ys,
    `Reference: odetensor BDF + jac at rtol 1e-11, atol 1e-13 (y1(3000) = ${ref.ys[2 * 30].toPrecision(8)}); ` +
    `odex at rtol 1e-10, atol 1e-12 is ${tolErr(P, ref2.ys, ref.ys).toPrecision(2)} tol units from it. ` +
    `"/ first row": median time / median of odetensor BDF + jac. One lane: lockstep is lanes mode ` +
    `with one more layer here, so it is not a row. Errors are largest at output times close to a ` +
    `relaxation jump, where a small error in the jump's timing is a large error in y.`);
}

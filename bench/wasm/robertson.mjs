// Robertson in WebAssembly for `make bench-wasm` (bench/wasm/run.sh runs it):
// the problem of bench/robertson.h, with the rates and times that
// build/bench/wasm_native wrote (so every side solves the same bits).
//
//   node robertson.mjs run MODE NBATCH INPUTS CMOD [DUMP]
//       MODE js:     the odetensor package (bindings/wasm), JS rhs and jac
//            shim:   CMOD's rbw_solve_shim: the package's C path (shim.c) with
//                    C callbacks where index.mjs puts JS ones
//            direct: CMOD's rbw_solve_direct: bench/ot_robertson.c's
//                    ot_solve_all (what wasm_native runs), compiled to wasm
//       Solves the first min(100, NBATCH) lanes untimed (warm-up: the JIT and
//       wasm tier-up), then NBATCH lanes timed; prints one line like
//       wasm_native's; DUMP gets the outputs [3, 50, NBATCH].
//   node robertson.mjs interleave NBATCH INPUTS CMOD [BLOCK]
//       direct, shim and js in one process, in turns, on blocks of BLOCK (100)
//       lanes (the order rotates every block); fails if a block's outputs
//       differ between them. Prints the totals and block-ratio medians.
//   node robertson.mjs compare A.f64 B.f64
//       bitwise_equal=N/M max_rel_diff=X (|a - b| / max(|a|, |b|)).
//
// CMOD is build/bench-wasm/robertson_c.mjs (mk/bench-wasm.mk).
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { load } from '../../bindings/wasm/index.mjs';

const N = 3, NT = 50, RTOL = 1e-6, ATOL = 1e-8, MAX_STEPS = 500, WARM = 100;

function readF64(path) {
  const b = readFileSync(path);
  return new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
}

// rates [3, nbatch] then times [50], as wasm_native wrote them.
function inputs(path, nbatch) {
  const all = readF64(path);
  const have = (all.length - NT) / N;
  if (!Number.isInteger(have) || have < nbatch) throw new Error(`${path}: ${have} lanes, need ${nbatch}`);
  return { rates: all.subarray(0, N * nbatch), times: all.slice(all.length - NT) };
}

// The same arithmetic, in the same order, as rb_rhs and rb_jac (robertson.h).
function rhs(t, y, p, dy) {
  const r1 = -p[0] * y[0] + p[1] * y[1] * y[2];
  const r3 = p[2] * y[1] * y[1];
  dy[0] = r1;
  dy[1] = -r1 - r3;
  dy[2] = r3;
}

function jac(t, y, p, J) {
  J[0] = -p[0];
  J[1] = p[0];
  J[2] = 0;
  J[3] = p[1] * y[2];
  J[4] = -p[1] * y[2] - 2 * p[2] * y[1];
  J[5] = 2 * p[2] * y[1];
  J[6] = p[1] * y[1];
  J[7] = -p[1] * y[1];
  J[8] = 0;
}

// Each solver: solve(rates, times) -> { seconds, steps, ys (a view, valid
// until the next solve) }.
async function jsSolver() {
  const ot = await load();
  let sol = null;
  return (rates, times) => {
    sol?.dispose();
    const t0 = performance.now();
    sol = ot.solveDense({
      nstates: N, nparams: N, rhs, jac, y0: [1, 0, 0], params: rates, tEval: times,
      options: { method: 'bdf', rtol: RTOL, atol: ATOL, maxSteps: MAX_STEPS },
    });
    const seconds = (performance.now() - t0) / 1e3;
    if (!sol.ok) throw new Error(`js: ${sol.nfailed} lanes failed: ${sol.message.find((m) => m)}`);
    return { seconds, steps: sol.stats.reduce((a, s) => a + s.steps, 0), ys: sol.ys.data };
  };
}

async function cSolver(cmod, entry) {
  const { default: create } = await import(pathToFileURL(resolve(cmod)).href);
  const m = await create();
  const fn = m[`_rbw_solve_${entry}`];
  let cap = 0, rp = 0;
  const tp = m._otw_malloc(NT * 8);
  return (rates, times) => {
    const nb = rates.length / N;
    m._rbw_release();
    if (nb > cap) {
      m._otw_free(rp);
      rp = m._otw_malloc(rates.length * 8);
      cap = nb;
    }
    m.HEAPF64.set(rates, rp >> 3);
    m.HEAPF64.set(times, tp >> 3);
    const t0 = performance.now();
    const steps = fn(nb, rp, tp);
    const seconds = (performance.now() - t0) / 1e3;
    if (steps < 0) throw new Error(`${entry}: the solve failed`);
    return { seconds, steps, ys: new Float64Array(m.HEAPF64.buffer, m._rbw_ys(), N * NT * nb) };
  };
}

function solverFor(mode, cmod) {
  if (mode === 'js') return jsSolver();
  if (mode === 'shim' || mode === 'direct') return cSolver(cmod, mode);
  throw new Error(`unknown mode '${mode}' (js, shim, direct)`);
}

function compare(a, b) {
  if (a.length !== b.length) return { same: 0, n: Math.max(a.length, b.length), rel: Infinity };
  const ua = new BigUint64Array(a.buffer, a.byteOffset, a.length);
  const ub = new BigUint64Array(b.buffer, b.byteOffset, b.length);
  let same = 0, rel = 0;
  for (let i = 0; i < a.length; i++) {
    if (ua[i] === ub[i]) { same++; continue; }
    const s = Math.max(Math.abs(a[i]), Math.abs(b[i]));
    const r = Number.isNaN(a[i]) || Number.isNaN(b[i]) ? Infinity : Math.abs(a[i] - b[i]) / s;
    if (r > rel) rel = r;
  }
  return { same, n: a.length, rel };
}

function median(v) {
  const s = [...v].sort((x, y) => x - y), h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

async function run(mode, nbatch, inPath, cmod, dump) {
  const { rates, times } = inputs(inPath, nbatch);
  const solve = await solverFor(mode, cmod);
  solve(rates.subarray(0, N * Math.min(WARM, nbatch)), times);
  const r = solve(rates, times);
  let sum = 0;
  for (const v of r.ys) sum += v;
  console.log(`wasm_${mode} nbatch=${nbatch} threads=1 seconds=${r.seconds.toFixed(6)} ` +
    `steps=${r.steps} checksum=${sum.toPrecision(17)}`);
  if (dump) writeFileSync(dump, r.ys);
}

async function interleave(nbatch, inPath, cmod, block) {
  const { rates, times } = inputs(inPath, nbatch);
  const names = ['direct', 'shim', 'js'];
  const solvers = await Promise.all(names.map((m) => solverFor(m, cmod)));
  for (const s of solvers) s(rates.subarray(0, N * Math.min(WARM, nbatch)), times);
  const total = [0, 0, 0], steps = [0, 0, 0], ratios = { shim: [], js: [] };
  for (let b0 = 0, i = 0; b0 < nbatch; b0 += block, i++) {
    const k = rates.subarray(N * b0, N * Math.min(nbatch, b0 + block));
    const t = [0, 0, 0], ys = [];
    for (let turn = 0; turn < 3; turn++) {
      const w = (i + turn) % 3;
      const r = solvers[w](k, times);
      t[w] = r.seconds;
      steps[w] += r.steps;
      ys[w] = r.ys.slice();
    }
    for (let w = 1; w < 3; w++) {
      const c = compare(ys[0], ys[w]);
      if (c.same !== c.n) throw new Error(`block at lane ${b0}: ${names[w]} differs from direct (max rel ${c.rel})`);
      total[w] += t[w];
    }
    total[0] += t[0];
    ratios.shim.push(t[1] / t[0]);
    ratios.js.push(t[2] / t[0]);
  }
  console.log(`interleave nbatch=${nbatch} block=${block} direct_seconds=${total[0].toFixed(6)} ` +
    `shim_seconds=${total[1].toFixed(6)} js_seconds=${total[2].toFixed(6)} ` +
    `shim_ratio=${(total[1] / total[0]).toFixed(4)} js_ratio=${(total[2] / total[0]).toFixed(4)} ` +
    `js_shim_ratio=${(total[2] / total[1]).toFixed(4)} ` +
    `median_block_shim=${median(ratios.shim).toFixed(4)} median_block_js=${median(ratios.js).toFixed(4)} ` +
    `steps=${steps.join('/')} bitwise_equal=1`);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'run') {
  await run(args[0], Number(args[1]), args[2], args[3], args[4]);
} else if (cmd === 'interleave') {
  await interleave(Number(args[0]), args[1], args[2], Number(args[3] ?? 100));
} else if (cmd === 'compare') {
  const c = compare(readF64(args[0]), readF64(args[1]));
  console.log(`compare bitwise_equal=${c.same}/${c.n} max_rel_diff=${c.rel.toPrecision(3)}`);
} else {
  console.error('usage: node robertson.mjs run|interleave|compare ... (see the header)');
  process.exit(2);
}

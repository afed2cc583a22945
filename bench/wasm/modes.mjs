// The wasm side of bench/wasm/modes.c (wasm against native by problem and
// mode, issue 12 item 6; bench/wasm/run.sh runs it), with the inputs that
// build/bench/wasm_modes wrote.
//
//   node modes.mjs run VARIANT PROBLEM MODE NBATCH INPUTS CMOD [DUMP]
//       VARIANT c:  CMOD's mbw_solve (modes.c compiled to wasm, C callbacks)
//               js: the odetensor package (bindings/wasm) with JS callbacks
//                   doing the same arithmetic in the same order
//       PROBLEM rob | lv, MODE lanes | lockstep (see modes.c).
//       Solves the first min(100, NBATCH) lanes untimed (warm-up: the JIT and
//       wasm tier-up), then NBATCH lanes timed; prints one line like
//       wasm_modes's; DUMP gets the outputs [n, nt, NBATCH].
//
// CMOD is build/bench-wasm/modes_c.mjs (mk/bench-wasm.mk). Compare outputs
// with `node robertson.mjs compare A.f64 B.f64`.
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { load } from '../../bindings/wasm/index.mjs';

const WARM = 100;

// The problems as modes.c sets them up; rhs and jac loop over the k lanes.
const PROBLEMS = {
  rob: {
    id: 0, n: 3, np: 3, nt: 50, y0: [1, 0, 0],
    options: { method: 'bdf', rtol: 1e-6, atol: 1e-8, maxSteps: 500 },
    rhs(t, y, p, dy, k) {
      for (let b = 0; b < k; b++) {
        const o = 3 * b;
        const r1 = -p[o] * y[o] + p[o + 1] * y[o + 1] * y[o + 2];
        const r3 = p[o + 2] * y[o + 1] * y[o + 1];
        dy[o] = r1;
        dy[o + 1] = -r1 - r3;
        dy[o + 2] = r3;
      }
    },
    jac(t, y, p, J, k) {
      for (let b = 0; b < k; b++) {
        const o = 3 * b, q = 9 * b;
        J[q] = -p[o];
        J[q + 1] = p[o];
        J[q + 2] = 0;
        J[q + 3] = p[o + 1] * y[o + 2];
        J[q + 4] = -p[o + 1] * y[o + 2] - 2 * p[o + 2] * y[o + 1];
        J[q + 5] = 2 * p[o + 2] * y[o + 1];
        J[q + 6] = p[o + 1] * y[o + 1];
        J[q + 7] = -p[o + 1] * y[o + 1];
        J[q + 8] = 0;
      }
    },
  },
  lv: {
    id: 1, n: 2, np: 4, nt: 41, y0: [10, 5],
    options: { method: 'adams', rtol: 1e-8, atol: 1e-10, maxSteps: 100000 },
    rhs(t, y, p, dy, k) {
      for (let b = 0; b < k; b++) {
        const Y = 2 * b, P = 4 * b, xy = y[Y] * y[Y + 1];
        dy[Y] = p[P] * y[Y] - p[P + 1] * xy;
        dy[Y + 1] = p[P + 2] * xy - p[P + 3] * y[Y + 1];
      }
    },
  },
};

function readF64(path) {
  const b = readFileSync(path);
  return new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
}

// params [np, nbatch] then times [nt], as wasm_modes wrote them.
function inputs(P, path, nbatch) {
  const all = readF64(path);
  const have = (all.length - P.nt) / P.np;
  if (!Number.isInteger(have) || have < nbatch) throw new Error(`${path}: ${have} lanes, need ${nbatch}`);
  return { params: all.subarray(0, P.np * nbatch), times: all.slice(all.length - P.nt) };
}

// solve(params, times) -> { seconds, steps, ys (valid until the next solve) }.
async function jsSolver(P, mode) {
  const ot = await load();
  let sol = null;
  return (params, times) => {
    sol?.dispose();
    const t0 = performance.now();
    sol = ot.solveDense({
      nstates: P.n, nparams: P.np, rhs: P.rhs, jac: P.jac, y0: P.y0, params, tEval: times,
      options: { ...P.options, mode },
    });
    const seconds = (performance.now() - t0) / 1e3;
    if (!sol.ok) throw new Error(`js: ${sol.nfailed} lanes failed: ${sol.message.find((m) => m)}`);
    return { seconds, steps: sol.stats.reduce((a, s) => a + s.steps, 0), ys: sol.ys.data };
  };
}

async function cSolver(P, mode, cmod) {
  const { default: create } = await import(pathToFileURL(resolve(cmod)).href);
  const m = await create();
  let cap = 0, pp = 0;
  const tp = m._otw_malloc(P.nt * 8);
  return (params, times) => {
    const nb = params.length / P.np;
    m._mbw_release();
    if (nb > cap) {
      m._otw_free(pp);
      pp = m._otw_malloc(params.length * 8);
      cap = nb;
    }
    m.HEAPF64.set(params, pp >> 3);
    m.HEAPF64.set(times, tp >> 3);
    const t0 = performance.now();
    const steps = m._mbw_solve(P.id, mode === 'lockstep' ? 1 : 0, nb, pp, tp);
    const seconds = (performance.now() - t0) / 1e3;
    if (steps < 0) throw new Error('c: the solve failed');
    return { seconds, steps, ys: new Float64Array(m.HEAPF64.buffer, m._mbw_ys(), P.n * P.nt * nb) };
  };
}

const [cmd, variant, prob, mode, nbArg, inPath, cmod, dump] = process.argv.slice(2);
const P = PROBLEMS[prob];
if (cmd !== 'run' || !P || !['c', 'js'].includes(variant) || !['lanes', 'lockstep'].includes(mode)) {
  console.error('usage: node modes.mjs run c|js rob|lv lanes|lockstep NBATCH INPUTS CMOD [DUMP]');
  process.exit(2);
}
const nbatch = Number(nbArg);
const { params, times } = inputs(P, inPath, nbatch);
const solve = variant === 'js' ? await jsSolver(P, mode) : await cSolver(P, mode, cmod);
solve(params.subarray(0, P.np * Math.min(WARM, nbatch)), times);
const r = solve(params, times);
let sum = 0;
for (const v of r.ys) sum += v;
console.log(`wasm_${variant}_${prob}_${mode} nbatch=${nbatch} threads=1 seconds=${r.seconds.toFixed(6)} ` +
  `steps=${r.steps} checksum=${sum.toPrecision(17)}`);
if (dump) writeFileSync(dump, r.ys);

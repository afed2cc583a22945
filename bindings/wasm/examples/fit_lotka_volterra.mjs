// Fitting Lotka-Volterra's four rates from noisy data from many starting
// guesses at once, in Node: every iteration one solveAdjoint call for all
// starts still going (the loss and its gradient), then per start a step of
// L-BFGS with a backtracking line search on the log-rates, in lockstep
// (3.6x lanes mode here). The same problem as examples/fit_lotka_volterra.c. Prints how many starts reach the true
// rates within 1 % and exits 1 when fewer than 90 % do.
// Usage: node fit_lotka_volterra.mjs [starts=200] [iterations=200]
import { load } from '../index.mjs';

const starts = Number(process.argv[2] ?? 200), iters = Number(process.argv[3] ?? 200);
const TRUTH = [1.0, 0.4, 0.3, 0.8];
const ot = await load();

const problem = {
  nstates: 2, nparams: 4,
  rhs(t, y, p, f, k) {
    for (let b = 0; b < k; b++) {
      const x = y[2 * b], z = y[2 * b + 1], o = 4 * b;
      f[2 * b] = p[o] * x - p[o + 1] * x * z;
      f[2 * b + 1] = p[o + 2] * x * z - p[o + 3] * z;
    }
  },
  jac(t, y, p, J, k) {
    for (let b = 0; b < k; b++) {
      const x = y[2 * b], z = y[2 * b + 1], o = 4 * b;
      J[4 * b] = p[o] - p[o + 1] * z; J[4 * b + 1] = p[o + 2] * z;
      J[4 * b + 2] = -p[o + 1] * x; J[4 * b + 3] = p[o + 2] * x - p[o + 3];
    }
  },
  dfdp(t, y, p, D, k) {
    for (let b = 0; b < k; b++) {
      const x = y[2 * b], z = y[2 * b + 1], o = 8 * b;
      D[o] = x; D[o + 2] = -x * z; D[o + 5] = x * z; D[o + 7] = -z;
    }
  },
  y0: [2, 1],
};
const tEval = Array.from({ length: 30 }, (_, i) => 0.5 * (i + 1));

// splitmix64 as in the C example, for the noise and the guesses.
let seed = 2026n;
function unit() {
  seed = (seed + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
  let z = seed;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
  return Number((z ^ (z >> 31n)) >> 11n) * 2 ** -53;
}
const normal = () => Math.sqrt(-2 * Math.log(unit() + 2 ** -54)) * Math.cos(2 * Math.PI * unit());

const truth = ot.solveDense({ ...problem, params: TRUTH, tEval, options: { rtol: 1e-10, atol: 1e-12 } });
const data = truth.ys.toFloat64Array().map((v) => v * (1 + 0.005 * normal()));
truth.dispose();

// L-BFGS state per start (log-rates).
const dot = (a, b) => a.reduce((s, v, j) => s + v * b[j], 0);
const lanes = Array.from({ length: starts }, () => ({
  trial: TRUTH.map((v) => Math.log(v) + Math.log(2) * (2 * unit() - 1)),
  x: null, f: 0, g: null, d: null, alpha: 1, S: [], Y: [], done: false,
}));
function direction(L) {
  const q = L.g.slice(), a = [];
  for (let k = L.S.length - 1; k >= 0; k--) {
    a[k] = dot(L.S[k], q) / dot(L.Y[k], L.S[k]);
    for (let j = 0; j < 4; j++) q[j] -= a[k] * L.Y[k][j];
  }
  const n = L.S.length;
  const gamma = n ? dot(L.S[n - 1], L.Y[n - 1]) / dot(L.Y[n - 1], L.Y[n - 1]) : 0.1 / Math.max(Math.hypot(...q), 1e-300);
  for (let j = 0; j < 4; j++) q[j] *= gamma;
  for (let k = 0; k < n; k++) {
    const beta = dot(L.Y[k], q) / dot(L.Y[k], L.S[k]);
    for (let j = 0; j < 4; j++) q[j] += (a[k] - beta) * L.S[k][j];
  }
  const big = Math.max(1, ...q.map(Math.abs)); // at most a factor e per step
  L.d = q.map((v) => -v / big);
  if (dot(L.d, L.g) >= 0) { L.S = []; L.Y = []; direction(L); }
}
function step(L, f, g, first) {
  const ok = Number.isFinite(f) && g.every(Number.isFinite);
  if (first || (ok && f <= L.f + 1e-4 * L.alpha * dot(L.g, L.d))) {
    if (!first) {
      const s = L.trial.map((v, j) => v - L.x[j]), y = g.map((v, j) => v - L.g[j]);
      if (dot(s, y) > 1e-16) { L.S.push(s); L.Y.push(y); if (L.S.length > 5) { L.S.shift(); L.Y.shift(); } }
    }
    const moved = first ? Infinity : Math.max(...L.trial.map((v, j) => Math.abs(v - L.x[j])));
    [L.x, L.g, L.f] = [L.trial.slice(), g, f];
    if (!ok || Math.hypot(...g) < 1e-10 || moved < 1e-9) return !(L.done = true);
    direction(L);
    L.alpha = 1;
  } else if ((L.alpha *= 0.5) < 1e-12) return !(L.done = true);
  L.trial = L.x.map((v, j) => v + L.alpha * L.d[j]);
  return true;
}

let live = lanes.map((_, b) => b), it = 0;
for (; it < iters && live.length > 0; it++) {
  const params = live.flatMap((b) => lanes[b].trial.map(Math.exp));
  const sol = ot.solveAdjoint({ ...problem, params, tEval, loss: { data }, options: { mode: 'lockstep', rtol: 1e-8, atol: 1e-10 } });
  live = live.filter((b, k) => step(lanes[b], sol.loss.get(k),
    [0, 1, 2, 3].map((j) => params[4 * k + j] * sol.gradParams.get(j, k)), it === 0));
  sol.dispose();
}
const close = lanes.filter((L) => L.x.every((v, j) => Math.abs(Math.exp(v) / TRUTH[j] - 1) < 0.01)).length;
const best = lanes.reduce((a, L) => (L.f < a.f ? L : a));
console.log(`fit_lotka_volterra.mjs: ${starts} starts, ${it} solveAdjoint calls: ${close} (${(100 * close / starts).toFixed(1)} %) ` +
  `reached the true rates within 1 %; best fit ${best.x.map((v) => Math.exp(v).toFixed(4)).join(', ')} (truth ${TRUTH.join(', ')})`);
process.exit(close >= Math.ceil(0.9 * starts) ? 0 : 1);

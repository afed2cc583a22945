// The demo's model: an SIR epidemic, S' = -b S I, I' = b S I - g I, R' = g I
// (fractions of one population), solved for many lanes whose infection rate b
// and recovery rate g are spread around the values the sliders set.

export const STATES = ['S', 'I', 'R'];

/** dydt for k lanes (k = 1 in 'lanes' mode, k = nbatch in 'lockstep'). */
export function sirRhs(t, y, p, dydt, k) {
  for (let b = 0; b < k; b++) {
    const Y = 3 * b, P = 2 * b;
    const infect = p[P] * y[Y] * y[Y + 1], recover = p[P + 1] * y[Y + 1];
    dydt[Y] = -infect;
    dydt[Y + 1] = infect - recover;
    dydt[Y + 2] = recover;
  }
}

/** The exact Jacobian, J [3, 3, k] column-major (arrives zeroed). */
export function sirJac(t, y, p, J, k) {
  for (let b = 0; b < k; b++) {
    const Y = 3 * b, P = 2 * b, A = 9 * b;
    const beta = p[P], gamma = p[P + 1];
    J[A] = -beta * y[Y + 1];                 // dS'/dS
    J[A + 1] = beta * y[Y + 1];              // dI'/dS
    J[A + 3] = -beta * y[Y];                 // dS'/dI
    J[A + 4] = beta * y[Y] - gamma;          // dI'/dI
    J[A + 5] = gamma;                        // dR'/dI
  }
}

// Deterministic pseudo-random numbers in [0, 1) (mulberry32): the same lanes
// for the same settings, so a slider moved back gives the same picture.
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** params [2, lanes] column-major: beta and gamma each times (1 + spread * u),
 * u uniform in [-1, 1]. */
export function laneParams(beta, gamma, spread, lanes) {
  const rand = random(20240611);
  const p = new Float64Array(2 * lanes);
  for (let b = 0; b < lanes; b++) {
    p[2 * b] = beta * (1 + spread * (2 * rand() - 1));
    p[2 * b + 1] = gamma * (1 + spread * (2 * rand() - 1));
  }
  return p;
}

/** Output times 0, 1, ..., days (one per day). */
export function dailyTimes(days) {
  return Float64Array.from({ length: days + 1 }, (_, i) => i);
}

/** The model for a worker (odetensor/worker loads this module there). */
export default { nstates: 3, nparams: 2, rhs: sirRhs, jac: sirJac };

/** The inputs of every lane's solve for the settings (worker or not). */
export function sirInputs(s) {
  const i0 = s.infected0;
  return {
    y0: [1 - i0, i0, 0],
    params: laneParams(s.beta, s.gamma, s.spread, s.lanes),
    tEval: dailyTimes(s.days),
    options: { method: 'bdf', mode: s.mode, rtol: 1e-6, atol: 1e-9 },
  };
}

function range(v) {
  let min = Infinity, max = -Infinity, sum = 0, n = 0;
  for (const x of v) {
    if (!Number.isFinite(x)) continue;
    if (x < min) min = x;
    if (x > max) max = x;
    sum += x;
    n++;
  }
  return n ? { mean: sum / n, min, max } : { mean: NaN, min: NaN, max: NaN };
}

/** Numbers across lanes from ys [3, nt, nb]: peak infected and its day, final
 * recovered (attack rate), and solver work. */
export function summarize(sol) {
  const ys = sol.ys.data, [n, nt, nb] = sol.ys.shape;
  const peak = new Float64Array(nb), peakDay = new Float64Array(nb);
  const finalR = new Float64Array(nb);
  for (let b = 0; b < nb; b++) {
    let best = -Infinity, day = NaN;
    for (let j = 0; j < nt; j++) {
      const v = ys[1 + n * (j + nt * b)];
      if (v > best) { best = v; day = j; }
    }
    peak[b] = best === -Infinity ? NaN : best;
    peakDay[b] = day;
    finalR[b] = ys[2 + n * (nt - 1 + nt * b)];
  }
  let steps = 0, rhsEvals = 0;
  for (const st of sol.stats) { steps += st.steps; rhsEvals += st.rhsEvals; }
  return {
    peak: range(peak), peakDay: range(peakDay), finalR: range(finalR),
    steps, rhsEvals, lanes: nb, failed: sol.nfailed,
  };
}

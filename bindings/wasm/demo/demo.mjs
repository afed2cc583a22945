// The demo page's logic: read the sliders, solve all lanes with odetensor in
// a Worker (odetensor/worker), plot them, show the numbers. The page's thread
// only sends inputs and draws, so the sliders stay responsive at 1,000 lanes;
// while a solve runs, moves are coalesced into one solve of the latest
// settings.
//
// For tests: document.body.dataset.ready is 'true' once the first plot is
// drawn, and dataset.solves counts the solves shown so far.
import { createSolverWorker } from '../worker.mjs';
import { sirInputs, summarize } from './sir.mjs';
import { plotLanes } from './plot.mjs';

const $ = (id) => document.getElementById(id);
const SLIDERS = {
  beta: (v) => v.toFixed(2),
  gamma: (v) => v.toFixed(2),
  spread: (v) => `${Math.round(v * 100)}%`,
  lanes: (v) => String(v),
  days: (v) => String(v),
};

function settings() {
  const s = {};
  for (const [id, fmt] of Object.entries(SLIDERS)) {
    s[id] = Number($(id).value);
    $(`${id}-out`).textContent = fmt(s[id]);
  }
  s.mode = $('mode').value;
  s.infected0 = 0.001;
  return s;
}

const pct = (v) => (Number.isFinite(v) ? `${(v * 100).toFixed(1)}%` : '–');
const num = (v, digits) => (Number.isFinite(v) ? v.toFixed(digits) : '–');
const int = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '–');

function showRange(prefix, r, fmt) {
  $(`${prefix}-mean`).textContent = fmt(r.mean);
  $(`${prefix}-min`).textContent = fmt(r.min);
  $(`${prefix}-max`).textContent = fmt(r.max);
}

// R0 = beta / gamma of each lane, from params [2, lanes].
function r0Range(params) {
  let min = Infinity, max = -Infinity, sum = 0;
  const nb = params.length / 2;
  for (let b = 0; b < nb; b++) {
    const r = params[2 * b] / params[2 * b + 1];
    min = Math.min(min, r); max = Math.max(max, r); sum += r;
  }
  return { mean: sum / nb, min, max };
}

function show(s, sol, params, ms) {
  plotLanes($('plot'), sol.ys.data, sol.ys.shape);
  const sum = summarize(sol);
  showRange('r0', r0Range(params), (v) => num(v, 2));
  showRange('peak', sum.peak, pct);
  showRange('day', sum.peakDay, (v) => num(v, 1));
  showRange('final', sum.finalR, pct);
  $('solve-ms').textContent = `${ms.toFixed(1)} ms`;
  $('steps').textContent = num(sum.steps / sum.lanes, 1);
  $('rhs-evals').textContent = int(sum.rhsEvals);
  $('failed').textContent = `${sum.failed} of ${sum.lanes}`;
  if (!sol.ok) {
    const b = sol.statusCode.findIndex((c) => c !== 0);
    $('error').textContent = `lane ${b}: ${sol.status[b]} ${sol.message[b]}`;
  } else {
    $('error').textContent = '';
  }
  const body = document.body.dataset;
  body.solves = String(Number(body.solves || 0) + 1);
  body.ready = 'true';
  $('status').textContent = `odetensor in a Worker · ${s.lanes} lanes × ${s.days + 1} output times`;
}

function showError(e) {
  console.error(e);
  $('error').textContent = `Error: ${e?.message ?? e}`;
}

async function main() {
  if (location.protocol === 'file:')
    throw new Error('serve this page over http (make wasm-demo); browsers do not load modules from file://');
  const worker = await createSolverWorker(new URL('./sir.mjs', import.meta.url));
  let running = false, again = false;
  const solve = async () => {
    if (running) { again = true; return; } // one solve at a time; the latest settings next
    running = true;
    try {
      do {
        again = false;
        const s = settings(), inputs = sirInputs(s), t = performance.now();
        const sol = await worker.solveDense(inputs);
        show(s, sol, inputs.params, performance.now() - t); // then the latest settings, if they moved
      } while (again);
    } catch (e) {
      showError(e);
    } finally {
      running = false;
    }
  };
  for (const id of [...Object.keys(SLIDERS), 'mode']) $(id).addEventListener('input', solve);
  window.addEventListener('resize', solve);
  await solve();
}

main().catch(showError);

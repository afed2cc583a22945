// The demo page's logic: read the sliders, solve all lanes with odetensor,
// plot them, show the numbers, dispose the solution. Re-solves on every input
// event (at most once per animation frame).
//
// For tests: document.body.dataset.ready is 'true' once the first plot is
// drawn, and dataset.solves counts the solves shown so far.
import { load } from '../index.mjs';
import { solveSir, summarize } from './sir.mjs';
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

function render(ot) {
  const s = settings();
  const { sol, params, ms } = solveSir(ot, s);
  try {
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
  } finally {
    sol.dispose();
  }
  const body = document.body.dataset;
  body.solves = String(Number(body.solves || 0) + 1);
  body.ready = 'true';
  $('status').textContent = `odetensor ${ot.version} · wasm memory ${(ot.heapSize() / 2 ** 20).toFixed(0)} MiB`
    + ` · ${s.lanes} lanes × ${s.days + 1} output times`;
}

function showError(e) {
  console.error(e);
  $('error').textContent = `Error: ${e?.message ?? e}`;
}

async function main() {
  if (location.protocol === 'file:')
    throw new Error('serve this page over http (make wasm-demo); browsers do not load modules from file://');
  const ot = await load();
  let pending = false;
  const schedule = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      try { render(ot); } catch (e) { showError(e); }
    });
  };
  for (const id of [...Object.keys(SLIDERS), 'mode']) $(id).addEventListener('input', schedule);
  window.addEventListener('resize', schedule);
  render(ot);
}

main().catch(showError);

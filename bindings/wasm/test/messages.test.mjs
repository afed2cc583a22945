// Messages in the JS API's words (issue 23, item 11): C's messages reach JS
// naming JS options and values, not C setters and enumerators, and an empty
// stops array gets a message that fits it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load, OdeTensorError } from '../index.mjs';
import { SETTER_NAMES, jsWords } from '../callbacks.mjs';
import { decayRhs } from './models.mjs';

const ot = await load();
const base = { nstates: 1, nparams: 1, rhs: decayRhs, y0: [1], params: [0.5, 1], tEval: [0, 1, 2] };

function refused(fn, status) {
  let err;
  assert.throws(fn, (e) => { err = e; return e instanceof OdeTensorError && e.status === status; });
  return err.message;
}

test('an empty stops array is refused saying it is empty, not "a multiple of its length (0)"', () => {
  const flat = refused(() => ot.solveDense({ ...base, stops: [], onEvent() {} }), 'OT_ERR_SHAPE');
  assert.match(flat, /^stops: length 0; give at least one stop time \(n >= 1\), or leave stops out/);
  const nested = refused(() => ot.solveDense({ ...base, stops: [[], []], onEvent() {} }), 'OT_ERR_SHAPE');
  assert.match(nested, /^stops: every lane's list is empty;/);
  assert.doesNotMatch(flat + nested, /multiple of its length/);
});

test("C's messages name JS options and values: onEvent, 'band', 'lanes', 'dense'", () => {
  const roots = { nroots: 1, roots(t, y, p, g) { g[0] = y[0] - 0.5; } };
  const handler = refused(() => ot.solveDense({ ...base, ...roots, eventActions: ['handle'] }), 'OT_ERR_ARG');
  assert.match(handler, /\(onEvent\)/);
  assert.doesNotMatch(handler, /ot_ode_set_|OT_EVENT_/);
  assert.match(handler, /'handle'/);
  const band = refused(() => ot.solveDense({
    ...base, options: { mode: 'lockstep', linearSolver: 'band', bandwidths: [0, 0] },
  }), 'OT_ERR_ARG');
  assert.match(band, /'band' runs in 'lanes' mode/);
  assert.match(band, /use 'dense' or 'lanes'/);
  assert.doesNotMatch(band, /OT_LINSOL|OT_LANES/);
});

test('jsWords: setters, entry points and enumerators; wildcards and status codes stay', () => {
  assert.equal(jsWords('stops: set ot_ode_set_event_handler first (ot_solve_fwd_sens)'),
    'stops: set onEvent first (solveFwdSens)');
  assert.equal(jsWords('method: OT_ERK_* or OT_ESDIRK*; OT_ERR_ARG'), 'method: OT_ERK_* or OT_ESDIRK*; OT_ERR_ARG');
  assert.equal(jsWords('OT_BDF and OT_ROOT_RISING'), "'bdf' and 'rising'");
});

test("every setter of ode.h has its JS name, or is C-only", () => {
  const ode = readFileSync(fileURLToPath(new URL('../../../include/odetensor/ode.h', import.meta.url)), 'utf8');
  const cOnly = new Set(['atol_vector', 'device', 'outputs_on_device', 'output_dtype', 'threads']);
  const setters = [...new Set([...ode.matchAll(/\bot_ode_set_([a-z_0-9]+)\s*\(/g)].map((m) => m[1]))];
  assert.ok(setters.length > 25, `${setters.length} setters parsed`);
  for (const s of setters)
    assert.ok(s in SETTER_NAMES || cOnly.has(s), `ot_ode_set_${s}: no JS name in SETTER_NAMES and not C-only`);
});

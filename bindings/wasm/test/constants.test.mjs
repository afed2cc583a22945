// The values the JS side mirrors from the C headers (constants.mjs) against
// the headers themselves: every status code, method, mode, linear solver,
// root direction, event action, event and gradient tensor and DLPack code
// equal, none missing and none extra; index.d.ts's unions name exactly
// them; every status name written in the JS sources exists; and the wasm
// module's own ot_status_name agrees. A code or enum added or changed in C
// fails here until the JS side follows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as JS from '../constants.mjs';
import { load } from '../index.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const header = (name) => readFileSync(here(`../../../include/odetensor/${name}`), 'utf8');
const status = header('status.h'), ode = header('ode.h'), solution = header('solution.h');

// The enumerators of `typedef enum NAME { ... }` as [C name, value] pairs.
function enumOf(text, name) {
  const body = text.match(new RegExp(`typedef enum ${name} \\{([^}]*)\\}`));
  assert.ok(body, `${name} not found in the header`);
  const pairs = [...body[1].replace(/\/\*[\s\S]*?\*\//g, '').matchAll(/(OT_\w+)\s*=\s*(-?\d+)/g)]
    .map(([, c, v]) => [c, Number(v)]);
  assert.ok(pairs.length > 0, `${name}: no enumerators`);
  return pairs;
}

// The JS table a C enum should have, keys named by the rule the JS API uses.
const expect = (pairs, key) => Object.fromEntries(pairs.map(([c, v]) => [key(c), v]));
const plain = (table) => Object.fromEntries(Object.entries(table));
const strip = (prefix) => (c) => c.slice(prefix.length).toLowerCase();

const statusList = [...status.matchAll(/X\((OT_\w+),\s*(-?\d+),/g)].map(([, c, v]) => [c, Number(v)]);

test('status codes: constants.mjs holds exactly the X-macro list of status.h', () => {
  assert.ok(statusList.length >= 18, 'OT_STATUS_LIST not parsed');
  assert.deepEqual(plain(JS.STATUS), Object.fromEntries(statusList));
});

test('enums: methods, modes, linear solvers, directions, actions = ode.h', () => {
  // OT_ERK_DP54 -> dp54, OT_ESDIRK43 -> esdirk43, OT_IMEX_ARK32 -> imex32
  const method = (c) => c.replace(/^OT_(ERK_)?/, '').replace('IMEX_ARK', 'IMEX').toLowerCase();
  assert.deepEqual(plain(JS.METHODS), expect(enumOf(ode, 'ot_method'), method));
  assert.deepEqual(plain(JS.MODES), expect(enumOf(ode, 'ot_mode'), strip('OT_')));
  assert.deepEqual(plain(JS.LINEAR_SOLVERS), expect(enumOf(ode, 'ot_linsol'), strip('OT_LINSOL_')));
  assert.deepEqual(plain(JS.DIRECTIONS), expect(enumOf(ode, 'ot_root_direction'), strip('OT_ROOT_')));
  assert.deepEqual(plain(JS.ACTIONS), expect(enumOf(ode, 'ot_event_action'), strip('OT_EVENT_')));
});

test('event and gradient tensors = solution.h', () => {
  assert.deepEqual(plain(JS.EVENT_TENSORS),
    expect(enumOf(solution, 'ot_event_tensor'), strip('OT_EVENT_')));
  // OT_GRAD_LOSS -> loss, OT_GRAD_PARAMS -> gradParams, OT_GRAD_Y0 -> gradY0
  const grad = (c) => {
    const n = strip('OT_GRAD_')(c);
    return n === 'loss' ? n : `grad${n[0].toUpperCase()}${n.slice(1)}`;
  };
  assert.deepEqual(plain(JS.GRAD_TENSORS), expect(enumOf(solution, 'ot_grad_tensor'), grad));
});

test('DLPack codes = dlpack.h (and OT_CPU, which equals DLPack\'s by design)', (t) => {
  assert.equal(JS.DLPACK.kDLCPU, Object.fromEntries(enumOf(header('tensor.h'), 'ot_device_type')).OT_CPU);
  const dl = '/usr/include/dlpack/dlpack.h';
  if (!existsSync(dl)) return t.skip(`${dl} not installed`);
  const text = readFileSync(dl, 'utf8');
  for (const [name, v] of Object.entries(JS.DLPACK)) {
    const m = text.match(new RegExp(`\\b${name}\\s*=\\s*(\\d+)`));
    assert.ok(m, `${name} not in ${dl}`);
    assert.equal(v, Number(m[1]), name);
  }
});

// The string literals of a union type in index.d.ts, found after `start`.
function union(dts, start) {
  const at = dts.indexOf(start);
  assert.ok(at >= 0, `index.d.ts: ${start} not found`);
  const end = dts.indexOf(';', at);
  return [...dts.slice(at + start.length, end).matchAll(/'([^']+)'/g)].map((m) => m[1]).sort();
}

test('index.d.ts: its unions name exactly the C values', () => {
  const dts = readFileSync(here('../index.d.ts'), 'utf8');
  const keys = (table) => Object.keys(table).sort();
  assert.deepEqual(union(dts, 'export type StatusName ='),
    [...statusList.map(([c]) => c), 'OT_UNKNOWN_STATUS'].sort());
  assert.deepEqual(union(dts, 'export type Method ='), keys(JS.METHODS));
  assert.deepEqual(union(dts, '  mode?:'), keys(JS.MODES));
  assert.deepEqual(union(dts, '  linearSolver?:'), keys(JS.LINEAR_SOLVERS));
  assert.deepEqual(union(dts, '  rootDirections?:'), keys(JS.DIRECTIONS));
  assert.deepEqual(union(dts, '  eventActions?:'), keys(JS.ACTIONS));
});

test('the JS sources name only real status codes, and pair each name with its code', () => {
  const dir = here('..');
  const names = new Set([...statusList.map(([c]) => c), 'OT_UNKNOWN_STATUS']);
  for (const f of readdirSync(dir).filter((f) => /\.(mjs|cjs|d\.ts|d\.cts)$/.test(f))) {
    const src = readFileSync(`${dir}/${f}`, 'utf8');
    for (const [, name] of src.matchAll(/'(OT_[A-Z0-9_]+)'/g))
      assert.ok(names.has(name), `${f}: '${name}' is no status of status.h`);
    // new OdeTensorError('OT_ERR_X', code, ...): the code is OT_ERR_X's
    for (const [, name, code] of src.matchAll(/new OdeTensorError\('(OT_\w+)',\s*([^,]+),/g))
      assert.ok(code === name || Number(code) === JS.STATUS[name], `${f}: '${name}' given code ${code}`);
  }
});

test('the wasm module names every code as constants.mjs does', async () => {
  const ot = await load();
  for (const [name, code] of Object.entries(JS.STATUS)) assert.equal(ot.statusName(code), name);
});

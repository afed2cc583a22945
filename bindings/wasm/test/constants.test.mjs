// The values the JS side mirrors from the C headers: constants.mjs and
// index.d.ts's unions are what tools/gen_constants.mjs writes from the
// headers (a code or enumerator added in C fails here until `make
// js-constants` ran); every status name written in the JS sources exists;
// DLPack's codes are dlpack.h's; and the wasm module's own ot_status_name
// agrees.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as JS from '../constants.mjs';
import { constantsSource, dtsSource, enumOf, files } from '../tools/gen_constants.mjs';
import { load } from '../index.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const header = (name) => readFileSync(here(`../../../include/odetensor/${name}`), 'utf8');

test('constants.mjs is what tools/gen_constants.mjs writes from the headers (make js-constants)', () => {
  assert.equal(readFileSync(files.constants, 'utf8'), constantsSource());
});

test('index.d.ts: its unions are what tools/gen_constants.mjs writes (make js-constants)', () => {
  const dts = readFileSync(files.dts, 'utf8');
  assert.equal(dts, dtsSource(dts));
});

test('the tables hold every C value: status codes, methods, modes, solvers, directions, actions, tensors', () => {
  const status = header('status.h'), ode = header('ode.h');
  assert.ok(Object.keys(JS.STATUS).length >= 18);
  assert.equal(JS.STATUS.OT_ERR_LANES_FAILED, -11);
  assert.equal(Object.keys(JS.STATUS).length, [...status.matchAll(/X\((OT_\w+),/g)].length);
  assert.equal(JS.METHODS.dp54, 4);
  assert.equal(JS.METHODS.imex32, 9);
  assert.equal(Object.keys(JS.METHODS).length, enumOf(ode, 'ot_method').length);
  assert.deepEqual({ ...JS.ACTIONS }, { stop: 0, record: 1, handle: 2 });
  assert.deepEqual({ ...JS.GRAD_TENSORS }, { loss: 0, gradParams: 1, gradY0: 2 });
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

test('the JS sources name only real status codes, and pair each name with its code', () => {
  const dir = here('..');
  const names = new Set([...Object.keys(JS.STATUS), 'OT_UNKNOWN_STATUS']);
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

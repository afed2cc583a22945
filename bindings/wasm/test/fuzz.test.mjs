// Hardening of the JS API (issue 6, item 7): tables of bad input for every
// entry point, callbacks that misbehave in every way, solves at the edge of
// the JS stack, and 10,000 seeded random argument sets. Every outcome must be
// a valid result or a thrown Error (an OdeTensorError carrying the library's
// message that names the argument), never a trap of the wasm module and never
// a non-Error throw; the module must stay intact: a reference solve gives the
// same bits as before the fuzzing, and the wasm heap and stack are as before.
//
//   FUZZ_SEED=123 FUZZ_RUNS=50000 node --test test/fuzz.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load, OdeTensorError } from '../index.mjs';
import { decayRhs, lotkaVolterraRhs, robertsonRhs, robertsonJac } from './models.mjs';
import createOdeTensorModule from '../dist/odetensor.mjs';

const ot = await load({ fresh: true }); // its own memory: heap figures are ours alone
const SEED = process.env.FUZZ_SEED === undefined ? 20240601 : Number(process.env.FUZZ_SEED) >>> 0;
const RUNS = process.env.FUZZ_RUNS === undefined ? 10000 : Number(process.env.FUZZ_RUNS);
const STATUS = new Set(['OT_ERR_ARG', 'OT_ERR_LAYOUT', 'OT_ERR_SHAPE', 'OT_ERR_DTYPE', 'OT_ERR_DEVICE',
  'OT_ERR_OVERFLOW', 'OT_ERR_NOMEM', 'OT_ERR_SOLVER', 'OT_ERR_CALLBACK', 'OT_ERR_VALUE']);

// ---- Helpers --------------------------------------------------------------

// What a trapped or corrupted module throws; none of it may ever appear.
const TRAP = /unreachable|memory access out of bounds|table index is out of bounds|null function|function signature mismatch|integer overflow|divide by zero|invalid conversion|Aborted|RuntimeError/;

// The error a call threw, checked to be a well-formed Error and never a trap.
function caught(fn) {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof Error, `a non-Error was thrown: ${typeof e} ${String(e?.toString?.())}`);
    assert.ok(!(e instanceof WebAssembly.RuntimeError), `wasm trapped: ${e.message}`);
    assert.doesNotMatch(e.message, TRAP);
    if (e instanceof OdeTensorError) {
      assert.ok(STATUS.has(e.status) || e.status === 'OT_ERR_INTERNAL', e.status);
      assert.equal(ot.statusName(e.code), e.status);
      assert.ok(e.message.length > 0);
    }
    return e;
  }
  return null;
}

// fn() throws an OdeTensorError with this status (or one of these) and a
// message matching re.
function throwsOt(fn, status, re) {
  const e = caught(fn);
  assert.ok(e instanceof OdeTensorError, `expected an OdeTensorError, got ${e ? `${e.name}: ${e.message}` : 'no throw'}`);
  if (Array.isArray(status)) assert.ok(status.includes(e.status), `${e.status}: ${e.message}`);
  else assert.equal(e.status, status, e.message);
  assert.match(e.message, re);
  return e;
}

// Bitwise equality of two Float64Arrays (NaN payloads included).
function sameBits(a, b) {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length * 2);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length * 2);
  return x.every((v, i) => v === y[i]);
}

const rates = [0.5, 1, 2];
const decay = { nstates: 1, nparams: 1, rhs: decayRhs, y0: [1], params: rates, tEval: [0, 1, 2] };
const robertson = {
  nstates: 3, nparams: 3, rhs: robertsonRhs, jac: robertsonJac, y0: [1, 0, 0],
  params: [0.04, 1e4, 3e7, 0.05, 1e4, 3e7], tEval: [0, 1, 10, 100],
  options: { rtol: 1e-6, atol: [1e-8, 1e-14, 1e-6] },
};
const lv = {
  nstates: 2, nparams: 4, rhs: lotkaVolterraRhs, y0: [10, 5], params: [1.5, 1, 1, 3, 1.4, 1, 1, 3],
  tEval: [0, 1, 2, 5], options: { method: 'adams', rtol: 1e-6 },
};

// The known-good solves whose bits must never change: every solve kind, both
// modes, with a Jacobian, roots and sensitivities.
function reference() {
  const sols = [
    ot.solveDense(robertson),
    ot.solveDense({ ...lv, options: { ...lv.options, mode: 'lockstep' } }),
    ot.solve({ ...lv, tEval: undefined, finalTime: 2 }),
    ot.solveFwdSens(lv),
    ot.solveDense({ ...decay, roots: (t, y, p, g, k) => { for (let b = 0; b < k; b++) g[b] = y[b] - 0.5; }, nroots: 1 }),
  ];
  const out = sols.flatMap((s) => [s.ts, s.ys, ...s.sens].map((t) => t.toFloat64Array()));
  for (const s of sols) {
    assert.equal(s.ok, true);
    s.dispose();
  }
  return out;
}

const REF = reference();
for (let i = 0; i < 3; i++) reference(); // warm-up: first-use allocations
const BASE_IN_USE = ot.heapInUse();

function assertIntact(what) {
  const now = reference();
  assert.equal(now.length, REF.length);
  now.forEach((a, i) => assert.ok(sameBits(a, REF[i]), `${what}: reference tensor ${i} changed`));
  assert.equal(ot.stackInUse(), 0, `${what}: wasm stack in use`);
  assert.equal(ot.heapInUse(), BASE_IN_USE, `${what}: bytes allocated in wasm memory`);
}

// ---- Tables of bad input --------------------------------------------------

// Values of every JS type that are not what a field wants.
const notNumbers = [
  ['string', '1'], ['empty string', ''], ['object', {}], ['null', null], ['symbol', Symbol('s')],
  ['bigint', 1n], ['boolean', true], ['array', [1]], ['function', () => 1],
  ['null-prototype object', Object.create(null)], ['boxed number', new Number(1)],
  ['object with a throwing toString', { toString() { throw new Error('toString'); } }],
];
const notIntegers = [
  ['NaN', NaN], ['Infinity', Infinity], ['-Infinity', -Infinity], ['fraction', 1.5],
  ['tiny fraction', Number.EPSILON], ['2**31', 2 ** 31], ['2**53', 2 ** 53], ['2**64', 2 ** 64],
];
const notArrays = [
  ['string', 'abc'], ['number', 5], ['object', {}], ['array-like object', { length: 1, 0: 1 }],
  ['boolean', true], ['bigint', 1n], ['symbol', Symbol('a')], ['function', () => [1]],
  ['ArrayBuffer', new ArrayBuffer(8)], ['DataView', new DataView(new ArrayBuffer(8))],
  ['null-prototype object', Object.create(null)], ['Map', new Map([[0, 1]])],
];
const badElements = [
  ['string', '1'], ['null', null], ['undefined', undefined], ['bigint', 1n], ['symbol', Symbol('e')],
  ['object', {}], ['nested array', [1]], ['boolean', true], ['boxed number', new Number(1)],
];
const lying = (length) => new Proxy([], { get: (t, k) => (k === 'length' ? length : t[k]) });
const notFunctions = [
  ['string', 'f'], ['number', 1], ['zero', 0], ['false', false], ['empty string', ''], ['object', {}],
  ['array', [() => 0]], ['bigint', 1n], ['symbol', Symbol('f')], ['null-prototype object', Object.create(null)],
];

function badInputCases() {
  const cases = []; // [label, fn, status, re]
  const add = (label, fn, status, re) => cases.push([label, fn, status, re]);
  const dense = (extra, options) => () => ot.solveDense({ ...decay, ...extra, options });
  const kinds = {
    solveDense: (s) => ot.solveDense(s),
    solve: (s) => ot.solve(s),
    solveFwdSens: (s) => ot.solveFwdSens(s),
  };

  // The problem object itself, for every solve entry point.
  for (const [kind, call] of Object.entries(kinds)) {
    for (const [name, v] of [['undefined', undefined], ['null', null], ['number', 5], ['string', 'x'],
      ['symbol', Symbol('p')], ['bigint', 1n], ['function', () => ({})], ['boolean', true]])
      add(`${kind}(${name})`, () => call(v), 'OT_ERR_ARG', /^solve: .*expected an object/);
    add(`${kind}([])`, () => call([]), 'OT_ERR_ARG', /^nstates: undefined; expected an integer >= 1/);
    add(`${kind}(null-prototype {})`, () => call(Object.create(null)), 'OT_ERR_ARG', /^nstates: undefined/);
    add(`${kind} unknown field`, () => call({ ...decay, tEvals: [1] }), 'OT_ERR_ARG', /^solve: unknown field 'tEvals'/);
  }

  // Counts: nstates >= 1, nparams >= 0, nout and nroots >= 1 with their callback.
  const counts = [
    ['nstates', (v) => dense({ nstates: v }), 1],
    ['nparams', (v) => dense({ nparams: v }), 0],
    ['nout', (v) => dense({ out: (t, y, p, o) => { o[0] = y[0]; }, nout: v }), 1],
    ['nroots', (v) => dense({ roots: (t, y, p, g) => { g[0] = y[0]; }, nroots: v }), 1],
  ];
  for (const [field, make, min] of counts) {
    const re = new RegExp(`^${field}: .*; expected an integer >= ${min}`);
    for (const [name, v] of [...notNumbers, ...notIntegers])
      if (!(field === 'nparams' && v === null)) add(`${field} ${name}`, make(v), 'OT_ERR_ARG', re); // null: the default
    add(`${field} ${min - 1}`, make(min - 1), 'OT_ERR_ARG', re);
    add(`${field} -1.5`, make(-1.5), 'OT_ERR_ARG', re);
    if (field !== 'nparams') add(`${field} missing`, make(undefined), 'OT_ERR_ARG', re);
  }
  add('nstates -0', dense({ nstates: -0 }), 'OT_ERR_ARG', /^nstates: 0; expected an integer >= 1/);
  add('nout without out', dense({ nout: 2 }), 'OT_ERR_ARG', /^nout: 2 given without out/);
  add('nroots without roots', dense({ nroots: 1 }), 'OT_ERR_ARG', /^nroots: 1 given without roots/);
  // Counts the library refuses: too much memory for wasm32, before anything
  // is allocated (the library's size checks word the message).
  const tooBig = ['OT_ERR_OVERFLOW', 'OT_ERR_NOMEM'];
  add('nstates 2**31 - 1', dense({ nstates: 2 ** 31 - 1, y0: undefined, init: () => 0 }), tooBig, /2147483647|bytes/);
  add('nout 2**31 - 1', dense({ out: () => 0, nout: 2 ** 31 - 1 }), tooBig, /2147483647|bytes/);
  add('nroots 2**31 - 1', dense({ roots: () => 0, nroots: 2 ** 31 - 1 }), tooBig, /bytes|allocate/);
  add('nparams 2**31 - 1', dense({ nparams: 2 ** 31 - 1, params: undefined }), 'OT_ERR_ARG',
    /^params: absent, but the problem has 2147483647 parameters/);

  // Callbacks: a function or absent (undefined / null).
  for (const cb of ['rhs', 'jac', 'init', 'out', 'roots'])
    for (const [name, v] of notFunctions) {
      const extra = { [cb]: v };
      if (cb === 'out') extra.nout = 1;
      if (cb === 'roots') extra.nroots = 1;
      add(`${cb} ${name}`, dense(extra), 'OT_ERR_ARG', new RegExp(`^${cb}: expected a function`));
    }
  add('rhs missing', dense({ rhs: undefined }), 'OT_ERR_ARG', /^rhs: expected a function/);
  add('rhs null', dense({ rhs: null }), 'OT_ERR_ARG', /^rhs: expected a function/);

  // Input arrays: y0 [n, nb], params [np, nb], tEval [nt], options.atol [n].
  const arrays = [
    ['y0', (v) => dense({ y0: v })],
    ['params', (v) => dense({ params: v })],
    ['tEval', (v) => dense({ tEval: v })],
    ['options.atol', (v) => dense({}, { atol: v })],
  ];
  for (const [field, make] of arrays) {
    const esc = field.replace('.', '\\.');
    for (const [name, v] of notArrays) {
      const e = typeof v === 'number' && field === 'options.atol' ? null : v; // a number is a valid atol
      if (e !== null) add(`${field} ${name}`, make(e), 'OT_ERR_ARG', new RegExp(`^${esc}: .*expected a Float64Array, Float32Array or array of numbers`));
    }
    for (const [name, v] of badElements)
      add(`${field} element ${name}`, make(field === 'tEval' ? [0, v] : [v]), 'OT_ERR_DTYPE',
        new RegExp(`^${esc}\\[${field === 'tEval' ? 1 : 0}\\]: .*; expected a number`));
    add(`${field} hole`, make(field === 'tEval' ? [0, , 2] : [,]), 'OT_ERR_DTYPE', new RegExp(`^${esc}\\[\\d\\]: undefined; expected a number`));
    add(`${field} BigInt64Array`, make(new BigInt64Array(3)), 'OT_ERR_DTYPE', new RegExp(`^${esc}: a BigInt64Array; expected numbers, not BigInts`));
    add(`${field} BigUint64Array`, make(new BigUint64Array(1)), 'OT_ERR_DTYPE', new RegExp(`^${esc}: a BigUint64Array; expected numbers, not BigInts`));
    add(`${field} empty`, make([]), 'OT_ERR_SHAPE', new RegExp(`^${esc}: length 0 is not a positive multiple`));
    add(`${field} empty Float64Array`, make(new Float64Array(0)), 'OT_ERR_SHAPE', new RegExp(`^${esc}: length 0`));
    add(`${field} length 2**32 + 1`, make(lying(2 ** 32 + 1)), 'OT_ERR_OVERFLOW', new RegExp(`^${esc}: 4294967297 values .* do not fit in wasm32 memory`));
    add(`${field} length 2**28`, make(lying(2 ** 28)), 'OT_ERR_OVERFLOW', new RegExp(`^${esc}: 268435456 values`));
    for (const len of [-1, 1.5, NaN, 2 ** 53, '3'])
      add(`${field} length ${String(len)}`, make(lying(len)), 'OT_ERR_SHAPE', new RegExp(`^${esc}: length .*; expected an array length`));
  }
  // Lengths that do not match the problem.
  add('y0 not a multiple of nstates', () => ot.solveDense({ ...lv, y0: [1, 2, 3] }), 'OT_ERR_SHAPE', /^y0: length 3 is not a positive multiple of nstates \(2\)/);
  add('params not a multiple of nparams', () => ot.solveDense({ ...lv, params: [1, 2, 3, 4, 5] }), 'OT_ERR_SHAPE', /^params: length 5 is not a positive multiple of nparams \(4\)/);
  add('y0 and params lanes differ', dense({ y0: [1, 1], params: rates }), 'OT_ERR_SHAPE', /^params: shape is \[1, 3\]; expected \[1\], \[1, 1\] or \[1, 2\]/);
  add('params given, nparams 0', dense({ nparams: 0 }), 'OT_ERR_SHAPE', /^params: 3 values, but nparams is 0/);
  add('params absent', dense({ params: undefined }), 'OT_ERR_ARG', /^params: absent, but the problem has 1 parameters/);
  add('y0 absent, no init', dense({ y0: undefined }), 'OT_ERR_ARG', /y0/);
  add('atol vector too short', () => ot.solveDense({ ...lv, options: { atol: [1e-8] } }), 'OT_ERR_SHAPE', /^options\.atol: length 1 is not a positive multiple of nstates \(2\)/);
  add('atol vector two columns', () => ot.solveDense({ ...lv, options: { atol: [1, 1, 1, 1] } }), 'OT_ERR_SHAPE', /^options\.atol: length 4; expected a number or 2 values/);
  // Values the library checks, with its message.
  for (const [name, v] of [['NaN', NaN], ['Infinity', Infinity], ['-Infinity', -Infinity]]) {
    add(`y0 ${name}`, dense({ y0: [v] }), 'OT_ERR_VALUE', /^y0: \[0, 0\] is -?(nan|inf); values must be finite/);
    add(`params ${name}`, dense({ params: [1, v, 1] }), 'OT_ERR_VALUE', /^params: \[0, 1\] is -?(nan|inf); values must be finite/);
    add(`tEval ${name}`, dense({ tEval: [0, v] }), 'OT_ERR_VALUE', /^t_eval: t_eval\[1\] is -?(nan|inf); times must be finite/);
    add(`Float32Array tEval ${name}`, dense({ tEval: new Float32Array([0, 1, v]) }), 'OT_ERR_VALUE', /^t_eval: t_eval\[2\] is -?(nan|inf)/);
    add(`atol vector ${name}`, () => ot.solveDense({ ...lv, options: { atol: [1e-8, v] } }), 'OT_ERR_VALUE', /^atol: atol\[1\] is -?(nan|inf); must be finite and >= 0/);
  }
  add('tEval decreasing', dense({ tEval: [0, 2, 1] }), 'OT_ERR_VALUE', /^t_eval: t_eval\[2\] = 1 is not after t_eval\[1\] = 2; times must increase strictly/);
  add('tEval repeated', dense({ tEval: [0, 1, 1] }), 'OT_ERR_VALUE', /^t_eval: t_eval\[2\] = 1 is not after t_eval\[1\] = 1/);
  add('tEval -0 after 0', dense({ tEval: [0, -0] }), 'OT_ERR_VALUE', /^t_eval: t_eval\[1\] = -?0 is not after t_eval\[0\] = 0/);
  add('tEval before t0', dense({ tEval: [-1, 1] }), 'OT_ERR_VALUE', /^t_eval: t_eval\[0\] = -1 is before t0 = 0/);
  add('tEval before a later t0', dense({ tEval: [0, 1] }, { t0: 0.5 }), 'OT_ERR_VALUE', /^t_eval: t_eval\[0\] = 0 is before t0 = 0\.5/);
  add('atol vector negative', () => ot.solveDense({ ...lv, options: { atol: [1e-8, -1] } }), 'OT_ERR_VALUE', /^atol: atol\[1\] is -1; must be finite and >= 0/);

  // Options: numbers, names and integers.
  add('options string', dense({}, 'fast'), 'OT_ERR_ARG', /^options: 'fast'; expected an object/);
  add('options number', dense({}, 1), 'OT_ERR_ARG', /^options: 1; expected an object/);
  add('options symbol', dense({}, Symbol('o')), 'OT_ERR_ARG', /^options: a symbol; expected an object/);
  add('options function', dense({}, () => 0), 'OT_ERR_ARG', /^options: a function; expected an object/);
  add('options array', dense({}, [1]), 'OT_ERR_ARG', /^options: unknown option '0'/);
  add('options unknown', dense({}, { rtoll: 1 }), 'OT_ERR_ARG', /^options: unknown option 'rtoll'/);
  const numeric = [['rtol', 'rtol'], ['atol', 'atol'], ['t0', 't0'], ['firstStep', 'first_step'],
    ['maxStep', 'max_step'], ['sensRtol', 'sens_rtol'], ['sensAtol', 'sens_atol']];
  for (const [opt, cname] of numeric) {
    for (const [name, v] of opt === 'atol' ? [] : notNumbers) // atol: also an array (above)
      add(`options.${opt} ${name}`, dense({}, { [opt]: v }), 'OT_ERR_ARG', new RegExp(`^options\\.${opt}: .*; expected a number`));
    for (const [name, v] of [['NaN', NaN], ['Infinity', Infinity], ['-Infinity', -Infinity]])
      add(`options.${opt} ${name}`, dense({}, { [opt]: v }), 'OT_ERR_VALUE', new RegExp(`^${cname}: -?(nan|inf); must be finite`));
    if (opt !== 't0')
      add(`options.${opt} -1`, dense({}, { [opt]: -1 }), 'OT_ERR_VALUE', new RegExp(`^${cname}: -1; must be finite and >= 0`));
  }
  add('options.atol null', dense({}, { atol: null }), 'OT_ERR_ARG', /^options\.atol: null; expected a number or an array/);
  for (const [name, v] of [...notNumbers, ['NaN', NaN], ['Infinity', Infinity], ['fraction', 2.5], ['2**31', 2 ** 31], ['2**53', 2 ** 53]])
    add(`options.maxSteps ${name}`, dense({}, { maxSteps: v }), 'OT_ERR_ARG', /^options\.maxSteps: .*expected (a number|an integer > 0)/);
  for (const v of [0, -1, -(2 ** 31 - 1)])
    add(`options.maxSteps ${v}`, dense({}, { maxSteps: v }), 'OT_ERR_VALUE', new RegExp(`^max_steps: ${v}; must be >= 1`));
  for (const opt of ['method', 'mode'])
    for (const [name, v] of [['unknown', 'rk4'], ['upper case', opt === 'method' ? 'BDF' : 'LANES'], ['empty', ''],
      ['constructor', 'constructor'], ['__proto__', '__proto__'], ['toString', 'toString'], ['hasOwnProperty', 'hasOwnProperty'],
      ['number', 1], ['null', null], ['symbol', Symbol('m')], ['object', {}], ['boxed string', new String('bdf')]])
      add(`options.${opt} ${name}`, dense({}, { [opt]: v }), 'OT_ERR_ARG', new RegExp(`^options\\.${opt}: .*; expected '`));

  // Entry-point-specific fields.
  add('solve() with tEval', () => ot.solve({ ...decay, finalTime: 1 }), 'OT_ERR_ARG', /^tEval: solve\(\) records every step/);
  add('solveDense() with finalTime', dense({ finalTime: 1 }), 'OT_ERR_ARG', /^finalTime: only for solve\(\)/);
  add('solveFwdSens() with finalTime', () => ot.solveFwdSens({ ...decay, finalTime: 1 }), 'OT_ERR_ARG', /^finalTime: only for solve\(\)/);
  add('solveDense() without tEval', dense({ tEval: undefined }), 'OT_ERR_ARG', /^tEval: required/);
  add('solveFwdSens() without tEval', () => ot.solveFwdSens({ ...decay, tEval: null }), 'OT_ERR_ARG', /^tEval: required/);
  add('solveFwdSens() with nparams 0', () => ot.solveFwdSens({ ...decay, nparams: 0, params: undefined }), 'OT_ERR_ARG', /nparams/);
  const steps = (tf, options) => () => ot.solve({ ...decay, tEval: undefined, finalTime: tf, options });
  for (const [name, v] of [...notNumbers, ['undefined', undefined]])
    add(`finalTime ${name}`, steps(v), 'OT_ERR_ARG', /^finalTime: .*; expected a number/);
  for (const [name, v] of [['NaN', NaN], ['Infinity', Infinity], ['-Infinity', -Infinity], ['-1', -1], ['t0', 0]])
    add(`finalTime ${name}`, steps(v), 'OT_ERR_VALUE', /^final_time: /);
  add('finalTime before t0', steps(1, { t0: 2 }), 'OT_ERR_VALUE', /^final_time: /);

  // statusName(code): an integer.
  for (const [name, v] of [...notNumbers, ...notIntegers, ['undefined', undefined]])
    add(`statusName(${name})`, () => ot.statusName(v), 'OT_ERR_ARG', /^statusName: .*; expected an integer status code/);

  // Tensor.get(i, j, k): integers inside the shape [1, 3, 3].
  const sol = ot.solveDense(decay);
  const at = (...ix) => () => sol.ys.get(...ix);
  for (const ix of [[1], [-1], [0, 3], [0, -1], [0, 0, 3], [0, 0, -1], [0.5], [0, 1.5], [NaN], [Infinity],
    ['0'], [null], [undefined], [0n], [Symbol('i')], [{}], [2 ** 53], [0, 2 ** 32], [0, 0, 2 ** 31]])
    add(`ys.get(${ix.map((v) => (typeof v === 'symbol' ? 'symbol' : String(v))).join(', ')})`, at(...ix), 'OT_ERR_ARG', /^get: index \[.*\] is outside the shape \[1, 3, 3\]/);
  add('ts.get(0, 1) on a 1-D tensor', () => sol.ts.get(0, 1), 'OT_ERR_ARG', /^get: index \[0, 1, 0\] is outside the shape \[3\]/);
  return { cases, sol };
}

test('tables of bad input: each throws an OdeTensorError naming the argument', () => {
  const { cases, sol } = badInputCases();
  const failures = [];
  for (const [label, fn, status, re] of cases) {
    const before = ot.heapInUse();
    try {
      throwsOt(fn, status, re);
      if (ot.heapInUse() !== before) failures.push(`${label}: ${ot.heapInUse() - before} bytes not freed`);
    } catch (e) {
      failures.push(`${label}: ${e.message.split('\n')[0]}`);
    }
  }
  // The solution used for get() is intact, and after dispose() its data throws.
  try {
    assert.equal(sol.ys.get(0, 2, 1), sol.ys.data[2 + 3]);
    assert.equal(sol.ts.get(2), 2);
  } finally {
    sol.dispose();
  }
  assert.deepEqual(failures, []);
  assert.throws(() => sol.ys.get(0), (e) => e instanceof Error && /disposed/.test(e.message));
  assert.throws(() => sol.ys.data, /disposed/);
  console.log(`bad-input table: ${cases.length} cases`);
  assert.ok(cases.length > 500, `${cases.length} cases`);
  assertIntact('after the tables');
});

test('regressions: values that used to be converted silently or crash the wrapper', () => {
  // Element types: '2' and null were converted to 2 and 0 and solved.
  throwsOt(() => ot.solveDense({ ...decay, y0: ['2'] }), 'OT_ERR_DTYPE', /^y0\[0\]: '2'; expected a number/);
  throwsOt(() => ot.solveDense({ ...decay, y0: [null] }), 'OT_ERR_DTYPE', /^y0\[0\]: null; expected a number/);
  // Symbols, BigInts and null-prototype objects made TypeErrors from JS
  // itself, or the wrong message (the prototype's 'constructor' as a method).
  throwsOt(() => ot.solveDense({ ...decay, y0: [1n] }), 'OT_ERR_DTYPE', /^y0\[0\]: 1n/);
  throwsOt(() => ot.solveDense({ ...decay, y0: new BigInt64Array(1) }), 'OT_ERR_DTYPE', /^y0: a BigInt64Array/);
  throwsOt(() => ot.solveDense({ ...decay, nstates: Object.create(null) }), 'OT_ERR_ARG', /^nstates: an object/);
  throwsOt(() => ot.solveDense({ ...decay, options: { method: Symbol('m') } }), 'OT_ERR_ARG', /^options\.method: a symbol/);
  throwsOt(() => ot.solveDense({ ...decay, options: { method: 'constructor' } }), 'OT_ERR_ARG', /^options\.method: 'constructor'; expected 'bdf' or 'adams'/);
  // A length too large for wasm32 wrapped around in the byte count.
  throwsOt(() => ot.solveDense({ ...decay, tEval: lying(2 ** 29 + 1) }), 'OT_ERR_OVERFLOW', /^tEval: 536870913 values/);
  // params with nparams 0 were dropped without a word.
  throwsOt(() => ot.solveDense({ ...decay, nparams: 0 }), 'OT_ERR_SHAPE', /^params: 3 values, but nparams is 0/);
  const none = ot.solveDense({ ...decay, nparams: 0, params: [], rhs: (t, y, p, d) => { d[0] = -y[0]; } });
  assert.equal(none.ok, true);
  none.dispose();
  // Reading past the shape returned another lane's value.
  const sol = ot.solveDense(decay);
  assert.throws(() => sol.ys.get(0, 3, 0), OdeTensorError);
  sol.dispose();
  // statusName('x') answered 'OT_OK'.
  throwsOt(() => ot.statusName('x'), 'OT_ERR_ARG', /^statusName: 'x'/);
  assert.equal(ot.statusName(-3), 'OT_ERR_SHAPE');
  assert.equal(ot.statusName(12345), 'OT_UNKNOWN_STATUS');
  // A callback returning results (instead of writing them) solved dy/dt = 0.
  const ret = ot.solveDense({ ...decay, rhs: (t, y, p) => [-p[0] * y[0]] });
  assert.equal(ret.nfailed, 3);
  assert.match(ret.message[0], /^rhs threw TypeError: rhs returned an array of length 1; write the results into the output array in place/);
  ret.dispose();
  // A thrown null-prototype object made the wrapper itself throw a TypeError.
  const odd = ot.solveDense({ ...decay, rhs: () => { throw Object.create(null); } });
  assert.match(odd.message[0], /^rhs threw an object; rhs returned -1/);
  odd.dispose();
  assertIntact('after the regressions');
});

test('the C shim answers NULL and out-of-range arguments with a status, writing nothing', async () => {
  // index.mjs never passes these; the shim must not rely on it. In wasm,
  // address 0 is ordinary memory: a NULL dereference writes there silently.
  const m = await createOdeTensorModule();
  const low = () => Array.from(m.HEAP32.subarray(0, 64));
  const before = low(), inUse = m._otw_heap_in_use();
  const last = () => m.UTF8ToString(m._otw_last_error());
  const refused = (st, re, what) => {
    assert.equal(st, -1, what);
    assert.match(last(), re, what);
  };
  refused(m._otw_problem_new(0, 1, 1, 0, 0), /^ot_ode_new: out is NULL/, 'problem_new(NULL)');
  refused(m._otw_set_jac(0, 0), /^ot_ode_set_jac: ode is NULL/, 'set_jac');
  refused(m._otw_set_init(0, 0), /^ot_ode_set_init: ode is NULL/, 'set_init');
  refused(m._otw_set_out(0, 1, 0), /ode is NULL/, 'set_out');
  refused(m._otw_set_roots(0, 1, 0), /ode is NULL/, 'set_roots');
  refused(m._otw_set_method(0, 1), /^ot_ode_set_method: ode is NULL/, 'set_method');
  refused(m._otw_set_mode(0, 1), /^ot_ode_set_mode: ode is NULL/, 'set_mode');
  refused(m._otw_set_rtol(0, 1e-6), /^ot_ode_set_rtol: ode is NULL/, 'set_rtol');
  refused(m._otw_set_atol(0, 1e-6), /^ot_ode_set_atol: ode is NULL/, 'set_atol');
  refused(m._otw_set_atol_vector(0, 0), /^ot_ode_set_atol_vector: ode is NULL/, 'set_atol_vector');
  refused(m._otw_set_t0(0, 0), /^ot_ode_set_t0: ode is NULL/, 'set_t0');
  refused(m._otw_set_first_step(0, 0), /ode is NULL/, 'set_first_step');
  refused(m._otw_set_max_step(0, 0), /ode is NULL/, 'set_max_step');
  refused(m._otw_set_max_steps(0, 5), /ode is NULL/, 'set_max_steps');
  refused(m._otw_set_sens_tolerances(0, 0, 0), /ode is NULL/, 'set_sens_tolerances');
  const slot = m._otw_malloc(8), info = m._otw_malloc(32);
  refused(m._otw_solve_dense(slot, 0, 0, 0, 0, 0, 0, 0), /ode: NULL/, 'solve_dense(P NULL)');
  refused(m._otw_solve(slot, 0, 0, 0, 0, 0, 1), /ode: NULL/, 'solve(P NULL)');
  refused(m._otw_solve_fwd_sens(slot, 0, 0, 0, 0, 0, 0, 0), /ode: NULL/, 'solve_fwd_sens(P NULL)');
  // A real problem, with NULL out-parameters and arrays.
  const rhs = m.addFunction((t, y, p, dydt) => { m.HEAPF64[dydt >> 3] = -m.HEAPF64[y >> 3]; return 0; }, 'idiiiiii');
  assert.equal(m._otw_problem_new(slot, 1, 0, rhs, 0), 0);
  const P = m.HEAP32[slot >> 2];
  refused(m._otw_set_atol_vector(P, 0), /^view: data is NULL/, 'set_atol_vector(P, NULL)');
  refused(m._otw_set_out(P, -1, rhs), /nout/, 'set_out(P, -1, f)');
  refused(m._otw_set_roots(P, 0, rhs), /nroots/, 'set_roots(P, 0, f)');
  refused(m._otw_set_method(P, 7), /method/, 'set_method(P, 7)');
  refused(m._otw_set_mode(P, 0), /mode/, 'set_mode(P, 0)');
  const y0 = m._otw_malloc(8), ts = m._otw_malloc(16);
  m.HEAPF64[y0 >> 3] = 1;
  m.HEAPF64.set([0, 1], ts >> 3);
  refused(m._otw_solve_dense(0, P, y0, 1, 0, 0, ts, 2), /^out: NULL/, 'solve_dense(out NULL)');
  refused(m._otw_solve(0, P, y0, 1, 0, 0, 1), /^out: NULL/, 'solve(out NULL)');
  assert.equal(m._otw_solve_dense(slot, P, y0, 1, 0, 0, ts, 2), 0);
  const sol = m.HEAP32[slot >> 2];
  assert.equal(m._otw_tensor(sol, 1, 0), 0, 'tensor(info NULL)');
  assert.equal(m._otw_tensor(0, 1, info), 0, 'tensor(NULL)');
  assert.equal(m._otw_tensor(sol, 2, info), 0, 'no sens(0) in a dense solve');
  assert.equal(m._otw_tensor(sol, -5, info), 0, 'tensor(-5)');
  assert.equal(m._otw_lanes(sol, 0, 0, 0, 0, 0), 0, 'lanes(NULL arrays)');
  assert.equal(m._otw_lanes(0, info, info, info, info, info), 0, 'lanes(NULL)');
  assert.equal(m.UTF8ToString(m._otw_lane_message(sol, 7)), '');
  assert.equal(m.UTF8ToString(m._otw_lane_message(0, 0)), '');
  assert.equal(m._otw_solution_nbatch(0), 0);
  assert.equal(m._otw_malloc(-1), 0);
  assert.equal(m._otw_malloc(0), 0);
  m._otw_solution_free(sol);
  m._otw_solution_free(0);
  m._otw_problem_free(P);
  m._otw_problem_free(0);
  m.removeFunction(rhs);
  [slot, info, y0, ts].forEach((p) => m._otw_free(p));
  assert.deepEqual(low(), before, 'nothing written near address 0');
  assert.equal(m._otw_heap_in_use(), inUse, 'everything freed');
});

// ---- Callbacks that misbehave ---------------------------------------------

const fills = {
  rhs: decayRhs,
  jac: (t, y, p, J, k) => { for (let b = 0; b < k; b++) J[b] = -p[b]; },
  init: (p, y0, k) => { for (let b = 0; b < k; b++) y0[b] = 1; },
  out: (t, y, p, o, k) => { for (let b = 0; b < k; b++) o[b] = y[b]; },
  roots: (t, y, p, g, k) => { for (let b = 0; b < k; b++) g[b] = y[b] - 0.01; },
};
const outIndex = { rhs: 3, jac: 3, init: 1, out: 3, roots: 3 };
// [name, make(callback name) => callback, message pattern for the lane]
const misbehaviours = [
  ['throws an Error', () => () => { throw new RangeError('boom'); }, (cb) => `^${cb} threw RangeError: boom; `],
  ['throws a string', () => () => { throw 'plain'; }, (cb) => `^${cb} threw plain; `],
  ['throws undefined', () => () => { throw undefined; }, (cb) => `^${cb} threw undefined; `],
  ['throws a symbol', () => () => { throw Symbol('s'); }, (cb) => `^${cb} threw a symbol; `],
  ['throws a null-prototype object', () => () => { throw Object.create(null); }, (cb) => `^${cb} threw an object; `],
  ['returns NaN', () => () => NaN, (cb) => `^${cb} threw TypeError: ${cb} returned NaN`],
  ['returns a string', () => () => '0', (cb) => `^${cb} threw TypeError: ${cb} returned '0'`],
  ['returns true', () => () => true, (cb) => `^${cb} threw TypeError: ${cb} returned true`],
  ['returns a BigInt', () => () => 0n, (cb) => `^${cb} threw TypeError: ${cb} returned 0n`],
  ['returns its results', () => () => [1, 2], (cb) => `^${cb} threw TypeError: ${cb} returned an array of length 2`],
  ['returns a Promise', () => async () => 0, (cb) => `^${cb} threw TypeError: ${cb} returned a Promise`],
  ['returns -1', () => () => -1, (cb) => `${cb === 'roots' ? 'root' : cb} returned -1`],
  ['returns -Infinity', () => () => -Infinity, (cb) => `${cb === 'roots' ? 'root' : cb} returned -2147483647`],
  ['writes NaN', (cb) => (...a) => { fills[cb](...a); a[outIndex[cb]][0] = NaN; }, (cb) => `${cb === 'roots' ? 'root' : cb} wrote NaN or Inf`],
  ['writes -Infinity', (cb) => (...a) => { fills[cb](...a); a[outIndex[cb]][0] = -Infinity; }, (cb) => `${cb === 'roots' ? 'root' : cb} wrote NaN or Inf`],
  ['overflows the stack', () => function deep() { return deep() + 1; }, (cb) => `^${cb} threw RangeError: Maximum call stack size exceeded`],
];

test('misbehaving callbacks fail their lane (lanes) or the batch (lockstep), with the reason', () => {
  let n = 0;
  for (const mode of ['lanes', 'lockstep'])
    for (const cb of Object.keys(fills))
      for (const [what, make, pattern] of misbehaviours) {
        const spec = { ...decay, options: { mode } };
        if (cb === 'init') spec.y0 = undefined;
        if (cb === 'out') spec.nout = 1;
        if (cb === 'roots') spec.nroots = 1;
        // lanes: only lane 1 misbehaves; lockstep: the batch's one call does.
        const bad = make(cb);
        spec[cb] = (...a) => (mode === 'lockstep' || a[a.length - 1] === 1 ? bad(...a) : fills[cb](...a));
        const label = `${mode} ${cb} ${what}`;
        const e = caught(() => {
          const sol = ot.solveDense(spec);
          try {
            const failed = mode === 'lanes' ? [1] : [0, 1, 2];
            assert.deepEqual(Array.from(sol.statusCode, (c, b) => (c === 0 ? -1 : b)).filter((b) => b >= 0), failed, label);
            for (const b of failed) {
              assert.equal(sol.status[b], 'OT_ERR_CALLBACK', label);
              assert.match(sol.message[b], new RegExp(pattern(cb)), label);
              assert.ok(Number.isNaN(sol.ys.get(0, 2, b)), `${label}: NaN after the failure`);
            }
            if (mode === 'lanes') {
              // The other lanes are exactly those of a clean solve.
              const clean = ot.solveDense({ ...spec, [cb]: fills[cb] });
              for (const b of [0, 2]) for (let j = 0; j < 3; j++)
                assert.equal(sol.ys.get(0, j, b), clean.ys.get(0, j, b), label);
              clean.dispose();
            }
          } finally {
            sol.dispose();
          }
        });
        assert.equal(e, null, `${label}: ${e?.message}`);
        n++;
      }
  console.log(`callback faults: ${n} cases`);
  assertIntact('after the callback faults');
});

test('callbacks that write past their views or keep them change nothing else', () => {
  let kept = null;
  const sol = ot.solveDense({ ...decay, rhs: (t, y, p, dydt, k) => {
    decayRhs(t, y, p, dydt, k);
    dydt[1] = 1e300; dydt[-1] = 5; dydt[2 ** 40] = 7; y[3] = 9; p[1] = 0; // outside the views: dropped
    kept = dydt;
  } });
  const clean = ot.solveDense(decay);
  assert.ok(sameBits(sol.ys.toFloat64Array(), clean.ys.toFloat64Array()));
  // A kept view may be stale or detached: writing to it must not trap.
  kept[0] = 1;
  [sol, clean].forEach((s) => s.dispose());
  assertIntact('after out-of-view writes');
});

test('solves nested in callbacks: 64 levels, then a clean refusal', () => {
  let depth = 0, deepest = 0, refusal = null;
  const nest = () => {
    let first = true;
    return (t, y, p, dydt, k) => {
      if (first) {
        first = false;
        depth++;
        deepest = Math.max(deepest, depth);
        try {
          ot.solveDense({ ...decay, params: [1], tEval: [0, 0.01], rhs: nest() }).dispose();
        } catch (e) {
          refusal ??= e;
        } finally {
          depth--;
        }
      }
      decayRhs(t, y, p, dydt, k);
    };
  };
  const sol = ot.solveDense({ ...decay, rhs: nest() });
  assert.equal(sol.ok, true);
  sol.dispose();
  assert.equal(deepest, 64);
  assert.ok(refusal instanceof OdeTensorError);
  assert.match(refusal.message, /^solve: 64 solves already running/);
  assertIntact('after nesting');
});

test('solves started with the JS stack nearly full: an Error, never a trap or a leak', () => {
  const outcomes = new Map();
  const tally = (k) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
  // Recurses to depth `target`, solves there and hands what it threw back up
  // (checking it down there could overflow the stack again).
  function at(n, target) {
    if (n < target) return at(n + 1, target);
    try {
      ot.solveDense(decay).dispose();
      return null;
    } catch (e) {
      return { e };
    }
  }
  const outcome = (res) => {
    if (res === null) return 'ok';
    const e = caught(() => { throw res.e; });
    return `${e.name}${e.status ? ` ${e.status}` : ''}`;
  };
  // The deepest recursion that still returns (searched three times: frames
  // shrink as the JIT warms up), then every depth near it.
  let limit = 0;
  for (let round = 0; round < 3; round++) {
    limit = 0;
    for (let step = 1 << 15; step >= 1; step >>= 1) {
      try { outcome(at(0, limit + step)); limit += step; } catch { /* too deep */ }
    }
  }
  for (let t = Math.max(0, limit - 600); t <= limit + 100; t++) {
    let res;
    try { res = at(0, t); } catch (e) {
      assert.ok(e instanceof RangeError, String(e)); // the recursion itself overflowed
      tally('recursion overflowed');
      continue;
    }
    tally(outcome(res));
  }
  console.log(`near the stack limit (${limit} frames):`, Object.fromEntries(outcomes));
  assert.ok(outcomes.get('ok') > 0);
  assert.ok(outcomes.get('recursion overflowed') > 0, 'the scan reached the limit');
  assert.ok(outcomes.size >= 3, 'the scan saw solves refused near the limit');
  assertIntact('after the stack-limit scan');
});

// ---- Random argument sets -------------------------------------------------

// A 32-bit generator: a Weyl sequence through a murmur3-style mixer.
function rng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  const r = {
    u32: next,
    float: () => next() / 2 ** 32,
    int: (lo, hi) => lo + Math.floor((next() / 2 ** 32) * (hi - lo + 1)),
    chance: (p) => next() / 2 ** 32 < p,
    pick: (xs) => xs[Math.floor((next() / 2 ** 32) * xs.length)],
  };
  return r;
}

const junk = [undefined, null, NaN, Infinity, -Infinity, -1, 0, -0, 0.5, 1.5, 2 ** 31, 2 ** 53, 1e300, -1e-300,
  '1', '', 'bdf', {}, [], [1], [NaN], true, false, 1n, Symbol('j'), () => 0, Object.create(null),
  new Float64Array(0), new Float32Array(2), new Int8Array(3), new BigInt64Array(1),
  new DataView(new ArrayBuffer(8)), new ArrayBuffer(8)];

// A model: n states, np parameters, y' = -p0 * y (+ coupling) for every lane.
function model(r) {
  switch (r.int(0, 3)) {
  case 0: return { n: 1, np: 1, rhs: decayRhs, p: () => r.float() * 3 };
  case 1: return { n: 2, np: 4, rhs: lotkaVolterraRhs, p: (i) => [1.5, 1, 1, 3][i % 4] * (0.8 + 0.4 * r.float()) };
  case 2: return { n: 3, np: 3, rhs: robertsonRhs, jac: robertsonJac, p: (i) => [0.04, 1e4, 3e7][i % 3] };
  default: {
    const n = r.int(1, 4), np = r.int(0, 2);
    return { n, np, p: () => r.float(), rhs: (t, y, p, d, k) => {
      for (let b = 0; b < k; b++) for (let i = 0; i < n; i++) d[n * b + i] = -(1 + (np ? p[np * b] : 0)) * y[n * b + i];
    } };
  }
  }
}

// An input array of `len` values: mostly valid, sometimes of the wrong kind.
function numbers(r, len, value) {
  const v = Array.from({ length: len }, (_, i) => value(i));
  switch (r.int(0, 30)) {
  case 0: return new Float32Array(v);
  case 1: return Float64Array.from(v);
  case 2: v[r.int(0, Math.max(0, len - 1))] = r.pick([NaN, Infinity, -Infinity, '1', null, undefined, 1n]); return v;
  case 3: return v.slice(0, Math.max(0, len - r.int(1, 2))); // too short
  case 4: return [...v, r.float()]; // too long
  case 5: return r.pick(junk);
  default: return v;
  }
}

const nestedProblems = [];

// A callback that behaves, or misbehaves in one of many ways at a random
// lane and time; `write` does the correct work.
function callback(r, name, write) {
  if (r.chance(0.8)) return write;
  const lane = r.int(0, 3), after = r.pick([0, 0.1, 1, Infinity]);
  const act = r.int(0, 9);
  return (...a) => {
    const t = name === 'init' ? 0 : a[0], l = a[a.length - 1];
    write(...a);
    if (l !== lane && l !== 0) return undefined;
    if (t < after) return undefined;
    switch (act) {
    case 0: throw new Error(`${name} fuzz`);
    case 1: throw r.pick(['str', 7, null, undefined, Symbol('x')]);
    case 2: return r.pick([NaN, '0', true, [0], {}, 1n]);
    case 3: return r.pick([-1, 1, -Infinity, Infinity, 0.5, -0.5]);
    case 4: a[name === 'init' ? 1 : 3][0] = r.pick([NaN, Infinity, -Infinity]); return undefined;
    case 5: a[name === 'init' ? 1 : 3][r.int(0, 50)] = 1e300; return undefined; // maybe past the view
    case 6: { // a nested solve, good or bad; what it throws is checked after the set
      try {
        ot.solveDense(r.chance(0.5) ? decay : { ...decay, tEval: [1, 0] }).dispose();
        return 0;
      } catch (e) {
        if (!(e instanceof OdeTensorError) || e.status !== 'OT_ERR_VALUE') nestedProblems.push(e);
        return -1;
      }
    }
    case 7: return (async () => 0)();
    default: return undefined;
    }
  };
}

// One random call: its kind and arguments, and what a valid result must show.
function randomCall(r) {
  const kind = r.pick(['dense', 'dense', 'dense', 'steps', 'sens']);
  const M = model(r);
  const nb = r.pick([1, 1, 2, 3, 4]);
  const spec = { nstates: M.n, nparams: M.np, rhs: M.rhs };
  if (M.jac && r.chance(0.7)) spec.jac = M.jac;
  const laneY0 = r.chance(0.5) ? nb : 1;
  const laneP = laneY0 === nb && r.chance(0.5) ? 1 : nb;
  if (r.chance(0.1)) {
    spec.init = callback(r, 'init', (p, y0, k) => { for (let i = 0; i < M.n * k; i++) y0[i] = 1 + (i % 3); });
    if (r.chance(0.2)) spec.y0 = numbers(r, M.n * laneY0, () => 1);
  } else {
    spec.y0 = numbers(r, M.n * laneY0, (i) => (M.rhs === robertsonRhs ? [1, 0, 0][i % 3] : 1 + r.float() * 5));
  }
  if (M.np > 0 || r.chance(0.05)) spec.params = numbers(r, M.np * laneP, M.p);
  spec.rhs = callback(r, 'rhs', M.rhs);
  if (spec.jac) spec.jac = callback(r, 'jac', spec.jac);
  if (r.chance(0.15)) {
    spec.out = callback(r, 'out', (t, y, p, o, k) => { for (let b = 0; b < k; b++) { o[2 * b] = y[M.n * b]; o[2 * b + 1] = t; } });
    spec.nout = r.chance(0.9) ? 2 : r.pick(junk);
  }
  if (r.chance(0.15)) {
    spec.roots = callback(r, 'roots', (t, y, p, g, k) => { for (let b = 0; b < k; b++) g[b] = y[M.n * b] - 0.5; });
    spec.nroots = r.chance(0.9) ? 1 : r.pick(junk);
  }
  let nt = 0;
  if (kind === 'steps') {
    spec.finalTime = r.chance(0.9) ? r.pick([0.5, 1, 2]) : r.pick([...junk, 0, -1, 1e300]);
  } else {
    nt = r.int(1, 6);
    const ts = Array.from({ length: nt }, (_, i) => i * r.pick([0.1, 0.5, 1]));
    if (r.chance(0.05)) ts[r.int(0, nt - 1)] = r.pick([NaN, Infinity, -1, 1e300, 5e-324]);
    if (r.chance(0.03)) ts.reverse();
    spec.tEval = r.chance(0.95) ? numbers(r, nt, (i) => ts[i]) : r.pick(junk);
  }
  if (r.chance(0.6)) {
    const o = {};
    if (r.chance(0.4)) o.rtol = r.chance(0.9) ? r.pick([1e-4, 1e-6, 1e-8]) : r.pick(junk);
    if (r.chance(0.3)) o.atol = r.chance(0.5) ? r.pick([1e-6, 1e-10]) : numbers(r, M.n, () => 1e-8);
    if (r.chance(0.3)) o.method = r.chance(0.9) ? r.pick(['bdf', 'adams']) : r.pick([...junk, 'rk4', 'constructor']);
    if (r.chance(0.4)) o.mode = r.chance(0.9) ? r.pick(['lanes', 'lockstep']) : r.pick([...junk, '__proto__']);
    if (r.chance(0.1)) o.t0 = r.chance(0.8) ? r.pick([0, -0.5]) : r.pick(junk);
    if (r.chance(0.1)) o.firstStep = r.chance(0.8) ? r.pick([0, 1e-4]) : r.pick(junk);
    if (r.chance(0.1)) o.maxStep = r.chance(0.8) ? r.pick([0, 0.5]) : r.pick(junk);
    if (r.chance(0.15)) o.maxSteps = r.chance(0.7) ? r.pick([3, 10, 500]) : r.pick(junk);
    if (r.chance(0.1)) o.sensRtol = r.chance(0.8) ? 1e-6 : r.pick(junk);
    if (r.chance(0.1)) o.sensAtol = r.chance(0.8) ? 1e-8 : r.pick(junk);
    if (r.chance(0.03)) o[r.pick(['rtoll', 'Method', '0'])] = 1;
    spec.options = r.chance(0.97) ? o : r.pick(junk);
  }
  // Now and then, break one field outright.
  if (r.chance(0.1)) {
    const field = r.pick(['nstates', 'nparams', 'rhs', 'jac', 'init', 'y0', 'params', 'tEval', 'finalTime', 'nout', 'nroots', 'out', 'roots']);
    spec[field] = r.pick(junk);
  }
  if (r.chance(0.02)) spec[r.pick(['tEvals', 'nstate', 'param'])] = 1;
  return { kind, spec };
}

// A result that came back: shapes consistent with the arguments, per-lane
// fields consistent with each other, times as asked.
function checkResult(call, sol) {
  const { kind, spec } = call;
  // The arguments were accepted, so they are well-formed: read the sizes off them.
  const n = spec.nstates, np = spec.nparams ?? 0;
  const rows = spec.out !== undefined && spec.out !== null ? spec.nout : n;
  const cols = (x, r) => (x === undefined || x === null || r === 0 ? 1 : x.length / r);
  const nb = sol.nbatch;
  assert.equal(nb, Math.max(cols(spec.y0, n), cols(spec.params, np)), 'nbatch');
  const nt = kind === 'steps' ? 0 : spec.tEval.length;
  for (const key of ['statusCode', 'count', 'rootIndex', 'rootTime', 'status', 'message', 'errors', 'stats'])
    assert.equal(sol[key].length, nb, key);
  assert.equal(sol.nfailed, sol.statusCode.filter((c) => c !== 0).length);
  assert.equal(sol.ok, sol.nfailed === 0);
  sol.statusCode.forEach((c, b) => {
    assert.equal(sol.status[b], ot.statusName(c));
    assert.equal(sol.message[b] === '', c === 0, `lane ${b}: message iff failed`);
  });
  const { ys, ts } = sol;
  assert.equal(ys.size, ys.data.length);
  if (kind === 'steps') {
    const ntMax = ts.shape[0];
    assert.deepEqual(ts.shape, [ntMax, nb]);
    assert.deepEqual(ys.shape, [rows, ntMax, nb]);
    for (let b = 0; b < nb; b++) {
      assert.ok(sol.count[b] >= 0 && sol.count[b] <= ntMax);
      for (let j = 1; j < sol.count[b]; j++) assert.ok(ts.get(j, b) > ts.get(j - 1, b), 'steps increase');
      for (let j = sol.count[b]; j < ntMax; j++) assert.ok(Number.isNaN(ts.get(j, b)), 'NaN past count');
    }
  } else {
    assert.deepEqual(ts.shape, [nt]);
    assert.deepEqual(ys.shape, [rows, nt, nb]);
    assert.deepEqual(Array.from(ts.data), Array.from(spec.tEval, Number));
    for (let b = 0; b < nb; b++) {
      assert.ok(sol.count[b] >= 0 && sol.count[b] <= nt);
      if (sol.statusCode[b] === 0 && sol.rootIndex[b] < 0) assert.equal(sol.count[b], nt, 'a good lane has every time');
      for (let j = sol.count[b]; j < nt; j++) assert.ok(Number.isNaN(ys.get(0, j, b)), 'NaN after the last good time');
      for (let j = 0; j < sol.count[b]; j++)
        for (let i = 0; i < rows; i++) assert.ok(Number.isFinite(ys.get(i, j, b)), 'finite before it');
    }
  }
  assert.equal(sol.sens.length, kind === 'sens' ? np : 0);
  for (const s of sol.sens) assert.deepEqual(s.shape, ys.shape);
}

test(`${RUNS} random argument sets (seed ${SEED}): a result or an Error, never a trap`, () => {
  const r = rng(SEED);
  const tally = { results: 0, lanesFailed: 0, thrown: 0, byStatus: {} };
  const size0 = ot.heapSize();
  const t0 = performance.now();
  for (let i = 1; i <= RUNS; i++) {
    const call = randomCall(r);
    let sol = null;
    const e = caught(() => {
      sol = call.kind === 'steps' ? ot.solve(call.spec)
        : call.kind === 'sens' ? ot.solveFwdSens(call.spec) : ot.solveDense(call.spec);
    });
    if (e === null) {
      try {
        checkResult(call, sol);
      } catch (err) {
        err.message = `set ${i} (seed ${SEED}): ${err.message}`;
        throw err;
      } finally {
        sol.dispose();
      }
      tally.results++;
      if (!sol.ok) tally.lanesFailed++;
    } else {
      tally.thrown++;
      const key = e instanceof OdeTensorError ? e.status : e.name;
      tally.byStatus[key] = (tally.byStatus[key] ?? 0) + 1;
      // The library's message names the argument: 'y0: ...', 'options.rtol: ...'.
      if (e instanceof OdeTensorError)
        assert.match(e.message, /^([A-Za-z_][\w.]*(\[\d+\])?: |\w+ threw )/, `set ${i}: ${e.message}`);
    }
    assert.deepEqual(nestedProblems, [], `set ${i}: a nested solve threw something odd`);
    if (i % 1000 === 0) assertIntact(`after ${i} random sets (seed ${SEED})`);
  }
  const ms = performance.now() - t0;
  assertIntact(`after ${RUNS} random sets (seed ${SEED})`);
  assert.ok(ot.heapSize() <= Math.max(size0, 64 << 20), `wasm memory grew to ${ot.heapSize()} bytes`);
  assert.ok(tally.results > RUNS / 10 && tally.thrown > RUNS / 10, JSON.stringify(tally));
  console.log(`fuzz: ${RUNS} sets, seed ${SEED}, ${ms.toFixed(0)} ms: ${JSON.stringify(tally)}; heap ${ot.heapSize()} bytes, ${ot.heapInUse()} in use`);
});

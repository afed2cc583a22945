// JS hardening (issue 6, item 7), bad input: tables of bad arguments for
// every entry point and field, regressions for values that used to be
// converted silently or crash the wrapper, and the C shim's answers to NULL
// and out-of-range arguments.
//
//   node --test test/fuzz_inputs.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OdeTensorError } from '../index.mjs';
import { METHODS } from '../constants.mjs';
import createOdeTensorModule from '../dist/odetensor.mjs';
import { ot, throwsOt, rates, decay, lv, assertIntact } from './fuzz_common.mjs';

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
    // Only Float64Array and Float32Array among typed arrays (issue 13, item
    // 17: integer ones were read as f64 without a word).
    for (const T of [BigInt64Array, BigUint64Array, Int8Array, Uint8Array, Uint8ClampedArray, Int16Array,
      Uint16Array, Int32Array, Uint32Array])
      add(`${field} ${T.name}`, make(new T(field === 'tEval' ? 2 : 1)), 'OT_ERR_DTYPE',
        new RegExp(`^${esc}: a ${T.name}; expected a Float64Array, Float32Array or array of numbers \\(integer typed arrays are refused`));
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
    add(`params ${name} for every lane`, dense({ params: [v] }), 'OT_ERR_VALUE', /^params: \[0, 0\] is -?(nan|inf); values must be finite/);
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
  const pastLast = Math.max(...Object.values(METHODS)) + 1;
  refused(m._otw_set_method(P, pastLast), /method/, `set_method(P, ${pastLast})`);
  refused(m._otw_set_rhs_explicit(0, 0), /^ot_ode_set_rhs_explicit: ode is NULL/, 'set_rhs_explicit');
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

test('a lane whose own params are not finite fails alone, in both modes', () => {
  for (const mode of ['lanes', 'lockstep'])
    for (const v of [NaN, Infinity, -Infinity]) {
      const params = [0.5, v, 1.5];
      const sol = ot.solveDense({ ...decay, params, options: { mode } });
      const clean = ot.solveDense({ ...decay, params: [0.5, 1.5], options: { mode } });
      try {
        assert.equal(sol.status[1], 'OT_ERR_VALUE', mode);
        assert.match(sol.message[1], /^params: \[0, 1\] is -?(nan|inf); values must be finite/);
        assert.ok(Number.isNaN(sol.ys.get(0, 0, 1)));
        for (const [b, r] of [[0, 0], [2, 1]]) {
          assert.equal(sol.status[b], 'OT_OK', `${mode} lane ${b}`);
          for (let j = 0; j < 3; j++) assert.equal(sol.ys.get(0, j, b), clean.ys.get(0, j, r), `${mode} lane ${b}`);
        }
      } finally {
        sol.dispose();
        clean.dispose();
      }
    }
  assertIntact('after non-finite params');
});

// Shared by the JS hardening tests (issue 6, item 7): fuzz_inputs,
// fuzz_callbacks and fuzz_random. Each test file runs in its own process
// with its own fresh module, so its heap figures are its own. Every outcome
// of a fuzzed call must be a valid result or a thrown Error (an
// OdeTensorError carrying the library's message that names the argument),
// never a trap of the wasm module and never a non-Error throw; and the
// module must stay intact: assertIntact() checks that the reference solves
// give the same bits as before, and that the wasm heap and stack are as
// they were.
import assert from 'node:assert/strict';
import { load, OdeTensorError } from '../index.mjs';
import { decayRhs, lotkaVolterraRhs, robertsonRhs, robertsonJac } from './models.mjs';

export const ot = await load({ fresh: true }); // its own memory: heap figures are ours alone
export const SEED = process.env.FUZZ_SEED === undefined ? 20240601 : Number(process.env.FUZZ_SEED) >>> 0;
export const RUNS = process.env.FUZZ_RUNS === undefined ? 10000 : Number(process.env.FUZZ_RUNS);
const STATUS = new Set(['OT_ERR_ARG', 'OT_ERR_LAYOUT', 'OT_ERR_SHAPE', 'OT_ERR_DTYPE', 'OT_ERR_DEVICE',
  'OT_ERR_OVERFLOW', 'OT_ERR_NOMEM', 'OT_ERR_SOLVER', 'OT_ERR_CALLBACK', 'OT_ERR_VALUE']);

// ---- Helpers --------------------------------------------------------------

// What a trapped or corrupted module throws; none of it may ever appear.
const TRAP = /unreachable|memory access out of bounds|table index is out of bounds|null function|function signature mismatch|integer overflow|divide by zero|invalid conversion|Aborted|RuntimeError/;

// The error a call threw, checked to be a well-formed Error and never a trap.
export function caught(fn) {
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
export function throwsOt(fn, status, re) {
  const e = caught(fn);
  assert.ok(e instanceof OdeTensorError, `expected an OdeTensorError, got ${e ? `${e.name}: ${e.message}` : 'no throw'}`);
  if (Array.isArray(status)) assert.ok(status.includes(e.status), `${e.status}: ${e.message}`);
  else assert.equal(e.status, status, e.message);
  assert.match(e.message, re);
  return e;
}

// Bitwise equality of two Float64Arrays (NaN payloads included).
export function sameBits(a, b) {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length * 2);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length * 2);
  return x.every((v, i) => v === y[i]);
}

export const rates = [0.5, 1, 2];
export const decay = { nstates: 1, nparams: 1, rhs: decayRhs, y0: [1], params: rates, tEval: [0, 1, 2] };
const robertson = {
  nstates: 3, nparams: 3, rhs: robertsonRhs, jac: robertsonJac, y0: [1, 0, 0],
  params: [0.04, 1e4, 3e7, 0.05, 1e4, 3e7], tEval: [0, 1, 10, 100],
  options: { rtol: 1e-6, atol: [1e-8, 1e-14, 1e-6] },
};
export const lv = {
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

export function assertIntact(what) {
  const now = reference();
  assert.equal(now.length, REF.length);
  now.forEach((a, i) => assert.ok(sameBits(a, REF[i]), `${what}: reference tensor ${i} changed`));
  assert.equal(ot.stackInUse(), 0, `${what}: wasm stack in use`);
  assert.equal(ot.heapInUse(), BASE_IN_USE, `${what}: bytes allocated in wasm memory`);
}

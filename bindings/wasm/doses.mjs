// Event tables for index.mjs: NONMEM-style records (CSV text or columns)
// into wasm memory, their contents read back, the dosing plan, and the
// dosing model's parameter indices, for solveDoses* (the C layer is
// dosing.h; the shim is src/shim_doses.c).
import { INT_MAX, show } from './callbacks.mjs';
import { STATUS } from './constants.mjs';

const { OT_ERR_ARG, OT_ERR_NOMEM } = STATUS;
// ot_dose_model's fields as JS names.
const DOSING_KEYS = ['f', 'lag', 'rate', 'duration', 'postDose', 'ssTol', 'ssMaxIter', 'ssInterval'];
// The columns with a meaning (dosing.h); every other is a covariate.
const STANDARD = ['ID', 'TIME', 'EVID', 'AMT', 'RATE', 'DUR', 'CMT', 'II', 'ADDL', 'SS', 'DV', 'MDV'];

// Bytes in wasm memory, freed by `held`.
function bytesIn(m, bytes, err, held, name) {
  const ptr = m._otw_malloc(Math.max(bytes.length, 1));
  if (ptr === 0) throw err(OT_ERR_NOMEM, `${name}: cannot allocate ${bytes.length} bytes in wasm memory`);
  held.push(() => m._otw_free(ptr));
  m.HEAPU8.set(bytes, ptr);
  return ptr;
}

/** Records in wasm memory from CSV text (a string) or columns ({ NAME:
 * array of numbers, NaN for missing }); freed by `held`. check(st) throws
 * the library's message. */
export function recordsIn(m, input, err, check, held, slot) {
  if (typeof input === 'string') {
    const bytes = new TextEncoder().encode(input);
    const ptr = bytesIn(m, bytes, err, held, 'records');
    check(m._otw_records_csv(slot, ptr, bytes.length));
  } else if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const names = Object.keys(input);
    if (names.length === 0) throw err(OT_ERR_ARG, 'records: an object with no columns; expected { ID: [...], TIME: [...], ... }');
    const nrows = input[names[0]]?.length;
    const namePtrs = new Int32Array(names.length), colPtrs = new Int32Array(names.length);
    names.forEach((name, j) => {
      const col = input[name];
      if (!(Array.isArray(col) || col instanceof Float64Array || col instanceof Float32Array))
        throw err(OT_ERR_ARG, `records.${name}: ${show(col)}; expected an array of numbers`);
      if (col.length !== nrows)
        throw err(OT_ERR_ARG, `records.${name}: ${col.length} values; every column needs ${nrows} (as ${names[0]})`);
      const v = new Float64Array(nrows);
      for (let i = 0; i < nrows; i++) {
        if (typeof col[i] !== 'number') throw err(OT_ERR_ARG, `records.${name}[${i}]: ${show(col[i])}; expected a number (NaN for missing)`);
        v[i] = col[i];
      }
      namePtrs[j] = bytesIn(m, new TextEncoder().encode(`${name}\0`), err, held, 'records');
      colPtrs[j] = bytesIn(m, new Uint8Array(v.buffer), err, held, `records.${name}`);
    });
    const np = bytesIn(m, new Uint8Array(namePtrs.buffer), err, held, 'records');
    const cp = bytesIn(m, new Uint8Array(colPtrs.buffer), err, held, 'records');
    check(m._otw_records_columns(slot, nrows, names.length, np, cp));
  } else {
    throw err(OT_ERR_ARG, `records: ${show(input)}; expected CSV text or an object of columns { ID: [...], TIME: [...], ... }`);
  }
  const R = m.HEAP32[slot >> 2];
  held.push(() => m._otw_records_free(R));
  return R;
}

/** What the records hold, copied out: rows, columns (Float64Array each),
 * subjects [{ id, firstRow, rows }] and covariates (per subject, the
 * value on its first row where present; a column missing for a whole
 * subject has none, and covariate(name) throws why). */
export function recordsOut(m, R, err) {
  const rows = m._otw_records_rows(R), ncols = m._otw_records_ncols(R);
  const columns = {};
  for (let j = 0; j < ncols; j++) {
    const name = m.UTF8ToString(m._otw_records_column_name(R, j));
    const ptr = m._otw_records_column(R, j);
    columns[name] = Float64Array.from(m.HEAPF64.subarray(ptr >> 3, (ptr >> 3) + rows));
  }
  const ns = m._otw_records_subjects(R);
  const buf = m._otw_malloc(Math.max(24, 8 * ns));
  if (buf === 0) throw err(OT_ERR_NOMEM, 'records: cannot allocate the subjects\' table');
  try {
    const subjects = [];
    for (let s = 0; s < ns; s++) {
      m._otw_records_subject(R, s, buf);
      const v = m.HEAPF64.subarray(buf >> 3, (buf >> 3) + 3);
      subjects.push({ id: v[0], firstRow: v[1], rows: v[2] });
    }
    const covariates = {}, why = {};
    for (const name of Object.keys(columns)) {
      if (STANDARD.includes(name.toUpperCase())) continue;
      const bytes = new TextEncoder().encode(`${name}\0`), held = [];
      try {
        const np = bytesIn(m, bytes, err, held, 'records');
        if (m._otw_records_covariate(R, np, buf) === 0)
          covariates[name] = Float64Array.from(m.HEAPF64.subarray(buf >> 3, (buf >> 3) + ns));
        else why[name] = m.UTF8ToString(m._otw_last_error());
      } finally {
        for (const f of held) f();
      }
    }
    const covariate = (name) => {
      if (Object.hasOwn(covariates, name)) return covariates[name];
      throw err(OT_ERR_ARG, why[name] ?? `covariate: ${show(name)} is no covariate column (columns: ${Object.keys(columns).join(', ')})`);
    };
    return { rows, columns, subjects, covariates, covariate };
  } finally {
    m._otw_free(buf);
  }
}

/** The plan of R for spec.compartments (and spec.cmtState: each
 * compartment's 0-based state), freed by `held`: [plan, ncmt, nobs]. */
export function planIn(m, R, spec, n, err, check, held, slot) {
  const ncmt = spec.compartments ?? n;
  if (!Number.isInteger(ncmt) || ncmt < 1 || ncmt > INT_MAX)
    throw err(OT_ERR_ARG, `compartments: ${show(ncmt)}; expected an integer >= 1`);
  let cp = 0;
  if (spec.cmtState !== undefined && spec.cmtState !== null) {
    const c = spec.cmtState;
    if (!Array.isArray(c) || c.length !== ncmt || !c.every((x) => Number.isInteger(x)))
      throw err(OT_ERR_ARG, `cmtState: ${show(c)}; expected ${ncmt} integer state indices (one per compartment)`);
    cp = bytesIn(m, new Uint8Array(Int32Array.from(c).buffer), err, held, 'cmtState');
  }
  check(m._otw_dose_plan_new(slot, R, ncmt, cp));
  const plan = m.HEAP32[slot >> 2];
  held.push(() => m._otw_dose_plan_free(plan));
  return [plan, ncmt, m._otw_dose_plan_nobs(plan)];
}

/** spec.dosing's fields for otw_solve_doses: parameter-index arrays
 * (pointers, 0 for none), then postDose, ssTol, ssMaxIter, ssInterval. */
export function dosingIn(m, dosing, ncmt, err, held) {
  const d = dosing ?? {};
  if (d === null || typeof d !== 'object' || Array.isArray(d))
    throw err(OT_ERR_ARG, `dosing: ${show(dosing)}; expected an object { ${DOSING_KEYS.join(', ')} }`);
  for (const key of Object.keys(d))
    if (!DOSING_KEYS.includes(key))
      throw err(OT_ERR_ARG, `dosing: unknown field '${key}' (known: ${DOSING_KEYS.join(', ')})`);
  const index = (key) => {
    const v = d[key];
    if (v === undefined || v === null) return 0;
    if (!Array.isArray(v) || v.length !== ncmt || !v.every((x) => Number.isInteger(x)))
      throw err(OT_ERR_ARG, `dosing.${key}: ${show(v)}; expected ${ncmt} parameter indices (one per compartment, -1 for none)`);
    return bytesIn(m, new Uint8Array(Int32Array.from(v).buffer), err, held, `dosing.${key}`);
  };
  const num = (key, int) => {
    const v = d[key] ?? 0;
    if (typeof v !== 'number' || (int && !Number.isInteger(v)))
      throw err(OT_ERR_ARG, `dosing.${key}: ${show(v)}; expected ${int ? 'an integer' : 'a number'} (0: the default)`);
    return v;
  };
  if (d.postDose !== undefined && typeof d.postDose !== 'boolean')
    throw err(OT_ERR_ARG, `dosing.postDose: ${show(d.postDose)}; expected true or false`);
  return [index('f'), index('lag'), index('rate'), index('duration'), d.postDose ? 1 : 0,
    num('ssTol', false), num('ssMaxIter', true), num('ssInterval', false)];
}

// Event tables from JS (issue 26): readRecords, solveDoses,
// solveDosesFwdSens and solveDosesAdjoint against the one-compartment oral
// model's closed form (with F, ALAG and a RATE infusion), a steady state's
// geometric series, CSV and columns alike, both modes; what is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../index.mjs';

const ot = await load();
const tight = { rtol: 1e-10, atol: 1e-10 };
const np = 5; // [ka, CL, V, F, ALAG]

// Subject 1: oral 100 at 0 and (ADDL) 12, observations including the
// lagged dose's time 12.5 (pre-dose); subject 2: oral 80 at 0, then an IV
// infusion of 60 at RATE 20 into the central at 6 (no lag there).
const CSV = `ID,TIME,EVID,AMT,RATE,CMT,II,ADDL,WT
1,0,1,100,.,1,12,1,70
1,1,0,.,.,2,.,.,.
1,6,0,.,.,2,.,.,.
1,12.5,0,.,.,2,.,.,.
1,20,0,.,.,2,.,.,.
2,0,1,80,.,1,.,.,55
2,2,0,.,.,2,.,.,.
2,6,1,60,20,2,.,.,.
2,7,0,.,.,2,.,.,.
2,12,0,.,.,2,.,.,.
`;
const tOf = [[1, 6, 12.5, 20], [2, 7, 12]];
const params = [1.2, 3, 30, 0.7, 0.5, 0.8, 2, 25, 0.9, 0.25];
const lane = (b) => params.slice(np * b, np * b + np);

// Amounts [gut, central] at t: Bateman terms for the oral doses (F AMT at
// t_d + lag; pre-dose at the arrival) and, subject 2, the infusion's.
function closed(b, t, [ka, CL, V, F, lag]) {
  const ke = CL / V, oral = b === 0 ? [[0, 100], [12, 100]] : [[0, 80]];
  let g = 0, c = 0;
  for (const [td, amt] of oral) {
    const s = t - td - lag;
    if (s <= 0) continue;
    g += F * amt * Math.exp(-ka * s);
    c += F * amt * ka / (ka - ke) * (Math.exp(-ke * s) - Math.exp(-ka * s));
  }
  if (b === 1 && t > 6) { // 20 per hour from 6 to 9
    const on = Math.min(t, 9) - 6;
    c += 20 / ke * (1 - Math.exp(-ke * on)) * Math.exp(-ke * (t - 6 - on));
  }
  return [g, c];
}

const problem = (mode) => ({
  nstates: 2, nparams: np,
  rhs(t, y, p, d, k) {
    for (let b = 0; b < k; b++) {
      d[2 * b] = -p[np * b] * y[2 * b];
      d[2 * b + 1] = p[np * b] * y[2 * b] - p[np * b + 1] / p[np * b + 2] * y[2 * b + 1];
    }
  },
  records: CSV, compartments: 2,
  dosing: { f: [3, -1], lag: [4, -1] },
  y0: [0, 0], params, options: { ...tight, mode },
});

const near = (got, want, rel, what) =>
  assert.ok(Math.abs(got - want) <= rel * Math.max(Math.abs(want), 1e-2), `${what}: ${got}, expected ${want}`);

test('readRecords gives the columns, the subjects and covariates, and names a bad row', () => {
  const r = ot.readRecords(CSV);
  assert.equal(r.rows, 10);
  assert.deepEqual(r.subjects.map((s) => [s.id, s.firstRow, s.rows]), [[1, 1, 5], [2, 6, 5]]);
  assert.deepEqual([...r.covariate('WT')], [70, 55]);
  assert.ok(Number.isNaN(r.columns.AMT[1]));
  assert.throws(() => r.covariate('HT'), /no covariate column/);
  assert.throws(() => ot.readRecords('ID,TIME,AMT\n1,0,-5\n'),
    (e) => e.status === 'OT_ERR_VALUE' && /row 1 \(ID 1\), AMT: -5 is negative/.test(e.message));
});

test('solveDoses matches the closed form with F, ALAG, an infusion and a pre-dose observation, both modes', () => {
  for (const mode of ['lanes', 'lockstep']) {
    const sol = ot.solveDoses(problem(mode));
    assert.deepEqual(sol.ys.shape, [2, 4, 2]);
    for (let b = 0; b < 2; b++)
      tOf[b].forEach((t, j) => {
        assert.equal(sol.ts.data[b * 4 + j], t);
        const want = closed(b, t, lane(b));
        for (let i = 0; i < 2; i++) near(sol.ys.data[(b * 4 + j) * 2 + i], want[i], 1e-7, `${mode} lane ${b} t ${t} state ${i}`);
      });
    assert.ok(Number.isNaN(sol.ts.data[7])); // subject 2 has 3 observations
    sol.dispose();
  }
});

test('the kernel methods (rodas4, rodas5p) solve the same doses to the closed form', () => {
  for (const method of ['rodas4', 'rodas5p']) {
    const pr = problem('lanes');
    const sol = ot.solveDoses({ ...pr, options: { ...pr.options, method } });
    for (let b = 0; b < 2; b++)
      tOf[b].forEach((t, j) => {
        const want = closed(b, t, lane(b));
        for (let i = 0; i < 2; i++) near(sol.ys.data[(b * 4 + j) * 2 + i], want[i], 1e-7, `${method} lane ${b} t ${t} state ${i}`);
      });
    sol.dispose();
  }
});

test('records as columns solve the same as the CSV', () => {
  const r = ot.readRecords(CSV);
  const a = ot.solveDoses(problem('lanes'));
  const b = ot.solveDoses({ ...problem('lanes'), records: r.columns });
  assert.deepEqual([...b.ys.data].slice(0, 14), [...a.ys.data].slice(0, 14));
  a.dispose();
  b.dispose();
});

test('solveDosesFwdSens matches central differences of the closed form, both modes', () => {
  for (const mode of ['lanes', 'lockstep']) {
    const sol = ot.solveDosesFwdSens(problem(mode));
    assert.equal(sol.sens.length, np);
    for (let b = 0; b < 2; b++)
      for (let q = 0; q < np; q++) {
        const p = lane(b), h = 1e-6 * Math.max(Math.abs(p[q]), 1);
        tOf[b].forEach((t, j) => {
          const hi = p.slice(), lo = p.slice();
          hi[q] += h;
          lo[q] -= h;
          // At the lagged dose's arrival (12.5) the pre-dose value's derivative in
          // the lag is one-sided: a later dose leaves it pre-dose.
          const arrival = b === 0 && t === 12.5 && q === 4;
          const dh = closed(b, t, hi), dl = arrival ? closed(b, t, p) : closed(b, t, lo);
          for (let i = 0; i < 2; i++)
            near(sol.sens[q].data[(b * 4 + j) * 2 + i], (dh[i] - dl[i]) / (arrival ? h : 2 * h),
              arrival ? 1e-4 : 1e-5, `${mode} d/dp${q} lane ${b} t ${t}`);
        });
      }
    sol.dispose();
  }
});

test('solveDosesAdjoint matches the gradient from solveDosesFwdSens, both modes', () => {
  const data = Array.from({ length: 16 }, (_, i) => 5 + Math.sin(i));
  for (let i = 14; i < 16; i++) data[i] = NaN; // subject 2 has 3 observations
  for (const mode of ['lanes', 'lockstep']) {
    const adj = ot.solveDosesAdjoint({ ...problem(mode), loss: { data } });
    const fs = ot.solveDosesFwdSens(problem(mode));
    for (let b = 0; b < 2; b++)
      for (let q = 0; q < np; q++) {
        let want = 0;
        for (let j = 0; j < tOf[b].length; j++)
          for (let i = 0; i < 2; i++) {
            const k = (b * 4 + j) * 2 + i;
            want += 2 * (fs.ys.data[k] - data[k]) * fs.sens[q].data[k];
          }
        near(adj.gradParams.data[b * np + q], want, 1e-5, `${mode} dL/dp${q} lane ${b}`);
      }
    adj.dispose();
    fs.dispose();
  }
});

test('a bolus at steady state (SS 1) starts from the geometric series trough', () => {
  const csv = 'ID,TIME,EVID,AMT,CMT,II,SS\n1,0,1,100,1,12,1\n1,0,0,.,1,.,.\n1,6,0,.,1,.,.\n';
  const k = 0.2, phi = Math.exp(-k * 12), trough = 100 * phi / (1 - phi);
  for (const mode of ['lanes', 'lockstep']) {
    const sol = ot.solveDoses({
      nstates: 1, nparams: 2, records: csv, y0: [0], params: [2, 10], options: { ...tight, mode },
      rhs(t, y, p, d, kk) { for (let b = 0; b < kk; b++) d[b] = -p[2 * b] / p[2 * b + 1] * y[b]; },
    });
    near(sol.ys.data[0], trough, 1e-7, `${mode} trough`);
    near(sol.ys.data[1], (trough + 100) * Math.exp(-k * 6), 1e-7, `${mode} t = 6`);
    sol.dispose();
  }
});

test('solveDoses refuses output times, stops and unknown dosing fields, with the reason', () => {
  assert.throws(() => ot.solveDoses({ ...problem('lanes'), tEval: [1] }),
    (e) => e.status === 'OT_ERR_ARG' && /tEval: the records give each subject's doses and observation times/.test(e.message));
  assert.throws(() => ot.solveDoses({ ...problem('lanes'), dosing: { F: [3, -1] } }),
    /dosing: unknown field 'F'/);
  assert.throws(() => ot.solveDoses({ ...problem('lanes'), dosing: { f: [3] } }),
    /dosing.f: .*expected 2 parameter indices/);
  assert.throws(() => ot.solveDense({ ...problem('lanes'), tEval: [1] }),
    /records: only for solveDoses/);
  assert.throws(() => ot.solveDoses({ ...problem('lanes'), dosing: { f: [9, -1] } }),
    (e) => e.status === 'OT_ERR_ARG' && /model->f\[0\] \(CMT 1\) is 9/.test(e.message));
});

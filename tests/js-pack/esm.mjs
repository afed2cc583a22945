// The installed package from ESM: a solve here and one in its worker agree.
import { load } from 'odetensor';
import { createSolverWorker } from 'odetensor/worker';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const ot = await load();
const sol = ot.solveDense({
  nstates: 1, nparams: 1, rhs: (t, y, p, f, k) => { for (let b = 0; b < k; b++) f[b] = -p[b] * y[b]; },
  y0: [1], params: [0.5, 1], tEval: [2], options: { mode: 'lockstep' },
});
const here = sol.ys.get(0, 0, 1);
sol.dispose();
if (Math.abs(here - Math.exp(-2)) > 1e-6) throw new Error(`ESM: ${here}`);
const w = await createSolverWorker(new URL('./model.mjs', import.meta.url));
const r = await w.solveDense({ y0: [1], params: [0.5, 1], tEval: [2], options: { mode: 'lockstep' } });
w.terminate();
if (r.ys.get(0, 0, 1) !== here) throw new Error(`worker: ${r.ys.get(0, 0, 1)} against ${here}`);
// The licence ships with the package.
const pkg = createRequire(import.meta.url).resolve('odetensor/package.json');
const meta = JSON.parse(readFileSync(pkg, 'utf8'));
if (meta.license !== 'BSD-3-Clause') throw new Error(`license: ${meta.license}`);
for (const f of ['LICENSE', 'THIRD-PARTY-NOTICES.md'])
  if (!readFileSync(new URL(f, `file://${pkg}`), 'utf8').includes('BSD')) throw new Error(`${f}: no licence text`);
console.log(`ESM and worker: y(2) = ${here}`);

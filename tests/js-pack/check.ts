// Type-checked against the installed package's .d.ts (tsc --noEmit): the
// API as a TypeScript user writes it, main entry and worker.
import { load } from 'odetensor';
import type { LaneStats, Method } from 'odetensor';
import { createSolverWorker, type WorkerResult } from 'odetensor/worker';

export async function run(): Promise<number> {
  const ot = await load();
  const method: Method = 'dp54';
  const sol = ot.solveDense({
    nstates: 1, nparams: 1,
    rhs(t: number, y: Float64Array, p: Float64Array, dydt: Float64Array, k: number) {
      for (let b = 0; b < k; b++) dydt[b] = -p[b] * y[b];
    },
    onProgress: (done: number, total: number) => done > total,
    y0: [1], params: [1], tEval: [1],
    options: { method, linearSolver: 'dense', mode: 'lanes' },
  });
  const stats: LaneStats = sol.stats[0];
  const y: number = sol.ys.get(0, 0, 0) + stats.linIters;
  sol.dispose();
  const w = await createSolverWorker(new URL('./model.mjs', import.meta.url));
  const r: WorkerResult = await w.solveDense({ y0: [1], params: [1], tEval: [1] }, { onProgress: () => {} });
  w.terminate();
  // The worker README's line, as written there (tsc --strict).
  return y + r.ys.get(0, 0, 0) + r.stats[0].adjSteps;
}

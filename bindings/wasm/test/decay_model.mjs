// A model module for worker.test.mjs: y' = -p y for each lane; 'slow' makes
// each rhs call wait a little, so a solve lasts long enough to cancel.
export default {
  nstates: 1, nparams: 2,
  rhs(t, y, p, dydt, k) {
    for (let b = 0; b < k; b++) {
      if (p[2 * b + 1] > 0) { const until = performance.now() + p[2 * b + 1]; while (performance.now() < until); }
      dydt[b] = -p[2 * b] * y[b];
    }
  },
};

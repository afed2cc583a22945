// A model module for worker.test.mjs whose rhs ends its thread: a worker
// that exits mid-solve must reject what is pending, not leave it unsettled.
export default {
  nstates: 1, nparams: 1,
  rhs(t, y, p, dydt, k) {
    if (t > 0.5) process.exit(3);
    for (let b = 0; b < k; b++) dydt[b] = -p[b] * y[b];
  },
};

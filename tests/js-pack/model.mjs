// The worker's model: y' = -k y, k = p[0] per lane.
export default {
  nstates: 1, nparams: 1,
  rhs(t, y, p, dydt, k) { for (let b = 0; b < k; b++) dydt[b] = -p[b] * y[b]; },
};

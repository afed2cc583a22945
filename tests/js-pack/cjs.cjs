// The installed package from CommonJS.
const { load } = require('odetensor');
load().then((ot) => {
  const sol = ot.solveDense({
    nstates: 1, nparams: 1, rhs: (t, y, p, f) => { f[0] = -p[0] * y[0]; }, y0: [1], params: [1], tEval: [1],
  });
  const y = sol.ys.get(0, 0, 0);
  sol.dispose();
  if (Math.abs(y - Math.exp(-1)) > 1e-6) throw new Error(`CJS: ${y}`);
  console.log(`CommonJS: y(1) = ${y}`);
}).catch((e) => { console.error(e); process.exitCode = 1; });

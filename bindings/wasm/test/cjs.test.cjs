// The CommonJS entry: require('odetensor') gives load(), which resolves to
// the same API as the ES module.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const pkg = require('../package.json');
const odetensor = require(path.join('..', pkg.exports['.'].require.default));

test('require(): load() solves, errors are OdeTensorError', async () => {
  const ot = await odetensor.load();
  const OdeTensorError = await odetensor.errorClass();
  const sol = ot.solveDense({
    nstates: 1, nparams: 1, y0: [2], params: [1, 3], tEval: [0, 1],
    rhs: (t, y, p, dydt) => { dydt[0] = -p[0] * y[0]; },
    options: { rtol: 1e-10, atol: 1e-12 },
  });
  assert.deepEqual(sol.ys.shape, [1, 2, 2]);
  assert.ok(Math.abs(sol.ys.get(0, 1, 1) - 2 * Math.exp(-3)) < 1e-8);
  sol.dispose();
  assert.throws(() => ot.solveDense({ nstates: 1, rhs: () => 0, y0: [1], tEval: [1], options: { rtol: -1 } }),
    (e) => e instanceof OdeTensorError && e.status === 'OT_ERR_VALUE' && /rtol/.test(e.message));
  const esm = await import('../index.mjs');
  assert.equal(await esm.load(), ot, 'one shared instance for both entries');
});

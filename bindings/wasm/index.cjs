// odetensor for JavaScript, CommonJS entry: the API is the ES module
// index.mjs, loaded on first use with import() (which CommonJS code may call
// in Node >= 14), so both entries share one implementation and one instance.
//
//   const { load } = require('odetensor');
//   load().then((ot) => { const sol = ot.solveDense({ ... }); ... sol.dispose(); });
'use strict';

const esm = () => import('./index.mjs');

/** Loads the wasm module; resolves to the same API object as the ESM load(). */
exports.load = (options) => esm().then((m) => m.load(options));

/** Resolves to the OdeTensorError class (for instanceof checks). */
exports.errorClass = () => esm().then((m) => m.OdeTensorError);

// Writes constants.mjs and index.d.ts's unions from odetensor's C headers,
// so a status code or an enumerator added in C reaches JS without a hand
// edit: `make js-constants` (or `node tools/gen_constants.mjs`) after the
// header changed. test/constants.test.mjs fails while the files are not what
// this writes. Names follow one rule per enum (below).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
export const files = { constants: here('../constants.mjs'), dts: here('../index.d.ts') };
const header = (name) => readFileSync(here(`../../../include/odetensor/${name}`), 'utf8');

// The enumerators of `typedef enum NAME { ... }` with a number, as
// [C name, value] pairs (aliases such as OT_METHOD_LAST = OT_IMEX_ARK54 are
// not values of their own).
export function enumOf(text, name) {
  const body = text.match(new RegExp(`typedef enum ${name} \\{([^}]*)\\}`));
  if (!body) throw new Error(`${name} not found in the header`);
  const pairs = [...body[1].replace(/\/\*[\s\S]*?\*\//g, '').matchAll(/(OT_\w+)\s*=\s*(-?\d+)/g)]
    .map(([, c, v]) => [c, Number(v)]);
  if (pairs.length === 0) throw new Error(`${name}: no enumerators`);
  return pairs;
}

const strip = (prefix) => (c) => c.slice(prefix.length).toLowerCase();
// The JS names: OT_ERK_DP54 -> dp54, OT_ESDIRK43 -> esdirk43, OT_IMEX_ARK32 -> imex32
const method = (c) => c.replace(/^OT_(ERK_)?/, '').replace('IMEX_ARK', 'IMEX').toLowerCase();
// OT_GRAD_LOSS -> loss, OT_GRAD_PARAMS -> gradParams, OT_GRAD_Y0 -> gradY0
const grad = (c) => {
  const n = strip('OT_GRAD_')(c);
  return n === 'loss' ? n : `grad${n[0].toUpperCase()}${n.slice(1)}`;
};

// Every table: its JS name, doc comment and [JS name, value] pairs.
export function tables() {
  const status = header('status.h'), ode = header('ode.h'), solution = header('solution.h');
  const named = (pairs, key) => pairs.map(([c, v]) => [key(c), v]);
  const list = [...status.matchAll(/X\((OT_\w+),\s*(-?\d+),/g)].map(([, c, v]) => [c, Number(v)]);
  if (list.length < 18) throw new Error('OT_STATUS_LIST not parsed');
  return [
    ['STATUS', 'ot_status codes by name (OT_STATUS_LIST of status.h).', list],
    ['METHODS', "ot_method: CVODE's multistep methods, ARKODE's explicit, ESDIRK and IMEX pairs, and the kernel methods (odetensor's own per-lane Rosenbrock and explicit RK).",
      named(enumOf(ode, 'ot_method'), method)],
    ['MODES', 'ot_mode', named(enumOf(ode, 'ot_mode'), strip('OT_'))],
    ['LINEAR_SOLVERS', 'ot_linsol', named(enumOf(ode, 'ot_linsol'), strip('OT_LINSOL_'))],
    ['DIRECTIONS', 'ot_root_direction', named(enumOf(ode, 'ot_root_direction'), strip('OT_ROOT_'))],
    ['ACTIONS', 'ot_event_action', named(enumOf(ode, 'ot_event_action'), strip('OT_EVENT_'))],
    ['EVENT_TENSORS', 'ot_event_tensor, by the Solution.events field each fills',
      named(enumOf(solution, 'ot_event_tensor'), strip('OT_EVENT_'))],
    ['GRAD_TENSORS', 'ot_grad_tensor, by the Solution field each fills',
      named(enumOf(solution, 'ot_grad_tensor'), grad)],
    // Fixed by the DLPack standard (the test reads dlpack.h); OT_CPU equals kDLCPU by design.
    ['DLPACK', "DLPack's codes (dlpack.h): kDLFloat, kDLCPU.", [['kDLFloat', 2], ['kDLCPU', 1]]],
  ];
}

// head followed by items joined with ' | ' (bars: a bar before the first
// too), wrapped before `width` columns onto lines indented by two.
function wrap(head, items, bars, width = 100) {
  const lines = [];
  let line = head;
  for (const [k, it] of items.entries()) {
    const tok = bars || k > 0 ? `| ${it}` : it;
    if (line.trim() && line.length + 1 + tok.length > width) {
      lines.push(line);
      line = '  ';
    }
    line += `${line.endsWith(' ') ? '' : ' '}${tok}`;
  }
  lines.push(line);
  return lines.join('\n');
}

export function constantsSource() {
  const body = tables().map(([name, doc, pairs]) => {
    const entries = pairs.map(([k, v]) => `${k}: ${v},`);
    const lines = [];
    let line = ' ';
    for (const e of entries) {
      if (line.length + e.length + 1 > 98) { lines.push(line); line = ' '; }
      line += ` ${e}`;
    }
    lines.push(line);
    return `/** ${doc} */\nexport const ${name} = table({\n${lines.join('\n')}\n});\n`;
  });
  // The option enumerators' C names, for messages the C library writes.
  const ode = header('ode.h');
  const cNames = [['ot_method', method], ['ot_mode', strip('OT_')], ['ot_linsol', strip('OT_LINSOL_')],
    ['ot_root_direction', strip('OT_ROOT_')], ['ot_event_action', strip('OT_EVENT_')]]
    .flatMap(([e, key]) => enumOf(ode, e).map(([c]) => `${c}: "'${key(c)}'",`));
  const cLines = [];
  let cl = ' ';
  for (const e of cNames) {
    if (cl.length + e.length + 1 > 98) { cLines.push(cl); cl = ' '; }
    cl += ` ${e}`;
  }
  cLines.push(cl);
  body.push(`/** The JS words for the option enumerators C messages name (jsWords). */\nexport const C_NAMES = table({\n${cLines.join('\n')}\n});\n`);
  return `// Every value the JS side mirrors from odetensor's C headers, in one place:
// the status codes (include/odetensor/status.h), the option enums (ode.h),
// the event and gradient tensors (solution.h) and DLPack's codes. Written by
// tools/gen_constants.mjs from the headers (\`make js-constants\`): do not edit;
// test/constants.test.mjs fails while it differs. Internal: not a package export.

const table = (o) => Object.freeze({ __proto__: null, ...o });

${body.join('')}`;
}

// index.d.ts with each union that names C values rewritten from the tables.
export function dtsSource(dts) {
  const t = Object.fromEntries(tables().map(([name, , pairs]) => [name, pairs.map(([k]) => `'${k}'`)]));
  const replace = (text, start, end, make) => {
    const at = text.indexOf(start);
    if (at < 0) throw new Error(`index.d.ts: ${start} not found`);
    const stop = text.indexOf(end, at + start.length);
    return text.slice(0, at) + make() + text.slice(stop);
  };
  const inline = (items) => items.join(' | ');
  let out = dts;
  out = replace(out, 'export type StatusName =', ';',
    () => `export type StatusName =\n${wrap('  ', [...t.STATUS, "'OT_UNKNOWN_STATUS'"], true)}`);
  out = replace(out, 'export type Method =', ';', () => wrap('export type Method =', t.METHODS, false));
  out = replace(out, '  mode?: ', ';', () => `  mode?: ${inline(t.MODES)}`);
  out = replace(out, '  linearSolver?: ', ';', () => `  linearSolver?: ${inline(t.LINEAR_SOLVERS)}`);
  out = replace(out, '  rootDirections?: readonly (', ')[];',
    () => `  rootDirections?: readonly (${inline(t.DIRECTIONS)}`);
  out = replace(out, '  eventActions?: readonly (', ')[];',
    () => `  eventActions?: readonly (${inline(t.ACTIONS)}`);
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(files.constants, constantsSource());
  writeFileSync(files.dts, dtsSource(readFileSync(files.dts, 'utf8')));
}

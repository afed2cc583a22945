// The Node examples run and check their own answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

test('fit_lotka_volterra.mjs: 40 starts, at least 90 % reach the true rates within 1 %', () => {
  const r = spawnSync(process.execPath, [here('../examples/fit_lotka_volterra.mjs'), '40'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const m = /: (\d+) \(([\d.]+) %\) reached the true rates within 1 %/.exec(r.stdout);
  assert.ok(m, r.stdout);
  assert.ok(Number(m[1]) >= 36, r.stdout);
});

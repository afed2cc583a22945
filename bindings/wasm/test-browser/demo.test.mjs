// The demo page in a real browser: Debian's Chromium (/usr/bin/chromium, or
// $OT_CHROMIUM) driven by playwright-core from bindings/wasm/node_modules
// (`make test-wasm-browser` installs both). It serves bindings/wasm/ with
// demo/serve.mjs on a free 127.0.0.1 port, loads /demo/, waits for the first
// plot, moves two sliders and checks that the numbers and the canvas change,
// that no page error, console error or failed request happened, and saves a
// screenshot to build/wasm-demo.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const SERVE = fileURLToPath(new URL('../demo/serve.mjs', import.meta.url));
const BUILD = fileURLToPath(new URL('../../../build/', import.meta.url));
const SCREENSHOT = `${BUILD}wasm-demo.png`;
const CHROMIUM = process.env.OT_CHROMIUM || '/usr/bin/chromium';
// No connections to the outside: the machine's network is closed.
const ARGS = ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

let server, url, browser;
const problems = [];

// Starts serve.mjs on port 0 and reads the URL it prints.
function startServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SERVE, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const timer = setTimeout(() => { child.kill(); reject(new Error(`serve.mjs printed no URL: ${out}`)); }, 10000);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`serve.mjs exited with ${code}: ${out}`)); });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = out.match(/http:\/\/127\.0\.0\.1:\d+\/demo\//);
      if (m) { clearTimeout(timer); resolve({ child, url: m[0] }); }
    });
  });
}

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: sh scripts/deps.sh browser installs Debian's chromium`);
  ({ child: server, url } = await startServer());
  // playwright gives Chromium a new empty --user-data-dir and --no-sandbox.
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 20000 });
});

after(async () => {
  await browser?.close();
  server?.kill();
});

// The numbers the page shows, by element id.
const NUMBERS = ['r0-mean', 'peak-mean', 'peak-min', 'peak-max', 'day-mean', 'final-mean', 'final-min',
  'final-max', 'solve-ms', 'steps', 'rhs-evals', 'failed'];

function readNumbers(page) {
  return page.evaluate((ids) => Object.fromEntries(ids.map((id) => [id, document.getElementById(id).textContent])),
    NUMBERS);
}

// The canvas as a PNG data URL, and how many of its pixels are not white.
function readCanvas(page) {
  return page.evaluate(() => {
    const c = document.getElementById('plot');
    const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let inked = 0;
    for (let i = 0; i < px.length; i += 4) if (px[i] < 250 || px[i + 1] < 250 || px[i + 2] < 250) inked++;
    return { url: c.toDataURL(), inked, total: c.width * c.height };
  });
}

// Sets a range input's value and fires the input event a user's drag fires,
// then waits until the page has shown one more solve.
async function moveSlider(page, id, value) {
  const solves = await page.evaluate(() => Number(document.body.dataset.solves));
  await page.$eval(`#${id}`, (el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
  await page.waitForFunction((n) => Number(document.body.dataset.solves) > n, solves, { timeout: 10000 });
}

test('demo page solves, plots and re-solves when a slider moves', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 820 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  try {
    const response = await page.goto(url, { waitUntil: 'load', timeout: 15000 });
    assert.equal(response.status(), 200);
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 15000 });
    assert.deepEqual(problems, []);

    const first = await readNumbers(page);
    const canvas1 = await readCanvas(page);
    assert.equal(first.failed, '0 of 100');
    const peak = parseFloat(first['peak-mean']);
    assert.ok(peak > 10 && peak < 60, `peak infected mean ${first['peak-mean']}`);
    assert.ok(first['peak-min'] !== first['peak-max'], 'the lanes differ');
    assert.match(first['solve-ms'], /^\d+(\.\d)? ms$/);
    assert.ok(canvas1.inked > canvas1.total * 0.02, `canvas mostly blank: ${canvas1.inked} of ${canvas1.total}`);
    const label = await page.textContent('#beta-out');
    assert.equal(label, '0.30');

    // A lower infection rate: a smaller, later peak.
    await moveSlider(page, 'beta', 0.18);
    const second = await readNumbers(page);
    const canvas2 = await readCanvas(page);
    assert.equal(await page.textContent('#beta-out'), '0.18');
    assert.ok(parseFloat(second['peak-mean']) < peak, `peak ${first['peak-mean']} -> ${second['peak-mean']}`);
    assert.ok(parseFloat(second['day-mean']) > parseFloat(first['day-mean']), 'the peak comes later');
    assert.notEqual(second['r0-mean'], first['r0-mean']);
    assert.notEqual(canvas2.url, canvas1.url, 'the plot did not change');

    // No spread: every lane the same.
    await moveSlider(page, 'spread', 0);
    const third = await readNumbers(page);
    assert.equal(third['peak-min'], third['peak-max']);
    assert.notEqual((await readCanvas(page)).url, canvas2.url);

    // Back to the first settings: the same numbers and picture (deterministic lanes).
    await moveSlider(page, 'spread', 0.2);
    await moveSlider(page, 'beta', 0.3);
    const back = await readNumbers(page);
    for (const id of NUMBERS.filter((k) => k !== 'solve-ms')) assert.equal(back[id], first[id], id);
    assert.equal((await readCanvas(page)).url, canvas1.url);

    mkdirSync(BUILD, { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // Lockstep mode (the select): the same epidemics within the tolerances.
    const solves = await page.evaluate(() => Number(document.body.dataset.solves));
    await page.selectOption('#mode', 'lockstep');
    await page.waitForFunction((n) => Number(document.body.dataset.solves) > n, solves, { timeout: 10000 });
    const lockstep = await readNumbers(page);
    assert.ok(Math.abs(parseFloat(lockstep['peak-mean']) - peak) <= 0.1, lockstep['peak-mean']);
    assert.equal(lockstep.failed, '0 of 100');

    // 1,000 lanes in lanes mode, solved in the page's Worker: the page keeps
    // drawing frames while the solve runs (counted, not timed).
    await page.selectOption('#mode', 'lanes');
    await page.waitForFunction((n) => Number(document.body.dataset.solves) > n, solves + 1, { timeout: 10000 });
    const frames = await page.evaluate(() => new Promise((resolve) => {
      const start = Number(document.body.dataset.solves);
      let n = 0, counting = true;
      const tick = () => { if (counting) { n++; requestAnimationFrame(tick); } };
      requestAnimationFrame(tick);
      const lanes = document.getElementById('lanes');
      lanes.value = '1000';
      lanes.dispatchEvent(new Event('input', { bubbles: true }));
      const wait = () => {
        if (Number(document.body.dataset.solves) > start) { counting = false; resolve(n); } else setTimeout(wait, 1);
      };
      wait();
    }));
    assert.equal((await readNumbers(page)).failed, '0 of 1000');
    assert.ok(frames > 1, `${frames} frames drawn during the 1,000-lane solve`);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

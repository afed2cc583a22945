#!/usr/bin/env node
// A tiny static file server for the demo (Node, no dependencies). It serves
// bindings/wasm/ (the page imports ../index.mjs, which imports
// ./dist/odetensor.mjs) on 127.0.0.1 only.
//
//   node bindings/wasm/demo/serve.mjs [--port N]   (default 8123; 0 = any free port)
//
// Prints "odetensor demo: http://127.0.0.1:PORT/demo/" once listening.
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const HOST = '127.0.0.1';
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

function send(res, code, text, headers = {}) {
  res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(text === null ? undefined : `${text}\n`);
}

// The file under ROOT that a URL path names, or null for paths that leave
// ROOT or touch dot files and node_modules.
function resolvePath(urlPath) {
  let path;
  try { path = decodeURIComponent(urlPath); } catch { return null; }
  if (path.includes('\0')) return null;
  const parts = normalize(path).split(/[\\/]+/).filter(Boolean);
  if (parts.some((p) => p === '..' || p.startsWith('.') || p === 'node_modules')) return null;
  const file = join(ROOT, ...parts);
  return file.startsWith(ROOT) ? file : null;
}

async function handle(req, res) {
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return send(res, 405, 'method not allowed', { allow: 'GET, HEAD' });
  const url = new URL(req.url, `http://${HOST}`);
  if (url.pathname === '/') return send(res, 302, null, { location: '/demo/' });
  let file = resolvePath(url.pathname);
  if (file === null) return send(res, 404, 'not found');
  let info = await stat(file).catch(() => null);
  if (info?.isDirectory()) {
    // Relative imports need the trailing slash: /demo -> /demo/.
    if (!url.pathname.endsWith('/')) return send(res, 301, null, { location: `${url.pathname}/` });
    file = join(file, 'index.html');
    info = await stat(file).catch(() => null);
  }
  if (!info?.isFile()) return send(res, 404, 'not found');
  res.writeHead(200, {
    'content-type': TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'content-length': info.size,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  if (req.method === 'HEAD') return res.end();
  createReadStream(file).on('error', () => res.destroy()).pipe(res);
}

/** Starts the server; resolves to {server, url} once listening. */
export function serve(port = 8123) {
  const server = createServer((req, res) => {
    handle(req, res).catch(() => { if (!res.headersSent) send(res, 500, 'internal error'); else res.destroy(); });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, () => {
      const url = `http://${HOST}:${server.address().port}/demo/`;
      resolve({ server, url });
    });
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const i = process.argv.indexOf('--port');
  const port = Number(i > 0 ? process.argv[i + 1] : process.env.PORT ?? 8123);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error('serve.mjs: --port takes an integer 0..65535');
    process.exit(2);
  }
  serve(port).then(({ server, url }) => {
    console.log(`odetensor demo: ${url}  (serving ${ROOT}; Ctrl-C stops)`);
    const stop = () => server.close(() => process.exit(0));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  }, (e) => {
    console.error(`serve.mjs: cannot listen on ${HOST}:${port}: ${e.message}`);
    process.exit(1);
  });
}

// A stand-in for rota's embedded UI: serves a built web/dist with the same
// strict Content-Security-Policy the server sends, and proxies /api, /metrics
// and /healthz to a running rota server (streaming, so the SSE stream works).
//
// Used by the e2e test when ROTA_WEB_DIST is set (a rota binary without the
// embedded UI), and by hand:
//   node e2e/csp-server.mjs dist http://127.0.0.1:PORT [listen-port]
import http from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.txt': 'text/plain; charset=utf-8',
};

/** Starts the server on 127.0.0.1 (port 0: any); resolves to { url, close }. */
export async function startCspServer({ dist, upstream, port = 0 }) {
  const root = path.resolve(dist);
  const up = new URL(upstream);
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (/^\/(api\/|metrics$|healthz$|readyz$)/.test(url.pathname)) {
      const p = http.request(
        {
          host: up.hostname,
          port: up.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: up.host },
        },
        (pr) => {
          res.writeHead(pr.statusCode ?? 502, pr.headers);
          pr.pipe(res);
        },
      );
      p.on('error', (e) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(String(e));
      });
      res.on('close', () => p.destroy());
      req.pipe(p);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' });
      res.end();
      return;
    }
    let rel = decodeURIComponent(url.pathname);
    if (rel === '/' || rel === '') rel = '/index.html';
    const file = path.join(root, path.normalize(rel));
    if (!file.startsWith(root + path.sep)) {
      res.writeHead(404);
      res.end();
      return;
    }
    try {
      const st = await stat(file);
      if (!st.isFile()) throw new Error('not a file');
      const body = await readFile(file);
      const immutable = rel.startsWith('/assets/');
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
        'content-security-policy': CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain', 'content-security-policy': CSP });
      res.end('not found');
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const addr = server.address();
  return {
    url: `http://127.0.0.1:${addr.port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [dist, upstream, port] = process.argv.slice(2);
  if (!dist || !upstream) {
    console.error('usage: node e2e/csp-server.mjs DIST_DIR ROTA_URL [PORT]');
    process.exit(2);
  }
  const s = await startCspServer({ dist, upstream, port: Number(port) || 0 });
  console.log(`serving ${dist} with the strict CSP at ${s.url}/ (API from ${upstream})`);
}

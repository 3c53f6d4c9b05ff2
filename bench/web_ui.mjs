// Web UI budgets (issue 11), measured in Debian's Chromium against a real `rota dev`:
//   - bytes shipped for the first screen (index.html + JS + CSS as sent, gzip);
//   - time to a useful dashboard on loopback: from navigation to every node ready and every
//     GPU counted in the overview's totals;
//   - smoothness in steady state with N nodes (default 100 x 8 GPUs) reporting every second:
//     long tasks (> 50 ms) and frame intervals over 50 ms, observed inside the page.
//
// Usage: node bench/web_ui.mjs [--rota build/bin/rota] [--nodes 100] [--seconds 30]
//   Needs web/node_modules (npm ci in web/) and /usr/bin/chromium (or CHROMIUM=...).
//   Prints one JSON object; see docs/benchmarks.md.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(new URL('../web/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const rotaBin = args.rota || 'build/bin/rota';
const nodes = Number(args.nodes || 100);
const seconds = Number(args.seconds || 30);

function startDev(dataDir) {
  const child = spawn(rotaBin, ['dev', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--nodes', String(nodes)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const ready = new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d.toString();
      const url = out.match(/web UI:\s+(http:\/\/[0-9.:]+)\//);
      const admin = out.match(/admin \/ (\S+) \(admin\)/);
      if (url && admin) resolve({ url: url[1], admin: admin[1] });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`rota dev exited (${code}):\n${out.slice(-2000)}`)));
  });
  return { child, ready };
}

async function api(url, method, path, token, body) {
  const res = await fetch(url + path, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function waitForNodes(url, token, want) {
  for (let i = 0; i < 600; i++) {
    const { nodes: list } = await api(url, 'GET', '/api/v1/nodes', token);
    if (list.filter((n) => n.state === 'ready').length >= want) return list;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`fewer than ${want} nodes ready`);
}

const dataDir = mkdtempSync(join(tmpdir(), 'rota-web-bench-'));
const dev = startDev(dataDir);
let browser;
try {
  const { url, admin } = await dev.ready;
  const login = await api(url, 'POST', '/api/v1/auth/login', null, { username: 'admin', password: admin });
  const list = await waitForNodes(url, login.token, nodes);
  const gpus = list.reduce((n, node) => n + (node.gpu_count || 0), 0);

  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  // Signed in as the UI itself would be after a sign-in.
  await context.addInitScript(([token, user]) => {
    localStorage.setItem('rota.token', token);
    localStorage.setItem('rota.user', JSON.stringify(user));
  }, [login.token, login.user]);
  const page = await context.newPage();
  const shipped = [];
  page.on('requestfinished', async (req) => {
    const type = req.resourceType();
    if (type !== 'document' && type !== 'script' && type !== 'stylesheet') return;
    const sizes = await req.sizes();
    const res = await req.response();
    shipped.push({ url: req.url().replace(url, ''), type, bytes: sizes.responseBodySize,
      encoding: res ? (await res.allHeaders())['content-encoding'] || 'identity' : '?' });
  });

  await page.goto(url + '/', { waitUntil: 'commit' });
  const usefulMs = await page.waitForFunction(([n, g]) => {
    const text = (id) => document.querySelector(`[data-testid=${id}]`)?.textContent || '';
    const ready = text('total-nodes').replace(/\s+/g, ' ').includes(`${n} of ${n}`);
    const counted = text('total-busy').replace(/\s+/g, ' ').includes(`of ${g}`);
    return ready && counted ? performance.now() : 0;
  }, [nodes, gpus], { polling: 'raf', timeout: 60000 }).then((h) => h.jsonValue());

  // Steady state: let it settle, then watch long tasks and frame intervals.
  await page.waitForTimeout(5000);
  const steady = await page.evaluate(async (ms) => {
    const longTasks = [];
    const obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) longTasks.push(e.duration);
    });
    obs.observe({ type: 'longtask', buffered: false });
    const frames = [];
    let last = performance.now();
    let running = true;
    const tick = (t) => {
      frames.push(t - last);
      last = t;
      if (running) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    await new Promise((r) => setTimeout(r, ms));
    running = false;
    obs.disconnect();
    frames.sort((a, b) => a - b);
    const q = (p) => frames[Math.min(frames.length - 1, Math.floor(p * frames.length))];
    return {
      long_tasks: longTasks.length,
      long_task_max_ms: longTasks.length ? Math.max(...longTasks) : 0,
      frames: frames.length,
      frame_p50_ms: q(0.5),
      frame_p99_ms: q(0.99),
      frames_over_50ms: frames.filter((f) => f > 50).length,
      tiles_rendered: document.querySelectorAll('[data-testid=gpu-tile]').length,
    };
  }, seconds * 1000);

  const gz = shipped.filter((s) => s.type !== 'document').reduce((n, s) => n + s.bytes, 0);
  console.log(JSON.stringify({
    nodes, gpus,
    first_screen_js_css_bytes: gz,
    first_screen_files: shipped,
    useful_dashboard_ms: Math.round(usefulMs),
    steady_seconds: seconds,
    ...steady,
  }, null, 2));
} finally {
  if (browser) await browser.close();
  dev.child.kill('SIGTERM');
  await new Promise((r) => (dev.child.exitCode !== null ? r() : dev.child.on('exit', r)));
  rmSync(dataDir, { recursive: true, force: true });
}

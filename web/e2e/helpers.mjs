// Helpers shared by the e2e test files: polling, `rota dev`, process groups, API calls, and the
// set-up of the browser suites (browserSuite).
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCspServer } from './csp-server.mjs';

const ROTA_BIN = process.env.ROTA_BIN;

/** Polls `fn` until it returns a truthy value; fails with `what` after `timeout` ms. */
export async function eventually(what, fn, { timeout = 30_000, interval = 100 } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** Starts `rota dev`; resolves once it printed the API URL and the accounts. */
export function startRota(dataDir) {
  const child = spawn(ROTA_BIN, ['dev', '--listen', '127.0.0.1:0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: the agents go down with it
  });
  const out = [];
  const err = [];
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    err.push(d);
    if (err.length > 200) err.shift();
  });
  const ready = new Promise((resolve, reject) => {
    let buf = '';
    let url = '';
    let accounts = null;
    const timer = setTimeout(() => reject(new Error(`rota dev did not start in 60 s:\n${out.join('')}\n${err.join('')}`)), 60_000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out.push(d);
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const api = /API:\s+(\S+?)\/api\/v1/.exec(line);
        if (api) url = api[1];
        if (/accounts:/.test(line)) {
          accounts = {};
          for (const m of line.matchAll(/(\S+) \/ (\S+)/g)) accounts[m[1]] = m[2];
        }
        if (url && accounts) {
          clearTimeout(timer);
          resolve({ url, accounts });
        }
      }
    });
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`rota dev exited (${code ?? sig}) before it was ready:\n${out.join('')}\n${err.join('')}`));
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
  return { child, ready, logs: () => out.join('') + err.join('') };
}

/** SIGTERM to the process group, SIGKILL after 10 s; resolves when the leader exited. */
export async function stopProcess(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  const kill = (sig) => {
    try {
      process.kill(-child.pid, sig);
    } catch {
      try {
        child.kill(sig);
      } catch {
        // gone
      }
    }
  };
  kill('SIGTERM');
  const t = setTimeout(() => kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(t);
  // Anything of the group still there (a job task) goes too.
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // none left
  }
}

export async function apiCall(base, method, p, token, body) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  return { status: res.status, json, text };
}


/**
 * Waits until `count` nodes are ready (rota dev's agents register a moment after it prints
 * its URL; on a loaded machine, seconds later). Screens that read the node list once on
 * opening (the calendar) would otherwise miss the late ones.
 */
export async function waitForReadyNodes(base, accounts, count = 3, timeout = 60_000) {
  const login = await apiCall(base, 'POST', '/api/v1/auth/login', null, {
    username: 'admin',
    password: accounts.admin,
  });
  if (login.status !== 200) throw new Error(`admin sign-in failed: ${login.status} ${login.text}`);
  await eventually(
    `${count} ready nodes`,
    async () => {
      const r = await apiCall(base, 'GET', '/api/v1/nodes', login.json.token);
      return r.status === 200 && r.json.nodes.filter((n) => n.state === 'ready').length >= count;
    },
    { timeout, interval: 250 },
  );
}

// ---------------------------------------------------------------- browser suites
//
// Environment (every browser suite):
//   CHROMIUM             the browser (default /usr/bin/chromium); never downloaded. Without one
//                        the suite is skipped, unless ROTA_REQUIRE_BROWSER=1 (CI), which makes
//                        that a failure
//   ROTA_WEB_ARTIFACTS   where screenshots go (default web/e2e/artifacts)
//   ROTA_WEB_DIST        serve this built UI through a local stand-in with the server's CSP,
//                        for a rota binary that does not embed it

const here = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = process.env.ROTA_WEB_ARTIFACTS || path.join(here, 'artifacts');
const WEB_DIST = process.env.ROTA_WEB_DIST || '';
const STEP_TIMEOUT = 90_000;

/** `skip` for a browser suite's describe: why it cannot run, or false. */
export const NO_BROWSER =
  !existsSync(CHROMIUM) && process.env.ROTA_REQUIRE_BROWSER !== '1'
    ? `no browser at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`
    : false;

let axeSource = '';

/**
 * The set-up every browser suite shares; call it first inside the suite's `describe`. Its
 * `before` starts a `rota dev` of its own in a fresh `tmpPrefix*` directory (all nodes
 * ready), checks that rota serves the built UI with a strict CSP (or serves $ROTA_WEB_DIST
 * through the CSP stand-in), and opens a 1280x900 light Chromium page that records console
 * errors (but the browser's own "Failed to load resource … 4xx" lines), page errors and CSP
 * violations. Its `after` closes the browser and the stand-in, runs `cleanup`, stops rota
 * (printing its output when a step failed) and removes the directory.
 *
 * Returns the suite: `page`, `base` (where the UI is served), `api` (rota's URL), `accounts`
 * and `dataDir` (rota dev's: a simulated node's GPUs are configured in
 * `nodes/NAME/sim-nvml.json`) once `before` ran; `consoleErrors` (a step that expects a 5xx
 * may drop its line);
 * and the steps' helpers `step`, `shot` (screenshots `shotPrefix` + name), `checkA11y`,
 * `checkClean`, `checkScreen`, `signIn` and `navigate`.
 */
export function browserSuite({ tmpPrefix, shotPrefix = '', cleanup = async () => {} }) {
  const s = {
    page: null,
    base: '',
    api: '',
    accounts: {},
    dataDir: '',
    consoleErrors: [],
  };
  const cspViolations = [];
  const pageErrors = [];
  let rota = null;
  let dataDir = '';
  let cspServer = null;
  let browser = null;
  let failedBefore = false;

  before(async () => {
    assert.ok(ROTA_BIN, 'set ROTA_BIN to the rota binary');
    assert.ok(existsSync(ROTA_BIN), `ROTA_BIN ${ROTA_BIN} does not exist`);
    assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`);
    dataDir = mkdtempSync(path.join(tmpdir(), tmpPrefix));
    s.dataDir = dataDir;
    rota = startRota(dataDir);
    ({ url: s.api, accounts: s.accounts } = await rota.ready);
    await waitForReadyNodes(s.api, s.accounts);
    assert.ok(s.accounts.admin && s.accounts.alice, `accounts line not understood: ${JSON.stringify(s.accounts)}`);

    if (WEB_DIST) {
      cspServer = await startCspServer({ dist: WEB_DIST, upstream: s.api });
      s.base = cspServer.url;
      console.log(`# UI from ${WEB_DIST} through a CSP stand-in at ${s.base} (API ${s.api})`);
    } else {
      s.base = s.api;
      const res = await fetch(s.base + '/');
      const type = res.headers.get('content-type') || '';
      assert.ok(
        res.ok && type.includes('text/html'),
        `rota does not serve the UI at / (HTTP ${res.status}, ${type}); build it with the web UI or set ROTA_WEB_DIST`,
      );
      const html = await res.text();
      assert.match(html, /<script type="module"[^>]* src="\/assets\//, `rota's / is not the built UI (built without it?):\n${html.slice(0, 400)}`);
      const csp = res.headers.get('content-security-policy') || '';
      assert.match(csp, /script-src 'self'/, `/ has no strict Content-Security-Policy (got "${csp}")`);
    }

    // Imported here: the API-only suites that share these helpers need no browser driver.
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    await context.exposeBinding('__rotaCsp', (_src, v) => cspViolations.push(v));
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        // @ts-ignore
        window.__rotaCsp(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`);
      });
    });
    s.page = await context.newPage();
    s.page.setDefaultTimeout(30_000);
    s.page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      const text = msg.text();
      // The browser logs every 4xx answer; the steps that expect one (a wrong
      // password, an invalid job) check the UI's message instead.
      if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(text)) return;
      s.consoleErrors.push(text);
    });
    s.page.on('pageerror', (e) => pageErrors.push(String(e)));
  });

  after(async () => {
    try {
      await browser?.close();
    } catch {
      // already gone
    }
    await cspServer?.close();
    await cleanup();
    await stopProcess(rota?.child);
    if (failedBefore && rota) console.log(`# rota dev output:\n${rota.logs().slice(-4000)}`);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  s.shot = async (name) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await s.page.screenshot({ path: path.join(ARTIFACTS, `${shotPrefix}${name}.png`), fullPage: true });
  };

  /** axe-core on the current screen: no serious or critical violation. */
  s.checkA11y = async (screen) => {
    const page = s.page;
    const has = await page.evaluate(() => typeof window.axe !== 'undefined');
    // Evaluated through the DevTools protocol: an injected <script> (addScriptTag)
    // would be refused by the page's CSP and show up as a violation.
    if (!axeSource) axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    if (!has) await page.evaluate(axeSource);
    const res = await page.evaluate(async () => {
      const r = await window.axe.run(document, { resultTypes: ['violations'] });
      return r.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(' ')}: ${n.failureSummary?.split('\n').slice(1, 3).join(' ')}`),
      }));
    });
    const bad = res.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad, [], `axe found serious/critical violations on ${screen}:\n${JSON.stringify(bad, null, 2)}`);
    const minor = res.filter((v) => !bad.includes(v));
    if (minor.length) console.log(`# axe (${screen}): minor: ${minor.map((v) => `${v.id} (${v.impact})`).join(', ')}`);
  };

  /** No console error, page error or CSP violation so far. */
  s.checkClean = (screen) => {
    assert.deepEqual(cspViolations, [], `CSP violations by ${screen}`);
    assert.deepEqual(pageErrors, [], `page errors by ${screen}`);
    assert.deepEqual(s.consoleErrors, [], `console errors by ${screen}`);
  };

  s.checkScreen = async (screen) => {
    await s.checkA11y(screen);
    s.checkClean(screen);
    await s.shot(screen);
  };

  s.signIn = async (user, password) => {
    await s.page.getByTestId('signin-username').fill(user);
    await s.page.getByTestId('signin-password').fill(password);
    await s.page.getByTestId('signin-submit').click();
  };

  s.navigate = async (hash) => {
    await s.page.evaluate((h) => {
      location.hash = h;
    }, hash);
  };

  /** Each step is skipped once one before it failed (they build on each other). */
  s.step = (name, fn) => {
    it(name, { timeout: STEP_TIMEOUT }, async (t) => {
      if (failedBefore) {
        t.skip('an earlier step failed');
        return;
      }
      try {
        await fn(t);
      } catch (e) {
        failedBefore = true;
        try {
          await s.shot(`FAILED-${name.replace(/[^a-z0-9]+/gi, '-')}`);
        } catch {
          // no page
        }
        throw e;
      }
    });
  };

  return s;
}

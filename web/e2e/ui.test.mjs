// End-to-end test of the web UI against a real `rota dev` (3 simulated nodes:
// 8 + 4 + 2 GPUs), driven through Debian's Chromium with playwright-core.
//
//   ROTA_BIN=/path/to/rota npm test
//
// Environment:
//   ROTA_BIN             the rota binary (required)
//   CHROMIUM             the browser (default /usr/bin/chromium); never downloaded.
//                        Without one the test is skipped, unless ROTA_REQUIRE_BROWSER=1
//                        (CI), which makes that a failure
//   ROTA_WEB_ARTIFACTS   where screenshots go (default web/e2e/artifacts)
//   ROTA_WEB_DIST        serve this built UI through a local stand-in with the
//                        server's CSP, for a rota binary that does not embed it
//
// Every screen is checked with axe-core (no serious or critical violation) and
// for console errors, page errors and CSP violations. No fixed sleeps: every
// wait polls a condition until a deadline.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startCspServer } from './csp-server.mjs';
import { apiCall, eventually, startRota, stopProcess, waitForReadyNodes } from './helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const ROTA_BIN = process.env.ROTA_BIN;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = process.env.ROTA_WEB_ARTIFACTS || path.join(here, 'artifacts');
const WEB_DIST = process.env.ROTA_WEB_DIST || '';
const NO_BROWSER =
  !existsSync(CHROMIUM) && process.env.ROTA_REQUIRE_BROWSER !== '1'
    ? `no browser at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`
    : false;

const STEP_TIMEOUT = 90_000;
const MARK_START = 'ROTA-E2E-START-7f3a';
const MARK_DONE = 'ROTA-E2E-DONE-7f3a';

// ---------------------------------------------------------------- helpers

// ---------------------------------------------------------------- state

let rota = null;
let dataDir = '';
let cspServer = null;
let browser = null;
let context = null;
let page = null;
let base = ''; // where the UI is served
let api = ''; // rota's own URL
let accounts = {};
let jobId = 0;
const consoleErrors = [];
const cspViolations = [];
const pageErrors = [];
let failedBefore = false;

async function shot(name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** axe-core on the current screen: no serious or critical violation. */
async function checkA11y(screen) {
  const has = await page.evaluate(() => typeof window.axe !== 'undefined');
  // Evaluated through the DevTools protocol: an injected <script> (addScriptTag)
  // would be refused by the page's CSP and show up as a violation.
  if (!has) await page.evaluate(AXE_SOURCE);
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
}

/** No console error, page error or CSP violation so far. */
function checkClean(screen) {
  assert.deepEqual(cspViolations, [], `CSP violations by ${screen}`);
  assert.deepEqual(pageErrors, [], `page errors by ${screen}`);
  assert.deepEqual(consoleErrors, [], `console errors by ${screen}`);
}

async function checkScreen(screen) {
  await checkA11y(screen);
  checkClean(screen);
  await shot(screen);
}

async function signIn(user, password) {
  await page.getByTestId('signin-username').fill(user);
  await page.getByTestId('signin-password').fill(password);
  await page.getByTestId('signin-submit').click();
}

async function navigate(hash) {
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
}

/** Each step is skipped once one before it failed (they build on each other). */
function step(name, fn) {
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
        await shot(`FAILED-${name.replace(/[^a-z0-9]+/gi, '-')}`);
      } catch {
        // no page
      }
      throw e;
    }
  });
}

// ---------------------------------------------------------------- the test

describe('rota web UI', { timeout: 15 * 60_000, skip: NO_BROWSER }, () => {
  before(async () => {
    assert.ok(ROTA_BIN, 'set ROTA_BIN to the rota binary');
    assert.ok(existsSync(ROTA_BIN), `ROTA_BIN ${ROTA_BIN} does not exist`);
    assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`);
    dataDir = mkdtempSync(path.join(tmpdir(), 'rota-web-e2e-'));
    rota = startRota(dataDir);
    ({ url: api, accounts } = await rota.ready);
    await waitForReadyNodes(api, accounts);
    assert.ok(accounts.admin && accounts.alice, `accounts line not understood: ${JSON.stringify(accounts)}`);

    if (WEB_DIST) {
      cspServer = await startCspServer({ dist: WEB_DIST, upstream: api });
      base = cspServer.url;
      console.log(`# UI from ${WEB_DIST} through a CSP stand-in at ${base} (API ${api})`);
    } else {
      base = api;
      const res = await fetch(base + '/');
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
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    await context.exposeBinding('__rotaCsp', (_src, v) => cspViolations.push(v));
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        // @ts-ignore
        window.__rotaCsp(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`);
      });
    });
    page = await context.newPage();
    page.setDefaultTimeout(30_000);
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      const text = msg.text();
      // The browser logs every 4xx answer; the steps that expect one (a wrong
      // password, an invalid job) check the UI's message instead.
      if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(text)) return;
      consoleErrors.push(text);
    });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
  });

  after(async () => {
    try {
      await browser?.close();
    } catch {
      // already gone
    }
    await cspServer?.close();
    await stopProcess(rota?.child);
    if (failedBefore && rota) console.log(`# rota dev output:\n${rota.logs().slice(-4000)}`);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  step('sign-in screen; a wrong password shows the server message', async () => {
    await page.goto(base + '/');
    await page.getByTestId('signin-form').waitFor();
    await checkScreen('01-signin');
    const wrong = await apiCall(api, 'POST', '/api/v1/auth/login', null, { username: 'admin', password: 'not-the-password' });
    assert.equal(wrong.status, 401);
    const serverMessage = wrong.json.error.message;
    await signIn('admin', 'not-the-password');
    const err = page.getByTestId('form-error');
    await err.waitFor();
    assert.equal((await err.textContent()).trim(), serverMessage);
    await checkScreen('02-signin-error');
  });

  step('admin signs in and sees 14 GPU tiles on 3 nodes, in both themes', async () => {
    await signIn('admin', accounts.admin);
    await eventually('14 GPU tiles', async () => (await page.getByTestId('gpu-tile').count()) === 14);
    assert.equal(await page.getByTestId('node-card').count(), 3);
    await page.getByTestId('totals').waitFor();
    // Live data has arrived: every tile shows a utilisation reading.
    await eventually('readings on every tile', () =>
      page.evaluate(() =>
        [...document.querySelectorAll('[data-testid="gpu-tile"] .util')].every((e) => /\d+%/.test(e.textContent)),
      ),
    );
    const perNode = await page.evaluate(() => {
      const m = {};
      for (const t of document.querySelectorAll('[data-testid="gpu-tile"]')) m[t.dataset.node] = (m[t.dataset.node] || 0) + 1;
      return Object.values(m).sort((a, b) => b - a);
    });
    assert.deepEqual(perNode, [8, 4, 2]);
    assert.match(await page.getByTestId('current-user').textContent(), /admin/);
    await checkScreen('03-overview-light');
    await page.getByTestId('theme-toggle').click();
    await eventually('dark theme', () => page.evaluate(() => document.documentElement.dataset.theme === 'dark'));
    await checkScreen('04-overview-dark');
    await page.getByTestId('theme-toggle').click();
    await eventually('light theme', () => page.evaluate(() => document.documentElement.dataset.theme === 'light'));
  });

  step('a reload keeps the session', async () => {
    await page.reload();
    await eventually('14 GPU tiles after reload', async () => (await page.getByTestId('gpu-tile').count()) === 14);
    assert.equal(await page.getByTestId('signin-form').count(), 0);
    checkClean('reload');
  });

  step('alice signs in (her jobs run as nobody) and a bad job shows the 400 inline', async () => {
    const adminLogin = await apiCall(api, 'POST', '/api/v1/auth/login', null, { username: 'admin', password: accounts.admin });
    assert.equal(adminLogin.status, 200, adminLogin.text);
    if (process.getuid?.() === 0) {
      // Jobs never run as root: as `rota user set alice --unix-user nobody` does.
      const r = await apiCall(api, 'PATCH', '/api/v1/users/alice', adminLogin.json.token, { unix_user: 'nobody' });
      assert.equal(r.status, 200, r.text);
    }
    await page.getByTestId('sign-out').click();
    await page.getByTestId('signin-form').waitFor();
    await signIn('alice', accounts.alice);
    await page.getByTestId('current-user').waitFor();
    assert.match(await page.getByTestId('current-user').textContent(), /alice/);

    await navigate('#/submit');
    await page.getByTestId('submit-form').waitFor();
    await checkScreen('05-submit');
    const bad = { name: 'too-big', command: ['echo hi'], shell: true, groups: [{ role: 'worker', replicas: 1, gpus_per_task: 100 }] };
    const aliceLogin = await apiCall(api, 'POST', '/api/v1/auth/login', null, { username: 'alice', password: accounts.alice });
    const expected = await apiCall(api, 'POST', '/api/v1/jobs', aliceLogin.json.token, bad);
    assert.equal(expected.status, 400, expected.text);
    await page.getByTestId('submit-name').fill('too-big');
    await page.getByTestId('submit-mode-shell').check();
    await page.getByTestId('submit-command').fill('echo hi');
    await page.getByTestId('submit-workers').fill('1');
    await page.getByTestId('submit-gpus').fill('100');
    await page.getByTestId('submit-button').click();
    const err = page.getByTestId('form-error');
    await err.waitFor();
    assert.equal((await err.textContent()).trim(), expected.json.error.message);
    assert.match(page.url(), /#\/submit$/);
    await checkScreen('06-submit-error');
  });

  step('alice submits a job; it runs and shows in the list', async () => {
    await page.getByTestId('submit-name').fill('e2e-marker');
    await page.getByTestId('submit-mode-shell').check();
    await page.getByTestId('submit-command').fill(`echo ${MARK_START}; sleep 1; echo ${MARK_DONE}; sleep 60`);
    await page.getByTestId('submit-workers').fill('1');
    await page.getByTestId('submit-gpus').fill('1');
    await page.getByTestId('submit-button').click();
    await eventually('the job page', () => /#\/jobs\/\d+$/.test(page.url()));
    jobId = Number(/#\/jobs\/(\d+)$/.exec(page.url())[1]);

    await navigate('#/jobs');
    const row = page.locator(`[data-testid="job-row"][data-job-id="${jobId}"]`);
    await row.waitFor();
    await eventually(
      'the job running in the list',
      async () => (await row.getByTestId('job-state').textContent()).trim() === 'running',
      { timeout: 60_000 },
    );
    assert.match(await row.textContent(), /e2e-marker/);
    assert.match(await row.textContent(), /alice/);
    await checkScreen('07-jobs');
  });

  step('the job page shows the live log with the markers', async () => {
    await page.locator(`[data-testid="job-row"][data-job-id="${jobId}"] a`).first().click();
    await eventually('the job page', () => page.url().endsWith(`#/jobs/${jobId}`));
    const log = page.getByTestId('log-view');
    await log.waitFor();
    await eventually(`${MARK_START} in the log`, async () => (await log.textContent()).includes(MARK_START), { timeout: 30_000 });
    await eventually(`${MARK_DONE} in the log (followed)`, async () => (await log.textContent()).includes(MARK_DONE), {
      timeout: 30_000,
    });
    // The search box highlights matches.
    await page.getByTestId('log-search').fill('e2e-done');
    await eventually('a highlighted match', async () => ((await log.locator('mark').first().textContent()) || '').toLowerCase() === 'e2e-done');
    await page.getByTestId('log-only-matches').check();
    await eventually('only the matching line', async () => (await log.locator('.line').count()) === 1);
    await page.getByTestId('log-only-matches').uncheck();
    await page.getByTestId('tasks-table').waitFor();
    await checkScreen('08-job-detail');
  });

  step("the job's GPU tile is busy by the job on the overview", async () => {
    const aliceLogin = await apiCall(api, 'POST', '/api/v1/auth/login', null, { username: 'alice', password: accounts.alice });
    const job = (await apiCall(api, 'GET', `/api/v1/jobs/${jobId}`, aliceLogin.json.token)).json;
    const task = job.tasks.find((t) => t.gpus.length > 0);
    assert.ok(task, `no task with a GPU: ${JSON.stringify(job.tasks)}`);
    await navigate('#/');
    const tile = page.locator(`[data-testid="gpu-tile"][data-node="${task.node}"][data-index="${task.gpus[0]}"]`);
    await tile.waitFor();
    await eventually('the tile busy by the job', async () => (await tile.getAttribute('data-state')) === 'job', { timeout: 30_000 });
    assert.match(await tile.textContent(), new RegExp(`\\b${jobId}\\b`));
    assert.match(await tile.textContent(), /alice/);
    await checkScreen('09-overview-job');
  });

  step('alice cancels the job from its page', async () => {
    await navigate(`#/jobs/${jobId}`);
    await page.getByTestId('cancel-job').click();
    await page.getByTestId('cancel-confirm').click();
    const state = page.getByTestId('job-state');
    await eventually('state cancelled', async () => (await state.textContent()).trim() === 'cancelled', { timeout: 30_000 });
    assert.equal(await page.getByTestId('cancel-job').count(), 0);
    await checkScreen('10-job-cancelled');
  });

  step('phone-sized screens', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await navigate('#/');
    await eventually('tiles', async () => (await page.getByTestId('gpu-tile').count()) === 14);
    await checkScreen('11-overview-phone');
    await navigate('#/jobs');
    await page.locator(`[data-testid="job-row"][data-job-id="${jobId}"]`).waitFor();
    await checkScreen('12-jobs-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  step('a revoked session signs out with a notice', async () => {
    const token = await page.evaluate(() => localStorage.getItem('rota.token'));
    assert.ok(token, 'no token in localStorage');
    const r = await apiCall(api, 'POST', '/api/v1/auth/logout', token);
    assert.equal(r.status, 200, r.text);
    // The jobs page polls; its next call gets a 401.
    await page.getByTestId('signin-form').waitFor({ timeout: 30_000 });
    assert.match(await page.getByTestId('session-notice').textContent(), /Your session expired, sign in again/);
    assert.equal(await page.evaluate(() => localStorage.getItem('rota.token')), null);
    await checkScreen('13-session-expired');
    checkClean('the whole run');
  });
});

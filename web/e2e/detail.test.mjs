// End-to-end test of the node and GPU detail screens (history charts with
// uPlot, live samples, ranges, processes) and of the submit form's templates
// and preview, against a real `rota dev` (gpu-a: 8 GPUs, gpu-b: 4, gpu-c: 2) in
// Debian's Chromium. Same environment and checks as ui.test.mjs (axe-core on
// every screen, console errors, CSP violations: uPlot sizes its canvas through
// the CSSOM, which the CSP allows), screenshots to $ROTA_WEB_ARTIFACTS as
// det-*.png; its own `rota dev`. No fixed sleeps: every wait polls a condition.
//
//   ROTA_BIN=/path/to/rota node --test e2e/detail.test.mjs
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
let jobTask = null; // {node, gpu} of the job's first task
const consoleErrors = [];
const cspViolations = [];
const pageErrors = [];
let failedBefore = false;

async function shot(name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `det-${name}.png`), fullPage: true });
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

describe('rota web UI: node and GPU detail, job templates', { timeout: 15 * 60_000, skip: NO_BROWSER }, () => {
  before(async () => {
    assert.ok(ROTA_BIN, 'set ROTA_BIN to the rota binary');
    assert.ok(existsSync(ROTA_BIN), `ROTA_BIN ${ROTA_BIN} does not exist`);
    assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`);
    dataDir = mkdtempSync(path.join(tmpdir(), 'rota-web-det-'));
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

  /** The charts on screen have a canvas and a summary with numbers (samples arrived). */
  async function chartsReady(n) {
    await eventually(`${n} charts with a canvas`, async () => (await page.locator('[data-testid="chart"] canvas').count()) === n);
    await eventually(
      'chart summaries with numbers',
      () =>
        page.evaluate(() =>
          [...document.querySelectorAll('[data-testid="chart-summary"]')].every((e) => /average \d/.test(e.textContent)),
        ),
      { timeout: 30_000 },
    );
  }

  async function login(user) {
    const r = await apiCall(api, 'POST', '/api/v1/auth/login', null, { username: user, password: accounts[user] });
    assert.equal(r.status, 200, r.text);
    return r.json.token;
  }

  step('a GPU tile opens the GPU detail: charts with summaries after samples arrive', async () => {
    await page.goto(base + '/');
    await page.getByTestId('signin-form').waitFor();
    await signIn('admin', accounts.admin);
    await eventually('14 GPU tiles', async () => (await page.getByTestId('gpu-tile').count()) === 14);
    const tile = page.locator('[data-testid="gpu-tile"][data-node="gpu-a"][data-index="1"]');
    // The tile is the link (the GPU name's ::after covers it): click its middle.
    await tile.click();
    await eventually('the GPU detail route', () => page.url().endsWith('#/nodes/gpu-a/gpus/1'));
    await page.locator('h1', { hasText: 'gpu-a · GPU 1' }).waitFor();
    await chartsReady(4);
    const group = page.getByRole('group', { name: 'Time range' });
    assert.equal(await group.locator('button').count(), 4);
    assert.equal(await page.getByTestId('range-1h').getAttribute('aria-pressed'), 'true');
    const util = page.locator('[data-chart="c-util"] [data-testid="chart-summary"]');
    assert.match(await util.textContent(), /Utilisation over the last hour\. GPU: minimum \d+ %, average \d+ %, maximum \d+ %; Memory:/);
    // Live: samples from the stream land at the right edge (the newest bucket moves on).
    const lastX = () => page.locator('[data-chart="c-util"]').getAttribute('data-last').then(Number);
    const first = await lastX();
    await eventually('a newer bucket from the stream', async () => (await lastX()) > first, { timeout: 30_000 });
    await eventually('current readings', async () => /\d+%/.test(await page.getByTestId('gpu-now').textContent()));
    await checkScreen('01-gpu');
    await page.getByTestId('theme-toggle').click();
    await eventually('dark theme', () => page.evaluate(() => document.documentElement.dataset.theme === 'dark'));
    await chartsReady(4);
    await checkScreen('02-gpu-dark');
    await page.getByTestId('theme-toggle').click();
    await eventually('light theme', () => page.evaluate(() => document.documentElement.dataset.theme === 'light'));
  });

  step('the range buttons reload the history', async () => {
    for (const [key, words] of [
      ['15m', 'the last 15 minutes'],
      ['24h', 'the last 24 hours'],
      ['7d', 'the last 7 days'],
      ['1h', 'the last hour'],
    ]) {
      await page.getByTestId(`range-${key}`).click();
      await eventually(`range ${key} in the URL`, () => page.url().endsWith(`#/nodes/gpu-a/gpus/1?range=${key}`));
      assert.equal(await page.getByTestId(`range-${key}`).getAttribute('aria-pressed'), 'true');
      await eventually(`summaries over ${words}`, () =>
        page.evaluate(
          (w) =>
            [...document.querySelectorAll('[data-testid="chart-summary"]')].every(
              (e) => e.textContent.includes(`over ${w}.`) && /average \d/.test(e.textContent),
            ),
          words,
        ),
      );
      await chartsReady(4);
    }
    await checkScreen('03-gpu-ranges');
  });

  step('the node detail: CPU, memory and load charts and GPU tiles linking to their detail', async () => {
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'gpu-a' }).click();
    await eventually('the node route', () => page.url().endsWith('#/nodes/gpu-a'));
    await page.locator('h1', { hasText: 'gpu-a' }).waitFor();
    await chartsReady(3);
    assert.equal(await page.getByTestId('gpu-tile').count(), 8);
    assert.match(await page.locator('[data-chart="c-cpu"] [data-testid="chart-summary"]').textContent(), /CPU over the last hour\. CPU: minimum/);
    await checkScreen('04-node');
    // From the overview, a node card's name opens it too.
    await navigate('#/');
    await page.locator('[data-testid="node-card"][data-node="gpu-b"] [data-testid="node-link"]').click();
    await eventually('the gpu-b route', () => page.url().endsWith('#/nodes/gpu-b'));
    await chartsReady(3);
    assert.equal(await page.getByTestId('gpu-tile').count(), 4);
    await page.locator('[data-testid="gpu-tile"][data-index="2"] [data-testid="gpu-link"]').click();
    await eventually('the gpu-b GPU 2 route', () => page.url().endsWith('#/nodes/gpu-b/gpus/2'));
    await chartsReady(4);
    checkClean('node detail');
  });

  step('alice previews a PyTorch DDP job from the template (MASTER_ADDR, WORLD_SIZE=2) and submits it', async () => {
    const adminToken = await login('admin');
    if (process.getuid?.() === 0) {
      // Jobs never run as root: as `rota user set alice --unix-user nobody` does.
      const r = await apiCall(api, 'PATCH', '/api/v1/users/alice', adminToken, { unix_user: 'nobody' });
      assert.equal(r.status, 200, r.text);
    }
    await page.getByTestId('sign-out').click();
    await page.getByTestId('signin-form').waitFor();
    await signIn('alice', accounts.alice);
    await page.getByTestId('current-user').waitFor();
    await navigate('#/submit');
    await page.getByTestId('submit-form').waitFor();
    await page.getByTestId('submit-template').selectOption('pytorch-ddp');
    assert.equal(await page.getByTestId('submit-framework').inputValue(), 'pytorch');
    await page.getByTestId('submit-name').fill('e2e-ddp');
    await page.getByTestId('submit-mode-shell').check();
    await page.getByTestId('submit-command').fill('echo rank $RANK of $WORLD_SIZE; sleep 300');
    const group = page.getByTestId('submit-group');
    assert.equal(await group.count(), 1);
    assert.equal(await group.getByTestId('submit-role').inputValue(), 'worker');
    await group.getByTestId('submit-workers').fill('2');
    await group.getByTestId('submit-gpus').fill('1');
    // The automatic preview (debounced) shows both ranks' environment.
    const procs = page.getByTestId('preview-process');
    await eventually('2 processes in the preview', async () => (await procs.count()) === 2);
    const env = (name, key) => page.locator(`[data-testid="preview-process"][data-name="${name}"] [data-testid="preview-env"][data-key="${key}"]`);
    await eventually('WORLD_SIZE=2 in the preview', async () => /\b2\b/.test(await env('worker-1', 'WORLD_SIZE').locator('td').textContent()));
    assert.match(await env('worker-0', 'MASTER_ADDR').textContent(), /MASTER_ADDR/);
    assert.equal((await env('worker-1', 'RANK').locator('td').textContent()).trim(), '1');
    assert.equal(await env('worker-0', 'MASTER_ADDR').locator('mark').count(), 1, 'MASTER_ADDR is highlighted');
    assert.match(await page.getByTestId('preview-note').textContent(), /examples/);
    assert.match(await page.locator('[data-testid="preview-process"][data-name="worker-0"] [data-testid="preview-argv"]').textContent(), /sleep 300/);
    // The button asks again (same answer).
    await page.getByTestId('submit-preview').click();
    await eventually('preview after the button', async () => (await procs.count()) === 2);
    await checkScreen('05-submit-preview');

    // A preview error shows inline, as for submit (400 from the server).
    await group.getByTestId('submit-gpus').fill('100');
    await page.getByTestId('submit-preview').click();
    const tooBig = {
      name: 'e2e-ddp',
      framework: 'pytorch',
      shell: true,
      command: ['echo rank $RANK of $WORLD_SIZE; sleep 300'],
      groups: [{ role: 'worker', replicas: 2, gpus_per_task: 100 }],
    };
    const expected = await apiCall(api, 'POST', '/api/v1/jobs/preview', await login('alice'), tooBig);
    assert.equal(expected.status, 400, expected.text);
    await eventually(
      "the server's 400 message inline",
      async () => ((await page.getByTestId('preview-error').textContent()) || '').trim() === expected.json.error.message,
    );
    await group.getByTestId('submit-gpus').fill('1');
    await eventually('the preview back', async () => (await procs.count()) === 2 && (await page.getByTestId('preview-error').count()) === 0);

    await page.getByTestId('submit-button').click();
    await eventually('the job page', () => /#\/jobs\/\d+$/.test(page.url()));
    jobId = Number(/#\/jobs\/(\d+)$/.exec(page.url())[1]);
    await eventually('the job running', async () => (await page.getByTestId('job-state').textContent()).trim() === 'running', { timeout: 60_000 });
    const token = await login('alice');
    const job = (await apiCall(api, 'GET', `/api/v1/jobs/${jobId}`, token)).json;
    assert.equal(job.framework, 'pytorch');
    assert.equal(job.tasks.length, 2);
    const t = job.tasks.find((x) => x.gpus.length === 1);
    jobTask = { node: t.node, gpu: t.gpus[0], unix: t.unix_user };
  });

  step("the job's GPU detail lists its process with the job link", async () => {
    await navigate(`#/nodes/${jobTask.node}/gpus/${jobTask.gpu}`);
    await chartsReady(4);
    const link = page.locator('[data-testid="proc-row"] [data-testid="proc-job"]');
    await eventually('a process linked to the job', async () => (await link.count()) >= 1, { timeout: 30_000 });
    assert.equal(await link.first().getAttribute('href'), `#/jobs/${jobId}`);
    const row = page.getByTestId('proc-row').filter({ has: page.getByTestId('proc-job') }).first();
    if (jobTask.unix) assert.match(await row.textContent(), new RegExp(jobTask.unix));
    // The rota user is known: the owner of the job holding the GPU (jobs refresh every 4 s).
    await eventually('alice as the rota user', async () => /alice/.test(await row.textContent()));
    await eventually('the GPU in state Job', async () => (await page.getByTestId('gpu-state').textContent()).trim() === 'Job');
    await checkScreen('06-gpu-job');
  });

  step('alice cancels the job from its page', async () => {
    await page.locator('[data-testid="proc-job"]').first().click();
    await eventually('the job page', () => page.url().endsWith(`#/jobs/${jobId}`));
    await page.getByTestId('cancel-job').click();
    await page.getByTestId('cancel-confirm').click();
    await eventually('state cancelled', async () => (await page.getByTestId('job-state').textContent()).trim() === 'cancelled', { timeout: 30_000 });
    await navigate(`#/nodes/${jobTask.node}/gpus/${jobTask.gpu}`);
    await eventually('the process gone', async () => (await page.locator('[data-testid="proc-job"]').count()) === 0, { timeout: 30_000 });
    await checkScreen('07-gpu-after');
  });

  step('phone-sized GPU detail', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await chartsReady(4);
    await checkScreen('08-gpu-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
    checkClean('the whole run');
  });
});

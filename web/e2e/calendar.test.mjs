// End-to-end test of the reservations calendar and the violations screen
// against a real `rota dev` (gpu-a: 8 GPUs, gpu-b: 4, gpu-c: 2), in Debian's
// Chromium. Same environment and checks as ui.test.mjs (axe-core, console
// errors, CSP violations, screenshots to $ROTA_WEB_ARTIFACTS as cal-*.png);
// its own `rota dev`. No fixed sleeps: every wait polls a condition.
//
//   ROTA_BIN=/path/to/rota node --test e2e/calendar.test.mjs
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
import { spawn } from 'node:child_process';

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
let squatter = null; // the process on a reserved GPU
const consoleErrors = [];
const cspViolations = [];
const pageErrors = [];
let failedBefore = false;

async function shot(name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `cal-${name}.png`), fullPage: true });
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

describe('rota web UI: calendar and violations', { timeout: 15 * 60_000, skip: NO_BROWSER }, () => {
  before(async () => {
    assert.ok(ROTA_BIN, 'set ROTA_BIN to the rota binary');
    assert.ok(existsSync(ROTA_BIN), `ROTA_BIN ${ROTA_BIN} does not exist`);
    assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`);
    dataDir = mkdtempSync(path.join(tmpdir(), 'rota-web-cal-'));
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
    if (squatter && squatter.exitCode === null) {
      try {
        process.kill(-squatter.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await stopProcess(rota?.child);
    if (failedBefore && rota) console.log(`# rota dev output:\n${rota.logs().slice(-4000)}`);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  // Tomorrow, local time: wholly in the future, so every slot can be booked.
  const tomorrow = new Date();
  tomorrow.setDate(tomorrow.getDate() + 1);
  tomorrow.setHours(0, 0, 0, 0);
  const T0 = tomorrow.getTime();
  const HOUR = 3_600_000;
  const pad = (n) => String(n).padStart(2, '0');
  const dateParam = `${tomorrow.getFullYear()}-${pad(tomorrow.getMonth() + 1)}-${pad(tomorrow.getDate())}`;
  const localInput = (t) => {
    const d = new Date(t);
    return `${dateParam}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
  };
  const HOUR_PX = 64; // day view
  const LABEL_W = 150;
  let resId = 0;
  let aliceToken = '';
  let adminToken = '';

  /** The screen x of time `t` in a GPU row of the day view. */
  async function xOf(node, gpu, t) {
    const row = page.locator(`[data-testid="cal-row"][data-node="${node}"][data-gpu="${gpu}"]`);
    const box = await row.boundingBox();
    return { x: box.x + LABEL_W + ((t - T0) / HOUR) * HOUR_PX, y: box.y + box.height / 2 };
  }

  async function drag(from, to) {
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 5 });
    await page.mouse.move(to.x, to.y, { steps: 5 });
    await page.mouse.up();
  }

  async function getRes(id) {
    const r = await apiCall(api, 'GET', `/api/v1/reservations/${id}`, aliceToken);
    assert.equal(r.status, 200, r.text);
    return r.json;
  }

  async function switchUser(user) {
    await page.getByTestId('sign-out').click();
    await page.getByTestId('signin-form').waitFor();
    await signIn(user, accounts[user]);
    await eventually(`${user} signed in`, async () => /\b/.test((await page.getByTestId('current-user').textContent()) || '') && (await page.getByTestId('current-user').textContent()).includes(user));
  }

  step('alice opens the calendar: GPU rows by node, day and week views', async () => {
    aliceToken = (await apiCall(api, 'POST', '/api/v1/auth/login', null, { username: 'alice', password: accounts.alice })).json.token;
    adminToken = (await apiCall(api, 'POST', '/api/v1/auth/login', null, { username: 'admin', password: accounts.admin })).json.token;
    await page.goto(base + '/');
    await page.getByTestId('signin-form').waitFor();
    await signIn('alice', accounts.alice);
    await page.getByTestId('current-user').waitFor();
    await page.getByRole('link', { name: 'Reservations' }).click();
    await page.getByTestId('calendar').waitFor();
    await eventually('14 GPU rows', async () => (await page.getByTestId('cal-row').count()) === 14);
    assert.equal(await page.getByTestId('cal-node').count(), 3);
    await page.getByTestId('now-line').waitFor();
    await checkScreen('01-calendar-today');
    await page.getByTestId('cal-week').click();
    await eventually('week view', async () => /view=week/.test(page.url()));
    await page.getByTestId('now-line').waitFor();
    await checkScreen('02-calendar-week');
    await navigate(`#/reservations?view=day&date=${dateParam}`);
    await eventually('tomorrow shown', async () => (await page.getByTestId('now-line').count()) === 0);
  });

  step('alice books 2 GPUs of gpu-b by dragging across rows and time', async () => {
    const from = await xOf('gpu-b', 0, T0 + 10 * HOUR + 5 * 60_000);
    const to = await xOf('gpu-b', 1, T0 + 11 * HOUR + 55 * 60_000);
    await drag(from, to);
    const dlg = page.getByTestId('book-dialog');
    await dlg.waitFor();
    assert.equal(await page.getByTestId('book-node').inputValue(), 'gpu-b');
    assert.equal(await page.getByTestId('book-start').inputValue(), localInput(T0 + 10 * HOUR));
    assert.equal(await page.getByTestId('book-end').inputValue(), localInput(T0 + 12 * HOUR));
    const checked = await page.$$eval('[data-testid="book-gpu"]', (els) => els.filter((e) => e.checked).map((e) => Number(e.dataset.index)));
    assert.deepEqual(checked, [0, 1]);
    await page.getByTestId('book-title').fill('e2e training run');
    await checkScreen('03-book-dialog');
    await page.getByTestId('book-submit').click();
    await eventually('the dialog closed', async () => (await dlg.count()) === 0);
    const block = page.locator('[data-testid="res-block"][data-owner="alice"]');
    await block.waitFor();
    assert.match(await block.textContent(), /e2e training run/);
    assert.match(await block.textContent(), /alice/);
    const mine = await apiCall(api, 'GET', '/api/v1/reservations?mine=true', aliceToken);
    const r = mine.json.reservations.find((x) => x.title === 'e2e training run');
    assert.ok(r, mine.text);
    assert.equal(r.node, 'gpu-b');
    assert.deepEqual(r.gpus, [0, 1]);
    assert.equal(Date.parse(r.start), T0 + 10 * HOUR);
    assert.equal(Date.parse(r.end), T0 + 12 * HOUR);
    resId = r.id;
    assert.equal(await block.getAttribute('data-res-id'), String(resId));
    await checkScreen('04-booked');
  });

  step('alice moves the reservation by dragging, then drags its end', async () => {
    const block = page.locator(`[data-testid="res-block"][data-res-id="${resId}"]`);
    let box = await block.boundingBox();
    await drag({ x: box.x + 20, y: box.y + box.height / 2 }, { x: box.x + 20 + HOUR_PX, y: box.y + box.height / 2 });
    await eventually('moved by an hour (API)', async () => Date.parse((await getRes(resId)).start) === T0 + 11 * HOUR);
    assert.equal(Date.parse((await getRes(resId)).end), T0 + 13 * HOUR);
    await eventually('the block at its new place', async () => {
      const b = await block.boundingBox();
      return b && Math.abs(b.x - (box.x + HOUR_PX)) < 3;
    });
    box = await block.boundingBox();
    await drag({ x: box.x + box.width - 3, y: box.y + box.height / 2 }, { x: box.x + box.width - 3 + HOUR_PX, y: box.y + box.height / 2 });
    await eventually('end extended by an hour (API)', async () => Date.parse((await getRes(resId)).end) === T0 + 14 * HOUR);
    assert.equal(Date.parse((await getRes(resId)).start), T0 + 11 * HOUR);
    await checkScreen('05-moved');
  });

  step('admin drags an overlapping span: the 409 conflict shows inline', async () => {
    await switchUser('admin');
    await navigate(`#/reservations?view=day&date=${dateParam}`);
    await page.locator(`[data-testid="res-block"][data-res-id="${resId}"]`).waitFor();
    // From a free cell (gpu-b/2) up into alice's block on gpu-b/1.
    const from = await xOf('gpu-b', 2, T0 + 12 * HOUR + 5 * 60_000);
    const to = await xOf('gpu-b', 1, T0 + 12 * HOUR + 50 * 60_000);
    await drag(from, to);
    await page.getByTestId('book-dialog').waitFor();
    await page.getByTestId('book-title').fill('overlap');
    await page.getByTestId('book-submit').click();
    const err = page.getByTestId('form-error');
    await err.waitFor();
    const same = await apiCall(api, 'POST', '/api/v1/reservations', adminToken, {
      node: 'gpu-b',
      gpus: [1, 2],
      start: new Date(T0 + 12 * HOUR).toISOString().replace(/\.000Z$/, 'Z'),
      end: new Date(T0 + 13 * HOUR).toISOString().replace(/\.000Z$/, 'Z'),
      title: 'overlap',
    });
    assert.equal(same.status, 409, same.text);
    assert.equal((await err.textContent()).trim(), same.json.error.message);
    assert.match(same.json.error.message, /alice/);
    assert.equal(await page.getByTestId('book-dialog').count(), 1, 'the dialog stays open');
    await checkScreen('06-conflict');
    await page.getByTestId('book-cancel').click();
    await eventually('the dialog closed', async () => (await page.getByTestId('book-dialog').count()) === 0);
  });

  step('alice opens the details with the keyboard and cancels the reservation', async () => {
    await switchUser('alice');
    await navigate(`#/reservations?view=day&date=${dateParam}`);
    const block = page.locator(`[data-testid="res-block"][data-res-id="${resId}"]`);
    await block.waitFor();
    await block.focus();
    await page.keyboard.press('Enter');
    const dlg = page.getByTestId('res-details');
    await dlg.waitFor();
    assert.match(await page.getByTestId('res-owner').textContent(), /alice/);
    assert.match(await page.getByTestId('res-gpus').textContent(), /gpu-b \/ 0, 1/);
    await checkScreen('07-details');
    await page.getByTestId('res-cancel').click();
    await page.getByTestId('res-cancel-confirm').click();
    await eventually('the dialog closed', async () => (await dlg.count()) === 0);
    await eventually('the block gone', async () => (await block.count()) === 0);
    assert.equal((await getRes(resId)).state, 'cancelled');
    checkClean('cancel');
  });

  step('the New reservation button books without a mouse', async () => {
    await page.getByTestId('new-reservation').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('book-dialog').waitFor();
    await page.getByTestId('book-title').fill('keyboard booking');
    await page.getByTestId('book-node').selectOption('gpu-c');
    await page.getByTestId('book-start').fill(localInput(T0 + 15 * HOUR));
    await page.getByTestId('book-end').fill(localInput(T0 + 16 * HOUR));
    await page.getByTestId('book-submit').press('Enter');
    await eventually('the dialog closed', async () => (await page.getByTestId('book-dialog').count()) === 0);
    const mine = await apiCall(api, 'GET', '/api/v1/reservations?mine=true&state=upcoming', aliceToken);
    const r = mine.json.reservations.find((x) => x.title === 'keyboard booking');
    assert.ok(r, mine.text);
    assert.equal(r.node, 'gpu-c');
    assert.equal(Date.parse(r.start), T0 + 15 * HOUR);
    await page.locator(`[data-testid="res-block"][data-res-id="${r.id}"]`).waitFor();
  });

  step('a process on a reserved GPU shows up as a violation with its ladder', async (t) => {
    if (process.getuid?.() !== 0) {
      t.skip('needs root to start a process as nobody');
      return;
    }
    const now = Date.now();
    const r = await apiCall(api, 'POST', '/api/v1/reservations', adminToken, {
      node: 'gpu-a',
      gpus: [3],
      start: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      end: new Date(now + HOUR).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      title: 'guarded',
    });
    assert.equal(r.status, 201, r.text);
    squatter = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'sleep', '120'], {
      env: { ...process.env, ROTA_SIM_NODE: 'gpu-a', CUDA_VISIBLE_DEVICES: '3' },
      stdio: 'ignore',
      detached: true,
    });
    await switchUser('admin');
    await page.getByRole('link', { name: 'Violations' }).click();
    const row = page.locator('[data-testid="violation-row"][data-node="gpu-a"][data-gpu="3"]');
    await row.waitFor({ timeout: 45_000 });
    assert.match(await row.textContent(), /nobody/);
    assert.match(await row.textContent(), /admin/);
    await checkScreen('08-violations');
    await page.getByTestId('violations-state').selectOption('resolved');
    await eventually('state=resolved in the URL', async () => /state=resolved/.test(page.url()));
    await page.getByTestId('violations-state').selectOption('');
    await row.waitFor();
    await row.locator('a').first().click();
    await page.getByTestId('violation-events').waitFor();
    await page.locator('[data-testid="violation-event"][data-action="open"]').waitFor();
    assert.match(await page.getByTestId('violation-offender').textContent(), /nobody/);
    await checkScreen('09-violation-detail');
    process.kill(-squatter.pid, 'SIGKILL');
    checkClean('the whole run');
  });
});

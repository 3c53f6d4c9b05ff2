// End-to-end test of the reservations calendar and the violations screen
// against a real `rota dev` (gpu-a: 8 GPUs, gpu-b: 4, gpu-c: 2), in Debian's
// Chromium. Same environment and checks as ui.test.mjs (axe-core, console
// errors, CSP violations, screenshots to $ROTA_WEB_ARTIFACTS as cal-*.png);
// its own `rota dev`. No fixed sleeps: every wait polls a condition.
//
//   ROTA_BIN=/path/to/rota node --test e2e/calendar.test.mjs
import { before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { NO_BROWSER, apiCall, browserSuite, eventually } from './helpers.mjs';

// ---------------------------------------------------------------- state

let squatter = null; // the process on a reserved GPU

// ---------------------------------------------------------------- the test

describe('rota web UI: calendar and violations', { timeout: 15 * 60_000, skip: NO_BROWSER }, () => {
  const ui = browserSuite({
    tmpPrefix: 'rota-web-cal-',
    shotPrefix: 'cal-',
    cleanup: async () => {
      if (squatter && squatter.exitCode === null) {
        try {
          process.kill(-squatter.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    },
  });
  const { step, shot, checkA11y, checkClean, checkScreen, signIn, navigate, consoleErrors } = ui;
  let page, base, api, accounts;
  before(() => {
    ({ page, base, api, accounts } = ui);
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
    // Scrolled sideways by part of an hour, the day view comes to rest on an hour: no hour
    // label half hidden under the GPU column.
    await page.getByTestId('calendar').evaluate((el) => el.scrollTo({ left: 20 }));
    const firstLabelWhole = () =>
      page.evaluate(() => {
        const edge = document.querySelector('[data-testid="calendar"] .corner').getBoundingClientRect().right;
        const ticks = [...document.querySelectorAll('[data-testid="calendar"] .tick')].map((t) => t.getBoundingClientRect());
        const first = ticks.find((r) => r.right > edge);
        return first && first.left >= edge - 0.5;
      });
    await eventually('the first hour label in view whole', firstLabelWhole, { timeout: 5_000 });
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

  step('a collapsed node row still shows its bookings; expand all / collapse all', async () => {
    const mine = await apiCall(api, 'GET', '/api/v1/reservations?mine=true&state=upcoming', aliceToken);
    const r = mine.json.reservations.find((x) => x.title === 'keyboard booking');
    const toggle = page.locator('[data-testid="cal-node"][data-node="gpu-c"]');
    await toggle.click();
    await eventually('gpu-c collapsed', async () => (await toggle.getAttribute('aria-expanded')) === 'false');
    assert.equal(await page.locator('[data-testid="cal-row"][data-node="gpu-c"]').count(), 0);
    const band = page.locator(`[data-testid="cal-node-track"][data-node="gpu-c"] [data-testid="node-band"][data-band-res="${r.id}"]`);
    await band.waitFor();
    assert.match(await band.textContent(), /alice · 1 GPU\b/);
    assert.match(await band.getAttribute('aria-label'), /keyboard booking, alice \(you\), 1 GPU/);
    await checkScreen('07a-collapsed-band');
    // A band too narrow for its text ends it in an ellipsis, within the band, and says it all
    // in its tooltip (the width is set as the page sets it, through the CSSOM).
    const narrow = await band.evaluate((b) => {
      const before = b.style.width;
      b.style.width = '48px';
      const o = b.querySelector('.o');
      const r = {
        bandRight: b.getBoundingClientRect().right,
        ownerRight: o.getBoundingClientRect().right,
        clipped: o.scrollWidth > o.clientWidth,
        overflow: getComputedStyle(o).textOverflow,
        title: b.title,
      };
      b.style.width = before;
      return r;
    });
    assert.ok(narrow.ownerRight <= narrow.bandRight, `a narrow band's label runs past its end: ${JSON.stringify(narrow)}`);
    assert.equal(narrow.overflow, 'ellipsis', `a narrow band's label is cut off without an ellipsis: ${JSON.stringify(narrow)}`);
    assert.ok(narrow.clipped, `the label should not fit 48 px: ${JSON.stringify(narrow)}`);
    assert.match(narrow.title, /keyboard booking, alice \(you\), 1 GPU/, 'the whole text in the tooltip');
    await band.click();
    await page.getByTestId('res-details').waitFor();
    assert.match(await page.getByTestId('res-gpus').textContent(), /gpu-c/);
    await page.getByTestId('res-close').click();
    await eventually('the dialog closed', async () => (await page.getByTestId('res-details').count()) === 0);
    const all = page.getByTestId('cal-fold-all');
    assert.equal((await all.textContent()).trim(), 'Expand all');
    await all.click();
    await eventually('14 GPU rows again', async () => (await page.getByTestId('cal-row').count()) === 14);
    assert.equal((await all.textContent()).trim(), 'Collapse all');
    await all.click();
    await eventually('no GPU rows', async () => (await page.getByTestId('cal-row').count()) === 0);
    await page.locator(`[data-testid="node-band"][data-band-res="${r.id}"]`).waitFor();
    await all.click();
    await eventually('14 GPU rows', async () => (await page.getByTestId('cal-row').count()) === 14);
  });

  step('a running job shows on its GPU; a new booking starts on a GPU no job holds', async (t) => {
    if (process.getuid?.() !== 0) {
      t.skip('needs root to run a job as nobody');
      return;
    }
    // Jobs never run as root: as `rota user set alice --unix-user nobody` does.
    assert.equal((await apiCall(api, 'PATCH', '/api/v1/users/alice', adminToken, { unix_user: 'nobody' })).status, 200);
    const job = await apiCall(api, 'POST', '/api/v1/jobs', aliceToken, {
      name: 'on-calendar', command: ['sleep', '300'], time_limit: '2h',
      groups: [{ role: 'worker', replicas: 1, gpus_per_task: 1, nodes: ['gpu-a'] }],
    });
    assert.equal(job.status, 201, job.text);
    const running = await eventually('the job running', async () => {
      const j = (await apiCall(api, 'GET', `/api/v1/jobs/${job.json.id}`, aliceToken)).json;
      return j.state === 'running' ? j : null;
    }, { timeout: 60_000 });
    assert.ok(running.started && running.deadline, JSON.stringify(running));
    assert.equal(Date.parse(running.deadline) - Date.parse(running.started), 2 * HOUR);
    const gpu = running.tasks[0].gpus[0];
    await navigate('#/reservations?view=day');
    const bar = page.locator(`[data-testid="cal-row"][data-node="gpu-a"][data-gpu="${gpu}"] [data-testid="job-bar"][data-job-id="${job.json.id}"]`);
    await bar.waitFor({ timeout: 30_000 });
    assert.match(await bar.textContent(), new RegExp(`job ${job.json.id} · alice`));
    await page.getByTestId('new-reservation').click();
    await page.getByTestId('book-dialog').waitFor();
    assert.equal(await page.getByTestId('book-node').inputValue(), 'gpu-a');
    const checked = await page.$$eval('[data-testid="book-gpu"]', (els) => els.filter((e) => e.checked).map((e) => Number(e.dataset.index)));
    assert.equal(checked.length, 1);
    assert.notEqual(checked[0], gpu, 'the booking starts on the GPU the job holds');
    const busy = page.locator(`label:has([data-testid="book-gpu"][data-index="${gpu}"]) [data-testid="book-gpu-busy"]`);
    assert.match(await busy.textContent(), new RegExp(`job ${job.json.id} \\(alice\\) until`));
    await checkScreen('07b-calendar-job');
    await page.keyboard.press('Escape');
    await eventually('the dialog closed', async () => (await page.getByTestId('book-dialog').count()) === 0);
    assert.equal((await apiCall(api, 'POST', `/api/v1/jobs/${job.json.id}/cancel`, aliceToken)).status, 200);
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
    // The GPU variables are set by `env`, after setpriv has dropped to nobody: the
    // simulated GPU never shows the process while it still runs as root.
    squatter = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups',
      'env', 'ROTA_SIM_NODE=gpu-a', 'CUDA_VISIBLE_DEVICES=3', 'sleep', '120'], {
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
    // One page (or none) of violations: no Newer / Older buttons that both do nothing.
    await eventually('the row gone', async () => (await row.count()) === 0);
    assert.equal(await page.getByTestId('violations-pager').count(), 0);
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

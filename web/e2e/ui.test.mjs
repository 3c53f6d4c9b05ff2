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
// wait polls a condition until a deadline. The set-up (rota dev, Chromium, the
// checks) is browserSuite in helpers.mjs, shared by every browser suite.
import { before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { NO_BROWSER, apiCall, browserSuite, eventually } from './helpers.mjs';

const MARK_START = 'ROTA-E2E-START-7f3a';
const MARK_DONE = 'ROTA-E2E-DONE-7f3a';

// ---------------------------------------------------------------- state

let jobId = 0;

// ---------------------------------------------------------------- the test

describe('rota web UI', { timeout: 15 * 60_000, skip: NO_BROWSER }, () => {
  const ui = browserSuite({ tmpPrefix: 'rota-web-e2e-', shotPrefix: '' });
  const { step, shot, checkA11y, checkClean, checkScreen, signIn, navigate, consoleErrors } = ui;
  let page, base, api, accounts;
  before(() => {
    ({ page, base, api, accounts } = ui);
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
    // No name typed: the form names the job 'job', as rota run does, and the server's own
    // message about the GPUs shows (not a refusal of the form's).
    const bad = { name: 'job', command: ['echo hi'], shell: true, groups: [{ role: 'worker', replicas: 1, gpus_per_task: 100 }] };
    const aliceLogin = await apiCall(api, 'POST', '/api/v1/auth/login', null, { username: 'alice', password: accounts.alice });
    const expected = await apiCall(api, 'POST', '/api/v1/jobs', aliceLogin.json.token, bad);
    assert.equal(expected.status, 400, expected.text);
    await page.getByTestId('submit-name').fill('');
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
    assert.match(await tile.getByTestId('tile-processes').textContent(), /^Processes: /, 'a capital, like the tile\'s other labels');
    await checkScreen('09-overview-job');
  });

  step('the overview narrows to busy, free or drained nodes (URL, counts, keyboard) and has a compact view', async () => {
    // What the tiles say now, per node (the job keeps its GPU busy).
    const nodeStates = () =>
      page.evaluate(() => {
        const m = {};
        for (const t of document.querySelectorAll('[data-testid="gpu-tile"]')) (m[t.dataset.node] ??= []).push(t.dataset.state);
        return m;
      });
    const cards = async () => (await page.getByTestId('node-card').evaluateAll((cs) => cs.map((c) => c.dataset.node))).sort();
    // "3 nodes" (the word for screen readers only).
    const count = async (key) => parseInt(await page.locator(`[data-testid="node-state-count"][data-state="${key}"]`).textContent(), 10);
    // The counts are those of the tiles (read together: a sample may change a tile meanwhile).
    let last = null;
    const { busy, free } = await eventually('the counts as the tiles say', async () => {
      const all = await nodeStates();
      const busy = Object.keys(all).filter((n) => all[n].some((st) => st === 'job' || st === 'hand')).sort();
      const free = Object.keys(all).filter((n) => all[n].includes('free')).sort();
      const got = { all: await count('all'), busy: await count('busy'), free: await count('free'), drained: await count('drained') };
      last = { all, got };
      const want = { all: 3, busy: busy.length, free: free.length, drained: 0 };
      return JSON.stringify(got) === JSON.stringify(want) ? { busy, free } : null;
    }).catch((e) => assert.fail(`${e.message}: ${JSON.stringify(last)}`));
    assert.ok(busy.length >= 1 && busy.length < 3, `busy nodes: ${JSON.stringify(last)}`);
    assert.equal((await page.getByTestId('nodes-shown').textContent()).trim(), '3 nodes');

    // The mouse: busy nodes only, and the URL says so.
    await page.locator('label:has([data-testid="node-state-busy"])').click();
    await eventually('state=busy in the URL', () => /#\/\?state=busy$/.test(page.url()));
    await eventually('only the busy nodes', async () => JSON.stringify(await cards()) === JSON.stringify(busy));
    assert.equal(await page.getByTestId('node-state-busy').isChecked(), true);
    assert.equal(
      (await page.getByTestId('nodes-shown').textContent()).trim(),
      `${busy.length} of 3 nodes (busy)`,
    );
    for (const [n, states] of Object.entries(await nodeStates())) {
      assert.ok(states.some((st) => st === 'job' || st === 'hand'), `${n} is shown as busy: ${states}`);
    }
    await checkScreen('09b-overview-busy');

    // The keyboard: the arrow keys move through the choices.
    await page.getByTestId('node-state-busy').focus();
    await page.keyboard.press('ArrowRight');
    await eventually('state=free in the URL', () => /#\/\?state=free$/.test(page.url()));
    assert.equal(await page.getByTestId('node-state-free').isChecked(), true);
    await eventually('only nodes with a free GPU', async () => JSON.stringify(await cards()) === JSON.stringify(free));

    // Nothing drained: no node, said in words, and a way back.
    await page.locator('label:has([data-testid="node-state-drained"])').click();
    await eventually('no node shown', async () => (await page.getByTestId('node-card').count()) === 0);
    assert.match(await page.getByTestId('nodes-shown').textContent(), /No node is drained\./);

    // A reload keeps the filter (it is in the URL).
    await page.reload();
    await page.getByTestId('nodes-shown').waitFor();
    assert.equal(await page.getByTestId('node-state-drained').isChecked(), true);
    assert.equal(await page.getByTestId('node-card').count(), 0);
    await page.getByRole('button', { name: 'Show all nodes' }).click();
    await eventually('every node again', async () => (await page.getByTestId('node-card').count()) === 3);
    assert.equal(await page.getByTestId('node-state-all').isChecked(), true);
    await eventually('no state in the URL', () => /#\/$/.test(page.url()));

    // Compact: tiles without their readings, so a node takes less height; kept by the browser.
    const height = () => page.locator('[data-testid="node-card"][data-node="gpu-a"]').evaluate((c) => c.getBoundingClientRect().height);
    const full = await height();
    assert.ok((await page.locator('[data-testid="gpu-tile"] .readings').count()) > 0);
    await page.getByTestId('node-compact').check();
    await eventually('no readings in compact tiles', async () => (await page.locator('[data-testid="gpu-tile"] .readings').count()) === 0);
    const small = await height();
    assert.ok(small < full * 0.7, `a compact node is not much shorter: ${small} px against ${full} px`);
    assert.equal(await page.getByTestId('gpu-tile').count(), 14, 'every GPU still has its tile');
    await checkScreen('09c-overview-compact');
    await page.reload();
    await page.getByTestId('node-compact').waitFor();
    assert.equal(await page.getByTestId('node-compact').isChecked(), true, 'compact is remembered');
    await page.getByTestId('node-compact').uncheck();
    await eventually('readings again', async () => (await page.locator('[data-testid="gpu-tile"] .readings').count()) > 0);
    checkClean('overview filters');
  });

  step('alice cancels the job from its page', async () => {
    await navigate(`#/jobs/${jobId}`);
    await page.getByTestId('cancel-job').click();
    await page.getByTestId('cancel-confirm').click();
    const state = page.getByTestId('job-state');
    await eventually('state cancelled', async () => (await state.textContent()).trim() === 'cancelled', { timeout: 30_000 });
    assert.equal(await page.getByTestId('cancel-job').count(), 0);
    // SIGTERM ended its task because it was cancelled: stopped, not failed.
    await eventually('its task stopped', async () => (await page.getByTestId('task-state').first().textContent()).trim() === 'stopped', { timeout: 30_000 });
    await checkScreen('10-job-cancelled');
  });

  step("the jobs list: alice's own by default, paged Newer / Older by job id", async () => {
    const token = async (user) => (await apiCall(api, 'POST', '/api/v1/auth/login', null, { username: user, password: accounts[user] })).json.token;
    const aliceToken = await token('alice');
    const adminToken = await token('admin');
    const submit = async (tok, name) => {
      const r = await apiCall(api, 'POST', '/api/v1/jobs', tok, {
        name, command: ['sleep', '30'], groups: [{ role: 'worker', replicas: 1, gpus_per_task: 1 }],
      });
      assert.equal(r.status, 201, r.text);
      return r.json.id;
    };
    const adminJob = await submit(adminToken, 'admins-job');
    const p1 = await submit(aliceToken, 'page-1');
    const p2 = await submit(aliceToken, 'page-2');
    let p3 = 0;
    try {
      const rowIds = async () => page.$$eval('[data-testid="job-row"]', (els) => els.map((e) => Number(e.dataset.jobId)));
      await navigate('#/jobs?limit=2');
      await eventually('the newest two of alice\'s jobs', async () => JSON.stringify(await rowIds()) === JSON.stringify([p2, p1]));
      assert.equal(await page.getByTestId('filter-mine').isChecked(), true, 'a user sees their own jobs first');
      assert.equal((await page.getByTestId('jobs-range').textContent()).trim(), 'newest 2');
      assert.equal(await page.getByTestId('jobs-newer').isDisabled(), true);
      await checkScreen('10b-jobs-paged');
      await page.getByTestId('jobs-older').click();
      await eventually(`before=${p1} in the URL`, async () => new RegExp(`before=${p1}\\b`).test(page.url()));
      await eventually('the third of alice\'s jobs', async () => JSON.stringify(await rowIds()) === JSON.stringify([jobId]));
      assert.equal((await page.getByTestId('jobs-range').textContent()).trim(), `job ${jobId}`);
      assert.equal(await page.getByTestId('jobs-older').isDisabled(), true, 'no older page: the server said so');
      // A job submitted now does not move the page (an offset page would show page-1).
      p3 = await submit(aliceToken, 'page-3');
      await page.reload();
      await eventually('the same page after a new job', async () => JSON.stringify(await rowIds()) === JSON.stringify([jobId]));
      await page.getByTestId('jobs-newer').click();
      await eventually(`after=${jobId} in the URL`, async () => new RegExp(`after=${jobId}\\b`).test(page.url()));
      await eventually('the page just newer', async () => JSON.stringify(await rowIds()) === JSON.stringify([p2, p1]));
      await page.getByTestId('jobs-newer').click();
      await eventually('the newest of alice\'s jobs', async () => JSON.stringify(await rowIds()) === JSON.stringify([p3]));
      assert.equal(await page.getByTestId('jobs-newer').isDisabled(), true, 'nothing newer: the server said so');
      await page.getByTestId('filter-all').check();
      await eventually('mine=false in the URL', async () => /mine=false/.test(page.url()));
      assert.doesNotMatch(page.url(), /after=|before=/, 'a filter starts from the newest');
      await eventually("everyone's jobs", async () => JSON.stringify(await rowIds()) === JSON.stringify([p3, p2]));
      await page.getByTestId('jobs-older').click();
      await eventually("admin's job on the next page", async () => (await rowIds()).includes(adminJob));
      checkClean('jobs paging');
    } finally {
      for (const [id, tok] of [[adminJob, adminToken], [p1, aliceToken], [p2, aliceToken], [p3, aliceToken]]) {
        if (id) await apiCall(api, 'POST', `/api/v1/jobs/${id}/cancel`, tok);
      }
    }
  });

  step('phone-sized screens', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await navigate('#/');
    await eventually('tiles', async () => (await page.getByTestId('gpu-tile').count()) === 14);
    await checkScreen('11-overview-phone');
    // The navigation folds into a menu button (keyboard too): the sticky header stays short.
    const nav = page.getByRole('navigation', { name: 'Main' });
    const menu = page.getByTestId('nav-menu');
    const headH = await page.locator('header').evaluate((h) => h.getBoundingClientRect().height);
    assert.ok(headH <= 110, `the header takes ${headH} px on a phone`);
    assert.equal(await menu.getAttribute('aria-expanded'), 'false');
    assert.equal(await nav.getByRole('link', { name: 'Jobs', exact: true }).isVisible(), false);
    await menu.focus();
    await page.keyboard.press('Enter');
    assert.equal(await menu.getAttribute('aria-expanded'), 'true');
    await nav.getByRole('link', { name: 'Jobs', exact: true }).waitFor({ state: 'visible' });
    await checkScreen('11b-nav-menu-phone');
    await page.keyboard.press('Escape');
    assert.equal(await menu.getAttribute('aria-expanded'), 'false');
    assert.equal(await menu.evaluate((b) => b === document.activeElement), true, 'Escape gives the focus back to the button');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), 'Overview', 'Tab goes into the list');
    await nav.getByRole('link', { name: 'Jobs', exact: true }).click();
    await eventually('the jobs page', () => /#\/jobs$/.test(page.url()));
    // (The route changes first; the menu closes when the page has taken it in.)
    await eventually('going somewhere closes the menu', async () => (await menu.getAttribute('aria-expanded')) === 'false');
    await navigate('#/jobs');
    const jobRow = page.locator(`[data-testid="job-row"][data-job-id="${jobId}"]`);
    await jobRow.waitFor();
    // The jobs are cards on a phone: nothing of a row is off-screen, nothing scrolls sideways.
    for (const id of ['job-state', 'job-reason']) {
      const box = await jobRow.getByTestId(id).evaluate((e) => {
        const r = e.getBoundingClientRect();
        return { left: r.left, right: r.right, width: r.width, viewport: window.innerWidth };
      });
      assert.ok(box.width > 0 && box.left >= 0 && box.right <= box.viewport, `${id} is off-screen on a phone: ${JSON.stringify(box)}`);
    }
    const fit = await page.evaluate(() => {
      const wrap = document.querySelector('[data-testid="jobs-table"]').parentElement;
      return { scrollWidth: wrap.scrollWidth, clientWidth: wrap.clientWidth, doc: document.documentElement.scrollWidth, vw: window.innerWidth };
    });
    assert.ok(fit.scrollWidth <= fit.clientWidth && fit.doc <= fit.vw, `the jobs list scrolls sideways on a phone: ${JSON.stringify(fit)}`);
    await checkScreen('12-jobs-phone');
    // The job's page: its tasks and events are cards; nothing scrolls sideways.
    await navigate(`#/jobs/${jobId}`);
    await page.getByTestId('tasks-table').waitFor();
    await page.getByTestId('events-table').waitFor();
    const jobFit = await eventually('the phone layout of the job page', async () => {
      const r = await page.evaluate(() => {
        const wrap = (id) => {
          const w = document.querySelector(`[data-testid="${id}"]`).closest('.table-wrap');
          return { scrollWidth: w.scrollWidth, clientWidth: w.clientWidth };
        };
        return {
          doc: document.scrollingElement.scrollWidth,
          vw: window.innerWidth,
          tasks: wrap('tasks-table'),
          events: wrap('events-table'),
          taskState: document.querySelector('[data-testid="task-state"]').getBoundingClientRect().right,
        };
      });
      return r.vw === 390 ? r : null;
    });
    assert.ok(jobFit.doc <= jobFit.vw, `the job page scrolls sideways on a phone: ${JSON.stringify(jobFit)}`);
    for (const t of ['tasks', 'events']) {
      assert.ok(jobFit[t].scrollWidth <= jobFit[t].clientWidth, `the ${t} table scrolls sideways on a phone: ${JSON.stringify(jobFit)}`);
    }
    assert.ok(jobFit.taskState <= jobFit.vw, `the task's state is off-screen on a phone: ${JSON.stringify(jobFit)}`);
    await checkScreen('12b-job-phone');
    // The overview's filters wrap on a phone; the page does not scroll sideways.
    await navigate('#/?state=busy');
    await page.getByTestId('nodes-shown').waitFor();
    const ovFit = await page.evaluate(() => ({ doc: document.scrollingElement.scrollWidth, vw: window.innerWidth }));
    assert.ok(ovFit.doc <= ovFit.vw, `the overview scrolls sideways on a phone: ${JSON.stringify(ovFit)}`);
    await checkScreen('12c-overview-busy-phone');
    await navigate('#/jobs');
    await jobRow.waitFor();
    await page.setViewportSize({ width: 1280, height: 900 });
    assert.equal(await page.getByTestId('nav-menu').isVisible(), false, 'no menu button on a wide screen');
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

  step('failed sign-ins make the form wait, counting down what the server said (Retry-After)', async () => {
    const err = page.getByTestId('form-error');
    let text = '';
    for (let i = 0; i < 8 && !/Too many failed sign-ins/.test(text); i++) {
      await signIn('admin', `wrong-${i}`);
      await eventually('an answer', async () => (await err.count()) > 0 && !(await page.getByTestId('signin-submit').textContent()).includes('Signing in'));
      text = (await err.textContent()).trim();
    }
    assert.match(text, /^Too many failed sign-ins\. Try again in \d+ s\.$/);
    assert.equal(await page.getByTestId('signin-submit').isDisabled(), true, 'the button waits too');
    await eventually('the wait to end', async () => (await err.textContent()).trim() === 'You can try again now.', { timeout: 20_000 });
    assert.equal(await page.getByTestId('signin-submit').isDisabled(), false);
  });
});

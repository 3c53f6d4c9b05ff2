// End-to-end test of the queue, usage, tokens and admin screens against a real
// `rota dev`, in Debian's Chromium. Same environment and checks as ui.test.mjs
// (axe-core, console errors, CSP violations, screenshots to $ROTA_WEB_ARTIFACTS
// as adm-*.png); its own `rota dev`. No fixed sleeps: every wait polls a condition.
//
//   ROTA_BIN=/path/to/rota node --test e2e/admin.test.mjs
import { before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { NO_BROWSER, apiCall, browserSuite, eventually } from './helpers.mjs';

// ---------------------------------------------------------------- the test

describe('rota web UI: queue, usage, tokens and admin', { timeout: 15 * 60_000, skip: NO_BROWSER }, () => {
  const ui = browserSuite({ tmpPrefix: 'rota-web-adm-', shotPrefix: 'adm-' });
  const { step, shot, checkA11y, checkClean, checkScreen, signIn, navigate, consoleErrors } = ui;
  let page, base, api, accounts;
  before(() => {
    ({ page, base, api, accounts } = ui);
  });

  let adminToken = '';
  let aliceToken = '';
  let pendingJob = 0;

  /** A link of the header's main navigation. */
  const navLink = (name) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
  const byTest = (id, attrs = {}) =>
    page.locator(`[data-testid="${id}"]${Object.entries(attrs).map(([k, v]) => `[data-${k}="${v}"]`).join('')}`);

  /** The text of the inline error once it shows, compared with the server's own message. */
  async function expectServerError(expected) {
    assert.ok(expected && expected.length > 0, 'the API gave no message');
    const err = page.getByTestId('form-error');
    await err.waitFor();
    await eventually(`the message "${expected}" inline`, async () => (await err.textContent()).trim() === expected);
  }

  step('the admin signs in and sees the Admin, Queue and Usage navigation', async () => {
    const a = await apiCall(api, 'POST', '/api/v1/auth/login', '', { username: 'admin', password: accounts.admin });
    assert.equal(a.status, 200);
    adminToken = a.json.token;
    const b = await apiCall(api, 'POST', '/api/v1/auth/login', '', { username: 'alice', password: accounts.alice });
    assert.equal(b.status, 200);
    aliceToken = b.json.token;
    if (process.getuid?.() === 0) {
      // Jobs never run as root: as `rota user set alice --unix-user nobody` does.
      const r = await apiCall(api, 'PATCH', '/api/v1/users/alice', adminToken, { unix_user: 'nobody' });
      assert.equal(r.status, 200, r.text);
    }
    await page.goto(base + '/');
    await signIn('admin', accounts.admin);
    await page.getByTestId('current-user').waitFor();
    await page.getByTestId('nav-admin').waitFor();
    await navLink('Queue').waitFor();
    await navLink('Usage').waitFor();
  });

  step('users: a short password shows the server 400 inline, then a user is created', async () => {
    await page.getByTestId('nav-admin').click();
    await page.waitForURL(/#\/admin\/users$/);
    await page.getByTestId('users-table').waitFor();
    await byTest('user-row', { name: 'alice' }).waitFor();
    await checkScreen('users');

    const bad = { username: 'carol', password: 'short', role: 'user' };
    const expected = await apiCall(api, 'POST', '/api/v1/users', adminToken, bad);
    assert.equal(expected.status, 400, expected.text);
    await page.getByTestId('user-username').fill('carol');
    await page.getByTestId('user-password').fill('short');
    await page.getByTestId('user-display-name').fill('Carol C');
    await page.getByTestId('user-create').click();
    // The UI sends display_name too; the server checks the password first.
    await expectServerError(expected.json.error.message);
    await shot('user-error');

    await page.getByTestId('user-password').fill('carol-password-1');
    await page.getByTestId('user-create').click();
    await byTest('user-row', { name: 'carol' }).waitFor();
    assert.equal(await page.getByTestId('form-error').count(), 0);
    const u = await apiCall(api, 'GET', '/api/v1/users/carol', adminToken);
    assert.equal(u.status, 200);
    assert.equal(u.json.display_name, 'Carol C');
    assert.equal(u.json.role, 'user');
    checkClean('user created');
  });

  step('groups: create ml-team', async () => {
    await page.getByTestId('admin-tab-groups').click();
    await page.waitForURL(/#\/admin\/groups$/);
    await page.getByTestId('group-name').fill('ml-team');
    await page.getByTestId('group-description').fill('Machine learning');
    await page.getByTestId('group-create').click();
    await byTest('group-row', { name: 'ml-team' }).waitFor();
    const g = await apiCall(api, 'GET', '/api/v1/groups', adminToken);
    assert.ok(g.json.groups.some((x) => x.name === 'ml-team'));
    await checkScreen('groups');
  });

  step("users: change carol's role to admin and put her in ml-team", async () => {
    await page.getByTestId('admin-tab-users').click();
    await byTest('user-row', { name: 'carol' }).getByTestId('user-edit').click();
    const form = page.getByTestId('user-edit-form');
    await form.waitFor();
    await form.getByTestId('edit-role').selectOption('admin');
    await form.getByTestId('edit-groups').fill('ml-team');
    await checkA11y('user edit');
    await form.getByTestId('edit-save').click();
    await eventually('carol shown as admin', async () =>
      (await byTest('user-row', { name: 'carol' }).getByTestId('user-role-cell').textContent()).trim() === 'admin');
    const u = await apiCall(api, 'GET', '/api/v1/users/carol', adminToken);
    assert.equal(u.json.role, 'admin');
    assert.deepEqual(u.json.groups, ['ml-team']);
    await shot('user-edited');
  });

  step('users on a phone: each user a card, Edit and Delete in view, nothing scrolls sideways', async () => {
    try {
      await page.setViewportSize({ width: 390, height: 844 });
      const row = byTest('user-row', { name: 'carol' });
      const fit = await eventually('the phone layout', async () => {
        const r = await row.evaluate((tr) => {
          const wrap = tr.closest('.table-wrap');
          const box = (sel) => tr.querySelector(sel).getBoundingClientRect();
          return {
            viewport: window.innerWidth,
            docWidth: document.documentElement.scrollWidth,
            scrollWidth: wrap.scrollWidth,
            clientWidth: wrap.clientWidth,
            edit: box('[data-testid="user-edit"]').right,
            del: box('[data-testid="user-delete"]').right,
            role: getComputedStyle(tr.querySelector('[data-testid="user-role-cell"]'), '::before').content,
          };
        });
        return r.viewport === 390 ? r : null;
      });
      assert.ok(fit.docWidth <= fit.viewport && fit.scrollWidth <= fit.clientWidth, `the users table scrolls sideways: ${JSON.stringify(fit)}`);
      assert.ok(fit.edit <= fit.viewport && fit.del <= fit.viewport, `Edit or Delete off-screen: ${JSON.stringify(fit)}`);
      assert.match(fit.role, /Role: /);
      await row.getByTestId('user-edit').click();
      await page.getByTestId('user-edit-form').waitFor();
      await checkScreen('users-phone');
      await page.getByTestId('edit-cancel').click();
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  step('quotas: set one for carol and see it on the Usage screen', async () => {
    await page.getByTestId('admin-tab-quotas').click();
    await page.waitForURL(/#\/admin\/quotas$/);
    await page.getByTestId('quota-kind').selectOption('user');
    await page.getByTestId('quota-name').fill('carol');
    await page.getByTestId('quota-max-gpus').fill('2');
    await page.getByTestId('quota-max-hours').fill('100');
    await page.getByTestId('quota-share').fill('2');
    // An unknown user: refused; the next edit clears the message.
    await page.getByTestId('quota-name').fill('nosuchuser');
    await page.getByTestId('quota-save').click();
    await page.getByTestId('form-error').waitFor();
    assert.match(await page.getByTestId('form-error').textContent(), /nosuchuser/);
    await page.getByTestId('quota-name').fill('carol');
    assert.equal(await page.getByTestId('form-error').count(), 0, 'an edit clears the last error');
    await page.getByTestId('quota-save').click();
    await byTest('quota-row', { kind: 'user', name: 'carol' }).waitFor();
    const q = await apiCall(api, 'GET', '/api/v1/quotas/user/carol', adminToken);
    assert.equal(q.status, 200, q.text);
    assert.equal(q.json.max_gpus, 2);
    assert.equal(q.json.max_gpu_hours, 100);
    assert.equal(q.json.share, 2);
    // The same verb as on the other admin lists.
    assert.equal((await byTest('quota-row', { kind: 'user', name: 'carol' }).getByTestId('quota-delete').textContent()).trim(), 'Delete');
    await checkScreen('quotas');

    await navLink('Usage').click();
    await page.waitForURL(/#\/usage$/);
    const row = byTest('usage-row', { kind: 'user', name: 'carol' });
    await row.waitFor();
    assert.equal((await row.getByTestId('usage-max-gpus').textContent()).trim(), '2');
    assert.equal((await row.getByTestId('usage-max-hours').textContent()).trim(), '100');
    assert.equal((await row.getByTestId('usage-share').textContent()).trim(), '2');
    assert.match(await page.getByTestId('usage-period').textContent(), /the last \d+ \w+/);
    await checkScreen('usage');
  });

  step('policies: a bad policy shows the server message, a good one is created', async () => {
    await navigate('#/admin/policies');
    await page.getByTestId('policy-new').click();
    const json = page.getByTestId('policy-json');
    await json.waitFor();
    assert.match(await json.inputValue(), /"name"/, 'the editor starts with a template');
    const bad = { name: 'gpu-cap', max_gpus: 'many' };
    const expected = await apiCall(api, 'POST', '/api/v1/policies', adminToken, bad);
    assert.equal(expected.status, 400, expected.text);
    await json.fill(JSON.stringify(bad, null, 2));
    await page.getByTestId('policy-save').click();
    await expectServerError(expected.json.error.message);
    assert.match(expected.json.error.message, /max_gpus/, 'the server names the field');
    await checkScreen('policy-error');

    await json.fill(JSON.stringify({ name: 'gpu-cap', description: 'at most 4 GPUs', max_gpus: 4 }, null, 2));
    await page.getByTestId('policy-save').click();
    await byTest('policy-row', { name: 'gpu-cap' }).waitFor();
    const p = await apiCall(api, 'GET', '/api/v1/policies', adminToken);
    const made = p.json.policies.find((x) => x.name === 'gpu-cap');
    assert.ok(made, 'the policy is in the API');
    assert.equal(made.max_gpus, 4);

    // Edit: the editor is prefilled with the policy.
    await byTest('policy-row', { name: 'gpu-cap' }).getByTestId('policy-edit').click();
    assert.equal(JSON.parse(await json.inputValue()).max_gpus, 4);
    await page.getByTestId('policy-cancel').click();
    await checkScreen('policies');
  });

  step('SSH nodes: the public key is shown; a bad URL or host key shows the server 400', async () => {
    await page.getByTestId('admin-tab-ssh-nodes').click();
    await page.waitForURL(/#\/admin\/ssh-nodes$/);
    const k = await apiCall(api, 'GET', '/api/v1/ssh-key', adminToken);
    if (k.status === 200) {
      await eventually('the public key', async () => (await page.getByTestId('ssh-key').textContent()).trim() === k.json.public_key.trim());
    } else {
      // No ssh-keygen here: the server's 503 is shown inline; the browser's own log line of it is expected.
      await eventually('the key error', async () => (await page.getByTestId('ssh-key-error').textContent()).trim() === k.json.error.message);
      for (let i = consoleErrors.length - 1; i >= 0; i--) {
        if (/status of 503/.test(consoleErrors[i])) consoleErrors.splice(i, 1);
      }
    }
    const bad = { name: 'ssh-bad', url: 'http://host.example' };
    const expected = await apiCall(api, 'POST', '/api/v1/ssh-nodes', adminToken, bad);
    assert.equal(expected.status, 400, expected.text);
    await page.getByTestId('ssh-name').fill(bad.name);
    await page.getByTestId('ssh-url').fill(bad.url);
    await page.getByTestId('ssh-add').click();
    await expectServerError(expected.json.error.message);
    // A host key that is neither a key nor a SHA256 fingerprint: the server's 400 too.
    const badKey = { name: 'ssh-bad', url: 'ssh://root@127.0.0.1:1', host_key: 'garbage' };
    const keyRefused = await apiCall(api, 'POST', '/api/v1/ssh-nodes', adminToken, badKey);
    assert.equal(keyRefused.status, 400, keyRefused.text);
    await page.getByTestId('ssh-url').fill(badKey.url);
    await page.getByTestId('ssh-host-key').fill(badKey.host_key);
    await page.getByTestId('ssh-add').click();
    await expectServerError(keyRefused.json.error.message);
    const list = await apiCall(api, 'GET', '/api/v1/ssh-nodes', adminToken);
    assert.ok(!list.json.ssh_nodes.some((n) => n.name === 'ssh-bad'), 'no node was added');
    await checkScreen('ssh-nodes');
  });

  step('tokens: create one (the secret shown once) and revoke it', async () => {
    await page.getByTestId('nav-tokens').click();
    await page.waitForURL(/#\/tokens$/);
    await page.locator('[data-testid="tokens-table"], [data-testid="tokens-empty"]').first().waitFor();
    await page.getByTestId('token-name').fill('ci-token');
    await page.getByTestId('token-ttl').fill('1h');
    await page.getByTestId('token-create').click();
    const secret = (await page.getByTestId('token-secret').textContent()).trim();
    assert.ok(secret.length >= 16, 'a secret is shown');
    const row = byTest('token-row', { name: 'ci-token' });
    await row.waitFor();
    // The new token works.
    const who = await apiCall(api, 'GET', '/api/v1/auth/whoami', secret);
    assert.equal(who.status, 200);
    assert.equal(who.json.username, 'admin');
    await checkScreen('tokens');

    await row.getByTestId('token-revoke').click();
    await row.getByTestId('token-revoke-confirm').click();
    await eventually('the token row gone', async () => (await byTest('token-row', { name: 'ci-token' }).count()) === 0);
    const after = await apiCall(api, 'GET', '/api/v1/auth/whoami', secret);
    assert.equal(after.status, 401, 'the revoked token no longer works');
    checkClean('token revoked');
  });

  step('queue: a job held by its owner quota waits, with its reason and position', async () => {
    // A job above the quota itself is refused at submission; one that fits it
    // waits while her first job holds GPUs.
    const q = await apiCall(api, 'PUT', '/api/v1/quotas/user/alice', adminToken, { max_gpus: 3 });
    assert.equal(q.status, 200, q.text);
    const first = await apiCall(api, 'POST', '/api/v1/jobs', aliceToken, {
      name: 'holds',
      command: ['sleep', '3600'],  // cancelled at the end of the step
      groups: [{ role: 'worker', replicas: 1, gpus_per_task: 2 }],
    });
    assert.equal(first.status, 201, first.text);
    const job = await apiCall(api, 'POST', '/api/v1/jobs', aliceToken, {
      name: 'waits',
      command: ['sleep', '60'],
      groups: [{ role: 'worker', replicas: 1, gpus_per_task: 2 }],
    });
    assert.equal(job.status, 201, job.text);
    pendingJob = job.json.id;

    await navLink('Queue').click();
    await page.waitForURL(/#\/queue$/);
    await byTest('queue-row', { name: 'default' }).waitFor();
    const row = byTest('pending-row', { 'job-id': pendingJob });
    await row.waitFor();
    await eventually('the quota reason', async () => /quota/.test(await row.getByTestId('pending-reason').textContent()), { timeout: 30_000 });
    const api2 = await apiCall(api, 'GET', '/api/v1/queue?offset=0&limit=50', adminToken);
    assert.ok(api2.json.jobs.some((j) => j.id === pendingJob));
    assert.equal(api2.json.jobs.find((j) => j.id === pendingJob).gpus, 2, 'the queue says what a job asks for');
    // Its GPUs (2, from the queue's answer, which has no spec) and how long it has waited.
    const cells = await row.locator('td').allTextContents();
    assert.equal(cells[5].trim(), '2', cells.join(' | '));
    assert.match(cells[6], /ago$|^just now$/, cells.join(' | '));
    // "Pending jobs" is a section of its own: space above it, not right under the queues.
    const gap = await page.evaluate(() => {
      const wrap = document.querySelector('[data-testid="queues-table"]').closest('.table-wrap');
      const h = [...document.querySelectorAll('h2')].find((e) => e.textContent.startsWith('Pending jobs'));
      return h.getBoundingClientRect().top - wrap.getBoundingClientRect().bottom;
    });
    assert.ok(gap >= 20, `"Pending jobs" sits ${gap} px under the queues table`);
    await checkScreen('queue');
    // A phone: the job's reason and estimated start are in view, without scrolling sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const id of ['pending-reason', 'pending-start']) {
        const box = await row.getByTestId(id).evaluate((e) => {
          const r = e.getBoundingClientRect();
          return { left: r.left, right: r.right, width: r.width, viewport: window.innerWidth };
        });
        assert.ok(box.width > 0 && box.left >= 0 && box.right <= box.viewport, `${id} is off-screen on a phone: ${JSON.stringify(box)}`);
      }
      await checkA11y('the queue on a phone');
      await shot('queue-pending-phone');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    for (const id of [pendingJob, first.json.id]) {
      const c = await apiCall(api, 'POST', `/api/v1/jobs/${id}/cancel`, aliceToken);
      assert.equal(c.status, 200, c.text);
    }
  });

  step('queue: the queues table fits a 1280x800 screen; the built-in tag stands apart; a phone shows cards', async () => {
    // A queue with a long description and many members: the widest cells the table has.
    const wide = {
      name: 'research-long-runs',
      description: 'Long-running research jobs of the vision and language teams; preemptible, ask #gpu-admins before using more than 16 GPUs',
      priority: 10,
      min_priority: -50,
      max_priority: 50,
      users: ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'],
      groups: ['vision-research', 'language-models', 'interns'],
      max_gpus: 16,
      default_time_limit: '72h',
      preemptible: true,
    };
    // A queue names existing users and groups only: make those the cluster lacks.
    const madeUsers = [];
    const madeGroups = [];
    for (const username of wide.users) {
      const r = await apiCall(api, 'POST', '/api/v1/users', adminToken, { username, password: 'a long password 9' });
      assert.ok(r.status === 201 || r.status === 409, r.text);
      if (r.status === 201) madeUsers.push(username);
    }
    for (const name of wide.groups) {
      const r = await apiCall(api, 'POST', '/api/v1/groups', adminToken, { name });
      assert.ok(r.status === 201 || r.status === 409, r.text);
      if (r.status === 201) madeGroups.push(name);
    }
    const made = await apiCall(api, 'POST', '/api/v1/queues', adminToken, wide);
    assert.equal(made.status, 201, made.text);
    try {
      await page.setViewportSize({ width: 1280, height: 800 });
      await byTest('queue-row', { name: wide.name }).waitFor(); // the screen polls every 5 s
      // Time limits in the UI's words, as everywhere else ("72h" from the API).
      assert.equal((await byTest('queue-row', { name: wide.name }).getByTestId('queue-time-limit').textContent()).trim(), '3 d');

      // The whole table in its panel and on the screen: no sideways scrolling, the last
      // column ("Unfinished") in view.
      const fit = await page.evaluate(() => {
        const table = document.querySelector('[data-testid="queues-table"]');
        const wrap = table.closest('.table-wrap');
        const t = table.getBoundingClientRect();
        const w = wrap.getBoundingClientRect();
        const last = table.querySelector('thead th:last-child').getBoundingClientRect();
        return {
          tableRight: t.right,
          wrapRight: w.right,
          lastRight: last.right,
          lastText: table.querySelector('thead th:last-child').textContent.trim(),
          scrollWidth: wrap.scrollWidth,
          clientWidth: wrap.clientWidth,
          viewport: window.innerWidth,
          docWidth: document.documentElement.scrollWidth,
        };
      });
      assert.equal(fit.lastText, 'Unfinished');
      assert.ok(fit.scrollWidth <= fit.clientWidth, `the queues table scrolls sideways at 1280 px: ${JSON.stringify(fit)}`);
      assert.ok(fit.tableRight <= fit.wrapRight + 0.5 && fit.lastRight <= fit.wrapRight + 0.5, `the table passes its panel: ${JSON.stringify(fit)}`);
      assert.ok(fit.wrapRight <= fit.viewport && fit.docWidth <= fit.viewport, `the page is wider than the screen: ${JSON.stringify(fit)}`);

      // The built-in queue: its name, then a separate "built-in" tag with space between.
      const def = byTest('queue-row', { name: 'default' });
      assert.equal((await def.getByTestId('queue-name').textContent()).trim(), 'default');
      assert.equal((await def.getByTestId('queue-built-in').textContent()).trim(), 'built-in');
      const nameCell = (await def.getByTestId('queue-name-cell').textContent()).replace(/\s+/g, ' ').trim();
      assert.ok(!nameCell.startsWith('defaultbuilt-in'), `name and tag run together: "${nameCell}"`);
      assert.match(nameCell, /^default built-in\b/);
      const gap = await def.evaluate((tr) => {
        const n = tr.querySelector('[data-testid="queue-name"]').getBoundingClientRect();
        const t = tr.querySelector('[data-testid="queue-built-in"]').getBoundingClientRect();
        return t.left - n.right;
      });
      assert.ok(gap >= 4, `the built-in tag touches the name (${gap} px apart)`);
      assert.equal(await byTest('queue-row', { name: wide.name }).getByTestId('queue-built-in').count(), 0);
      assert.equal(
        (await byTest('queue-row', { name: wide.name }).getByTestId('queue-who').textContent()).trim(),
        'alice, bob, carol, dave, erin, frank, @vision-research, @language-models, @interns',
      );
      await checkScreen('queue-1280x800');

      // A phone: each queue is a card (labelled figures); neither the table nor the page scrolls sideways.
      await page.setViewportSize({ width: 390, height: 844 });
      const phone = await eventually('the phone layout', async () => {
        const r = await page.evaluate(() => {
          const wrap = document.querySelector('[data-testid="queues-table"]').closest('.table-wrap');
          return {
            scrollWidth: wrap.scrollWidth,
            clientWidth: wrap.clientWidth,
            viewport: window.innerWidth,
            docWidth: document.documentElement.scrollWidth,
          };
        });
        return r.viewport === 390 ? r : null;
      });
      assert.ok(phone.scrollWidth <= phone.clientWidth, `the queues table scrolls sideways on a phone: ${JSON.stringify(phone)}`);
      assert.match(
        await byTest('queue-row', { name: wide.name }).getByTestId('queue-who').evaluate((e) => getComputedStyle(e, '::before').content),
        /Who: /,
      );
      assert.ok(phone.docWidth <= phone.viewport, `the page scrolls sideways on a phone: ${JSON.stringify(phone)}`);
      // No job waits: no Earlier / Later buttons that both do nothing.
      await page.getByTestId('queue-empty').waitFor();
      assert.equal(await page.getByTestId('queue-pager').count(), 0);
      await shot('queue-phone');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    const del = await apiCall(api, 'DELETE', `/api/v1/queues/${wide.name}`, adminToken);
    assert.equal(del.status, 204, del.text);
    for (const username of madeUsers) {
      const r = await apiCall(api, 'DELETE', `/api/v1/users/${username}`, adminToken);
      assert.ok(r.status === 200 || r.status === 204, r.text);
    }
    for (const name of madeGroups) {
      const r = await apiCall(api, 'DELETE', `/api/v1/groups/${name}`, adminToken);
      assert.equal(r.status, 204, r.text);
    }
  });

  step('alice (not an admin): no Admin link, and #/admin/users says admins only', async () => {
    await page.getByTestId('sign-out').click();
    await page.getByTestId('signin-form').waitFor();
    await signIn('alice', accounts.alice);
    await page.getByTestId('current-user').waitFor();
    await navLink('Queue').waitFor();
    assert.equal(await page.getByTestId('nav-admin').count(), 0);
    await navigate('#/admin/users');
    await page.getByTestId('admins-only').waitFor();
    assert.equal(await page.getByTestId('users-table').count(), 0);
    await checkScreen('admins-only');
    // Her own tokens work for her.
    await page.getByTestId('nav-tokens').click();
    await page.locator('[data-testid="tokens-table"], [data-testid="tokens-empty"]').first().waitFor();
    await checkScreen('tokens-alice');
  });
});

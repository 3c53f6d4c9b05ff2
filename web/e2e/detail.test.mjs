// End-to-end test of the node and GPU detail screens (history charts with
// uPlot, live samples, ranges, processes) and of the submit form's templates
// and preview, against a real `rota dev` (gpu-a: 8 GPUs, gpu-b: 4, gpu-c: 2) in
// Debian's Chromium. Same environment and checks as ui.test.mjs (axe-core on
// every screen, console errors, CSP violations: uPlot sizes its canvas through
// the CSSOM, which the CSP allows), screenshots to $ROTA_WEB_ARTIFACTS as
// det-*.png; its own `rota dev`. No fixed sleeps: every wait polls a condition.
//
//   ROTA_BIN=/path/to/rota node --test e2e/detail.test.mjs
import { before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { NO_BROWSER, apiCall, browserSuite, eventually } from './helpers.mjs';

// ---------------------------------------------------------------- state

let jobId = 0;
let jobTask = null; // {node, gpu} of the job's first task

// ---------------------------------------------------------------- the test

describe('rota web UI: node and GPU detail, job templates', { timeout: 15 * 60_000, skip: NO_BROWSER }, () => {
  const ui = browserSuite({ tmpPrefix: 'rota-web-det-', shotPrefix: 'det-' });
  const { step, shot, checkA11y, checkClean, checkScreen, signIn, navigate, consoleErrors } = ui;
  let page, base, api, accounts;
  before(() => {
    ({ page, base, api, accounts } = ui);
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
    // Percentages are written one way everywhere, as format.ts's pct does on the tiles ("42%"):
    // the charts' summaries and the values beside their legends too.
    const summary = await util.textContent();
    assert.match(summary, /Utilisation over the last hour\. GPU: minimum \d+%, average \d+%, maximum \d+%; Memory:/);
    assert.doesNotMatch(summary, /\d %/, 'no space before the percent sign');
    for (const v of await page.locator('[data-chart="c-util"] .val').allTextContents()) {
      assert.match(v.trim(), /^(\d+%|–)$/, `a chart legend value: "${v}"`);
    }
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
    assert.match(await page.locator('[data-chart="c-cpu"] [data-testid="chart-summary"]').textContent(), /CPU over the last hour\. CPU: minimum \d+%, average \d+%, maximum \d+%\./);
    // Whether the node measures CPU package energy (RAPL), and why not: rota dev's agents
    // read no counter.
    const n = await apiCall(api, 'GET', '/api/v1/nodes/gpu-a', await login('admin'));
    assert.equal(n.status, 200, n.text);
    const status = n.json.cpu_energy_status ?? '';
    assert.ok(status !== '' && status !== 'ok', `rota dev's agents say why they measure no CPU energy: ${JSON.stringify(status)}`);
    const cpuEnergy = page.getByTestId('node-cpu-energy');
    assert.equal(await cpuEnergy.getAttribute('data-status'), status);
    // In plain words; the agent's detail (a command-line flag) only in the tooltip.
    assert.match((await cpuEnergy.textContent()).trim(), /^not reported by this node\b/);
    assert.equal(await cpuEnergy.getAttribute('title'), status);
    assert.match(await page.locator('.now div', { hasText: 'CPU' }).first().textContent(), /of \d+ cores?\b/);
    assert.match(await page.locator('dt', { hasText: 'Load' }).textContent(), /Load \(1\/5\/15 min\)/);
    assert.equal((await page.locator('dt', { hasText: 'CPU energy' }).count()), 1);
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

  step('an admin drains a node from its page: it says so there and on its card, its idle GPUs are not free, until resumed', async () => {
    await navigate('#/nodes/gpu-b');
    await page.locator('h1', { hasText: 'gpu-b' }).waitFor();
    await eventually('gpu-b tiles free', async () => (await page.locator('[data-testid="gpu-tile"][data-state="free"]').count()) === 4);
    await page.getByTestId('node-drain-reason').fill('new fans');
    await page.getByTestId('node-drain-button').click();
    const drain = page.getByTestId('node-drain');
    await eventually('the drain on the node page', async () => (await drain.count()) === 1);
    assert.match(await drain.textContent(), /Drained by admin since .+: new fans\. No new job starts here/);
    await eventually(
      "gpu-b's idle GPUs drained",
      async () => (await page.locator('[data-testid="gpu-tile"][data-state="drained"]').count()) === 4,
    );
    assert.match(await page.locator('[data-testid="gpu-tile"]').first().textContent(), /Drained/);
    await page.getByTestId('node-resume').waitFor();
    // Drained, not "ready"; the resume button says what it will do.
    await eventually('the drained badge on the node page', async () => (await page.getByTestId('node-state').textContent()).trim() === 'drained');
    assert.match(await page.getByTestId('node-state').getAttribute('class'), /\bdrained\b/);
    assert.equal((await page.getByTestId('node-resume-hint').textContent()).trim(), 'Resume to let new jobs start on gpu-b again.');
    await checkScreen('node-drained');
    // The server holds it: the API says the same.
    const admin = await login('admin');
    let r = await apiCall(api, 'GET', '/api/v1/nodes/gpu-b', admin);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.drain.reason, 'new fans');
    assert.equal(r.json.drain.by, 'admin');
    await navigate('#/');
    const card = page.locator('[data-testid="node-card"][data-node="gpu-b"] [data-testid="node-drain"]');
    await eventually('the drain on the node card', async () => (await card.count()) === 1);
    assert.match(await card.textContent(), /Drained by admin: new fans/);
    const cardState = page.locator('[data-testid="node-card"][data-node="gpu-b"] [data-testid="node-state"]');
    assert.equal((await cardState.textContent()).trim(), 'drained');
    assert.equal((await page.locator('[data-testid="node-card"][data-node="gpu-a"] [data-testid="node-state"]').textContent()).trim(), 'ready');
    await eventually('the totals count the drained node apart', async () =>
      /^2\s*of 3$/.test((await page.locator('[data-testid="total-nodes"] dd').first().textContent()).trim()) &&
      (await page.getByTestId('total-nodes-drained').textContent()).trim() === '1 drained',
    );
    await eventually('the totals count the drained GPUs apart', async () =>
      /and 4 idle on drained nodes/.test((await page.getByTestId('total-drained').textContent().catch(() => '')) ?? ''),
    );
    // Resumed from its page.
    await navigate('#/nodes/gpu-b');
    await page.getByTestId('node-resume').click();
    await eventually('no drain after the resume', async () => (await page.getByTestId('node-drain').count()) === 0);
    await page.getByTestId('node-drain-form').waitFor();
    await eventually('gpu-b tiles free again', async () => (await page.locator('[data-testid="gpu-tile"][data-state="free"]').count()) === 4);
    await eventually('ready again', async () => (await page.getByTestId('node-state').textContent()).trim() === 'ready');
    r = await apiCall(api, 'GET', '/api/v1/nodes/gpu-b', admin);
    assert.equal(r.json.drain, null);
    checkClean('node drain');
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
    // Only admins drain nodes: alice's node page has no control for it.
    await navigate('#/nodes/gpu-b');
    await page.locator('h1', { hasText: 'gpu-b' }).waitFor();
    assert.equal(await page.getByTestId('node-drain-form').count(), 0);
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

    await page.getByTestId('submit-time-limit').fill('90m');
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
    // On a phone each process is a card: nothing scrolls sideways, the job link in view.
    await page.setViewportSize({ width: 390, height: 844 });
    const procFit = await eventually('the phone layout', async () => {
      const r = await page.evaluate(() => {
        const wrap = document.querySelector('[data-testid="procs-table"]').closest('.table-wrap');
        const link = document.querySelector('[data-testid="proc-job"]').getBoundingClientRect();
        return { vw: window.innerWidth, doc: document.documentElement.scrollWidth, sw: wrap.scrollWidth, cw: wrap.clientWidth, link: link.right };
      });
      return r.vw === 390 ? r : null;
    });
    assert.ok(procFit.doc <= procFit.vw && procFit.sw <= procFit.cw && procFit.link <= procFit.vw, `the processes scroll sideways on a phone: ${JSON.stringify(procFit)}`);
    await shot('06b-gpu-job-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
    // Its tile on the node page: "Memory: 1.0 / 80 GiB" stays inside the tile, on a laptop
    // (a node's 8 tiles in a row) and on a phone.
    await navigate(`#/nodes/${jobTask.node}`);
    const tile = page.locator(`[data-testid="gpu-tile"][data-index="${jobTask.gpu}"]`);
    await eventually('memory in use on the tile', async () => !/^0 /.test((await tile.locator('.mem dd').textContent()).trim()));
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      const fit = await tile.evaluate((li) => {
        const cs = getComputedStyle(li);
        const inner = li.getBoundingClientRect().right - parseFloat(cs.borderRightWidth) - parseFloat(cs.paddingRight);
        const mem = li.querySelector('.mem');
        return { text: mem.textContent, ddRight: mem.querySelector('dd').getBoundingClientRect().right, inner, sw: mem.scrollWidth, cw: mem.clientWidth };
      });
      assert.ok(fit.ddRight <= fit.inner + 0.5 && fit.sw <= fit.cw, `the memory text passes its tile at ${width} px: ${JSON.stringify(fit)}`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await navigate(`#/nodes/${jobTask.node}/gpus/${jobTask.gpu}`);
    await page.locator('[data-testid="proc-job"]').first().waitFor();
  });

  step('alice cancels the job from its page', async () => {
    await page.locator('[data-testid="proc-job"]').first().click();
    await eventually('the job page', () => page.url().endsWith(`#/jobs/${jobId}`));
    // How long it has run, and when its time limit stops it.
    await page.getByTestId('job-started').waitFor();
    assert.match(await page.getByTestId('job-time-limit').textContent(), /^\s*1 h 30 min \(stops in 1 h (29|30) min\)\s*$/);
    await page.getByTestId('cancel-job').click();
    await page.getByTestId('cancel-confirm').click();
    await eventually('state cancelled', async () => (await page.getByTestId('job-state').textContent()).trim() === 'cancelled', { timeout: 30_000 });
    await navigate(`#/nodes/${jobTask.node}/gpus/${jobTask.gpu}`);
    await eventually('the process gone', async () => (await page.locator('[data-testid="proc-job"]').count()) === 0, { timeout: 30_000 });
    await checkScreen('07-gpu-after');
  });

  step('a failed job: its task is failed (red), the log opens on stderr, Follow is off, the node links', async () => {
    const token = await login('alice');
    const r = await apiCall(api, 'POST', '/api/v1/jobs', token, {
      name: 'crash', shell: true, command: ['echo starting; echo "CUDA error: out of memory" >&2; exit 3'],
      groups: [{ role: 'worker', replicas: 1, gpus_per_task: 1 }],
    });
    assert.equal(r.status, 201, r.text);
    const id = r.json.id;
    await navigate(`#/jobs/${id}`);
    await eventually('state failed', async () => (await page.getByTestId('job-state').textContent()).trim() === 'failed', { timeout: 60_000 });
    const row = page.getByTestId('task-row').first();
    await eventually('the task failed', async () => (await row.getByTestId('task-state').textContent()).trim() === 'failed');
    assert.match(await row.getByTestId('task-state').getAttribute('class'), /\bfailed\b/);
    const job = (await apiCall(api, 'GET', `/api/v1/jobs/${id}`, token)).json;
    const t = job.tasks[0];
    assert.equal(await row.getByTestId('task-node').getAttribute('href'), `#/nodes/${t.node}`);
    assert.equal(await row.locator('[data-testid="task-gpus"] a').first().getAttribute('href'), `#/nodes/${t.node}/gpus/${t.gpus[0]}`);
    assert.equal(await page.getByTestId('log-stderr').isChecked(), true, 'a failed job opens on stderr');
    await eventually('the error in the log', async () => /CUDA error: out of memory/.test(await page.getByTestId('log-view').textContent()));
    assert.equal(await page.getByTestId('log-follow').isChecked(), false, 'nothing to follow on a finished job');
    assert.equal(await page.getByTestId('log-follow').isDisabled(), true);
    assert.match(await page.getByTestId('job-reason').textContent(), /^\s*Reason:/);
    await checkScreen('07b-job-failed');
    await navigate(`#/nodes/${jobTask.node}/gpus/${jobTask.gpu}`); // where the next step starts
  });

  step("alice's sweep: its trials sorted by loss, a chart of loss per step; a trial's page links to it", async () => {
    const token = await login('alice');
    // loss = 10 lr + 1/step: lr 0.1 is the best trial at every step. No braces in the
    // script: {lr} is the sweep's placeholder.
    const script = [
      'import sys, time',
      'lr = float(sys.argv[1])',
      'for s in range(1, 4):',
      "    print('rota-metric loss=%f step=%d' % (10 * lr + 1.0 / s, s), flush=True)",
      '    time.sleep(0.2)',
    ].join('\n');
    const r = await apiCall(api, 'POST', '/api/v1/jobs', token, {
      name: 'lr-sweep', command: ['python3', '-c', script, '{lr}'], workdir: '/tmp',
      groups: [{ role: 'worker', replicas: 1, gpus_per_task: 1 }],
      sweep: { method: 'grid', parameters: { lr: [0.3, 0.1, 0.2] } },
    });
    assert.equal(r.status, 201, r.text);
    const id = r.json.array.id;
    await eventually(
      'every trial ended with its metrics',
      async () => {
        const a = (await apiCall(api, 'GET', `/api/v1/arrays/${id}`, token)).json;
        return a.counts.succeeded === 3 && a.members.every((m) => m.metrics?.loss?.last_step === 3);
      },
      { timeout: 90_000 },
    );
    await navigate(`#/arrays/${id}`);
    await page.locator('h1', { hasText: 'lr-sweep' }).waitFor();
    await eventually('3 trial rows', async () => (await page.getByTestId('trial-row').count()) === 3);
    const order = () => page.getByTestId('trial-row').evaluateAll((rows) => rows.map((e) => Number(e.dataset.index)));
    // lowest loss first: lr 0.1 (index 1), 0.2 (index 2), 0.3 (index 0)
    assert.deepEqual(await order(), [1, 2, 0]);
    assert.equal((await page.getByTestId('trial-best').first().textContent()).trim(), '1.33333');
    await eventually('a chart of the 3 curves', async () =>
      (await page.locator('[data-testid="curve-chart"][data-curves="3"] canvas').count()) === 1);
    assert.match(
      await page.getByTestId('curve-summary').textContent(),
      /^loss per step of the 3 best trials\. trial 1 \(lr=0\.1\): 1\.33333 at step 3; /,
    );
    await checkScreen('09-sweep');
    await page.getByTestId('goal-max').check();
    await eventually('highest first', async () => JSON.stringify(await order()) === '[0,2,1]');
    // A trial's own page says which sweep it belongs to.
    await page.getByTestId('trial-row').first().locator('a').first().click();
    await page.getByTestId('job-array').waitFor();
    assert.equal(await page.getByTestId('job-array').getAttribute('href'), `#/arrays/${id}`);
    await page.getByTestId('job-array').click();
    await eventually('back on the sweep', () => page.url().endsWith(`#/arrays/${id}`));
    // The jobs list names each trial's sweep, linked.
    await navigate('#/jobs');
    await eventually('the trials linked to their sweep', async () =>
      (await page.locator(`[data-testid="job-array-link"][href="#/arrays/${id}"]`).count()) === 3);
    assert.match(await page.getByTestId('job-array-link').first().textContent(), new RegExp(`^trial \\d of a${id}$`));
    await navigate(`#/nodes/${jobTask.node}/gpus/${jobTask.gpu}`); // where the next step starts
  });

  step('phone-sized GPU detail', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await chartsReady(4);
    await checkScreen('08-gpu-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
    checkClean('the whole run');
  });
});

// End-to-end test of the usage report and the power screen against a real `rota dev`, in
// Debian's Chromium. Same environment and checks as admin.test.mjs (axe-core, console errors,
// CSP violations, screenshots to $ROTA_WEB_ARTIFACTS as use-*.png); its own `rota dev`. No
// fixed sleeps: every wait polls a condition.
//
//   ROTA_BIN=/path/to/rota node --test e2e/usage.test.mjs
import { before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { NO_BROWSER, apiCall, browserSuite, eventually } from './helpers.mjs';

// ---------------------------------------------------------------- the test

describe('rota web UI: usage report and power', { timeout: 15 * 60_000, skip: NO_BROWSER }, () => {
  const ui = browserSuite({ tmpPrefix: 'rota-web-use-', shotPrefix: 'use-' });
  const { step, shot, checkA11y, checkClean, checkScreen, signIn, navigate, consoleErrors } = ui;
  let page, base, api, accounts, dataDir;
  before(() => {
    ({ page, base, api, accounts, dataDir } = ui);
  });

  let adminToken = '';
  let aliceToken = '';
  let reservationId = 0;
  /** What the API reports for gpu-a GPU 0 (its power range). */
  let gpuA0 = null;

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

  /** Runs `act` and returns the JSON of the usage report it loads (the first with `by`). */
  async function reportFrom(by, act) {
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('/api/v1/usage?') && new URL(r.url()).searchParams.get('by') === by),
      act(),
    ]);
    assert.equal(res.status(), 200, `GET ${res.url()}`);
    return { json: await res.json(), url: new URL(res.url()) };
  }

  /** The report table matches the API's answer: every row's figures, in order, and the total. */
  async function expectTable(report) {
    const table = page.getByTestId('report-table');
    await eventually(`the table by ${report.by}`, async () => (await table.getAttribute('data-by')) === report.by);
    const rows = byTest('report-row');
    await eventually(`${report.rows.length} rows`, async () => (await rows.count()) === report.rows.length);
    const shown = await rows.evaluateAll((trs) =>
      trs.map((tr) => ({
        key: tr.dataset.key,
        gpu_hours: Number(tr.querySelector('[data-col="gpu_hours"]').dataset.value),
        energy_kwh: Number(tr.querySelector('[data-col="energy_kwh"]').dataset.value),
        cpu_energy_kwh: Number(tr.querySelector('[data-col="cpu_energy_kwh"]').dataset.value),
        total_energy_kwh: Number(tr.querySelector('[data-col="total_energy_kwh"]').dataset.value),
        reserved_idle: Number(tr.querySelector('[data-col="reserved_idle_gpu_hours"]').dataset.value),
      })),
    );
    const want = [...report.rows]
      .sort((a, b) => b.gpu_hours - a.gpu_hours || a.key.localeCompare(b.key))
      .map((r) => ({
        key: r.key,
        gpu_hours: r.gpu_hours,
        energy_kwh: r.energy_kwh,
        cpu_energy_kwh: r.cpu_energy_kwh,
        total_energy_kwh: r.total_energy_kwh,
        reserved_idle: r.reserved_idle_gpu_hours,
      }));
    assert.deepEqual(shown, want, 'the rows, largest GPU time first');
    const total = page.getByTestId('report-total');
    for (const col of ['gpu_hours', 'used_gpu_hours', 'avg_util_pct', 'reserved_idle_gpu_hours', 'energy_kwh', 'cpu_energy_kwh', 'total_energy_kwh']) {
      const v = await total.locator(`[data-col="${col}"]`).getAttribute('data-value');
      assert.equal(Number(v), report.total[col], `total ${col}`);
    }
    assert.match(await total.textContent(), new RegExp(`Total\\s*\\(${report.rows.length} rows?\\)`));
  }

  /** The URL's hash (filters replace it without a history step). */
  const expectHash = (re) => eventually(`the URL to match ${re}`, async () => re.test(await page.evaluate(() => location.hash)));

  const colValues = (col) =>
    byTest('report-row').evaluateAll((trs, c) => trs.map((tr) => tr.querySelector(`[data-col="${c}"]`).dataset.value), col);

  step('the admin opens Usage: the report by node shows every node and the total', async () => {
    const a = await apiCall(api, 'POST', '/api/v1/auth/login', '', { username: 'admin', password: accounts.admin });
    assert.equal(a.status, 200);
    adminToken = a.json.token;
    const b = await apiCall(api, 'POST', '/api/v1/auth/login', '', { username: 'alice', password: accounts.alice });
    assert.equal(b.status, 200);
    aliceToken = b.json.token;
    // A reservation nobody uses: its GPU-hours are reserved but idle.
    const now = Date.now();
    const res = await apiCall(api, 'POST', '/api/v1/reservations', adminToken, {
      node: 'gpu-c',
      gpus: [1],
      start: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      end: new Date(now + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      title: 'unused',
    });
    assert.equal(res.status, 201, res.text);
    reservationId = res.json.id;
    // The agents' first samples are accounted (the API flushes before it answers).
    await eventually(
      'usage of all 3 nodes',
      async () => {
        const r = await apiCall(api, 'GET', '/api/v1/usage?by=node', adminToken);
        return r.status === 200 && ['gpu-a', 'gpu-b', 'gpu-c'].every((n) => r.json.rows.some((x) => x.key === n && x.gpu_hours > 0));
      },
      { timeout: 60_000, interval: 500 },
    );

    await page.goto(base + '/');
    await signIn('admin', accounts.admin);
    await page.getByTestId('current-user').waitFor();
    const first = await reportFrom('user', () => navLink('Usage').click());
    await page.waitForURL(/#\/usage$/);
    assert.equal(first.url.searchParams.get('user'), null, 'an admin asks for everyone');
    await page.getByTestId('report-table').waitFor();
    assert.equal((await page.getByTestId('report-who').textContent()).trim(), 'Figures for every user.');
    assert.equal(await page.getByTestId('report-period-30d').getAttribute('aria-pressed'), 'true');
    // 30 days, ending now.
    const span = Date.parse(first.url.searchParams.get('to')) - Date.parse(first.url.searchParams.get('from'));
    assert.equal(span, 30 * 86_400_000);
    // Idle GPU time belongs to nobody: the "(idle)" row.
    await expectTable(first.json);
    assert.ok(first.json.rows.some((r) => r.key === ''), 'idle GPU time is reported');
    assert.match(await byTest('report-row', { key: '' }).locator('th').textContent(), /\(idle\)/);

    const { json, url } = await reportFrom('node', () => page.getByTestId('report-by').selectOption('node'));
    await expectHash(/#\/usage\?by=node$/);
    assert.equal(url.searchParams.get('by'), 'node');
    await expectTable(json);
    for (const n of ['gpu-a', 'gpu-b', 'gpu-c']) await byTest('report-row', { key: n }).waitFor();
    assert.ok(json.total.gpu_hours > 0, 'some GPU time');
    assert.equal(json.total.energy_method === 'none', false, 'the simulated GPUs report energy');
    assert.equal(await byTest('report-row', { key: 'gpu-a' }).getByRole('link', { name: 'gpu-a' }).getAttribute('href'), '#/nodes/gpu-a');
    // Energy in three columns: the GPUs', the CPU packages' and their total, in that order.
    const heads = await page
      .locator('[data-testid="report-table"] thead [data-testid="report-sort"]')
      .evaluateAll((bs) => bs.map((b) => [b.dataset.col, b.querySelector('[aria-hidden="true"]')?.textContent.trim() ?? b.textContent.trim()]));
    const energyHeads = heads.filter(([col]) => /energy_kwh$/.test(col));
    assert.deepEqual(energyHeads, [
      ['energy_kwh', 'GPU kWh'],
      ['cpu_energy_kwh', 'CPU kWh'],
      ['total_energy_kwh', 'Total kWh'],
    ]);
    assert.equal(await page.getByRole('columnheader', { name: /CPU package energy/ }).count(), 1, 'the CPU column in words for a screen reader');
    assert.equal(await page.getByRole('columnheader', { name: /Total energy, GPU and CPU/ }).count(), 1);
    // rota dev's agents read no RAPL counter: CPU energy 0, the total is the GPUs'.
    assert.equal(json.total.cpu_energy_kwh, 0, JSON.stringify(json.total));
    assert.equal(json.total.total_energy_kwh, json.total.energy_kwh);
    await page.getByTestId('report-no-cpu').waitFor();
    // The table fits the page: no sideways scrolling at 1280 px.
    const fit = await page.evaluate(() => {
      const wrap = document.querySelector('[data-testid="report-table"]').closest('.table-wrap');
      return { scrollWidth: wrap.scrollWidth, clientWidth: wrap.clientWidth };
    });
    assert.ok(fit.scrollWidth <= fit.clientWidth, `the usage table scrolls sideways at 1280 px: ${JSON.stringify(fit)}`);
    await checkScreen('01-usage-node');
    await page.getByTestId('theme-toggle').click();
    await eventually('dark theme', () => page.evaluate(() => document.documentElement.dataset.theme === 'dark'));
    await checkScreen('02-usage-node-dark');
    await page.getByTestId('theme-toggle').click();
    await eventually('light theme', () => page.evaluate(() => document.documentElement.dataset.theme === 'light'));
    // A phone: the report's rows are cards (labelled figures) with the sort buttons above them;
    // neither the page nor the report's table scrolls sideways.
    await page.getByTestId('usage-period').waitFor(); // the quotas too
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const phone = await eventually('the phone layout', async () => {
        const r = await page.evaluate(() => {
          const wrap = document.querySelector('[data-testid="report-table"]').closest('.table-wrap');
          const row = document.querySelector('[data-testid="report-row"][data-key="gpu-a"]');
          const cell = row.querySelector('[data-col="gpu_hours"]');
          const sorts = [...document.querySelectorAll('[data-testid="report-sort"]')].map((b) => b.getBoundingClientRect());
          return {
            docWidth: document.scrollingElement.scrollWidth,
            viewport: window.innerWidth,
            scrollWidth: wrap.scrollWidth,
            clientWidth: wrap.clientWidth,
            rowRight: row.getBoundingClientRect().right,
            label: getComputedStyle(cell, '::before').content,
            sortsInView: sorts.every((b) => b.width > 1 && b.left >= 0 && b.right <= window.innerWidth),
          };
        });
        return r.viewport === 390 ? r : null;
      });
      assert.ok(phone.docWidth <= phone.viewport, `the Usage page scrolls sideways on a phone: ${JSON.stringify(phone)}`);
      assert.ok(phone.scrollWidth <= phone.clientWidth, `the usage report scrolls sideways on a phone: ${JSON.stringify(phone)}`);
      assert.ok(phone.rowRight <= phone.viewport, `a report row is wider than the phone: ${JSON.stringify(phone)}`);
      assert.match(phone.label, /GPU-hours: /, 'each figure of a card is labelled');
      assert.ok(phone.sortsInView, `the sort buttons are off-screen on a phone: ${JSON.stringify(phone)}`);
      await checkA11y('the usage report on a phone');
      await shot('01-usage-phone');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  step('the table sorts by a column, both ways, and says so', async () => {
    const keyHead = page.locator('[data-testid="report-sort"][data-col="key"]');
    await keyHead.click();
    assert.deepEqual(await byTest('report-row').evaluateAll((t) => t.map((r) => r.dataset.key)), ['gpu-a', 'gpu-b', 'gpu-c']);
    assert.equal(await page.locator('th:has([data-testid="report-sort"][data-col="key"])').getAttribute('aria-sort'), 'ascending');
    await keyHead.press('Enter'); // the keyboard sorts too
    assert.deepEqual(await byTest('report-row').evaluateAll((t) => t.map((r) => r.dataset.key)), ['gpu-c', 'gpu-b', 'gpu-a']);
    assert.equal(await page.locator('th:has([data-testid="report-sort"][data-col="key"])').getAttribute('aria-sort'), 'descending');

    await page.locator('[data-testid="report-sort"][data-col="energy_kwh"]').click();
    const desc = (await colValues('energy_kwh')).map(Number);
    assert.deepEqual(desc, [...desc].sort((x, y) => y - x), 'energy, largest first');
    await page.locator('[data-testid="report-sort"][data-col="energy_kwh"]').click();
    const asc = (await colValues('energy_kwh')).map(Number);
    assert.deepEqual(asc, [...asc].sort((x, y) => x - y), 'energy, smallest first');
    assert.equal(await page.locator('th:has([data-testid="report-sort"][data-col="energy_kwh"])').getAttribute('aria-sort'), 'ascending');
    assert.equal(await page.locator('th:has([data-testid="report-sort"][data-col="key"])').getAttribute('aria-sort'), null);

    // CPU and total energy sort like the others: largest first on the first click.
    for (const col of ['cpu_energy_kwh', 'total_energy_kwh']) {
      await page.locator(`[data-testid="report-sort"][data-col="${col}"]`).click();
      assert.equal(await page.locator(`th:has([data-testid="report-sort"][data-col="${col}"])`).getAttribute('aria-sort'), 'descending');
      const d = (await colValues(col)).map(Number);
      assert.deepEqual(d, [...d].sort((x, y) => y - x), `${col}, largest first`);
      await page.locator(`[data-testid="report-sort"][data-col="${col}"]`).click();
      assert.equal(await page.locator(`th:has([data-testid="report-sort"][data-col="${col}"])`).getAttribute('aria-sort'), 'ascending');
      const a = (await colValues(col)).map(Number);
      assert.deepEqual(a, [...a].sort((x, y) => x - y), `${col}, smallest first`);
    }
  });

  step('the period: last 24 h, then a custom period with nothing in it', async () => {
    const { json, url } = await reportFrom('node', () => page.getByTestId('report-period-24h').click());
    await expectHash(/#\/usage\?by=node&period=24h$/);
    assert.equal(Date.parse(url.searchParams.get('to')) - Date.parse(url.searchParams.get('from')), 86_400_000);
    assert.equal(await page.getByTestId('report-period-24h').getAttribute('aria-pressed'), 'true');
    assert.equal(await page.getByTestId('report-period-30d').getAttribute('aria-pressed'), 'false');
    await eventually('the range in words', async () => /the last 24 hours/.test(await page.getByTestId('report-range').textContent()));
    assert.equal(await byTest('report-row').count(), json.rows.length);

    await page.getByTestId('report-period-custom').click();
    await page.getByTestId('report-from').fill('2020-01-02T00:00');
    await page.getByTestId('report-to').fill('2020-01-01T00:00');
    await page.getByTestId('report-apply').click();
    assert.match(await page.getByTestId('report-custom-error').textContent(), /end must be after the start/);
    await page.getByTestId('report-to').fill('2020-01-03T00:00');
    const past = await reportFrom('node', () => page.getByTestId('report-apply').click());
    await expectHash(/#\/usage\?by=node&from=[^&]+Z&to=[^&]+Z$/);
    assert.equal(Date.parse(past.url.searchParams.get('to')) - Date.parse(past.url.searchParams.get('from')), 86_400_000);
    assert.deepEqual(past.json.rows, []);
    await page.getByTestId('report-empty').waitFor();
    assert.equal(await page.getByTestId('report-table').count(), 0);
    await checkScreen('03-usage-custom');
  });

  step('the CSV download has every row of the table and the total', async () => {
    const { json } = await reportFrom('group', async () => {
      await page.getByTestId('report-period-7d').click();
      await page.getByTestId('report-by').selectOption('group');
    });
    await expectTable(json);
    const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('report-csv').click()]);
    assert.match(dl.suggestedFilename(), /^rota-usage-group-\d{8}T\d{4}Z-\d{8}T\d{4}Z\.csv$/);
    const csv = readFileSync(await dl.path(), 'utf8');
    const lines = csv.trimEnd().split('\r\n');
    assert.equal(
      lines[0],
      'group,gpu_hours,busy_gpu_hours,used_gpu_hours,avg_util_pct,idle_gpu_hours,reserved_idle_gpu_hours,energy_kwh,cpu_energy_kwh,total_energy_kwh,idle_energy_kwh,unmeasured_gpu_hours,energy_method,cost,currency,co2_kg',
    );
    assert.equal(lines.length, json.rows.length + 2, csv);
    const totalLine = lines.at(-1).split(',');
    assert.equal(totalLine[0], '(total)');
    assert.equal(Number(totalLine[1]), json.total.gpu_hours);
    assert.equal(Number(totalLine[7]), json.total.energy_kwh);
    assert.equal(Number(totalLine[8]), json.total.cpu_energy_kwh);
    assert.equal(Number(totalLine[9]), json.total.total_energy_kwh);
    // Each row as the API has it (in the table's order).
    const keys = await byTest('report-row').evaluateAll((t) => t.map((r) => r.dataset.key));
    keys.forEach((k, i) => {
      const row = json.rows.find((r) => r.key === k);
      const cells = lines[i + 1].split(',');
      assert.equal(cells[0], k === '' ? '(no group)' : k);
      assert.equal(Number(cells[1]), row.gpu_hours);
      assert.equal(Number(cells[7]), row.energy_kwh);
      assert.equal(Number(cells[8]), row.cpu_energy_kwh);
      assert.equal(Number(cells[9]), row.total_energy_kwh);
      assert.equal(cells[12], row.energy_method);
    });
    checkClean('csv');
  });

  step('by reservation: reserved GPU-hours nobody used stand out', async () => {
    await eventually(
      'idle reserved GPU time in the API',
      async () => {
        const r = await apiCall(api, 'GET', '/api/v1/usage?by=reservation', adminToken);
        return r.status === 200 && r.json.rows.some((x) => x.key === String(reservationId) && x.reserved_idle_gpu_hours > 0);
      },
      { timeout: 60_000, interval: 500 },
    );
    const { json } = await reportFrom('reservation', () => page.getByTestId('report-by').selectOption('reservation'));
    await expectTable(json);
    const row = byTest('report-row', { key: reservationId });
    assert.equal((await row.locator('th').textContent()).trim(), `#${reservationId}`);
    assert.match(await row.getAttribute('class'), /\bidle\b/, 'the row is marked');
    const cell = row.locator('[data-col="reserved_idle_gpu_hours"]');
    assert.match(await cell.getAttribute('class'), /\bflag\b/, 'the cell is highlighted');
    assert.match(await cell.textContent(), /idle reserved/, 'in words too, not by colour alone');
    assert.match(await page.getByTestId('report-idle-note').textContent(), /reserved GPU-hours were idle/);
    // The GPU time of no reservation is not marked.
    const other = byTest('report-row', { key: '' });
    if ((await other.count()) > 0) {
      const v = Number(await other.locator('[data-col="reserved_idle_gpu_hours"]').getAttribute('data-value'));
      assert.equal(v, 0);
      assert.doesNotMatch((await other.getAttribute('class')) ?? '', /\bidle\b/);
    }
    await checkScreen('035-usage-reservation');
  });

  /** The power table's node rows: name, GPUs, refused or failed, whether open, and the sums. */
  const powerNodes = () =>
    byTest('power-node').evaluateAll((trs) =>
      trs.map((tr) => ({
        node: tr.dataset.node,
        gpus: Number(tr.dataset.gpus),
        bad: Number(tr.dataset.bad),
        open: tr.querySelector('[data-testid="power-node-toggle"]').getAttribute('aria-expanded') === 'true',
        planned: tr.querySelector('[data-testid="power-node-planned"]').dataset.value,
        inForce: tr.querySelector('[data-testid="power-node-in-force"]').dataset.value,
        draw: tr.querySelector('[data-testid="power-node-draw"]').dataset.value,
      })),
    );

  /** The GPU rows shown, as "node/index". */
  const powerRows = () => byTest('power-row').evaluateAll((trs) => trs.map((tr) => `${tr.dataset.node}/${tr.dataset.index}`));

  /** What the node rows must say for an answer of GET /api/v1/power (sums to 0.1 W, '' for none known). */
  function expectedNodes(power) {
    const sum = (vals) => {
      const known = vals.filter((v) => v !== null);
      return known.length ? String(Math.round(known.reduce((a, b) => a + b, 0) * 10) / 10) : '';
    };
    const byNode = new Map();
    for (const g of power.gpus) byNode.set(g.node, [...(byNode.get(g.node) ?? []), g]);
    return [...byNode].map(([node, gs]) => ({
      node,
      gpus: gs.length,
      bad: gs.filter((g) => g.outcome === 'refused' || g.outcome === 'error').length,
      planned: sum(gs.map((g) => g.target_w ?? g.default_w)),
      inForce: sum(gs.map((g) => g.in_force_w)),
      draw: sum(gs.map((g) => g.power_w)),
    }));
  }

  /** The newest GET /api/v1/power answer the page loaded (it polls every 5 s). */
  let lastPower = null;
  const powerToggle = (node) => byTest('power-node', { node }).getByTestId('power-node-toggle');

  step('power: one row per node with its sums, which opens to its GPUs', async () => {
    // A driver that refuses to set gpu-a GPU 7's power limit (as without root on a real
    // node), loaded by the simulated GPUs long before a policy gives it a limit.
    const simConfig = path.join(dataDir, 'nodes', 'gpu-a', 'sim-nvml.json');
    const sim = JSON.parse(readFileSync(simConfig, 'utf8'));
    sim.faults = { ...(sim.faults ?? {}), '7:set_power_limit': 'no_permission' };
    writeFileSync(`${simConfig}.tmp`, JSON.stringify(sim, null, 2));
    renameSync(`${simConfig}.tmp`, simConfig);

    page.on('response', async (r) => {
      if (new URL(r.url()).pathname !== '/api/v1/power' || r.status() !== 200) return;
      try {
        lastPower = await r.json();
      } catch {
        // the page moved on
      }
    });
    await navLink('Power').click();
    await page.waitForURL(/#\/power$/);
    await page.getByTestId('power-table').waitFor();
    await page.getByTestId('pp-empty').waitFor();
    gpuA0 = await eventually(
      'the power range of gpu-a GPU 0',
      async () => {
        const r = await apiCall(api, 'GET', '/api/v1/power', adminToken);
        const g = r.json.gpus.find((x) => x.node === 'gpu-a' && x.index === 0);
        return g && g.min_w !== null && g.max_w !== null && g.min_w > 1 ? g : null;
      },
      { timeout: 30_000, interval: 250 },
    );
    // One row per node, in the API's order, with its GPUs counted and its limits and draw
    // added up as in the answer the page shows; nothing refused, so every node closed and no
    // GPU row.
    await eventually(
      'the node rows as the API has them',
      async () => {
        if (!lastPower || !lastPower.gpus.every((g) => g.default_w !== null)) return false;
        const want = expectedNodes(lastPower).map((n) => ({
          node: n.node,
          gpus: n.gpus,
          bad: n.bad,
          open: false,
          planned: n.planned,
          inForce: n.inForce,
          draw: n.draw,
        }));
        const shown = await powerNodes();
        return JSON.stringify(shown) === JSON.stringify(want) ? shown : false;
      },
      { timeout: 30_000, interval: 250 },
    );
    assert.deepEqual(
      (await powerNodes()).map((n) => [n.node, n.gpus, n.bad]),
      [
        ['gpu-a', 8, 0],
        ['gpu-b', 4, 0],
        ['gpu-c', 2, 0],
      ],
    );
    assert.deepEqual(await powerRows(), []);
    const aRow = byTest('power-node', { node: 'gpu-a' });
    assert.equal(await aRow.getByRole('link', { name: 'gpu-a', exact: true }).getAttribute('href'), '#/nodes/gpu-a');
    assert.equal((await aRow.getByTestId('power-node-gpus').textContent()).trim(), '8 GPUs');
    assert.match(await aRow.getByTestId('power-node-bad').textContent(), /no refusals/);
    assert.equal(await page.getByRole('columnheader', { name: 'Applied on the node' }).count(), 1, 'the agent in plain words');
    assert.equal(await powerToggle('gpu-a').evaluate((b) => b.tagName), 'BUTTON');
    assert.equal(await page.getByRole('button', { name: 'GPUs of gpu-a' }).getAttribute('aria-expanded'), 'false');

    // The mouse opens gpu-a: its 8 GPUs, in order.
    await powerToggle('gpu-a').click();
    assert.equal(await powerToggle('gpu-a').getAttribute('aria-expanded'), 'true');
    await eventually("gpu-a's 8 GPU rows", async () => (await powerRows()).join() === [0, 1, 2, 3, 4, 5, 6, 7].map((i) => `gpu-a/${i}`).join());
    assert.equal(await byTest('power-row', { node: 'gpu-a', index: 3 }).getByRole('link').getAttribute('href'), '#/nodes/gpu-a/gpus/3');
    // The keyboard opens gpu-b (Enter) and closes it again (Space).
    await powerToggle('gpu-b').focus();
    await page.keyboard.press('Enter');
    assert.equal(await powerToggle('gpu-b').getAttribute('aria-expanded'), 'true');
    assert.equal((await powerRows()).filter((r) => r.startsWith('gpu-b/')).length, 4);
    await page.keyboard.press('Space');
    assert.equal(await powerToggle('gpu-b').getAttribute('aria-expanded'), 'false');
    assert.equal((await powerRows()).filter((r) => r.startsWith('gpu-b/')).length, 0);

    // Expand all, collapse all.
    await page.getByTestId('power-expand-all').click();
    assert.equal((await powerRows()).length, 14);
    assert.ok((await powerNodes()).every((n) => n.open));
    await page.getByTestId('power-collapse-all').click();
    assert.deepEqual(await powerRows(), []);
    assert.ok((await powerNodes()).every((n) => !n.open));

    // A filter shows the matching nodes open, with only their matching GPUs.
    await page.getByTestId('power-filter').fill('gpu-c');
    await eventually('only gpu-c, open', async () => (await powerNodes()).map((n) => `${n.node}:${n.open}`).join() === 'gpu-c:true');
    assert.deepEqual(await powerRows(), ['gpu-c/0', 'gpu-c/1']);
    await page.getByTestId('power-filter').fill('V100');
    await eventually('only gpu-b, open', async () => (await powerNodes()).map((n) => `${n.node}:${n.open}`).join() === 'gpu-b:true');
    assert.deepEqual(await powerRows(), ['gpu-b/0', 'gpu-b/1', 'gpu-b/2', 'gpu-b/3']);
    // Without the filter, the nodes are as they were (all closed), and gpu-a is opened again.
    await page.getByTestId('power-filter').fill('');
    await eventually('3 closed nodes', async () => (await powerNodes()).map((n) => `${n.node}:${n.open}`).join() === 'gpu-a:false,gpu-b:false,gpu-c:false');
    await powerToggle('gpu-a').click();

    // No policy: no target, the default.
    const row = byTest('power-row', { node: 'gpu-a', index: 0 });
    assert.equal(await row.getByTestId('power-target').getAttribute('data-value'), '');
    assert.match(await row.getByTestId('power-target').textContent(), /default/);
    await checkScreen('04-power');
    await page.getByTestId('theme-toggle').click();
    await eventually('dark theme', () => page.evaluate(() => document.documentElement.dataset.theme === 'dark'));
    await checkScreen('04-power-dark');
    await page.getByTestId('theme-toggle').click();
    await eventually('light theme', () => page.evaluate(() => document.documentElement.dataset.theme === 'light'));

    // A phone: each node and GPU is a card (the labels by the figures); neither the page
    // nor the table scrolls sideways, and the toggle is in view.
    try {
      await page.setViewportSize({ width: 390, height: 844 });
      const phone = await eventually('the phone layout', async () => {
        const r = await page.evaluate(() => {
          const wrap = document.querySelector('[data-testid="power-table"]').closest('.table-wrap');
          const b = document.querySelector('[data-testid="power-node"][data-node="gpu-b"] [data-testid="power-node-toggle"]').getBoundingClientRect();
          const draw = document.querySelector('[data-testid="power-node"][data-node="gpu-b"] [data-testid="power-node-draw"]');
          return {
            viewport: window.innerWidth,
            docWidth: document.documentElement.scrollWidth,
            scrollWidth: wrap.scrollWidth,
            clientWidth: wrap.clientWidth,
            toggleLeft: b.left,
            toggleRight: b.right,
            drawLabel: getComputedStyle(draw, '::before').content,
            drawRight: draw.getBoundingClientRect().right,
          };
        });
        return r.viewport === 390 ? r : null;
      });
      assert.ok(phone.docWidth <= phone.viewport, `the page scrolls sideways on a phone: ${JSON.stringify(phone)}`);
      assert.ok(phone.scrollWidth <= phone.clientWidth, `the power table scrolls sideways on a phone: ${JSON.stringify(phone)}`);
      assert.ok(phone.toggleLeft >= 0 && phone.toggleRight <= phone.viewport, `the toggle is off-screen: ${JSON.stringify(phone)}`);
      assert.ok(phone.drawRight <= phone.viewport, `the draw is off-screen: ${JSON.stringify(phone)}`);
      assert.match(phone.drawLabel, /Draw: /, 'a card labels its figures');
      await powerToggle('gpu-b').click();
      assert.equal((await powerRows()).filter((r) => r.startsWith('gpu-b/')).length, 4);
      await powerToggle('gpu-b').click();
      await shot('04-power-phone');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  step('power: a limit outside the GPUs range shows the server message; nothing is stored', async () => {
    await page.getByTestId('pp-new').click();
    await page.getByTestId('pp-form').waitFor();
    assert.match(await page.getByTestId('pp-ranges').textContent(), new RegExp(`${gpuA0.min_w}–${gpuA0.max_w} W`));
    const tooLow = Math.max(1, Math.floor(gpuA0.min_w / 2));
    const bad = { name: 'cap-a', limit: tooLow, scope: { nodes: ['gpu-a'] } };
    const expected = await apiCall(api, 'POST', '/api/v1/power/policies', adminToken, bad);
    assert.equal(expected.status, 400, expected.text);
    assert.match(expected.json.error.message, /policy\.limit/, 'the server names the field');
    await page.getByTestId('pp-name').fill('cap-a');
    await page.getByTestId('pp-watts').fill(String(tooLow));
    await page.getByTestId('pp-nodes').fill('gpu-a');
    await page.getByTestId('pp-create').click();
    await expectServerError(expected.json.error.message);
    const list = await apiCall(api, 'GET', '/api/v1/power/policies', adminToken);
    assert.deepEqual(list.json.policies, [], 'nothing stored');
    await checkScreen('05-power-refused');
  });

  step('power: a limit in range is created and becomes the target of the GPUs in scope', async () => {
    const limit = Math.round((gpuA0.min_w + gpuA0.max_w) / 2);
    await page.getByTestId('pp-watts').fill(String(limit));
    await page.getByTestId('pp-create').click();
    const prow = byTest('pp-row', { name: 'cap-a' });
    await prow.waitFor();
    assert.equal(await page.getByTestId('pp-form').count(), 0, 'the form closes');
    assert.match(await page.getByTestId('power-notice').textContent(), /cap-a created/);
    assert.equal((await prow.getByTestId('pp-watts-cell').textContent()).trim(), `${limit} W`);
    const list = await apiCall(api, 'GET', '/api/v1/power/policies', adminToken);
    assert.equal(list.json.policies.length, 1);
    assert.equal(list.json.policies[0].kind, 'limit');
    assert.equal(list.json.policies[0].watts, limit);
    assert.deepEqual(list.json.policies[0].scope.nodes, ['gpu-a']);

    // Every GPU of gpu-a gets it as its target; the other nodes keep their default.
    await eventually(
      `target ${limit} W on gpu-a's 8 GPUs`,
      async () => {
        const t = await byTest('power-row', { node: 'gpu-a' }).evaluateAll((trs) =>
          trs.map((tr) => tr.querySelector('[data-testid="power-target"]').dataset.value),
        );
        return t.length === 8 && t.every((v) => v === String(limit));
      },
      { timeout: 30_000, interval: 250 },
    );
    // gpu-a's planned total is the policy's limit 8 times; gpu-b (closed) keeps its defaults.
    const aPlanned = byTest('power-node', { node: 'gpu-a' }).getByTestId('power-node-planned');
    await eventually(`gpu-a plans ${8 * limit} W`, async () => (await aPlanned.getAttribute('data-value')) === String(8 * limit));
    assert.equal((await byTest('power-node', { node: 'gpu-a' }).getByTestId('power-node-why').textContent()).trim(), 'cap-a');
    assert.equal((await byTest('power-node', { node: 'gpu-b' }).getByTestId('power-node-why').textContent()).trim(), 'no policy');
    const bPlanned = byTest('power-node', { node: 'gpu-b' }).getByTestId('power-node-planned');
    assert.equal(await bPlanned.getAttribute('data-value'), expectedNodes(lastPower).find((n) => n.node === 'gpu-b').planned);
    assert.equal(await byTest('power-row', { node: 'gpu-b' }).count(), 0);

    // The agent's outcome as the API has it: `set` (the limit in force) or, where the agent
    // may not set limits (not root), `refused` marked in the row and in the alert above.
    const outcomeOf = (index) =>
      eventually(
        `an outcome for gpu-a GPU ${index}`,
        async () => {
          const r = await apiCall(api, 'GET', '/api/v1/power', adminToken);
          const x = r.json.gpus.find((y) => y.node === 'gpu-a' && y.index === index);
          return x && x.outcome && x.outcome !== 'unchanged' ? x : null;
        },
        { timeout: 30_000, interval: 250 },
      );
    const g = await outcomeOf(0);
    const row = byTest('power-row', { node: 'gpu-a', index: 0 });
    await eventually(`outcome ${g.outcome} shown`, async () => (await row.getAttribute('data-outcome')) === g.outcome, { timeout: 15_000 });
    if (g.outcome === 'refused' || g.outcome === 'error') {
      assert.match(await row.getAttribute('class'), /\bbad\b/);
      assert.match(await page.getByTestId('power-bad').textContent(), /gpu-a GPU 0/);
    } else {
      assert.equal(g.outcome, 'set', JSON.stringify(g));
      await eventually(`${limit} W in force`, async () => (await row.getByTestId('power-in-force').getAttribute('data-value')) === String(limit), {
        timeout: 15_000,
      });
      if (await page.getByTestId('power-bad').count()) assert.doesNotMatch(await page.getByTestId('power-bad').textContent(), /gpu-a GPU 0:/);
    }
    // GPU 7's driver refuses: its row and its node's row are marked, the alert names it.
    const g7 = await outcomeOf(7);
    assert.ok(g7.outcome === 'refused' || g7.outcome === 'error', JSON.stringify(g7));
    const row7 = byTest('power-row', { node: 'gpu-a', index: 7 });
    await eventually(`outcome ${g7.outcome} of GPU 7 shown`, async () => (await row7.getAttribute('data-outcome')) === g7.outcome, { timeout: 15_000 });
    assert.match(await row7.getAttribute('class'), /\bbad\b/);
    assert.match(await page.getByTestId('power-bad').textContent(), /gpu-a GPU 7/);
    const aNode = byTest('power-node', { node: 'gpu-a' });
    const badA = (await apiCall(api, 'GET', '/api/v1/power', adminToken)).json.gpus.filter(
      (x) => x.node === 'gpu-a' && (x.outcome === 'refused' || x.outcome === 'error'),
    ).length;
    await eventually(`gpu-a counted with ${badA} refused or failed`, async () => (await aNode.getAttribute('data-bad')) === String(badA), { timeout: 15_000 });
    assert.match(await aNode.getAttribute('class'), /\bbad\b/);
    assert.match(await aNode.getByTestId('power-node-bad').textContent(), new RegExp(`${badA} refused or failed`));

    // Opened anew, the screen shows the node with a refused GPU open and the others closed.
    await page.reload();
    await page.getByTestId('power-table').waitFor();
    await eventually(
      'gpu-a open, gpu-b and gpu-c closed',
      async () => (await powerNodes()).map((n) => `${n.node}:${n.open}`).join() === 'gpu-a:true,gpu-b:false,gpu-c:false',
      { timeout: 15_000 },
    );
    assert.deepEqual(await powerRows(), [0, 1, 2, 3, 4, 5, 6, 7].map((i) => `gpu-a/${i}`));
    await checkScreen('06-power-limit');
  });

  step('power: deleting the policy removes it and the targets go back to the default', async () => {
    const prow = byTest('pp-row', { name: 'cap-a' });
    await prow.getByTestId('pp-delete').click();
    await prow.getByTestId('pp-delete-confirm').click();
    await page.getByTestId('pp-empty').waitFor();
    assert.match(await page.getByTestId('power-notice').textContent(), /cap-a deleted/);
    const list = await apiCall(api, 'GET', '/api/v1/power/policies', adminToken);
    assert.deepEqual(list.json.policies, []);
    // gpu-a stays open whatever GPU 7 reports now (its default needs no setting).
    await page.getByTestId('power-expand-all').click();
    await eventually(
      'no target on gpu-a',
      async () => {
        const t = await byTest('power-row', { node: 'gpu-a' }).evaluateAll((trs) =>
          trs.map((tr) => tr.querySelector('[data-testid="power-target"]').dataset.value),
        );
        return t.length === 8 && t.every((v) => v === '');
      },
      { timeout: 30_000, interval: 250 },
    );
    checkClean('power policy deleted');
  });

  step('power at 100 nodes x 8 GPUs (the API answer replaced in the page): one row per node', async () => {
    // rota dev runs 3 nodes here; a cluster of 100 is the answer of this one with 800 GPUs,
    // two of gpu-042's refused.
    const real = (await apiCall(api, 'GET', '/api/v1/power', adminToken)).json;
    const like = real.gpus.find((g) => g.node === 'gpu-a' && g.index === 0);
    const gpus = [];
    for (let n = 1; n <= 100; n++) {
      const node = `gpu-${String(n).padStart(3, '0')}`;
      for (let i = 0; i < 8; i++) {
        const refused = node === 'gpu-042' && i >= 6;
        const busy = (n * 8 + i) % 3 === 0;
        gpus.push({
          ...like,
          node,
          index: i,
          uuid: `GPU-e2e-${n}-${i}`,
          target_w: n <= 50 ? 300 : null,
          in_force_w: n <= 50 && !refused ? 300 : like.default_w,
          power_w: busy ? 280 + i : 60,
          busy,
          policies: n <= 50 ? ['half-cap'] : [],
          reason: n <= 50 ? 'limit of policy half-cap' : '',
          outcome: refused ? 'refused' : n <= 50 ? 'set' : '',
          detail: refused ? 'GPU 6: setting power limits needs root' : '',
        });
      }
    }
    const big = { ...real, gpus };
    await page.route('**/api/v1/power', (route) => route.fulfill({ json: big }));
    try {
      await page.reload();
      await page.getByTestId('power-table').waitFor();
      await eventually('100 node rows', async () => (await byTest('power-node').count()) === 100);
      assert.match(await page.getByTestId('power-count').textContent(), /100 nodes, 800 GPUs/);
      const nodes = await powerNodes();
      assert.deepEqual(nodes.filter((n) => n.open).map((n) => n.node), ['gpu-042'], 'only the node with refused GPUs starts open');
      const want = expectedNodes(big);
      assert.deepEqual(
        nodes.map((n) => [n.node, n.gpus, n.bad, n.planned, n.inForce, n.draw]),
        want.map((n) => [n.node, n.gpus, n.bad, n.planned, n.inForce, n.draw]),
      );
      assert.deepEqual(await powerRows(), [0, 1, 2, 3, 4, 5, 6, 7].map((i) => `gpu-042/${i}`));
      // Closed, the table fits a laptop screen.
      const fit = await page.evaluate(() => {
        const wrap = document.querySelector('[data-testid="power-table"]').closest('.table-wrap');
        return { scrollWidth: wrap.scrollWidth, clientWidth: wrap.clientWidth };
      });
      assert.ok(fit.scrollWidth <= fit.clientWidth, `the power table scrolls sideways at 1280 px: ${JSON.stringify(fit)}`);
      await checkScreen('09-power-100-nodes');
      await page.getByTestId('power-expand-all').click();
      await eventually('800 GPU rows', async () => (await byTest('power-row').count()) === 800);
      await page.getByTestId('power-collapse-all').click();
      await eventually('no GPU row', async () => (await byTest('power-row').count()) === 0);
      try {
        await page.setViewportSize({ width: 390, height: 844 });
        await powerToggle('gpu-042').click();
        await eventually("gpu-042's rows", async () => (await powerRows()).length === 8);
        await shot('09-power-100-nodes-phone');
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    } finally {
      await page.unroute('**/api/v1/power');
    }
    checkClean('power at 100 nodes');
  });

  step('alice sees her own figures and the power table, without admin controls', async () => {
    const own = await apiCall(api, 'GET', '/api/v1/usage?by=user', aliceToken);
    assert.equal(own.status, 200, own.text);
    assert.equal(own.json.user, 'alice');
    await page.getByTestId('sign-out').click();
    await page.getByTestId('signin-form').waitFor();
    await signIn('alice', accounts.alice);
    await page.getByTestId('current-user').waitFor();
    const { json, url } = await reportFrom('user', () => navigate('#/usage'));
    assert.equal(url.searchParams.get('user'), null, 'the UI does not ask for someone else');
    assert.equal(json.user, 'alice');
    await eventually('whose figures', async () =>
      (await page.getByTestId('report-who').textContent()).trim() === "Your own figures (alice): only admins see everyone's here.");
    assert.equal(await page.getByTestId('report-user').count(), 0, 'no user filter for a non-admin');
    assert.ok(json.rows.every((r) => r.key === 'alice'), JSON.stringify(json.rows));
    await checkScreen('07-usage-alice');

    await navLink('Power').click();
    await page.getByTestId('power-table').waitFor();
    assert.equal(await page.getByTestId('pp-new').count(), 0);
    assert.equal(await page.getByTestId('pp-delete').count(), 0);
    await checkScreen('08-power-alice');
  });
});

// Unit tests of src/lib/usage.ts (the usage report's columns, sorting, amounts and CSV):
// `npm run test:unit`, no server or browser.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { amount, csvName, energyMethodText, keyLabel, keyText, reportColumns, reportCsv, sortRows, CSV_FIGURES } from '../src/lib/usage.ts';
import { figure, powerW, watts } from '../src/lib/format.ts';
import { w } from '../src/lib/power.ts';
import { cores, cpuEnergyText } from '../src/lib/nodes.ts';

/** A row of figures: zeros but what `f` sets. */
function figures(f = {}) {
  return {
    gpu_hours: 0,
    busy_gpu_hours: 0,
    used_gpu_hours: 0,
    avg_util_pct: 0,
    idle_gpu_hours: 0,
    reserved_idle_gpu_hours: 0,
    energy_kwh: 0,
    cpu_energy_kwh: 0,
    total_energy_kwh: 0,
    idle_energy_kwh: 0,
    unmeasured_gpu_hours: 0,
    energy_method: 'counter',
    ...f,
  };
}

const row = (key, f) => ({ key, ...figures(f) });

function report(rows, total = {}, extra = {}) {
  return {
    by: 'node',
    from: '2026-11-25T10:00:00Z',
    to: '2026-11-26T10:00:00.000Z',
    rows,
    total: figures(total),
    ...extra,
  };
}

const ROWS = [
  row('gpu-a', { gpu_hours: 2, energy_kwh: 1.5, cpu_energy_kwh: 0.25, total_energy_kwh: 1.75 }),
  row('gpu-b', { gpu_hours: 3, energy_kwh: 0.5, cpu_energy_kwh: 0.75, total_energy_kwh: 1.25 }),
  row('gpu-c', { gpu_hours: 1, energy_kwh: 0.25, cpu_energy_kwh: 0, total_energy_kwh: 0.25 }),
  row('gpu-d', { gpu_hours: 1, energy_kwh: 1.0, cpu_energy_kwh: 0.75, total_energy_kwh: 1.75 }),
];

describe('reportColumns', () => {
  it('shows GPU, CPU and total kWh, in that order, after the GPU time', () => {
    const cols = reportColumns(report(ROWS));
    assert.deepEqual(
      cols.map((c) => c.key),
      ['key', 'gpu_hours', 'used_gpu_hours', 'avg_util_pct', 'reserved_idle_gpu_hours', 'energy_kwh', 'cpu_energy_kwh', 'total_energy_kwh', 'energy_method'],
    );
    const label = (k) => cols.find((c) => c.key === k).label;
    assert.equal(label('energy_kwh'), 'GPU kWh');
    assert.equal(label('cpu_energy_kwh'), 'CPU kWh');
    assert.equal(label('total_energy_kwh'), 'Total kWh');
    assert.equal(label('energy_method'), 'GPU energy');
    assert.match(cols.find((c) => c.key === 'cpu_energy_kwh').long, /CPU .*RAPL/);
  });

  it('adds cost (with its currency) and CO2 only when the server has prices', () => {
    const priced = reportColumns(report(ROWS, { cost: 12.5, currency: 'EUR', co2_kg: 0.4 }));
    assert.deepEqual(priced.slice(-2).map((c) => [c.key, c.label]), [
      ['cost', 'Cost EUR'],
      ['co2_kg', 'CO₂ kg'],
    ]);
    assert.match(priced.at(-1).long, /total energy/);
    const noCurrency = reportColumns(report(ROWS, { cost: 1 }));
    assert.equal(noCurrency.at(-1).label, 'Cost');
  });

  it('names the key column after the grouping, the area with its label', () => {
    assert.equal(keyLabel(report([])), 'Node');
    assert.equal(keyLabel(report([], {}, { by: 'user' })), 'User');
    assert.equal(keyLabel(report([], {}, { by: 'area', label: 'zone' })), 'Area (zone)');
    assert.equal(keyLabel(report([], {}, { by: 'area' })), 'Area');
  });
});

describe('sortRows', () => {
  const keys = (rows) => rows.map((r) => r.key);

  it('sorts by CPU energy both ways, ties by key', () => {
    assert.deepEqual(keys(sortRows(ROWS, { key: 'cpu_energy_kwh', desc: true })), ['gpu-b', 'gpu-d', 'gpu-a', 'gpu-c']);
    assert.deepEqual(keys(sortRows(ROWS, { key: 'cpu_energy_kwh', desc: false })), ['gpu-c', 'gpu-a', 'gpu-b', 'gpu-d']);
  });

  it('sorts by total energy both ways, ties by key', () => {
    assert.deepEqual(keys(sortRows(ROWS, { key: 'total_energy_kwh', desc: true })), ['gpu-a', 'gpu-d', 'gpu-b', 'gpu-c']);
    assert.deepEqual(keys(sortRows(ROWS, { key: 'total_energy_kwh', desc: false })), ['gpu-c', 'gpu-b', 'gpu-a', 'gpu-d']);
  });

  it('sorts by GPU energy and by key; leaves its input alone', () => {
    const copy = structuredClone(ROWS);
    assert.deepEqual(keys(sortRows(ROWS, { key: 'energy_kwh', desc: true })), ['gpu-a', 'gpu-d', 'gpu-b', 'gpu-c']);
    assert.deepEqual(keys(sortRows(ROWS, { key: 'key', desc: true })), ['gpu-d', 'gpu-c', 'gpu-b', 'gpu-a']);
    assert.deepEqual(ROWS, copy);
  });

  it('orders job ids as numbers', () => {
    const jobs = [row('10'), row('9'), row('')];
    assert.deepEqual(keys(sortRows(jobs, { key: 'key', desc: false })), ['', '9', '10']);
  });
});

describe('reportCsv', () => {
  it('has GPU, CPU and total kWh after the GPU time, rows in the given order, the total last', () => {
    const r = report(ROWS, { gpu_hours: 7, energy_kwh: 3.25, cpu_energy_kwh: 1.75, total_energy_kwh: 5, energy_method: 'mixed' });
    const lines = reportCsv(r, sortRows(r.rows, { key: 'total_energy_kwh', desc: false })).split('\r\n');
    assert.equal(lines.at(-1), '', 'CRLF after the last line');
    const head = lines[0].split(',');
    assert.deepEqual(head, ['node', ...CSV_FIGURES]);
    const at = (name) => head.indexOf(name);
    assert.deepEqual([at('energy_kwh'), at('cpu_energy_kwh'), at('total_energy_kwh')], [7, 8, 9]);
    const cells = lines.slice(1, -1).map((l) => l.split(','));
    assert.deepEqual(cells.map((c) => c[0]), ['gpu-c', 'gpu-b', 'gpu-a', 'gpu-d', '(total)']);
    const b = cells[1];
    assert.deepEqual([b[at('energy_kwh')], b[at('cpu_energy_kwh')], b[at('total_energy_kwh')]], ['0.5', '0.75', '1.25']);
    const total = cells.at(-1);
    assert.deepEqual(
      [total[at('gpu_hours')], total[at('energy_kwh')], total[at('cpu_energy_kwh')], total[at('total_energy_kwh')], total[at('energy_method')]],
      ['7', '3.25', '1.75', '5', 'mixed'],
    );
    // No prices: cost, currency and CO2 stay empty.
    assert.deepEqual([total[at('cost')], total[at('currency')], total[at('co2_kg')]], ['', '', '']);
  });

  it('quotes, defuses formulas and words the empty key', () => {
    const r = report([row('=cmd()'), row('a,"b"'), row('')], {}, { by: 'group' });
    const lines = reportCsv(r, r.rows).split('\r\n');
    assert.equal(lines[1].split(',')[0], "'=cmd()");
    assert.ok(lines[2].startsWith('"a,""b""",'), lines[2]);
    assert.ok(lines[3].startsWith('(no group),'), lines[3]);
    assert.ok(lines[0].startsWith('group,'));
  });

  it('heads an area report with its label', () => {
    const r = report([], {}, { by: 'area', label: 'zone' });
    assert.ok(reportCsv(r, []).startsWith('area (zone),gpu_hours,'));
  });
});

describe('formats', () => {
  it('amount: 3 significant digits, whole from 100 on, a dash for nothing (one formatter: format.ts figure)', () => {
    assert.equal(amount, figure);
    assert.equal(amount(1.2345), '1.23');
    assert.equal(amount(0), '0');
    assert.equal(amount(0.000123), '0.000123');
    assert.equal(amount(0.0026), '0.0026');
    assert.equal(amount(0.00016), '0.00016');
    assert.equal(amount(15.92), '15.9');
    assert.equal(amount(4.2), '4.2');
    assert.equal(amount(100), '100');
    assert.equal(amount(81.11), '81.1');
    assert.equal(amount(12345.6), '12,346');
    assert.equal(amount(undefined), '–');
    assert.equal(amount(NaN), '–');
  });

  it('powerW and watts: W below 10,000 W, kW from there', () => {
    assert.equal(powerW(350), '350 W');
    assert.equal(powerW(12.5), '12.5 W');
    assert.equal(powerW(9999), '9999 W');
    assert.equal(powerW(313_600), '313.6 kW');
    assert.equal(powerW(10_000), '10.0 kW');
    assert.equal(powerW(null), '–');
    assert.equal(watts(313_600_000), '313.6 kW');
    assert.equal(watts(400_400), '400 W');
    assert.equal(w(3200), '3200 W');
    assert.equal(w(25600), '25.6 kW');
  });

  it('energyMethodText: how the GPU energy was measured, in words', () => {
    assert.deepEqual(energyMethodText('counter'), { text: 'measured', title: "Measured by the GPU's energy counter" });
    assert.equal(energyMethodText('none').text, 'not measured');
  });

  it("cpuEnergyText: no command-line detail in the text, it goes to the tooltip; cores", () => {
    assert.deepEqual(cpuEnergyText('not reported: --powercap-root is empty'), {
      text: 'not reported by this node',
      title: 'not reported: --powercap-root is empty',
    });
    assert.deepEqual(cpuEnergyText('ok'), { text: 'measured (RAPL)' });
    assert.deepEqual(cpuEnergyText(undefined), { text: 'not reported by this agent' });
    assert.equal(cores(2), '2 cores');
    assert.equal(cores(1), '1 core');
  });

  it('keyText: ids with #, the empty key in words', () => {
    assert.equal(keyText('job', '42'), '#42');
    assert.equal(keyText('user', ''), '(idle)');
    assert.equal(keyText('node', 'gpu-a'), 'gpu-a');
  });

  it('csvName: the grouping, the user and the period to the minute', () => {
    assert.equal(csvName(report([])), 'rota-usage-node-20261125T1000Z-20261126T1000Z.csv');
    assert.equal(csvName(report([], {}, { by: 'user', user: 'alice' })), 'rota-usage-user-alice-20261125T1000Z-20261126T1000Z.csv');
  });
});

// Usage report helpers (pure): periods, the key's words, sorting, number formats and CSV.
import { figure } from './format';
import type { UsageBy, UsageFigures, UsageReport, UsageReportRow } from '../api/types';

export const BYS: { key: UsageBy; label: string }[] = [
  { key: 'user', label: 'User' },
  { key: 'group', label: 'Group' },
  { key: 'job', label: 'Job' },
  { key: 'reservation', label: 'Reservation' },
  { key: 'node', label: 'Node' },
  { key: 'area', label: 'Area' },
];

export const isBy = (s: string | null): s is UsageBy => BYS.some((b) => b.key === s);

export interface PeriodDef {
  key: string;
  label: string;
  /** Long form, for sentences ("the last 24 hours"). */
  words: string;
  ms: number;
}

const HOUR = 3_600_000;

export const PERIODS: PeriodDef[] = [
  { key: '24h', label: '24 h', words: 'the last 24 hours', ms: 24 * HOUR },
  { key: '7d', label: '7 d', words: 'the last 7 days', ms: 7 * 24 * HOUR },
  { key: '30d', label: '30 d', words: 'the last 30 days', ms: 30 * 24 * HOUR },
];

/** The period a URL names: a preset (default 30 days, the API's default) or custom from/to. */
export type Period = { kind: 'preset'; def: PeriodDef } | { kind: 'custom'; from: number; to: number };

export function periodFromParams(p: URLSearchParams): Period {
  const from = Date.parse(p.get('from') ?? '');
  const to = Date.parse(p.get('to') ?? '');
  if (!isNaN(from) && !isNaN(to)) return { kind: 'custom', from, to };
  return { kind: 'preset', def: PERIODS.find((d) => d.key === p.get('period')) ?? PERIODS[2] };
}

/** [from, to) in ms for a period at `now`. */
export function periodRange(p: Period, now: number): { from: number; to: number } {
  return p.kind === 'custom' ? { from: p.from, to: p.to } : { from: now - p.def.ms, to: now };
}

/** The words for a row's key: "" is idle (by user), no group or no area. */
export function keyText(by: UsageBy, key: string): string {
  if (key !== '') return by === 'job' || by === 'reservation' ? `#${key}` : key;
  if (by === 'user') return '(idle)';
  if (by === 'group') return '(no group)';
  if (by === 'area') return '(no area)';
  if (by === 'job') return '(no job)';
  if (by === 'reservation') return '(no reservation)';
  return '(none)';
}

/** The numeric columns of the table and the CSV. */
export type FigureKey =
  | 'gpu_hours'
  | 'busy_gpu_hours'
  | 'used_gpu_hours'
  | 'avg_util_pct'
  | 'idle_gpu_hours'
  | 'reserved_idle_gpu_hours'
  | 'energy_kwh'
  | 'cpu_energy_kwh'
  | 'total_energy_kwh'
  | 'idle_energy_kwh'
  | 'unmeasured_gpu_hours'
  | 'cost'
  | 'co2_kg';

export type SortKey = 'key' | FigureKey | 'energy_method';

export interface Sort {
  key: SortKey;
  desc: boolean;
}

/** A column of the report table. */
export interface Column {
  key: SortKey;
  label: string;
  /** The words a screen reader gets for the header, when the label is short. */
  long?: string;
}

/** The key column's header: "User", "Node", "Area (zone)"… */
export function keyLabel(r: UsageReport): string {
  if (r.by === 'area') return `Area${r.label ? ` (${r.label})` : ''}`;
  return BYS.find((b) => b.key === r.by)?.label ?? r.by;
}

/**
 * The report table's columns, in order: the key, GPU time, then energy (the GPUs', the CPU
 * packages', their total, and how the GPUs' was measured), then cost and CO₂ (both from the
 * total energy) when the server has prices.
 */
export function reportColumns(r: UsageReport): Column[] {
  const c: Column[] = [
    { key: 'key', label: keyLabel(r) },
    { key: 'gpu_hours', label: 'GPU-hours' },
    { key: 'used_gpu_hours', label: 'Used GPU-hours', long: 'Used GPU-hours (weighted by utilisation)' },
    { key: 'avg_util_pct', label: 'Avg. util. %', long: 'Average utilisation, percent' },
    { key: 'reserved_idle_gpu_hours', label: 'Reserved, idle GPU-hours', long: 'Reserved but idle GPU-hours (no process on the GPU)' },
    { key: 'energy_kwh', label: 'GPU kWh', long: 'GPU energy, kWh' },
    { key: 'cpu_energy_kwh', label: 'CPU kWh', long: 'CPU package energy (RAPL), kWh' },
    { key: 'total_energy_kwh', label: 'Total kWh', long: 'Total energy, GPU and CPU, kWh' },
    { key: 'energy_method', label: 'GPU energy', long: 'How the GPU energy was measured' },
  ];
  const cur = r.total.currency;
  if (r.total.cost !== undefined) {
    c.push({ key: 'cost', label: `Cost${cur ? ` ${cur}` : ''}`, long: `Cost${cur ? ` in ${cur}` : ''} (GPU time and total energy)` });
  }
  if (r.total.co2_kg !== undefined) c.push({ key: 'co2_kg', label: 'CO₂ kg', long: 'CO₂, kg (from the total energy)' });
  return c;
}

/** Rows sorted by a column; ties by key, so the order is stable. */
export function sortRows(rows: UsageReportRow[], s: Sort): UsageReportRow[] {
  const dir = s.desc ? -1 : 1;
  const byKey = (a: UsageReportRow, b: UsageReportRow) => compareKeys(a.key, b.key);
  return [...rows].sort((a, b) => {
    let c: number;
    if (s.key === 'key') c = compareKeys(a.key, b.key);
    else if (s.key === 'energy_method') c = a.energy_method.localeCompare(b.energy_method);
    else c = (a[s.key] ?? 0) - (b[s.key] ?? 0);
    return c !== 0 ? c * dir : byKey(a, b);
  });
}

/** Numeric keys (job and reservation ids) in number order, names alphabetically. */
function compareKeys(a: string, b: string): number {
  const na = Number(a);
  const nb = Number(b);
  if (a !== '' && b !== '' && !isNaN(na) && !isNaN(nb)) return na - nb;
  return a.localeCompare(b);
}

/** How the GPU energy was measured (the API's energy_method), in plain words: a short
 * text for the table cell and a sentence for its tooltip. */
export function energyMethodText(m: string): { text: string; title: string } {
  switch (m) {
    case 'counter':
      return { text: 'measured', title: "Measured by the GPU's energy counter" };
    case 'integrated':
      return { text: 'from power readings', title: "Added up from the GPU's power readings (no energy counter)" };
    case 'estimated':
      return { text: 'estimated', title: 'Estimated from utilisation and the power limits (no reading)' };
    case 'mixed':
      return { text: 'mixed', title: 'Partly measured, partly added up from readings or estimated' };
    case 'none':
      return { text: 'not measured', title: 'No GPU energy was reported' };
    default:
      return { text: m, title: m };
  }
}

/** An amount of the report, as every figure of the UI (format.ts's figure: 3 significant digits). */
export const amount = figure;

/**
 * The CSV columns after the key (the API's names). Energy: `energy_kwh` is the GPUs',
 * `cpu_energy_kwh` the CPU packages' (RAPL), `total_energy_kwh` both (what cost and CO₂
 * count); `idle_energy_kwh` and `energy_method` are about the GPUs' energy.
 */
export const CSV_FIGURES: (keyof UsageFigures)[] = [
  'gpu_hours',
  'busy_gpu_hours',
  'used_gpu_hours',
  'avg_util_pct',
  'idle_gpu_hours',
  'reserved_idle_gpu_hours',
  'energy_kwh',
  'cpu_energy_kwh',
  'total_energy_kwh',
  'idle_energy_kwh',
  'unmeasured_gpu_hours',
  'energy_method',
  'cost',
  'currency',
  'co2_kg',
];

/** One CSV field: quoted when needed; a leading = + - @ is defused so spreadsheets show text. */
function csvField(v: unknown): string {
  if (v === undefined || v === null) return '';
  let s = String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The report as CSV (RFC 4180, CRLF): a header, the rows in `rows`' order, then the total. */
export function reportCsv(r: UsageReport, rows: UsageReportRow[]): string {
  const head = [r.by === 'area' && r.label ? `area (${r.label})` : r.by, ...CSV_FIGURES];
  const line = (key: string, f: UsageFigures) => [key, ...CSV_FIGURES.map((c) => f[c])].map(csvField).join(',');
  const out = [head.map(csvField).join(',')];
  for (const row of rows) out.push(line(keyText(r.by, row.key), row));
  out.push(line('(total)', r.total));
  return out.join('\r\n') + '\r\n';
}

/** "rota-usage-node-20261125T1000Z-20261126T1000Z.csv". */
export function csvName(r: UsageReport): string {
  const t = (iso: string) => iso.replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '').replace(/(T\d{4})\d{2}Z$/, '$1Z');
  return `rota-usage-${r.by}${r.user ? `-${r.user}` : ''}-${t(r.from)}-${t(r.to)}.csv`;
}

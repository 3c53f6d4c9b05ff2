// A sweep's (or array's) trials as the array screen shows them: the table's rows sorted by a
// metric (as `rota sweep show` sorts them: the early-stopping rule's metric and goal unless
// another is chosen; trials without the metric last, by index) and the chart's data, each
// trial's points of the metric over steps. Pure: no fetching, no DOM.
import type { ArrayMember, JobArrayMembers, JobMetrics } from '../api/types';

export interface MetricChoice {
  metric: string;
  maximize: boolean;
}

/** The reason of every trial stopped early begins with this (jobs/early_stop.h, kStoppedEarly). */
export const STOPPED_EARLY = 'stopped early';

/** Every metric name any trial reported, in name order. */
export function metricNames(members: ArrayMember[]): string[] {
  const names = new Set<string>();
  for (const m of members) for (const n of Object.keys(m.metrics ?? {})) names.add(n);
  return [...names].sort();
}

/**
 * The metric to sort and chart by: `asked` when given (with its goal), else the sweep's
 * early-stopping rule's, else the first name any trial reported (lowest first).
 */
export function chooseMetric(array: JobArrayMembers, asked?: MetricChoice | null): MetricChoice | null {
  if (asked && asked.metric) return asked;
  const rule = array.sweep?.early_stopping;
  if (rule?.metric) return { metric: rule.metric, maximize: rule.goal === 'max' };
  const names = metricNames(array.members ?? []);
  return names.length ? { metric: names[0], maximize: false } : null;
}

/** The parameter names of a sweep, in its definition's order (none for a plain array). */
export function paramNames(array: JobArrayMembers): string[] {
  return Object.keys(array.sweep?.parameters ?? {});
}

export interface TrialRow {
  id: number;
  index: number;
  /** The job's state, or "stopped early" for a trial the rule ended. */
  state: string;
  reason: string;
  restarts: number;
  gpuSeconds: number;
  params: Record<string, string>;
  last: number | null;
  best: number | null;
  lastStep: number | null;
}

export function isStoppedEarly(m: Pick<ArrayMember, 'state' | 'reason'>): boolean {
  return m.state === 'succeeded' && (m.reason ?? '').startsWith(STOPPED_EARLY);
}

/** The table's rows, best first by `choice` (stable: ties and trials without it by index). */
export function trialRows(members: ArrayMember[], choice: MetricChoice | null): TrialRow[] {
  const rows = members.map((m): TrialRow => {
    const s = choice ? m.metrics?.[choice.metric] : undefined;
    return {
      id: m.id,
      index: m.array?.index ?? 0,
      state: isStoppedEarly(m) ? STOPPED_EARLY : m.state,
      reason: m.reason ?? '',
      restarts: m.restart_count,
      gpuSeconds: m.gpu_seconds,
      params: m.params ?? {},
      last: s ? s.last : null,
      best: s ? (choice!.maximize ? s.max : s.min) : null,
      lastStep: s?.last_step ?? null,
    };
  });
  rows.sort((a, b) => {
    if ((a.best === null) !== (b.best === null)) return a.best === null ? 1 : -1;
    if (a.best !== null && b.best !== null && a.best !== b.best) {
      return choice!.maximize ? b.best - a.best : a.best - b.best;
    }
    return a.index - b.index;
  });
  return rows;
}

/** One trial's curve: its points of one metric that have a step, in step order. */
export interface Curve {
  id: number;
  label: string;
  points: { step: number; value: number }[];
}

/** The points of `metric` with a step from a job's metrics answer (the last value of a step wins). */
export function curveOf(id: number, label: string, answer: JobMetrics, metric: string): Curve {
  const byStep = new Map<number, number>();
  for (const p of answer.metrics) {
    if (p.name === metric && p.step !== undefined) byStep.set(p.step, p.value);
  }
  const points = [...byStep.entries()].sort((a, b) => a[0] - b[0]).map(([step, value]) => ({ step, value }));
  return { id, label, points };
}

/**
 * uPlot's aligned data for curves: [steps (every step any curve has, ascending), then one
 * column per curve with null where it has no point at that step].
 */
export function alignCurves(curves: Curve[]): (number | null)[][] {
  const steps = [...new Set(curves.flatMap((c) => c.points.map((p) => p.step)))].sort((a, b) => a - b);
  const at = new Map(steps.map((s, i) => [s, i]));
  const cols = curves.map((c) => {
    const col: (number | null)[] = new Array(steps.length).fill(null);
    for (const p of c.points) col[at.get(p.step)!] = p.value;
    return col;
  });
  return [steps, ...cols];
}

/** A trial's label in the chart and its summary: "trial 3 (lr=0.01, bs=32)". */
export function trialLabel(row: Pick<TrialRow, 'index' | 'params'>, names: string[]): string {
  const ps = names.filter((n) => row.params[n] !== undefined).map((n) => `${n}=${row.params[n]}`);
  return `trial ${row.index}` + (ps.length ? ` (${ps.join(', ')})` : '');
}

/** The text summary of the chart, for screen readers: each curve's last step and value. */
export function curvesSummary(metric: string, curves: Curve[], fmt: (v: number) => string): string {
  if (!curves.length) return `No trial reported ${metric} with a step yet.`;
  const parts = curves.map((c) => {
    const p = c.points[c.points.length - 1];
    return p ? `${c.label}: ${fmt(p.value)} at step ${p.step}` : `${c.label}: no points`;
  });
  return `${metric} per step of the ${curves.length} best trials. ${parts.join('; ')}.`;
}

/** A metric's value as `rota sweep show` writes it: up to 6 significant digits. */
export function metricText(v: number | null): string {
  if (v === null || !Number.isFinite(v)) return '–';
  return String(Number(v.toPrecision(6)));
}

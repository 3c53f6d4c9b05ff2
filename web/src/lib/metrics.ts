// Metrics history for the node and GPU detail screens: ranges, the history API
// (GET /api/v1/nodes/{name}[/gpus/{index}]/metrics), live samples folded into
// the last bucket, and the numbers of a chart's text summary. No uPlot here.
import { get, query } from '../api/client';
import type { Series, SeriesPoint } from '../api/types';

export interface RangeDef {
  key: string;
  label: string;
  /** Spoken/long form, for the summary. */
  long: string;
  ms: number;
  /** Bucket width asked of the server; live samples are folded into it. */
  stepMs: number;
}

export const RANGES: RangeDef[] = [
  { key: '15m', label: '15 min', long: 'the last 15 minutes', ms: 15 * 60_000, stepMs: 2_000 },
  { key: '1h', label: '1 h', long: 'the last hour', ms: 3_600_000, stepMs: 5_000 },
  { key: '24h', label: '24 h', long: 'the last 24 hours', ms: 24 * 3_600_000, stepMs: 120_000 },
  { key: '7d', label: '7 d', long: 'the last 7 days', ms: 7 * 24 * 3_600_000, stepMs: 900_000 },
];

export function rangeOf(key: string | null | undefined): RangeDef {
  return RANGES.find((r) => r.key === key) ?? RANGES[1];
}

/** One bucket as the API sends it. */
export type MetricPoint = SeriesPoint;

export type MetricSeries = Series;

function durationParam(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.max(1, Math.round(ms / 1000))}s`;
}

/** The history of a node (gpu undefined) or one of its GPUs over `range`, ending now. */
export function fetchHistory(
  node: string,
  gpu: number | undefined,
  range: RangeDef,
  signal?: AbortSignal,
): Promise<MetricSeries> {
  const to = Date.now();
  const path =
    `/api/v1/nodes/${encodeURIComponent(node)}` + (gpu === undefined ? '' : `/gpus/${gpu}`) + '/metrics';
  return get<MetricSeries>(
    path +
      query({
        from: new Date(to - range.ms).toISOString(),
        to: new Date(to).toISOString(),
        step: durationParam(range.stepMs),
      }),
    { signal },
  );
}

/**
 * Column-wise history: `t` in ms (bucket starts), one array per metric (averages).
 * Live samples land in the bucket they fall in (running average), so the right
 * edge moves with the stream at the server's resolution.
 */
export class History {
  t: number[] = [];
  cols: Record<string, (number | null)[]> = {};
  counts: number[] = [];

  constructor(
    readonly metrics: string[],
    public stepMs: number,
  ) {
    for (const m of metrics) this.cols[m] = [];
  }

  static from(series: MetricSeries, metrics: string[]): History {
    const h = new History(metrics, Math.max(1000, series.step_ms || 1000));
    for (const p of series.points) {
      h.t.push(p.t_ms);
      h.counts.push(p.samples);
      for (const m of metrics) h.cols[m].push(p.avg[m] ?? null);
    }
    return h;
  }

  /** Folds one live reading (taken at `tMs`) into its bucket. */
  add(tMs: number, values: Record<string, number | undefined>): void {
    const b = Math.floor(tMs / this.stepMs) * this.stepMs;
    const n = this.t.length;
    if (n > 0 && b < this.t[n - 1]) return; // older than what we have
    if (n > 0 && b === this.t[n - 1]) {
      const c = this.counts[n - 1];
      for (const m of this.metrics) {
        const v = values[m];
        if (v === undefined || !isFinite(v)) continue;
        const old = this.cols[m][n - 1];
        this.cols[m][n - 1] = old === null ? v : (old * c + v) / (c + 1);
      }
      this.counts[n - 1] = c + 1;
      return;
    }
    this.t.push(b);
    this.counts.push(1);
    for (const m of this.metrics) {
      const v = values[m];
      this.cols[m].push(v === undefined || !isFinite(v) ? null : v);
    }
  }

  /** Drops buckets before `fromMs`. */
  trim(fromMs: number): void {
    let k = 0;
    while (k < this.t.length && this.t[k] < fromMs) k++;
    if (k === 0) return;
    this.t.splice(0, k);
    this.counts.splice(0, k);
    for (const m of this.metrics) this.cols[m].splice(0, k);
  }

  /**
   * uPlot's aligned data: x in seconds, one column per metric (scaled by `scale[m]`),
   * with a null inserted into gaps longer than three buckets so no line bridges them.
   */
  aligned(metrics: string[], scale: Record<string, number> = {}): (number | null)[][] {
    const xs: number[] = [];
    const ys: (number | null)[][] = metrics.map(() => []);
    const gap = this.stepMs * 3;
    for (let i = 0; i < this.t.length; i++) {
      if (i > 0 && this.t[i] - this.t[i - 1] > gap) {
        xs.push((this.t[i - 1] + this.stepMs) / 1000);
        ys.forEach((col) => col.push(null));
      }
      xs.push(this.t[i] / 1000);
      metrics.forEach((m, j) => {
        const v = this.cols[m][i];
        ys[j].push(v === null ? null : v * (scale[m] ?? 1));
      });
    }
    return [xs, ...ys];
  }
}

export interface Stats {
  min: number;
  avg: number;
  max: number;
  n: number;
}

/** min/avg/max of the non-null values; null when there are none. */
export function stats(values: readonly (number | null | undefined)[]): Stats | null {
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  let n = 0;
  for (const v of values) {
    if (v === null || v === undefined || !isFinite(v)) continue;
    if (v < min) min = v;
    if (v > max) max = v;
    sum += v;
    n++;
  }
  return n ? { min, max, avg: sum / n, n } : null;
}

// The charts' data on a detail screen: the history of the chosen range from the
// API, then every live sample from the event stream folded in at the right edge.
import { ApiError } from '../api/client';
import { fetchHistory, History, type RangeDef } from './metrics';

export class LiveHistory {
  /** Bumped on every change (the History itself is mutated in place). */
  version = $state(0);
  error = $state('');
  loading = $state(false);
  /** The window shown, in ms. */
  from = $state(0);
  to = $state(0);
  hist: History;

  private range: RangeDef;
  private loadedTo = 0;
  private ctl: AbortController | null = null;

  constructor(
    readonly node: string,
    readonly gpu: number | undefined,
    readonly metrics: string[],
    range: RangeDef,
  ) {
    this.range = range;
    this.hist = new History(metrics, range.stepMs);
    this.to = Date.now();
    this.from = this.to - range.ms;
  }

  async load(range: RangeDef): Promise<void> {
    this.ctl?.abort();
    const ctl = (this.ctl = new AbortController());
    this.range = range;
    this.loading = true;
    this.to = Date.now();
    this.from = this.to - range.ms;
    this.hist = new History(this.metrics, range.stepMs);
    this.version++;
    try {
      const s = await fetchHistory(this.node, this.gpu, range, ctl.signal);
      if (ctl.signal.aborted) return;
      this.hist = History.from(s, this.metrics);
      this.loadedTo = Date.parse(s.to) || Date.now();
      this.error = '';
    } catch (e) {
      if ((e as Error).name === 'AbortError') return;
      if (e instanceof ApiError && e.status === 401) return;
      this.error = `Cannot load the history: ${(e as Error).message}`;
    } finally {
      if (this.ctl === ctl) {
        this.loading = false;
        this.ctl = null;
        this.version++;
      }
    }
  }

  /** A live reading taken at `tMs` (samples the history already holds are skipped). */
  add(tMs: number, values: Record<string, number | undefined>): void {
    if (this.loading || !isFinite(tMs) || tMs <= this.loadedTo) return;
    this.hist.add(tMs, values);
    this.to = Math.max(Date.now(), tMs);
    this.from = this.to - this.range.ms;
    this.hist.trim(this.from - this.range.stepMs);
    this.version++;
  }

  stop(): void {
    this.ctl?.abort();
    this.ctl = null;
  }
}

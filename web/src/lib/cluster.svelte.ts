// Live cluster state for the overview: nodes and their latest samples from the
// event stream, plus which GPUs running jobs and running reservations hold.
//
// Built to stay smooth with hundreds of nodes: stream events only land in
// plain maps (latest per node wins) and are applied once per animation frame;
// every node has its own signals, so a sample re-renders that node alone.
import { ApiError, get, query } from '../api/client';
import { openStream, type SseEvent, type StreamStatus } from '../api/stream';
import type { Job, Node, Reservation, SampleEvent } from '../api/types';
import { nodeBadge, tileState, type Hold, type TileState } from './nodes';

export { TILE_STATE_TEXT, tileState, type Hold, type TileState } from './nodes';

export class NodeLive {
  readonly name: string;
  info = $state.raw<Node>() as Node;
  sample = $state.raw<SampleEvent | null>(null);
  /** By GPU index. */
  holds = $state.raw<ReadonlyMap<number, Hold>>(new Map());
  holdsKey = '';
  /** Its GPUs' tile states, in the order of `info.gpus`. */
  states = $derived.by<TileState[]>(() =>
    this.info.gpus.map((g) =>
      tileState(
        this.info,
        this.sample?.gpus.find((r) => r.index === g.index),
        this.holds.get(g.index),
      ),
    ),
  );

  constructor(info: Node) {
    this.name = info.name;
    this.info = info;
  }
}

export interface Totals {
  nodes: number;
  /** Ready and not drained. */
  nodesReady: number;
  /** Ready but drained by an admin (no new job starts there). */
  nodesDrained: number;
  gpus: number;
  busy: number;
  busyJob: number;
  busyHand: number;
  reservedIdle: number;
  /** Idle GPUs of drained nodes: not free for jobs. */
  drained: number;
  free: number;
  failed: number;
  unreachable: number;
  powerMw: number;
  avgUtil: number | null;
}

class Cluster {
  /** Sorted by name; replaced only when a node appears. */
  nodes = $state.raw<NodeLive[]>([]);
  status = $state<StreamStatus>('stopped');
  statusDetail = $state('');
  holdsError = $state('');
  holdsLoaded = $state(false);

  private byName = new Map<string, NodeLive>();
  private pendingNodes = new Map<string, Node>();
  private pendingSamples = new Map<string, SampleEvent>();
  private frame = 0;
  private stream: { stop: () => void } | null = null;
  private poll: ReturnType<typeof setInterval> | null = null;
  private users = 0;
  private refreshing = false;
  private lastHolds = new Map<string, Map<number, Hold>>();
  private onVisible = () => {
    if (!document.hidden) void this.refreshHolds();
  };

  totals = $derived.by<Totals>(() => {
    const t: Totals = {
      nodes: 0,
      nodesReady: 0,
      nodesDrained: 0,
      gpus: 0,
      busy: 0,
      busyJob: 0,
      busyHand: 0,
      reservedIdle: 0,
      drained: 0,
      free: 0,
      failed: 0,
      unreachable: 0,
      powerMw: 0,
      avgUtil: null,
    };
    let utilSum = 0;
    let utilN = 0;
    for (const n of this.nodes) {
      const info = n.info;
      const sample = n.sample;
      const holds = n.holds;
      t.nodes++;
      const badge = nodeBadge(info);
      if (badge === 'ready') t.nodesReady++;
      else if (badge === 'drained') t.nodesDrained++;
      for (const g of info.gpus) {
        const row = sample?.gpus.find((r) => r.index === g.index);
        const st = tileState(info, row, holds.get(g.index));
        t.gpus++;
        if (st === 'job') t.busyJob++;
        else if (st === 'hand') t.busyHand++;
        else if (st === 'reserved') t.reservedIdle++;
        else if (st === 'drained') t.drained++;
        else if (st === 'free') t.free++;
        else if (st === 'failed') t.failed++;
        else t.unreachable++;
        if (st !== 'unreachable' && row) {
          if (row.power_mw !== undefined) t.powerMw += row.power_mw;
          if (row.util_gpu_pct !== undefined) {
            utilSum += row.util_gpu_pct;
            utilN++;
          }
        }
      }
    }
    t.busy = t.busyJob + t.busyHand;
    t.avgUtil = utilN ? utilSum / utilN : null;
    return t;
  });

  /** The live node of that name, if it is known yet (reactive through `nodes`). */
  node(name: string): NodeLive | undefined {
    return this.nodes.find((n) => n.name === name);
  }

  /** Starts the stream and the job/reservation refresh (reference counted). */
  start(): void {
    if (this.users++ > 0) return;
    this.stream = openStream({
      onEvent: (e) => this.onEvent(e),
      onStatus: (s, d) => {
        this.status = s;
        this.statusDetail = d ?? '';
      },
    });
    void this.refreshHolds();
    this.poll = setInterval(() => {
      if (!document.hidden) void this.refreshHolds();
    }, 4000);
    document.addEventListener('visibilitychange', this.onVisible);
  }

  stop(): void {
    if (--this.users > 0) return;
    this.users = 0;
    this.stream?.stop();
    this.stream = null;
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    document.removeEventListener('visibilitychange', this.onVisible);
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
  }

  /** Forgets everything (sign out). */
  reset(): void {
    this.byName.clear();
    this.pendingNodes.clear();
    this.pendingSamples.clear();
    this.nodes = [];
    this.lastHolds = new Map();
    this.holdsLoaded = false;
    this.holdsError = '';
  }

  private onEvent(e: SseEvent): void {
    try {
      if (e.event === 'node') {
        const n = JSON.parse(e.data) as Node;
        this.pendingNodes.set(n.name, n);
      } else if (e.event === 'sample') {
        const s = JSON.parse(e.data) as SampleEvent;
        this.pendingSamples.set(s.node, s);
      } else {
        return;
      }
    } catch (err) {
      console.warn('rota stream: bad event', err);
      return;
    }
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  private flush(): void {
    this.frame = 0;
    let added = false;
    for (const [name, info] of this.pendingNodes) {
      const live = this.byName.get(name);
      if (live) live.info = info;
      else {
        const fresh = new NodeLive(info);
        this.applyHolds(fresh);
        this.byName.set(name, fresh);
        added = true;
      }
    }
    this.pendingNodes.clear();
    for (const [name, s] of this.pendingSamples) {
      const live = this.byName.get(name);
      if (live) live.sample = s;
    }
    this.pendingSamples.clear();
    if (added) {
      this.nodes = [...this.byName.values()].sort((a, b) =>
        a.name.localeCompare(b.name, undefined, { numeric: true }),
      );
    }
  }

  private applyHolds(live: NodeLive): void {
    const m = this.lastHolds.get(live.name) ?? new Map<number, Hold>();
    const key = JSON.stringify([...m.entries()]);
    if (key !== live.holdsKey) {
      live.holdsKey = key;
      live.holds = m;
    }
  }

  /** Which GPUs running jobs and running reservations hold. */
  async refreshHolds(): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      const [jobs, res] = await Promise.all([
        get<{ jobs: Job[] }>('/api/v1/jobs' + query({ state: 'running', limit: 1000 })),
        get<{ reservations: Reservation[] }>('/api/v1/reservations' + query({ state: 'running', limit: 1000 })),
      ]);
      const per = new Map<string, Map<number, Hold>>();
      const at = (node: string, idx: number): Hold => {
        let m = per.get(node);
        if (!m) per.set(node, (m = new Map()));
        let h = m.get(idx);
        if (!h) m.set(idx, (h = {}));
        return h;
      };
      for (const j of jobs.jobs) {
        for (const t of j.tasks) {
          if (!t.node || t.state === 'exited' || t.state === 'lost' || t.state === 'unstarted') continue;
          for (const g of t.gpus) {
            at(t.node, g).job = { id: j.id, name: j.name, owner: j.owner, task: t.name, unix_user: t.unix_user, pid: t.pid };
          }
        }
      }
      for (const r of res.reservations) {
        for (const g of r.gpus) at(r.node, g).reservation = { id: r.id, owner: r.owner, title: r.title, end: r.end };
      }
      this.lastHolds = per;
      for (const live of this.byName.values()) this.applyHolds(live);
      this.holdsError = '';
      this.holdsLoaded = true;
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return;
      this.holdsError = `Cannot load jobs and reservations: ${(e as Error).message}`;
    } finally {
      this.refreshing = false;
    }
  }
}

export const cluster = new Cluster();

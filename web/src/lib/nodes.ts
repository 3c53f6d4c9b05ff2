// Small helpers about nodes shared by the overview's cards, the totals and the node page.
import type { Gpu, Node } from '../api/types';

export type TileState = 'free' | 'job' | 'hand' | 'drained' | 'reserved' | 'failed' | 'unreachable';

/** A tile state in words, for badges. */
export const TILE_STATE_TEXT: Record<TileState, string> = {
  free: 'Free',
  job: 'Job',
  hand: 'In use',
  drained: 'Drained',
  reserved: 'Reserved',
  failed: 'Failed',
  unreachable: 'Unreachable',
};

export interface Hold {
  job?: { id: number; name: string; owner: string; task: string; unix_user: string; pid: number };
  reservation?: { id: number; owner: string; title: string; end: string };
}

/**
 * A GPU tile's state: the first that applies of unreachable, failed, job, hand
 * (processes), drained (its node takes no new job), reserved, free.
 */
export function tileState(node: Node, gpu: Gpu | undefined, hold: Hold | undefined): TileState {
  if (node.state !== 'ready' || gpu?.state === 'unreachable') return 'unreachable';
  if (gpu?.state === 'failed' || gpu?.failed) return 'failed';
  if (hold?.job) return 'job';
  if (gpu && gpu.processes && gpu.processes.length > 0) return 'hand';
  if (node.drain) return 'drained';
  if (hold?.reservation) return 'reserved';
  return 'free';
}

/** The overview's node filter, in the totals' words: nodes with a GPU busy (a job's or in
 * use by hand), with a free GPU, with an idle reserved GPU, drained nodes, and nodes that
 * are down or have a failed GPU. */
export type NodeFilter = 'all' | 'busy' | 'free' | 'reserved' | 'drained' | 'down';

export const NODE_FILTERS: readonly { key: NodeFilter; label: string; title: string }[] = [
  { key: 'all', label: 'All', title: 'Every node' },
  { key: 'busy', label: 'Busy', title: 'Nodes with a GPU busy: a job, or processes started by hand' },
  { key: 'free', label: 'Free', title: 'Nodes with a free GPU' },
  { key: 'reserved', label: 'Reserved', title: 'Nodes with a GPU idle in a running reservation' },
  { key: 'drained', label: 'Drained', title: 'Nodes an admin drained (no new job starts there)' },
  { key: 'down', label: 'Failed or unreachable', title: 'Nodes that do not answer or have a failed GPU' },
];

/** The filter named in the URL (`?state=busy`), `all` for anything else. */
export function nodeFilterFrom(v: string | null | undefined): NodeFilter {
  return NODE_FILTERS.some((f) => f.key === v) ? (v as NodeFilter) : 'all';
}

/** Whether a node (its badge and its GPUs' tile states) is shown under a filter. */
export function nodeMatches(node: Pick<Node, 'state' | 'drain'>, states: readonly TileState[], f: NodeFilter): boolean {
  switch (f) {
    case 'all':
      return true;
    case 'busy':
      return states.includes('job') || states.includes('hand');
    case 'free':
      return states.includes('free');
    case 'reserved':
      return states.includes('reserved');
    case 'drained':
      return nodeBadge(node) === 'drained';
    case 'down':
      return node.state !== 'ready' || states.includes('failed') || states.includes('unreachable');
  }
}

/** How many nodes each filter shows. */
export function nodeFilterCounts(
  nodes: readonly { node: Pick<Node, 'state' | 'drain'>; states: readonly TileState[] }[],
): Record<NodeFilter, number> {
  const c = { all: 0, busy: 0, free: 0, reserved: 0, drained: 0, down: 0 } as Record<NodeFilter, number>;
  for (const n of nodes) for (const f of NODE_FILTERS) if (nodeMatches(n.node, n.states, f.key)) c[f.key]++;
  return c;
}

/** The badge of a node: its state, but "drained" for a ready node an admin drained (it
 * takes no new job: calling it "ready" would say otherwise). A node that is down shows
 * that first. */
export function nodeBadge(n: Pick<Node, 'state' | 'drain'>): string {
  return n.state === 'ready' && n.drain ? 'drained' : n.state;
}

/** What the node page says about CPU package energy (RAPL): the agent says at registration
 * "ok", or why not (in its own terms, such as a command-line flag: that goes to `title`,
 * for whoever runs the agent); an agent from before CPU energy was reported says nothing. */
export function cpuEnergyText(status: string | undefined | null): { text: string; title?: string } {
  if (status === 'ok') return { text: 'measured (RAPL)' };
  if (!status) return { text: 'not reported by this agent' };
  return { text: 'not reported by this node', title: status };
}

/** "2 cores", "1 core". */
export function cores(n: number): string {
  return `${n} ${n === 1 ? 'core' : 'cores'}`;
}

// Small helpers about nodes shared by the overview's cards, the totals and the node page.
import type { Node } from '../api/types';

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

// Small helpers about nodes shared by the overview's cards, the totals and the node page.
import type { Node } from '../api/types';

/** The badge of a node: its state, but "drained" for a ready node an admin drained (it
 * takes no new job: calling it "ready" would say otherwise). A node that is down shows
 * that first. */
export function nodeBadge(n: Pick<Node, 'state' | 'drain'>): string {
  return n.state === 'ready' && n.drain ? 'drained' : n.state;
}

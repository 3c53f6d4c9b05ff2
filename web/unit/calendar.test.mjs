// Unit tests of the calendar's folded node rows (src/lib/calendar.ts): what a collapsed
// node row draws and which nodes start collapsed; and of a node's badge (src/lib/nodes.ts).
// `npm run test:unit`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bandText, jobHolds, nodeBands, nodesWithMine, startsCollapsed } from '../src/lib/calendar.ts';
import { nodeBadge } from '../src/lib/nodes.ts';

const T = (s) => Date.parse(`2026-11-29T${s}:00Z`);
const res = (id, node, owner, gpus, start, end, state = 'upcoming') => ({
  id, node, owner, gpus, title: `r${id}`, state,
  start: `2026-11-29T${start}:00Z`, end: `2026-11-29T${end}:00Z`,
});
const from = T('00:00');
const to = from + 24 * 3_600_000;

describe('nodeBands', () => {
  it('draws one band per reservation of the node, whatever GPUs it covers', () => {
    const bands = nodeBands('gpu-050', [
      res(1, 'gpu-050', 'alice', [0, 1, 2, 3, 4, 5, 6, 7], '10:00', '12:00'),
      res(2, 'gpu-051', 'bob', [0], '10:00', '12:00'),
      res(3, 'gpu-050', 'carol', [2], '13:00', '14:00', 'cancelled'),
    ], new Map(), from, to);
    assert.equal(bands.length, 1);
    assert.equal(bands[0].id, 1);
    assert.equal(bands[0].gpus, 8);
    assert.equal(bandText(bands[0]), 'alice · 8 GPUs');
    assert.equal(bands[0].lanes, 1);
  });
  it('leaves out what falls outside the range', () => {
    assert.deepEqual(nodeBands('n', [res(1, 'n', 'a', [0], '10:00', '12:00')], new Map(), T('12:00'), to), []);
  });
  it('gives overlapping reservations lanes of their own', () => {
    const bands = nodeBands('n', [
      res(1, 'n', 'a', [0], '10:00', '12:00'),
      res(2, 'n', 'b', [1], '11:00', '13:00'),
      res(3, 'n', 'c', [2], '12:00', '14:00'),
      res(4, 'n', 'd', [3], '15:00', '16:00'),
    ], new Map(), from, to);
    const by = Object.fromEntries(bands.map((b) => [b.id, [b.lane, b.lanes]]));
    assert.deepEqual(by, { 1: [0, 2], 2: [1, 2], 3: [0, 2], 4: [0, 1] });
  });
  it('merges a running job over the GPUs it holds on the node', () => {
    const task = (node, gpus) => ({ node, gpus, state: 'running' });
    const holds = jobHolds([
      { id: 7, name: 'train', owner: 'bob', state: 'running', started: '2026-11-29T08:00:00Z', deadline: '2026-11-29T10:00:00Z',
        tasks: [task('n', [0, 1]), task('n', [2, 3]), task('m', [0])] },
    ], T('09:00'));
    const bands = nodeBands('n', [], holds, from, to);
    assert.equal(bands.length, 1);
    assert.equal(bands[0].kind, 'job');
    assert.equal(bands[0].gpus, 4);
    assert.equal(bandText(bands[0]), 'bob · 4 GPUs');
    assert.equal(bandText(nodeBands('m', [], holds, from, to)[0]), 'bob · 1 GPU');
  });
});

describe('startsCollapsed', () => {
  const many = Array.from({ length: 100 }, (_, i) => ({ name: `gpu-${String(i + 1).padStart(3, '0')}` }));
  it('folds nodes after the first four on a large cluster, never a small one', () => {
    const none = new Set();
    assert.equal(startsCollapsed(many, 3, none), false);
    assert.equal(startsCollapsed(many, 4, none), true);
    assert.equal(startsCollapsed(many.slice(0, 12), 8, none), false);
  });
  it('keeps open the nodes holding my reservations in the range', () => {
    const mine = nodesWithMine([
      res(1, 'gpu-050', 'alice', [0], '10:00', '12:00'),
      res(2, 'gpu-060', 'bob', [0], '10:00', '12:00'),
      res(3, 'gpu-070', 'alice', [0], '10:00', '12:00', 'cancelled'),
    ], 'alice', from, to);
    assert.deepEqual([...mine], ['gpu-050']);
    assert.equal(startsCollapsed(many, 49, mine), false);
    assert.equal(startsCollapsed(many, 59, mine), true);
    assert.equal(startsCollapsed(many, 69, mine), true);
    assert.equal(nodesWithMine([res(1, 'gpu-050', 'alice', [0], '10:00', '12:00')], 'alice', T('12:00'), to).size, 0);
  });
});

describe('nodeBadge', () => {
  it('calls a ready node an admin drained "drained", not "ready"', () => {
    assert.equal(nodeBadge({ state: 'ready', drain: null }), 'ready');
    assert.equal(nodeBadge({ state: 'ready' }), 'ready');
    assert.equal(nodeBadge({ state: 'ready', drain: { reason: 'fans', by: 'admin', since: '2026-11-29T06:00:00Z' } }), 'drained');
  });
  it('shows a node that is down as down, drained or not', () => {
    assert.equal(nodeBadge({ state: 'unreachable', drain: { reason: '', by: 'admin', since: '2026-11-29T06:00:00Z' } }), 'unreachable');
  });
});

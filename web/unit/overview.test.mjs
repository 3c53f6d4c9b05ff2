// Unit tests of the overview's node filter (src/lib/nodes.ts: tile states, which nodes each
// state filter shows, the counts) and of the units the UI writes (src/lib/format.ts).
// `npm run test:unit`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NODE_FILTERS, nodeFilterCounts, nodeFilterFrom, nodeMatches, tileState } from '../src/lib/nodes.ts';
import { celsius, pct, powerW } from '../src/lib/format.ts';

const drain = { reason: 'fans', by: 'admin', since: '2026-11-29T06:00:00Z' };
const ready = { state: 'ready' };
const drained = { state: 'ready', drain };
const down = { state: 'unreachable' };

describe('pct', () => {
  it('writes a percentage whole, with no space before the sign, as every screen shows it', () => {
    assert.equal(pct(100), '100%');
    assert.equal(pct(0), '0%');
    assert.equal(pct(42.4), '42%');
    assert.equal(pct(42.5), '43%');
    assert.equal(pct(undefined), '–');
    assert.equal(pct(NaN), '–');
  });
});

describe('celsius', () => {
  it('writes a temperature whole, with a space before the unit, like W', () => {
    assert.equal(celsius(45), '45 °C');
    assert.equal(celsius(45.6), '46 °C');
    assert.equal(celsius(undefined), '–');
    assert.equal(powerW(350), '350 W');
  });
});

describe('tileState', () => {
  it('takes the first that applies: unreachable, failed, job, in use, drained, reserved, free', () => {
    const job = { job: { id: 1, name: 'j', owner: 'alice', task: 'worker-0', unix_user: 'alice', pid: 1 } };
    const reservation = { reservation: { id: 2, owner: 'bob', title: '', end: '' } };
    assert.equal(tileState(down, { index: 0 }, job), 'unreachable');
    assert.equal(tileState(ready, { index: 0, state: 'failed' }, job), 'failed');
    assert.equal(tileState(ready, { index: 0 }, job), 'job');
    assert.equal(tileState(ready, { index: 0, processes: [{ pid: 3 }] }, reservation), 'hand');
    assert.equal(tileState(drained, { index: 0 }, reservation), 'drained');
    assert.equal(tileState(ready, { index: 0 }, reservation), 'reserved');
    assert.equal(tileState(ready, { index: 0 }, undefined), 'free');
  });
});

describe('nodeMatches', () => {
  it('shows a node as busy when a GPU runs a job or processes started by hand', () => {
    assert.equal(nodeMatches(ready, ['free', 'job'], 'busy'), true);
    assert.equal(nodeMatches(ready, ['hand'], 'busy'), true);
    assert.equal(nodeMatches(ready, ['free', 'reserved'], 'busy'), false);
  });
  it('shows a node as free when a GPU is free, as reserved when one is idle but reserved', () => {
    assert.equal(nodeMatches(ready, ['job', 'free'], 'free'), true);
    assert.equal(nodeMatches(ready, ['job', 'reserved'], 'free'), false);
    assert.equal(nodeMatches(ready, ['job', 'reserved'], 'reserved'), true);
  });
  it('shows drained nodes by their badge, busy or not; a node that is down is not drained', () => {
    assert.equal(nodeMatches(drained, ['job', 'job'], 'drained'), true);
    assert.equal(nodeMatches(drained, ['drained'], 'free'), false, "a drained node's idle GPUs are not free");
    assert.equal(nodeMatches({ state: 'unreachable', drain }, ['unreachable'], 'drained'), false);
  });
  it('shows nodes that are down or have a failed GPU as failed or unreachable', () => {
    assert.equal(nodeMatches(down, ['unreachable'], 'down'), true);
    assert.equal(nodeMatches(down, [], 'down'), true, 'a node without GPUs too');
    assert.equal(nodeMatches(ready, ['free', 'failed'], 'down'), true);
    assert.equal(nodeMatches(ready, ['free', 'job'], 'down'), false);
  });
  it('shows every node under all', () => {
    for (const n of [ready, drained, down]) assert.equal(nodeMatches(n, [], 'all'), true);
  });
});

describe('nodeFilterCounts', () => {
  it('counts the nodes each filter shows (a node may count under several)', () => {
    const c = nodeFilterCounts([
      { node: ready, states: ['job', 'free'] },
      { node: ready, states: ['free', 'free'] },
      { node: drained, states: ['hand', 'drained'] },
      { node: down, states: ['unreachable'] },
    ]);
    assert.deepEqual(c, { all: 4, busy: 2, free: 2, reserved: 0, drained: 1, down: 1 });
    assert.deepEqual(Object.keys(c).sort(), NODE_FILTERS.map((f) => f.key).sort(), 'one count per choice');
  });
});

describe('nodeFilterFrom', () => {
  it('reads the URL parameter, and shows every node for anything unknown', () => {
    assert.equal(nodeFilterFrom('busy'), 'busy');
    assert.equal(nodeFilterFrom('down'), 'down');
    assert.equal(nodeFilterFrom(null), 'all');
    assert.equal(nodeFilterFrom('sideways'), 'all');
  });
});

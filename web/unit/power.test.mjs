// Unit tests of src/lib/power.ts (the power screen's filter, its table grouped by node and which
// nodes show their GPUs): `npm run test:unit`, no server or browser.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  AUTO_EXPANSION,
  allNodes,
  filterGpus,
  groupByNode,
  isBad,
  isExpanded,
  nodeWhy,
  plannedW,
  sumW,
  withNode,
} from '../src/lib/power.ts';

/** A GPU as GET /api/v1/power reports it: an idle A100 at its default but what `f` sets. */
function gpu(node, index, f = {}) {
  return {
    node,
    index,
    uuid: `GPU-${node}-${index}`,
    model: 'NVIDIA A100-SXM4-80GB',
    min_w: 100,
    max_w: 400,
    default_w: 400,
    target_w: null,
    in_force_w: 400,
    power_w: 60,
    busy: false,
    policies: [],
    reason: '',
    outcome: '',
    detail: '',
    reported: null,
    ...f,
  };
}

const CLUSTER = [
  gpu('gpu-a', 0, { target_w: 250, in_force_w: 250, power_w: 240.5, busy: true, policies: ['cap-a'], outcome: 'set' }),
  gpu('gpu-a', 1, { target_w: 250, in_force_w: 400, power_w: 61.2, policies: ['cap-a', 'budget'], outcome: 'refused', detail: 'needs root' }),
  gpu('gpu-a', 2, { target_w: 250, in_force_w: 250, power_w: 60.1, policies: ['cap-a'], outcome: 'error' }),
  gpu('gpu-b', 0, { model: 'NVIDIA H100 80GB HBM3', default_w: 700, max_w: 700, in_force_w: 700, power_w: 90 }),
  gpu('gpu-b', 1, { model: 'NVIDIA H100 80GB HBM3', default_w: 700, max_w: 700, in_force_w: 700, power_w: 95, busy: true }),
  // No range and no sample yet (a node that just joined).
  gpu('gpu-c', 0, { min_w: null, max_w: null, default_w: null, in_force_w: null, power_w: null }),
];

describe('sumW', () => {
  it('adds the known values and counts the unknown', () => {
    assert.deepEqual(sumW([100, null, 250, undefined]), { w: 350, unknown: 2 });
  });
  it('is null when nothing is known, and 0 for no values', () => {
    assert.deepEqual(sumW([null, null]), { w: null, unknown: 2 });
    assert.deepEqual(sumW([]), { w: null, unknown: 0 });
  });
  it('rounds to 0.1 W', () => {
    assert.deepEqual(sumW([0.1, 0.2]), { w: 0.3, unknown: 0 });
    assert.deepEqual(sumW([60.15, 60.1]), { w: 120.3, unknown: 0 });
  });
  it('skips values that are not finite', () => {
    assert.deepEqual(sumW([NaN, Infinity, 5]), { w: 5, unknown: 2 });
  });
});

describe('plannedW', () => {
  it('is the target, else the default, else unknown', () => {
    assert.equal(plannedW(gpu('n', 0, { target_w: 250 })), 250);
    assert.equal(plannedW(gpu('n', 0)), 400);
    assert.equal(plannedW(gpu('n', 0, { default_w: null })), null);
  });
});

describe('groupByNode', () => {
  const nodes = groupByNode(CLUSTER);

  it('gives one entry per node, in the order they first appear, with their GPUs in order', () => {
    assert.deepEqual(
      nodes.map((n) => [n.node, n.gpus.map((g) => g.index)]),
      [
        ['gpu-a', [0, 1, 2]],
        ['gpu-b', [0, 1]],
        ['gpu-c', [0]],
      ],
    );
    // A node's GPUs stay together even when the list interleaves them.
    const mixed = groupByNode([gpu('y', 0), gpu('x', 0), gpu('y', 1)]);
    assert.deepEqual(
      mixed.map((n) => [n.node, n.gpus.map((g) => g.index)]),
      [
        ['y', [0, 1]],
        ['x', [0]],
      ],
    );
  });

  it('adds up the planned limits (targets, else defaults), the limits in force and the draw', () => {
    const [a, b, c] = nodes;
    assert.deepEqual(a.planned, { w: 750, unknown: 0 });
    assert.deepEqual(a.inForce, { w: 900, unknown: 0 });
    assert.deepEqual(a.draw, { w: 361.8, unknown: 0 });
    assert.deepEqual(b.planned, { w: 1400, unknown: 0 }, 'no policy: the defaults');
    assert.deepEqual(b.inForce, { w: 1400, unknown: 0 });
    assert.deepEqual(b.draw, { w: 185, unknown: 0 });
    assert.deepEqual(c.planned, { w: null, unknown: 1 });
    assert.deepEqual(c.inForce, { w: null, unknown: 1 });
    assert.deepEqual(c.draw, { w: null, unknown: 1 });
  });

  it('counts the refused and failed GPUs as isBad does, the busy and the targeted', () => {
    assert.deepEqual(
      nodes.map((n) => [n.node, n.bad, n.busy, n.targeted]),
      [
        ['gpu-a', 2, 1, 3],
        ['gpu-b', 0, 1, 0],
        ['gpu-c', 0, 0, 0],
      ],
    );
    assert.equal(nodes.reduce((s, n) => s + n.bad, 0), CLUSTER.filter(isBad).length);
  });

  it('lists the models, the known ranges and the policies once each', () => {
    assert.deepEqual(nodes[0].models, ['NVIDIA A100-SXM4-80GB']);
    assert.deepEqual(nodes[1].models, ['NVIDIA H100 80GB HBM3']);
    assert.deepEqual(nodes[0].ranges, ['100–400 W']);
    assert.deepEqual(nodes[1].ranges, ['100–700 W']);
    assert.deepEqual(nodes[2].ranges, [], 'no range reported yet');
    assert.deepEqual(groupByNode([gpu('m', 0), gpu('m', 1, { min_w: 150, max_w: 450.5 })])[0].ranges, ['100–400 W', '150–450.5 W']);
    assert.deepEqual(nodes[0].policies, ['budget', 'cap-a']);
    assert.deepEqual(nodes[1].policies, []);
  });

  it('is empty for no GPUs', () => {
    assert.deepEqual(groupByNode([]), []);
  });

  it('scales to 100 nodes x 8 GPUs', () => {
    const many = [];
    for (let n = 1; n <= 100; n++) for (let i = 0; i < 8; i++) many.push(gpu(`gpu-${String(n).padStart(3, '0')}`, i));
    const grouped = groupByNode(many);
    assert.equal(grouped.length, 100);
    assert.ok(grouped.every((n) => n.gpus.length === 8 && n.planned.w === 3200 && n.draw.w === 480));
  });
});

describe('nodeWhy', () => {
  it('names the policies, says on how many GPUs when not all, or says there is none', () => {
    assert.equal(nodeWhy(groupByNode(CLUSTER)[0]), 'budget, cap-a');
    assert.equal(nodeWhy(groupByNode(CLUSTER)[1]), 'no policy');
    const some = groupByNode([gpu('n', 0, { target_w: 300, policies: ['peak'] }), gpu('n', 1), gpu('n', 2)])[0];
    assert.equal(nodeWhy(some), 'peak on 1 of 3 GPUs');
    const unnamed = groupByNode([gpu('n', 0, { target_w: 300 })])[0];
    assert.equal(nodeWhy(unnamed), 'a policy');
  });
});

describe('filterGpus', () => {
  it('keeps the GPUs whose node or model contains the text, in any case', () => {
    assert.deepEqual(
      filterGpus(CLUSTER, ' GPU-B ').map((g) => `${g.node}/${g.index}`),
      ['gpu-b/0', 'gpu-b/1'],
    );
    assert.deepEqual(
      filterGpus(CLUSTER, 'a100').map((g) => g.node),
      ['gpu-a', 'gpu-a', 'gpu-a', 'gpu-c'],
    );
    assert.deepEqual(filterGpus(CLUSTER, 'nothing'), []);
  });
  it('keeps everything for a blank filter', () => {
    assert.equal(filterGpus(CLUSTER, '  '), CLUSTER);
  });
  it('grouped, gives only the matching nodes with only their matching GPUs', () => {
    const mixed = [...CLUSTER, gpu('gpu-d', 0), gpu('gpu-d', 1, { model: 'NVIDIA H100 80GB HBM3' })];
    const g = groupByNode(filterGpus(mixed, 'h100'));
    assert.deepEqual(
      g.map((n) => [n.node, n.gpus.map((x) => x.index)]),
      [
        ['gpu-b', [0, 1]],
        ['gpu-d', [1]],
      ],
    );
  });
});

describe('isExpanded', () => {
  const [a, b] = groupByNode(CLUSTER); // gpu-a has refused/failed GPUs, gpu-b none

  it('opens the nodes with a refused or failed GPU, no others, before any choice', () => {
    assert.equal(isExpanded(a, AUTO_EXPANSION), true);
    assert.equal(isExpanded(b, AUTO_EXPANSION), false);
  });

  it('follows a choice per node, which outlasts the default', () => {
    const e = withNode(withNode(AUTO_EXPANSION, 'gpu-b', true), 'gpu-a', false);
    assert.equal(isExpanded(a, e), false);
    assert.equal(isExpanded(b, e), true);
    assert.deepEqual(AUTO_EXPANSION, { all: null, nodes: {} }, 'not changed in place');
  });

  it('expand all and collapse all forget the choices per node', () => {
    assert.ok([a, b].every((n) => isExpanded(n, allNodes(true))));
    assert.ok([a, b].every((n) => !isExpanded(n, allNodes(false))), 'a node with a refused GPU closes too');
    const e = withNode(allNodes(false), 'gpu-b', true);
    assert.equal(isExpanded(a, e), false);
    assert.equal(isExpanded(b, e), true);
  });
});

// Unit tests of the array screen's helpers (src/lib/sweeps.ts): the trials' order, the
// metric chosen by default, curves aligned on steps. `npm run test:unit`, no server.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  STOPPED_EARLY,
  alignCurves,
  chooseMetric,
  curveOf,
  curvesSummary,
  metricNames,
  metricText,
  paramNames,
  trialLabel,
  trialRows,
} from '../src/lib/sweeps.ts';

const member = (id, index, metrics, extra = {}) => ({
  id,
  array: { id: 9, index },
  state: 'succeeded',
  reason: '',
  restart_count: 0,
  gpu_seconds: 10,
  params: { lr: String(index) },
  ...(metrics ? { metrics } : {}),
  ...extra,
});
const loss = (min, max, last, last_step) => ({ loss: { min, max, last, count: 3, ...(last_step ? { last_step } : {}) } });

describe('trialRows', () => {
  const members = [
    member(1, 0, loss(0.5, 0.9, 0.5, 3)),
    member(2, 1, null),
    member(3, 2, loss(0.2, 0.8, 0.3, 3)),
    member(4, 3, loss(0.5, 0.7, 0.6, 2), { reason: `${STOPPED_EARLY}: asha rung 1` }),
  ];
  it('puts the lowest best first, ties by index, trials without the metric last', () => {
    const rows = trialRows(members, { metric: 'loss', maximize: false });
    assert.deepEqual(rows.map((r) => r.id), [3, 1, 4, 2]);
    assert.equal(rows[0].best, 0.2);
    assert.equal(rows[0].last, 0.3);
    assert.equal(rows[0].lastStep, 3);
    assert.equal(rows[3].best, null);
  });
  it('puts the highest first when the goal is max, from the maxima', () => {
    const rows = trialRows(members, { metric: 'loss', maximize: true });
    assert.deepEqual(rows.map((r) => r.id), [1, 3, 4, 2]);
    assert.equal(rows[0].best, 0.9);
  });
  it('names a trial the rule ended "stopped early"; by index without a metric', () => {
    const rows = trialRows(members, null);
    assert.deepEqual(rows.map((r) => r.index), [0, 1, 2, 3]);
    assert.equal(rows[3].state, STOPPED_EARLY);
    assert.equal(rows[0].state, 'succeeded');
    // a failed trial whose reason happens to say so is still failed
    assert.equal(trialRows([member(5, 0, null, { state: 'failed', reason: STOPPED_EARLY })], null)[0].state, 'failed');
  });
});

describe('chooseMetric', () => {
  const members = [member(1, 0, { zeta: { min: 1, max: 1, last: 1, count: 1 }, acc: { min: 0, max: 1, last: 1, count: 1 } })];
  it('takes the asked metric, else the rule, else the first name reported', () => {
    const rule = { sweep: { parameters: {}, early_stopping: { rule: 'asha', metric: 'acc', goal: 'max' } }, members };
    assert.deepEqual(chooseMetric(rule, null), { metric: 'acc', maximize: true });
    assert.deepEqual(chooseMetric(rule, { metric: 'zeta', maximize: false }), { metric: 'zeta', maximize: false });
    assert.deepEqual(chooseMetric({ sweep: { parameters: {} }, members }, null), { metric: 'acc', maximize: false });
    assert.equal(chooseMetric({ members: [member(2, 0, null)] }, null), null);
    assert.deepEqual(metricNames(members), ['acc', 'zeta']);
  });
  it('lists a sweep\'s parameters in definition order, none for a plain array', () => {
    assert.deepEqual(paramNames({ sweep: { parameters: { lr: [1], bs: [2] } } }), ['lr', 'bs']);
    assert.deepEqual(paramNames({}), []);
  });
});

describe('curves', () => {
  const answer = {
    job: 3,
    metrics: [
      { task: 'w', name: 'loss', value: 0.9, step: 1, time: 't' },
      { task: 'w', name: 'acc', value: 0.1, step: 1, time: 't' },
      { task: 'w', name: 'loss', value: 0.7, time: 't' }, // no step: not drawn
      { task: 'w', name: 'loss', value: 0.5, step: 3, time: 't' },
      { task: 'w', name: 'loss', value: 0.4, step: 3, time: 't' }, // the last value of a step wins
    ],
  };
  it('keeps the stepped points of one metric in step order', () => {
    const c = curveOf(3, 'trial 2', answer, 'loss');
    assert.deepEqual(c.points, [
      { step: 1, value: 0.9 },
      { step: 3, value: 0.4 },
    ]);
  });
  it('aligns curves on the union of their steps, null where a curve has none', () => {
    const a = { id: 1, label: 'a', points: [{ step: 1, value: 1 }, { step: 3, value: 3 }] };
    const b = { id: 2, label: 'b', points: [{ step: 2, value: 2 }] };
    assert.deepEqual(alignCurves([a, b]), [
      [1, 2, 3],
      [1, null, 3],
      [null, 2, null],
    ]);
    assert.deepEqual(alignCurves([]), [[]]);
    assert.equal(
      curvesSummary('loss', [a, b], metricText),
      'loss per step of the 2 best trials. a: 3 at step 3; b: 2 at step 2.',
    );
    assert.match(curvesSummary('loss', [], metricText), /No trial reported loss/);
  });
  it('labels a trial with its parameters and writes values with 6 digits', () => {
    assert.equal(trialLabel({ index: 4, params: { lr: '0.01', bs: '32' } }, ['lr', 'bs']), 'trial 4 (lr=0.01, bs=32)');
    assert.equal(trialLabel({ index: 4, params: {} }, []), 'trial 4');
    assert.equal(metricText(0.123456789), '0.123457');
    assert.equal(metricText(null), '–');
  });
});

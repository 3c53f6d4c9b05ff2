// Unit tests of the small job and time helpers the lists share (src/lib/jobs.ts,
// src/lib/format.ts, src/lib/jobform.ts): `npm run test:unit`, no server or browser.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jobGpus } from '../src/lib/jobs.ts';
import { ago, relative } from '../src/lib/format.ts';
import { applyTemplate, buildSpec, defaultJobForm, TEMPLATES } from '../src/lib/jobform.ts';

describe('jobGpus', () => {
  it('takes the count the queue gives, which has no spec', () => {
    assert.equal(jobGpus({ id: 1, gpus: 2 }), 2);
    assert.equal(jobGpus({ id: 1, gpus: 0, spec: { groups: [{ replicas: 2, gpus_per_task: 4 }] } }), 0);
  });
  it('sums the spec, else the tasks', () => {
    assert.equal(jobGpus({ id: 1, spec: { groups: [{ replicas: 2, gpus_per_task: 4 }, { gpus_per_task: 1 }] } }), 9);
    assert.equal(jobGpus({ id: 1, tasks: [{ gpus: [0, 1] }, { gpus: [3] }] }), 3);
  });
});

describe('ago', () => {
  const now = Date.parse('2026-11-26T10:00:00Z');
  it('says how long ago something happened', () => {
    assert.equal(ago('2026-11-26T09:58:00Z', now), relative('2026-11-26T09:58:00Z', now));
    assert.match(ago('2026-11-26T09:58:00Z', now), / ago$/);
  });
  it('is "just now", never "in 9 s", when the page clock lags behind the event', () => {
    assert.equal(ago('2026-11-26T10:00:09Z', now), 'just now');
    assert.equal(relative('2026-11-26T10:00:09Z', now).startsWith('in '), true);
  });
  it('shows a dash for nothing or nonsense', () => {
    assert.equal(ago(undefined, now), '–');
    assert.equal(ago('yesterday-ish', now), '–');
  });
});

describe('buildSpec', () => {
  const form = (extra) => ({ ...defaultJobForm(), name: 'train', command: 'python train.py', ...extra });
  it('sends the time limit typed, trimmed, and none when empty', () => {
    assert.equal(buildSpec(form({ timeLimit: ' 2h ' })).time_limit, '2h');
    assert.equal('time_limit' in buildSpec(form({ timeLimit: '  ' })), false);
  });
  it('keeps the time limit when a template is applied', () => {
    assert.equal(applyTemplate(form({ timeLimit: '30m' }), TEMPLATES[1]).timeLimit, '30m');
  });
});

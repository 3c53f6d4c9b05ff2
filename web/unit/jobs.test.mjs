// Unit tests of the small job and time helpers the lists share (src/lib/jobs.ts,
// src/lib/format.ts, src/lib/jobform.ts): `npm run test:unit`, no server or browser.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { firstLog, jobGpus, jobsCursor, jobsPage, listMine, reasonLabel, taskBadge } from '../src/lib/jobs.ts';
import { ago, durationText, factor, localTimes, relative } from '../src/lib/format.ts';
import { firstFreeGpu, jobHolds } from '../src/lib/calendar.ts';
import { applyTemplate, buildSpec, DEFAULT_JOB_NAME, defaultJobForm, TEMPLATES } from '../src/lib/jobform.ts';

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

describe('taskBadge', () => {
  it('says failed for a non-zero exit status or a signal, exited only for 0', () => {
    assert.equal(taskBadge({ state: 'exited', exit_code: 3 }), 'failed');
    assert.equal(taskBadge({ state: 'exited', signal: 9 }), 'failed');
    assert.equal(taskBadge({ state: 'exited', exit_code: 0, signal: 15 }), 'failed');
    assert.equal(taskBadge({ state: 'exited', exit_code: 0 }), 'exited');
    assert.equal(taskBadge({ state: 'running' }), 'running');
    assert.equal(taskBadge({ state: 'lost', exit_code: 1 }), 'lost');
  });
  it('says stopped for a cancelled job\'s task ended by a signal, failed for its own failure', () => {
    assert.equal(taskBadge({ state: 'exited', exit_code: 0, signal: 15 }, 'cancelled'), 'stopped');
    assert.equal(taskBadge({ state: 'exited', exit_code: 2 }, 'cancelled'), 'failed');
    assert.equal(taskBadge({ state: 'exited', signal: 9 }, 'failed'), 'failed');
  });
});

describe('firstLog', () => {
  const tasks = [
    { name: 'launcher', runs: false, state: 'created' },
    { name: 'worker-0', runs: true, state: 'exited', exit_code: 0 },
    { name: 'worker-1', runs: true, state: 'exited', exit_code: 3 },
  ];
  it("opens a failed job on its failed task's stderr", () => {
    assert.deepEqual(firstLog({ state: 'failed', tasks }), { task: 'worker-1', stream: 'stderr' });
  });
  it('opens any other job on the first running task, stdout', () => {
    assert.deepEqual(firstLog({ state: 'running', tasks }), { task: 'worker-0', stream: 'stdout' });
    assert.deepEqual(firstLog({ state: 'pending', tasks: [] }), { task: '', stream: 'stdout' });
  });
});

describe('reasonLabel', () => {
  it('waits when pending, gives the reason when final, else the last event', () => {
    assert.equal(reasonLabel('pending'), 'Waiting:');
    assert.equal(reasonLabel('failed'), 'Reason:');
    assert.equal(reasonLabel('running'), 'Last event:');
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
  it('names a job without a name as rota run does', () => {
    assert.equal(buildSpec(form({ name: '' })).name, DEFAULT_JOB_NAME);
    assert.equal(buildSpec(form({ name: '   ' })).name, 'job');
    assert.equal(buildSpec(form({ name: ' train ' })).name, 'train');
    assert.throws(() => buildSpec(form({ command: ' ' })), /Give the command to run/);
  });
  it('keeps the time limit when a template is applied', () => {
    assert.equal(applyTemplate(form({ timeLimit: '30m' }), TEMPLATES[1]).timeLimit, '30m');
  });
});

describe('durationText', () => {
  it('speaks the server\'s durations in the UI\'s words', () => {
    assert.equal(durationText('30m'), '30 min');
    assert.equal(durationText('1h30m'), '1 h 30 min');
    assert.equal(durationText('4h'), '4 h');
    assert.equal(durationText('2d'), '2 d');
    assert.equal(durationText('3d12h'), '3 d 12 h');
    assert.equal(durationText('1.5h'), '1 h 30 min');
  });
  it('leaves what it cannot read as it is', () => {
    assert.equal(durationText('soon'), 'soon');
    assert.equal(durationText('30x'), '30x');
    assert.equal(durationText(''), '–');
  });
});

describe('localTimes', () => {
  it('writes the server\'s UTC times in local time, the date only on another day', () => {
    const at = new Date(2026, 10, 29, 9, 0).getTime();  // local time
    const later = new Date(2026, 10, 29, 14, 5);
    const tomorrow = new Date(2026, 10, 30, 8, 0);
    const text = `gpu-b reserved by carol until ${later.toISOString().replace(/\.\d+Z$/, 'Z')}; ` +
      `from ${tomorrow.toISOString()}`;
    const out = localTimes(text, at);
    assert.ok(!/\d{4}-\d{2}-\d{2}T/.test(out), out);
    assert.ok(out.startsWith('gpu-b reserved by carol until '), out);
    assert.ok(out.includes(later.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })), out);
    assert.ok(out.includes(tomorrow.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })), out);
    assert.ok(!out.includes(later.toLocaleDateString(undefined, { month: 'short', day: 'numeric' }) + ','), out);
  });
  it('leaves other text alone', () => {
    assert.equal(localTimes('waiting for 8 GPUs (6 free)', 0), 'waiting for 8 GPUs (6 free)');
  });
});

describe('factor', () => {
  it('drops the zeros a weight does not need', () => {
    assert.equal(factor(1), '1');
    assert.equal(factor(0.5), '0.5');
    assert.equal(factor(1.256), '1.26');
    assert.equal(factor(undefined), '–');
  });
});

describe('jobHolds', () => {
  const now = Date.parse('2026-11-29T10:00:00Z');
  const task = (node, gpus, state = 'running') => ({ node, gpus, state });
  it('puts a running job on each GPU its live tasks hold, until its time limit ends', () => {
    const m = jobHolds([
      { id: 7, name: 'a', owner: 'ana', state: 'running', started: '2026-11-29T09:00:00Z', deadline: '2026-11-29T11:00:00Z',
        tasks: [task('n1', [0, 1]), task('n1', [0, 1]), task('n2', [3], 'exited')] },
      { id: 8, name: 'b', owner: 'bo', state: 'pending', tasks: [] },
    ], now);
    assert.deepEqual([...m.keys()].sort(), ['n1/0', 'n1/1']);
    assert.equal(m.get('n1/0').length, 1, 'processes of one task share its GPUs');
    assert.deepEqual(m.get('n1/0')[0], { id: 7, name: 'a', owner: 'ana', start: now - 3_600_000, end: now + 3_600_000, open: false });
  });
  it('draws a job without a time limit an hour past now, open-ended', () => {
    const m = jobHolds([{ id: 9, name: 'c', owner: 'cy', state: 'running', started: '2026-11-29T08:00:00Z', tasks: [task('n1', [2])] }], now);
    assert.equal(m.get('n1/2')[0].end, now + 3_600_000);
    assert.equal(m.get('n1/2')[0].open, true);
  });
});

describe('firstFreeGpu', () => {
  const node = { name: 'n1', gpus: [{ index: 0 }, { index: 1 }, { index: 2 }] };
  const at = Date.parse('2026-11-29T10:00:00Z');
  const holds = new Map([['n1/0', [{ id: 1 }]]]);
  const res = (gpus, start, end, state = 'upcoming') => ({ node: 'n1', gpus, start, end, state });
  it('skips GPUs a job holds or a reservation covers at the start', () => {
    assert.equal(firstFreeGpu(node, holds, [], at), 1);
    assert.equal(firstFreeGpu(node, holds, [res([1], '2026-11-29T09:00:00Z', '2026-11-29T11:00:00Z')], at), 2);
    assert.equal(firstFreeGpu(node, holds, [res([1], '2026-11-29T09:00:00Z', '2026-11-29T11:00:00Z', 'cancelled')], at), 1);
    assert.equal(firstFreeGpu(node, holds, [res([1], '2026-11-29T10:30:00Z', '2026-11-29T11:00:00Z')], at), 1);
  });
  it('falls back to the lowest when every GPU is taken', () => {
    assert.equal(firstFreeGpu({ name: 'n1', gpus: [{ index: 0 }] }, holds, [], at), 0);
    assert.equal(firstFreeGpu({ name: 'n1', gpus: [] }, holds, [], at), undefined);
  });
});

describe('listMine', () => {
  it('shows a user their own jobs and an admin everyone\'s unless mine= says otherwise', () => {
    assert.equal(listMine(null, false), true);
    assert.equal(listMine(null, true), false);
    assert.equal(listMine('false', false), false);
    assert.equal(listMine('true', true), true);
  });
});

describe('jobsPage', () => {
  it('pages by job id: older below the last shown, newer above the first', () => {
    assert.deepEqual(jobsPage(null, [9, 7, 4], true), { newer: null, older: { before: 4 }, text: 'newest 3' });
    assert.deepEqual(jobsPage(null, [9, 7, 4], false), { newer: null, older: null, text: 'newest 3' });
    assert.deepEqual(jobsPage({ before: 4 }, [3, 2], true), { newer: { after: 3 }, older: { before: 2 }, text: 'jobs 3 to 2' });
    assert.deepEqual(jobsPage({ before: 4 }, [3], false), { newer: { after: 3 }, older: null, text: 'job 3' });
    // An after page: more newer only while the server says truncated; older always.
    assert.deepEqual(jobsPage({ after: 3 }, [7, 4], true), { newer: { after: 7 }, older: { before: 4 }, text: 'jobs 7 to 4' });
    assert.deepEqual(jobsPage({ after: 7 }, [9], false), { newer: null, older: { before: 9 }, text: 'job 9' });
  });
  it('finds its way back from an empty page', () => {
    assert.deepEqual(jobsPage(null, [], false), { newer: null, older: null, text: 'no jobs' });
    assert.deepEqual(jobsPage({ before: 4 }, [], false), { newer: { after: 3 }, older: null, text: 'no jobs' });
    assert.deepEqual(jobsPage({ after: 9 }, [], false), { newer: null, older: { before: 10 }, text: 'no jobs' });
  });
});

describe('jobsCursor', () => {
  it('reads before or after as a positive id, anything else as the newest page', () => {
    assert.deepEqual(jobsCursor(new URLSearchParams('before=12')), { before: 12 });
    assert.deepEqual(jobsCursor(new URLSearchParams('after=3&limit=2')), { after: 3 });
    assert.equal(jobsCursor(new URLSearchParams('before=0')), null);
    assert.equal(jobsCursor(new URLSearchParams('before=-4')), null);
    assert.equal(jobsCursor(new URLSearchParams('before=1.5')), null);
    assert.equal(jobsCursor(new URLSearchParams('after=x')), null);
    assert.equal(jobsCursor(new URLSearchParams('offset=100')), null);
  });
});

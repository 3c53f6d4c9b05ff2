// The API description served by a real `rota dev` (GET /api/v1/openapi.json) against three
// things: Redocly's "recommended" lint rules (the ones `redocly lint` applies by default: no
// errors, no warnings); the UI's generated types (src/api/schema.d.ts must be what
// openapi-typescript makes of the served spec); and the server's own answers (every GET of the
// spec on a cluster with users, a group, a queue, quotas, policies, reservations, jobs, a power
// policy and a token, and every other answer the test provokes, 4xx included, must match the
// operation's response schema for its status, checked with Ajv).
//
//   ROTA_BIN=/path/to/rota node --test e2e/openapi.test.mjs
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
// Ajv as @redocly/openapi-core brings it (an Ajv 8 fork; it knows OpenAPI 3.0's `nullable`).
import AjvModule from '@redocly/ajv';
import { SCHEMA_FILE, renderSchemaTypes } from '../scripts/api-types.mjs';
import { apiCall, eventually, startRota, stopProcess, waitForReadyNodes } from './helpers.mjs';

const Ajv = AjvModule.default ?? AjvModule;

// RFC 3339 as the server writes it: UTC, seconds or milliseconds.
const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/;

const iso = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('OpenAPI description', { timeout: 10 * 60_000 }, () => {
  let rota = null;
  let dataDir = '';
  let base = '';
  let accounts = {};
  let spec = null;
  let ajv = null;
  const checked = []; // "METHOD path status" of every answer validated

  before(async () => {
    assert.ok(process.env.ROTA_BIN, 'set ROTA_BIN to the rota binary');
    dataDir = mkdtempSync(path.join(tmpdir(), 'rota-openapi-'));
    rota = startRota(dataDir);
    ({ url: base, accounts } = await rota.ready);
    const res = await apiCall(base, 'GET', '/api/v1/openapi.json');
    assert.equal(res.status, 200);
    spec = res.json;
    ajv = new Ajv({ allErrors: true, strict: false });
    ajv.addFormat('date-time', DATE_TIME);
    ajv.addSchema(spec, 'openapi.json');
  });

  after(async () => {
    await stopProcess(rota?.child);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('lints clean under the recommended rules', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({
      source: JSON.stringify(spec),
      absoluteRef: 'openapi.json',
      config,
    });
    const describe = (p) =>
      `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer ?? '?'}`;
    assert.deepEqual(problems.filter((p) => p.severity === 'error').map(describe), [], 'lint errors');
    assert.deepEqual(problems.filter((p) => p.severity === 'warn').map(describe), [], 'lint warnings');
  });

  it('declares its licence', () => {
    assert.equal(spec.info.license?.name, 'Apache-2.0');
  });

  it('names every operation uniquely, as generated clients need', () => {
    const ids = [];
    for (const item of Object.values(spec.paths)) {
      for (const op of Object.values(item)) ids.push(op.operationId);
    }
    assert.ok(ids.length > 40, `only ${ids.length} operations`);
    assert.ok(ids.every((id) => /^[a-z][A-Za-z]+$/.test(id)), `odd ids: ${ids.join(', ')}`);
    assert.equal(new Set(ids).size, ids.length, 'operationIds must be unique');
  });

  it('gives the UI types committed in src/api/schema.d.ts', async () => {
    const want = await renderSchemaTypes(spec);
    const have = readFileSync(SCHEMA_FILE, 'utf8');
    if (have !== want) {
      const a = have.split('\n');
      const b = want.split('\n');
      let i = 0;
      while (i < a.length && a[i] === b[i]) i++;
      assert.fail(
        `web/src/api/schema.d.ts is not what the served spec gives: run \`npm run gen:api\` in web/ ` +
          `(ROTA_BIN=../build/bin/rota, or ROTA_URL of a running rota) and commit it.\n` +
          `First difference at line ${i + 1}:\n  committed: ${a[i] ?? '(end)'}\n  generated: ${b[i] ?? '(end)'}`,
      );
    }
  });

  // ---------------------------------------------------------------- the server's answers

  /** The spec's path template that `p` (no query) matches, e.g. /api/v1/jobs/{id}. */
  function templateOf(p) {
    if (spec.paths[p]) return p;
    for (const t of Object.keys(spec.paths)) {
      const re = new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      if (re.test(p)) return t;
    }
    return null;
  }

  /**
   * Calls the API and checks the answer against the spec: the path and method are described,
   * the status is one the operation declares (or it has a default), and a JSON body matches
   * its schema (a 204 has none). Returns the answer.
   */
  async function call(method, p, token, body) {
    const res = await apiCall(base, method, p, token, body);
    const where = `${method} ${p} -> ${res.status}`;
    const t = templateOf(p.split('?')[0]);
    assert.ok(t, `${where}: the path is not in the spec`);
    const op = spec.paths[t][method.toLowerCase()];
    assert.ok(op, `${where}: ${method} ${t} is not in the spec`);
    const code = op.responses[String(res.status)] ? String(res.status) : 'default';
    const answer = op.responses[code];
    assert.ok(answer, `${where}: the spec declares only ${Object.keys(op.responses).join(', ')} (${res.text.slice(0, 300)})`);
    if (res.status === 204) {
      assert.equal(answer.content, undefined, `${where}: a 204 has no body`);
      assert.equal(res.text, '', `${where}: a 204 has no body`);
    } else {
      assert.ok(answer.content?.['application/json'], `${where}: the spec describes no JSON answer`);
      assert.notEqual(res.json, null, `${where}: not JSON: ${res.text.slice(0, 300)}`);
      const pointer = ['paths', t, method.toLowerCase(), 'responses', code, 'content', 'application/json', 'schema']
        .map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1'))
        .join('/');
      const validate = ajv.getSchema(`openapi.json#/${pointer}`);
      assert.ok(validate, `${where}: no schema at ${pointer}`);
      if (!validate(res.json)) {
        const errors = validate.errors.map((e) => `  ${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`);
        assert.fail(`${where}: the answer does not match the spec:\n${errors.join('\n')}\nbody: ${res.text.slice(0, 1500)}`);
      }
    }
    checked.push(`${method} ${t} ${res.status}`);
    return res;
  }

  it('answers as the spec says, 2xx and 4xx', async () => {
    await waitForReadyNodes(base, accounts);
    const admin = (await call('POST', '/api/v1/auth/login', null, { username: 'admin', password: accounts.admin })).json.token;
    const alice = (await call('POST', '/api/v1/auth/login', null, { username: 'alice', password: accounts.alice })).json.token;
    if (process.getuid?.() === 0) {
      // Jobs never run as root: as `rota user set alice --unix-user nobody` does.
      assert.equal((await call('PATCH', '/api/v1/users/alice', admin, { unix_user: 'nobody' })).status, 200);
    }

    // A cluster with something in every list.
    assert.equal((await call('POST', '/api/v1/groups', admin, { name: 'ml', description: 'ML team' })).status, 201);
    const bob = await call('POST', '/api/v1/users', admin, { username: 'bob', password: 'a long password 1', groups: ['ml'] });
    assert.equal(bob.status, 201);
    const queue = await call('POST', '/api/v1/queues', admin, {
      name: 'batch',
      description: 'overnight',
      priority: 10,
      default_time_limit: '2h',
      groups: ['ml'],
    });
    assert.equal(queue.status, 201);
    assert.equal((await call('PUT', '/api/v1/quotas/user/alice', admin, { max_gpus: 1, max_gpu_hours: 100, share: 2 })).status, 200);
    assert.equal((await call('PUT', '/api/v1/quotas/group/ml', admin, { max_gpus: 4 })).status, 200);
    const policy = await call('POST', '/api/v1/policies', admin, {
      name: 'office-hours',
      description: 'gpu-b in the day',
      subjects: { users: ['alice'], groups: ['ml'] },
      targets: { nodes: ['gpu-b'] },
      windows: { zone: 'UTC', allow: [{ days: ['all'], from: '00:00', to: '24:00' }] },
      max_duration: '8h',
      max_gpus: 4,
      idle: { threshold_pct: 5, after: '30m', release: false },
    });
    assert.equal(policy.status, 201, policy.text);
    const now = Date.now();
    const running = await call('POST', '/api/v1/reservations', alice, {
      node: 'gpu-c',
      gpus: [1],
      start: iso(now),
      end: iso(now + 3_600_000),
      title: 'now',
    });
    assert.equal(running.status, 201, running.text);
    const upcoming = await call('POST', '/api/v1/reservations', alice, {
      node: 'gpu-b',
      count: 2,
      start: iso(now + 86_400_000),
      end: iso(now + 90_000_000),
      title: 'tomorrow',
      description: 'two GPUs',
    });
    assert.equal(upcoming.status, 201, upcoming.text);
    const cancelled = await call('POST', '/api/v1/reservations', alice, {
      node: 'gpu-b',
      gpus: [3],
      start: iso(now + 2 * 86_400_000),
      end: iso(now + 2 * 86_400_000 + 3_600_000),
      title: 'cancelled',
    });
    assert.equal((await call('DELETE', `/api/v1/reservations/${cancelled.json.id}`, alice)).status, 200);
    assert.equal((await call('PATCH', `/api/v1/reservations/${upcoming.json.id}`, alice, { title: 'tomorrow, renamed' })).status, 200);

    const spec1 = { name: 'sleeper', command: ['sh', '-c', 'echo hello; sleep 60'], groups: [{ role: 'worker', replicas: 1, gpus_per_task: 1 }] };
    assert.equal((await call('POST', '/api/v1/jobs/preview', alice, spec1)).status, 200);
    const job = await call('POST', '/api/v1/jobs', alice, { ...spec1, time_limit: '10m', env: { A: 'b' } });
    assert.equal(job.status, 201, job.text);
    await eventually('the job running', async () => (await apiCall(base, 'GET', `/api/v1/jobs/${job.json.id}`, alice)).json.state === 'running', { timeout: 60_000 });
    // Alice may hold 1 GPU: this one waits, with a reason, a position and an estimated start.
    const waits = await call('POST', '/api/v1/jobs', alice, { name: 'waits', command: ['true'], groups: [{ role: 'worker', replicas: 1, gpus_per_task: 1 }] });
    assert.equal(waits.status, 201, waits.text);
    const cancelledJob = await call('POST', '/api/v1/jobs', alice, { name: 'cancelled', command: ['true'], groups: [{ replicas: 1, gpus_per_task: 1 }] });
    assert.equal((await call('POST', `/api/v1/jobs/${cancelledJob.json.id}/cancel`, alice)).status, 200);
    // An array of two members (no GPUs: they run and end at once).
    const array = await call('POST', '/api/v1/jobs', alice, { name: 'pair', command: ['true'], groups: [{ replicas: 1 }], array: '0-1' });
    assert.equal(array.status, 201, array.text);
    await eventually('the job log', async () => (await apiCall(base, 'GET', `/api/v1/jobs/${job.json.id}/logs`, alice)).json?.data?.includes('hello'));

    const power = (await call('GET', '/api/v1/power', admin)).json;
    const a0 = power.gpus.find((g) => g.node === 'gpu-a' && g.index === 0);
    assert.ok(a0?.min_w && a0?.max_w, `gpu-a/0 has a power range: ${JSON.stringify(a0)}`);
    const powerPolicy = await call('POST', '/api/v1/power/policies', admin, {
      name: 'cap-a',
      scope: { nodes: ['gpu-a'] },
      limit: Math.round((a0.min_w + a0.max_w) / 2),
      windows: { allow: [{ days: ['mon-sun'], from: '00:00', to: '24:00' }] },
    });
    assert.equal(powerPolicy.status, 201, powerPolicy.text);
    const token = await call('POST', '/api/v1/tokens', alice, { name: 'ci', ttl: '1d' });
    assert.equal(token.status, 201);
    const doomed = await call('POST', '/api/v1/tokens', alice, { name: 'doomed' });
    assert.equal((await call('DELETE', `/api/v1/tokens/${doomed.json.id}`, alice)).status, 204);
    // Accounted usage for the report.
    await eventually('usage by node', async () => (await apiCall(base, 'GET', '/api/v1/usage?by=node', admin)).json?.rows?.length >= 3, { timeout: 60_000 });

    // Every GET of the spec, with its path parameters filled from the cluster above.
    const fill = {
      name: { '/api/v1/users/{name}': 'alice', '/api/v1/queues/{name}': 'batch', default: 'gpu-a' },
      index: '0',
      kind: 'user',
      id: {
        '/api/v1/reservations/{id}': running.json.id,
        '/api/v1/policies/{id}': policy.json.id,
        '/api/v1/power/policies/{id}': powerPolicy.json.id,
        '/api/v1/arrays/{id}': array.json.array.id,
        default: job.json.id,
      },
    };
    // No violation here (one needs a stray process on a reserved GPU: calendar.test.mjs makes
    // one); the server may have no ssh-keygen.
    const expected = { '/api/v1/violations/{id}': [404], '/api/v1/ssh-key': [200, 503] };
    const required = { '/api/v1/reservations/held': '?node=gpu-c', '/api/v1/quotas/{kind}/{name}': '' };
    const notJson = [];
    // What alice (not an admin) may not read at all; everything else she reads, as herself.
    const adminOnly = new Set(['/api/v1/ssh-key', '/api/v1/users', '/api/v1/auth/events']);
    const expectedForAlice = {};
    const wrongForAlice = [];
    for (const [t, item] of Object.entries(spec.paths)) {
      if (!item.get) continue;
      if (!Object.entries(item.get.responses).some(([code, r]) => code.startsWith('2') && r.content?.['application/json'])) {
        notJson.push(t);
        continue;
      }
      const p =
        t.replace(/\{([^}]+)\}/g, (_, k) => {
          const v = typeof fill[k] === 'object' ? (fill[k][t] ?? fill[k].default) : fill[k];
          assert.ok(v !== undefined, `no value for {${k}} of ${t}: extend the test`);
          return encodeURIComponent(String(t === '/api/v1/quotas/{kind}/{name}' && k === 'name' ? 'alice' : v));
        }) + (required[t] ?? '');
      const res = await call('GET', p, admin);
      assert.ok((expected[t] ?? [200]).includes(res.status), `GET ${p}: ${res.text.slice(0, 300)}`);
      // The same as a user who is not an admin: the answer (a narrower view, or a 403 for
      // what only admins read) must be one the spec declares, in its declared shape.
      const mine = await call('GET', p, alice);
      const want = adminOnly.has(t) ? [403] : (expectedForAlice[t] ?? expected[t] ?? [200]);
      if (!want.includes(mine.status)) wrongForAlice.push(`GET ${p}: ${mine.status} ${mine.text.slice(0, 200)}`);
    }
    assert.deepEqual(wrongForAlice, [], 'answers to alice');
    assert.deepEqual(notJson.sort(), ['/api/v1/agent/connect', '/api/v1/stream', '/metrics'], 'GETs without a JSON answer');

    // The same lists filtered, and the report by every grouping.
    for (const q of ['/api/v1/jobs?mine=true', '/api/v1/jobs?state=pending', '/api/v1/reservations?state=cancelled',
      '/api/v1/queue?limit=1', '/api/v1/gpus?node=gpu-c', '/api/v1/nodes?state=ready', '/api/v1/power/events?node=gpu-a',
      '/api/v1/jobs/' + job.json.id + '/logs?stream=stderr', '/api/v1/nodes/gpu-b/metrics?step=1m',
      '/api/v1/violations?state=open']) {
      assert.equal((await call('GET', q, alice)).status, 200, q);
    }
    for (const by of ['user', 'group', 'job', 'reservation', 'node']) {
      for (const who of [admin, alice]) assert.equal((await call('GET', `/api/v1/usage?by=${by}`, who)).status, 200);
    }
    const queuePage = (await call('GET', '/api/v1/queue', alice)).json;
    assert.ok(queuePage.jobs.some((j) => j.id === waits.json.id && j.reason && j.position === 1), JSON.stringify(queuePage));
    const detail = (await call('GET', `/api/v1/reservations/${running.json.id}`, alice)).json;
    assert.equal(detail.state, 'running');

    // Errors: every one is {"error": {"code", "message"}} with a status the operation declares.
    const errors = [
      ['GET', '/api/v1/jobs/999999', alice, 404],
      ['GET', '/api/v1/jobs/x', alice, 400],
      ['GET', '/api/v1/users', null, 401],
      ['GET', '/api/v1/users', alice, 403],
      ['GET', '/api/v1/reservations?limit=0', alice, 400],
      ['GET', '/api/v1/nodes/nowhere', alice, 404],
      ['GET', '/api/v1/usage?by=planet', alice, 400],
      ['POST', '/api/v1/auth/login', null, 401, { username: 'alice', password: 'wrong' }],
      ['POST', '/api/v1/jobs', alice, 400, { name: 'big', command: ['true'], groups: [{ replicas: 1, gpus_per_task: 100 }] }],
      ['POST', '/api/v1/reservations', alice, 409, { node: 'gpu-c', gpus: [1], start: iso(now + 60_000), end: iso(now + 120_000), title: 'clash' }],
      ['POST', '/api/v1/queues', admin, 409, { name: 'batch' }],
      ['DELETE', '/api/v1/queues/default', admin, 409],
      ['PUT', '/api/v1/quotas/user/nobody-here', admin, 404, { max_gpus: 1 }],
      ['POST', '/api/v1/ssh-nodes', admin, 400, { name: 'far', url: 'http://far' }],
      ['GET', '/api/v1/agent/connect', admin, 426],
      ['GET', '/api/v1/queues/default?foo=1', alice, 400],
      ['GET', '/api/v1/quotas/team/x', alice, 400],
      ['GET', '/api/v1/quotas/user/alice?foo=1', alice, 400],
      ['DELETE', '/api/v1/quotas/team/x', admin, 400],
      ['GET', '/api/v1/jobs?offset=-1', alice, 400],
    ];
    // What only admins change, tried by alice with bodies an admin could send: each is a 403
    // the operation declares, and nothing changes.
    const adminWrites = [
      ['POST', '/api/v1/groups', { name: 'alices' }],
      ['POST', '/api/v1/users', { username: 'mallory', password: 'a long password 2' }],
      ['PATCH', '/api/v1/users/bob', { groups: [] }],
      ['DELETE', '/api/v1/users/bob'],
      ['POST', '/api/v1/queues', { name: 'mine' }],
      ['DELETE', '/api/v1/queues/batch'],
      ['PUT', '/api/v1/quotas/user/alice', { max_gpus: 8 }],
      ['DELETE', '/api/v1/quotas/group/ml'],
      ['POST', '/api/v1/policies', { name: 'open', subjects: { users: ['alice'] }, targets: { nodes: ['gpu-a'] } }],
      ['DELETE', `/api/v1/policies/${policy.json.id}`],
      ['POST', '/api/v1/power/policies', { name: 'uncap', scope: { nodes: ['gpu-a'] }, limit: a0.max_w }],
      ['DELETE', `/api/v1/power/policies/${powerPolicy.json.id}`],
      ['POST', '/api/v1/ssh-nodes', { name: 'far', url: 'ssh://root@far' }],
    ];
    for (const [method, p, body] of adminWrites) errors.push([method, p, alice, 403, body]);
    for (const [method, p, who, status, body] of errors) {
      const res = await call(method, p, who, body);
      assert.equal(res.status, status, `${method} ${p}: ${res.text}`);
      assert.ok(res.json.error.message.length > 0, `${method} ${p}: no message`);
    }

    assert.equal((await call('GET', '/api/v1/quotas/user/alice', admin)).json.max_gpus, 1, 'alice changed her quota');
    assert.equal((await call('GET', '/api/v1/users/bob', admin)).status, 200, 'alice removed bob');
    assert.equal((await call('GET', '/api/v1/queues/batch', admin)).status, 200, 'alice removed a queue');

    // Clean up through the API (checked too): the job, then what only admins remove.
    assert.equal((await call('POST', `/api/v1/jobs/${job.json.id}/cancel`, alice)).status, 200);
    assert.equal((await call('POST', `/api/v1/jobs/${waits.json.id}/cancel`, alice)).status, 200);
    assert.equal((await call('DELETE', `/api/v1/power/policies/${powerPolicy.json.id}`, admin)).status, 204);
    assert.equal((await call('DELETE', `/api/v1/policies/${policy.json.id}`, admin)).status, 204);
    assert.equal((await call('DELETE', '/api/v1/quotas/group/ml', admin)).status, 204);
    assert.equal((await call('DELETE', '/api/v1/users/bob', admin)).status, 204);
    assert.equal((await call('POST', '/api/v1/auth/logout', admin)).status, 200);
    console.log(`# ${checked.length} answers checked against the spec, ${new Set(checked).size} kinds`);
  });
});

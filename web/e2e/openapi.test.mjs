// The API description served by a real `rota dev` passes Redocly's "recommended" lint rules
// (the ones `redocly lint` applies by default): no errors, and no warnings but one — the
// project has not declared a licence yet, so info.license stays empty (info-license).
//
//   ROTA_BIN=/path/to/rota node --test e2e/openapi.test.mjs
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { apiCall, startRota, stopProcess } from './helpers.mjs';

const ALLOWED_WARNINGS = new Set(['info-license']);

describe('OpenAPI description', () => {
  let rota = null;
  let dataDir = '';
  let base = '';

  before(async () => {
    assert.ok(process.env.ROTA_BIN, 'set ROTA_BIN to the rota binary');
    dataDir = mkdtempSync(path.join(tmpdir(), 'rota-openapi-'));
    rota = startRota(dataDir);
    ({ url: base } = await rota.ready);
  });

  after(async () => {
    await stopProcess(rota?.child);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('lints clean under the recommended rules', async () => {
    const res = await apiCall(base, 'GET', '/api/v1/openapi.json');
    assert.equal(res.status, 200);
    const spec = res.json;
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({
      source: JSON.stringify(spec),
      absoluteRef: 'openapi.json',
      config,
    });
    const describe = (p) =>
      `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer ?? '?'}`;
    const errors = problems.filter((p) => p.severity === 'error');
    assert.deepEqual(errors.map(describe), [], 'lint errors');
    const warnings = problems.filter((p) => p.severity === 'warn' && !ALLOWED_WARNINGS.has(p.ruleId));
    assert.deepEqual(warnings.map(describe), [], 'lint warnings');
  });

  it('names every operation uniquely, as generated clients need', async () => {
    const { json: spec } = await apiCall(base, 'GET', '/api/v1/openapi.json');
    const ids = [];
    for (const item of Object.values(spec.paths)) {
      for (const op of Object.values(item)) ids.push(op.operationId);
    }
    assert.ok(ids.length > 40, `only ${ids.length} operations`);
    assert.ok(ids.every((id) => /^[a-z][A-Za-z]+$/.test(id)), `odd ids: ${ids.join(', ')}`);
    assert.equal(new Set(ids).size, ids.length, 'operationIds must be unique');
  });
});

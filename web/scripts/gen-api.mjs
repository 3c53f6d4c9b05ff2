// npm run gen:api: writes src/api/schema.d.ts from a rota's OpenAPI description.
//
//   ROTA_URL=http://127.0.0.1:8080 npm run gen:api   from a running rota (the spec needs no sign-in)
//   ROTA_BIN=../build/bin/rota npm run gen:api        starts `rota dev` in a temporary directory
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRota, stopProcess } from '../e2e/helpers.mjs';
import { SCHEMA_FILE, renderSchemaTypes } from './api-types.mjs';

async function fetchSpec(base) {
  const res = await fetch(`${base.replace(/\/+$/, '')}/api/v1/openapi.json`);
  if (!res.ok) throw new Error(`GET ${base}/api/v1/openapi.json: HTTP ${res.status}`);
  return res.json();
}

async function main() {
  let spec;
  if (process.env.ROTA_URL) {
    spec = await fetchSpec(process.env.ROTA_URL);
  } else if (process.env.ROTA_BIN) {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'rota-gen-api-'));
    const rota = startRota(dataDir);
    try {
      const { url } = await rota.ready;
      spec = await fetchSpec(url);
    } finally {
      await stopProcess(rota.child);
      rmSync(dataDir, { recursive: true, force: true });
    }
  } else {
    throw new Error('set ROTA_URL to a running rota, or ROTA_BIN to the rota binary (it starts `rota dev`)');
  }
  writeFileSync(SCHEMA_FILE, await renderSchemaTypes(spec));
  console.log(`wrote ${path.relative(process.cwd(), fileURLToPath(SCHEMA_FILE))} (${Object.keys(spec.components.schemas).length} schemas, ${Object.keys(spec.paths).length} paths)`);
}

main().catch((e) => {
  console.error(`gen:api: ${e.message}`);
  process.exit(1);
});

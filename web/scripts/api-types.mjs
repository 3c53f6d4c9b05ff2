// rota's OpenAPI description as TypeScript: what `npm run gen:api` writes to
// src/api/schema.d.ts, and what e2e/openapi.test.mjs compares that file with.
import openapiTS, { astToString } from 'openapi-typescript';

export const SCHEMA_FILE = new URL('../src/api/schema.d.ts', import.meta.url);

const HEADER = `// Generated from rota's OpenAPI description (GET /api/v1/openapi.json, built by
// src/server/openapi.cc) by openapi-typescript. Do not edit: change the spec, rebuild
// rota, then in web/ run \`ROTA_BIN=../build/bin/rota npm run gen:api\` (or
// \`ROTA_URL=http://host:port npm run gen:api\` against a running rota).
// e2e/openapi.test.mjs fails while this file is not what the served spec gives.
`;

/** The contents of src/api/schema.d.ts for `spec` (the parsed openapi.json). */
export async function renderSchemaTypes(spec) {
  const ast = await openapiTS(spec, { silent: true });
  return `${HEADER}\n${astToString(ast)}`;
}

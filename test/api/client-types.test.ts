// The committed client types (src/client/openapi.d.ts) are what
// `npm run client:generate` makes from today's routes: a route or schema
// changed without regenerating fails here.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CLIENT_TYPES_PATH, generateClientTypes } from '../../scripts/generate-client.js';

it('src/client/openapi.d.ts matches a fresh generation from /api/openapi.json (run `npm run client:generate`)', async () => {
  const fresh = await generateClientTypes();
  expect(fresh).toContain('operations["createRoom"]');
  // Compared as booleans first: a diff of 4,000 lines helps nobody; the message says what to run.
  const same = readFileSync(CLIENT_TYPES_PATH, 'utf8') === fresh;
  expect(same, 'src/client/openapi.d.ts is stale: run `npm run client:generate` and commit it').toBe(true);
}, 60_000);

// Several nodes starting at once on an empty PostgreSQL: one tenant "default"
// and one printed token, not one per node.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openPostgres, type DatabaseHandle } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { createServices } from '../../src/services.js';
import { createPostgresDatabase } from '../helpers/database.js';

let target: { url: string; drop: () => Promise<void> };
let nodes: DatabaseHandle[] = [];

beforeAll(async () => {
  target = await createPostgresDatabase();
  nodes = await Promise.all([1, 2, 3, 4].map(() => openPostgres(target.url, 2)));
});
afterAll(async () => {
  for (const node of nodes) await node.close();
  await target?.drop();
});

describe('first start of several nodes', () => {
  it('migrates once and creates exactly one default tenant with one token', async () => {
    const applied = await Promise.all(nodes.map((node) => migrate(node)));
    // The advisory lock serializes migrators: the first applies everything, the others nothing.
    expect(applied.filter((files) => files.length > 0)).toHaveLength(1);

    const config = loadConfig({ DATABASE_URL: target.url });
    const tokens = await Promise.all(nodes.map((database) => createServices({ database, config }).tenants.bootstrapDefaultTenant()));
    expect(tokens.filter((t) => t !== null)).toHaveLength(1);
    const tenants = await sql<{ n: number }>`select count(*)::int as n from tenants where name = 'default'`.execute(nodes[0]!.db);
    expect(tenants.rows[0]!.n).toBe(1);
  });
});

// Every API request looks its token up (tokensByDigest in
// src/domain/tenants/tenants.repo.ts), as a named statement whose generic plan
// serves every call. That plan must read each token's tenant by its primary
// key: as a plain join it hashed the tokens found and read every tenant, so
// each request cost more the more tenants the instance had.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokensByDigest } from '../../src/domain/tenants/tenants.repo.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
});
afterAll(() => ctx.close());

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

describe('looking API tokens up', () => {
  it("reads each token's tenant by its primary key in the generic plan, never every tenant", async () => {
    const probe = await ctx.tenant();
    const { db } = ctx.services.database;
    // An instance with 2,000 tenants, each with a token. With a handful, one page holds
    // them all and reading it whole is the cheapest plan, by either statement.
    await sql`insert into tenants (id, name, default_return_url, timezone, created_at)
      select gen_random_uuid(), 'Tenant ' || n, 'https://example.org/', 'UTC', now() from generate_series(1, 2000) n`.execute(db);
    await sql`insert into api_tokens (id, tenant_id, token_hash, created_at)
      select gen_random_uuid(), id, sha256(convert_to(id::text, 'UTF8')), now() from tenants where id <> ${probe.id}`.execute(db);
    await sql`analyze api_tokens, tenants`.execute(db);
    const compiled = tokensByDigest(db, []).compile();
    // The statement as Parley's connections run it: named, with its generic plan (db/client.ts).
    const explained = await db.connection().execute(async (connection) => {
      await sql`set plan_cache_mode = force_generic_plan`.execute(connection);
      await sql.raw(`prepare token_lookup_plan as ${compiled.sql}`).execute(connection);
      try {
        // EXECUTE takes no bind parameters: the digest goes in as a literal.
        const { rows } = await sql
          .raw<Record<string, string>>(`explain execute token_lookup_plan(array['\\x${digest(probe.instanceToken).toString('hex')}'::bytea])`)
          .execute(connection);
        return rows.map((row) => Object.values(row)[0]).join('\n');
      } finally {
        await sql`deallocate token_lookup_plan`.execute(connection);
        await sql`reset plan_cache_mode`.execute(connection);
      }
    });
    expect(explained, explained).toContain('tenants_pkey');
    expect(explained, explained).not.toMatch(/Seq Scan on tenants|Hash Join/);
  });

  it('finds several tokens in one statement, each with its own tenant, and nothing for an unknown digest', async () => {
    const [first, second] = [await ctx.tenant({ timezone: 'Europe/Berlin' }), await ctx.tenant({ timezone: 'America/Chicago' })];
    const rows = await tokensByDigest(ctx.services.database.db, [digest(first.instanceToken), digest(second.instanceToken), digest('prl_unknown')]).execute();
    const byTenant = new Map(rows.map((row) => [row.tenant_id, row.timezone]));
    expect(rows).toHaveLength(2);
    expect(byTenant.get(first.id)).toBe('Europe/Berlin');
    expect(byTenant.get(second.id)).toBe('America/Chicago');
  });
});

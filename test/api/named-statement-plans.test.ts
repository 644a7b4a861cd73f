// The statements compiled once (src/db/prepared.ts) run as named statements,
// each with one generic plan for every call (on PostgreSQL Parley's
// connections force it: src/db/client.ts). That plan is chosen without the
// values, so it must not read a table whole: on an instance with many
// tenants, rooms and participants, such a plan costs every request more the
// more the instance holds. The token lookup's did: as a plain join it hashed
// the tokens found and read every tenant (tokensByDigest in
// src/domain/tenants/tenants.repo.ts).
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledStatements } from '../../src/db/prepared.js';
import { tokensByDigest } from '../../src/domain/tenants/tenants.repo.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

let ctx: TestContext;
let probeToken: string;
beforeAll(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  probeToken = (await ctx.tenant()).instanceToken;
  const { db } = ctx.services.database;
  // An instance with 2,000 more tenants, each with a token, an organization, its
  // features and two rooms; people in a fifth of the rooms, guest links in another.
  // With a handful of rows one page holds a table and reading it whole is the
  // cheapest plan, whatever the statement.
  await sql`insert into tenants (id, name, default_return_url, timezone, created_at)
    select gen_random_uuid(), 'Tenant ' || n, 'https://example.org/', 'UTC', now() from generate_series(1, 2000) n`.execute(db);
  await sql`insert into api_tokens (id, tenant_id, token_hash, created_at)
    select gen_random_uuid(), id, sha256(convert_to(id::text, 'UTF8')), now() from tenants t
    where not exists (select 1 from api_tokens a where a.tenant_id = t.id)`.execute(db);
  await sql`insert into organizations (id, tenant_id, name, created_at) select gen_random_uuid(), id, 'Clinic', now() from tenants`.execute(db);
  await sql`insert into tenant_features (tenant_id, feature, enabled) select id, 'additional_participants', true from tenants`.execute(db);
  await sql`insert into organization_features (organization_id, feature, enabled) select id, 'additional_participants', false from organizations`.execute(db);
  await sql`insert into rooms (tenant_id, organization_id, token, access_token, guest_token, name, status, enable_chat, enable_screenshare,
      enable_invites, enable_audio_indicator, enable_waiting_room, scheduled_at, meeting_duration, return_url, permanent, created_at, updated_at, cleanup_base_at)
    select o.tenant_id, o.id, 'r' || n || o.id, 'a' || n || o.id, 'g' || n || o.id, 'Room', 'active', true, true, true, true, false,
      now(), 30, 'https://example.org/', false, now(), now(), now()
    from organizations o, generate_series(1, 2) n`.execute(db);
  await sql`insert into participants (token, room_id, role, display_name, node_id, joined_at, left_at, admission)
    select 'p' || r.id || '_' || n, r.id, 'guest', 'Guest', 'node-1', now(), case when n = 1 then now() end, 'admitted'
    from rooms r, generate_series(1, 3) n where r.id % 5 = 0`.execute(db);
  await sql`insert into room_guest_tokens (token, room_id, kind, created_at)
    select 'x' || r.id, r.id, 'additional', now() from rooms r where r.id % 5 = 1`.execute(db);
  await sql`analyze`.execute(db);
});
afterAll(() => ctx.close());

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

/**
 * The generic plan of `text` as a named statement, with these arguments as SQL literals (EXECUTE takes no bind parameters).
 * bitmapScans false: as if the planner never chose a bitmap scan (which returns rows in the table's order, not an index's).
 */
async function genericPlan(text: string, args: (types: string[]) => string[], { bitmapScans = true } = {}): Promise<string> {
  return ctx.services.database.db.connection().execute(async (connection) => {
    await sql`set plan_cache_mode = force_generic_plan`.execute(connection);
    if (!bitmapScans) await sql`set enable_bitmapscan = off`.execute(connection);
    await sql.raw(`prepare plan_probe as ${text}`).execute(connection);
    try {
      const { rows } = await sql<{ types: string[] }>`select parameter_types::text[] as types from pg_prepared_statements where name = 'plan_probe'`.execute(connection);
      const list = args(rows[0]!.types);
      const explained = await sql.raw<Record<string, string>>(`explain execute plan_probe${list.length ? `(${list.join(', ')})` : ''}`).execute(connection);
      return explained.rows.map((row) => Object.values(row)[0]).join('\n');
    } finally {
      await sql`deallocate plan_probe`.execute(connection);
      await sql`reset plan_cache_mode`.execute(connection);
      await sql`reset enable_bitmapscan`.execute(connection);
    }
  });
}

describe('named statements', () => {
  it('no generic plan reads a table whole', async () => {
    const statements = compiledStatements(ctx.services.database.db);
    // The token lookup, GET, create and PUT of a room at least: a statement taken out of prepare() must be taken out here too.
    expect(statements.length).toBeGreaterThanOrEqual(4);
    for (const { name, sql: text } of statements) {
      const plan = await genericPlan(text, (types) => types.map((type) => `null::${type}`));
      expect(plan, `${name}: ${text}\n${plan}`).not.toMatch(/Seq Scan/);
    }
  });

  it("an index gives GET and PUT room each of the room's lists in the order they read it: no sort", async () => {
    // A Sort under each of the three subqueries was set up and ended on every
    // execution (migration 0013). Where statistics promise several connected
    // participants a room, the planner may still prefer a bitmap scan and a
    // sort: the probe leaves bitmap scans out, to see that an index serves the order.
    const withLists = compiledStatements(ctx.services.database.db).filter(({ sql: text }) => text.includes('array(select p.token'));
    expect(withLists.length).toBeGreaterThanOrEqual(2);
    for (const { name, sql: text } of withLists) {
      const plan = await genericPlan(text, (types) => types.map((type) => `null::${type}`), { bitmapScans: false });
      expect(plan, `${name}: ${text}\n${plan}`).not.toMatch(/Sort/);
      expect(plan.match(/SubPlan/g), plan).toHaveLength(3);
    }
  });

  it("the token lookup reads each token's tenant by its primary key", async () => {
    const text = tokensByDigest(ctx.services.database.db, []).compile().sql;
    const plan = await genericPlan(text, () => [`array['\\x${digest(probeToken).toString('hex')}'::bytea]`]);
    expect(plan, plan).toContain('tenants_pkey');
    expect(plan, plan).not.toMatch(/Hash Join/);
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

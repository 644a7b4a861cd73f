// The counters behind Total-Count and the feedback summary
// (src/db/migrations/0007_sharded_counts.sql): spread over several rows per
// tenant, exact when summed, and out of the way of a tenant's delete.
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext, type TestTenant } from '../helpers/app.js';
import { createRoom } from '../helpers/api.js';
import { testDb } from '../helpers/database.js';

let ctx: TestContext;

beforeAll(async () => {
  // A loopback webhook target is allowed so that a tenant to delete can have an endpoint.
  ctx = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0', WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' } });
});
afterAll(() => ctx.close());

const totalCount = async (token: string) => Number((await ctx.request({ method: 'GET', url: '/api/rooms', token })).headers['total-count']);

async function counterRows(table: 'room_counts' | 'feedback_daily_counts', tenantId: string): Promise<number> {
  const result = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where tenant_id = ${tenantId}::uuid`.execute(ctx.services.database.db);
  return result.rows[0]!.n;
}

let participant = 0;
const feedback = (tenant: TestTenant, rating: 'good' | 'neutral' | 'bad') =>
  ctx.services.feedback.record({ tenantId: tenant.id, timezone: 'UTC', roomToken: 'room-token-for-counts', participantToken: `counts-participant-${++participant}`, rating, comment: null });

describe('sharded counts', () => {
  it("a tenant's creates spread over several counter rows; Total-Count and the summary stay exact through deletes", async () => {
    const tenant = await ctx.tenant();
    const org = await tenant.organization();
    const rooms = [];
    for (let i = 0; i < 20; i++) rooms.push(await createRoom(ctx, tenant.instanceToken, { name: `Room ${i}` }));
    const orgRooms = [];
    for (let i = 0; i < 5; i++) orgRooms.push(await createRoom(ctx, org.token, { name: `Clinic room ${i}` }));
    for (let i = 0; i < 9; i++) await feedback(tenant, i % 3 === 0 ? 'bad' : 'good');

    // Consecutive ids go to different shards: more than one row per scope.
    expect(await counterRows('room_counts', tenant.id)).toBeGreaterThan(2);
    expect(await counterRows('feedback_daily_counts', tenant.id)).toBeGreaterThan(2);
    expect(await totalCount(tenant.instanceToken)).toBe(25);
    expect(await totalCount(org.token)).toBe(5);

    for (const room of rooms.slice(0, 7)) {
      expect((await ctx.request({ method: 'DELETE', url: `/api/rooms/${room.token}`, token: tenant.instanceToken })).statusCode).toBe(204);
    }
    expect(await totalCount(tenant.instanceToken)).toBe(18);
    expect(await totalCount(org.token)).toBe(5);
    // An organization's room: both its tenant's and its organization's counts (0010: per DELETE statement).
    expect((await ctx.request({ method: 'DELETE', url: `/api/rooms/${orgRooms[0]!.token}`, token: org.token })).statusCode).toBe(204);
    expect(await totalCount(tenant.instanceToken)).toBe(17);
    expect(await totalCount(org.token)).toBe(4);

    // A feedback deleted (by SQL: the API never deletes one) leaves the summary exact.
    await sql`delete from room_feedbacks where id = (select min(id) from room_feedbacks where tenant_id = ${tenant.id}::uuid and rating = 'good')`.execute(ctx.services.database.db);
    const summary = await ctx.request({ method: 'GET', url: '/api/room_feedbacks/summary', token: tenant.instanceToken });
    expect(summary.statusCode, summary.body).toBe(200);
    expect(summary.json()).toMatchObject({ good: 5, neutral: 0, bad: 3 });
    const page = await ctx.request({ method: 'GET', url: '/api/room_feedbacks', token: tenant.instanceToken });
    expect(page.headers['total-count']).toBe('8');
  });

  it('counts kept in one row before 0007 (shard 0) and the shards after it add up, also when a shard goes negative', async () => {
    const tenant = await ctx.tenant();
    const made = [];
    for (let i = 0; i < 6; i++) made.push(await createRoom(ctx, tenant.instanceToken));
    // What the migration leaves: the whole count in shard 0.
    await sql`delete from room_counts where tenant_id = ${tenant.id}::uuid`.execute(ctx.services.database.db);
    await sql`insert into room_counts (tenant_id, organization_id, shard, count) values (${tenant.id}::uuid, '00000000-0000-0000-0000-000000000000', 0, 6)`.execute(
      ctx.services.database.db,
    );
    for (const room of made.slice(0, 4)) await ctx.request({ method: 'DELETE', url: `/api/rooms/${room.token}`, token: tenant.instanceToken });
    await createRoom(ctx, tenant.instanceToken);
    expect(await totalCount(tenant.instanceToken)).toBe(3);
  });

  it('deleting a tenant with rooms, organization rooms, participants, feedback and a webhook endpoint succeeds and leaves others alone', async () => {
    const doomed = await ctx.tenant();
    const other = await ctx.tenant();
    const org = await doomed.organization();
    for (let i = 0; i < 4; i++) await createRoom(ctx, doomed.instanceToken);
    const orgRoom = await createRoom(ctx, org.token);
    for (let i = 0; i < 3; i++) await createRoom(ctx, other.instanceToken);
    const endpoint = await ctx.request({ method: 'POST', url: '/api/webhook_endpoints', token: doomed.instanceToken, payload: { url: 'http://127.0.0.1:9/hooks' } });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    const { db } = ctx.services.database;
    const roomId = (await db.selectFrom('rooms').select('id').where('token', '=', orgRoom.token).executeTakeFirstOrThrow()).id;
    await db
      .insertInto('participants')
      .values({ token: 'counts-doomed-participant', room_id: roomId, role: 'guest', display_name: 'Guest', node_id: 'test', joined_at: new Date() })
      .execute();
    for (let i = 0; i < 4; i++) await feedback(doomed, 'neutral');
    await feedback(other, 'good');

    await sql`delete from tenants where id = ${doomed.id}::uuid`.execute(db);

    for (const table of ['rooms', 'room_counts', 'room_feedbacks', 'feedback_daily_counts', 'deleted_room_sessions', 'webhook_endpoints'] as const) {
      const left = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where tenant_id = ${doomed.id}::uuid`.execute(db);
      expect(left.rows[0]!.n, table).toBe(0);
    }
    expect(await totalCount(other.instanceToken)).toBe(3);
    const summary = await ctx.request({ method: 'GET', url: '/api/room_feedbacks/summary', token: other.instanceToken });
    expect(summary.json()).toMatchObject({ good: 1, neutral: 0, bad: 0 });
  });
});

// One row per tenant made every create wait for the previous one's commit (its
// row lock). Here several connections each hold an uncommitted create of the
// same tenant at the same time; with a single counter row the second one would
// wait for the first and run into lock_timeout.
describe.runIf(testDb === 'postgres')('concurrent creates in one tenant (PostgreSQL)', () => {
  const CONNECTIONS = 4;

  it('several open transactions create rooms and feedback of one tenant without waiting on each other; the counts are exact', async () => {
    const tenant = await ctx.tenant();
    await createRoom(ctx, tenant.instanceToken);
    const url = (ctx.services.database as { url?: string | null }).url;
    if (!url) throw new Error('the PostgreSQL test database has a URL');
    const clients = Array.from({ length: CONNECTIONS }, () => new pg.Client({ connectionString: url }));
    try {
      for (const client of clients) {
        await client.connect();
        await client.query('begin');
        await client.query(`set local lock_timeout = '2s'`);
      }
      // One after the other, each leaving its transaction open: every insert
      // must finish while the earlier ones still hold their locks.
      for (const [i, client] of clients.entries()) {
        await client.query(
          `insert into rooms (tenant_id, token, access_token, guest_token, name, status, enable_chat, enable_screenshare, enable_invites,
             enable_audio_indicator, scheduled_at, meeting_duration, return_url, permanent, created_at, updated_at, cleanup_base_at)
           values ($1, $2, $3, $4, 'x', 'active', true, true, true, true, now(), 30, 'https://example.org', false, now(), now(), now())`,
          [tenant.id, `concurrent-room-${tenant.id}-${i}`, `concurrent-access-${tenant.id}-${i}`, `concurrent-guest-${tenant.id}-${i}`],
        );
        await client.query(`insert into room_feedbacks (tenant_id, room_token, participant_token, rating, local_day, created_at) values ($1, 'r', $2, 'good', '2026-03-10', now())`, [
          tenant.id,
          `concurrent-participant-${tenant.id}-${i}`,
        ]);
      }
      for (const client of clients) await client.query('commit');
    } finally {
      for (const client of clients) await client.end().catch(() => {});
    }
    expect(await totalCount(tenant.instanceToken)).toBe(1 + CONNECTIONS);
    expect(await counterRows('room_counts', tenant.id)).toBeGreaterThanOrEqual(CONNECTIONS);
    const summary = await ctx.request({ method: 'GET', url: '/api/room_feedbacks/summary', token: tenant.instanceToken });
    expect(summary.json()).toMatchObject({ good: CONNECTIONS });
  });

  it('50 concurrent POSTs in one tenant over the pool: Total-Count is exact and the count is spread', async () => {
    const tenant = await ctx.tenant();
    const answers = await Promise.all(Array.from({ length: 50 }, () => ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload: { name: 'R', meeting_duration: 30, scheduled_at: '2030-03-10T14:00:00Z' } })));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(50).fill(201));
    expect(await totalCount(tenant.instanceToken)).toBe(50);
    expect(await counterRows('room_counts', tenant.id)).toBeGreaterThan(1);
  });
});

// Every writer of the room counters takes its rows in key order (tenant,
// organization, shard): 0010's deletes, 0014's creates and moves. A move that
// took the old organization's row first could hold it while a statement
// counting rooms of both organizations held the new one's, each waiting for
// the other. Here the statement waits first (behind a third transaction on
// the lower organization's row), then the move; when the row is let go, the
// statement goes on to the higher organization's row, which the old move
// already held.
describe.runIf(testDb === 'postgres')('counter rows in key order (PostgreSQL)', () => {
  it('a move between organizations and a statement creating rooms in both, in the same shard, wait for each other without a deadlock', async () => {
    const tenant = await ctx.tenant();
    const [low, high] = [await tenant.organization(), await tenant.organization()].sort((a, b) => (a.id < b.id ? -1 : 1));
    const moved = await createRoom(ctx, high!.token);
    const { db } = ctx.services.database;
    const id = Number((await sql<{ id: string }>`select id from rooms where token = ${moved.token}`.execute(db)).rows[0]!.id);
    const shard = id % 16;
    await sql`insert into room_counts (tenant_id, organization_id, shard, count) values (${tenant.id}::uuid, ${low!.id}::uuid, ${shard}, 0)
      on conflict do nothing`.execute(db);

    const url = (ctx.services.database as { url?: string | null }).url;
    if (!url) throw new Error('the PostgreSQL test database has a URL');
    const [holder, creator, mover] = Array.from({ length: 3 }, () => new pg.Client({ connectionString: url }));
    const waiting = async (client: pg.Client) => {
      // A generous deadline (milliseconds on a quiet machine): only a client that never waits misses it.
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline) {
        const { rows } = await sql<{ w: string | null }>`select wait_event_type as w from pg_stat_activity where pid = ${(client as unknown as { processID: number }).processID}`.execute(db);
        if (rows[0]?.w === 'Lock') return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error('never waited for the lock');
    };
    try {
      for (const client of [holder!, creator!, mover!]) {
        await client.connect();
        await client.query(`set deadlock_timeout = '100ms'`);
        await client.query('begin');
      }
      await holder!.query('select 1 from room_counts where tenant_id = $1 and organization_id = $2 and shard = $3 for update', [tenant.id, low!.id, shard]);
      // Two rooms whose ids fall in the moved room's shard, one in each organization, in one statement.
      const ids = [16_000_000_000 + shard, 16_000_000_016 + shard];
      const created = creator!.query(
        `insert into rooms (id, tenant_id, organization_id, token, access_token, guest_token, name, status, enable_chat, enable_screenshare, enable_invites,
           enable_audio_indicator, scheduled_at, meeting_duration, return_url, permanent, created_at, updated_at, cleanup_base_at)
         overriding system value
         select i, $1, o, 'order-' || i, 'order-a-' || i, 'order-g-' || i, 'x', 'active', true, true, true, true, now(), 30, 'https://example.org', false, now(), now(), now()
         from unnest($2::bigint[], $3::uuid[]) as r (i, o)`,
        [tenant.id, ids, [low!.id, high!.id]],
      );
      await waiting(creator!);
      const movedOver = mover!.query('update rooms set organization_id = $1 where id = $2', [low!.id, id]);
      await waiting(mover!);
      await holder!.query('commit');
      await created;
      await creator!.query('commit');
      await movedOver;
      await mover!.query('commit');
    } finally {
      for (const client of [holder!, creator!, mover!]) await client.end().catch(() => {});
    }
    expect(await totalCount(low!.token)).toBe(2);
    expect(await totalCount(high!.token)).toBe(1);
    expect(await totalCount(tenant.instanceToken)).toBe(3);
  });
});

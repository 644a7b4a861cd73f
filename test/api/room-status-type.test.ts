// A room's status is checked by its type, a domain (migration 0014), not by a
// CHECK constraint of the table: PostgreSQL parses a table's CHECK constraints
// again in every statement that writes a row, a PUT that never writes the
// status included. The database still refuses a status it does not know.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRoom } from '../helpers/api.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
});
afterAll(() => ctx.close());

describe("a room's status in the database", () => {
  it('refuses a status it does not know, on a change and on a new row', async () => {
    const { db } = ctx.services.database;
    const tenant = await ctx.tenant();
    const room = await createRoom(ctx, tenant.instanceToken);
    await expect(sql`update rooms set status = 'paused' where token = ${room.token}`.execute(db)).rejects.toThrow(/room_status/);
    await expect(
      sql`insert into rooms (tenant_id, token, access_token, guest_token, name, status, enable_chat, enable_screenshare, enable_invites,
          enable_audio_indicator, enable_waiting_room, scheduled_at, meeting_duration, return_url, permanent, created_at, updated_at, cleanup_base_at)
        select tenant_id, 'x' || token, 'x' || access_token, 'x' || guest_token, name, 'archived', true, true, true, true, false,
          scheduled_at, meeting_duration, return_url, false, now(), now(), now() from rooms where token = ${room.token}`.execute(db),
    ).rejects.toThrow(/room_status/);
    for (const status of ['started', 'ended', 'closed', 'active']) {
      await sql`update rooms set status = ${status} where token = ${room.token}`.execute(db);
    }
    const { rows } = await sql<{ status: string }>`select status from rooms where token = ${room.token}`.execute(db);
    expect(rows).toEqual([{ status: 'active' }]);
  });

  it('rooms has no CHECK constraint for every write to parse', async () => {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_constraint where conrelid = 'rooms'::regclass and contype = 'c'`.execute(
      ctx.services.database.db,
    );
    expect(rows).toEqual([{ n: 0 }]);
  });
});

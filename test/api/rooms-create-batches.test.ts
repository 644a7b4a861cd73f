// The creates asked in one turn of the event loop are one INSERT statement
// (rooms.repo.ts, support/per-turn-batches.ts; migration 0014 counts them per
// statement). Each caller still gets its own room and its own outcome.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/domain/auth/auth.service.js';
import type { RoomInput } from '../../src/domain/rooms/rooms.service.js';
import { createTestContext, type TestContext, type TestTenant } from '../helpers/app.js';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
});
afterAll(() => ctx.close());

const input = (name: string, more: Partial<RoomInput> = {}): RoomInput => ({ name, meeting_duration: 30, scheduled_at: '2030-03-10T14:00:00Z', ...more });
const principalOf = (token: string) => ctx.services.auth.authenticate(`Bearer ${token}`);
const totalCount = async (token: string) => Number((await ctx.request({ method: 'GET', url: '/api/rooms', token })).headers['total-count']);

async function counterRows(tenantId: string): Promise<{ organization_id: string; count: number }[]> {
  const result = await sql<{ organization_id: string; count: number }>`
    select organization_id, count from room_counts where tenant_id = ${tenantId}::uuid order by organization_id`.execute(ctx.services.database.db);
  return result.rows;
}

describe('creates of one turn', () => {
  let tenant: TestTenant;
  let principal: Principal;
  beforeAll(async () => {
    tenant = await ctx.tenant();
    principal = await principalOf(tenant.instanceToken);
  });

  it('are one statement: each caller gets its own room, as GET reads it, and one counter row counts them all', async () => {
    const settings = [
      input('Room A'),
      input('Room B', { enable_chat: false, host_display_name: 'Dr. B', locale: 'ar' }),
      input('Room C', { guest_display_name: 'Patient C', return_url: 'https://example.org/c' }),
      input('Room D', { enable_waiting_room: true, meeting_duration: 45 }),
    ];
    // No await between them: one turn.
    const created = await Promise.all(settings.map((s) => ctx.services.rooms.create(principal, s)));

    expect(created.map((view) => view.row.name)).toEqual(['Room A', 'Room B', 'Room C', 'Room D']);
    expect(created[1]!.row).toMatchObject({ enable_chat: false, host_display_name: 'Dr. B', locale: 'ar' });
    expect(created[2]!.row).toMatchObject({ guest_display_name: 'Patient C', return_url: 'https://example.org/c' });
    expect(created[3]!.row).toMatchObject({ enable_waiting_room: true, meeting_duration: 45 });
    expect(new Set(created.map((view) => view.row.token)).size).toBe(4);
    for (const view of created) {
      const read = await ctx.services.rooms.get(principal, view.row.token);
      expect(view).toEqual(read);
    }
    expect(await totalCount(tenant.instanceToken)).toBe(4);
    // A create alone would have counted each room in the shard of its id: four rows.
    expect(await counterRows(tenant.id)).toEqual([{ organization_id: '00000000-0000-0000-0000-000000000000', count: 4 }]);
  });

  it('of several scopes: each answer shows its own caller’s scope, and each scope is counted', async () => {
    const other = await ctx.tenant();
    const org = await other.organization();
    const [otherPrincipal, orgPrincipal] = await Promise.all([principalOf(other.instanceToken), principalOf(org.token)]);
    const created = await Promise.all([
      ctx.services.rooms.create(principal, input('Tenant room')),
      ctx.services.rooms.create(otherPrincipal, input('Other tenant room')),
      ctx.services.rooms.create(orgPrincipal, input('Clinic room')),
    ]);
    expect(created.map((view) => [view.row.name, view.row.tenant_id, view.row.organization_id])).toEqual([
      ['Tenant room', tenant.id, null],
      ['Other tenant room', other.id, null],
      ['Clinic room', other.id, org.id],
    ]);
    expect(await totalCount(tenant.instanceToken)).toBe(5);
    expect(await totalCount(other.instanceToken)).toBe(2);
    expect(await totalCount(org.token)).toBe(1);
  });

  it('a create the database refuses fails alone; the others of its turn are created once', async () => {
    const fresh = await ctx.tenant();
    const good = await principalOf(fresh.instanceToken);
    // A tenant that does not exist: the rooms table's foreign key refuses the row, and with it the whole statement.
    const orphan: Principal = { ...good, tenantId: '5b0c6a43-0c54-4f3e-8f55-2f0b9c1f0d7e' };
    const outcomes = await Promise.allSettled([
      ctx.services.rooms.create(good, input('First')),
      ctx.services.rooms.create(orphan, input('Orphan')),
      ctx.services.rooms.create(good, input('Third')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23503' });
    expect(outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.row.name] : []))).toEqual(['First', 'Third']);
    const names = await sql<{ name: string }>`select name from rooms where tenant_id = ${fresh.id}::uuid order by id`.execute(ctx.services.database.db);
    expect(names.rows.map((row) => row.name)).toEqual(['First', 'Third']);
    expect(await totalCount(fresh.instanceToken)).toBe(2);
  });

  it('50 concurrent POSTs over HTTP: every one 201 with its own name, Total-Count exact', async () => {
    const fresh = await ctx.tenant();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        ctx.request({ method: 'POST', url: '/api/rooms', token: fresh.instanceToken, payload: { name: `Room ${i}`, meeting_duration: 30, scheduled_at: '2030-03-10T14:00:00Z' } }),
      ),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(Array(50).fill(201));
    expect(answers.map((a) => a.json().name)).toEqual(Array.from({ length: 50 }, (_, i) => `Room ${i}`));
    expect(await totalCount(fresh.instanceToken)).toBe(50);
    const counted = await counterRows(fresh.id);
    expect(counted.reduce((sum, row) => sum + row.count, 0)).toBe(50);
  });
});

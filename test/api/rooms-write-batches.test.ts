// The creates asked in one turn of the event loop are one INSERT statement,
// and the PUTs of settings one UPDATE (rooms.repo.ts, support/per-turn-batches.ts;
// migration 0014 counts creates per statement). Each caller still gets its own
// room and its own outcome.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/domain/auth/auth.service.js';
import type { RoomInput } from '../../src/domain/rooms/rooms.service.js';
import { PreconditionFailedError } from '../../src/errors.js';
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

/** How many transactions wrote these rooms' current versions. */
async function writers(tokens: string[]): Promise<number> {
  const result = await sql<{ n: number }>`select count(distinct xmin::text)::int as n from rooms where token = any(${tokens}::text[])`.execute(ctx.services.database.db);
  return result.rows[0]!.n;
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
    expect(await writers(created.map((view) => view.row.token))).toBe(1);
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

describe('PUTs of one turn', () => {
  let tenant: TestTenant;
  let principal: Principal;
  beforeAll(async () => {
    tenant = await ctx.tenant();
    principal = await principalOf(tenant.instanceToken);
  });
  const room = async (name: string) => (await ctx.services.rooms.create(principal, input(name))).row;

  it('are one statement: each room gets its own settings and one more version, as GET then reads it', async () => {
    const [a, b, c] = [await room('A'), await room('B'), await room('C')];
    const updated = await Promise.all([
      ctx.services.rooms.update(principal, a.token, input('A renamed', { meeting_duration: 50, enable_chat: false })),
      ctx.services.rooms.update(principal, b.token, input('B renamed', { locale: 'fa', guest_display_name: 'Patient B' })),
      ctx.services.rooms.update(principal, c.token, input('C renamed', { scheduled_at: '2031-01-01T08:00:00Z', enable_waiting_room: true })),
    ]);
    expect(updated.map((view) => [view.row.token, view.row.name, view.row.version])).toEqual([
      [a.token, 'A renamed', a.version + 1],
      [b.token, 'B renamed', b.version + 1],
      [c.token, 'C renamed', c.version + 1],
    ]);
    expect(updated[0]!.row).toMatchObject({ meeting_duration: 50, enable_chat: false, locale: null });
    expect(updated[1]!.row).toMatchObject({ locale: 'fa', guest_display_name: 'Patient B', enable_chat: true });
    expect(updated[2]!.row).toMatchObject({ scheduled_at: new Date('2031-01-01T08:00:00Z'), enable_waiting_room: true });
    // The cleanup time follows the new scheduled end (greatest of it and the old one).
    expect(updated[2]!.row.cleanup_base_at.getTime()).toBeGreaterThan(c.cleanup_base_at.getTime());
    for (const view of updated) expect(view).toEqual(await ctx.services.rooms.get(principal, view.row.token));
    // One statement, one transaction: the three rows' versions were written by the same one.
    expect(await writers([a.token, b.token, c.token])).toBe(1);
  });

  it('each keeps its own If-Match and scope: a stale version is 412 and another tenant’s room 404, the others written', async () => {
    const [a, b] = [await room('A'), await room('B')];
    const other = await ctx.tenant();
    const stranger = await principalOf(other.instanceToken);
    const outcomes = await Promise.allSettled([
      ctx.services.rooms.update(principal, a.token, input('A matched'), [a.version]),
      ctx.services.rooms.update(principal, b.token, input('B stale'), [b.version + 7]),
      ctx.services.rooms.update(stranger, a.token, input('A by a stranger')),
    ]);
    expect(outcomes[0]).toMatchObject({ status: 'fulfilled', value: { row: { name: 'A matched', version: a.version + 1 } } });
    expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: expect.any(PreconditionFailedError) });
    expect(outcomes[2]).toMatchObject({ status: 'rejected', reason: { name: 'NotFoundError' } });
    expect((await ctx.services.rooms.get(principal, b.token)).row).toMatchObject({ name: 'B', version: b.version });
  });

  it('two PUTs of one room in one turn are both written, one after the other', async () => {
    const a = await room('A');
    const updated = await Promise.all([
      ctx.services.rooms.update(principal, a.token, input('First')),
      ctx.services.rooms.update(principal, a.token, input('Second')),
    ]);
    expect(updated.map((view) => view.row.version).sort()).toEqual([a.version + 1, a.version + 2]);
    const last = updated.find((view) => view.row.version === a.version + 2)!;
    expect((await ctx.services.rooms.get(principal, a.token)).row.name).toBe(last.row.name);
  });
});

// Automatic cleanup (docs/design.md#room-lifecycle): non-permanent rooms go CLEANUP_AFTER_DAYS
// (30) after the later of their scheduled end and their last activity; never
// permanent rooms, never while someone is connected; feedback stays.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, manualClock, type TestContext, type TestTenant } from '../helpers/app.js';
import { createRoom } from '../helpers/api.js';

const DAY = 86_400_000;
const START = new Date('2026-03-10T12:00:00Z');
const clock = manualClock(START);
let ctx: TestContext;
let tenant: TestTenant;

beforeAll(async () => {
  ctx = await createTestContext({ clock });
  tenant = await ctx.tenant();
  await tenant.setFeature('permanent_rooms', true);
});
afterAll(() => ctx.close());

const exists = async (token: string) =>
  (await ctx.request({ method: 'GET', url: `/api/rooms/${token}`, token: tenant.instanceToken })).statusCode === 200;

async function roomId(token: string): Promise<number> {
  const row = await ctx.services.database.db.selectFrom('rooms').select('id').where('token', '=', token).executeTakeFirstOrThrow();
  return row.id;
}

async function connect(roomToken: string, participantToken: string) {
  await ctx.services.database.db
    .insertInto('participants')
    .values({ token: participantToken, room_id: await roomId(roomToken), role: 'guest', display_name: 'Pat', node_id: 'test-node', joined_at: clock.now(), left_at: null })
    .execute();
}

describe('cleanup.run', () => {
  it('deletes expired rooms only, and keeps permanent rooms, occupied rooms and feedback', async () => {
    clock.set(START);
    // Scheduled end 14:30 on the 10th: expires 30 days after that.
    const expiring = await createRoom(ctx, tenant.instanceToken, { name: 'expiring', scheduled_at: '2026-03-10T14:00:00Z', meeting_duration: 30 });
    const permanent = await createRoom(ctx, tenant.instanceToken, { name: 'permanent', scheduled_at: '2026-03-10T14:00:00Z', permanent: true });
    const occupied = await createRoom(ctx, tenant.instanceToken, { name: 'occupied', scheduled_at: '2026-03-10T14:00:00Z' });
    const later = await createRoom(ctx, tenant.instanceToken, { name: 'later', scheduled_at: '2026-04-20T09:00:00Z' });
    // Scheduled in the past: its creation (now) is the later of the two.
    const past = await createRoom(ctx, tenant.instanceToken, { name: 'past', scheduled_at: '2025-01-01T09:00:00Z' });
    await connect(occupied.token, 'participant-in-call');
    await ctx.services.feedback.record({
      tenantId: tenant.id,
      timezone: 'UTC',
      roomToken: expiring.token,
      participantToken: 'feedback-giver',
      rating: 'good',
      comment: 'Great',
    });

    // Created at START with a past schedule: its creation is its last activity.
    clock.set(new Date(START.getTime() + 30 * DAY - 60_000));
    expect(await ctx.services.cleanup.run()).toEqual([]);
    clock.advance(2 * 60_000);
    expect(await ctx.services.cleanup.run()).toEqual([past.token]);
    expect(await exists(expiring.token)).toBe(true);

    clock.set(new Date(Date.parse('2026-03-10T14:30:00Z') + 30 * DAY - 60_000));
    expect(await ctx.services.cleanup.run()).toEqual([]);
    clock.advance(2 * 60_000);
    expect(await ctx.services.cleanup.run()).toEqual([expiring.token]);
    expect(await exists(expiring.token)).toBe(false);
    expect(await exists(past.token)).toBe(false);
    // The occupied room is as old, but someone is in the call.
    for (const kept of [permanent, occupied, later]) expect(await exists(kept.token), kept.name as string).toBe(true);

    await ctx.services.database.db.updateTable('participants').set({ left_at: clock.now() }).where('token', '=', 'participant-in-call').execute();
    expect(await ctx.services.cleanup.run()).toEqual([occupied.token]);

    clock.set(new Date(Date.parse('2026-04-20T09:30:00Z') + 30 * DAY + 60_000));
    expect(await ctx.services.cleanup.run()).toEqual([later.token]);
    expect(await exists(permanent.token)).toBe(true);

    const feedback = await ctx.request({ method: 'GET', url: '/api/room_feedbacks', token: tenant.instanceToken });
    expect(feedback.json().room_feedbacks).toEqual([
      { room_token: expiring.token, rating: 'good', feedback: 'Great', created_at: START.toISOString() },
    ]);
    const list = await ctx.request({ method: 'GET', url: '/api/rooms', token: tenant.instanceToken });
    expect(list.headers['total-count']).toBe('1');
    expect(list.json().rooms.map((r: { token: string }) => r.token)).toEqual([permanent.token]);
  });

  it('a closed room expires like any other', async () => {
    const fresh = await ctx.tenant();
    const room = await createRoom(ctx, fresh.instanceToken, { scheduled_at: clock.now().toISOString() });
    await ctx.request({ method: 'POST', url: `/api/rooms/${room.token}/close`, token: fresh.instanceToken });
    clock.advance(31 * DAY);
    expect(await ctx.services.cleanup.run()).toContain(room.token);
  });

  it('rescheduling a room later pushes its cleanup later', async () => {
    const fresh = await ctx.tenant();
    const now = clock.now();
    const room = await createRoom(ctx, fresh.instanceToken, { scheduled_at: now.toISOString(), meeting_duration: 60 });
    const moved = new Date(now.getTime() + 10 * DAY).toISOString();
    const res = await ctx.request({
      method: 'PUT',
      url: `/api/rooms/${room.token}`,
      token: fresh.instanceToken,
      payload: { name: 'moved', meeting_duration: 60, scheduled_at: moved },
    });
    expect(res.statusCode).toBe(200);
    clock.advance(31 * DAY);
    expect(await ctx.services.cleanup.run()).not.toContain(room.token);
    clock.advance(10 * DAY);
    expect(await ctx.services.cleanup.run()).toContain(room.token);
  });

  it('deletes more rooms than one batch holds', async () => {
    const fresh = await ctx.tenant();
    const tenantRow = { tenant_id: fresh.id };
    const base = clock.now();
    const rows = Array.from({ length: 1203 }, (_, i) => ({
      ...tenantRow,
      organization_id: null,
      doctor_id: null,
      token: `bulk-${i}-${'x'.repeat(16)}`,
      access_token: `bulk-access-${i}-${'y'.repeat(32)}`,
      guest_token: `bulk-guest-${i}-${'z'.repeat(32)}`,
      name: `bulk ${i}`,
      status: 'active' as const,
      host_display_name: null,
      guest_display_name: null,
      enable_chat: true,
      enable_screenshare: true,
      enable_invites: true,
      enable_audio_indicator: true,
      scheduled_at: base,
      meeting_duration: 30,
      enable_waiting_room: false,
      enable_recording: false,
      return_url: 'https://example.com/left',
      host_return_url: null,
      permanent: false,
      created_at: base,
      updated_at: base,
      started_at: null,
      ended_at: null,
      closed_at: null,
      emptied_at: null,
      cleanup_base_at: base,
    }));
    await ctx.services.database.db.insertInto('rooms').values(rows).execute();
    clock.advance(31 * DAY);
    const deleted = await ctx.services.cleanup.run();
    expect(deleted.filter((t) => t.startsWith('bulk-'))).toHaveLength(1203);
    const list = await ctx.request({ method: 'GET', url: '/api/rooms', token: fresh.instanceToken });
    expect(list.headers['total-count']).toBe('0');
  });
});

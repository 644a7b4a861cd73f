// GET /api/rooms/{token}/sessions (docs/design.md, "Participant sessions"; docs/api.md): who was in the
// call, when and for how long, with the scope rules of GET room; kept after
// the room is deleted (by the API or the automatic cleanup), as feedback is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, manualClock, type TestContext, type TestTenant } from '../helpers/app.js';
import { createRoom, expectError, expectUnauthorized } from '../helpers/api.js';

const clock = manualClock();
let ctx: TestContext;
let tenant: TestTenant;
beforeAll(async () => {
  ctx = await createTestContext({ clock, env: { CLEANUP_AFTER_DAYS: '1' } });
  tenant = await ctx.tenant();
});
afterAll(() => ctx.close());

const sessions = (token: string, roomToken: string) => ctx.request({ method: 'GET', url: `/api/rooms/${roomToken}/sessions`, token });

describe('GET /api/rooms/{token}/sessions', () => {
  it('lists each join oldest first, with its duration; someone still in the call counts until now', async () => {
    const room = await createRoom(ctx, tenant.instanceToken);
    expect((await sessions(tenant.instanceToken, room.token)).json()).toEqual({ sessions: [] });
    const joinedAt = clock.now();
    const host = await ctx.services.participation.join({ joinToken: room.access_token, displayName: 'Dr. Ada' });
    clock.advance(5_000);
    const guest = await ctx.services.participation.join({ joinToken: room.guest_token, displayName: 'Pat' });
    clock.advance(60_000);
    await ctx.services.participation.leave(guest.participant.token);
    clock.advance(30_000);
    const res = await sessions(tenant.instanceToken, room.token);
    expect(res.statusCode).toBe(200);
    expect(res.json().sessions).toEqual([
      { participant_token: host.participant.token, role: 'host', display_name: 'Dr. Ada', joined_at: joinedAt.toISOString(), left_at: null, duration_seconds: 95, network: null },
      {
        participant_token: guest.participant.token,
        role: 'guest',
        display_name: 'Pat',
        joined_at: new Date(joinedAt.getTime() + 5_000).toISOString(),
        left_at: new Date(joinedAt.getTime() + 65_000).toISOString(),
        duration_seconds: 60,
        network: null,
      },
    ]);
    await ctx.services.participation.leave(host.participant.token);
  });

  it('follows the scope rules of GET room: another organization or tenant gets 404, no token 401', async () => {
    const orgA = await tenant.organization();
    const orgB = await tenant.organization();
    const room = await createRoom(ctx, orgA.token);
    await ctx.services.participation.join({ joinToken: room.guest_token, displayName: 'Pat' });
    expect((await sessions(orgA.token, room.token)).json().sessions).toHaveLength(1);
    expect((await sessions(tenant.instanceToken, room.token)).json().sessions).toHaveLength(1);
    expectError(await sessions(orgB.token, room.token), 404);
    expectError(await sessions((await ctx.tenant()).instanceToken, room.token), 404);
    expectError(await sessions(tenant.instanceToken, 'x'.repeat(22)), 404);
    expectError(await sessions(tenant.instanceToken, 'bad token!'), 404);
    expectUnauthorized(await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}/sessions` }));
  });

  it('keeps the sessions after the room is deleted through the API, in the same scope', async () => {
    const org = await tenant.organization();
    const other = await tenant.organization();
    const room = await createRoom(ctx, org.token);
    const guest = await ctx.services.participation.join({ joinToken: room.guest_token, displayName: 'Pat' });
    await ctx.services.participation.reportNetwork(guest.participant.token, { rtt: 80, loss: 1, kbps: 900, relayed: false });
    const before = (await sessions(org.token, room.token)).json().sessions;
    await ctx.services.participation.leave(guest.participant.token);
    const left = (await sessions(org.token, room.token)).json().sessions;
    expect((await ctx.request({ method: 'DELETE', url: `/api/rooms/${room.token}`, token: org.token })).statusCode).toBe(204);
    expectError(await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}`, token: org.token }), 404);
    const after = (await sessions(org.token, room.token)).json().sessions;
    expect(after).toEqual(left);
    expect(after[0].network).toEqual({ rtt_ms: 80, loss_percent: 1, bitrate_kbps: 900, relayed: false, reports: 1 });
    expect(before[0].left_at).toBeNull();
    expect((await sessions(tenant.instanceToken, room.token)).json().sessions).toEqual(left);
    expectError(await sessions(other.token, room.token), 404);
  });

  it('keeps them after the automatic cleanup deleted the room, with whoever was marked connected as left', async () => {
    const room = await createRoom(ctx, tenant.instanceToken, { scheduled_at: new Date(clock.now().getTime() - 86_400_000 * 3).toISOString() });
    const guest = await ctx.services.participation.join({ joinToken: room.guest_token, displayName: 'Pat' });
    await ctx.services.participation.leave(guest.participant.token);
    clock.advance(86_400_000 * 2);
    expect(await ctx.services.cleanup.run()).toContain(room.token);
    const kept = (await sessions(tenant.instanceToken, room.token)).json().sessions;
    expect(kept).toEqual([expect.objectContaining({ participant_token: guest.participant.token, display_name: 'Pat', left_at: expect.any(String) })]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';

let ctx: TestContext;
let tenant: TestTenant;

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(() => ctx.close());

describe('POST /api/rooms', () => {
  it('creates an active room with defaults, join URLs and Location', async () => {
    const res = await ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload: roomBody() });
    expect(res.statusCode).toBe(201);
    const room = res.json();
    expect(res.headers.location).toBe(`http://parley.test/api/rooms/${room.token}`);
    expect(room).toMatchObject({
      name: 'Consultation',
      status: 'active',
      enable_chat: true,
      enable_screenshare: true,
      enable_invites: true,
      enable_audio_indicator: true,
      permanent: false,
      expected_guest_count: 1,
      meeting_duration: 30,
      scheduled_at: '2026-03-10T14:00:00.000Z',
      host_display_name: null,
      guest_display_name: null,
      current_participants: [],
    });
    expect(room.host_join_url).toBe(`http://parley.test/join/${room.access_token}`);
    expect(room.guest_join_url).toBe(`http://parley.test/join/${room.guest_token}`);
    expect(room.access_token).not.toBe(room.guest_token);
    expect(room).not.toHaveProperty('started_at');
    expect(room).not.toHaveProperty('additional_access_tokens');

    const fetched = await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}`, token: tenant.instanceToken });
    expect(fetched.statusCode).toBe(200);
    expect(fetched.json()).toEqual(room);
  });
});

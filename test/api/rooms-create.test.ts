// POST /api/rooms: the created Room, its defaults and Location; GET /api/rooms/{token} returns the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, manualClock, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';
import { createRoom, expectUnauthorized } from '../helpers/api.js';

const clock = manualClock(new Date('2026-03-10T12:00:00Z'));
let ctx: TestContext;
let tenant: TestTenant;

beforeAll(async () => {
  ctx = await createTestContext({ clock });
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
      enable_waiting_room: false,
      permanent: false,
      expected_guest_count: 1,
      meeting_duration: 30,
      scheduled_at: '2026-03-10T14:00:00.000Z',
      host_display_name: null,
      guest_display_name: null,
      current_participants: [],
      waiting_participants: [],
      return_url: 'http://parley.test/left',
      created_at: '2026-03-10T12:00:00.000Z',
      updated_at: '2026-03-10T12:00:00.000Z',
    });
    expect(room.host_join_url).toBe(`http://parley.test/join/${room.access_token}`);
    expect(room.guest_join_url).toBe(`http://parley.test/join/${room.guest_token}`);
    expect(new Set([room.token, room.access_token, room.guest_token]).size).toBe(3);
    for (const field of ['started_at', 'ended_at', 'closed_at', 'host_return_url', 'additional_access_tokens', 'doctor_id', 'locale']) {
      expect(room).not.toHaveProperty(field);
    }

    const fetched = await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}`, token: tenant.instanceToken });
    expect(fetched.statusCode).toBe(200);
    expect(fetched.json()).toEqual(room);
  });

  it('stores every field it is given', async () => {
    const payload = roomBody({
      name: 'Follow-up',
      meeting_duration: 45,
      scheduled_at: '2026-04-01T09:30:00Z',
      return_url: 'https://clinic.example/after',
      host_return_url: 'https://clinic.example/doctor',
      host_display_name: 'Dr. Ada',
      guest_display_name: 'Grace',
      enable_chat: false,
      enable_screenshare: false,
      enable_invites: false,
      enable_audio_indicator: false,
      enable_waiting_room: true,
      locale: 'ar',
      permanent: false,
      additional_guest_count: 0,
    });
    const room = await createRoom(ctx, tenant.instanceToken, payload);
    expect(room).toMatchObject({
      name: 'Follow-up',
      meeting_duration: 45,
      scheduled_at: '2026-04-01T09:30:00.000Z',
      return_url: 'https://clinic.example/after',
      host_return_url: 'https://clinic.example/doctor',
      host_display_name: 'Dr. Ada',
      guest_display_name: 'Grace',
      enable_chat: false,
      enable_screenshare: false,
      enable_invites: false,
      enable_audio_indicator: false,
      enable_waiting_room: true,
      locale: 'ar',
      permanent: false,
      expected_guest_count: 1,
    });
  });

  it('returns scheduled_at in UTC whatever offset it was given in', async () => {
    const room = await createRoom(ctx, tenant.instanceToken, { scheduled_at: '2026-03-10T16:00:00+02:00' });
    expect(room.scheduled_at).toBe('2026-03-10T14:00:00.000Z');
    const fractional = await createRoom(ctx, tenant.instanceToken, { scheduled_at: '2026-03-10T09:15:30.250-05:00' });
    expect(fractional.scheduled_at).toBe('2026-03-10T14:15:30.250Z');
  });

  it('trims the name and display names; blank display names become null', async () => {
    const room = await createRoom(ctx, tenant.instanceToken, { name: '  Morning call  ', host_display_name: '  Dr. B ', guest_display_name: '   ' });
    expect(room.name).toBe('Morning call');
    expect(room.host_display_name).toBe('Dr. B');
    expect(room.guest_display_name).toBeNull();
  });

  it('takes the tenant default return URL when return_url is omitted or null', async () => {
    const custom = await ctx.tenant({ default_return_url: 'https://tenant.example/bye' });
    const omitted = await createRoom(ctx, custom.instanceToken);
    expect(omitted.return_url).toBe('https://tenant.example/bye');
    const nulled = await createRoom(ctx, custom.instanceToken, { return_url: null, host_return_url: null });
    expect(nulled.return_url).toBe('https://tenant.example/bye');
    expect(nulled).not.toHaveProperty('host_return_url');
  });

  it('keeps names in any script exactly (emoji, right-to-left, combining marks)', async () => {
    for (const name of ['Консультация 🩺', 'استشارة طبية', 'e\u0301te\u0301 👩🏽‍⚕️', '日本語の相談']) {
      const room = await createRoom(ctx, tenant.instanceToken, { name, guest_display_name: name });
      expect(room.name).toBe(name);
      const fetched = await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}`, token: tenant.instanceToken });
      expect(fetched.json()).toMatchObject({ name, guest_display_name: name });
    }
  });

  it('ignores unknown fields, including ones named like read-only fields', async () => {
    const room = await createRoom(ctx, tenant.instanceToken, {
      colour: 'blue',
      token: 'my-own-token-123456',
      status: 'closed',
      access_token: 'x'.repeat(43),
      created_at: '2000-01-01T00:00:00Z',
      nested: { deep: [1, 2, 3] },
    });
    expect(room.status).toBe('active');
    expect(room.token).not.toBe('my-own-token-123456');
    expect(room.access_token).not.toBe('x'.repeat(43));
    expect(room.created_at).toBe('2026-03-10T12:00:00.000Z');
    expect(room).not.toHaveProperty('colour');
  });

  it('issues unguessable, distinct tokens for every room', async () => {
    const rooms = await Promise.all(Array.from({ length: 5 }, () => createRoom(ctx, tenant.instanceToken)));
    const tokens = rooms.flatMap((r) => [r.token, r.access_token, r.guest_token]);
    expect(new Set(tokens).size).toBe(tokens.length);
    for (const room of rooms) {
      expect(room.token).toMatch(/^[A-Za-z0-9_-]{22,}$/);
      expect(room.access_token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
      expect(room.guest_token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    }
  });

  it('needs a token: 401 with WWW-Authenticate, and nothing is created', async () => {
    const other = await ctx.tenant();
    const res = await ctx.request({ method: 'POST', url: '/api/rooms', payload: roomBody() });
    expectUnauthorized(res);
    const list = await ctx.request({ method: 'GET', url: '/api/rooms', token: other.instanceToken });
    expect(list.headers['total-count']).toBe('0');
  });
});

describe('GET /api/rooms/{token}', () => {
  it('404s with {error} for an unknown token', async () => {
    const res = await ctx.request({ method: 'GET', url: '/api/rooms/unknownroomtoken12345', token: tenant.instanceToken });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Room not found' });
  });

  it('does not accept the access or guest token in place of the room token', async () => {
    const room = await createRoom(ctx, tenant.instanceToken);
    for (const token of [room.access_token, room.guest_token]) {
      const res = await ctx.request({ method: 'GET', url: `/api/rooms/${token}`, token: tenant.instanceToken });
      expect(res.statusCode).toBe(404);
    }
  });
});

// PUT /api/rooms/{token} (docs/design.md#rooms): the body replaces the room's
// settings; identity, tokens and history stay; additional guests grow and shrink.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, manualClock, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';
import { createRoom, expectError, expectFieldErrors } from '../helpers/api.js';

const clock = manualClock(new Date('2026-03-10T12:00:00Z'));
let ctx: TestContext;
let tenant: TestTenant;

beforeAll(async () => {
  ctx = await createTestContext({ clock });
  tenant = await ctx.tenant({ default_return_url: 'https://tenant.example/left' });
});
afterAll(() => ctx.close());

const put = (token: string, payload: Record<string, unknown>, apiToken = tenant.instanceToken) =>
  ctx.request({ method: 'PUT', url: `/api/rooms/${token}`, token: apiToken, payload });
const get = (token: string, apiToken = tenant.instanceToken) => ctx.request({ method: 'GET', url: `/api/rooms/${token}`, token: apiToken });

describe('PUT /api/rooms/{token}', () => {
  it('changes what is sent and keeps identity, tokens, created_at; updated_at moves', async () => {
    const room = await createRoom(ctx, tenant.instanceToken);
    clock.advance(60_000);
    const res = await put(room.token, roomBody({ name: 'Renamed', meeting_duration: 90, scheduled_at: '2026-05-01T08:00:00+02:00', enable_chat: false }));
    expect(res.statusCode).toBe(200);
    const updated = res.json();
    expect(updated).toMatchObject({
      name: 'Renamed',
      meeting_duration: 90,
      scheduled_at: '2026-05-01T06:00:00.000Z',
      enable_chat: false,
      token: room.token,
      access_token: room.access_token,
      guest_token: room.guest_token,
      host_join_url: room.host_join_url,
      guest_join_url: room.guest_join_url,
      status: 'active',
      created_at: room.created_at,
      updated_at: '2026-03-10T12:01:00.000Z',
    });
    expect((await get(room.token)).json()).toEqual(updated);
  });

  it('replaces: optional settings left out go back to their defaults', async () => {
    const room = await createRoom(ctx, tenant.instanceToken, {
      return_url: 'https://a.example/r',
      host_return_url: 'https://a.example/h',
      host_display_name: 'Dr. A',
      guest_display_name: 'Pat',
      enable_chat: false,
      enable_screenshare: false,
      enable_invites: false,
      enable_audio_indicator: false,
      enable_waiting_room: true,
      locale: 'fr',
    });
    expect(room).toMatchObject({ enable_waiting_room: true, locale: 'fr' });
    const res = await put(room.token, roomBody());
    expect(res.statusCode).toBe(200);
    const updated = res.json();
    expect(updated).toMatchObject({
      return_url: 'https://tenant.example/left',
      host_display_name: null,
      guest_display_name: null,
      enable_chat: true,
      enable_screenshare: true,
      enable_invites: true,
      enable_audio_indicator: true,
      enable_waiting_room: false,
      permanent: false,
    });
    expect(updated).not.toHaveProperty('host_return_url');
    expect(updated).not.toHaveProperty('locale');
  });

  it('needs the same required fields as create', async () => {
    const room = await createRoom(ctx, tenant.instanceToken);
    expectFieldErrors(await put(room.token, { name: 'Only a name' }), { meeting_duration: 'blank', scheduled_at: 'blank' });
    expect((await get(room.token)).json().name).toBe('Consultation');
  });

  it('404s for an unknown token, with the same body as GET', async () => {
    const res = await put('nosuchroomtoken123456', roomBody());
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Room not found' });
  });

  it('422 for permanent without the feature, and the room is unchanged', async () => {
    const room = await createRoom(ctx, tenant.instanceToken);
    expectError(await put(room.token, roomBody({ name: 'X', permanent: true })), 422);
    expect((await get(room.token)).json()).toMatchObject({ name: 'Consultation', permanent: false });
  });

  it('can update a closed room, which stays closed', async () => {
    const room = await createRoom(ctx, tenant.instanceToken);
    await ctx.request({ method: 'POST', url: `/api/rooms/${room.token}/close`, token: tenant.instanceToken });
    const res = await put(room.token, roomBody({ name: 'After close' }));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'After close', status: 'closed' });
  });
});

describe('additional guests on update', () => {
  let features: TestTenant;
  beforeAll(async () => {
    features = await ctx.tenant();
    await features.setFeature('additional_participants', true);
  });

  it('grows and shrinks, keeping the links handed out first; left out = unchanged', async () => {
    const room = await createRoom(ctx, features.instanceToken, { additional_guest_count: 2 });
    const first = (room.additional_access_tokens as { token: string }[]).map((t) => t.token);
    expect(first).toHaveLength(2);
    expect(room.expected_guest_count).toBe(3);

    clock.advance(1000); // guest tokens are ordered by when they were added
    const grown = (await put(room.token, roomBody({ additional_guest_count: 5 }), features.instanceToken)).json();
    const grownTokens = grown.additional_access_tokens.map((t: { token: string }) => t.token);
    expect(grownTokens).toHaveLength(5);
    expect(grownTokens.slice(0, 2)).toEqual(first);
    expect(grown.expected_guest_count).toBe(6);

    clock.advance(1000);
    const kept = (await put(room.token, roomBody({ name: 'Same guests' }), features.instanceToken)).json();
    expect(kept.additional_access_tokens.map((t: { token: string }) => t.token)).toEqual(grownTokens);

    clock.advance(1000);
    const shrunk = (await put(room.token, roomBody({ additional_guest_count: 1 }), features.instanceToken)).json();
    expect(shrunk.additional_access_tokens.map((t: { token: string }) => t.token)).toEqual([first[0]]);
    expect(shrunk.expected_guest_count).toBe(2);

    clock.advance(1000);
    const none = (await put(room.token, roomBody({ additional_guest_count: 0 }), features.instanceToken)).json();
    expect(none.additional_access_tokens).toEqual([]);
    expect(none.expected_guest_count).toBe(1);
  });

  it('growing without the feature is 422; shrinking to 0 never needs it', async () => {
    const room = await createRoom(ctx, features.instanceToken, { additional_guest_count: 2 });
    await features.setFeature('additional_participants', false);
    try {
      expectError(await put(room.token, roomBody({ additional_guest_count: 3 }), features.instanceToken), 422);
      const res = await put(room.token, roomBody({ additional_guest_count: 0 }), features.instanceToken);
      expect(res.statusCode).toBe(200);
      expect(res.json().expected_guest_count).toBe(1);
    } finally {
      await features.setFeature('additional_participants', true);
    }
  });
});

describe('doctor_id on update', () => {
  it('assigns a doctor, keeps it when left out, and null takes it off but keeps the organization', async () => {
    const org = await tenant.organization();
    const doctor = await org.doctor();
    const room = await createRoom(ctx, tenant.instanceToken);
    expect(room).not.toHaveProperty('doctor_id');
    // Not yet visible to the organization: an instance room belongs to no organization.
    expect((await get(room.token, org.token)).statusCode).toBe(404);

    const assigned = await put(room.token, roomBody({ doctor_id: doctor.id }));
    expect(assigned.statusCode).toBe(200);
    expect(assigned.json().doctor_id).toBe(doctor.id);
    expect((await get(room.token, org.token)).statusCode).toBe(200);

    const kept = await put(room.token, roomBody({ name: 'Still the doctor' }));
    expect(kept.json().doctor_id).toBe(doctor.id);

    const cleared = await put(room.token, roomBody({ doctor_id: null }));
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json()).not.toHaveProperty('doctor_id');
    expect((await get(room.token, org.token)).statusCode).toBe(200);
  });

  it('moves a room to another organization when given that organization’s doctor', async () => {
    const a = await tenant.organization();
    const b = await tenant.organization();
    const doctorB = await b.doctor();
    const room = await createRoom(ctx, a.token);
    const res = await put(room.token, roomBody({ doctor_id: doctorB.id }));
    expect(res.statusCode).toBe(200);
    expect((await get(room.token, a.token)).statusCode).toBe(404);
    expect((await get(room.token, b.token)).statusCode).toBe(200);
    const listA = await ctx.request({ method: 'GET', url: '/api/rooms', token: a.token });
    const listB = await ctx.request({ method: 'GET', url: '/api/rooms', token: b.token });
    expect(listA.headers['total-count']).toBe('0');
    expect(listB.headers['total-count']).toBe('1');
  });
});

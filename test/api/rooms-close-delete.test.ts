// Close (docs/design.md#room-lifecycle: POST, PUT or PATCH /api/rooms/{token}/close, 204, idempotent,
// the data stays) and DELETE /api/rooms/{token} (204, then gone).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, manualClock, type TestContext, type TestTenant } from '../helpers/app.js';
import { createRoom } from '../helpers/api.js';

const clock = manualClock(new Date('2026-03-10T12:00:00Z'));
let ctx: TestContext;
let tenant: TestTenant;

beforeAll(async () => {
  ctx = await createTestContext({ clock });
  tenant = await ctx.tenant();
});
afterAll(() => ctx.close());

const get = (token: string) => ctx.request({ method: 'GET', url: `/api/rooms/${token}`, token: tenant.instanceToken });

describe('close', () => {
  it.each(['POST', 'PUT', 'PATCH'] as const)('%s .../close answers 204 with no body and closes the room', async (method) => {
    const room = await createRoom(ctx, tenant.instanceToken);
    clock.advance(5 * 60_000);
    const res = await ctx.request({ method, url: `/api/rooms/${room.token}/close`, token: tenant.instanceToken });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    const closed = (await get(room.token)).json();
    expect(closed.status).toBe('closed');
    expect(closed.closed_at).toBe(clock.now().toISOString());
    expect(closed.updated_at).toBe(clock.now().toISOString());
    expect(closed).toMatchObject({ name: room.name, access_token: room.access_token, guest_token: room.guest_token });
  });

  it('closing a closed room is 204 again and keeps the first closed_at', async () => {
    const room = await createRoom(ctx, tenant.instanceToken);
    await ctx.request({ method: 'POST', url: `/api/rooms/${room.token}/close`, token: tenant.instanceToken });
    const closedAt = (await get(room.token)).json().closed_at;
    clock.advance(60_000);
    const again = await ctx.request({ method: 'POST', url: `/api/rooms/${room.token}/close`, token: tenant.instanceToken });
    expect(again.statusCode).toBe(204);
    expect((await get(room.token)).json()).toMatchObject({ status: 'closed', closed_at: closedAt });
  });

  it('accepts clients that send a JSON content type with an empty body, or a body', async () => {
    const room = await createRoom(ctx, tenant.instanceToken);
    const empty = await ctx.request({
      method: 'POST',
      url: `/api/rooms/${room.token}/close`,
      token: tenant.instanceToken,
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(empty.statusCode).toBe(204);
    const withBody = await ctx.request({ method: 'POST', url: `/api/rooms/${room.token}/close`, token: tenant.instanceToken, payload: {} });
    expect(withBody.statusCode).toBe(204);
  });

  it('closed rooms still show in the list', async () => {
    const fresh = await ctx.tenant();
    const room = await createRoom(ctx, fresh.instanceToken);
    await ctx.request({ method: 'POST', url: `/api/rooms/${room.token}/close`, token: fresh.instanceToken });
    const list = await ctx.request({ method: 'GET', url: '/api/rooms', token: fresh.instanceToken });
    expect(list.json().rooms.map((r: { token: string; status: string }) => [r.token, r.status])).toEqual([[room.token, 'closed']]);
  });

  it('404s for an unknown room and for GET on .../close', async () => {
    const unknown = await ctx.request({ method: 'POST', url: '/api/rooms/unknownroomtoken1234/close', token: tenant.instanceToken });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'Room not found' });
    const room = await createRoom(ctx, tenant.instanceToken);
    const viaGet = await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}/close`, token: tenant.instanceToken });
    expect(viaGet.statusCode).toBe(404);
    expect((await get(room.token)).json().status).toBe('active');
  });
});

describe('DELETE /api/rooms/{token}', () => {
  it('answers 204 with no body; the room is gone for GET, PUT, close, DELETE and the list', async () => {
    const fresh = await ctx.tenant();
    const keep = await createRoom(ctx, fresh.instanceToken, { name: 'Keep' });
    const room = await createRoom(ctx, fresh.instanceToken, { name: 'Remove' });
    const res = await ctx.request({ method: 'DELETE', url: `/api/rooms/${room.token}`, token: fresh.instanceToken });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');

    for (const [method, url] of [
      ['GET', `/api/rooms/${room.token}`],
      ['PUT', `/api/rooms/${room.token}`],
      ['POST', `/api/rooms/${room.token}/close`],
      ['DELETE', `/api/rooms/${room.token}`],
    ] as const) {
      const after = await ctx.request({
        method,
        url,
        token: fresh.instanceToken,
        ...(method === 'PUT' ? { payload: { name: 'x', meeting_duration: 5, scheduled_at: '2026-03-10T14:00:00Z' } } : {}),
      });
      expect(after.statusCode, `${method} ${url}`).toBe(404);
    }
    const list = await ctx.request({ method: 'GET', url: '/api/rooms', token: fresh.instanceToken });
    expect(list.headers['total-count']).toBe('1');
    expect(list.json().rooms.map((r: { token: string }) => r.token)).toEqual([keep.token]);
  });

  it('deletes a closed room too', async () => {
    const room = await createRoom(ctx, tenant.instanceToken);
    await ctx.request({ method: 'POST', url: `/api/rooms/${room.token}/close`, token: tenant.instanceToken });
    expect((await ctx.request({ method: 'DELETE', url: `/api/rooms/${room.token}`, token: tenant.instanceToken })).statusCode).toBe(204);
    expect((await get(room.token)).statusCode).toBe(404);
  });

  it('takes a JSON content type without a body', async () => {
    const room = await createRoom(ctx, tenant.instanceToken);
    const res = await ctx.request({
      method: 'DELETE',
      url: `/api/rooms/${room.token}`,
      token: tenant.instanceToken,
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(res.statusCode).toBe(204);
  });
});

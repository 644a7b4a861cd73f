// Feature toggles (docs/design.md#rooms): permanent_rooms, additional_participants and recording,
// off by default, set per tenant and overridden per organization (null clears
// the override). Off = 422 {error}; additional guests get {token, join_url}.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';
import { createRoom, expectError } from '../helpers/api.js';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const post = (token: string, overrides: Record<string, unknown>) =>
  ctx.request({ method: 'POST', url: '/api/rooms', token, payload: roomBody(overrides) });

describe.each([
  ['permanent_rooms', { permanent: true }, (room: Record<string, unknown>) => expect(room.permanent).toBe(true)],
  ['additional_participants', { additional_guest_count: 2 }, (room: Record<string, unknown>) => expect(room.expected_guest_count).toBe(3)],
  ['recording', { enable_recording: true }, (room: Record<string, unknown>) => expect(room.enable_recording).toBe(true)],
] as const)('%s', (feature, body, check) => {
  let tenant: TestTenant;
  beforeAll(async () => {
    tenant = await ctx.tenant();
  });

  it('is off by default: 422 {error} naming the feature, nothing created', async () => {
    const message = expectError(await post(tenant.instanceToken, body), 422);
    expect(message).toContain(feature);
    const list = await ctx.request({ method: 'GET', url: '/api/rooms', token: tenant.instanceToken });
    expect(list.headers['total-count']).toBe('0');
  });

  it('on for the tenant: Instance and Organization tokens may use it; off again: 422', async () => {
    const org = await tenant.organization();
    await tenant.setFeature(feature, true);
    for (const token of [tenant.instanceToken, org.token]) {
      const res = await post(token, body);
      expect(res.statusCode, res.body).toBe(201);
      check(res.json());
    }
    await tenant.setFeature(feature, false);
    expectError(await post(tenant.instanceToken, body), 422);
    expectError(await post(org.token, body), 422);
  });

  it('an organization override wins over the tenant, both ways; null clears it', async () => {
    const on = await tenant.organization();
    const off = await tenant.organization();
    const plain = await tenant.organization();
    await tenant.setFeature(feature, false);
    await ctx.services.tenants.setOrganizationFeature(on.id, feature, true);
    expect((await post(on.token, body)).statusCode).toBe(201);
    expectError(await post(plain.token, body), 422);
    expectError(await post(tenant.instanceToken, body), 422);

    await tenant.setFeature(feature, true);
    await ctx.services.tenants.setOrganizationFeature(off.id, feature, false);
    expectError(await post(off.token, body), 422);
    expect((await post(plain.token, body)).statusCode).toBe(201);
    expect((await post(tenant.instanceToken, body)).statusCode).toBe(201);

    await ctx.services.tenants.setOrganizationFeature(off.id, feature, null);
    expect((await post(off.token, body)).statusCode).toBe(201);
    await ctx.services.tenants.setOrganizationFeature(on.id, feature, null);
    await tenant.setFeature(feature, false);
    expectError(await post(on.token, body), 422);
  });

  it('applies to updates as well', async () => {
    const fresh = await ctx.tenant();
    const room = await createRoom(ctx, fresh.instanceToken);
    const put = () => ctx.request({ method: 'PUT', url: `/api/rooms/${room.token}`, token: fresh.instanceToken, payload: roomBody(body) });
    expectError(await put(), 422);
    await fresh.setFeature(feature, true);
    const res = await put();
    expect(res.statusCode).toBe(200);
    check(res.json());
  });

  it('the off values need no feature', async () => {
    const fresh = await ctx.tenant();
    const res = await post(fresh.instanceToken, { permanent: false, additional_guest_count: 0 });
    expect(res.statusCode).toBe(201);
  });

  it("a tenant's switch does not reach another tenant", async () => {
    const a = await ctx.tenant();
    const b = await ctx.tenant();
    await a.setFeature(feature, true);
    expect((await post(a.instanceToken, body)).statusCode).toBe(201);
    expectError(await post(b.instanceToken, body), 422);
  });
});

describe('additional_access_tokens', () => {
  it('one {token, join_url} per additional guest, distinct from the room tokens', async () => {
    const tenant = await ctx.tenant();
    await tenant.setFeature('additional_participants', true);
    const room = await createRoom(ctx, tenant.instanceToken, { additional_guest_count: 3 });
    const extra = room.additional_access_tokens as { token: string; join_url: string }[];
    expect(extra).toHaveLength(3);
    expect(room.expected_guest_count).toBe(4);
    for (const entry of extra) {
      expect(Object.keys(entry).sort()).toEqual(['join_url', 'token']);
      expect(entry.join_url).toBe(`http://parley.test/join/${entry.token}`);
      expect(entry.token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    }
    const all = [room.token, room.access_token, room.guest_token, ...extra.map((e) => e.token)];
    expect(new Set(all).size).toBe(all.length);

    const listed = (await ctx.request({ method: 'GET', url: '/api/rooms', token: tenant.instanceToken })).json().rooms[0];
    expect(listed.additional_access_tokens).toEqual(extra);
  });

  it('present (possibly empty) only while the feature is on for the caller', async () => {
    const tenant = await ctx.tenant();
    const plain = await createRoom(ctx, tenant.instanceToken);
    expect(plain).not.toHaveProperty('additional_access_tokens');
    await tenant.setFeature('additional_participants', true);
    const withFeature = await createRoom(ctx, tenant.instanceToken);
    expect(withFeature.additional_access_tokens).toEqual([]);
    expect(withFeature.expected_guest_count).toBe(1);
    const again = (await ctx.request({ method: 'GET', url: `/api/rooms/${plain.token}`, token: tenant.instanceToken })).json();
    expect(again.additional_access_tokens).toEqual([]);
  });

  it("follow the calling token's own toggle, as it is at each request, on every room endpoint", async () => {
    // The toggle comes with the token's lookup (tenants.repo.ts): an organization's
    // override must count for its token only, and a switch must count at once.
    const tenant = await ctx.tenant();
    const org = await tenant.organization();
    await tenant.setFeature('additional_participants', true);
    const room = await createRoom(ctx, org.token, { additional_guest_count: 1 });
    const shown = async (token: string) => {
      const answers = [
        await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}`, token }),
        await ctx.request({ method: 'PUT', url: `/api/rooms/${room.token}`, token, payload: roomBody({ name: 'Renamed' }) }),
        await ctx.request({ method: 'GET', url: '/api/rooms', token }),
      ];
      return answers.map((answer) => {
        const body = answer.json();
        return 'additional_access_tokens' in (body.rooms?.[0] ?? body);
      });
    };
    expect(await shown(org.token)).toEqual([true, true, true]);
    await ctx.services.tenants.setOrganizationFeature(org.id, 'additional_participants', false);
    expect(await shown(org.token)).toEqual([false, false, false]);
    expect(await shown(tenant.instanceToken)).toEqual([true, true, true]);
    await tenant.setFeature('additional_participants', false);
    expect(await shown(tenant.instanceToken)).toEqual([false, false, false]);
  });
});

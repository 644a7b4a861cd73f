// Tokens and scopes (docs/design.md#tenants-tokens-and-authentication): Instance tokens see their tenant,
// Organization tokens their organization and its doctors' rooms; everything
// else is a 404 identical to an unknown room. 401 for bad tokens, 403 for
// Organization tokens on feedback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestContext, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';
import { createRoom, expectError, expectFieldErrors, expectUnauthorized, type Room } from '../helpers/api.js';

let ctx: TestContext;
let tenant: TestTenant;
let other: TestTenant;
let orgA: Awaited<ReturnType<TestTenant['organization']>>;
let orgB: Awaited<ReturnType<TestTenant['organization']>>;
let doctorA: { id: string };
let doctorB: { id: string };
let rooms: { instance: Room; orgA: Room; doctorA: Room; orgB: Room; otherTenant: Room };

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  other = await ctx.tenant();
  orgA = await tenant.organization();
  orgB = await tenant.organization();
  doctorA = await orgA.doctor();
  doctorB = await orgB.doctor();
  rooms = {
    instance: await createRoom(ctx, tenant.instanceToken, { name: 'instance' }),
    orgA: await createRoom(ctx, orgA.token, { name: 'org A' }),
    doctorA: await createRoom(ctx, tenant.instanceToken, { name: 'doctor A', doctor_id: doctorA.id }),
    orgB: await createRoom(ctx, orgB.token, { name: 'org B' }),
    otherTenant: await createRoom(ctx, other.instanceToken, { name: 'other tenant' }),
  };
});
afterAll(() => ctx.close());

const names = async (token: string) =>
  (await ctx.request({ method: 'GET', url: '/api/rooms', token })).json().rooms.map((r: Room) => r.name).sort();

describe('what each token sees', () => {
  it('an Instance token lists every room of its tenant and no other', async () => {
    expect(await names(tenant.instanceToken)).toEqual(['doctor A', 'instance', 'org A', 'org B']);
    expect(await names(other.instanceToken)).toEqual(['other tenant']);
  });

  it("an Organization token lists its own rooms and its doctors' rooms", async () => {
    expect(await names(orgA.token)).toEqual(['doctor A', 'org A']);
    expect(await names(orgB.token)).toEqual(['org B']);
    const res = await ctx.request({ method: 'GET', url: '/api/rooms', token: orgA.token });
    expect(res.headers['total-count']).toBe('2');
  });

  it('an Organization token can read, update, close and delete its own rooms and its doctors’ rooms', async () => {
    const own = await createRoom(ctx, orgA.token);
    const doctors = await createRoom(ctx, tenant.instanceToken, { doctor_id: doctorA.id });
    for (const room of [own, doctors]) {
      expect((await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}`, token: orgA.token })).statusCode).toBe(200);
      expect((await ctx.request({ method: 'PUT', url: `/api/rooms/${room.token}`, token: orgA.token, payload: roomBody({ name: 'n' }) })).statusCode).toBe(200);
      expect((await ctx.request({ method: 'POST', url: `/api/rooms/${room.token}/close`, token: orgA.token })).statusCode).toBe(204);
      expect((await ctx.request({ method: 'DELETE', url: `/api/rooms/${room.token}`, token: orgA.token })).statusCode).toBe(204);
    }
  });

  it('an Instance token reaches organization rooms too', async () => {
    const res = await ctx.request({ method: 'GET', url: `/api/rooms/${rooms.orgB.token}`, token: tenant.instanceToken });
    expect(res.statusCode).toBe(200);
  });
});

describe('out of scope is 404, identical to an unknown room', () => {
  const unknown = 'thisroomdoesnotexist1';
  const cases = () =>
    [
      ['org A token, org B room', orgA.token, rooms.orgB.token],
      ['org A token, instance room', orgA.token, rooms.instance.token],
      ['org B token, doctor A room', orgB.token, rooms.doctorA.token],
      ['other tenant instance token', other.instanceToken, rooms.instance.token],
      ['tenant token, other tenant room', tenant.instanceToken, rooms.otherTenant.token],
    ] as const;

  it.each(['GET', 'PUT', 'DELETE', 'CLOSE'] as const)('%s', async (verb) => {
    const send = (apiToken: string, roomToken: string) =>
      ctx.request({
        method: verb === 'CLOSE' ? 'POST' : verb,
        url: verb === 'CLOSE' ? `/api/rooms/${roomToken}/close` : `/api/rooms/${roomToken}`,
        token: apiToken,
        ...(verb === 'PUT' ? { payload: roomBody({ name: 'hijacked' }) } : {}),
      });
    for (const [label, apiToken, roomToken] of cases()) {
      const hidden = await send(apiToken, roomToken);
      const missing = await send(apiToken, unknown);
      expect(hidden.statusCode, label).toBe(404);
      expect(hidden.body, label).toBe(missing.body);
      expect(hidden.headers['content-type'], label).toBe(missing.headers['content-type']);
    }
    // Nothing was changed by the refused calls.
    for (const room of Object.values(rooms)) {
      const owner = room === rooms.otherTenant ? other.instanceToken : tenant.instanceToken;
      const res = await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}`, token: owner });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ name: room.name, status: 'active' });
    }
  });
});

describe('rooms created by an Organization token', () => {
  it('belong to its organization: invisible to other organizations, visible to the tenant', async () => {
    const room = await createRoom(ctx, orgB.token, { name: 'made by B' });
    expect((await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}`, token: orgA.token })).statusCode).toBe(404);
    expect((await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}`, token: tenant.instanceToken })).statusCode).toBe(200);
    await ctx.request({ method: 'DELETE', url: `/api/rooms/${room.token}`, token: orgB.token });
  });
});

describe('doctor_id', () => {
  it('an Organization token may name its own doctor', async () => {
    const room = await createRoom(ctx, orgA.token, { doctor_id: doctorA.id });
    expect(room.doctor_id).toBe(doctorA.id);
  });

  it('accepts the doctor id in upper case', async () => {
    const room = await createRoom(ctx, orgA.token, { doctor_id: doctorA.id.toUpperCase() });
    expect(room.doctor_id).toBe(doctorA.id);
  });

  it('an Instance token may name any doctor of its tenant; the room joins that organization', async () => {
    const room = await createRoom(ctx, tenant.instanceToken, { doctor_id: doctorB.id });
    expect((await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}`, token: orgB.token })).statusCode).toBe(200);
    expect((await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}`, token: orgA.token })).statusCode).toBe(404);
  });

  it('a doctor outside the scope is 400 on doctor_id, on create and on update', async () => {
    const otherOrg = await other.organization();
    const otherDoctor = await otherOrg.doctor();
    const own = await createRoom(ctx, orgA.token);
    const cases: [string, string][] = [
      [orgA.token, doctorB.id],
      [tenant.instanceToken, otherDoctor.id],
      [orgA.token, otherDoctor.id],
      [tenant.instanceToken, '00000000-0000-4000-8000-000000000000'],
    ];
    for (const [apiToken, doctorId] of cases) {
      expectFieldErrors(await ctx.request({ method: 'POST', url: '/api/rooms', token: apiToken, payload: roomBody({ doctor_id: doctorId }) }), {
        doctor_id: 'invalid',
      });
    }
    expectFieldErrors(
      await ctx.request({ method: 'PUT', url: `/api/rooms/${own.token}`, token: orgA.token, payload: roomBody({ doctor_id: doctorB.id }) }),
      { doctor_id: 'invalid' },
    );
    // The refused update did not move the room.
    expect((await ctx.request({ method: 'GET', url: `/api/rooms/${own.token}`, token: orgA.token })).statusCode).toBe(200);
  });
});

describe('401: missing or invalid token', () => {
  it.each([
    ['no header', undefined],
    ['empty', ''],
    ['Basic scheme', 'Basic dXNlcjpwYXNz'],
    ['Bearer without a token', 'Bearer'],
    ['Bearer and spaces', 'Bearer    '],
    ['wrong shape', 'Bearer not-a-real-token'],
    ['right shape, unknown', `Bearer prl_${'A'.repeat(43)}`],
    ['two tokens', 'Bearer a b'],
    ['the admin token', `Bearer ${ADMIN_TOKEN}`],
    ['SQL', "Bearer ' OR '1'='1"],
    ['very long', `Bearer ${'x'.repeat(8000)}`],
  ])('%s', async (_label, authorization) => {
    const headers = authorization === undefined ? {} : { authorization };
    for (const [method, url] of [
      ['GET', '/api/rooms'],
      ['POST', '/api/rooms'],
      ['GET', `/api/rooms/${rooms.instance.token}`],
      ['PUT', `/api/rooms/${rooms.instance.token}`],
      ['DELETE', `/api/rooms/${rooms.instance.token}`],
      ['POST', `/api/rooms/${rooms.instance.token}/close`],
      ['GET', '/api/room_feedbacks'],
      ['GET', '/api/room_feedbacks/summary'],
    ] as const) {
      expectUnauthorized(await ctx.request({ method, url, headers, payload: method === 'GET' || method === 'DELETE' ? undefined : roomBody() }));
    }
  });

  it('a token of a room (access, guest) is not an API token', async () => {
    expectUnauthorized(await ctx.request({ method: 'GET', url: '/api/rooms', token: rooms.instance.access_token }));
    expectUnauthorized(await ctx.request({ method: 'GET', url: '/api/rooms', token: rooms.instance.guest_token }));
  });

  it('the scheme is case-insensitive (RFC 7235)', async () => {
    const res = await ctx.request({ method: 'GET', url: '/api/rooms', headers: { authorization: `bearer ${tenant.instanceToken}` } });
    expect(res.statusCode).toBe(200);
  });

  it('is decided before the body is looked at (401, not 400)', async () => {
    const res = await ctx.request({ method: 'POST', url: '/api/rooms', payload: '{broken', headers: { 'content-type': 'application/json' } });
    expectUnauthorized(res);
  });

  it('a revoked token answers 401 from then on; other tokens keep working', async () => {
    const fresh = await ctx.tenant();
    const issued = await ctx.services.tenants.issueToken(fresh.id, { label: 'to revoke' });
    expect((await ctx.request({ method: 'GET', url: '/api/rooms', token: issued.token })).statusCode).toBe(200);
    await ctx.services.tenants.revokeToken(issued.id);
    expectUnauthorized(await ctx.request({ method: 'GET', url: '/api/rooms', token: issued.token }));
    expectUnauthorized(await ctx.request({ method: 'POST', url: '/api/rooms', token: issued.token, payload: roomBody() }));
    expect((await ctx.request({ method: 'GET', url: '/api/rooms', token: fresh.instanceToken })).statusCode).toBe(200);
  });

  it('tokens looked up in the same turn (one statement for all) each get their own answer; revoked and unknown ones 401', async () => {
    const fresh = await ctx.tenant();
    const revoked = await ctx.services.tenants.issueToken(fresh.id, { label: 'revoked' });
    await ctx.services.tenants.revokeToken(revoked.id);
    const unknown = `prl_${'Z'.repeat(43)}`;
    const bearer = (token: string) => `Bearer ${token}`;
    // One turn: every lookup below goes to the database together (domain/support/per-turn-batches.ts).
    const answers = await Promise.allSettled(
      [tenant.instanceToken, orgA.token, other.instanceToken, revoked.token, unknown, orgA.token].map((token) => ctx.services.auth.authenticate(bearer(token))),
    );
    const seen = answers.map((a) => (a.status === 'fulfilled' ? [a.value.kind, a.value.tenantId, a.value.organizationId] : (a.reason as Error).name));
    expect(seen).toEqual([
      ['instance', tenant.id, null],
      ['organization', tenant.id, orgA.id],
      ['instance', other.id, null],
      'UnauthorizedError',
      'UnauthorizedError',
      ['organization', tenant.id, orgA.id],
    ]);
  });
});

describe('403: feedback is for Instance tokens', () => {
  it.each(['/api/room_feedbacks', '/api/room_feedbacks/summary', '/api/room_feedbacks?rating=nonsense&page=0'])(
    'an Organization token on %s',
    async (url) => {
      const message = expectError(await ctx.request({ method: 'GET', url, token: orgA.token }), 403);
      expect(message).toMatch(/Instance/);
    },
  );

  it('the Instance token of the same tenant gets 200', async () => {
    expect((await ctx.request({ method: 'GET', url: '/api/room_feedbacks', token: tenant.instanceToken })).statusCode).toBe(200);
    expect((await ctx.request({ method: 'GET', url: '/api/room_feedbacks/summary', token: tenant.instanceToken })).statusCode).toBe(200);
  });
});

it('API tokens, room tokens and access tokens never reach the logs', async () => {
  const room = await createRoom(ctx, tenant.instanceToken);
  await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}`, token: tenant.instanceToken });
  await ctx.request({ method: 'GET', url: '/api/rooms', token: `prl_${'B'.repeat(43)}` });
  const logs = ctx.logs.join('\n');
  expect(logs).toContain('"route":"/api/rooms/:token"');
  for (const secret of [tenant.instanceToken, orgA.token, room.token, room.access_token, room.guest_token, `prl_${'B'.repeat(43)}`]) {
    expect(logs).not.toContain(secret);
  }
});

// The authorization matrix (docs/security.md §4): every endpoint x
// {no token, malformed, revoked, another tenant's instance token, another
// organization's token, the organization's token, the instance token} answers
// exactly as documented, and a room that is not yours is indistinguishable
// from one that does not exist: same status, body and headers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestContext, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';

type Who = 'none' | 'malformed' | 'revoked' | 'otherTenant' | 'otherOrg' | 'ownOrg' | 'instance';
const EVERYONE: Who[] = ['none', 'malformed', 'revoked', 'otherTenant', 'otherOrg', 'ownOrg', 'instance'];

let ctx: TestContext;
let tenant: TestTenant;
let elsewhere: TestTenant;
const tokens = {} as Record<Who, string | undefined>;
let ownOrgRoom: string;
let instanceRoom: string;
let otherTenantRoom: string;

const MALFORMED = ['Bearer not-a-token', 'Basic dXNlcjpwYXNz', 'Bearer', 'prl_' + 'A'.repeat(43), `Bearer prl_${'A'.repeat(43)}`];

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  elsewhere = await ctx.tenant();
  const own = await tenant.organization();
  const other = await tenant.organization();
  const revoked = await ctx.services.tenants.issueToken(tenant.id, {});
  await ctx.services.tenants.revokeToken(revoked.id);
  Object.assign(tokens, {
    none: undefined,
    malformed: 'not-a-token',
    revoked: revoked.token,
    otherTenant: elsewhere.instanceToken,
    otherOrg: other.token,
    ownOrg: own.token,
    instance: tenant.instanceToken,
  });
  ownOrgRoom = await newRoom(own.token);
  instanceRoom = await newRoom(tenant.instanceToken);
  otherTenantRoom = await newRoom(elsewhere.instanceToken);
  for (const [t, prefix] of [[tenant, 'ours'], [elsewhere, 'theirs']] as const) {
    await ctx.services.feedback.record({ tenantId: t.id, timezone: 'UTC', roomToken: `${prefix}-room`, participantToken: `${prefix}-p`, rating: 'good', comment: null });
  }
});
afterAll(() => ctx.close());

async function newRoom(token: string): Promise<string> {
  const res = await ctx.request({ method: 'POST', url: '/api/rooms', token, payload: roomBody() });
  expect(res.statusCode).toBe(201);
  return res.json().token;
}

function call(who: Who, method: string, url: string, payload?: object, headers: Record<string, string> = {}) {
  const authorization = who === 'malformed' ? 'Bearer not-a-token' : tokens[who] ? `Bearer ${tokens[who]}` : undefined;
  return ctx.request({ method: method as 'GET', url, payload, headers: { ...(authorization ? { authorization } : {}), ...headers } });
}

function expectUnauthorized(res: Awaited<ReturnType<typeof call>>) {
  expect(res.statusCode).toBe(401);
  expect(res.json()).toEqual({ error: expect.any(String) });
  expect(res.headers['www-authenticate']).toBe('Bearer');
}

const roomOps = [
  { name: 'GET /api/rooms/:token', method: 'GET', path: '', payload: undefined, ok: 200 },
  { name: 'PUT /api/rooms/:token', method: 'PUT', path: '', payload: roomBody({ name: 'Changed' }), ok: 200 },
  { name: 'DELETE /api/rooms/:token', method: 'DELETE', path: '', payload: undefined, ok: 204 },
  { name: 'POST /api/rooms/:token/close', method: 'POST', path: '/close', payload: undefined, ok: 204 },
  { name: 'PUT /api/rooms/:token/close', method: 'PUT', path: '/close', payload: undefined, ok: 204 },
  { name: 'PATCH /api/rooms/:token/close', method: 'PATCH', path: '/close', payload: undefined, ok: 204 },
  { name: 'GET /api/rooms/:token/sessions', method: 'GET', path: '/sessions', payload: undefined, ok: 200 },
] as const;

describe('room endpoints x callers (room of the organization)', () => {
  for (const op of roomOps) {
    for (const who of EVERYONE) {
      const expected = { none: 401, malformed: 401, revoked: 401, otherTenant: 404, otherOrg: 404, ownOrg: op.ok, instance: op.ok }[who];
      it(`${op.name} by ${who}: ${expected}`, async () => {
        // A fresh room of the organization per cell: deletes and closes must not decide each other's outcome.
        const room = await newRoom(tokens.ownOrg!);
        const res = await call(who, op.method, `/api/rooms/${room}${op.path}`, op.payload);
        if (expected === 401) return expectUnauthorized(res);
        expect(res.statusCode).toBe(expected);
        const after = await call('instance', 'GET', `/api/rooms/${room}`);
        if (expected === 404) {
          expect(res.json()).toEqual({ error: 'Room not found' });
          // Untouched.
          expect(after.json()).toMatchObject({ name: 'Consultation', status: 'active' });
        } else if (op.method === 'DELETE') {
          expect(after.statusCode).toBe(404);
        } else if (op.path === '/close') {
          expect(after.json().status).toBe('closed');
        } else if (op.method === 'PUT') {
          expect(after.json().name).toBe('Changed');
        }
      });
    }
  }
});

describe('collection endpoints x callers', () => {
  for (const who of EVERYONE) {
    it(`GET /api/rooms by ${who}`, async () => {
      const res = await call(who, 'GET', '/api/rooms?per_page=100');
      if (['none', 'malformed', 'revoked'].includes(who)) return expectUnauthorized(res);
      expect(res.statusCode).toBe(200);
      const listed = new Set(res.json().rooms.map((r: { token: string }) => r.token));
      expect(listed.has(ownOrgRoom)).toBe(who === 'ownOrg' || who === 'instance');
      expect(listed.has(instanceRoom)).toBe(who === 'instance');
      expect(listed.has(otherTenantRoom)).toBe(who === 'otherTenant');
      // Nor do the pagination headers count what is not in scope.
      expect(Number(res.headers['total-count'])).toBe(listed.size);
    });

    it(`POST /api/rooms by ${who}`, async () => {
      const res = await call(who, 'POST', '/api/rooms', roomBody({ name: `By ${who}` }));
      if (['none', 'malformed', 'revoked'].includes(who)) return expectUnauthorized(res);
      expect(res.statusCode).toBe(201);
      const created = res.json().token;
      // The room belongs to the caller's scope: the owning organization and the tenant's instance token see it, nobody else.
      const seenBy = (viewer: Who) => call(viewer, 'GET', `/api/rooms/${created}`).then((r) => r.statusCode);
      expect(await seenBy('instance')).toBe(who === 'otherTenant' ? 404 : 200);
      expect(await seenBy('ownOrg')).toBe(who === 'ownOrg' ? 200 : 404);
      expect(await seenBy('otherOrg')).toBe(who === 'otherOrg' ? 200 : 404);
      expect(await seenBy('otherTenant')).toBe(who === 'otherTenant' ? 200 : 404);
    });

    for (const url of ['/api/room_feedbacks', '/api/room_feedbacks/summary']) {
      it(`GET ${url} by ${who}`, async () => {
        const res = await call(who, 'GET', url);
        if (['none', 'malformed', 'revoked'].includes(who)) return expectUnauthorized(res);
        if (who === 'ownOrg' || who === 'otherOrg') {
          expect(res.statusCode).toBe(403);
          expect(res.json()).toEqual({ error: expect.any(String) });
          return;
        }
        expect(res.statusCode).toBe(200);
        const body = res.json();
        if (url.endsWith('summary')) expect(body).toMatchObject({ total: 1, good: 1 });
        else expect(body.room_feedbacks.map((f: { room_token: string }) => f.room_token)).toEqual([who === 'instance' ? 'ours-room' : 'theirs-room']);
      });
    }
  }

  describe('webhook endpoints (Instance tokens only, docs/design.md, "Webhooks")', () => {
    const hook = { url: 'https://93.184.216.34/hooks' };
    const unauthenticated = (who: Who) => ['none', 'malformed', 'revoked'].includes(who);
    const organization = (who: Who) => who === 'ownOrg' || who === 'otherOrg';
    const ours = async () => (await call('instance', 'POST', '/api/webhook_endpoints', hook)).json().id as string;

    for (const who of EVERYONE) {
      it(`POST and GET /api/webhook_endpoints by ${who}`, async () => {
        const created = await call(who, 'POST', '/api/webhook_endpoints', hook);
        const listed = await call(who, 'GET', '/api/webhook_endpoints');
        if (unauthenticated(who)) return [created, listed].forEach(expectUnauthorized);
        if (organization(who)) {
          for (const res of [created, listed]) {
            expect(res.statusCode).toBe(403);
            expect(res.json()).toEqual({ error: expect.any(String) });
          }
          return;
        }
        expect(created.statusCode).toBe(201);
        expect(listed.statusCode).toBe(200);
        const ids = listed.json().webhook_endpoints.map((e: { id: string }) => e.id);
        expect(ids).toContain(created.json().id);
        // Only the caller's tenant's endpoints.
        const theirs = (await call(who === 'instance' ? 'otherTenant' : 'instance', 'GET', '/api/webhook_endpoints')).json().webhook_endpoints;
        expect(theirs.map((e: { id: string }) => e.id)).not.toContain(created.json().id);
      });

      it(`DELETE /api/webhook_endpoints/:id of the tenant by ${who}`, async () => {
        const id = await ours();
        const res = await call(who, 'DELETE', `/api/webhook_endpoints/${id}`);
        const stillThere = async () => (await call('instance', 'GET', '/api/webhook_endpoints')).json().webhook_endpoints.some((e: { id: string }) => e.id === id);
        if (unauthenticated(who)) expectUnauthorized(res);
        else if (organization(who)) expect(res.statusCode).toBe(403);
        else if (who === 'otherTenant') expect(res.json()).toEqual({ error: 'Webhook endpoint not found' });
        else expect(res.statusCode).toBe(204);
        expect(await stillThere()).toBe(who !== 'instance');
      });
    }
  });

  it('refuses every malformed Authorization header with 401', async () => {
    for (const header of MALFORMED) {
      expectUnauthorized(await ctx.request({ method: 'GET', url: '/api/rooms', headers: { authorization: header } }));
    }
  });
});

describe('admin API x callers', () => {
  const adminCalls = [
    ['GET', '/admin/tenants'],
    ['POST', '/admin/tenants'],
    ['POST', '/admin/tenants/{t}/tokens'],
    ['POST', '/admin/tenants/{t}/organizations'],
    ['PUT', '/admin/tenants/{t}/features/permanent_rooms'],
    ['DELETE', '/admin/tokens/00000000-0000-0000-0000-000000000001'],
    ['GET', '/admin/tenants/{t}/webhook_endpoints'],
  ] as const;
  for (const [method, pattern] of adminCalls) {
    it(`${method} ${pattern}: 401 for every API token, answered for the admin token`, async () => {
      const url = pattern.replace('{t}', tenant.id);
      const payload = method === 'GET' || method === 'DELETE' ? undefined : pattern.includes('features') ? { enabled: false } : { name: 'Matrix' };
      for (const who of EVERYONE) expectUnauthorized(await call(who, method, url, payload));
      const admin = await ctx.request({ method, url, payload, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect([200, 201, 404]).toContain(admin.statusCode);
    });
  }
});

describe('"not yours" is indistinguishable from "does not exist"', () => {
  const VOLATILE = new Set(['date', 'ratelimit-remaining', 'ratelimit-reset']);
  const comparable = (res: Awaited<ReturnType<typeof call>>) => ({
    status: res.statusCode,
    body: res.body,
    headers: Object.fromEntries(Object.entries(res.headers).filter(([name]) => !VOLATILE.has(name))),
  });

  for (const who of ['otherOrg', 'otherTenant'] as const) {
    for (const op of roomOps) {
      for (const ifMatch of [undefined, '"1"', '"999"']) {
        it(`${op.name} by ${who}${ifMatch ? ` with If-Match ${ifMatch}` : ''}`, async () => {
          const missing = 'Z'.repeat(22);
          const theirs = await call(who, op.method, `/api/rooms/${ownOrgRoom}${op.path}`, op.payload, ifMatch ? { 'if-match': ifMatch } : {});
          const nobodys = await call(who, op.method, `/api/rooms/${missing}${op.path}`, op.payload, ifMatch ? { 'if-match': ifMatch } : {});
          expect(theirs.statusCode).toBe(404);
          expect(comparable(theirs)).toEqual(comparable(nobodys));
          // The rate headers are in both (their values move with time and use, so they are not compared).
          for (const res of [theirs, nobodys]) expect(res.headers['ratelimit-remaining']).toMatch(/^\d+$/);
        });
      }
    }
  }

  it('takes the same time: the median of paired differences is within 15% of a request (or 0.5 ms)', async () => {
    // Pairs, in alternating order, so that a busy machine slows both sides of a pair alike.
    const missing = 'Y'.repeat(22);
    const time = async (token: string) => {
      const started = process.hrtime.bigint();
      await call('otherOrg', 'GET', `/api/rooms/${token}`);
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    const differences: number[] = [];
    const all: number[] = [];
    for (let i = 0; i < 150; i++) {
      const [first, second] = i % 2 ? [ownOrgRoom, missing] : [missing, ownOrgRoom];
      const a = await time(first);
      const b = await time(second);
      const [theirs, nobodys] = i % 2 ? [a, b] : [b, a];
      differences.push(theirs - nobodys);
      all.push(theirs, nobodys);
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const [difference, typical] = [median(differences), median(all)];
    console.log('timing', JSON.stringify({ db: process.env.TEST_DB ?? 'pglite', requestMs: +typical.toFixed(3), notYoursMinusDoesNotExistMs: +difference.toFixed(3) }));
    expect(Math.abs(difference)).toBeLessThan(Math.max(0.15 * typical, 0.5));
  }, 60_000);
});

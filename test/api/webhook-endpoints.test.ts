// /api/webhook_endpoints (docs/webhooks.md; docs/design.md, "Webhooks"): Instance tokens only,
// validated at the edge, the secret shown once, internal targets refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext, type TestTenant } from '../helpers/app.js';
import { expectError, expectFieldErrors } from '../helpers/api.js';

/** A test that starts an app or a server of its own: on a loaded machine that alone can take most of the config's 20 s. */
const OWN_APP = { timeout: 120_000 };

let ctx: TestContext;
let tenant: TestTenant;
beforeAll(async () => {
  // The default: internal targets refused (no WEBHOOKS_ALLOW_PRIVATE_NETWORKS).
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(() => ctx.close());

const PUBLIC_URL = 'https://93.184.216.34/hooks';
const create = (token: string, payload: unknown) => ctx.request({ method: 'POST', url: '/api/webhook_endpoints', token, payload: payload as object });
const list = (token: string) => ctx.request({ method: 'GET', url: '/api/webhook_endpoints', token });

describe('POST /api/webhook_endpoints', () => {
  it('creates an endpoint and shows its secret only in this answer', async () => {
    const res = await create(tenant.instanceToken, { url: PUBLIC_URL, events: ['room.started', 'room.ended', 'room.started'], description: ' Booking system ' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ url: PUBLIC_URL, events: ['room.started', 'room.ended'], description: 'Booking system', status: 'enabled', failing_since: null, disabled_reason: null });
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(body.secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    expect(res.headers.location).toBe(`http://parley.test/api/webhook_endpoints/${body.id}`);

    const listed = (await list(tenant.instanceToken)).json().webhook_endpoints as Record<string, unknown>[];
    const mine = listed.find((e) => e.id === body.id);
    expect(mine).toMatchObject({ url: PUBLIC_URL, events: ['room.started', 'room.ended'] });
    expect(mine).not.toHaveProperty('secret');
    expect(JSON.stringify(listed)).not.toContain(body.secret.slice(6));
  });

  it('events omitted: every type (null), and each secret is new', async () => {
    const a = (await create(tenant.instanceToken, { url: PUBLIC_URL })).json();
    const b = (await create(tenant.instanceToken, { url: PUBLIC_URL })).json();
    expect(a.events).toBeNull();
    expect(a.description).toBeNull();
    expect(a.secret).not.toBe(b.secret);
  });

  it('reports every failing field at once in the interface shape', async () => {
    expectFieldErrors(await create(tenant.instanceToken, {}), { url: 'blank' });
    expectFieldErrors(await create(tenant.instanceToken, { url: 'ftp://example.com/x', events: ['room.exploded'], description: 'x'.repeat(256) }), {
      url: 'invalid',
      'events.0': 'inclusion',
      description: 'too_long',
    });
    expectFieldErrors(await create(tenant.instanceToken, { url: 'https://example.com/', events: [] }), { events: 'too_short' });
    expectFieldErrors(await create(tenant.instanceToken, { url: 42, events: 'room.started' }), { url: 'invalid', events: 'invalid' });
    expectFieldErrors(await create(tenant.instanceToken, { url: 'https://user:pass@example.com/' }), { url: 'invalid' });
    const malformed = await ctx.request({ method: 'POST', url: '/api/webhook_endpoints', token: tenant.instanceToken, payload: '{"url":', headers: { 'content-type': 'application/json' } });
    expectFieldErrors(malformed, { body: 'invalid' });
  });

  it.each([
    'http://127.0.0.1:8080/hooks',
    'http://localhost/hooks',
    'http://10.0.0.7/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.1.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://0.0.0.0/',
    'http://224.0.0.1/',
  ])('refuses an internal target %s with 400 on url', async (url) => {
    const res = await create(tenant.instanceToken, { url });
    expectFieldErrors(res, { url: 'invalid' });
    expect(res.json()[0].message).toMatch(/private|loopback|link-local/);
  });

  it('an Organization token gets 403 before its body is checked', async () => {
    const org = await tenant.organization();
    expectError(await create(org.token, { url: 'not a url' }), 403);
    expectError(await list(org.token), 403);
    expectError(await ctx.request({ method: 'DELETE', url: `/api/webhook_endpoints/${crypto.randomUUID()}`, token: org.token }), 403);
  });

  it('a tenant has at most 20 endpoints (422)', async () => {
    const other = await ctx.tenant();
    for (let i = 0; i < 20; i++) expect((await create(other.instanceToken, { url: PUBLIC_URL })).statusCode).toBe(201);
    expect(expectError(await create(other.instanceToken, { url: PUBLIC_URL }), 422)).toMatch(/at most 20/);
  });
});

describe('DELETE /api/webhook_endpoints/{id}', () => {
  it('deletes the endpoint; then, and for other tenants and malformed ids, 404', async () => {
    const id = (await create(tenant.instanceToken, { url: PUBLIC_URL })).json().id as string;
    const other = await ctx.tenant();
    expectError(await ctx.request({ method: 'DELETE', url: `/api/webhook_endpoints/${id}`, token: other.instanceToken }), 404);
    expect((await ctx.request({ method: 'DELETE', url: `/api/webhook_endpoints/${id}`, token: tenant.instanceToken })).statusCode).toBe(204);
    expectError(await ctx.request({ method: 'DELETE', url: `/api/webhook_endpoints/${id}`, token: tenant.instanceToken }), 404);
    expectError(await ctx.request({ method: 'DELETE', url: '/api/webhook_endpoints/not-a-uuid', token: tenant.instanceToken }), 404);
    expect((await list(tenant.instanceToken)).json().webhook_endpoints.map((e: { id: string }) => e.id)).not.toContain(id);
  });
});

describe('GET /api/webhook_endpoints', () => {
  it("lists only the caller's tenant's endpoints", async () => {
    const other = await ctx.tenant();
    expect((await list(other.instanceToken)).json()).toEqual({ webhook_endpoints: [] });
  });
});

describe('with WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true', () => {
  it('accepts a loopback target', OWN_APP, async () => {
    const open = await createTestContext({ env: { WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' } });
    try {
      const t = await open.tenant();
      const res = await open.request({ method: 'POST', url: '/api/webhook_endpoints', token: t.instanceToken, payload: { url: 'http://127.0.0.1:9/hooks' } });
      expect(res.statusCode, res.body).toBe(201);
    } finally {
      await open.close();
    }
  });
});

describe('GET /admin/tenants/{tenant_id}/webhook_endpoints', () => {
  const admin = (url: string, token = 'test-admin-token-0123456789') => ctx.request({ method: 'GET', url, token });

  it('shows operators a tenant\u2019s endpoints with their messages, never a secret', async () => {
    const t = await ctx.tenant();
    const created = (await create(t.instanceToken, { url: PUBLIC_URL, events: ['room.closed'] })).json();
    const room = await ctx.request({ method: 'POST', url: '/api/rooms', token: t.instanceToken, payload: { name: 'R', meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z' } });
    await ctx.request({ method: 'POST', url: `/api/rooms/${room.json().token}/close`, token: t.instanceToken });
    const res = await admin(`/admin/tenants/${t.id}/webhook_endpoints`);
    expect(res.statusCode).toBe(200);
    expect(res.json().webhook_endpoints).toEqual([
      { id: created.id, url: PUBLIC_URL, events: ['room.closed'], description: null, created_at: created.created_at, status: 'enabled', failing_since: null, disabled_at: null, disabled_reason: null, messages: { pending: 1, delivered: 0, failed: 0 } },
    ]);
    expect(res.body).not.toContain(created.secret.slice(6));
  });

  it('404 for an unknown tenant, 401 without the admin token', async () => {
    expectError(await admin('/admin/tenants/00000000-0000-4000-8000-000000000000/webhook_endpoints'), 404);
    expectError(await admin('/admin/tenants/nope/webhook_endpoints'), 404);
    expectError(await admin(`/admin/tenants/${tenant.id}/webhook_endpoints`, tenant.instanceToken), 401);
  });
});

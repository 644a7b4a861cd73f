// The operator admin API (docs/design.md#tenants-tokens-and-authentication): tenants, organizations, doctors, tokens
// and feature toggles behind PARLEY_ADMIN_TOKEN; 404 everywhere when it is unset.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestContext, roomBody, type TestContext } from '../helpers/app.js';
import { expectError, expectFieldErrors, expectUnauthorized } from '../helpers/api.js';

/** A test that starts an app or a server of its own: on a loaded machine that alone can take most of the config's 20 s. */
const OWN_APP = { timeout: 120_000 };

let ctx: TestContext;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MISSING = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const admin = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  ctx.request({ method, url, token: ADMIN_TOKEN, ...(payload === undefined ? {} : { payload: payload as object }) });

async function newTenant(body: Record<string, unknown> = {}) {
  const res = await admin('POST', '/admin/tenants', { name: 'Acme Health', ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; name: string; default_return_url: string; timezone: string; created_at: string };
}

const calls = (tenantId: string, orgId: string, tokenId: string) =>
  [
    ['POST', '/admin/tenants', { name: 'x' }],
    ['GET', '/admin/tenants', undefined],
    ['POST', `/admin/tenants/${tenantId}/organizations`, { name: 'x' }],
    ['POST', `/admin/organizations/${orgId}/doctors`, { name: 'x' }],
    ['POST', `/admin/tenants/${tenantId}/tokens`, {}],
    ['DELETE', `/admin/tokens/${tokenId}`, undefined],
    ['PUT', `/admin/tenants/${tenantId}/features/permanent_rooms`, { enabled: true }],
    ['PUT', `/admin/organizations/${orgId}/features/permanent_rooms`, { enabled: null }],
  ] as const;

describe('authentication', () => {
  it('every call is 401 with WWW-Authenticate without the admin token, with a wrong one, or with an API token', async () => {
    const tenant = await ctx.tenant();
    const org = await tenant.organization();
    const token = await ctx.services.tenants.issueToken(tenant.id, {});
    for (const authorization of [undefined, `Bearer ${ADMIN_TOKEN}x`, `Bearer ${ADMIN_TOKEN.slice(0, -1)}`, `Basic ${ADMIN_TOKEN}`, `Bearer ${tenant.instanceToken}`, ADMIN_TOKEN]) {
      for (const [method, url, payload] of calls(tenant.id, org.id, token.id)) {
        const res = await ctx.request({ method, url, headers: authorization ? { authorization } : {}, ...(payload ? { payload } : {}) });
        expectUnauthorized(res);
      }
    }
    // None of the refused calls did anything.
    expect((await ctx.request({ method: 'GET', url: '/api/rooms', token: token.token })).statusCode).toBe(200);
  });

  it('without PARLEY_ADMIN_TOKEN every admin path is 404, whatever the token', OWN_APP, async () => {
    const plain = await createTestContext({ env: { PARLEY_ADMIN_TOKEN: '' } });
    try {
      const tenant = await plain.tenant();
      for (const [method, url, payload] of calls(tenant.id, MISSING, MISSING)) {
        for (const token of [undefined, ADMIN_TOKEN]) {
          const res = await plain.request({ method, url, token, ...(payload ? { payload } : {}) });
          expect(res.statusCode, `${method} ${url}`).toBe(404);
          expect(res.json()).toEqual({ error: 'Not found' });
        }
      }
    } finally {
      await plain.close();
    }
  });
});

describe('tenants', () => {
  it('POST creates with defaults (UTC, PUBLIC_URL/left); GET lists it', async () => {
    const tenant = await newTenant();
    expect(tenant).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Acme Health',
      default_return_url: 'http://parley.test/left',
      timezone: 'UTC',
      created_at: expect.any(String),
    });
    const list = await admin('GET', '/admin/tenants');
    expect(list.statusCode).toBe(200);
    expect(list.json().tenants).toContainEqual(tenant);
  });

  it('stores the return URL and the timezone in its canonical spelling', async () => {
    const tenant = await newTenant({ name: '  Clinic  ', default_return_url: 'https://clinic.example/bye', timezone: 'america/new_york' });
    expect(tenant).toMatchObject({ name: 'Clinic', default_return_url: 'https://clinic.example/bye', timezone: 'America/New_York' });
  });

  it('validates every field at once', async () => {
    expectFieldErrors(await admin('POST', '/admin/tenants', { name: ' ', default_return_url: 'ftp://x', timezone: 'Mars/Olympus' }), {
      name: 'blank',
      default_return_url: 'invalid',
      timezone: 'invalid',
    });
    expectFieldErrors(await admin('POST', '/admin/tenants', {}), { name: 'blank' });
    expectFieldErrors(await admin('POST', '/admin/tenants', { name: 'x'.repeat(256) }), { name: 'too_long' });
    expectFieldErrors(await admin('POST', '/admin/tenants', { name: 5 }), { name: 'invalid' });
    expectFieldErrors(await admin('POST', '/admin/tenants', { name: 'ok\u0000' }), { name: 'invalid' });
    expectFieldErrors(await admin('POST', '/admin/tenants', { name: 'ok', timezone: '' }), { timezone: 'invalid' });
  });
});

describe('organizations and doctors', () => {
  it('create, with 404 for unknown or malformed parents and 400 for a blank name', async () => {
    const tenant = await newTenant();
    const org = await admin('POST', `/admin/tenants/${tenant.id}/organizations`, { name: 'North Clinic' });
    expect(org.statusCode).toBe(201);
    expect(org.json()).toEqual({ id: expect.stringMatching(UUID), tenant_id: tenant.id, name: 'North Clinic' });
    const doctor = await admin('POST', `/admin/organizations/${org.json().id}/doctors`, { name: 'Dr. Mira' });
    expect(doctor.statusCode).toBe(201);
    expect(doctor.json()).toEqual({ id: expect.stringMatching(UUID), organization_id: org.json().id, name: 'Dr. Mira' });

    for (const bad of [MISSING, 'not-a-uuid', '1', "x' OR '1'='1", 'urn:uuid:00000000-0000-4000-8000-000000000000']) {
      const id = encodeURIComponent(bad);
      expectError(await admin('POST', `/admin/tenants/${id}/organizations`, { name: 'x' }), 404);
      expectError(await admin('POST', `/admin/organizations/${id}/doctors`, { name: 'x' }), 404);
    }
    expectFieldErrors(await admin('POST', `/admin/tenants/${tenant.id}/organizations`, { name: '' }), { name: 'blank' });
    expectFieldErrors(await admin('POST', `/admin/organizations/${org.json().id}/doctors`, {}), { name: 'blank' });
  });

  it('accepts ids in upper case', async () => {
    const tenant = await newTenant();
    const res = await admin('POST', `/admin/tenants/${tenant.id.toUpperCase()}/organizations`, { name: 'Upper' });
    expect(res.statusCode).toBe(201);
    expect(res.json().tenant_id).toBe(tenant.id);
  });
});

describe('tokens', () => {
  it('an instance token is shown once, works, and sees the whole tenant', async () => {
    const tenant = await newTenant();
    const res = await admin('POST', `/admin/tenants/${tenant.id}/tokens`, { label: 'booking system' });
    expect(res.statusCode).toBe(201);
    const issued = res.json();
    expect(issued).toEqual({
      id: expect.stringMatching(UUID),
      token: expect.stringMatching(/^prl_[A-Za-z0-9_-]{43}$/),
      kind: 'instance',
      organization_id: null,
      label: 'booking system',
      created_at: expect.any(String),
    });
    expect((await ctx.request({ method: 'POST', url: '/api/rooms', token: issued.token, payload: roomBody() })).statusCode).toBe(201);
    // Nothing the admin API answers later contains it again.
    expect((await admin('GET', '/admin/tenants')).body).not.toContain(issued.token);
    expect(ctx.logs.join('\n')).not.toContain(issued.token);
  });

  it('without a body it is an instance token without a label', async () => {
    const tenant = await newTenant();
    const res = await admin('POST', `/admin/tenants/${tenant.id}/tokens`);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ kind: 'instance', organization_id: null, label: null });
  });

  it('an organization token is scoped to its organization and refused feedback', async () => {
    const tenant = await newTenant();
    const org = (await admin('POST', `/admin/tenants/${tenant.id}/organizations`, { name: 'O' })).json();
    const issued = (await admin('POST', `/admin/tenants/${tenant.id}/tokens`, { organization_id: org.id })).json();
    expect(issued).toMatchObject({ kind: 'organization', organization_id: org.id, label: null });
    const instance = (await admin('POST', `/admin/tenants/${tenant.id}/tokens`, {})).json();
    await ctx.request({ method: 'POST', url: '/api/rooms', token: instance.token, payload: roomBody({ name: 'tenant room' }) });
    await ctx.request({ method: 'POST', url: '/api/rooms', token: issued.token, payload: roomBody({ name: 'org room' }) });
    const list = await ctx.request({ method: 'GET', url: '/api/rooms', token: issued.token });
    expect(list.json().rooms.map((r: { name: string }) => r.name)).toEqual(['org room']);
    expectError(await ctx.request({ method: 'GET', url: '/api/room_feedbacks', token: issued.token }), 403);
  });

  it('refuses an organization of another tenant, and bad ids', async () => {
    const a = await newTenant();
    const b = await newTenant();
    const orgB = (await admin('POST', `/admin/tenants/${b.id}/organizations`, { name: 'B' })).json();
    expectFieldErrors(await admin('POST', `/admin/tenants/${a.id}/tokens`, { organization_id: orgB.id }), { organization_id: 'invalid' });
    expectFieldErrors(await admin('POST', `/admin/tenants/${a.id}/tokens`, { organization_id: MISSING }), { organization_id: 'invalid' });
    expectFieldErrors(await admin('POST', `/admin/tenants/${a.id}/tokens`, { organization_id: 'nope' }), { organization_id: 'invalid' });
    expectFieldErrors(await admin('POST', `/admin/tenants/${a.id}/tokens`, { label: 'x'.repeat(256) }), { label: 'too_long' });
    expectError(await admin('POST', `/admin/tenants/${MISSING}/tokens`, {}), 404);
  });

  it('revoke: 204, then the token answers 401; again 204; unknown or malformed 404', async () => {
    const tenant = await newTenant();
    const issued = (await admin('POST', `/admin/tenants/${tenant.id}/tokens`, {})).json();
    const keep = (await admin('POST', `/admin/tenants/${tenant.id}/tokens`, {})).json();
    const res = await admin('DELETE', `/admin/tokens/${issued.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expectUnauthorized(await ctx.request({ method: 'GET', url: '/api/rooms', token: issued.token }));
    expect((await admin('DELETE', `/admin/tokens/${issued.id}`)).statusCode).toBe(204);
    expect((await ctx.request({ method: 'GET', url: '/api/rooms', token: keep.token })).statusCode).toBe(200);
    expectError(await admin('DELETE', `/admin/tokens/${MISSING}`), 404);
    expectError(await admin('DELETE', '/admin/tokens/not-an-id'), 404);
    expectError(await admin('DELETE', `/admin/tokens/${encodeURIComponent('../tenants')}`), 404);
  });
});

describe('features', () => {
  it('tenant switch: 200 {feature, enabled}, and it takes effect', async () => {
    const tenant = await newTenant();
    const token = (await admin('POST', `/admin/tenants/${tenant.id}/tokens`, {})).json().token;
    const create = () => ctx.request({ method: 'POST', url: '/api/rooms', token, payload: roomBody({ permanent: true }) });
    expectError(await create(), 422);
    const on = await admin('PUT', `/admin/tenants/${tenant.id}/features/permanent_rooms`, { enabled: true });
    expect(on.statusCode).toBe(200);
    expect(on.json()).toEqual({ feature: 'permanent_rooms', enabled: true });
    expect((await create()).statusCode).toBe(201);
    expect((await admin('PUT', `/admin/tenants/${tenant.id}/features/permanent_rooms`, { enabled: false })).json()).toEqual({
      feature: 'permanent_rooms',
      enabled: false,
    });
    expectError(await create(), 422);
  });

  it('organization override: true, false, and null clears it', async () => {
    const tenant = await newTenant();
    const org = (await admin('POST', `/admin/tenants/${tenant.id}/organizations`, { name: 'O' })).json();
    const token = (await admin('POST', `/admin/tenants/${tenant.id}/tokens`, { organization_id: org.id })).json().token;
    const create = () => ctx.request({ method: 'POST', url: '/api/rooms', token, payload: roomBody({ additional_guest_count: 1 }) });
    const set = (enabled: boolean | null) => admin('PUT', `/admin/organizations/${org.id}/features/additional_participants`, { enabled });

    expect((await set(true)).json()).toEqual({ feature: 'additional_participants', enabled: true });
    expect((await create()).statusCode).toBe(201);
    await admin('PUT', `/admin/tenants/${tenant.id}/features/additional_participants`, { enabled: true });
    expect((await set(false)).json()).toEqual({ feature: 'additional_participants', enabled: false });
    expectError(await create(), 422);
    expect((await set(null)).json()).toEqual({ feature: 'additional_participants', enabled: null });
    expect((await create()).statusCode).toBe(201);
  });

  it('unknown feature 400; bad enabled 400; unknown tenant or organization 404', async () => {
    const tenant = await newTenant();
    const org = (await admin('POST', `/admin/tenants/${tenant.id}/organizations`, { name: 'O' })).json();
    expectFieldErrors(await admin('PUT', `/admin/tenants/${tenant.id}/features/teleportation`, { enabled: true }), { feature: 'inclusion' });
    expectFieldErrors(await admin('PUT', `/admin/organizations/${org.id}/features/PERMANENT_ROOMS`, { enabled: true }), { feature: 'inclusion' });
    expectFieldErrors(await admin('PUT', `/admin/tenants/${tenant.id}/features/permanent_rooms`, { enabled: 'yes' }), { enabled: 'inclusion' });
    expectFieldErrors(await admin('PUT', `/admin/tenants/${tenant.id}/features/permanent_rooms`, {}), { enabled: 'blank' });
    // A tenant switch cannot be cleared, only an organization override.
    expectFieldErrors(await admin('PUT', `/admin/tenants/${tenant.id}/features/permanent_rooms`, { enabled: null }), { enabled: 'blank' });
    expectError(await admin('PUT', `/admin/tenants/${MISSING}/features/permanent_rooms`, { enabled: true }), 404);
    expectError(await admin('PUT', `/admin/organizations/${MISSING}/features/permanent_rooms`, { enabled: true }), 404);
    expectError(await admin('PUT', '/admin/organizations/xyz/features/permanent_rooms', { enabled: true }), 404);
  });
});

it('end to end: tenant, organization, doctor, token, a doctor’s room', async () => {
  const tenant = await newTenant({ timezone: 'Europe/Paris' });
  const org = (await admin('POST', `/admin/tenants/${tenant.id}/organizations`, { name: 'Clinic' })).json();
  const doctor = (await admin('POST', `/admin/organizations/${org.id}/doctors`, { name: 'Dr. Lee' })).json();
  const orgToken = (await admin('POST', `/admin/tenants/${tenant.id}/tokens`, { organization_id: org.id, label: 'clinic app' })).json().token;
  const instanceToken = (await admin('POST', `/admin/tenants/${tenant.id}/tokens`, {})).json().token;
  const room = await ctx.request({ method: 'POST', url: '/api/rooms', token: instanceToken, payload: roomBody({ doctor_id: doctor.id }) });
  expect(room.statusCode).toBe(201);
  const seen = await ctx.request({ method: 'GET', url: `/api/rooms/${room.json().token}`, token: orgToken });
  expect(seen.statusCode).toBe(200);
  expect(seen.json().doctor_id).toBe(doctor.id);
});

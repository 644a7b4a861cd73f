// OpenAPI 3.1 at /api/openapi.json, generated from the route schemas, and the
// browsable reference at /docs. Every documented path is really routed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/app.js';
import { lintOpenapi } from '../helpers/openapi-lint.js';

/** A test that starts an app or a server of its own: on a loaded machine that alone can take most of the config's 20 s. */
const OWN_APP = { timeout: 120_000 };

let ctx: TestContext;
let doc: {
  openapi: string;
  info: { title: string; version: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[]; requestBody?: { content: Record<string, { schema: { required?: string[]; properties: Record<string, unknown> } }> } }>>;
  components: { schemas: Record<string, { properties: Record<string, unknown> }>; securitySchemes: Record<string, unknown> };
};

beforeAll(async () => {
  ctx = await createTestContext();
  const res = await ctx.request({ method: 'GET', url: '/api/openapi.json' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  doc = res.json();
});
afterAll(() => ctx.close());

const EXPECTED: Record<string, string[]> = {
  '/api/rooms': ['get', 'post'],
  '/api/rooms/{token}': ['delete', 'get', 'put'],
  '/api/rooms/{token}/close': ['patch', 'post', 'put'],
  '/api/room_feedbacks': ['get'],
  '/api/room_feedbacks/summary': ['get'],
  '/api/rooms/{token}/sessions': ['get'],
  '/api/webhook_endpoints': ['get', 'post'],
  '/api/webhook_endpoints/{id}': ['delete'],
  '/admin/tenants/{tenant_id}/webhook_endpoints': ['get'],
  '/admin/tenants': ['get', 'post'],
  '/admin/tenants/{tenant_id}/organizations': ['post'],
  '/admin/organizations/{org_id}/doctors': ['post'],
  '/admin/tenants/{tenant_id}/tokens': ['post'],
  '/admin/tokens/{id}': ['delete'],
  '/admin/tenants/{tenant_id}/features/{feature}': ['put'],
  '/admin/organizations/{org_id}/features/{feature}': ['put'],
};

describe('/api/openapi.json', () => {
  it('is OpenAPI 3.1 with a title, a version and the public URL as server', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toMatch(/Parley/);
    expect(doc.info.version).toBeTruthy();
    expect(doc.servers).toEqual([{ url: 'http://parley.test' }]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['admin', 'bearer']);
  });

  it('documents every /api and /admin path with its methods, and no internal route', () => {
    const documented = Object.fromEntries(Object.entries(doc.paths).map(([path, ops]) => [path, Object.keys(ops).sort()]));
    for (const [path, methods] of Object.entries(EXPECTED)) expect(documented[path], path).toEqual(expect.arrayContaining(methods));
    for (const path of Object.keys(documented)) expect(path).toMatch(/^\/(api|admin)\//);
    expect(documented).not.toHaveProperty('/api/openapi.json');
  });

  it('names the shared schemas and every $ref resolves', () => {
    expect(doc.components.schemas.Room?.properties).toHaveProperty('guest_join_url');
    expect(doc.components.schemas.RoomFeedback?.properties).toHaveProperty('rating');
    expect(doc.components.schemas.WebhookEndpoint?.properties).toHaveProperty('disabled_reason');
    expect(doc.components.schemas.WebhookEndpoint?.properties).not.toHaveProperty('secret');
    expect(doc.components.schemas.ParticipantSession?.properties).toHaveProperty('network');
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      const [, kind, name] = /^#\/components\/(schemas|headers)\/(.+)$/.exec(ref) ?? [];
      expect(kind, ref).toBeDefined();
      expect((doc.components as Record<string, object>)[kind!], ref).toHaveProperty(name!);
    }
  });

  it('lists the status codes of docs/api.md on the room operations', () => {
    const codes = (path: string, method: string) => Object.keys(doc.paths[path]![method]!.responses).sort();
    expect(codes('/api/rooms', 'post')).toEqual(expect.arrayContaining(['201', '400', '401', '422']));
    expect(codes('/api/rooms', 'get')).toEqual(expect.arrayContaining(['200', '400', '401']));
    expect(codes('/api/rooms/{token}', 'get')).toEqual(expect.arrayContaining(['200', '401', '404']));
    expect(codes('/api/rooms/{token}', 'put')).toEqual(expect.arrayContaining(['200', '400', '401', '404', '422']));
    expect(codes('/api/rooms/{token}', 'delete')).toEqual(expect.arrayContaining(['204', '401', '404']));
    expect(codes('/api/rooms/{token}/close', 'post')).toEqual(expect.arrayContaining(['204', '401', '404']));
    expect(codes('/api/room_feedbacks', 'get')).toEqual(expect.arrayContaining(['200', '400', '401', '403']));
    expect(codes('/api/room_feedbacks/summary', 'get')).toEqual(expect.arrayContaining(['200', '400', '401', '403']));
    expect(codes('/api/rooms/{token}/sessions', 'get')).toEqual(expect.arrayContaining(['200', '401', '404']));
    expect(codes('/api/webhook_endpoints', 'post')).toEqual(expect.arrayContaining(['201', '400', '401', '403', '422']));
    expect(codes('/api/webhook_endpoints', 'get')).toEqual(expect.arrayContaining(['200', '401', '403']));
    expect(codes('/api/webhook_endpoints/{id}', 'delete')).toEqual(expect.arrayContaining(['204', '401', '403', '404']));
  });

  it('the create body requires name, meeting_duration and scheduled_at and lists the optional fields', () => {
    const schema = doc.paths['/api/rooms']!.post!.requestBody!.content['application/json']!.schema;
    expect(schema.required?.sort()).toEqual(['meeting_duration', 'name', 'scheduled_at']);
    for (const field of ['return_url', 'host_return_url', 'host_display_name', 'guest_display_name', 'enable_chat', 'enable_screenshare', 'enable_invites', 'enable_audio_indicator', 'enable_waiting_room', 'locale', 'additional_guest_count', 'permanent', 'doctor_id']) {
      expect(schema.properties, field).toHaveProperty(field);
    }
  });

  it('marks the API operations as needing a bearer token', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.security, `${method} ${path}`).toEqual([{ [path.startsWith('/admin') ? 'admin' : 'bearer']: [] }]);
      }
    }
  });

  it('every documented operation exists: without a token it is 401, never 404', async () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      const url = path.replace(/\{[^}]+\}/g, 'x'.repeat(22));
      for (const method of Object.keys(ops)) {
        const res = await ctx.request({ method: method.toUpperCase() as 'GET', url });
        expect(res.statusCode, `${method} ${url}`).toBe(401);
      }
    }
  });
});

describe('/api/openapi.json as a contract', () => {
  type Operation = { operationId?: string; responses: Record<string, { headers?: Record<string, unknown> }>; parameters?: { in: string; name: string }[] };
  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op: op as unknown as Operation })));
  const operation = (id: string) => operations().find(({ op }) => op.operationId === id)!.op;
  const headersOf = (id: string, status: string) => Object.keys(operation(id).responses[status]?.headers ?? {}).sort();

  it("is clean under Redocly's recommended rules: no warning, no error", async () => {
    expect(await lintOpenapi(doc)).toEqual([]);
  });

  it('the lint can fail: an example that does not match its schema, or an operation without operationId, is reported', async () => {
    const broken = structuredClone(doc) as unknown as { components: { schemas: { Room: { examples: { status: string }[] } } }; paths: Record<string, Record<string, { operationId?: string }>> };
    broken.components.schemas.Room.examples[0]!.status = 'bogus';
    delete broken.paths['/api/rooms']!.get!.operationId;
    const rules = new Set((await lintOpenapi(broken)).map((problem) => problem.rule));
    expect([...rules].sort()).toEqual(['no-invalid-schema-examples', 'operation-operationId']);
  });

  it('stays clean without the admin API and without the rate limit (no unused admin scheme)', OWN_APP, async () => {
    const bare = await createTestContext({ env: { PARLEY_ADMIN_TOKEN: '', RATE_LIMIT_PER_MINUTE: '0' } });
    try {
      const other = (await bare.request({ method: 'GET', url: '/api/openapi.json' })).json();
      expect(Object.keys(other.components.securitySchemes)).toEqual(['bearer']);
      expect(Object.keys(other.paths).filter((path) => path.startsWith('/admin'))).toEqual([]);
      expect(Object.keys(other.components.headers)).not.toContain('RateLimit-Limit');
      expect(other.paths['/api/rooms'].get.responses).not.toHaveProperty('429');
      expect(await lintOpenapi(other)).toEqual([]);
    } finally {
      await bare.close();
    }
  });

  it('every operation has a unique operationId', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('documents the headers of the answers, the statuses hooks give, and the request headers read by hand', () => {
    const pagination = ['Current-Page', 'Link', 'Page-Limit', 'Total-Count', 'Total-Pages'];
    const rate = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
    expect(headersOf('listRooms', '200')).toEqual(['Cache-Control', ...pagination, ...rate].sort());
    expect(headersOf('listRoomFeedbacks', '200')).toEqual(expect.arrayContaining(pagination));
    expect(headersOf('createRoom', '201')).toEqual(expect.arrayContaining(['ETag', 'Idempotent-Replayed', 'Location']));
    expect(headersOf('getRoom', '200')).toContain('ETag');
    expect(headersOf('updateRoom', '200')).toContain('ETag');
    expect(headersOf('createWebhookEndpoint', '201')).toContain('Location');
    expect(headersOf('getRoom', '401')).toEqual(['Cache-Control', 'WWW-Authenticate']);
    expect(headersOf('adminListTenants', '503')).toEqual(['Cache-Control', 'Retry-After']);
    for (const { path, op } of operations().filter(({ path }) => path.startsWith('/api/'))) {
      expect(op.responses['429'], path).toBeDefined();
      expect(Object.keys(op.responses['429']!.headers ?? {}).sort(), path).toEqual(['Cache-Control', 'Retry-After', ...rate].sort());
      expect(op.responses['503'], path).toBeDefined();
    }
    expect(Object.keys(operation('createRoom').responses)).toEqual(expect.arrayContaining(['409', '413', '415']));
    const params = (id: string) => (operation(id).parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
    expect(params('createRoom')).toEqual(['Idempotency-Key']);
    for (const id of ['updateRoom', 'deleteRoom', 'closeRoom', 'closeRoomWithPut', 'closeRoomWithPatch']) expect(params(id)).toEqual(['If-Match']);
  });

  // The document must not promise what the server does not send: each header it names on these answers is really there.
  it('the headers it documents are the headers the real answers carry', async () => {
    const tenant = await ctx.tenant();
    const token = tenant.instanceToken;
    const expectDocumented = (id: string, status: number, headers: Record<string, unknown>) => {
      for (const name of headersOf(id, String(status))) {
        if (name === 'Idempotent-Replayed') continue; // only on a replay, checked below
        expect(headers[name.toLowerCase()], `${id} ${status} ${name}`).toBeDefined();
      }
    };
    const body = { name: 'Contract', meeting_duration: 30, scheduled_at: '2026-03-10T12:00:00Z' };
    const created = await ctx.request({ method: 'POST', url: '/api/rooms', token, payload: body, headers: { 'idempotency-key': 'contract-1' } });
    expect(created.statusCode).toBe(201);
    expectDocumented('createRoom', 201, created.headers);
    const replay = await ctx.request({ method: 'POST', url: '/api/rooms', token, payload: body, headers: { 'idempotency-key': 'contract-1' } });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const url = `/api/rooms/${created.json().token}`;
    expectDocumented('getRoom', 200, (await ctx.request({ method: 'GET', url, token })).headers);
    expectDocumented('updateRoom', 200, (await ctx.request({ method: 'PUT', url, token, payload: body })).headers);
    expectDocumented('listRooms', 200, (await ctx.request({ method: 'GET', url: '/api/rooms', token })).headers);
    expectDocumented('listRoomFeedbacks', 200, (await ctx.request({ method: 'GET', url: '/api/room_feedbacks', token })).headers);
    const endpoint = await ctx.request({ method: 'POST', url: '/api/webhook_endpoints', token, payload: { url: 'https://hooks.example.com/parley' } });
    expect(endpoint.statusCode).toBe(201);
    expectDocumented('createWebhookEndpoint', 201, endpoint.headers);
    expectDocumented('getRoom', 401, (await ctx.request({ method: 'GET', url })).headers);
  });

  it('a real 429 carries the headers documented on it', OWN_APP, async () => {
    const limited = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '1' } });
    try {
      const { instanceToken: token } = await limited.tenant();
      await limited.request({ method: 'GET', url: '/api/rooms', token });
      const refused = await limited.request({ method: 'GET', url: '/api/rooms', token });
      expect(refused.statusCode).toBe(429);
      for (const name of headersOf('listRooms', '429')) expect(refused.headers[name.toLowerCase()], name).toBeDefined();
    } finally {
      await limited.close();
    }
  });
});

describe('/docs', () => {
  it('serves the HTML reference without a token', async () => {
    const res = await ctx.request({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<html/i);
    expect(res.body).toMatch(/swagger/i);
  });
});

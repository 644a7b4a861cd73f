// OpenAPI 3.1 at /api/openapi.json, generated from the route schemas, and the
// browsable reference at /docs. Every documented path is really routed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/app.js';

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
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas).toHaveProperty(ref.split('/').pop()!);
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

describe('/docs', () => {
  it('serves the HTML reference without a token', async () => {
    const res = await ctx.request({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<html/i);
    expect(res.body).toMatch(/swagger/i);
  });
});

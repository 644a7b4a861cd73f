// Hostile input anywhere gets the documented 4xx, never a 5xx: malformed and
// oversized bodies, odd types and characters, odd query strings, path tricks,
// SQL metacharacters, and raw HTTP a client library would never send.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN, createTestContext, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';
import { createRoom, expectError, expectFieldErrors, type Room } from '../helpers/api.js';

let ctx: TestContext;
let tenant: TestTenant;
let room: Room;

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  room = await createRoom(ctx, tenant.instanceToken);
});
afterAll(() => ctx.close());

/** A 4xx in one of the interface's two shapes: an array of field errors (400) or {error}. */
function expectDocumented4xx(res: LightMyRequestResponse, label: string) {
  expect(res.statusCode, `${label}: ${res.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
  expect(res.statusCode, label).toBeLessThan(500);
  const body = res.json();
  if (Array.isArray(body)) {
    expect(res.statusCode, label).toBe(400);
    for (const e of body) expect(Object.keys(e).sort(), label).toEqual(['attribute', 'message', 'type']);
  } else {
    expect(Object.keys(body), label).toEqual(['error']);
  }
}

const bodyRoutes = () =>
  [
    ['POST', '/api/rooms', tenant.instanceToken],
    ['POST', '/api/webhook_endpoints', tenant.instanceToken],
    ['PUT', `/api/rooms/${room.token}`, tenant.instanceToken],
    ['POST', '/admin/tenants', ADMIN_TOKEN],
    ['POST', `/admin/tenants/${tenant.id}/tokens`, ADMIN_TOKEN],
    ['PUT', `/admin/tenants/${tenant.id}/features/permanent_rooms`, ADMIN_TOKEN],
  ] as const;

describe('bodies', () => {
  it.each([
    ['truncated', '{"name":'],
    ['not JSON at all', 'hello'],
    ['NaN', '{"meeting_duration": NaN}'],
    ['comment', '{/* */}'],
    ['lone brace', '}'],
    ['prototype pollution', '{"__proto__": {"admin": true}, "name": "x"}'],
    ['constructor pollution', '{"constructor": {"prototype": {"admin": true}}}'],
  ])('malformed: %s is 400 on body', async (_label, payload) => {
    for (const [method, url, token] of bodyRoutes()) {
      const res = await ctx.request({ method, url, token, payload, headers: { 'content-type': 'application/json' } });
      expectDocumented4xx(res, `${method} ${url}`);
      expect(res.statusCode).toBe(400);
    }
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('invalid UTF-8 bytes decode to U+FFFD and are stored without error', async () => {
    const prefix = Buffer.from('{"meeting_duration":5,"scheduled_at":"2026-03-10T14:00:00Z","name":"bad ');
    const payload = Buffer.concat([prefix, Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from(' bytes"}')]);
    const res = await ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload, headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe('bad \ufffd(\ufffd\ufffd bytes');
  });

  it('a wrong content type is 415 {error}', async () => {
    for (const [method, url, token] of bodyRoutes()) {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
        const res = await ctx.request({ method, url, token, payload: 'name=x', headers: { 'content-type': type } });
        expectDocumented4xx(res, `${method} ${url} ${type}`);
      }
    }
  });

  it('a 1 MB body is 413 {error}, everywhere', async () => {
    const huge = JSON.stringify(roomBody({ name: 'x'.repeat(1024 * 1024) }));
    for (const [method, url, token] of bodyRoutes()) {
      const res = await ctx.request({ method, url, token, payload: huge, headers: { 'content-type': 'application/json' } });
      expectError(res, 413);
    }
  });

  it('a huge string under the body limit is a field error', async () => {
    const res = await ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload: roomBody({ name: 'n'.repeat(60_000) }) });
    expectFieldErrors(res, { name: 'too_long' });
    const display = await ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload: roomBody({ host_display_name: 'd'.repeat(60_000) }) });
    expectFieldErrors(display, { host_display_name: 'too_long' });
  });

  it('deeply nested JSON is handled', async () => {
    const depth = 20_000;
    const payload = `{"name":"x","meeting_duration":5,"scheduled_at":"2026-03-10T14:00:00Z","deep":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const res = await ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload, headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBeLessThan(500);
  });

  it('NUL characters in any stored text are 400 on that field, not a database error', async () => {
    const cases: [string, string, string, Record<string, unknown>, string][] = [
      ['POST', '/api/rooms', tenant.instanceToken, roomBody({ name: 'a\u0000b' }), 'name'],
      ['POST', '/api/rooms', tenant.instanceToken, roomBody({ guest_display_name: '\u0000' }), 'guest_display_name'],
      ['POST', '/api/rooms', tenant.instanceToken, roomBody({ return_url: 'https://x.example/\u0000' }), 'return_url'],
      ['PUT', `/api/rooms/${room.token}`, tenant.instanceToken, roomBody({ host_display_name: 'Dr\u0000' }), 'host_display_name'],
      ['POST', '/admin/tenants', ADMIN_TOKEN, { name: 'T\u0000' }, 'name'],
      ['POST', '/admin/tenants', ADMIN_TOKEN, { name: 'T', timezone: 'UTC\u0000' }, 'timezone'],
      ['POST', `/admin/tenants/${tenant.id}/organizations`, ADMIN_TOKEN, { name: '\u0000' }, 'name'],
      ['POST', `/admin/tenants/${tenant.id}/tokens`, ADMIN_TOKEN, { label: 'l\u0000' }, 'label'],
    ];
    for (const [method, url, token, payload, attribute] of cases) {
      const res = await ctx.request({ method: method as 'POST', url, token, payload });
      expect(res.statusCode, `${url} ${attribute}: ${res.body}`).toBe(400);
      expect(res.json().map((e: { attribute: string }) => e.attribute)).toContain(attribute);
    }
    // Unknown fields are ignored, even with a NUL in them.
    const ignored = await ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload: roomBody({ note: '\u0000' }) });
    expect(ignored.statusCode).toBe(201);
  });

  it('other control characters, lone surrogates and long grapheme clusters are stored without error', async () => {
    for (const name of ['tab\there', 'bell\u0007', 'del\u007f', 'zero\u200bwidth', 'rtl \u202eevil\u202c', '👨‍👩‍👧‍👦'.repeat(20)]) {
      const created = await createRoom(ctx, tenant.instanceToken, { name });
      expect(created.name).toBe(name);
    }
    const surrogate = await ctx.request({
      method: 'POST',
      url: '/api/rooms',
      token: tenant.instanceToken,
      payload: '{"name":"half \\ud800 surrogate","meeting_duration":5,"scheduled_at":"2026-03-10T14:00:00Z"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(surrogate.statusCode).toBe(201);
  });

  it('SQL metacharacters are data', async () => {
    const name = "Robert'); DROP TABLE rooms; -- \\ % _ $1 \"";
    const created = await createRoom(ctx, tenant.instanceToken, { name, host_display_name: "O'Brien", guest_display_name: '%' });
    const fetched = await ctx.request({ method: 'GET', url: `/api/rooms/${created.token}`, token: tenant.instanceToken });
    expect(fetched.json()).toMatchObject({ name, host_display_name: "O'Brien", guest_display_name: '%' });
    const tenantRes = await ctx.request({ method: 'POST', url: '/admin/tenants', token: ADMIN_TOKEN, payload: { name: "x'; DELETE FROM tenants; --" } });
    expect(tenantRes.statusCode).toBe(201);
    const list = await ctx.request({ method: 'GET', url: '/api/rooms?per_page=100', token: tenant.instanceToken });
    expect(list.statusCode).toBe(200);
    expect(list.json().rooms.map((r: Room) => r.token)).toContain(room.token);
  });

  it('numbers beyond any range are field errors', async () => {
    for (const raw of ['1e400', '-1e400', '123456789012345678901234567890', '0.0000001']) {
      const payload = `{"name":"x","meeting_duration":${raw},"scheduled_at":"2026-03-10T14:00:00Z","additional_guest_count":${raw}}`;
      const res = await ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload, headers: { 'content-type': 'application/json' } });
      expectDocumented4xx(res, raw);
      expect(res.json().map((e: { attribute: string }) => e.attribute).sort()).toEqual(['additional_guest_count', 'meeting_duration']);
    }
  });
});

describe('query strings', () => {
  it.each([
    'page[]=1',
    'page[a]=1',
    'page=1;DROP TABLE rooms',
    'page=%00',
    '%00=1',
    'page=%E0%A4%A',
    '&&&==&',
    '=',
    'page=0x10',
    'page=-0',
    'page=1e400',
    'page=Infinity',
    'page=NaN',
    'per_page=100000000000000000000000',
    '__proto__=1&constructor[prototype][x]=1',
    'cursor=%00',
    'cursor=after:-1',
    'cursor=before:1e3',
    'cursor=last&cursor=after:1',
    `x=${'y'.repeat(6000)}`,
    'page=2&page=2&page=2',
  ])('GET /api/rooms?%s', async (query) => {
    const res = await ctx.request({ method: 'GET', url: `/api/rooms?${query}`, token: tenant.instanceToken });
    expect(res.statusCode, res.body.slice(0, 200)).toBeLessThan(500);
    if (res.statusCode !== 200) expectDocumented4xx(res, query);
  });

  it.each(['to=2026-01-01&to=2026-01-02', 'from=%00', 'from=%F0%9F%92%A9', 'from=0000-00-00', 'to=9999-99-99', 'to=2026-01-01%00'])(
    'GET /api/room_feedbacks(/summary)?%s is 400',
    async (query) => {
      for (const path of ['/api/room_feedbacks', '/api/room_feedbacks/summary']) {
        const res = await ctx.request({ method: 'GET', url: `${path}?${query}`, token: tenant.instanceToken });
        expectDocumented4xx(res, `${path}?${query}`);
      }
    },
  );

  it.each(['rating=%00', 'rating=good&rating=bad', 'rating=good%27--'])('GET /api/room_feedbacks?%s is 400 on rating', async (query) => {
    const res = await ctx.request({ method: 'GET', url: `/api/room_feedbacks?${query}`, token: tenant.instanceToken });
    expectDocumented4xx(res, query);
    expect(res.json().map((e: { attribute: string }) => e.attribute)).toEqual(['rating']);
  });

  it('bracketed keys are just unknown parameters', async () => {
    for (const query of ['from[]=2026-01-01', 'rating[]=good', 'rating[$ne]=good']) {
      const res = await ctx.request({ method: 'GET', url: `/api/room_feedbacks?${query}`, token: tenant.instanceToken });
      expect(res.statusCode, query).toBe(200);
    }
  });
});

describe('paths', () => {
  it.each([
    '..%2F..%2Fadmin%2Ftenants',
    '%2e%2e',
    '..',
    '.',
    'a%00b',
    '%00',
    '%3Cscript%3Ealert(1)%3C%2Fscript%3E',
    "'%20OR%20'1'%3D'1",
    '%25',
    '%E2%80%AE',
    '%F0%9F%A9%BA',
    'x'.repeat(199),
    'x'.repeat(2000),
    'aaaaaaaaaaaaaaaaaaaaaa%20',
    'AAAAAAAAAAAAAAAAAAAAAA;rm',
  ])('/api/rooms/%s is a 404 for every method', async (token) => {
    for (const [method, suffix] of [['GET', ''], ['PUT', ''], ['DELETE', ''], ['POST', '/close']] as const) {
      const res = await ctx.request({
        method,
        url: `/api/rooms/${token}${suffix}`,
        token: tenant.instanceToken,
        ...(method === 'PUT' ? { payload: roomBody() } : {}),
      });
      expect(res.statusCode, `${method} ${token}${suffix}: ${res.body.slice(0, 200)}`).toBe(404);
      expectDocumented4xx(res, token);
      // Nothing of the path is echoed back.
      expect(res.body).not.toContain('script');
    }
  });

  it('bad percent-encoding in the path is 400 on url', async () => {
    expectFieldErrors(await ctx.request({ method: 'GET', url: '/api/rooms/%E0%A4%A', token: tenant.instanceToken }), { url: 'invalid' });
    expectFieldErrors(await ctx.request({ method: 'GET', url: '/api/rooms/%', token: tenant.instanceToken }), { url: 'invalid' });
  });

  it('unknown paths and methods are 404 {error}', async () => {
    for (const [method, url] of [
      ['GET', '/api'],
      ['GET', '/api/'],
      ['GET', '/api/room'],
      ['PATCH', '/api/rooms'],
      ['DELETE', '/api/rooms'],
      ['GET', '/api/rooms/x/y/z'],
      ['GET', '/admin'],
      ['OPTIONS', '/api/rooms'],
      ['GET', '/API/ROOMS'],
    ] as const) {
      const res = await ctx.request({ method, url, token: tenant.instanceToken });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json()).toEqual({ error: 'Not found' });
    }
  });

  it('admin ids with tricks are 404', async () => {
    for (const id of ['..%2F..', '%00', "1'%20OR%201%3D1", 'x'.repeat(190), '00000000-0000-0000-0000-00000000000g']) {
      const res = await ctx.request({ method: 'POST', url: `/admin/tenants/${id}/organizations`, token: ADMIN_TOKEN, payload: { name: 'x' } });
      expect(res.statusCode, id).toBe(404);
    }
  });
});

describe('headers', () => {
  it('odd Authorization values are 401', async () => {
    for (const authorization of ['Bearer prl_é', 'Bearer \t prl_x', 'Bearer prl_'.padEnd(9000, 'a'), 'Bearer%20x', 'Bearer ../../etc/passwd']) {
      const res = await ctx.request({ method: 'GET', url: '/api/rooms', headers: { authorization } });
      expect(res.statusCode, authorization.slice(0, 30)).toBe(401);
    }
  });
});

describe('raw HTTP on a real socket', () => {
  let port: number;
  beforeAll(async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx.app.server.address() as net.AddressInfo).port;
  });

  function raw(request: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let data = '';
      // Reads until the server ends the connection or 3 s pass: the 3 s prove that nothing more comes (a
      // server waiting for the rest of a body may say nothing). A stalled machine makes it prove less,
      // never fail wrongly: no answer is allowed.
      const timer = setTimeout(() => {
        socket.destroy();
        resolve(data);
      }, 3000);
      socket.on('data', (chunk) => (data += chunk.toString('latin1')));
      socket.on('end', () => {
        clearTimeout(timer);
        resolve(data);
      });
      socket.on('error', (error) => {
        clearTimeout(timer);
        if (data) resolve(data);
        else reject(error);
      });
      socket.write(request);
    });
  }

  it.each([
    ['a bad request line', 'GARBAGE\r\n\r\n'],
    ['a header without a colon', 'GET /api/rooms HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n'],
    ['a body shorter than Content-Length', 'POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\nConnection: close\r\n\r\n{"name"'],
    ['conflicting Content-Length and chunked', 'POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['a NUL in the path', 'GET /api/rooms/\u0000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['bad percent-encoding', 'GET /api/rooms/%ZZ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
  ])('%s gets a 4xx (or a closed connection), never a 5xx', async (_label, request) => {
    const response = await raw(request);
    const status = /^HTTP\/1\.1 (\d{3})/.exec(response)?.[1];
    if (status) {
      expect(Number(status)).toBeGreaterThanOrEqual(400);
      expect(Number(status)).toBeLessThan(500);
    }
    // The server is still answering.
    const after = await ctx.request({ method: 'GET', url: '/api/rooms', token: tenant.instanceToken });
    expect(after.statusCode).toBe(200);
  });
});

it('nothing above was logged as an unexpected error', () => {
  expect(ctx.logs.filter((line) => line.includes('unexpected error'))).toEqual([]);
});

describe('webhook endpoint URLs (docs/webhooks.md "Safe to point anywhere")', () => {
  // Spellings of internal addresses that the URL parser turns into the address itself, and some it refuses.
  it.each([
    'http://2130706433/',
    'http://0x7f.1/',
    'http://017700000001/',
    'http://127.1/',
    'http://0/',
    'http://LOCALHOST./',
    'http://[::ffff:7f00:1]/',
    'http://[0:0:0:0:0:ffff:127.0.0.1]/',
    'http://[::]/',
    'http://[fe80::1%25eth0]/',
    'http://169.254.169.254.nip.io.invalid:99999/',
    'javascript:alert(1)//http://x',
    'http://a b/',
    'http://example.com:0/\u0000',
  ])('%s is 400 on url', async (url) => {
    const res = await ctx.request({ method: 'POST', url: '/api/webhook_endpoints', token: tenant.instanceToken, payload: { url } });
    expectFieldErrors(res, { url: 'invalid' });
  });
});


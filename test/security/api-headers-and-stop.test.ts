// Two smaller guarantees of the REST side (docs/security.md §1, §5): every
// JSON API answer carries the headers that keep its secrets out of caches and
// browsers, and a stopping server answers what it is working on, takes no new
// connection, and does not wait on idle or silent clients.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestContext, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';
import { eventually } from '../helpers/wait.js';

describe('API response headers', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  beforeAll(async () => {
    ctx = await createTestContext();
    tenant = await ctx.tenant();
  });
  afterAll(() => ctx.close());

  it('no-store, nosniff, no referrer and a deny-all CSP on every /api and /admin answer, errors included', async () => {
    const calls = [
      { method: 'GET' as const, url: '/api/rooms', token: tenant.instanceToken, status: 200 },
      { method: 'POST' as const, url: '/api/rooms', token: tenant.instanceToken, payload: roomBody(), status: 201 },
      { method: 'POST' as const, url: '/api/rooms', token: tenant.instanceToken, payload: {}, status: 400 },
      { method: 'GET' as const, url: '/api/rooms', status: 401 },
      { method: 'GET' as const, url: `/api/rooms/${'D'.repeat(22)}`, token: tenant.instanceToken, status: 404 },
      { method: 'GET' as const, url: '/admin/tenants', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, status: 200 },
      { method: 'GET' as const, url: '/admin/tenants', status: 401 },
    ];
    for (const { status, ...call } of calls) {
      const res = await ctx.request(call);
      expect(res.statusCode, call.url).toBe(status);
      expect(res.headers).toMatchObject({
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
      });
    }
  });
});

describe('stopping', () => {
  // Above the 30 s bound below: a stop that waits on the sockets fails on the bound, not on the test's limit.
  it('answers the request in progress (Connection: close), takes no new one, and does not wait for idle or silent sockets', { timeout: 120_000 }, async () => {
    const ctx = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
    const tenant = await ctx.tenant();
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (ctx.app.server.address() as net.AddressInfo).port;

    // A create that waits until the server is stopping.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const inProgress = new Promise<void>((r) => (started = r));
    const create = ctx.services.rooms.create;
    ctx.services.rooms.create = async (...args) => {
      started();
      await held;
      return create(...args);
    };

    const idle = await fetch(`http://127.0.0.1:${port}/healthz`); // leaves an idle keep-alive connection in fetch's pool
    expect(idle.status).toBe(200);
    const silent = net.connect(port, '127.0.0.1');
    silent.on('error', () => {});
    await new Promise((r) => silent.once('connect', r));

    const answer = fetch(`http://127.0.0.1:${port}/api/rooms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.instanceToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(roomBody()),
    });
    await inProgress;
    const stoppedAt = Date.now();
    const closing = ctx.app.close();
    // No new connection gets in any more, while the request in progress is still held.
    await eventually(
      () => fetch(`http://127.0.0.1:${port}/healthz`, { headers: { connection: 'close' } }).then(() => false, () => true),
      30_000,
      'new connections refused',
    );
    release();
    const res = await answer;
    expect(res.status).toBe(201);
    expect(res.headers.get('connection')).toBe('close');
    await closing;
    const stopMs = Date.now() - stoppedAt;
    console.log(`[bench] stopping with an idle and a silent socket took ${stopMs} ms`);
    // The bound is the behaviour: Node alone would wait 60 s for the silent socket and 72 s for a
    // kept-alive one. A working build stops in well under a second; 30 s is far above that on a loaded machine.
    expect(stopMs).toBeLessThan(30_000);
    expect(silent.destroyed || silent.readableEnded).toBe(true);
    await ctx.services.database.close();
  });
});

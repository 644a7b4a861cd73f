// /metrics in Prometheus text format, /healthz and /readyz.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';
import { startRealtimeServer } from '../helpers/realtime-server.js';

let ctx: TestContext;
let tenant: TestTenant;

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(() => ctx.close());

describe('operations endpoints', () => {
  it('exposes HTTP latency per route pattern and rooms by status', async () => {
    const created = await ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload: roomBody() });
    expect(created.statusCode).toBe(201);
    await ctx.request({ method: 'GET', url: `/api/rooms/${created.json().token}`, token: tenant.instanceToken });
    await ctx.request({ method: 'POST', url: `/api/rooms/${created.json().token}/close`, token: tenant.instanceToken });
    await ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload: roomBody() });

    const res = await ctx.request({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.body;
    // Route patterns, never the tokens of the URLs.
    expect(text).toMatch(/parley_http_request_duration_seconds_count\{method="POST",route="\/api\/rooms",status="201"\} 2/);
    expect(text).toMatch(/parley_http_request_duration_seconds_count\{method="GET",route="\/api\/rooms\/:token",status="200"\} 1/);
    expect(text).not.toContain(created.json().token);
    expect(text).toMatch(/parley_rooms\{status="active"\} 1/);
    expect(text).toMatch(/parley_rooms\{status="closed"\} 1/);
    expect(text).toMatch(/parley_participants_connected 0/);
    expect(text).toMatch(/parley_process_cpu_seconds_total/);
  });

  it('answers liveness and readiness with the database checked', async () => {
    expect((await ctx.request({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await ctx.request({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ok', checks: { database: 'ok' } });
  });
});

describe('signaling metrics', () => {
  // Starts a server of its own: on a loaded machine that alone can take most of the config's 20 s.
  it('counts well-formed signaling frames by type and open connections', { timeout: 120_000 }, async () => {
    const server = await startRealtimeServer();
    try {
      const metrics = async () => (await server.app.inject({ method: 'GET', url: '/metrics' })).body;
      const room = await server.createRoom();
      const client = await server.connect();
      const reply = await client.request({ type: 'join', joinToken: room.guest_token, displayName: 'Metrics' });
      expect(reply.type).toBe('joined');
      client.send('{not json');
      const during = await metrics();
      expect(during).toMatch(/parley_signaling_messages_total\{type="join"\} 1/);
      // A malformed frame is refused before it counts as a message.
      expect(during).not.toMatch(/type="undefined"/);
      expect(during).toMatch(/parley_node_connections 1/);
      client.socket.close();
      await expect.poll(metrics, { timeout: 15_000 }).toMatch(/parley_node_connections 0/);
    } finally {
      await server.close();
    }
  });
});

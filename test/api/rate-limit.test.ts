// Abuse limits on the REST API: requests per API token (429 with Retry-After
// and the RateLimit headers) and the request body limit (413)
// (docs/security.md §1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createTestContext, manualClock, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';

/** A test that starts an app or a server of its own: on a loaded machine that alone can take most of the config's 20 s. */
const OWN_APP = { timeout: 120_000 };

const clock = manualClock();
let ctx: TestContext;
let tenant: TestTenant;

beforeAll(async () => {
  ctx = await createTestContext({ clock, env: { RATE_LIMIT_PER_MINUTE: '5' } });
  tenant = await ctx.tenant();
});
afterAll(() => ctx.close());

const list = (token: string) => ctx.request({ method: 'GET', url: '/api/rooms', token });

describe('per-token rate limit', () => {
  it('allows a burst of the limit with counting headers, then answers 429 {error} with Retry-After', async () => {
    const token = (await tenant.organization()).token;
    for (let remaining = 4; remaining >= 0; remaining--) {
      const res = await list(token);
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('5');
      expect(res.headers['ratelimit-remaining']).toBe(String(remaining));
      expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
      expect(Number(res.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
    }
    const refused = await list(token);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ error: expect.stringContaining('Too many requests') });
    // One request comes back every 60/5 = 12 seconds.
    expect(refused.headers['retry-after']).toBe('12');
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(refused.headers['ratelimit-limit']).toBe('5');
  });

  it('counts per token: another token of the same tenant is not affected', async () => {
    const a = (await tenant.organization()).token;
    const b = (await tenant.organization()).token;
    for (let i = 0; i < 5; i++) await list(a);
    expect((await list(a)).statusCode).toBe(429);
    const other = await list(b);
    expect(other.statusCode).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('4');
  });

  it('gives a request back after Retry-After, and refused requests cost nothing', async () => {
    const token = (await tenant.organization()).token;
    for (let i = 0; i < 5; i++) await list(token);
    for (let i = 0; i < 10; i++) expect((await list(token)).statusCode).toBe(429);
    clock.advance(11_000);
    expect((await list(token)).statusCode).toBe(429);
    clock.advance(1_000);
    expect((await list(token)).statusCode).toBe(200);
    expect((await list(token)).statusCode).toBe(429);
    clock.advance(60_000);
    const full = await list(token);
    expect(full.statusCode).toBe(200);
    expect(full.headers['ratelimit-remaining']).toBe('4');
  });

  it('survives the clock jumping back: the token starts afresh instead of being throttled until the clock catches up', async () => {
    const token = (await tenant.organization()).token;
    for (let i = 0; i < 5; i++) await list(token);
    expect((await list(token)).statusCode).toBe(429);
    clock.advance(-60 * 60_000);
    const res = await list(token);
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit-remaining']).toBe('4');
    clock.advance(60 * 60_000);
  });

  it('applies to every /api endpoint and answer, errors included', async () => {
    const token = (await tenant.organization()).token;
    const calls = [
      { method: 'POST' as const, url: '/api/rooms', payload: roomBody({ meeting_duration: 0 }) },
      { method: 'GET' as const, url: '/api/rooms/unknownunknownunknown' },
      { method: 'GET' as const, url: '/api/room_feedbacks' },
      { method: 'GET' as const, url: '/api/room_feedbacks/summary' },
      { method: 'DELETE' as const, url: '/api/rooms/unknownunknownunknown' },
    ];
    const statuses = [];
    for (const call of calls) {
      const res = await ctx.request({ ...call, token });
      statuses.push(res.statusCode);
      expect(res.headers['ratelimit-limit']).toBe('5');
    }
    expect(statuses).toEqual([400, 404, 403, 403, 404]);
    const refused = await ctx.request({ method: 'POST', url: '/api/rooms', token, payload: roomBody() });
    expect(refused.statusCode).toBe(429);
  });

  it('leaves unauthenticated answers (401) without rate headers: there is no token to count', async () => {
    const res = await ctx.request({ method: 'GET', url: '/api/rooms', token: 'prl_' + 'x'.repeat(43) });
    expect(res.statusCode).toBe(401);
    expect(res.headers['ratelimit-limit']).toBeUndefined();
  });
});

describe('rate limit configuration', () => {
  it('is off with RATE_LIMIT_PER_MINUTE=0: no headers, no 429', OWN_APP, async () => {
    const free = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
    try {
      const t = await free.tenant();
      for (let i = 0; i < 30; i++) {
        const res = await free.request({ method: 'GET', url: '/api/rooms', token: t.instanceToken });
        expect(res.statusCode).toBe(200);
        expect(res.headers['ratelimit-limit']).toBeUndefined();
      }
    } finally {
      await free.close();
    }
  });

  it('defaults to 1200 per minute and refuses bad values naming the variable', () => {
    expect(loadConfig({}).rateLimitPerMinute).toBe(1200);
    for (const bad of ['-1', 'ten', '1.5', '2000000']) {
      expect(() => loadConfig({ RATE_LIMIT_PER_MINUTE: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ RATE_LIMIT_PER_MINUTE: bad })).toThrow(/RATE_LIMIT_PER_MINUTE/);
    }
  });
});

describe('request body limit', () => {
  it('answers a body over 64 KiB with 413 {error}, on create and update', async () => {
    const big = JSON.stringify(roomBody({ name: 'x', padding: 'y'.repeat(70_000) }));
    for (const [method, url] of [['POST', '/api/rooms'], ['PUT', '/api/rooms/unknownunknownunknown']] as const) {
      const res = await ctx.request({ method, url, token: tenant.instanceToken, payload: big, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(413);
      expect(res.json()).toEqual({ error: expect.any(String) });
    }
  });
});

// GET /api/room_feedbacks and /summary (docs/design.md#pagination): filters by
// rating and by calendar days in the tenant's timezone (to = inclusive to the
// end of that day), pagination, bad dates, tenant isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, manualClock, type TestContext, type TestTenant } from '../helpers/app.js';
import { createRoom, expectError, expectFieldErrors, parseLinks, pathOf } from '../helpers/api.js';

const clock = manualClock();
let ctx: TestContext;
let ny: TestTenant;
let participant = 0;

type Rating = 'good' | 'neutral' | 'bad';

async function record(tenant: TestTenant, timezone: string, at: string, rating: Rating, comment: string | null = null, roomToken = 'room-token-for-feedback') {
  clock.set(new Date(at));
  return ctx.services.feedback.record({ tenantId: tenant.id, timezone, roomToken, participantToken: `participant-${++participant}`, rating, comment });
}

// New York is on EDT (UTC-4) from 2026-03-08.
const NY = [
  { at: '2026-03-10T03:59:59Z', day: '2026-03-09', rating: 'good' as const, comment: null },
  { at: '2026-03-10T04:00:00Z', day: '2026-03-10', rating: 'neutral' as const, comment: 'Sound dropped once' },
  { at: '2026-03-11T03:30:00Z', day: '2026-03-10', rating: 'bad' as const, comment: 'Could not see the doctor 😞' },
  { at: '2026-03-11T04:30:00Z', day: '2026-03-11', rating: 'good' as const, comment: null },
];

beforeAll(async () => {
  // The manual clock jumps back and forth between scenarios (March, June, ...);
  // the per-token rate limiter would read a jump back as a burst, so it is off here.
  ctx = await createTestContext({ clock, env: { RATE_LIMIT_PER_MINUTE: '0' } });
  ny = await ctx.tenant({ timezone: 'America/New_York' });
  for (const f of NY) await record(ny, 'America/New_York', f.at, f.rating, f.comment);
});
afterAll(() => ctx.close());

const get = (url: string, token = ny.instanceToken) => ctx.request({ method: 'GET', url, token });
const times = (res: { json(): { room_feedbacks: { created_at: string }[] } }) => res.json().room_feedbacks.map((f) => f.created_at);
const iso = (at: string) => new Date(at).toISOString();

describe('GET /api/room_feedbacks', () => {
  it('lists every feedback oldest first, in the documented shape', async () => {
    const res = await get('/api/room_feedbacks');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.room_feedbacks).toEqual(
      NY.map((f) => ({
        room_token: 'room-token-for-feedback',
        rating: f.rating,
        ...(f.comment ? { feedback: f.comment } : {}),
        created_at: iso(f.at),
      })),
    );
    expect(res.headers).toMatchObject({ 'current-page': '1', 'page-limit': '20', 'total-pages': '1', 'total-count': '4' });
  });

  it.each([
    ['?from=2026-03-10', [1, 2, 3]],
    ['?to=2026-03-09', [0]],
    ['?from=2026-03-10&to=2026-03-10', [1, 2]],
    ['?from=2026-03-11&to=2026-03-11', [3]],
    ['?rating=good', [0, 3]],
    ['?rating=good&from=2026-03-10', [3]],
    ['?rating=bad&to=2026-03-10', [2]],
    ['?rating=neutral&from=2026-03-11', []],
    ['?from=2026-03-12', []],
    ['?from=2026-03-11&to=2026-03-09', []],
  ])('%s counts days in the tenant timezone', async (query, indexes) => {
    const res = await get(`/api/room_feedbacks${query}`);
    expect(res.statusCode).toBe(200);
    expect(times(res)).toEqual(indexes.map((i) => iso(NY[i]!.at)));
    expect(res.headers['total-count']).toBe(String(indexes.length));
    expect(res.headers['total-pages']).toBe('1');
  });

  it('the same instants fall on other days for a tenant in Tokyo', async () => {
    const tokyo = await ctx.tenant({ timezone: 'Asia/Tokyo' });
    await record(tokyo, 'Asia/Tokyo', '2026-03-10T14:59:59Z', 'good'); // 23:59:59 on the 10th in Tokyo
    await record(tokyo, 'Asia/Tokyo', '2026-03-10T15:00:00Z', 'bad'); // 00:00 on the 11th
    expect(times(await get('/api/room_feedbacks?to=2026-03-10', tokyo.instanceToken))).toEqual([iso('2026-03-10T14:59:59Z')]);
    expect(times(await get('/api/room_feedbacks?from=2026-03-11', tokyo.instanceToken))).toEqual([iso('2026-03-10T15:00:00Z')]);
  });

  it('a UTC tenant counts UTC days', async () => {
    const utc = await ctx.tenant();
    await record(utc, 'UTC', '2026-03-10T23:59:59.999Z', 'neutral');
    await record(utc, 'UTC', '2026-03-11T00:00:00Z', 'good');
    expect(times(await get('/api/room_feedbacks?to=2026-03-10', utc.instanceToken))).toEqual([iso('2026-03-10T23:59:59.999Z')]);
  });

  it('never shows another tenant’s feedback', async () => {
    const other = await ctx.tenant();
    const res = await get('/api/room_feedbacks', other.instanceToken);
    expect(res.json()).toEqual({ room_feedbacks: [] });
    expect(res.headers['total-count']).toBe('0');
    expect(res.headers['total-pages']).toBe('1');
  });

  it('paginates and follows Link through every feedback once, keeping the filters', async () => {
    const busy = await ctx.tenant({ timezone: 'Europe/Berlin' });
    const expected: string[] = [];
    for (let i = 0; i < 25; i++) {
      const at = new Date(Date.UTC(2026, 5, 1, 8, i)).toISOString();
      await record(busy, 'Europe/Berlin', at, i % 3 === 0 ? 'bad' : 'good');
      if (i % 3 !== 0) expected.push(at);
    }
    const seen: string[] = [];
    let url: string | undefined = '/api/room_feedbacks?rating=good&per_page=5&from=2026-06-01';
    let pages = 0;
    while (url) {
      const res = await get(url, busy.instanceToken);
      expect(res.statusCode).toBe(200);
      expect(res.headers['total-count']).toBe(String(expected.length));
      seen.push(...times(res));
      pages++;
      const links = parseLinks(res.headers.link);
      for (const link of Object.values(links)) {
        expect(new URL(link).searchParams.get('rating')).toBe('good');
        expect(new URL(link).searchParams.get('from')).toBe('2026-06-01');
      }
      url = links.next ? pathOf(links.next) : undefined;
      expect(pages).toBeLessThan(10);
    }
    expect(expected).toHaveLength(16);
    expect(pages).toBe(4);
    expect(seen).toEqual(expected);

    const beyond = await get('/api/room_feedbacks?rating=good&per_page=5&page=9', busy.instanceToken);
    expect(beyond.statusCode).toBe(200);
    expect(beyond.json()).toEqual({ room_feedbacks: [] });
    const last = await get('/api/room_feedbacks?rating=good&per_page=5&page=4', busy.instanceToken);
    expect(times(last)).toEqual(expected.slice(15));
    expect(parseLinks(last.headers.link).next).toBeUndefined();
  });
});

describe('GET /api/room_feedbacks/summary', () => {
  it('counts everything without filters, from and to null', async () => {
    const res = await get('/api/room_feedbacks/summary');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ total: 4, good: 2, neutral: 1, bad: 1, from: null, to: null });
  });

  it('counts one local day, echoing the filters', async () => {
    const res = await get('/api/room_feedbacks/summary?from=2026-03-10&to=2026-03-10');
    expect(res.json()).toEqual({ total: 2, good: 0, neutral: 1, bad: 1, from: '2026-03-10', to: '2026-03-10' });
  });

  it.each([
    ['?from=2026-03-11', { total: 1, good: 1, neutral: 0, bad: 0, from: '2026-03-11', to: null }],
    ['?to=2026-03-09', { total: 1, good: 1, neutral: 0, bad: 0, from: null, to: '2026-03-09' }],
    ['?from=2027-01-01', { total: 0, good: 0, neutral: 0, bad: 0, from: '2027-01-01', to: null }],
  ])('%s', async (query, expected) => {
    expect((await get(`/api/room_feedbacks/summary${query}`)).json()).toEqual(expected);
  });

  it('is zero for a tenant without feedback', async () => {
    const other = await ctx.tenant();
    expect((await get('/api/room_feedbacks/summary', other.instanceToken)).json()).toEqual({ total: 0, good: 0, neutral: 0, bad: 0, from: null, to: null });
  });
});

describe('bad filters are 400 on that attribute', () => {
  it.each(['2026-13-01', '2026-02-30', '20260310', '2026-3-1', 'yesterday', '2026-03-10T00:00:00Z', '', '%00', "2026-01-01' OR 1=1"])(
    'from/to = %j',
    async (value) => {
      for (const path of ['/api/room_feedbacks', '/api/room_feedbacks/summary']) {
        const q = encodeURIComponent(value);
        const res = await get(`${path}?from=${q}&to=${q}`);
        expect(res.statusCode, `${path} ${res.body}`).toBe(400);
        expect(res.json().map((e: { attribute: string }) => e.attribute).sort()).toEqual(['from', 'to']);
      }
    },
  );

  it('an unknown rating', async () => {
    expectFieldErrors(await get('/api/room_feedbacks?rating=excellent'), { rating: 'inclusion' });
    expectFieldErrors(await get('/api/room_feedbacks?rating=GOOD'), { rating: 'inclusion' });
  });

  it('bad page, per_page and cursor', async () => {
    expectFieldErrors(await get('/api/room_feedbacks?page=0&per_page=101'), { page: 'greater_than_or_equal_to', per_page: 'less_than_or_equal_to' });
    for (const cursor of ['after:2026-02-30.1', 'before:nonsense', 'after:2026-03-10.99999999999999999']) {
      const res = await get(`/api/room_feedbacks?cursor=${encodeURIComponent(cursor)}`);
      expectFieldErrors(res, { cursor: 'invalid' });
    }
  });
});

describe('recording', () => {
  it('one feedback per participant session; comments are trimmed and limited', async () => {
    const tenant = await ctx.tenant();
    const input = { tenantId: tenant.id, timezone: 'UTC', roomToken: 'r', participantToken: 'same-participant', rating: 'good' as const, comment: '  fine  ' };
    expect(await ctx.services.feedback.record(input)).toBe(true);
    expect(await ctx.services.feedback.record({ ...input, rating: 'bad' })).toBe(false);
    const res = await get('/api/room_feedbacks', tenant.instanceToken);
    expect(res.json().room_feedbacks).toEqual([{ room_token: 'r', rating: 'good', feedback: 'fine', created_at: clock.now().toISOString() }]);
    await expect(ctx.services.feedback.record({ ...input, participantToken: 'p2', comment: 'x'.repeat(2001) })).rejects.toThrow(/too long/);
  });

  it('feedback outlives its room', async () => {
    const tenant = await ctx.tenant();
    const room = await createRoom(ctx, tenant.instanceToken);
    await record(tenant, 'UTC', '2026-03-10T10:00:00Z', 'neutral', null, room.token);
    expect((await ctx.request({ method: 'DELETE', url: `/api/rooms/${room.token}`, token: tenant.instanceToken })).statusCode).toBe(204);
    const res = await get('/api/room_feedbacks', tenant.instanceToken);
    expect(res.json().room_feedbacks.map((f: { room_token: string }) => f.room_token)).toEqual([room.token]);
  });

  it('Organization tokens get 403 even with valid filters', async () => {
    const org = await ny.organization();
    expectError(await get('/api/room_feedbacks?from=2026-03-10', org.token), 403);
    expectError(await get('/api/room_feedbacks/summary', org.token), 403);
  });
});

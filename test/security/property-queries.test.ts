// Hostile query strings on the list endpoints (docs/security.md §3):
// GET /api/rooms, /api/room_feedbacks and /api/room_feedbacks/summary with odd,
// repeated, malformed and malicious parameters never get a 5xx and always get
// the documented shape; whatever they say, no room or feedback of another
// tenant comes back.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';
import { RUNS, nastyString, tally } from '../helpers/arbitraries.js';
import { checkedRequest } from '../helpers/api.js';

let ctx: TestContext;
let tenant: TestTenant;
let other: TestTenant;
const mine = new Set<string>();

beforeAll(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  tenant = await ctx.tenant({ timezone: 'Asia/Kolkata' });
  other = await ctx.tenant();
  for (let i = 0; i < 7; i++) {
    const res = await ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload: roomBody({ name: `Mine ${i}` }) });
    mine.add(res.json().token);
    await ctx.request({ method: 'POST', url: '/api/rooms', token: other.instanceToken, payload: roomBody({ name: `Theirs ${i}` }) });
  }
  const ratings = ['good', 'neutral', 'bad'] as const;
  for (let i = 0; i < 9; i++) {
    for (const [t, prefix] of [[tenant, 'mine'], [other, 'theirs']] as const) {
      await ctx.services.feedback.record({
        tenantId: t.id,
        timezone: 'UTC',
        roomToken: `${prefix}-room-${i}`,
        participantToken: `${prefix}-participant-${i}`,
        rating: ratings[i % 3]!,
        comment: i % 2 ? `Comment ${i} 🙂` : null,
      });
    }
  }
});
afterAll(() => ctx.close());

const KEYS = ['page', 'per_page', 'cursor', 'rating', 'from', 'to', 'sort', 'tenant_id', 'organization_id', '__proto__', 'constructor', 'page[]', 'a.b', ''];

const values = fc.oneof(
  // Dates get their own share: year 0000 was a 500 (PostgreSQL has no year 0).
  fc.tuple(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 })).map(
    ([y, m, d]) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`,
  ),
  fc.constantFrom('1', '2', '0', '-1', '1.5', '1e3', '1e400', '0x10', '99999999999999999999', '100', '101', ' 1', '1 ', '', 'good', 'bad', 'neutral', 'GOOD',
    '2026-03-10', '2026-02-30', '2026-13-01', '10-03-2026', '2026-03-10T00:00:00Z', '0000-01-01', '9999-12-31', '+002026-03-10', 'MTA', 'eyJpZCI6MX0', 'x'.repeat(101)),
  nastyString,
  fc.string({ maxLength: 30 }),
);

/** Encodes what encodeURIComponent can, and leaves some raw bytes and separators in on purpose. */
const encoded = (text: string, raw: boolean) => {
  if (raw) return text.replace(/[#\s]/g, '');
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
};

const queries = fc
  .tuple(fc.array(fc.tuple(fc.constantFrom(...KEYS), values, fc.boolean()), { maxLength: 6 }), fc.constantFrom('&', '&&', ';', '&amp;'))
  .map(([pairs, separator]) => pairs.map(([k, v, raw]) => `${encoded(k, raw)}=${encoded(v, raw)}`).join(separator));

describe('list endpoints with hostile query strings', () => {
  it('GET /api/rooms answers 200 with only this tenant\'s rooms, or a documented 400', { timeout: 60_000 }, async () => {
    const seen = tally();
    await fc.assert(
      fc.asyncProperty(queries, async (query) => {
        const res = await checkedRequest(ctx, { method: 'GET', url: `/api/rooms?${query}`, token: tenant.instanceToken });
        seen.add(res.statusCode);
        expect([200, 400]).toContain(res.statusCode);
        if (res.statusCode === 200) {
          for (const room of res.json().rooms) expect(mine.has(room.token)).toBe(true);
          for (const link of String(res.headers.link ?? '').matchAll(/<([^>]+)>/g)) expect(link[1]!.startsWith('http://parley.test/api/rooms?')).toBe(true);
          expect(Number(res.headers['total-count'])).toBe(mine.size);
        }
      }),
      { numRuns: RUNS },
    );
    seen.expectSome(200, 400);
  });

  it('GET /api/room_feedbacks answers 200 with only this tenant\'s feedback, or a documented 400', { timeout: 60_000 }, async () => {
    const seen = tally();
    await fc.assert(
      fc.asyncProperty(queries, async (query) => {
        const res = await checkedRequest(ctx, { method: 'GET', url: `/api/room_feedbacks?${query}`, token: tenant.instanceToken });
        seen.add(res.statusCode);
        expect([200, 400]).toContain(res.statusCode);
        if (res.statusCode === 200) for (const f of res.json().room_feedbacks) expect(f.room_token).toMatch(/^mine-room-/);
      }),
      { numRuns: RUNS, examples: [['from=0000-01-01'], ['to=0000-01-01&from=0001-01-01']] },
    );
    seen.expectSome(200, 400);
  });

  it('GET /api/room_feedbacks/summary answers 200 with counts of this tenant only, or a documented 400', { timeout: 60_000 }, async () => {
    const seen = tally();
    await fc.assert(
      fc.asyncProperty(queries, async (query) => {
        const res = await checkedRequest(ctx, { method: 'GET', url: `/api/room_feedbacks/summary?${query}`, token: tenant.instanceToken });
        seen.add(res.statusCode);
        expect([200, 400]).toContain(res.statusCode);
        if (res.statusCode === 200) {
          const summary = res.json();
          expect(summary.total).toBe(summary.good + summary.neutral + summary.bad);
          expect(summary.total).toBeLessThanOrEqual(9);
        }
      }),
      { numRuns: RUNS, examples: [['from=0000-01-01'], ['to=0000-12-31']] },
    );
    seen.expectSome(200, 400);
  });

  it('repeated parameters are a 400 on that parameter, not a 500 or a silent pick', async () => {
    for (const url of ['/api/rooms?page=1&page=2', '/api/rooms?per_page=5&per_page=6', '/api/room_feedbacks?rating=good&rating=bad', '/api/room_feedbacks/summary?from=2026-01-01&from=2026-01-02']) {
      const res = await checkedRequest(ctx, { method: 'GET', url, token: tenant.instanceToken });
      expect(res.statusCode, url).toBe(400);
      const attribute = /\?(\w+)=/.exec(url)![1];
      expect(res.json().map((e: { attribute: string }) => e.attribute)).toContain(attribute);
    }
  });
});

// Hostile input on the room endpoints (docs/security.md §3):
// random and malicious bodies, content types and path segments never get a
// 5xx, never stall, and always get the documented error shape.
import { LANGUAGES } from '../../src/shared/i18n/languages.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';
import { CONTENT_TYPES, RUNS, nastyJson, nastyNumber, nastyString, rawBodies, tally } from '../helpers/arbitraries.js';
import { checkedRequest, percentEncoded } from '../helpers/api.js';

let ctx: TestContext;
let tenant: TestTenant;
let org: { token: string };
let room: { token: string; name: string };

beforeAll(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  tenant = await ctx.tenant();
  org = await tenant.organization();
  await tenant.setFeature('permanent_rooms', true);
  await tenant.setFeature('additional_participants', true);
  const res = await ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload: roomBody({ name: 'Target' }) });
  room = res.json();
});
afterAll(() => ctx.close());

/** Text the schema accepts (1..max characters after trimming, no NUL), hostile content included: it reaches the database. */
const acceptedText = (max: number) =>
  fc
    .oneof(nastyString, fc.string({ unit: 'grapheme', minLength: 1, maxLength: max }), fc.string({ unit: 'binary', minLength: 1, maxLength: max }))
    .filter((t) => !t.includes('\u0000') && t.trim().length > 0 && [...t.trim()].length <= max);

/** A valid room body: hostile but acceptable names, far dates, every option. */
const validBodies = fc.record(
  {
    name: acceptedText(255),
    meeting_duration: fc.integer({ min: 1, max: 1440 }),
    scheduled_at: fc.oneof(
      fc.date({ min: new Date('1900-01-01'), max: new Date('9998-12-31'), noInvalidDate: true }).map((d) => d.toISOString()),
      fc.constantFrom('2026-03-10T14:00:00+14:00', '2026-03-10T14:00:00-12:00', '2026-03-10T14:00:00.123456789Z'),
    ),
    return_url: fc.webUrl({ withQueryParameters: true, withFragments: true }),
    host_return_url: fc.oneof(fc.webUrl(), fc.constant(null)),
    host_display_name: fc.oneof(acceptedText(100), fc.constant(null)),
    guest_display_name: fc.oneof(acceptedText(100), fc.constant(null)),
    enable_chat: fc.boolean(),
    enable_screenshare: fc.boolean(),
    enable_invites: fc.boolean(),
    enable_audio_indicator: fc.boolean(),
    enable_waiting_room: fc.boolean(),
    locale: fc.constantFrom(...LANGUAGES, null),
    additional_guest_count: fc.integer({ min: 0, max: 20 }),
    permanent: fc.boolean(),
  },
  { requiredKeys: ['name', 'meeting_duration', 'scheduled_at'] },
);

const FIELDS = ['name', 'meeting_duration', 'scheduled_at', 'return_url', 'host_return_url', 'host_display_name', 'guest_display_name', 'enable_chat',
  'enable_screenshare', 'enable_invites', 'enable_audio_indicator', 'enable_waiting_room', 'locale', 'additional_guest_count', 'permanent', 'doctor_id', 'unknown_field', '__proto__', 'constructor'];

/** A valid body with up to three fields replaced by anything at all (often none, so that creates succeed too). */
const roomBodies = fc
  .tuple(
    validBodies,
    fc.oneof(
      { weight: 2, arbitrary: fc.constant([] as [string, unknown][]) },
      { weight: 3, arbitrary: fc.array(fc.tuple(fc.constantFrom(...FIELDS), fc.oneof(nastyJson, nastyNumber, nastyString)), { minLength: 1, maxLength: 3 }) },
    ),
  )
  .map(([body, corruptions]) => {
    const result: Record<string, unknown> = { ...body };
    // defineProperty: "__proto__" becomes a key of the JSON text, not the object's prototype.
    for (const [field, value] of corruptions) Object.defineProperty(result, field, { value, enumerable: true, configurable: true, writable: true });
    return result;
  });

/**
 * The name as stored: trimmed, and well-formed Unicode. A lone surrogate is not
 * a character and has no UTF-8 form; it becomes U+FFFD, as in any browser.
 */
const stored = (name: unknown) => String(name).trim().replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

const token = () => fc.constantFrom(tenant.instanceToken, org.token);

describe('room bodies', () => {
  it('POST /api/rooms: random and malicious bodies get 201, or a documented 4xx', { timeout: 60_000 }, async () => {
    const seen = tally();
    await fc.assert(
      fc.asyncProperty(roomBodies, token(), async (body, auth) => {
        const res = await checkedRequest(ctx, { method: 'POST', url: '/api/rooms', token: auth, payload: body as object });
        seen.add(res.statusCode);
        expect([201, 400, 422]).toContain(res.statusCode);
        if (res.statusCode === 201) {
          // What was stored is what the schema allowed: a name of 1..255 characters after trimming, no NUL.
          const created = res.json();
          expect(created.name).toBe(stored(body.name));
          expect(created.name).not.toContain('\u0000');
          expect(created.meeting_duration).toBe(body.meeting_duration);
        }
      }),
      { numRuns: RUNS },
    );
    // The run reached past the schema into the service and the database, not only the validator.
    seen.expectSome(201, 400);
  });

  it('PUT /api/rooms/:token: random and malicious bodies on a real room get 200, or a documented 4xx', { timeout: 60_000 }, async () => {
    const seen = tally();
    await fc.assert(
      fc.asyncProperty(roomBodies, async (body) => {
        const res = await checkedRequest(ctx, { method: 'PUT', url: `/api/rooms/${room.token}`, token: tenant.instanceToken, payload: body as object });
        seen.add(res.statusCode);
        expect([200, 400, 422]).toContain(res.statusCode);
        if (res.statusCode === 200) expect(res.json().name).toBe(stored(body.name));
      }),
      { numRuns: RUNS },
    );
    seen.expectSome(200, 400);
  });

  it('raw text bodies (deep nesting, prototype keys, broken JSON) under any content type get a documented 4xx or success', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(rawBodies, fc.constantFrom(...CONTENT_TYPES), fc.constantFrom('POST', 'PUT'), async (body, contentType, method) => {
        const url = method === 'POST' ? '/api/rooms' : `/api/rooms/${room.token}`;
        const res = await checkedRequest(ctx, {
          method,
          url,
          token: tenant.instanceToken,
          payload: body,
          headers: contentType ? { 'content-type': contentType } : {},
        });
        expect([200, 201, 400, 413, 415, 422]).toContain(res.statusCode);
      }),
      { numRuns: RUNS },
    );
    // Nothing got polluted on the way.
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers bodies over 64 KiB with 413 {error}, whatever they contain', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 65_537, max: 400_000 }), fc.constantFrom('[', 'a', '{"name":"', ' '), async (size, filler) => {
        const res = await checkedRequest(ctx, {
          method: 'POST',
          url: '/api/rooms',
          token: tenant.instanceToken,
          payload: filler.repeat(Math.ceil(size / filler.length)),
          headers: { 'content-type': 'application/json' },
        });
        expect(res.statusCode).toBe(413);
      }),
      { numRuns: Math.min(RUNS, 30) },
    );
  });
});

describe('room paths', () => {
  const segment = fc.oneof(
    nastyString.map(percentEncoded),
    fc.constantFrom('..', '.', '%2e%2e', '..%2f..%2fadmin', '%2F', '%00', '%', '%zz', '%C0%AE', ';x', 'x;y=z', 'a'.repeat(199), 'a'.repeat(201), 'A'.repeat(64), 'A'.repeat(65), '*', '%20', '+'),
    fc.stringMatching(/^[A-Za-z0-9_-]{16,64}$/),
  );
  const routes = fc.constantFrom(
    ['GET', ''],
    ['HEAD', ''],
    ['PUT', ''],
    ['DELETE', ''],
    ['PATCH', ''],
    ['OPTIONS', ''],
    ['POST', '/close'],
    ['PUT', '/close'],
    ['PATCH', '/close'],
    ['GET', '/close'],
    ['POST', '/close/extra'],
  );

  it('random room tokens and path tricks get a documented answer and never touch another room', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(segment, routes, token(), async (seg, [method, suffix], auth) => {
        const res = await checkedRequest(ctx, {
          method: method as 'GET',
          url: `/api/rooms/${seg}${suffix}`,
          token: auth,
          ...(method === 'PUT' && !suffix ? { payload: roomBody() } : {}),
        });
        expect([200, 204, 400, 404, 405, 413, 415]).toContain(res.statusCode);
      }),
      { numRuns: RUNS },
    );
    const target = await ctx.request({ method: 'GET', url: `/api/rooms/${room.token}`, token: tenant.instanceToken });
    expect(target.statusCode).toBe(200);
    expect(target.json().status).toBe('active');
  });
});

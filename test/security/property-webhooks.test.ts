// Hostile input on /api/webhook_endpoints (docs/security.md §3, docs/webhooks.md):
// random bodies get 201 or a documented 4xx, never a 5xx; and no spelling of
// an internal address is ever accepted as a target (WEBHOOKS_ALLOW_PRIVATE_NETWORKS off).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInternalAddress } from '../../src/domain/webhooks/address-policy.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks/webhook-events.js';
import { createTestContext, type TestContext, type TestTenant } from '../helpers/app.js';
import { RUNS, nastyJson, nastyString, tally } from '../helpers/arbitraries.js';
import { checkedRequest } from '../helpers/api.js';

let ctx: TestContext;
let tenant: TestTenant;

beforeAll(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  tenant = await ctx.tenant();
});
afterAll(() => ctx.close());

/** Clears the tenant's endpoints now and then: the 20-endpoint limit must not decide every answer. */
async function clearEndpoints() {
  await ctx.services.database.db.deleteFrom('webhook_endpoints').where('tenant_id', '=', tenant.id).execute();
}

const bodies = fc.record(
  {
    url: fc.oneof(fc.webUrl({ withQueryParameters: true }), fc.constant('https://93.184.216.34/hooks'), nastyString, nastyJson),
    events: fc.oneof(fc.subarray([...WEBHOOK_EVENT_TYPES], { minLength: 1 }), fc.array(fc.oneof(nastyString, fc.constantFrom(...WEBHOOK_EVENT_TYPES))), nastyJson),
    description: fc.oneof(nastyString, fc.constant(null), nastyJson),
  },
  { requiredKeys: [] },
);

const octet = fc.integer({ min: 0, max: 255 });
/** Internal IPv4 addresses of every class, written the ways a URL parser reads as that address. */
const internalIpv4 = fc
  .oneof(
    fc.tuple(fc.constant(127), octet, octet, octet),
    fc.tuple(fc.constant(10), octet, octet, octet),
    fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), octet, octet),
    fc.tuple(fc.constant(192), fc.constant(168), octet, octet),
    fc.tuple(fc.constant(169), fc.constant(254), octet, octet),
    fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), octet, octet),
    fc.tuple(fc.constant(0), octet, octet, octet),
    fc.tuple(fc.integer({ min: 224, max: 255 }), octet, octet, octet),
  )
  .chain(([a, b, c, d]) => {
    const n = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
    const hex = (x: number) => x.toString(16).padStart(4, '0');
    return fc.constantFrom(
      `${a}.${b}.${c}.${d}`,
      String(n),
      `0x${n.toString(16)}`,
      `0${a.toString(8)}.${b}.${c}.${d}`,
      `[::ffff:${a}.${b}.${c}.${d}]`,
      `[::ffff:${hex((a << 8) | b)}:${hex((c << 8) | d)}]`,
      `[0:0:0:0:0:ffff:${a}.${b}.${c}.${d}]`,
    );
  });
const internalIpv6 = fc.constantFrom('[::1]', '[::]', '[fe80::1]', '[fd00::abcd]', '[fc12::1]', '[ff02::1]', '[64:ff9b::a00:1]', '[::127.0.0.1]');

describe('POST /api/webhook_endpoints', () => {
  it('random and malicious bodies get 201 or a documented 4xx', { timeout: 60_000 }, async () => {
    const seen = tally();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        if (++n % 15 === 0) await clearEndpoints();
        const res = await checkedRequest(ctx, { method: 'POST', url: '/api/webhook_endpoints', token: tenant.instanceToken, payload: body as object });
        seen.add(res.statusCode);
        expect([201, 400, 422]).toContain(res.statusCode);
        if (res.statusCode === 201) {
          const created = res.json();
          expect(created.url).toBe(body.url);
          expect(created.secret).toMatch(/^whsec_/);
        }
      }),
      { numRuns: RUNS, examples: [[{ url: 'https://93.184.216.34/hooks' }]] },
    );
    seen.expectSome(201, 400);
  });

  it('never accepts an internal address, however it is written', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(internalIpv4, internalIpv6), fc.constantFrom('http', 'https'), fc.option(fc.integer({ min: 1, max: 65535 })), async (host, scheme, port) => {
        const url = `${scheme}://${host}${port === null ? '' : `:${port}`}/hooks`;
        // The oracle: what the URL parser makes of the host is an internal address.
        expect(isInternalAddress(new URL(url).hostname.replace(/^\[|\]$/g, ''))).toBe(true);
        const res = await checkedRequest(ctx, { method: 'POST', url: '/api/webhook_endpoints', token: tenant.instanceToken, payload: { url } });
        expect(res.statusCode, url).toBe(400);
        expect(res.json()).toEqual([expect.objectContaining({ attribute: 'url', type: 'invalid' })]);
      }),
      { numRuns: RUNS },
    );
  });
});

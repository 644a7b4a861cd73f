// Hostile input on the operator admin API (docs/security.md §3):
// random bodies and ids never get a 5xx and always get the documented shape,
// and no call can issue a token that reaches into another tenant.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestContext, type TestContext, type TestTenant } from '../helpers/app.js';
import { RUNS, nastyJson, nastyString, tally } from '../helpers/arbitraries.js';
import { checkedRequest, percentEncoded } from '../helpers/api.js';

let ctx: TestContext;
let tenant: TestTenant;
let other: TestTenant;
let ownOrg: string;
let otherOrg: string;

beforeAll(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  tenant = await ctx.tenant();
  other = await ctx.tenant();
  ownOrg = (await tenant.organization()).id;
  otherOrg = (await other.organization()).id;
});
afterAll(() => ctx.close());

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

const ids = () =>
  fc.oneof(
    fc.constantFrom(tenant.id, other.id, ownOrg, otherOrg, tenant.id.toUpperCase(), `urn:uuid:${tenant.id}`, '00000000-0000-0000-0000-000000000000', `${tenant.id} `, '%ED%A0%80', '%C0%AE'),
    fc.uuid(),
    nastyString.map(percentEncoded),
  );

const sometimes = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: nastyJson });
const bodies = () =>
  fc.record(
    {
      name: sometimes(fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), nastyString)),
      default_return_url: sometimes(fc.oneof(fc.webUrl(), nastyString, fc.constant(null))),
      timezone: sometimes(fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Kolkata', 'Mars/Olympus', '', 'utc', '../../etc/localtime', null)),
      organization_id: sometimes(fc.oneof(fc.constantFrom(ownOrg, otherOrg, null), fc.uuid())),
      label: sometimes(fc.oneof(fc.string({ maxLength: 300 }), nastyString, fc.constant(null))),
      enabled: sometimes(fc.oneof(fc.boolean(), fc.constant(null))),
    },
    { requiredKeys: [] },
  );

const routes = fc.constantFrom(
  ['POST', '/admin/tenants'],
  ['GET', '/admin/tenants'],
  ['POST', '/admin/tenants/{id}/organizations'],
  ['POST', '/admin/organizations/{id}/doctors'],
  ['POST', '/admin/tenants/{id}/tokens'],
  ['DELETE', '/admin/tokens/{id}'],
  ['PUT', '/admin/tenants/{id}/features/{feature}'],
  ['PUT', '/admin/organizations/{id}/features/{feature}'],
);

function routable(segment: string): boolean {
  try {
    const decoded = decodeURIComponent(segment);
    // '.' and '..' (and '%2e' and its like, which URL parsers read as dots) are no segment: the
    // path is resolved without them ('/admin/organizations/./doctors' is '/admin/organizations/doctors').
    return decoded.length <= 200 && decoded !== '.' && decoded !== '..';
  } catch {
    return false;
  }
}

describe('admin API with hostile input', () => {
  it('random bodies, ids and feature names get a documented answer; tokens never cross tenants', { timeout: 60_000 }, async () => {
    const seen = tally();
    await fc.assert(
      fc.asyncProperty(
        routes,
        ids(),
        fc.oneof(fc.constantFrom('permanent_rooms', 'additional_participants', 'PERMANENT_ROOMS', '__proto__'), nastyString.map((s) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, '')))),
        bodies(),
        async ([method, pattern], id, feature, body) => {
          const url = pattern!.replace('{id}', id).replace('{feature}', feature);
          const res = await checkedRequest(ctx, { method: method as 'GET', url, headers: admin, ...(method === 'GET' || method === 'DELETE' ? {} : { payload: body }) });
          seen.add(res.statusCode);
          expect([200, 201, 204, 400, 404]).toContain(res.statusCode);
          if (res.statusCode === 201 && pattern === '/admin/tenants/{id}/tokens') {
            // An organization token is issued only inside the organization's own tenant.
            const issued = res.json();
            const principal = await ctx.services.auth.authenticate(`Bearer ${issued.token}`);
            if (principal.organizationId !== null) {
              const org = await ctx.services.database.db.selectFrom('organizations').select('tenant_id').where('id', '=', principal.organizationId).executeTakeFirstOrThrow();
              expect(org.tenant_id).toBe(principal.tenantId);
            }
          }
        },
      ),
      { numRuns: RUNS * 2, examples: [[['POST', '/admin/tenants/{id}/tokens'], tenant.id, 'permanent_rooms', { organization_id: otherOrg }]] },
    );
    seen.expectSome(200, 201, 400, 404);
  });

  it('refuses every admin call without the admin token, whatever else the request carries', { timeout: 60_000 }, async () => {
    const authorization = fc.oneof(
      nastyString.map((s) => `Bearer ${s}`),
      fc.constantFrom(`Bearer ${ADMIN_TOKEN.slice(0, -1)}`, `Bearer ${ADMIN_TOKEN}x`, `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`, ADMIN_TOKEN, `Bearer ${ADMIN_TOKEN.toUpperCase()}`),
      fc.constant('').map(() => `Bearer ${tenant.instanceToken}`),
    );
    await fc.assert(
      fc.asyncProperty(routes, ids(), authorization, bodies(), async ([method, pattern], id, value, body) => {
        const url = pattern!.replace('{id}', id).replace('{feature}', 'permanent_rooms');
        let res;
        try {
          res = await checkedRequest(ctx, { method: method as 'GET', url, headers: { authorization: value }, ...(method === 'GET' || method === 'DELETE' ? {} : { payload: body }) });
        } catch (error) {
          if (/Invalid character in header|ERR_INVALID_CHAR/.test(String(error))) return;
          throw error;
        }
        // A path the router cannot take (undecodable, or a segment longer than any id) names nothing
        // and is refused before authentication, as an unknown path is; it never gets further.
        expect(res.statusCode).toBe(!pattern!.includes('{id}') || routable(id) ? 401 : res.statusCode === 400 ? 400 : 404);
      }),
      { numRuns: RUNS },
    );
  });
});

// A room found by its token is found through the token's unique index, with
// the caller's scope checked on the row (byToken in src/domain/rooms/room-rows.repo.ts),
// also on a table without statistics: PGlite never has any (no autovacuum),
// and there the tenant's index used to tie with the token's, so that GET room
// read every room of the tenant.
import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { byToken } from '../../src/domain/rooms/room-rows.repo.js';
import { createRoom } from '../helpers/api.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
});
afterAll(() => ctx.close());

async function plan(scope: { tenantId: string; organizationId: string | null }, token: string): Promise<string> {
  const { db } = ctx.services.database;
  const compiled = db.selectFrom('rooms').select('id').where(byToken(scope, token)).compile();
  const { rows } = await db.executeQuery<Record<string, string>>(CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]));
  return rows.map((row) => Object.values(row)[0]).join('\n');
}

describe('finding a room by its token', () => {
  it('uses the token index, not the tenant or organization list, for both token kinds', async () => {
    const tenant = await ctx.tenant();
    const org = await tenant.organization();
    const rooms = [];
    for (let i = 0; i < 30; i++) rooms.push(await createRoom(ctx, i % 2 ? org.token : tenant.instanceToken, { name: `Room ${i}` }));
    for (const organizationId of [null, org.id]) {
      const explained = await plan({ tenantId: tenant.id, organizationId }, rooms[1]!.token);
      expect(explained, explained).toContain('rooms_token_key');
      expect(explained).not.toMatch(/rooms_tenant_list_idx|rooms_organization_list_idx/);
    }
  });

  it("still checks the scope: another tenant's token finds nothing, an organization sees only its rooms", async () => {
    const [tenant, other] = [await ctx.tenant(), await ctx.tenant()];
    const org = await tenant.organization();
    const [inTenant, inOrg, elsewhere] = [
      await createRoom(ctx, tenant.instanceToken),
      await createRoom(ctx, org.token),
      await createRoom(ctx, other.instanceToken),
    ];
    const found = async (scope: { tenantId: string; organizationId: string | null }, token: string) =>
      (await ctx.services.database.db.selectFrom('rooms').select('token').where(byToken(scope, token)).execute()).map((row) => row.token);
    expect(await found({ tenantId: tenant.id, organizationId: null }, inTenant.token)).toEqual([inTenant.token]);
    expect(await found({ tenantId: tenant.id, organizationId: null }, inOrg.token)).toEqual([inOrg.token]);
    expect(await found({ tenantId: tenant.id, organizationId: null }, elsewhere.token)).toEqual([]);
    expect(await found({ tenantId: tenant.id, organizationId: org.id }, inOrg.token)).toEqual([inOrg.token]);
    expect(await found({ tenantId: tenant.id, organizationId: org.id }, inTenant.token)).toEqual([]);
  });
});

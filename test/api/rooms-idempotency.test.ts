// Idempotency-Key on POST /api/rooms: a retried create returns the room the
// first attempt made and never makes a second one (docs/security.md §2).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, manualClock, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';

const clock = manualClock();
let ctx: TestContext;
let tenant: TestTenant;

beforeAll(async () => {
  ctx = await createTestContext({ clock });
  tenant = await ctx.tenant();
});
afterAll(() => ctx.close());

async function roomCount(tenantId: string): Promise<number> {
  const row = await ctx.services.database.db
    .selectFrom('rooms')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const create = (key: string | undefined, body: Record<string, unknown>, token = tenant.instanceToken) =>
  ctx.request({ method: 'POST', url: '/api/rooms', token, payload: body, headers: key === undefined ? {} : { 'idempotency-key': key } });

describe('Idempotency-Key on POST /api/rooms', () => {
  it('answers a retry with the same room, marked as a replay, and creates one room only', async () => {
    const before = await roomCount(tenant.id);
    const first = await create('retry-1', roomBody({ name: 'Retry me' }));
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // Same fields in another order, with an unknown field: the same request.
    const second = await create('retry-1', { scheduled_at: '2026-03-10T14:00:00Z', meeting_duration: 30, name: 'Retry me', ignored: [1] });
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json()).toEqual(first.json());
    expect(second.headers.location).toBe(first.headers.location);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(await roomCount(tenant.id)).toBe(before + 1);
  });

  it('replays the room as it is now, not as it was created', async () => {
    const first = await create('then-renamed', roomBody({ name: 'Before' }));
    const token = first.json().token;
    const put = await ctx.request({ method: 'PUT', url: `/api/rooms/${token}`, token: tenant.instanceToken, payload: roomBody({ name: 'After' }) });
    expect(put.statusCode).toBe(200);
    const retry = await create('then-renamed', roomBody({ name: 'Before' }));
    expect(retry.statusCode).toBe(201);
    expect(retry.json()).toMatchObject({ token, name: 'After' });
  });

  it('answers the same key with a different body with 422 {error} and creates nothing', async () => {
    await create('reused', roomBody({ name: 'One' }));
    const before = await roomCount(tenant.id);
    for (const body of [roomBody({ name: 'Two' }), roomBody({ name: 'One', enable_chat: false }), roomBody({ name: 'One', return_url: null })]) {
      const res = await create('reused', body);
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({ error: expect.stringContaining('Idempotency-Key') });
    }
    expect(await roomCount(tenant.id)).toBe(before);
  });

  it('scopes keys per API token: another token with the same key gets its own room', async () => {
    const org = await tenant.organization();
    const mine = await create('shared-key', roomBody());
    const theirs = await create('shared-key', roomBody(), org.token);
    expect(mine.statusCode).toBe(201);
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json().token).not.toBe(mine.json().token);
  });

  it('keeps nothing of a failed create: after a 400 or 422 the key still creates the room', async () => {
    const bad = await create('after-failure', roomBody({ meeting_duration: 0 }));
    expect(bad.statusCode).toBe(400);
    const refused = await create('after-failure', roomBody({ permanent: true }));
    expect(refused.statusCode).toBe(422);
    const good = await create('after-failure', roomBody());
    expect(good.statusCode).toBe(201);
    expect(good.headers['idempotent-replayed']).toBeUndefined();
  });

  it('answers 409 {error} when the room of the key was deleted, instead of making a second one', async () => {
    const first = await create('deleted-room', roomBody());
    const del = await ctx.request({ method: 'DELETE', url: `/api/rooms/${first.json().token}`, token: tenant.instanceToken });
    expect(del.statusCode).toBe(204);
    const before = await roomCount(tenant.id);
    const retry = await create('deleted-room', roomBody());
    expect(retry.statusCode).toBe(409);
    expect(retry.json()).toEqual({ error: expect.stringContaining('no longer exists') });
    expect(await roomCount(tenant.id)).toBe(before);
  });

  it('creates exactly one room for concurrent retries with the same key', async () => {
    const before = await roomCount(tenant.id);
    const results = await Promise.all(Array.from({ length: 12 }, () => create('concurrent', roomBody({ name: 'Race' }))));
    expect(results.map((r) => r.statusCode)).toEqual(Array(12).fill(201));
    expect(new Set(results.map((r) => r.json().token)).size).toBe(1);
    expect(results.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(await roomCount(tenant.id)).toBe(before + 1);
  });

  it('accepts a quoted key as the same key, and rejects malformed keys with 400 on Idempotency-Key', async () => {
    const bare = await create('quoted-or-not', roomBody());
    const quoted = await create('"quoted-or-not"', roomBody());
    expect(quoted.json().token).toBe(bare.json().token);
    for (const key of ['', '   ', 'x'.repeat(256), 'with space', 'naïve', '""']) {
      const res = await create(key, roomBody());
      expect(res.statusCode, JSON.stringify(key)).toBe(400);
      expect(res.json()).toEqual([{ attribute: 'Idempotency-Key', type: expect.any(String), message: expect.any(String) }]);
    }
  });

  it('forgets keys after 24 hours: the purge job removes them and the key makes a new room', async () => {
    const first = await create('day-old', roomBody());
    clock.advance(24 * 60 * 60 * 1000 + 1000);
    // Expired but not purged yet: not replayed.
    const second = await create('day-old', roomBody());
    expect(second.statusCode).toBe(201);
    expect(second.json().token).not.toBe(first.json().token);
    clock.advance(24 * 60 * 60 * 1000 + 1000);
    const purged = await ctx.services.idempotency.purgeExpired();
    expect(purged).toBeGreaterThanOrEqual(1);
    const left = await ctx.services.database.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'day-old').execute();
    expect(left).toEqual([]);
  });
});

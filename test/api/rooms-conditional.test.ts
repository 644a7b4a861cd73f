// ETag on room responses and If-Match on PUT, DELETE and close: a write based
// on an outdated read is refused with 412 instead of clobbering the newer one
// (docs/security.md §2).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { RoomInput } from '../../src/domain/rooms/rooms.service.js';
import { createTestContext, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';

let ctx: TestContext;
let tenant: TestTenant;

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(() => ctx.close());

async function newRoom(name = 'Conditional'): Promise<{ token: string; etag: string }> {
  const res = await ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload: roomBody({ name }) });
  expect(res.statusCode).toBe(201);
  return { token: res.json().token, etag: String(res.headers.etag) };
}

const put = (token: string, body: Record<string, unknown>, ifMatch?: string) =>
  ctx.request({ method: 'PUT', url: `/api/rooms/${token}`, token: tenant.instanceToken, payload: body, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } });
const get = (token: string) => ctx.request({ method: 'GET', url: `/api/rooms/${token}`, token: tenant.instanceToken });
const expect412 = (res: Awaited<ReturnType<typeof get>>) => {
  expect(res.statusCode).toBe(412);
  expect(res.json()).toEqual({ error: expect.stringContaining('If-Match') });
};

describe('ETag', () => {
  it('is a strong validator on create, get and update, and changes with every update', async () => {
    const { token, etag } = await newRoom();
    expect(etag).toMatch(/^"\d+"$/);
    expect((await get(token)).headers.etag).toBe(etag);
    const updated = await put(token, roomBody({ name: 'Renamed' }));
    expect(updated.statusCode).toBe(200);
    expect(updated.headers.etag).not.toBe(etag);
    expect((await get(token)).headers.etag).toBe(updated.headers.etag);
  });

  // Each statement that writes a room raises its version itself (rooms.repo.ts
  // NEXT_VERSION; no trigger since migration 0011): every one of them is here.
  it('goes up by exactly one with every write of the representation, PUT and the call lifecycle alike, and not for presence bookkeeping', async () => {
    await tenant.setFeature('permanent_rooms', true);
    await tenant.setFeature('additional_participants', true);
    const { token, etag } = await newRoom();
    const { db } = ctx.services.database;
    const repos = ctx.services.repos;
    const id = (await db.selectFrom('rooms').select('id').where('token', '=', token).executeTakeFirstOrThrow()).id;
    const version = async () => Number(String((await get(token)).headers.etag).replaceAll('"', ''));
    let expected = Number(etag.replaceAll('"', ''));
    const step = async (label: string, write: () => Promise<unknown>, raises: boolean) => {
      await write();
      if (raises) expected += 1;
      expect(await version(), label).toBe(expected);
    };
    const byId = sql<boolean>`id = ${id}`;
    const now = () => new Date();

    await step('PUT, settings only (the compiled statement)', () => put(token, roomBody({ name: 'One' })), true);
    await step('PUT with permanent (read first, one write)', () => put(token, roomBody({ name: 'Two', permanent: true })), true);
    await step('PUT adding a guest link (a transaction)', () => put(token, roomBody({ name: 'Three', additional_guest_count: 1 })), true);
    await step('PUT with the same settings again (updated_at changes)', () => put(token, roomBody({ name: 'Three', additional_guest_count: 1 })), true);
    await step('the first join starts the room', () => db.transaction().execute((tx) => repos.rooms.start(tx, byId, now())), true);
    await step('a further join of a started room', () => db.transaction().execute((tx) => repos.rooms.start(tx, byId, now())), false);
    await step('a guest who waits only locks the room', () => db.transaction().execute((tx) => repos.rooms.start(tx, byId, now(), { unless: sql<boolean>`true` })), false);
    await step('the room empties (bookkeeping)', () => repos.rooms.markEmptied(db, [id], now()), false);
    await step('the grace passes: the room ends', () => repos.rooms.endEmptyRooms(new Date(Date.now() + 60_000), now()), true);
    await step('a join starts the ended room again', () => db.transaction().execute((tx) => repos.rooms.start(tx, byId, now())), true);
    await step('close', () => repos.rooms.close(id, now()), true);
    await step('close of a closed room writes nothing', () => repos.rooms.close(id, now()), false);
    expect((await get(token)).json().status).toBe('closed');
  });
});

describe('If-Match', () => {
  it('lets a PUT through with the current ETag and refuses an outdated one with 412, changing nothing', async () => {
    const { token, etag } = await newRoom('Original');
    const first = await put(token, roomBody({ name: 'First writer' }), etag);
    expect(first.statusCode).toBe(200);
    expect412(await put(token, roomBody({ name: 'Second writer' }), etag));
    const now = await get(token);
    expect(now.json().name).toBe('First writer');
    expect(now.headers.etag).toBe(first.headers.etag);
  });

  it('refuses an outdated DELETE with 412 and keeps the room; deletes with the current ETag', async () => {
    const { token, etag } = await newRoom();
    const updated = await put(token, roomBody({ name: 'Changed since' }));
    expect412(await ctx.request({ method: 'DELETE', url: `/api/rooms/${token}`, token: tenant.instanceToken, headers: { 'if-match': etag } }));
    expect((await get(token)).statusCode).toBe(200);
    const del = await ctx.request({ method: 'DELETE', url: `/api/rooms/${token}`, token: tenant.instanceToken, headers: { 'if-match': String(updated.headers.etag) } });
    expect(del.statusCode).toBe(204);
    expect((await get(token)).statusCode).toBe(404);
  });

  it('refuses an outdated close with 412; a close with the current ETag closes, and again is 204', async () => {
    const { token, etag } = await newRoom();
    const updated = await put(token, roomBody({ name: 'Changed since' }));
    const close = (ifMatch: string) =>
      ctx.request({ method: 'POST', url: `/api/rooms/${token}/close`, token: tenant.instanceToken, headers: { 'if-match': ifMatch } });
    expect412(await close(etag));
    expect((await get(token)).json().status).toBe('active');
    expect((await close(String(updated.headers.etag))).statusCode).toBe(204);
    const closed = await get(token);
    expect(closed.json().status).toBe('closed');
    expect(closed.headers.etag).not.toBe(updated.headers.etag);
    expect((await close(String(closed.headers.etag))).statusCode).toBe(204);
    expect412(await close(String(updated.headers.etag)));
  });

  it('accepts *, a list containing the current ETag, and refuses weak or foreign tags', async () => {
    const { token, etag } = await newRoom();
    expect((await put(token, roomBody(), '*')).statusCode).toBe(200);
    const current = String((await get(token)).headers.etag);
    expect((await put(token, roomBody(), `"999999", ${current}`)).statusCode).toBe(200);
    const latest = String((await get(token)).headers.etag);
    expect412(await put(token, roomBody(), `W/${latest}`));
    expect412(await put(token, roomBody(), '"not-a-version"'));
    expect412(await put(token, roomBody(), '"99999999999999999999"'));
    expect412(await put(token, roomBody(), etag));
  });

  it('answers a malformed If-Match with 400 on If-Match', async () => {
    const { token } = await newRoom();
    for (const header of ['3', 'W/3', '"3', '"3",,', '"a"b"', ' ', '"3" "4"']) {
      const res = await put(token, roomBody(), header);
      expect(res.statusCode, header).toBe(400);
      expect(res.json()).toEqual([{ attribute: 'If-Match', type: expect.any(String), message: expect.any(String) }]);
    }
  });

  it('answers 404, not 412, for a room that does not exist', async () => {
    const res = await put('A'.repeat(22), roomBody(), '"1"');
    expect(res.statusCode).toBe(404);
  });

  it('lets exactly one of several concurrent writers with the same ETag through', async () => {
    const { token, etag } = await newRoom();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => put(token, roomBody({ name: `Writer ${i}` }), etag)));
    const winners = results.filter((r) => r.statusCode === 200);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 412)).toHaveLength(7);
    expect((await get(token)).json().name).toBe(winners[0]!.json().name);
  });

  it('compares the version in the write itself: writers that all read the room first still get one winner', async () => {
    // Straight on the service, so that every writer's read is queued before any
    // write: a check made only on the read would let all of them through.
    const { token, etag } = await newRoom();
    const principal = await ctx.services.auth.authenticate(`Bearer ${tenant.instanceToken}`);
    const version = Number(etag.replaceAll('"', ''));
    const attempts = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => ctx.services.rooms.update(principal, token, roomBody({ name: `Direct ${i}` }) as unknown as RoomInput, [version])),
    );
    expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
    const refused = attempts.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
    expect(refused.map((a) => (a.reason as Error).name)).toEqual(Array(5).fill('PreconditionFailedError'));
    const deletes = await Promise.allSettled([1, 2, 3].map(() => ctx.services.rooms.delete(principal, token, [version + 1])));
    expect(deletes.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
  });
});

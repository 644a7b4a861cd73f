// A bounded loopback load test of concurrent writers (docs/security.md §2):
// several clients create (with Idempotency-Key), update (with If-Match) and
// delete rooms against a real listening server for a few seconds, some of
// their requests cut off mid-flight. Then the database is checked against
// what the clients were told: every acknowledged write is there, no refused
// write is, no update was lost, and each Idempotency-Key made one room.
// Follows TEST_DB (PGlite in the pglite pass, PostgreSQL in the postgres pass).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';

const CLIENTS = 6;
/** At least this long; longer (up to MAX_MS) only until the contest below has happened, on a busy machine. */
const DURATION_MS = 3_000;
/** A ceiling only a hung run reaches: a loaded machine may need far more than DURATION_MS for the contest. */
const MAX_MS = 120_000;
const MAX_REQUESTS = 5_000;
/** A run proves little unless this much contention happened. */
const ENOUGH = { applied: 20, refused: 5, deleted: 5, abandoned: 5 };
/** Share of requests the client abandons after 0-3 ms: their outcome is unknown to it. */
const ABORT_SHARE = 0.06;

let ctx: TestContext;
let tenant: TestTenant;
let base: string;

beforeAll(async () => {
  // No rate limit: this test is the abuse.
  ctx = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  tenant = await ctx.tenant();
  base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => ctx.close());

type Outcome = { status: number; body: unknown; etag: string | undefined } | 'unknown';

interface Create { key: string; name: string; valid: boolean; outcome: Outcome; token?: string }
interface Update { token: string; ifMatch: number; name: string; outcome: Outcome }
interface Delete { token: string; ifMatch: number; outcome: Outcome }

const versionOf = (etag: string | undefined) => Number(/^"(\d+)"$/.exec(etag ?? '')?.[1] ?? NaN);

describe('concurrent creates, conditional updates and deletes', () => {
  it('keeps every acknowledged write, no refused one, and loses no update', { timeout: 300_000 }, async () => {
    const creates: Create[] = [];
    const updates: Update[] = [];
    const deletes: Delete[] = [];
    const statuses = new Map<string, number>();
    const known: { token: string; version: number }[] = [];
    let sent = 0;
    let counter = 0;

    /** `mayAbandon: false` for the final retries, which must get an answer. */
    async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, mayAbandon = true): Promise<Outcome> {
      sent++;
      const abort = mayAbandon && Math.random() < ABORT_SHARE;
      try {
        const res = await fetch(base + path, {
          method,
          headers: { authorization: `Bearer ${tenant.instanceToken}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
          body: body ? JSON.stringify(body) : undefined,
          // An answer takes milliseconds; only a hung server misses the 60 s limit.
          signal: abort ? AbortSignal.timeout(Math.floor(Math.random() * 4)) : AbortSignal.timeout(60_000),
        });
        const text = await res.text();
        const key = `${method} ${path.startsWith('/api/rooms/') ? ':token' : path} ${res.status}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        return { status: res.status, body: text ? JSON.parse(text) : null, etag: res.headers.get('etag') ?? undefined };
      } catch (error) {
        if (abort) return 'unknown';
        throw error;
      }
    }

    const pick = () => known[Math.floor(Math.random() * Math.min(known.length, 15)) + Math.max(0, known.length - 15)];

    const tally = () => {
      const count = (pred: (o: Outcome) => boolean, list: { outcome: Outcome }[]) => list.filter((x) => pred(x.outcome)).length;
      return {
        applied: count((o) => o !== 'unknown' && o.status === 200, updates),
        refused: count((o) => o !== 'unknown' && o.status === 412, updates),
        deleted: count((o) => o !== 'unknown' && o.status === 204, deletes),
        abandoned: count((o) => o === 'unknown', [...creates, ...updates, ...deletes]),
      };
    };
    const enough = () => Object.entries(tally()).every(([k, v]) => v >= ENOUGH[k as keyof typeof ENOUGH]);

    async function client(id: number, started: number) {
      const going = () => {
        const t = Date.now() - started;
        return sent < MAX_REQUESTS && t < MAX_MS && (t < DURATION_MS || !enough());
      };
      while (going()) {
        const n = ++counter;
        const dice = Math.random();
        if (dice < 0.3 || known.length < 5) {
          const valid = Math.random() > 0.08;
          const create: Create = { key: `k-${id}-${n}`, name: `created ${id}-${n}`, valid, outcome: 'unknown' };
          creates.push(create);
          create.outcome = await call('POST', '/api/rooms', roomBody({ name: create.name, meeting_duration: valid ? 30 : 0 }), { 'idempotency-key': create.key });
          if (create.outcome !== 'unknown' && create.outcome.status === 201) {
            create.token = (create.outcome.body as { token: string }).token;
            known.push({ token: create.token, version: versionOf(create.outcome.etag) });
          }
        } else if (dice < 0.85) {
          const room = pick()!;
          const update: Update = { token: room.token, ifMatch: room.version, name: `updated ${id}-${n}`, outcome: 'unknown' };
          updates.push(update);
          update.outcome = await call('PUT', `/api/rooms/${room.token}`, roomBody({ name: update.name }), { 'if-match': `"${room.version}"` });
          if (update.outcome !== 'unknown' && update.outcome.status === 200) room.version = versionOf(update.outcome.etag);
          if (update.outcome !== 'unknown' && update.outcome.status === 412) {
            // Read again, as a real client would, and go on with the fresh ETag.
            const fresh = await call('GET', `/api/rooms/${room.token}`);
            if (fresh !== 'unknown' && fresh.status === 200) room.version = Math.max(room.version, versionOf(fresh.etag));
          }
        } else {
          const room = pick()!;
          const del: Delete = { token: room.token, ifMatch: room.version, outcome: 'unknown' };
          deletes.push(del);
          del.outcome = await call('DELETE', `/api/rooms/${room.token}`, undefined, { 'if-match': `"${room.version}"` });
        }
      }
    }

    const started = Date.now();
    await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i, started)));
    const elapsed = Date.now() - started;

    // Retry every create whose answer was lost, with its key: each must now answer with one room (or 409: deleted since).
    for (const create of creates.filter((c) => c.valid && c.outcome === 'unknown')) {
      const retry = await call('POST', '/api/rooms', roomBody({ name: create.name, meeting_duration: 30 }), { 'idempotency-key': create.key }, false);
      expect(retry).not.toBe('unknown');
      const answer = retry as Exclude<Outcome, 'unknown'>;
      expect([201, 409]).toContain(answer.status);
      if (answer.status === 201) create.token = (answer.body as { token: string }).token;
      if (answer.status === 409) create.token = 'deleted';
    }
    // Abandoned requests may still be running on the server: wait until the data stops changing.
    const db = ctx.services.database.db;
    const snapshot = async () =>
      db.selectFrom('rooms').select(['token', 'name', 'version']).where('tenant_id', '=', tenant.id).orderBy('id').execute();
    let rows = await snapshot();
    const settleBy = Date.now() + 60_000;
    for (;;) {
      await new Promise((r) => setTimeout(r, 150));
      const again = await snapshot();
      if (JSON.stringify(again) === JSON.stringify(rows)) break;
      rows = again;
      if (Date.now() > settleBy) throw new Error('the rooms still change 60 s after the load');
    }
    const inDb = new Map(rows.map((r) => [r.token, r]));
    const keys = await db.selectFrom('idempotency_keys').select(['key', 'room_token']).where('token_id', '=', (await tokenId())).execute();
    const keyOf = new Map(keys.map((k) => [k.key, k.room_token]));

    const is = (o: Outcome, status: number) => o !== 'unknown' && o.status === status;
    // No 5xx, and only the answers each operation may give.
    for (const [key] of statuses) expect(key).toMatch(/^(POST \/api\/rooms (201|400|409)|PUT :token (200|404|412)|DELETE :token (204|404|412)|GET :token (200|404))$/);

    // Creates: every acknowledged room is there unless a delete (acknowledged or not) may have removed it.
    const deletedMaybe = new Set(deletes.filter((d) => d.outcome === 'unknown' || is(d.outcome, 204)).map((d) => d.token));
    for (const create of creates.filter((c) => c.valid)) {
      expect(create.token, create.key).toBeDefined();
      if (create.token === 'deleted') continue;
      expect(keyOf.get(create.key)).toBe(create.token);
      if (!inDb.has(create.token!)) expect(deletedMaybe.has(create.token!), `room of ${create.key} vanished`).toBe(true);
    }
    // Nothing unasked-for: every room of the tenant was made by one of our keys, one room per key.
    const keyTokens = new Set(keys.map((k) => k.room_token));
    expect(keyTokens.size).toBe(keys.length);
    for (const token of inDb.keys()) expect(keyTokens.has(token)).toBe(true);
    // Refused creates (400) left nothing behind.
    for (const create of creates.filter((c) => !c.valid)) {
      expect(is(create.outcome, 400) || create.outcome === 'unknown').toBe(true);
      expect(keyOf.has(create.key)).toBe(false);
      expect(rows.some((r) => r.name === create.name)).toBe(false);
    }
    // Acknowledged deletes: gone.
    for (const del of deletes.filter((d) => is(d.outcome, 204))) expect(inDb.has(del.token)).toBe(false);

    // Updates: each acknowledged one was applied on exactly the version it was conditioned on, and no two share a version (no lost update).
    const acked = updates.filter((u) => is(u.outcome, 200));
    const producedBy = new Map<string, string>();
    for (const update of acked) {
      const version = versionOf((update.outcome as { etag?: string }).etag);
      expect(version).toBe(update.ifMatch + 1);
      const id = `${update.token}@${version}`;
      expect(producedBy.has(id), `two acknowledged updates produced ${id}`).toBe(false);
      producedBy.set(id, update.name);
    }
    // The stored name is the one written by whichever update made the stored version; refused updates never show.
    const unknownNames = new Set(updates.filter((u) => u.outcome === 'unknown').map((u) => u.name));
    const refusedNames = new Set(updates.filter((u) => is(u.outcome, 412) || is(u.outcome, 404)).map((u) => u.name));
    for (const row of rows) {
      expect(refusedNames.has(row.name), `refused update ${row.name} was stored`).toBe(false);
      const expected = producedBy.get(`${row.token}@${row.version}`);
      if (expected !== undefined) expect(row.name).toBe(expected);
      else if (row.version > 1) expect(unknownNames.has(row.name), `${row.token} v${row.version} = ${row.name}`).toBe(true);
    }

    const contest = tally();
    const summary = {
      db: process.env.TEST_DB ?? 'pglite',
      requests: sent,
      seconds: +(elapsed / 1000).toFixed(1),
      perSecond: Math.round(sent / (elapsed / 1000)),
      creates: creates.length,
      updates: updates.length,
      deletes: deletes.length,
      ...contest,
      rooms: rows.length,
    };
    console.log('[bench] concurrent-writes', JSON.stringify(summary));
    // The run must have been a real contest, or the checks above prove little.
    for (const [k, v] of Object.entries(ENOUGH)) expect(contest[k as keyof typeof contest], k).toBeGreaterThanOrEqual(v);
  });
});

async function tokenId(): Promise<string> {
  const principal = await ctx.services.auth.authenticate(`Bearer ${tenant.instanceToken}`);
  return principal.tokenId;
}

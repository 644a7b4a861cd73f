// PostgreSQL stopped and restarted in the middle of a load run
// (docs/security.md §5). While the database is away, requests fail fast with
// 503 {error} and Retry-After (no hang) and /readyz says so; when it is back,
// the server recovers by itself, without a restart; nothing acknowledged is lost.
//
// Runs on its own throwaway PostgreSQL cluster (never the shared test server),
// in both passes of the api set, with a different stop each time: a fast
// shutdown (connections closed by the server) in the pglite pass, an immediate
// one (the server dies, crash recovery on restart) in the postgres pass.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startOwnPostgres, testDb, type OwnPostgres } from '../helpers/database.js';
import { adminTenantToken, startServerProcess, stopServerProcess, waitForExit, type ServerProcess } from '../helpers/server-process.js';
import { eventually, sleep } from '../helpers/wait.js';

const MODE = testDb === 'postgres' ? 'immediate' : 'fast';
const CLIENTS = 4;
const OUTAGE_MS = 2_500;
/**
 * A request while the database is away must be answered within this. The bound
 * is the behaviour ("no hang"): a request left waiting for a connection that
 * never comes back is cut off by this test at 30 s (the fetch's own limit).
 * A working build answers in milliseconds (the figure is printed as
 * outageMaxMs); 15 s is far above that on a loaded machine, and above pg's
 * 5 s connect timeout, so it catches only a hang.
 */
const FAIL_FAST_MS = 15_000;

let cluster: OwnPostgres | undefined;
let server: ServerProcess | undefined;

afterAll(async () => {
  await stopServerProcess(server);
  await cluster?.stop();
});

const body = (name: string) => JSON.stringify({ name, meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z' });

describe(`PostgreSQL stopped (-m ${MODE}) and restarted under load`, () => {
  it('fails fast with 503 while it is away, recovers by itself, loses nothing', { timeout: 180_000 }, async () => {
    cluster = await startOwnPostgres();
    // The throwaway cluster turns synchronous_commit off for speed: a commit is then acknowledged before
    // its WAL is written, and an immediate stop loses it. Production keeps PostgreSQL's default (on), as here.
    const admin = new pg.Client({ connectionString: cluster.url });
    admin.on('error', () => {});
    await admin.connect();
    try {
      await admin.query('alter system set synchronous_commit = on');
      await admin.query('select pg_reload_conf()');
      // The reload is a signal: wait until the server has read it.
      await eventually(
        async () => (await admin.query("select setting from pg_settings where name = 'synchronous_commit'")).rows[0].setting === 'on',
        60_000,
        'synchronous_commit on after the reload',
      );
    } finally {
      await admin.end();
    }
    server = await startServerProcess({ DATABASE_URL: cluster.url, RATE_LIMIT_PER_MINUTE: '0', DATABASE_POOL_SIZE: '5' });
    const { token } = await adminTenantToken(server.url);
    const headers = (key: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key });

    type Result = { key: string; phase: string; status?: number; body?: { token?: string; error?: string }; retryAfter?: string | null; error?: string; ms: number };
    const results: Result[] = [];
    let phase = 'before';
    let stopping = false;
    let n = 0;
    const client = async (id: number) => {
      while (!stopping) {
        const key = `outage-${id}-${++n}`;
        const started = Date.now();
        const result: Result = { key, phase, ms: 0 };
        try {
          const res = await fetch(`${server!.url}/api/rooms`, { method: 'POST', headers: headers(key), body: body(key), signal: AbortSignal.timeout(30_000) });
          result.status = res.status;
          result.retryAfter = res.headers.get('retry-after');
          result.body = await res.json();
        } catch (error) {
          result.error = String(error);
        }
        result.ms = Date.now() - started;
        results.push(result);
        // Clients back off as Retry-After says, a little.
        if (result.status === 503) await sleep(100);
      }
    };
    const load = Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
    // The load is under way: every client has had a room created.
    await eventually(() => results.filter((r) => r.status === 201).length >= CLIENTS, 60_000, 'rooms created before the outage');

    phase = 'outage';
    await cluster.halt(MODE);
    const stoppedAt = Date.now();
    // The outage's length is the scenario, not a wait for something.
    await sleep(OUTAGE_MS / 2);
    const ready = await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(FAIL_FAST_MS) }).catch((error) => {
      // The server is gone: show why.
      console.log(server!.output.filter((line) => !line.includes('"msg":"request"')).join('\n'));
      throw error;
    });
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ checks: { database: 'unavailable' } });
    await sleep(OUTAGE_MS / 2);

    phase = 'restarted';
    await cluster.resume();
    const restartedAt = Date.now();
    // Recovery by itself: the load keeps going until created rooms come back
    // (a generous deadline: a build that never recovers misses it), then until
    // the last requests of every client all succeeded.
    await eventually(() => results.some((r) => r.phase === 'restarted' && r.status === 201), 60_000, 'a room created after the restart');
    const recoveredAt = Date.now();
    await eventually(() => {
      const since = results.filter((r) => r.phase === 'restarted');
      return since.length >= CLIENTS * 4 && since.slice(-CLIENTS * 2).every((r) => r.status === 201);
    }, 60_000, 'the last requests after the restart all created');
    stopping = true;
    await load;

    // Nothing but created rooms and 503s; the 503s in the documented shape, with Retry-After.
    for (const r of results) {
      expect(r.error, r.key).toBeUndefined();
      expect([201, 503], r.key).toContain(r.status);
      if (r.status === 503) {
        expect(r.body).toEqual({ error: expect.any(String) });
        expect(r.retryAfter).toBe('1');
      }
    }
    const during = results.filter((r) => r.phase === 'outage');
    expect(during.filter((r) => r.status === 503).length).toBeGreaterThan(3);
    expect(Math.max(...during.map((r) => r.ms))).toBeLessThan(FAIL_FAST_MS);
    // After the restart, the service is back without anyone restarting it: the last requests all succeed.
    const tail = results.slice(-CLIENTS * 2);
    expect(tail.map((r) => r.status)).toEqual(tail.map(() => 201));

    // Nothing acknowledged is lost; what got a 503 is retried with its key and makes one room at most.
    const auth = { authorization: `Bearer ${token}` };
    const acknowledged = results.filter((r) => r.status === 201);
    for (const r of acknowledged) expect((await fetch(`${server.url}/api/rooms/${r.body!.token}`, { headers: auth })).status, r.key).toBe(200);
    let replayed = 0;
    for (const r of results.filter((x) => x.status === 503)) {
      const res = await fetch(`${server.url}/api/rooms`, { method: 'POST', headers: headers(r.key), body: body(r.key) });
      expect(res.status).toBe(201);
      if (res.headers.get('idempotent-replayed')) replayed++;
    }
    const total = Number((await fetch(`${server.url}/api/rooms?per_page=1`, { headers: auth })).headers.get('total-count'));
    expect(total).toBe(results.length);

    server.child.kill('SIGTERM');
    expect((await waitForExit(server, 20_000)).code).toBe(0);
    const outageAnswers = during.map((r) => r.ms).sort((a, b) => a - b);
    console.log(
      '[bench] postgres-outage',
      JSON.stringify({
        mode: MODE,
        requests: results.length,
        created: acknowledged.length,
        refused503: results.length - acknowledged.length,
        duringOutage: during.length,
        outageMedianMs: outageAnswers[Math.floor(outageAnswers.length / 2)],
        outageMaxMs: outageAnswers.at(-1),
        recoveredMsAfterRestart: recoveredAt - restartedAt,
        outageMs: restartedAt - stoppedAt,
        committedBehind503: replayed,
      }),
    );
  });
});

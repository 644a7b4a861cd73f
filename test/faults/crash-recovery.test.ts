// kill -9 of the server in the middle of a load of creates
// (docs/security.md §5): on restart every acknowledged room is there, retries
// of the unanswered creates with their Idempotency-Key make no duplicates, the
// data still reads and writes, and (embedded database) the lock file the dead
// process left does not block the restart.
// Follows TEST_DB: PGlite in a temporary DATA_DIR, or a fresh PostgreSQL database.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testDb } from '../helpers/database.js';
import { adminTenantToken, serverDatabase, startServerProcess, stopServerProcess, waitForExit, type ServerProcess } from '../helpers/server-process.js';

const LOAD_CLIENTS = 4;
/** The kill comes once this many creates were acknowledged (and more are in flight), within KILL_BY_MS at the latest. */
const KILL_AFTER_ACKED = 10;
const KILL_BY_MS = 60_000;

let database: Awaited<ReturnType<typeof serverDatabase>> | undefined;
let server: ServerProcess | undefined;

afterAll(async () => {
  await stopServerProcess(server);
  await database?.remove();
});

const body = (name: string) => JSON.stringify({ name, meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z' });

describe(`kill -9 under load (${testDb})`, () => {
  it('loses no acknowledged room, duplicates none on retry, and restarts cleanly', { timeout: 240_000 }, async () => {
    database = await serverDatabase();
    const env = { ...database.env, RATE_LIMIT_PER_MINUTE: '0' };
    const dataDir = database.dataDir;
    server = await startServerProcess(env);
    const { token } = await adminTenantToken(server.url);
    const headers = (key: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key });

    const acked = new Map<string, string>(); // key -> room token
    const unanswered: string[] = [];
    let n = 0;
    let killed = false;
    const client = async (id: number) => {
      while (!killed) {
        const key = `crash-${id}-${++n}`;
        try {
          // A create takes milliseconds; only a hung server misses this generous limit.
          const res = await fetch(`${server!.url}/api/rooms`, { method: 'POST', headers: headers(key), body: body(key), signal: AbortSignal.timeout(60_000) });
          expect(res.status).toBe(201);
          acked.set(key, (await res.json()).token);
        } catch (error) {
          if (!killed) throw error;
          unanswered.push(key);
        }
      }
    };
    const load = Promise.all(Array.from({ length: LOAD_CLIENTS }, (_, i) => client(i)));
    const loadStarted = Date.now();
    while (acked.size < KILL_AFTER_ACKED && Date.now() - loadStarted < KILL_BY_MS) await new Promise((r) => setTimeout(r, 20));
    // A little later, at random, so that the kill lands in the middle of requests rather than between them (the scenario, not a wait).
    await new Promise((r) => setTimeout(r, Math.random() * 100));
    const pid = server.child.pid!;
    killed = true;
    server.child.kill('SIGKILL');
    await load;
    expect((await waitForExit(server, 10_000)).signal).toBe('SIGKILL');
    expect(acked.size).toBeGreaterThan(5);
    if (dataDir) expect(fs.readFileSync(path.join(dataDir, 'parley.lock'), 'utf8')).toBe(String(pid));

    // Restart on the same data: the stale lock is taken over, and the data is all there.
    server = await startServerProcess(env);
    const auth = { authorization: `Bearer ${token}` };
    for (const [key, room] of acked) {
      const res = await fetch(`${server.url}/api/rooms/${room}`, { headers: auth });
      expect(res.status, key).toBe(200);
      expect((await res.json()).name).toBe(key);
    }
    // An acknowledged create retried after the crash gets its room back, not a second one.
    const [someKey, someRoom] = [...acked][0]!;
    const replay = await fetch(`${server.url}/api/rooms`, { method: 'POST', headers: headers(someKey), body: body(someKey) });
    expect(replay.status).toBe(201);
    expect((await replay.json()).token).toBe(someRoom);
    // The creates that got no answer: retried with their keys, each makes (or finds) exactly one room.
    for (const key of unanswered) {
      const res = await fetch(`${server.url}/api/rooms`, { method: 'POST', headers: headers(key), body: body(key) });
      expect(res.status).toBe(201);
    }
    const all = await (await fetch(`${server.url}/api/rooms?per_page=100`, { headers: auth })).json();
    const total = Number((await fetch(`${server.url}/api/rooms?per_page=1`, { headers: auth })).headers.get('total-count'));
    expect(total).toBe(acked.size + unanswered.length);
    const names = new Set<string>();
    for (let page = 1; page <= Math.ceil(total / 100); page++) {
      const res = await (await fetch(`${server.url}/api/rooms?per_page=100&page=${page}`, { headers: auth })).json();
      for (const room of res.rooms) names.add(room.name);
    }
    expect(names.size).toBe(total);
    expect(all.rooms.length).toBe(Math.min(total, 100));
    // Still writable: the database is not left half-broken.
    const fresh = await fetch(`${server.url}/api/rooms`, { method: 'POST', headers: headers('after-restart'), body: body('after-restart') });
    expect(fresh.status).toBe(201);

    server.child.kill('SIGTERM');
    expect((await waitForExit(server, 20_000)).code).toBe(0);
    if (dataDir) expect(fs.existsSync(path.join(dataDir, 'parley.lock'))).toBe(false);
    console.log('crash-recovery', JSON.stringify({ db: testDb, acknowledged: acked.size, unanswered: unanswered.length }));
  });
});

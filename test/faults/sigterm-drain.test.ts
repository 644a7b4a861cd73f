// SIGTERM under load (docs/security.md §5): the requests the
// server is working on when the signal comes are answered, later ones get a
// clean 503 {error} or a closed connection (a request still unread on an idle
// keep-alive connection is one of those: HTTP lets a server close such a
// connection, and the client retries with its Idempotency-Key), nothing
// acknowledged is lost, and the process exits 0 well within main.ts's hard limit.
// Follows TEST_DB: PGlite in a temporary DATA_DIR, or a fresh PostgreSQL database.
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { testDb } from '../helpers/database.js';
import { adminTenantToken, parseLine, serverDatabase, startServerProcess, stopServerProcess, waitForExit, type ServerProcess } from '../helpers/server-process.js';

/** Requests in flight at the signal: enough to see the drain, few enough to finish well within main.ts's 15 s limit on a busy machine. */
const BURST = 24;

let database: Awaited<ReturnType<typeof serverDatabase>> | undefined;
let server: ServerProcess | undefined;

afterAll(async () => {
  await stopServerProcess(server);
  await database?.remove();
});

const body = (name: string) => JSON.stringify({ name, meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z' });

describe(`SIGTERM under load (${testDb})`, () => {
  it('answers the requests in progress, refuses the rest cleanly, loses nothing, exits 0', { timeout: 240_000 }, async () => {
    database = await serverDatabase();
    const env = { ...database.env, RATE_LIMIT_PER_MINUTE: '0' };
    server = await startServerProcess(env);
    const { token } = await adminTenantToken(server.url);
    const headers = (key: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key });

    // A client that opened a connection and said nothing: it must not hold the stop.
    const silent = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    silent.on('error', () => {});

    type Result = { key: string; status?: number; body?: unknown; error?: string; answeredAt?: number };
    const results: Result[] = [];
    let firstAnswered!: () => void;
    const firstAnswer = new Promise<void>((resolve) => (firstAnswered = resolve));
    const send = async (key: string) => {
      const result: Result = { key };
      results.push(result);
      try {
        const res = await fetch(`${server!.url}/api/rooms`, { method: 'POST', headers: headers(key), body: body(key), signal: AbortSignal.timeout(15_000) });
        result.status = res.status;
        firstAnswered();
        result.body = await res.json();
      } catch (error) {
        result.error = String((error as { cause?: { code?: string } }).cause?.code ?? error);
        firstAnswered();
      }
      result.answeredAt = Date.now();
    };
    // Open the connections first (as a busy client's pool has them), so that the burst is on the server, not in a handshake.
    await Promise.all(Array.from({ length: BURST }, () => fetch(`${server!.url}/healthz`).then((r) => r.text())));
    // A burst in flight, then the signal while the server works through it, then more requests after it.
    const burst = Array.from({ length: BURST }, (_, i) => send(`before-${i}`));
    // The server is working through the burst (its first answer is out; the rest are in progress),
    // however long the requests took to get there on a loaded machine.
    await firstAnswer;
    const signalledAt = Date.now();
    server.child.kill('SIGTERM');
    const after = Array.from({ length: 10 }, (_, i) => new Promise((r) => setTimeout(r, 5 * i)).then(() => send(`after-${i}`)));
    await Promise.all([...burst, ...after]);
    // A drain that hangs is cut by main.ts's 15 s failsafe (exit 1, which fails below); this generous
    // deadline only waits for the exit, whichever it is.
    const exit = await waitForExit(server, 60_000).catch((error) => {
      // What the server said besides request lines, to see what held it.
      console.log(server!.output.filter((line) => !line.includes('"msg":"request"')).join('\n'));
      throw error;
    });
    const stoppedIn = Date.now() - signalledAt;

    expect(exit).toEqual({ code: 0, signal: null });
    expect(server.output.map(parseLine).some((line) => line?.msg === 'stopping: draining connections')).toBe(true);
    // Every answer is a created room or a clean refusal; nothing else.
    for (const r of results) {
      if (r.status !== undefined) {
        expect([201, 503], r.key).toContain(r.status);
        if (r.status === 503) expect(r.body).toEqual({ error: expect.any(String) });
      } else {
        expect(r.error, r.key).toMatch(/ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET|other side closed|fetch failed/);
      }
    }
    // The server drained: requests of the burst were still answered after the signal.
    const drained = results.filter((r) => r.key.startsWith('before-') && r.status === 201 && r.answeredAt! > signalledAt);
    expect(drained.length).toBeGreaterThan(0);

    // Restart: every acknowledged room is there; the others, retried with their key, make one room each.
    server = await startServerProcess(env);
    const auth = { authorization: `Bearer ${token}` };
    const acknowledged = results.filter((r) => r.status === 201);
    for (const r of acknowledged) {
      const res = await fetch(`${server.url}/api/rooms/${(r.body as { token: string }).token}`, { headers: auth });
      expect(res.status, r.key).toBe(200);
    }
    // Nor did the server work on any of them unanswered: a retry with the key is a new room, never a replay
    // (a request the server had started before the signal was answered, not cut).
    for (const r of results.filter((x) => x.status !== 201)) {
      const res = await fetch(`${server.url}/api/rooms`, { method: 'POST', headers: headers(r.key), body: body(r.key) });
      expect(res.status).toBe(201);
      expect(res.headers.get('idempotent-replayed'), r.key).toBeNull();
    }
    const total = Number((await fetch(`${server.url}/api/rooms?per_page=1`, { headers: auth })).headers.get('total-count'));
    expect(total).toBe(results.length);
    const outcomes: Record<string, number> = {};
    for (const r of results) outcomes[r.status ?? r.error!] = (outcomes[r.status ?? r.error!] ?? 0) + 1;
    console.log('[bench] sigterm-drain', JSON.stringify({ db: testDb, outcomes, stoppedInMs: stoppedIn, drainedAfterSignal: drained.length, acknowledged: acknowledged.length, refused: results.length - acknowledged.length }));
    silent.destroy();
  });
});

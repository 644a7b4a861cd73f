// What the embedded database's autovacuum and checkpoints
// (src/db/embedded-maintenance.ts) keep and what they cost: Parley on PGlite (DATA_DIR) with the job at the
// given interval, against the same with it off (the interval at a day, as
// before the job), in one run. Each runs `--seconds` of an integrator's
// traffic in rounds (create `--rooms` rooms, two PUTs of each, delete them;
// 10 requests at a time), while a probe asks GET /readyz (one `select 1` on
// the database) every 20 ms: a VACUUM holds the database's one connection, and
// the probe's slowest answers show how long. Then it reports the size on disk
// of the tables and indexes and of the WAL, the rooms deleted a second, and
// GET room over the last round's rooms (a 5 s load at 10 connections).
//   npm run bench:embedded-maintenance -- [--reps=2] [--seconds=120] [--rooms=500] [--interval=60]
import fs from 'node:fs';
import path from 'node:path';
import { inLanes } from './support/lanes.js';
import { runLoad } from './support/load.js';
import { startParley, type ServerProcess } from './support/processes.js';
import { fixed, flags, markdownTable, median, percentile } from './support/stats.js';

const options = flags();
const seconds = Number(options.get('seconds') ?? 120);
const roomsPerRound = Number(options.get('rooms') ?? 500);
const interval = options.get('interval') ?? '60';
const reps = Number(options.get('reps') ?? 2);

/** Bytes of files under dir. */
function sizeOf(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    total += entry.isDirectory() ? sizeOf(file) : fs.statSync(file).size;
  }
  return total;
}

async function measure(label: string, maintenanceSeconds: string) {
  const dataDir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'parley-bench-maintenance-'));
  const server = await startParley({ DATA_DIR: dataDir, EMBEDDED_MAINTENANCE_INTERVAL_SECONDS: maintenanceSeconds, LOG_LEVEL: 'warn' });
  try {
    const measured = await traffic(server, dataDir);
    await server.stop();
    // The tables and indexes (base/), as the stopped server left them.
    return { label, ...measured, bytes: sizeOf(path.join(dataDir, 'pglite', 'base')) };
  } finally {
    await server.stop(); // does nothing after the stop above; stops it after a failure
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The rounds with the probe beside them, the WAL's size after them, then GET room over the last round's rooms. */
async function traffic(server: ServerProcess & { instanceToken: string }, dataDir: string) {
  const call = async (method: string, pathname: string, body?: unknown) => {
    const response = await fetch(server.url + pathname, {
      method,
      headers: { authorization: `Bearer ${server.instanceToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (!response.ok) throw new Error(`${method} ${pathname}: ${response.status} ${await response.text()}`);
    return response.status === 204 ? null : ((await response.json()) as { token: string });
  };
  const probe: number[] = [];
  let probing = true;
  const probeDone = (async () => {
    while (probing) {
      const started = performance.now();
      await fetch(server.url + '/readyz');
      probe.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const startedAt = Date.now();
  let deleted = 0;
  let tokens: string[] = [];
  try {
    for (;;) {
      tokens = [];
      await inLanes(roomsPerRound, 10, async (i) => {
        tokens.push((await call('POST', '/api/rooms', { name: `Room ${i}`, meeting_duration: 30, scheduled_at: '2030-01-01T10:00:00Z' }))!.token);
      });
      for (const name of ['First change', 'Second change']) {
        await inLanes(tokens.length, 10, (i) => call('PUT', `/api/rooms/${tokens[i]}`, { name, meeting_duration: 45, scheduled_at: '2030-01-01T11:00:00Z' }));
      }
      if (Date.now() - startedAt >= seconds * 1000) break; // the last round's rooms stay, for the GETs
      await inLanes(tokens.length, 10, (i) => call('DELETE', `/api/rooms/${tokens[i]}`));
      deleted += tokens.length;
    }
  } finally {
    probing = false;
    await probeDone;
  }
  const elapsed = (Date.now() - startedAt) / 1000;
  // While the server runs: its shutdown checkpoint removes WAL segments.
  const walBytes = sizeOf(path.join(dataDir, 'pglite', 'pg_wal'));
  const get = await runLoad({ origin: server.url, method: 'GET', paths: tokens.map((t) => `/api/rooms/${t}`), token: server.instanceToken, connections: 10, seconds: 5, maxRequests: 200_000 });
  return { walBytes, deletedPerSecond: deleted / elapsed, probeP50: median(probe), probeP99: percentile(probe, 99), probeMax: Math.max(...probe), get };
}

console.error(`embedded maintenance: ${reps} repetitions of ${seconds} s of rounds of ${roomsPerRound} rooms, with the job every ${interval} s and without`);
const variants = [
  { label: `every ${interval} s`, interval },
  { label: 'off (before)', interval: '86400' },
];
const runs = new Map<string, Awaited<ReturnType<typeof measure>>[]>(variants.map((v) => [v.label, []]));
for (let rep = 0; rep < reps; rep++) {
  // The order alternates by repetition: the machine's drift falls on both.
  for (const variant of rep % 2 ? [...variants].reverse() : variants) {
    const result = await measure(variant.label, variant.interval);
    console.error(`rep ${rep + 1} ${variant.label}: ${fixed(result.bytes / 1e6)} MB, WAL ${fixed(result.walBytes / 1e6)} MB, ${fixed(result.deletedPerSecond, 0)} deleted/s, probe p99 ${fixed(result.probeP99, 2)} max ${fixed(result.probeMax, 1)} ms, GET ${fixed(result.get.requestsPerSecond, 0)}/s`);
    runs.get(variant.label)!.push(result);
  }
}
const load = (await import('node:os')).loadavg().map((v) => v.toFixed(1)).join(' ');
console.log(
  `\n### Embedded database maintenance\n\n${new Date().toISOString().slice(0, 16)}Z, load average ${load}, ${reps} repetitions (medians), ` +
    `${seconds} s of rounds of ${roomsPerRound} rooms (create, 2 PUTs, delete; 10 at a time)\n`,
);
const med = (results: Awaited<ReturnType<typeof measure>>[], pick: (r: Awaited<ReturnType<typeof measure>>) => number) => median(results.map(pick));
console.log(
  markdownTable(
    ['maintenance', 'tables and indexes on disk', 'WAL on disk after the rounds', 'rooms deleted/s', 'probe p50', 'probe p99', 'probe max', 'GET room req/s', 'GET p50', 'GET p99'],
    [...runs].map(([label, r]) => [
      label,
      `${fixed(med(r, (x) => x.bytes) / 1e6)} MB`,
      `${fixed(med(r, (x) => x.walBytes) / 1e6)} MB`,
      fixed(med(r, (x) => x.deletedPerSecond), 0),
      fixed(med(r, (x) => x.probeP50), 2),
      fixed(med(r, (x) => x.probeP99), 2),
      fixed(med(r, (x) => x.probeMax), 1),
      fixed(med(r, (x) => x.get.requestsPerSecond), 0),
      fixed(med(r, (x) => x.get.p50), 2),
      fixed(med(r, (x) => x.get.p99), 2),
    ]),
  ),
);
console.log('\n(milliseconds; probe: GET /readyz, one `select 1` on the database, every 20 ms through the run)');

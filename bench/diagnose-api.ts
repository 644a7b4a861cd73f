// Where a room endpoint's time goes in the server process, for finding the
// next optimization (not a benchmark: its figures are for comparing two builds
// or two commits under the same load, one after the other).
//   npm run diagnose:api -- [--method=POST|GET|PUT] [--connections=10] [--seconds=5] [--cpu-prof=DIR] [--heap-sample[=all]] [--db=pglite] [--build=DIR] [--baseline|--independent] [--statements] [--durable] [--log-level=info] [--warm-up=2]
// --build: another build of Parley (a --before directory of bench/README.md) instead of this one;
// --node-flags=a,b: more flags for its node (e.g. --max-semi-space-size=4).
// --baseline: the same measurements of bench/baseline-server.ts on the same
// database and rooms (Parley still makes them), to see what Parley adds.
// --independent: the same of bench/independent-baseline-server.ts, on its own
// schema and database of the same cluster, with rooms of its own.
// --durable: PostgreSQL with fsync and synchronous commits on (as bench:api --durable).
// --db=pglite: Parley on the embedded database (a data directory of its own)
// instead; the PostgreSQL figures are then empty.
// Prints, for the measured window (after a warm-up):
//  - CPU microseconds per request of each thread of the server (main = the
//    event loop; the others are V8's GC helpers and libuv's pool) and of
//    PostgreSQL, from /proc; with --statements, the statements per request
//    PostgreSQL ran, from pg_stat_database (adds 22 s of waiting for its counts);
//  - the WAL PostgreSQL wrote per request (bytes, the whole cluster's, from
//    pg_current_wal_lsn): what a durable commit waits to flush;
//  - scavenges (count, median pause) and what they promoted to the old space
//    per request, from --trace-gc: old-space growth between two scavenges is
//    garbage only a major GC will collect;
//  - with --heap-sample, the allocation sites of objects that died in the old
//    space (V8's sampling heap profiler keeping objects collected by major GCs),
//    in bytes per request: pretenured or promoted allocation sites; with
//    --heap-sample=all, of every object allocated (those scavenges collected
//    too), with their total: what makes the scavenges come;
//  - with --cpu-prof=DIR, a CPU profile of the measured window in DIR (Chrome
//    DevTools) and its self time per request by package (node_modules/<name>,
//    node:<module>, Parley's own files, V8's GC, idle).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { runLoad } from './support/load.js';
import { startBenchPostgres, withClient } from './support/postgres.js';
import { ADMIN_TOKEN, createTenant, freePort, root, startBaseline, startIndependentBaseline, startProcess } from './support/processes.js';
import { flags, median } from './support/stats.js';
import { SERVER_NODE_FLAGS } from '../src/node-flags.js';

const options = flags();
const method = (options.get('method') ?? 'POST') as 'POST' | 'GET' | 'PUT';
const connections = Number(options.get('connections') ?? 10);
const seconds = Number(options.get('seconds') ?? 5);
const cpuProfDir = options.get('cpu-prof');
const heapSample = options.has('heap-sample');
/** --heap-sample=all: every allocation, not only what died in the old space. */
const everyAllocation = options.get('heap-sample') === 'all';
const embedded = options.get('db') === 'pglite';
// The baseline serves Parley's rooms from PostgreSQL: beside Parley on PGlite there would be none.
if (embedded && options.has('baseline')) throw new Error('--baseline reads Parley\'s rooms on PostgreSQL: not with --db=pglite (--independent has rooms of its own)');
const baseline = options.has('baseline');
const independent = options.has('independent');
const countStatements = options.has('statements');
const durable = options.has('durable');
const entry = path.join(path.resolve(options.get('build') ?? root), 'dist/src/main.js');
const INSPECTOR_PORT = await freePort();

const ROOM = JSON.stringify({ name: 'Consultation', meeting_duration: 30, scheduled_at: '2030-03-10T14:00:00Z', guest_display_name: 'Patient' });

/** Milliseconds of CPU per thread of a process (utime + stime, clock ticks of 10 ms); its main thread is the event loop. */
function threadCpu(pid: number): Map<string, number> {
  const result = new Map<string, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    result.set(Number(tid) === pid ? 'event loop' : `${name} (thread ${tid})`, (Number(fields[11]) + Number(fields[12])) * 10);
  }
  return result;
}

/** Milliseconds of CPU of every PostgreSQL process on the machine (the benchmark's cluster is the only one running). */
function postgresCpu(): number {
  let total = 0;
  for (const pid of fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('postgres')) continue;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

/**
 * Statements PostgreSQL has run so far in the database: every statement outside
 * BEGIN/COMMIT is a transaction of its own. An idle backend reports its counts
 * within 10 s (PostgreSQL 15), so this waits that long first.
 */
async function transactions(url: string): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 11_000));
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ n: string }>('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()');
    return Number(rows[0]!.n);
  });
}

/** Where the cluster's write-ahead log ends now, in bytes. */
function walPosition(url: string): Promise<number> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ n: string }>(`select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint as n`);
    return Number(rows[0]!.n);
  });
}

/** --trace-gc lines: "Scavenge 56.5 (74.8) -> 47.2 (77.1) MB, 6.39 / 0.48 ms". */
function scavenges(output: string): { before: number; after: number; pause: number }[] {
  return [...output.matchAll(/Scavenge(?: \([^)]*\))? ([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, ([\d.]+)/g)].map((m) => ({
    before: Number(m[1]),
    after: Number(m[2]),
    pause: Number(m[3]),
  }));
}

async function inspector(port: number) {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const socket = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  let lastId = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (message.id) waiting.get(message.id)?.(message.result);
  });
  return {
    call: <T>(name: string, params: object = {}) =>
      new Promise<T>((resolve) => {
        waiting.set(++lastId, resolve as (result: unknown) => void);
        socket.send(JSON.stringify({ id: lastId, method: name, params }));
      }),
    close: () => socket.close(),
  };
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** Bytes per request by allocation site (the last three frames). */
function allocationSites(head: SamplingNode, requests: number): [string, number][] {
  const sites = new Map<string, number>();
  const frame = (node: SamplingNode) =>
    `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^file:\/\//, '').replace(/.*node_modules\//, '').replace(root + '/', '')}:${node.callFrame.lineNumber + 1}`;
  const walk = (node: SamplingNode, stack: string[]) => {
    const here = [frame(node), ...stack].slice(0, 3);
    if (node.selfSize) sites.set(here.join(' < '), (sites.get(here.join(' < ')) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child, here);
  };
  walk(head, []);
  return [...sites].map(([site, bytes]): [string, number] => [site, bytes / requests]).sort((a, b) => b[1] - a[1]);
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a sampled node's code lives: a package, a node: module, Parley's own file, or what V8 names it. */
function packageOf(callFrame: CpuProfile['nodes'][number]['callFrame']): string {
  const { url, functionName } = callFrame;
  if (!url) return functionName || '(native)';
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return dependency[1]!;
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\//, '').replace(root + '/', '');
}

/** Microseconds of self time per request, by package, largest first. */
function selfTimeByPackage(profile: CpuProfile, requests: number): [string, number][] {
  const where = new Map(profile.nodes.map((node) => [node.id, packageOf(node.callFrame)]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const key = where.get(id)!;
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return [...totals].map(([key, micros]): [string, number] => [key, micros / requests]).sort((a, b) => b[1] - a[1]);
}

if (cpuProfDir) fs.mkdirSync(cpuProfDir, { recursive: true });
const database = await startBenchPostgres({ durable, log: () => {} });
const port = await freePort();
const dataDir = embedded ? fs.mkdtempSync(path.join(os.tmpdir(), 'parley-diagnose-')) : undefined;
const nodeFlags = ['--trace-gc', ...SERVER_NODE_FLAGS, ...(options.get('node-flags')?.split(',') ?? []), ...(heapSample || cpuProfDir ? [`--inspect=127.0.0.1:${INSPECTOR_PORT}`] : [])];
const parley = await startProcess({
  name: 'diagnose',
  args: [...(baseline ? [] : nodeFlags), entry],
  env: { PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: `http://127.0.0.1:${port}`, PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, RATE_LIMIT_PER_MINUTE: '0', ...(dataDir ? { DATA_DIR: dataDir } : { DATABASE_URL: database.url }), LOG_LEVEL: options.get('log-level') ?? 'info' },
  port,
  readyPath: '/readyz',
});
let server = parley;
try {
  let tenant = await createTenant(parley, 'diagnose');
  // The baseline serves the tenant's rooms from the same database; POSTs go to its own tenant's rooms alike.
  if (baseline) server = await startBaseline(database.url, 20, parley.url, nodeFlags);
  if (independent) {
    const started = await startIndependentBaseline(database.url, 20, parley.url);
    [server, tenant] = [started, { id: '', token: started.token }];
  }
  const roomPaths: string[] = [];
  for (let i = 0; i < 100 && method !== 'POST'; i++) {
    const response = await fetch(server.url + '/api/rooms', { method: 'POST', headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' }, body: ROOM });
    roomPaths.push(`/api/rooms/${((await response.json()) as { token: string }).token}`);
  }
  const load = (loadSeconds: number) =>
    runLoad({ origin: server.url, method, paths: method === 'POST' ? ['/api/rooms'] : roomPaths, body: method === 'GET' ? undefined : ROOM, token: tenant.token, connections, seconds: loadSeconds, maxRequests: 1_000_000 });

  // Warm-up: JIT, pool, young generation size (--warm-up=0: none, test/bench's smoke run).
  const warmUp = Number(options.get('warm-up') ?? 2);
  if (warmUp > 0) await load(warmUp);
  const session = heapSample || cpuProfDir ? await inspector(INSPECTOR_PORT) : null;
  if (session && cpuProfDir) {
    await session.call('Profiler.enable');
    await session.call('Profiler.setSamplingInterval', { interval: 100 });
    await session.call('Profiler.start');
  }
  if (session && heapSample) {
    await session.call('HeapProfiler.enable');
    await session.call('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: everyAllocation });
  }
  const transactionsBefore = countStatements ? await transactions(database.url) : 0;
  const gcBefore = scavenges(server.output()).length;
  const cpuBefore = threadCpu(server.pid);
  const postgresBefore = postgresCpu();
  const walBefore = await walPosition(database.url);
  const result = await load(seconds);
  const cpuAfter = threadCpu(server.pid);
  const postgresSpent = postgresCpu() - postgresBefore;
  const walWritten = (await walPosition(database.url)) - walBefore;
  const measured = scavenges(server.output()).slice(gcBefore);
  // Less one for this count's own statement.
  const statements = countStatements ? (await transactions(database.url)) - transactionsBefore - 1 : 0;

  console.log(`${method} at ${connections} connections, ${seconds} s: ${result.total} requests, ${Math.round(result.requestsPerSecond)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms`);
  console.log('\nCPU per request, by thread of the server (µs):');
  for (const [thread, ms] of cpuAfter) {
    const spent = ms - (cpuBefore.get(thread) ?? 0);
    if (spent > 0) console.log(`  ${thread.padEnd(28)} ${Math.round((spent * 1000) / result.total)}`);
  }
  console.log(`  ${'PostgreSQL (all processes)'.padEnd(28)} ${Math.round((postgresSpent * 1000) / result.total)}`);
  console.log(`\nWAL per request: ${Math.round(walWritten / result.total)} bytes`);
  if (countStatements) console.log(`Statements (transactions) per request: ${(statements / result.total).toFixed(2)}`);
  const promoted = measured.slice(1).map((gc, i) => gc.after - measured[i]!.after);
  console.log(
    `\nScavenges: ${measured.length}, median pause ${median(measured.map((gc) => gc.pause)).toFixed(2)} ms, ` +
      `old space grown between scavenges ${((median(promoted.length ? promoted : [0]) * 1e6 * measured.length) / result.total / 1000).toFixed(1)} KB per request (median)`,
  );
  if (session && cpuProfDir) {
    const { profile } = await session.call<{ profile: CpuProfile }>('Profiler.stop');
    const file = path.join(cpuProfDir, `${method}-${connections}-${Date.now()}.cpuprofile`);
    fs.writeFileSync(file, JSON.stringify(profile));
    console.log(`\nCPU profile of the measured window: ${file}\nSelf time per request by package (µs; sampled wall time of the event loop):`);
    for (const [where, micros] of selfTimeByPackage(profile, result.total).slice(0, 20)) console.log(`  ${micros.toFixed(1).padStart(7)}  ${where}`);
  }
  if (session && heapSample) {
    const { profile } = await session.call<{ profile: { head: SamplingNode } }>('HeapProfiler.stopSampling');
    const sites = allocationSites(profile.head, result.total);
    console.log(`\nAllocation sites of ${everyAllocation ? 'every object' : 'objects collected by major GCs'} (bytes per request; ${Math.round(sites.reduce((sum, [, bytes]) => sum + bytes, 0))} in all):`);
    for (const [site, bytes] of sites.slice(0, 15)) console.log(`  ${Math.round(bytes).toString().padStart(6)}  ${site}`);
  }
  session?.close();
} finally {
  if (server !== parley) await server.stop();
  await parley.stop();
  await database.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
}

// The API throughput and latency measurement shared by api.bench.ts
// (Parley on PostgreSQL against the two node:http baselines) and embedded.bench.ts
// (Parley on PGlite against Parley on PostgreSQL). Every target gets the same
// requests, interleaved (each repetition alternates which target goes first),
// so that the machine's noise falls on all of them alike. --sustained=SECONDS
// instead runs one endpoint for that long per target, in windows that
// alternate between the targets, and compares each one's last minute with its
// first (tables that grow, autovacuum, checkpoints).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runLoad, type LoadResult } from './load.js';
import { startBenchPostgres, withClient } from './postgres.js';
import { createTenant, startBaseline, startIndependentBaseline, startParley, type ServerProcess } from './processes.js';
import { fixed, flags, markdownTable, median } from './stats.js';

/**
 * baseline: baseline-server.ts (Parley's statements on Parley's schema);
 * independent: independent-baseline-server.ts (a schema of its own);
 * parley@NAME: the build in the directory NAME of --before (an earlier commit).
 */
export type TargetName = 'baseline' | 'independent' | 'parley-pg' | 'parley-pglite' | `parley@${string}`;
const BASELINES: TargetName[] = ['baseline', 'independent'];

interface Target {
  name: TargetName;
  server: ServerProcess;
  token: string;
  roomPaths: string[];
}

const ROOM_BODY = JSON.stringify({
  name: 'Consultation',
  meeting_duration: 30,
  scheduled_at: '2030-03-10T14:00:00Z',
  guest_display_name: 'Patient',
});
const UPDATE_BODY = JSON.stringify({
  name: 'Follow-up consultation',
  meeting_duration: 45,
  scheduled_at: '2030-03-11T09:30:00Z',
  host_display_name: 'Dr. Example',
  enable_chat: false,
});

const ENDPOINTS = [
  { label: 'GET /api/rooms/{token}', method: 'GET' as const, paths: (t: Target) => t.roomPaths },
  { label: 'POST /api/rooms', method: 'POST' as const, paths: () => ['/api/rooms'], body: ROOM_BODY },
  { label: 'PUT /api/rooms/{token}', method: 'PUT' as const, paths: (t: Target) => t.roomPaths, body: UPDATE_BODY },
  { label: 'GET /api/rooms (page 1)', method: 'GET' as const, paths: () => ['/api/rooms?page=1'] },
];

/** Creates rooms through the API, a few at a time, and returns their paths. */
async function createRooms(server: ServerProcess, token: string, count: number): Promise<string[]> {
  const paths: string[] = [];
  for (let i = 0; i < count; i += 10) {
    const made = await Promise.all(
      Array.from({ length: Math.min(10, count - i) }, async () => {
        const response = await fetch(server.url + '/api/rooms', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: ROOM_BODY,
        });
        if (response.status !== 201) throw new Error(`creating a room: ${response.status} ${await response.text()}`);
        return `/api/rooms/${((await response.json()) as { token: string }).token}`;
      }),
    );
    paths.push(...made);
  }
  return paths;
}

/**
 * The baselines among `targetNames`, started beside parley-pg and added to
 * `targets` once their room reads as Parley's: the baseline's byte for byte
 * (the same database and room), the independent one's field for field.
 */
async function addBaselines(
  targets: Target[],
  targetNames: TargetName[],
  options: { clusterUrl: string; poolSize: number; tenants: number; rooms: number; log: (line: string) => void },
): Promise<void> {
  const { clusterUrl, poolSize, tenants, rooms, log } = options;
  if (targetNames.includes('baseline')) {
    // Same database, same tenant, same token and rooms as Parley on PostgreSQL.
    const parley = targets.find((t) => t.name === 'parley-pg');
    if (!parley) throw new Error('the baseline runs beside parley-pg (it uses its database and rooms)');
    // Parley's join URLs: the same room must read the same, byte for byte.
    const server = await startBaseline(clusterUrl, poolSize, parley.server.url);
    targets.unshift({ name: 'baseline', server, token: parley.token, roomPaths: parley.roomPaths });
    const [ours, theirs] = await Promise.all(
      [server, parley.server].map(async (s) => (await fetch(s.url + parley.roomPaths[0], { headers: { authorization: `Bearer ${parley.token}` } })).text()),
    );
    if (ours !== theirs) throw new Error(`the baseline's room differs from Parley's:\n${ours}\n${theirs}`);
  }
  if (targetNames.includes('independent')) {
    const parley = targets.find((t) => t.name === 'parley-pg');
    if (!parley) throw new Error('the independent baseline runs beside parley-pg (its join URLs, its room to compare with)');
    const server = await startIndependentBaseline(clusterUrl, poolSize, parley.server.url, tenants - 1);
    log(`independent: listening on ${server.url}; creating ${rooms} rooms`);
    const independent: Target = { name: 'independent', server, token: server.token, roomPaths: await createRooms(server, server.token, rooms) };
    targets.splice(targets.indexOf(parley), 0, independent);
    // Other rooms, so not the same bytes: the same fields in the same order, each of the same type.
    const shape = async (t: Target) => {
      const room = (await (await fetch(t.server.url + t.roomPaths[0], { headers: { authorization: `Bearer ${t.token}` } })).json()) as Record<string, unknown>;
      return Object.entries(room).map(([field, value]) => `${field}:${Array.isArray(value) ? 'array' : typeof value}`).join(' ');
    };
    const [ours, theirs] = [await shape(independent), await shape(parley)];
    if (ours !== theirs) throw new Error(`the independent baseline's room has other fields than Parley's:\n${ours}\n${theirs}`);
  }
}

export async function runApiBench(allTargets: TargetName[], title: string): Promise<void> {
  const options = flags();
  const seconds = Number(options.get('seconds') ?? 5);
  const reps = Number(options.get('reps') ?? 3);
  const connectionLevels = (options.get('connections') ?? '1,10,100').split(',').map(Number);
  const durable = options.get('durable') === 'true';
  const rooms = Number(options.get('rooms') ?? 1000);
  const poolSize = Number(options.get('pool') ?? 20);
  // --tenants=N: the instance holds N tenants, each with a token (the benchmark's own among them).
  const tenants = Number(options.get('tenants') ?? 1);
  const only = options.get('only');
  const sustained = Number(options.get('sustained') ?? 0);
  const window = Number(options.get('window') ?? 10);
  // --targets=parley-pg,independent: only these of the benchmark's targets (and the --before builds).
  const chosen = options.get('targets')?.split(',');
  const targetNames = chosen ? allTargets.filter((name) => chosen.includes(name)) : allTargets;
  // --before=DIR[,DIR...]: also run the builds in these directories (checkouts of earlier
  // commits, built), each on its own database of the same cluster: before/after figures
  // taken in the same run, under the same background load.
  // --before-db=pglite: those builds on PGlite (a data directory each) instead, beside parley-pglite.
  const beforeOnPglite = options.get('before-db') === 'pglite';
  const beforeDirs = new Map((options.get('before') ?? '').split(',').filter(Boolean).map((dir) => [`parley@${path.basename(dir)}` as const, dir]));
  const log = (line: string) => process.stderr.write(line + '\n');

  const plan = sustained > 0 ? `sustained ${sustained}s per target in ${window}s windows` : `${seconds}s per point, ${reps} repetitions`;
  log(`${title}: ${plan}, connections ${connectionLevels.join('/')}, PostgreSQL fsync ${durable ? 'on' : 'off'}`);
  const postgres = await startBenchPostgres({ durable, log });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-pglite-'));
  const targets: Target[] = [];
  try {
    for (const name of [...targetNames, ...beforeDirs.keys()]) {
      if (BASELINES.includes(name)) continue;
      let env: Record<string, string> = { DATABASE_URL: postgres.url, DATABASE_POOL_SIZE: String(poolSize) };
      if (name === 'parley-pglite') env = { DATA_DIR: dataDir };
      const beforeDir = beforeDirs.get(name as `parley@${string}`);
      if (beforeDir && beforeOnPglite) env = { DATA_DIR: path.join(dataDir, `before-${targets.length}`) };
      else if (beforeDir) {
        const database = `parley_before_${beforeDirs.size}_${targets.length}`;
        await withClient(postgres.url, (client) => client.query(`create database ${database}`));
        env.DATABASE_URL = postgres.url.replace(/\/postgres$/, `/${database}`);
      }
      const entry = beforeDir ? path.resolve(beforeDir, 'dist/src/main.js') : undefined;
      const server = await startParley({ ...env, LOG_LEVEL: options.get('log-level') ?? 'info' }, entry);
      if (tenants > 1) {
        log(`${name}: creating ${tenants - 1} other tenants`);
        for (let i = 1; i < tenants; i++) await createTenant(server, `Other tenant ${i}`);
        // Statistics now, as autovacuum would give them within a minute (PGlite's maintenance job alike).
        if (env.DATABASE_URL) await withClient(env.DATABASE_URL, (client) => client.query('analyze'));
      }
      log(`${name}: listening on ${server.url}; creating ${rooms} rooms`);
      targets.push({ name, server, token: server.instanceToken, roomPaths: await createRooms(server, server.instanceToken, rooms) });
    }
    await addBaselines(targets, targetNames, { clusterUrl: postgres.url, poolSize, tenants, rooms, log });

    const endpoints = ENDPOINTS.filter((e) => !only || only.split(',').some((part) => e.label.includes(part)));
    const measure = (target: Target, endpoint: (typeof ENDPOINTS)[number], connections: number, secs: number) =>
      runLoad({
        origin: target.server.url,
        method: endpoint.method,
        paths: endpoint.paths(target),
        token: target.token,
        ...(endpoint.body ? { body: endpoint.body } : {}),
        connections,
        seconds: secs,
        maxRequests: secs * 100_000,
      });

    // --warm-up=0: none (test/bench's smoke run, whose figures are not read).
    const warmUp = Number(options.get('warm-up') ?? 1);
    log(`warm-up: ${warmUp} s a target and endpoint`);
    if (warmUp > 0) for (const endpoint of endpoints) for (const target of targets) await measure(target, endpoint, 10, warmUp);
    if (sustained > 0) {
      await runSustained({ targets, endpoint: endpoints[0]!, connections: connectionLevels[0]!, seconds: sustained, window, measure, log, durable });
      return;
    }

    const results = new Map<string, LoadResult[]>();
    const key = (target: string, endpoint: string, connections: number) => `${target}|${endpoint}|${connections}`;
    for (let rep = 0; rep < reps; rep++) {
      const order = rep % 2 === 0 ? targets : [...targets].reverse();
      for (const endpoint of endpoints) {
        for (const connections of connectionLevels) {
          for (const target of order) {
            const result = await measure(target, endpoint, connections, seconds);
            const k = key(target.name, endpoint.label, connections);
            results.set(k, [...(results.get(k) ?? []), result]);
            log(`rep ${rep + 1} ${target.name.padEnd(13)} ${endpoint.label.padEnd(24)} c=${String(connections).padEnd(3)} ` +
              `${fixed(result.requestsPerSecond, 0).padStart(6)} req/s  p50 ${result.p50} ms  p99 ${result.p99} ms`);
          }
        }
      }
    }

    // Each baseline present, and each --before build (after ÷ before), is a reference
    // with ratio columns of its own; without any, the first target.
    const references = targets.filter((t) => BASELINES.includes(t.name) || beforeDirs.has(t.name as `parley@${string}`)).map((t) => t.name);
    if (references.length === 0) references.push(targets[0]!.name);
    const rows: (string | number)[][] = [];
    for (const endpoint of endpoints) {
      for (const connections of connectionLevels) {
        for (const target of targets) {
          const runs = results.get(key(target.name, endpoint.label, connections))!;
          const ratios = references.flatMap((reference) => {
            if (target.name === reference) return ['1', '1'];
            const ref = results.get(key(reference, endpoint.label, connections))!;
            // Ratios are taken within each repetition (measured back to back, under the
            // same background load) and then their median: steadier than a ratio of medians.
            const rpsRatio = median(runs.map((r, i) => r.requestsPerSecond / ref[i]!.requestsPerSecond));
            const p99Ratio = median(runs.map((r, i) => r.p99 / Math.max(ref[i]!.p99, 0.001)));
            return [fixed(rpsRatio, 2), fixed(p99Ratio, 2)];
          });
          rows.push([
            endpoint.label, connections, target.name, fixed(median(runs.map((r) => r.requestsPerSecond)), 0),
            fixed(median(runs.map((r) => r.p50)), 2), fixed(median(runs.map((r) => r.p99)), 2), ...ratios,
          ]);
        }
      }
    }
    console.log(`\n### ${title}\n`);
    console.log(`${new Date().toISOString().slice(0, 16)}Z, ${os.cpus().length} cores, Node ${process.version}, ${seconds}s x ${reps} per point (medians), PostgreSQL fsync ${durable ? 'on' : 'off'}, pool ${poolSize}, log level ${options.get('log-level') ?? 'info'}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
    const ratioHeaders = references.flatMap((reference) => [`req/s ÷ ${reference}`, `p99 ÷ ${reference}`]);
    console.log(markdownTable(['endpoint', 'conns', 'server', 'req/s', 'p50 ms', 'p99 ms', ...ratioHeaders], rows));
  } finally {
    for (const target of targets) await target.server.stop().catch(() => {});
    await postgres.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * --sustained: `seconds` of one endpoint per target, in windows of `window`
 * seconds that alternate between the targets (A B C, C B A, ...), so that each
 * target's first and last minute fall in the same stretch of the machine's
 * time as the others'. Per target: the median window of its first minute and
 * of its last, and last ÷ first (the issue's target: within 10 %); with the
 * independent baseline present, each minute's median per-round ratio to it.
 */
async function runSustained(options: {
  targets: Target[];
  endpoint: (typeof ENDPOINTS)[number];
  connections: number;
  seconds: number;
  window: number;
  durable: boolean;
  measure: (target: Target, endpoint: (typeof ENDPOINTS)[number], connections: number, secs: number) => Promise<LoadResult>;
  log: (line: string) => void;
}): Promise<void> {
  const { targets, endpoint, connections, seconds, window, measure, log } = options;
  const rounds = Math.ceil(seconds / window);
  const perMinute = Math.min(rounds, Math.ceil(60 / window));
  const windows = new Map<TargetName, LoadResult[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      const result = await measure(target, endpoint, connections, window);
      windows.get(target.name)!.push(result);
      log(`window ${round + 1}/${rounds} ${target.name.padEnd(13)} ${endpoint.label} c=${connections} ` +
        `${fixed(result.requestsPerSecond, 0).padStart(6)} req/s  p99 ${result.p99} ms`);
    }
  }
  const first = (runs: LoadResult[]) => runs.slice(0, perMinute);
  const last = (runs: LoadResult[]) => runs.slice(rounds - perMinute);
  const rps = (runs: LoadResult[]) => median(runs.map((r) => r.requestsPerSecond));
  const independent = windows.get('independent');
  const versus = (runs: LoadResult[], pick: (runs: LoadResult[]) => LoadResult[]) =>
    independent ? fixed(median(pick(runs).map((r, i) => r.requestsPerSecond / pick(independent)[i]!.requestsPerSecond)), 2) : '-';
  const rows = targets.map((target) => {
    const runs = windows.get(target.name)!;
    return [
      target.name, runs.length, fixed(rps(first(runs)), 0), fixed(rps(last(runs)), 0), fixed(rps(last(runs)) / rps(first(runs)), 2),
      fixed(median(first(runs).map((r) => r.p99)), 1), fixed(median(last(runs).map((r) => r.p99)), 1),
      versus(runs, first), versus(runs, last), runs.reduce((n, r) => n + r.total, 0),
    ];
  });
  const title = `Sustained ${endpoint.label}, ${connections} connections, ${seconds} s per target in ${window} s windows`;
  console.log(`\n### ${title}\n`);
  console.log(`${new Date().toISOString().slice(0, 16)}Z, ${os.cpus().length} cores, Node ${process.version}, PostgreSQL fsync ${options.durable ? 'on' : 'off'}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
  console.log(markdownTable(
    ['server', 'windows', 'first minute req/s', 'last minute req/s', 'last ÷ first', 'first minute p99 ms', 'last minute p99 ms',
      '÷ independent, first minute', '÷ independent, last minute', 'requests'],
    rows,
  ));
}

// The signaling server under real `ws` clients (a separate
// process): joins per second, server memory per idle joined participant, and
// relay latency of a `signal` with every participant connected. Parley runs as
// `node dist/src/main.js` (npm run build first) on PostgreSQL and on PGlite;
// the baseline is the minimal ws relay of support/realtime-baseline.ts, all
// measured in the same run, targets interleaved (each repetition alternates
// the order) so that the machine's noise falls on all of them alike.
//   npm run bench:realtime -- [--reps=3] [--rooms=500] [--concurrency=1,50] [--joins=1000] [--joins-sequential=200]
//        [--relay-messages=2000] [--relay-rate=1] [--relay-seconds=5] [--targets=baseline,parley-pg,parley-pglite]
//        [--before=DIR [--before-db=pglite]] [--log-level=info] [--extra-rooms=0]
// --extra-rooms=N adds N more rooms to each PostgreSQL target's tenant first
// (generate_series, support/generate.ts): the join path at table scale.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { measureJoins, measureMemory, measureRelay, slope, type MemoryStep } from './support/realtime-bench.js';
import { startBaselineTarget, startClients, startParleyTarget, waitIdle, type JoinResult, type RealtimeTarget, type RelayResult, type TargetName } from './support/realtime-driver.js';
import { generateRooms } from './support/generate.js';
import { startBenchPostgres, withClient } from './support/postgres.js';
import { fixed, flags, markdownTable, median } from './support/stats.js';

const options = flags();
const reps = Number(options.get('reps') ?? 3);
const rooms = Number(options.get('rooms') ?? 500);
const participants = rooms * 2;
const concurrencyLevels = (options.get('concurrency') ?? '1,50').split(',').map(Number);
const joins = Math.min(participants, Number(options.get('joins') ?? 1000));
/** Fewer joins one at a time: the same precision in a fraction of the time. */
const joinsSequential = Math.min(joins, Number(options.get('joins-sequential') ?? 200));
const relayMessages = Number(options.get('relay-messages') ?? 2000);
const relayRate = Number(options.get('relay-rate') ?? 1);
const relaySeconds = Number(options.get('relay-seconds') ?? 5);
const logLevel = options.get('log-level') ?? 'info';
const beforeDir = options.get('before');
/** --before-db=pglite: the earlier build runs on PGlite (else on PostgreSQL). */
const beforeDb = options.get('before-db') ?? 'postgres';
const extraRooms = Number(options.get('extra-rooms') ?? 0);
const names = (options.get('targets') ?? 'baseline,parley-pg,parley-pglite').split(',') as TargetName[];
if (beforeDir) names.push('parley-before');
const log = (line: string) => process.stderr.write(line + '\n');
const mb = (bytes: number) => fixed(bytes / 2 ** 20, 1);
const kb = (bytes: number) => fixed(bytes / 1024, 1);

log(`realtime: ${reps} repetitions, ${rooms} rooms x 2 = ${participants} participants, targets ${names.join(', ')}`);
const postgres = await startBenchPostgres({ durable: false, log });
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-realtime-pglite-'));
const targets: RealtimeTarget[] = [];
const clients = await startClients();
try {
  for (const name of names) {
    log(`${name}: starting, ${rooms} rooms`);
    if (name === 'baseline') {
      targets.push(await startBaselineTarget(rooms));
      continue;
    }
    let env: Record<string, string> = name === 'parley-pglite' ? { DATA_DIR: dataDir } : { DATABASE_URL: postgres.url };
    if (name === 'parley-before' && beforeDb === 'pglite') {
      env = { DATA_DIR: fs.mkdtempSync(path.join(dataDir, 'before-')) };
    } else if (name === 'parley-before') {
      await withClient(postgres.url, (client) => client.query('create database parley_realtime_before'));
      env.DATABASE_URL = postgres.url.replace(/\/postgres$/, '/parley_realtime_before');
    }
    const entry = name === 'parley-before' ? path.resolve(beforeDir!, 'dist/src/main.js') : undefined;
    targets.push(await startParleyTarget(name, { ...env, LOG_LEVEL: logLevel }, rooms, entry));
    if (extraRooms > 0 && env.DATABASE_URL) {
      log(`${name}: adding ${extraRooms} rooms`);
      await withClient(env.DATABASE_URL, async (client) => {
        const tenant = (await client.query<{ id: string }>('select id from tenants order by created_at limit 1')).rows[0]!;
        await generateRooms(client, [{ tenantId: tenant.id, organizationId: null, count: extraRooms, from: rooms }], log);
        await client.query('analyze');
      });
    }
  }

  log('warm-up');
  for (const target of targets) {
    await clients.join(target, target.participants.slice(0, Math.min(200, participants)), 10);
    await clients.relaySequential(target, 200);
    await clients.closeAll();
    await waitIdle(target.pid);
  }

  const memory = new Map<string, MemoryStep[][]>();
  const relay = new Map<string, { sequential: RelayResult; loaded: RelayResult }[]>();
  const joinRuns = new Map<string, JoinResult[]>();
  const add = <T>(map: Map<string, T[]>, key: string, value: T) => map.set(key, [...(map.get(key) ?? []), value]);
  const levels = [participants / 2, participants];

  for (let rep = 0; rep < reps; rep++) {
    const order = rep % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      const steps = await measureMemory(clients, target, levels);
      add(memory, target.name, steps);
      log(`rep ${rep + 1} ${target.name.padEnd(13)} memory ` + steps.map((s) => `${s.participants}: rss ${mb(s.memory.rss)} MB heap ${mb(s.memory.heapUsed)} MB`).join(', '));
      const result = await measureRelay(clients, target, { messages: relayMessages, perSocketRate: relayRate, seconds: relaySeconds });
      add(relay, target.name, result);
      log(`rep ${rep + 1} ${target.name.padEnd(13)} relay one-at-a-time p50 ${fixed(result.sequential.p50, 2)} p99 ${fixed(result.sequential.p99, 2)} ms; ` +
        `loaded (${fixed(result.loaded.sent / result.loaded.seconds, 0)} msg/s) p50 ${fixed(result.loaded.p50, 2)} p99 ${fixed(result.loaded.p99, 2)} ms, ` +
        `server ${fixed(result.loaded.serverCpuMicros!, 1)} µs CPU/message`);
      await clients.closeAll();
      await waitIdle(target.pid);
    }
    for (const concurrency of concurrencyLevels) {
      for (const target of order) {
        const result = await measureJoins(clients, target, concurrency === 1 ? joinsSequential : joins, concurrency);
        add(joinRuns, `${target.name}|${concurrency}`, result);
        log(`rep ${rep + 1} ${target.name.padEnd(13)} joins c=${String(concurrency).padEnd(3)} ${fixed(result.perSecond, 0).padStart(6)}/s  p50 ${fixed(result.p50, 1)} p99 ${fixed(result.p99, 1)} ms, ` +
          `server ${fixed(result.serverCpuMicros!, 0)} µs CPU/join`);
      }
    }
  }

  const reference = targets[0]!.name;
  const header = `${new Date().toISOString().slice(0, 16)}Z, ${os.cpus().length} cores, Node ${process.version}, ${reps} repetitions (medians), ` +
    `${rooms} rooms x 2 participants${extraRooms ? ` (+${extraRooms} rooms in the PostgreSQL tables)` : ''}, PostgreSQL fsync off, log level ${logLevel}`;
  console.log(`\n### Realtime: Parley vs the minimal ws relay\n\n${header}\n`);

  const joinRows: (string | number)[][] = [];
  for (const concurrency of concurrencyLevels) {
    const refRate = median(joinRuns.get(`${reference}|${concurrency}`)!.map((r) => r.perSecond));
    for (const target of targets) {
      const runs = joinRuns.get(`${target.name}|${concurrency}`)!;
      const rate = median(runs.map((r) => r.perSecond));
      joinRows.push([
        concurrency, target.name, runs[0]!.joined, fixed(rate, 0), fixed(median(runs.map((r) => r.p50)), 1), fixed(median(runs.map((r) => r.p99)), 1),
        fixed(rate / refRate, 2), fixed(median(runs.map((r) => r.serverCpuMicros!)), 0),
      ]);
    }
  }
  console.log('Joins (connect + join + `joined` reply):\n');
  console.log(markdownTable(['concurrency', 'server', 'joins', 'joins/s', 'p50 ms', 'p99 ms', `joins/s ÷ ${reference}`, 'server CPU µs/join'], joinRows));

  const memoryRows = targets.map((target) => {
    const runs = memory.get(target.name)!;
    const at = (i: number, of: 'rss' | 'heapUsed') => median(runs.map((steps) => steps[i]!.memory[of]));
    const rssSlope = median(runs.map((steps) => slope(steps, 'rss')));
    const heapSlope = median(runs.map((steps) => slope(steps, 'heapUsed')));
    return [
      target.name,
      `${mb(at(0, 'rss'))} / ${mb(at(1, 'rss'))} / ${mb(at(2, 'rss'))}`,
      `${mb(at(0, 'heapUsed'))} / ${mb(at(1, 'heapUsed'))} / ${mb(at(2, 'heapUsed'))}`,
      kb(rssSlope),
      kb(heapSlope),
      mb(rssSlope * participants),
    ];
  });
  console.log(`\nServer memory with 0 / ${levels.join(' / ')} idle joined participants (after two full GCs; slope = least squares):\n`);
  console.log(markdownTable(['server', 'RSS MB', 'heap MB', 'RSS KB/participant', 'heap KB/participant', `RSS for ${participants} MB`], memoryRows));

  const ref = relay.get(reference)!;
  const relayRows: (string | number)[][] = [];
  for (const mode of ['sequential', 'loaded'] as const) {
    const refP50 = median(ref.map((r) => r[mode].p50));
    const refP99 = median(ref.map((r) => r[mode].p99));
    for (const target of targets) {
      const runs = relay.get(target.name)!.map((r) => r[mode]);
      const p50 = median(runs.map((r) => r.p50));
      const p99 = median(runs.map((r) => r.p99));
      const label = mode === 'sequential' ? 'one at a time' : `${fixed(median(runs.map((r) => r.sent / r.seconds)), 0)} msg/s`;
      const cpu = mode === 'loaded' ? fixed(median(runs.map((r) => r.serverCpuMicros!)), 1) : '';
      relayRows.push([label, target.name, median(runs.map((r) => r.received)), fixed(p50, 2), fixed(p99, 2), fixed(p50 / refP50, 2), fixed(p99 / refP99, 2), cpu]);
    }
  }
  console.log(`\nRelay latency of a \`signal\` from one participant to the other of its room, ${participants} participants connected:\n`);
  console.log(markdownTable(['load', 'server', 'messages', 'p50 ms', 'p99 ms', `p50 ÷ ${reference}`, `p99 ÷ ${reference}`, 'server CPU µs/message'], relayRows));
} finally {
  clients.stop();
  for (const target of targets) await target.stop().catch(() => {});
  await postgres.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

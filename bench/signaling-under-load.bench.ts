// Signaling that API load cannot stall (issue 15, point 3): the relay latency
// of a `signal` between the two participants of a room, with `--rooms` x 2
// participants connected, each sending `--relay-rate` signals a second to its
// partner, alone and while 100 connections POST rooms (autocannon, its own
// process); `GET /healthz` (one connection, no database) the same way; and the
// POST load's own req/s and p99. The signals go out on a schedule, not one
// after the other's arrival: a server that stalls for a second delays every
// signal sent in that second, and they all count (one at a time, a stall
// would delay one message of thousands and vanish from the p99). Parley runs as `node dist/src/main.js` on PGlite (DATA_DIR) and on
// PostgreSQL, and `--before=DIR` (an earlier build, bench/README.md) on PGlite
// (or PostgreSQL, `--before-db=pg`):
// all in one run, the targets' order alternating by repetition.
//
// The control: the minimal ws relay (support/realtime-baseline.ts) in a process
// of its own, with as many participants, measured the same way alone and while
// each target takes the POST load. The API never touches its event loop, so
// what the load does to it is what the machine's shared cores do: the best a
// Parley with signaling off the API's event loop could show on this machine.
//   npm run bench:signaling-load -- [--reps=3] [--rooms=500] [--seconds=8] [--connections=100]
//        [--relay-rate=0.2] [--slack=4] [--targets=parley-pglite,parley-pg] [--before=DIR] [--before-db=pglite|pg] [--log-level=info] [--api-concurrency=0,8]
//        [--env-variants='KEY=VALUE;KEY=VALUE'] [--pin]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runLoad, startLoad, type LoadResult, type LoadSpec } from './support/load.js';
import { startBenchPostgres, withClient } from './support/postgres.js';
import { startBaselineTarget, startClients, startParleyTarget, processTree, waitIdle, type RealtimeTarget, type RelayResult, type TargetName } from './support/realtime-driver.js';
import { fixed, flags, markdownTable, median } from './support/stats.js';

const options = flags();
const reps = Number(options.get('reps') ?? 3);
const rooms = Number(options.get('rooms') ?? 500);
const seconds = Number(options.get('seconds') ?? 8);
const connections = Number(options.get('connections') ?? 100);
/** Signals per participant per second: 0.2 with 1,000 connected is 200 a second, an ICE trickle's order of magnitude. */
const relayRate = Number(options.get('relay-rate') ?? 0.2);
const logLevel = options.get('log-level') ?? 'info';
const beforeDir = options.get('before');
/** `--before-db=pg`: the earlier build on PostgreSQL instead of PGlite. */
const beforeDb = options.get('before-db') ?? 'pglite';
const names = (options.get('targets') ?? 'parley-pglite,parley-pg').split(',') as TargetName[];
if (beforeDir) names.push('parley-before');
/** `--api-concurrency=0,8`: each target again with API_CONCURRENCY set to each value, as targets of their own. */
const apiConcurrency = options.get('api-concurrency')?.split(',') ?? [];
/** `--env-variants='NODE_OPTIONS=--max-semi-space-size=64;LOG_LEVEL=warn'`: each target again with each setting, as targets of their own. */
const envVariants = (options.get('env-variants')?.split(';') ?? []).map((setting) => {
  const at = setting.indexOf('=');
  if (at < 1) throw new Error(`--env-variants: ${setting} is not KEY=VALUE`);
  return { label: setting, env: { [setting.slice(0, at)]: setting.slice(at + 1) } };
});
/**
 * `--pin`: each target's server (all its threads: the event loop, its PGlite
 * thread; and its calls process) alone on the first core, at the nice values
 * it runs with anywhere (0, PGlite's thread 10, its calls process -5 as
 * root), everything else (PostgreSQL, the load processes, the clients, the
 * control) on the second. On a 2-core machine the
 * load generator and the 1,000 clients otherwise take the server's core as
 * well. On the second core the clients and the control, which measure, must
 * not wait behind the 100 backends the load keeps busy, or the figures say
 * more about that core than about the server: their event loops run ahead of
 * everything (real-time scheduling, SCHED_FIFO), their other threads (V8's
 * GC helpers, which an event loop may wait for) first among the ordinary ones
 * (nice -20), PostgreSQL and the load last (nice 19). With only nice -20 for
 * the measurers, the control relay, which the API never touches, went to 10x
 * under the load; with every thread real-time, the joins timed out
 * (bench/README.md). Linux only (`taskset`, `renice`, `chrt`), as root.
 */
const pin = options.has('pin');
const log = (line: string) => process.stderr.write(line + '\n');
/** Puts every thread of process `pid` and of the processes it started (a calls process) on CPU `cpu` (children started later inherit it). */
const pinTo = (pid: number, cpu: number) => {
  for (const one of processTree(pid)) execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(one)], { stdio: 'ignore' });
};
/** Every thread of process `pid` and of the processes it started at this nice value (threads and children it starts later inherit it). */
const niceAll = (pid: number, nice: number) => {
  for (const one of processTree(pid)) {
    for (const thread of fs.readdirSync(`/proc/${one}/task`)) execFileSync('renice', ['-n', String(nice), '-p', thread], { stdio: 'ignore' });
  }
};
/** Process `pid`'s main thread (its event loop) runs the moment it has work, ahead of every ordinary thread. */
const realTime = (pid: number) => execFileSync('chrt', ['-f', '-p', '10', String(pid)], { stdio: 'ignore' });
// Before anything is started: what this process starts (PostgreSQL, the load)
// inherits the second core and the last place on it.
if (pin) {
  pinTo(process.pid, 1);
  niceAll(process.pid, 19);
}
/**
 * What is measured under the load starts RAMP s after its first answer and
 * runs `seconds` - 2 RAMP; the load runs SLACK s longer than `seconds`, so that
 * a /healthz load process slow to start still measures inside it (`--slack`;
 * test/bench's smoke run, whose figures are not read, takes 1: 3 s less a load).
 */
const RAMP = 1;
const SLACK = Number(options.get('slack') ?? 4);
const ROOM_BODY = JSON.stringify({ name: 'Consultation', meeting_duration: 30, scheduled_at: '2030-03-10T14:00:00Z' });

interface Run {
  relayAlone: RelayResult;
  relayLoaded: RelayResult;
  healthAlone: LoadResult;
  healthLoaded: LoadResult;
  /** The POST load itself (the one beside the relay). */
  api: LoadResult;
  /** The control relay, alone and while this target takes the POST load. */
  controlAlone: RelayResult;
  controlLoaded: RelayResult;
  /** The node's API limit (parley_api_concurrency_limit) as the loaded relay ended; NaN for a build without it. */
  limitLoaded: number;
}

/** Parley's count of `signal` frames received (GET /metrics): proves a relay went through the target measured. */
async function signalsCounted(target: RealtimeTarget): Promise<number> {
  const text = await (await fetch(`${target.origin}/metrics`)).text();
  const line = /^parley_signaling_messages_total\{type="signal"\} (\d+)/m.exec(text);
  return line ? Number(line[1]) : 0;
}

/** Where calls-first.ts has set the target's API limit (GET /metrics). */
async function apiLimit(target: RealtimeTarget): Promise<number> {
  const text = await (await fetch(`${target.origin}/metrics`)).text();
  return Number(/^parley_api_concurrency_limit (\d+)/m.exec(text)?.[1] ?? NaN);
}

log(`signaling under API load: ${reps} repetitions, ${rooms * 2} participants connected, ${connections} connections POST for ${seconds}s, targets ${names.join(', ')}`);
const postgres = await startBenchPostgres({ durable: false, log });
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-signaling-load-'));
const targets: RealtimeTarget[] = [];
const clients = await startClients();
let control: RealtimeTarget | undefined;
try {
  log(`control: the minimal ws relay, ${rooms} rooms`);
  control = await startBaselineTarget(rooms);
  if (pin) {
    for (const pid of [clients.pid, control.pid]) {
      niceAll(pid, -20);
      realTime(pid);
    }
  }
  const extra = [...apiConcurrency.map((limit) => ({ label: `api-concurrency=${limit}`, env: { API_CONCURRENCY: limit } })), ...envVariants];
  const variants = names.flatMap((name) => [{ name, label: '', env: {} as Record<string, string> }, ...extra.map((e) => ({ name, ...e }))]);
  for (const [i, variant] of variants.entries()) {
    const name = (variant.label ? `${variant.name} ${variant.label}` : variant.name) as TargetName;
    log(`${name}: starting, ${rooms} rooms`);
    let env: Record<string, string>;
    if (variant.name === 'parley-pg' || (variant.name === 'parley-before' && beforeDb === 'pg')) {
      // A database of its own: Parley prints its first token only on an empty one.
      const url = new URL(postgres.url);
      url.pathname = `/parley_${i}`;
      await withClient(postgres.url, (client) => client.query(`create database parley_${i}`));
      env = { DATABASE_URL: url.href };
    } else {
      env = { DATA_DIR: fs.mkdtempSync(path.join(dataDir, `${variant.name}-`)) };
    }
    const entry = variant.name === 'parley-before' ? path.resolve(beforeDir!, 'dist/src/main.js') : undefined;
    // Started from this thread at nice 0, as anywhere, so that the priorities a
    // server sets itself (its calls process five steps ahead, PGlite's thread at
    // 10) are the ones it would have; this process goes back to the last place.
    if (pin) os.setPriority(0, 0);
    const target = await startParleyTarget(name, { ...env, ...variant.env, LOG_LEVEL: logLevel }, rooms, entry);
    if (pin) {
      os.setPriority(0, 19);
      pinTo(target.pid, 0);
    }
    targets.push(target);
  }

  const postSpec = (target: RealtimeTarget, secs: number): LoadSpec =>
    ({ origin: target.origin, method: 'POST', paths: ['/api/rooms'], token: target.apiToken!, body: ROOM_BODY, connections, seconds: secs, maxRequests: secs * 100_000 });
  /** `measure` runs inside the POST load; returns the load's result and the measurement's. */
  const underLoad = async <T>(target: RealtimeTarget, measure: () => Promise<T>): Promise<[LoadResult, T]> => {
    const load = startLoad(postSpec(target, seconds + SLACK));
    await load.answered;
    await new Promise((resolve) => setTimeout(resolve, RAMP * 1000));
    const measured = await measure();
    return [await load.result, measured];
  };
  const health = (target: RealtimeTarget, secs: number) =>
    runLoad({ origin: target.origin, method: 'GET', paths: ['/healthz'], token: 'unused', connections: 1, seconds: secs, maxRequests: secs * 100_000 });

  /** Relay through `target`, checked against Parley's own count of what it received. */
  const relay = async (target: RealtimeTarget, what: string): Promise<RelayResult> => {
    const before = target === control ? 0 : await signalsCounted(target);
    const result = await clients.relayLoaded(target, relayRate, seconds - 2 * RAMP);
    if (result.lost > 0 || result.rateLimited > 0) throw new Error(`${target.name} relay ${what}: ${result.lost} of ${result.sent} messages lost, ${result.rateLimited} rate-limited`);
    if (target !== control) {
      const counted = (await signalsCounted(target)) - before;
      if (counted < result.received) throw new Error(`${target.name} relay ${what}: ${result.received} signals received but the server counted ${counted}`);
    }
    return result;
  };

  /** Everyone connected for the whole run: the relay and the heartbeat see all of them. */
  for (const target of [control, ...targets]) {
    const joined = await clients.join(target, target.participants, 50);
    if (joined.errors > 0) throw new Error(`${target.name}: ${joined.errors} joins failed (${joined.firstError})`);
    log(`${target.name}: ${joined.joined} participants joined; warm-up`);
    if (target !== control) await runLoad(postSpec(target, 2));
  }

  const runs = new Map<string, Run[]>();
  for (let rep = 0; rep < reps; rep++) {
    const order = rep % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      await waitIdle(target.pid);
      const relayAlone = await relay(target, 'alone');
      await waitIdle(target.pid);
      const healthAlone = await health(target, seconds - 2 * RAMP);
      await waitIdle(target.pid);
      const controlAlone = await relay(control, 'alone');
      await waitIdle(target.pid);
      const [api, [relayLoaded, limitLoaded]] = await underLoad(target, async () => [await relay(target, 'under load'), await apiLimit(target)] as const);
      await waitIdle(target.pid);
      const [, healthLoaded] = await underLoad(target, () => health(target, seconds - 2 * RAMP));
      await waitIdle(target.pid);
      const [, controlLoaded] = await underLoad(target, () => relay(control!, `under ${target.name}'s load`));
      const run: Run = { relayAlone, relayLoaded, healthAlone, healthLoaded, api, controlAlone, controlLoaded, limitLoaded };
      runs.set(target.name, [...(runs.get(target.name) ?? []), run]);
      log(`rep ${rep + 1} ${target.name.padEnd(13)} relay p99 ${fixed(relayAlone.p99, 2)} alone, ${fixed(relayLoaded.p99, 2)} ms loaded ` +
        `(${relayLoaded.received} msgs); healthz p99 ${fixed(healthAlone.p99, 2)} / ${fixed(healthLoaded.p99, 2)} ms; ` +
        `POST ${fixed(api.requestsPerSecond, 0)}/s p99 ${fixed(api.p99, 1)} ms, API limit ${limitLoaded}; control relay p99 ${fixed(controlAlone.p99, 2)} / ${fixed(controlLoaded.p99, 2)} ms`);
    }
  }

  const rows = targets.map((target) => {
    const all = runs.get(target.name)!;
    const m = (of: (run: Run) => number, digits = 2) => fixed(median(all.map(of)), digits);
    return [
      target.name,
      m((r) => r.relayAlone.p50), m((r) => r.relayAlone.p99), m((r) => r.relayLoaded.p50), m((r) => r.relayLoaded.p99),
      m((r) => r.relayLoaded.p99 / r.relayAlone.p99),
      m((r) => r.relayLoaded.received, 0),
      m((r) => r.healthAlone.p99), m((r) => r.healthLoaded.p50), m((r) => r.healthLoaded.p99),
      m((r) => r.api.requestsPerSecond, 0), m((r) => r.api.p50, 1), m((r) => r.api.p99, 1),
      all.some((r) => Number.isNaN(r.limitLoaded)) ? '–' : all.map((r) => r.limitLoaded).join(', '),
    ];
  });
  console.log(`\n### Signaling under API load\n`);
  console.log(`${new Date().toISOString().slice(0, 16)}Z, ${os.cpus().length} cores, load average ${os.loadavg().map((l) => fixed(l, 1)).join(' ')}, Node ${process.version}, ` +
    `${reps} repetitions (medians; the ratio is the median of each repetition's own), ${rooms * 2} participants connected, ` +
    `${fixed(relayRate * rooms * 2, 0)} signals/s, ${connections} connections POST /api/rooms, PostgreSQL fsync off, log level ${logLevel}` +
    `${pin ? ', each server pinned to the first core and everything else to the second (--pin)' : ''}\n`);
  console.log(markdownTable(
    ['server', 'relay p50 alone', 'relay p99 alone', 'relay p50 loaded', 'relay p99 loaded', 'p99 loaded ÷ alone', 'messages loaded',
      'healthz p99 alone', 'healthz p50 loaded', 'healthz p99 loaded', 'POST req/s', 'POST p50', 'POST p99', 'API limit loaded'],
    rows,
  ));
  console.log(`\n(milliseconds; relay: every participant sends ${relayRate} \`signal\`/s to the other of its room, start times spread evenly; send to receipt)`);
  console.log(`\nThe control (the minimal ws relay in its own process, ${rooms * 2} participants), alone and beside each target's POST load:\n`);
  console.log(markdownTable(
    ['load on', 'control p50 alone', 'control p99 alone', 'control p50 loaded', 'control p99 loaded', 'control p99 loaded ÷ alone', "target's ratio ÷ control's"],
    targets.map((target) => {
      const all = runs.get(target.name)!;
      const m = (of: (run: Run) => number) => fixed(median(all.map(of)), 2);
      const controlRatio = (r: Run) => r.controlLoaded.p99 / r.controlAlone.p99;
      return [
        target.name,
        m((r) => r.controlAlone.p50), m((r) => r.controlAlone.p99), m((r) => r.controlLoaded.p50), m((r) => r.controlLoaded.p99),
        m(controlRatio), m((r) => r.relayLoaded.p99 / r.relayAlone.p99 / controlRatio(r)),
      ];
    }),
  ));
} finally {
  clients.stop();
  await control?.stop().catch(() => {});
  for (const target of targets) await target.stop().catch(() => {});
  await postgres.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

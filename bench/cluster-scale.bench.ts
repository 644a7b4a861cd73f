// Room creates of one tenant against creates spread over several tenants, on
// 1, 2 and 4 Parley nodes sharing one PostgreSQL (issue 15). A counter kept in
// one row per tenant serializes every create of that tenant (the row's lock is
// held until the commit's WAL flush), so one tenant stops scaling with nodes
// while several tenants go on: the ratio one ÷ spread says whether one large
// integrator is capped by a row. Both scenarios use the same load processes
// and connections; only the tokens differ.
//   npm run bench:cluster-scale -- [--nodes=1,2,4] [--tenants=4] [--per-node=16] [--seconds=5] [--reps=3]
//        [--durable] [--before=DIR] [--log-level=warn]
// --before=DIR also runs the build in DIR (an earlier commit, built) on its
// own database of the same cluster, alternating with this one: before/after in
// one run. The load processes (bench/support/load-worker.ts) run beside the
// nodes on this machine, so absolute rates are this machine's, not a cluster's.
import path from 'node:path';
import os from 'node:os';
import { runLoad, type LoadResult } from './support/load.js';
import { startBenchPostgres, withClient } from './support/postgres.js';
import { createTenant, root, startParley, type ServerProcess } from './support/processes.js';
import { fixed, flags, markdownTable, median } from './support/stats.js';

const options = flags();
const nodeCounts = (options.get('nodes') ?? '1,2,4').split(',').map(Number);
const tenantCount = Number(options.get('tenants') ?? 4);
const perNode = Number(options.get('per-node') ?? 16);
const seconds = Number(options.get('seconds') ?? 5);
const reps = Number(options.get('reps') ?? 3);
const durable = options.get('durable') === 'true';
const logLevel = options.get('log-level') ?? 'warn';
const beforeDir = options.get('before');
const log = (line: string) => process.stderr.write(line + '\n');

const ROOM_BODY = JSON.stringify({ name: 'Consultation', meeting_duration: 30, scheduled_at: '2030-03-10T14:00:00Z' });
const SCENARIOS = ['one tenant', `${tenantCount} tenants`] as const;
type Scenario = (typeof SCENARIOS)[number];

interface Build {
  name: string;
  nodes: ServerProcess[];
  tokens: string[];
}

async function startBuild(name: string, entry: string, databaseUrl: string, count: number): Promise<Build> {
  const env = { DATABASE_URL: databaseUrl, LOG_LEVEL: logLevel, DATABASE_POOL_SIZE: '10' };
  const first = await startParley(env, entry);
  const nodes: ServerProcess[] = [first];
  // The others find a migrated database with a tenant already: no token to print.
  for (let i = 1; i < count; i++) nodes.push(await startParley({ ...env, EXPECT_TOKEN: 'no' }, entry));
  const tokens: string[] = [];
  for (let i = 0; i < tenantCount; i++) tokens.push((await createTenant(first, `bench tenant ${i}`)).token);
  log(`${name}: ${count} node(s) on ${nodes.map((n) => n.url).join(' ')}, ${tenantCount} tenants`);
  return { name, nodes, tokens };
}

/** One point: tenantCount load processes side by side, process i on node i mod n, perNode × n connections in all. */
async function measure(build: Build, nodeCount: number, scenario: Scenario): Promise<{ rps: number; p99: number }> {
  const workers = tenantCount;
  const connections = Math.max(1, Math.round((perNode * nodeCount) / workers));
  const results: LoadResult[] = await Promise.all(
    Array.from({ length: workers }, (_, i) =>
      runLoad({
        origin: build.nodes[i % nodeCount]!.url,
        method: 'POST',
        paths: ['/api/rooms'],
        token: build.tokens[scenario === 'one tenant' ? 0 : i % tenantCount]!,
        body: ROOM_BODY,
        connections,
        seconds,
        maxRequests: seconds * 50_000,
      }),
    ),
  );
  return { rps: results.reduce((sum, r) => sum + r.requestsPerSecond, 0), p99: Math.max(...results.map((r) => r.p99)) };
}

log(`cluster scale: POST room, nodes ${nodeCounts.join('/')}, ${tenantCount} load processes, ${perNode} connections per node, ${seconds}s x ${reps}, fsync ${durable ? 'on' : 'off'}`);
const postgres = await startBenchPostgres({ durable, log });
const builds: Build[] = [];
try {
  const most = Math.max(...nodeCounts);
  builds.push(await startBuild('now', path.join(root, 'dist/src/main.js'), postgres.url, most));
  if (beforeDir) {
    await withClient(postgres.url, (client) => client.query('create database parley_before'));
    builds.push(await startBuild('before', path.resolve(beforeDir, 'dist/src/main.js'), postgres.url.replace(/\/postgres$/, '/parley_before'), most));
  }
  log('warm-up');
  for (const build of builds) await measure(build, 1, SCENARIOS[1]);

  const results = new Map<string, { rps: number; p99: number }[]>();
  const key = (build: string, nodes: number, scenario: Scenario) => `${build}|${nodes}|${scenario}`;
  for (let rep = 0; rep < reps; rep++) {
    for (const nodes of nodeCounts) {
      // Each repetition alternates the order, so that drift falls on all alike.
      const scenarios = rep % 2 === 0 ? SCENARIOS : [...SCENARIOS].reverse();
      const order = rep % 2 === 0 ? builds : [...builds].reverse();
      for (const scenario of scenarios) {
        for (const build of order) {
          const result = await measure(build, nodes, scenario);
          const k = key(build.name, nodes, scenario);
          results.set(k, [...(results.get(k) ?? []), result]);
          log(`rep ${rep + 1} ${build.name.padEnd(6)} ${nodes} node(s) ${scenario.padEnd(10)} ${fixed(result.rps, 0).padStart(6)} req/s  p99 ${result.p99} ms`);
        }
      }
    }
  }

  const rows: (string | number)[][] = [];
  for (const build of builds) {
    for (const nodes of nodeCounts) {
      for (const scenario of SCENARIOS) {
        const runs = results.get(key(build.name, nodes, scenario))!;
        const spread = results.get(key(build.name, nodes, SCENARIOS[1]))!;
        const single = results.get(key(build.name, nodeCounts[0]!, scenario))!;
        rows.push([
          build.name, nodes, scenario, fixed(median(runs.map((r) => r.rps)), 0), fixed(median(runs.map((r) => r.p99)), 1),
          // Ratios within each repetition, then their median (docs: bench/README.md).
          fixed(median(runs.map((r, i) => r.rps / spread[i]!.rps)), 2),
          fixed(median(runs.map((r, i) => r.rps / single[i]!.rps)), 2),
        ]);
      }
    }
  }
  console.log('\n### Room creates: one tenant against several, by number of nodes\n');
  console.log(`${new Date().toISOString().slice(0, 16)}Z, ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}, Node ${process.version}, ${seconds}s x ${reps} per point (medians), ${perNode} connections per node, PostgreSQL fsync ${durable ? 'on' : 'off'}\n`);
  console.log(markdownTable(['build', 'nodes', 'tenants', 'req/s', 'p99 ms', `÷ ${SCENARIOS[1]}`, `÷ ${nodeCounts[0]} node(s)`], rows));
} finally {
  for (const build of builds) for (const node of build.nodes) await node.stop().catch(() => {});
  await postgres.stop();
}

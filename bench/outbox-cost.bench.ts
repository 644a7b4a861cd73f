// What the webhook outbox (src/db/migrations/0006_webhooks.sql) costs the hot
// paths. Three variants: the triggers disabled (as before webhooks: a
// disabled trigger is skipped before its function runs), on with no endpoint
// for the tenant, and on with an endpoint that wants every event. They run in
// interleaved blocks on one database, so that the machine's drift hits them
// alike; the time is the median block, and the change is the median of each
// block's own ratio to the triggers off (paired within the block, so that a
// slow minute of a loaded machine, which slows every variant of its block,
// cancels out). Both in wall time and in CPU (support/cpu.ts): on a shared
// machine the CPU is the steadier of the two (bench/README.md).
// --path=services (the default): in process against the domain services, a
// join and a leave of a call, POST room (create) and PUT room (update). Create
// and PUT fire no trigger of ours today (the status trigger is UPDATE OF
// status only), and are measured so that the figure shows it, and catches a
// trigger added to them later.
// --path=ws: a join and a leave as a browser makes them, over a real
// WebSocket to the realtime server listening in this process
// (support/ws-join.ts): the share of a user's join that the outbox is.
//   npm run bench:outbox -- [--db=pglite|postgres] [--path=services|ws] [--blocks=10] [--per-block=150] [--concurrency=1]
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { openPGlite, openPostgres } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { createServices } from '../src/services.js';
import { clusterCpu, processCpuMs } from './support/cpu.js';
import { inLanes } from './support/lanes.js';
import { startBenchPostgres } from './support/postgres.js';
import { fixed, flags, markdownTable, median } from './support/stats.js';
import { joinAndLeave, startJoinServer, type JoinServer } from './support/ws-join.js';

const options = flags();
const onPostgres = (options.get('db') ?? 'pglite') === 'postgres';
const blocks = Number(options.get('blocks') ?? 10);
const perBlock = Number(options.get('per-block') ?? 150);
// Operations in flight at once: 1 measures one user's wait; more, what the server can do per second
// (the wall ms per operation is then the inverse of the throughput).
const concurrency = Number(options.get('concurrency') ?? 1);
const path = options.get('path') ?? 'services';
if (path !== 'services' && path !== 'ws') throw new Error(`--path is services or ws, not ${path}`);
const log = (line: string) => process.stderr.write(line + '\n');

const postgres = onPostgres ? await startBenchPostgres({ durable: false, log }) : null;
const database = postgres ? await openPostgres(postgres.url, 10) : await openPGlite(null);
let server: JoinServer | null = null;
try {
  await migrate(database);
  const services = createServices({
    database,
    // No reconnect grace: a socket's close after its leave has nothing left to do (support/ws-join.ts).
    config: loadConfig({ PUBLIC_URL: 'http://bench.test', WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', RECONNECT_GRACE_SECONDS: '0', LOG_LEVEL: 'warn' }),
  });
  if (path === 'ws') server = await startJoinServer(services);
  const tenant = await services.tenants.createTenant({ name: 'Outbox bench' });
  const principal = await services.auth.authenticate(`Bearer ${(await services.tenants.issueToken(tenant.id, {})).token}`);
  const rooms: { token: string; guest_token: string }[] = [];
  for (let i = 0; i < 50; i++) rooms.push((await services.rooms.create(principal, { name: 'R', meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z' })).row);

  const TRIGGERS = [
    ['rooms', 'rooms_webhook_status'],
    ['rooms', 'rooms_webhook_delete'],
    ['participants', 'participants_webhook_join'],
    ['participants', 'participants_webhook_presence'],
  ];
  const triggers = async (on: boolean) => {
    for (const [table, trigger] of TRIGGERS) await sql.raw(`alter table ${table} ${on ? 'enable' : 'disable'} trigger ${trigger}`).execute(database.db);
  };
  let endpoint: string | null = null;
  const variants: [string, () => Promise<void>][] = [
    ['triggers off (before webhooks)', () => triggers(false)],
    ['no endpoint', () => triggers(true)],
    ['an endpoint for every event', async () => {
      await triggers(true);
      endpoint = (await services.webhookEndpoints.create(principal, { url: 'http://127.0.0.1:9/' })).id;
    }],
  ];
  const input = { name: 'R', meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z' };
  const inProcess: [string, (i: number) => Promise<unknown>][] = [
    ['join + leave', async (i) => {
      const joined = await services.participation.join({ joinToken: rooms[i % rooms.length]!.guest_token, displayName: 'P' });
      await services.participation.leave(joined.participant.token);
    }],
    ['POST room', () => services.rooms.create(principal, input)],
    // Alternating names: every PUT really changes the room (a new version), as an integrator's edit does.
    ['PUT room', (i) => services.rooms.update(principal, rooms[i % rooms.length]!.token, { ...input, name: `R${i % 2}` }, undefined)],
  ];
  const overWebSocket = (joinServer: JoinServer): [string, (i: number) => Promise<unknown>][] => [
    ['join + leave over WebSocket', (i) => joinAndLeave(joinServer, rooms[i % rooms.length]!.guest_token)],
  ];
  const operations = server ? overWebSocket(server) : inProcess;
  const key = (variant: string, operation: string) => `${variant}\u0000${operation}`;
  // Per variant and operation, one figure per block: wall ms per operation, and CPU ms per operation (this
  // process, which holds PGlite when embedded, plus the PostgreSQL cluster's processes).
  const wall = new Map<string, number[]>();
  const cpu = new Map<string, number[]>();
  const record = (figures: Map<string, number[]>, k: string, value: number) => figures.set(k, [...(figures.get(k) ?? []), value]);
  const clusterMs = postgres ? clusterCpu((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(database.db)).rows[0]!.pid) : () => 0;
  const cpuMs = () => processCpuMs() + clusterMs();
  for (let block = 0; block < blocks; block++) {
    // Each block starts with another variant: whatever the first runs of a block pay (plans remade after the
    // ALTER TABLE, a checkpoint) falls on each variant alike.
    const order = [...variants.slice(block % variants.length), ...variants.slice(0, block % variants.length)];
    for (const [name, setUp] of order) {
      await setUp();
      for (const [operation, run] of operations) {
        const [started, cpuStarted] = [performance.now(), cpuMs()];
        await inLanes(perBlock, concurrency, run);
        record(wall, key(name, operation), (performance.now() - started) / perBlock);
        record(cpu, key(name, operation), (cpuMs() - cpuStarted) / perBlock);
      }
      // The variant is what it claims: with the endpoint, a message for each join and each leave; without, none.
      const written = Number((await sql<{ n: string }>`select count(*) as n from webhook_messages`.execute(database.db)).rows[0]!.n);
      if (endpoint ? written < 2 * perBlock : written !== 0) throw new Error(`${name}: ${written} messages after ${perBlock} joins + leaves`);
      if (endpoint) await services.repos.webhookEndpoints.delete(tenant.id, endpoint);
      endpoint = null;
    }
    log(`block ${block + 1} of ${blocks} done`);
  }
  /** The median block, and the median over the blocks of each block's ratio to the triggers off. */
  const cells = (figures: Map<string, number[]>, name: string, operation: string) => {
    const before = figures.get(key(variants[0]![0], operation))!;
    const mine = figures.get(key(name, operation))!;
    const change = (median(mine.map((ms, block) => ms / before[block]!)) - 1) * 100;
    return [fixed(median(mine), 3), `${change >= 0 ? '+' : ''}${fixed(change, 1)} %`];
  };
  console.log(
    `${database.kind}, ${path === 'ws' ? 'over WebSocket' : 'in process'}, ${blocks} blocks of ${perBlock} of each operation, ${concurrency} at a time; ` +
      `ms per operation (median block) and change against before (median of the blocks' ratios), ` +
      `in wall time and in CPU (${postgres ? 'this process and the PostgreSQL cluster' : 'this process, PGlite included'})\n`,
  );
  console.log(
    markdownTable(
      ['variant', ...operations.flatMap(([operation]) => [`${operation}, ms`, 'against before', 'CPU ms', 'against before'])],
      variants.map(([name]) => [name, ...operations.flatMap(([operation]) => [...cells(wall, name, operation), ...cells(cpu, name, operation)])]),
    ),
  );
} finally {
  await server?.close();
  await database.close();
  await postgres?.stop();
}

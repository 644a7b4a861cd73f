// What the webhook outbox (src/db/migrations/0006_webhooks.sql) costs the hot
// path, a join and a leave of a call, in process against the domain services:
// the triggers disabled (as before webhooks), on with no endpoint for the
// tenant, and on with an endpoint that wants every event. The three run in
// interleaved blocks on one database, so that the machine's drift hits them
// alike; each figure is the median block. Room create and PUT run no trigger
// of ours (the status trigger fires on UPDATE OF status only), so they are not measured.
//   npm run bench:outbox -- [--db=pglite|postgres] [--blocks=10] [--per-block=150]
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { openPGlite, openPostgres } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { createServices } from '../src/services.js';
import { startBenchPostgres } from './support/postgres.js';
import { fixed, flags, markdownTable, median } from './support/stats.js';

const options = flags();
const onPostgres = (options.get('db') ?? 'pglite') === 'postgres';
const blocks = Number(options.get('blocks') ?? 10);
const perBlock = Number(options.get('per-block') ?? 150);
const log = (line: string) => process.stderr.write(line + '\n');

const postgres = onPostgres ? await startBenchPostgres({ durable: false, log }) : null;
const database = postgres ? await openPostgres(postgres.url, 10) : await openPGlite(null);
try {
  await migrate(database);
  const services = createServices({ database, config: loadConfig({ PUBLIC_URL: 'http://bench.test', WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' }) });
  const tenant = await services.tenants.createTenant({ name: 'Outbox bench' });
  const principal = await services.auth.authenticate(`Bearer ${(await services.tenants.issueToken(tenant.id, {})).token}`);
  const rooms = [];
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
  const times = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (let block = 0; block < blocks; block++) {
    for (const [name, setUp] of variants) {
      await setUp();
      const started = performance.now();
      for (let i = 0; i < perBlock; i++) {
        const joined = await services.participation.join({ joinToken: rooms[i % rooms.length]!.guest_token, displayName: 'P' });
        await services.participation.leave(joined.participant.token);
      }
      times.get(name)!.push((performance.now() - started) / perBlock);
      if (endpoint) await services.repos.webhookEndpoints.delete(tenant.id, endpoint);
      endpoint = null;
    }
  }
  const before = median(times.get(variants[0]![0])!);
  console.log(`${database.kind}, ${blocks} blocks of ${perBlock} join + leave\n`);
  console.log(
    markdownTable(
      ['variant', 'join + leave, ms (median block)', 'against before'],
      variants.map(([name]) => {
        const ms = median(times.get(name)!);
        return [name, fixed(ms, 3), `${ms >= before ? '+' : ''}${fixed(((ms - before) / before) * 100, 1)} %`];
      }),
    ),
  );
} finally {
  await database.close();
  await postgres?.stop();
}

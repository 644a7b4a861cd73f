// What the webhook outbox costs a join and a leave inside PostgreSQL alone,
// without Node in the way: pgbench runs the participants' insert and their
// leave (one transaction, the two statements `participation.join` and
// `.leave` end in) at 4 clients, with the participants triggers off, on for a
// tenant without an endpoint, on with an endpoint that wants every event, and
// the same with migration 0006's foreign key from each message to its
// endpoint put back (0009 dropped it). bench:outbox measures the whole join;
// this one shows what the SQL alone pays, where the differences are larger
// than a shared machine's noise. Variants alternate, each round starting with
// another; the figure is the median over the rounds of each round's ratio to
// the triggers off.
//   npm run bench:outbox-sql -- [--rounds=3] [--seconds=8] [--clients=4]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { openPostgres } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { createServices } from '../src/services.js';
import { startBenchPostgres } from './support/postgres.js';
import { fixed, flags, markdownTable, median } from './support/stats.js';

const options = flags();
const rounds = Number(options.get('rounds') ?? 3);
const seconds = Number(options.get('seconds') ?? 8);
const clients = Number(options.get('clients') ?? 4);
const log = (line: string) => process.stderr.write(line + '\n');

const postgres = await startBenchPostgres({ durable: false, log });
const database = await openPostgres(postgres.url, 2);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-sql-'));
try {
  await migrate(database);
  const services = createServices({ database, config: loadConfig({ PUBLIC_URL: 'http://bench.test', WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', LOG_LEVEL: 'warn' }) });
  const tenant = await services.tenants.createTenant({ name: 'Outbox SQL bench' });
  const principal = await services.auth.authenticate(`Bearer ${(await services.tenants.issueToken(tenant.id, {})).token}`);
  const room = (await services.rooms.create(principal, { name: 'R', meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z' })).row;
  const roomId = Number((await sql<{ id: string }>`select id from rooms where token = ${room.token}`.execute(database.db)).rows[0]!.id);
  const endpoint = (await services.webhookEndpoints.create(principal, { url: 'http://127.0.0.1:9/' })).id;

  // A participant's token from the client and a random number: pgbench cannot join strings in \set.
  const script = path.join(dir, 'join-leave.sql');
  fs.writeFileSync(
    script,
    `\\set n random(1, 9000000000000000)
BEGIN;
INSERT INTO participants (token, room_id, role, display_name, node_id, joined_at) VALUES ('p' || :client_id || '_' || :n, ${roomId}, 'guest', 'P', 'n1', now());
UPDATE participants SET left_at = now() WHERE token = 'p' || :client_id || '_' || :n;
END;
`,
  );
  const run = (statements: string) => sql.raw(statements).execute(database.db);
  const triggers = (on: boolean) =>
    run(['participants_webhook_join', 'participants_webhook_presence'].map((t) => `alter table participants ${on ? 'enable' : 'disable'} trigger ${t};`).join('\n'));
  const endpointEnabled = (on: boolean) => run(`update webhook_endpoints set disabled_at = ${on ? 'null' : 'now()'} where id = '${endpoint}'`);
  const foreignKey = async (on: boolean) => {
    await run('alter table webhook_messages drop constraint if exists webhook_messages_endpoint_id_fkey');
    if (on) await run('alter table webhook_messages add constraint webhook_messages_endpoint_id_fkey foreign key (endpoint_id) references webhook_endpoints (id) on delete cascade');
  };
  const variants: [string, () => Promise<void>][] = [
    ['triggers off (before webhooks)', async () => { await triggers(false); await foreignKey(false); }],
    ['no endpoint', async () => { await triggers(true); await endpointEnabled(false); await foreignKey(false); }],
    ['an endpoint (0009: no foreign key)', async () => { await triggers(true); await endpointEnabled(true); await foreignKey(false); }],
    ['an endpoint, with 0006 foreign key', async () => { await triggers(true); await endpointEnabled(true); await foreignKey(true); }],
  ];
  const tps = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    const order = [...variants.slice(round % variants.length), ...variants.slice(0, round % variants.length)];
    for (const [name, setUp] of order) {
      await run('truncate webhook_messages; delete from participants');
      await setUp();
      await run('checkpoint');
      const out = execFileSync('pgbench', ['-n', '-M', 'prepared', '-c', String(clients), '-j', String(Math.min(clients, 2)), '-T', String(seconds), '-f', script, postgres.url], { encoding: 'utf8' });
      const measured = Number(/tps = ([\d.]+)/.exec(out)![1]);
      tps.set(name, [...(tps.get(name) ?? []), measured]);
      log(`round ${round + 1}: ${name}: ${fixed(measured, 0)} transactions/s`);
    }
  }
  const off = tps.get(variants[0]![0])!;
  console.log(`PostgreSQL, pgbench ${clients} clients, ${rounds} rounds of ${seconds} s; a participant's insert and leave per transaction\n`);
  console.log(
    markdownTable(
      ['variant', 'transactions/s, each round', 'against the triggers off (median ratio)'],
      variants.map(([name]) => [name, tps.get(name)!.map((t) => fixed(t, 0)).join(', '), fixed(median(tps.get(name)!.map((t, i) => t / off[i]!)), 3)]),
    ),
  );
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  await database.close();
  await postgres.stop();
}

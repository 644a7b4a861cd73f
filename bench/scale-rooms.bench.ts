// Scale, rooms: GET /api/rooms as one tenant grows to 1,000,000 rooms
// (other tenants' rooms interleaved beside it): page 1, a middle page (plain
// page=N, OFFSET), the last page, walks that follow `next` Link URLs (keyset
// cursor) from the start and from the middle. Each figure is compared with the
// same at the first size (1,000 rooms). The rooms are made by generate_series
// (support/generate.ts); room_counts is recomputed and checked against the
// Total-Count header. EXPLAIN (ANALYZE) shows the plans behind the figures.
// --before=DIR also runs the build in DIR (an earlier commit, built) on the same
// database, and measures page 1 and the middle page with it: before/after figures.
//   npm run bench:scale-rooms -- [--sizes=1000,100000,1000000] [--times=30] [--walk=50] [--before=DIR]
import path from 'node:path';
import { admin, startParley } from './support/processes.js';
import { explain, type Explained } from './support/explain.js';
import { generateRooms, type RoomPlan } from './support/generate.js';
import { startBenchPostgres, withClient } from './support/postgres.js';
import { get, link, timeUrl, walkNext } from './support/sequential.js';
import { fixed, flags, markdownTable } from './support/stats.js';

const options = flags();
const sizes = (options.get('sizes') ?? '1000,100000,1000000').split(',').map(Number);
const times = Number(options.get('times') ?? 30);
const walkSteps = Number(options.get('walk') ?? 50);
const OTHER_TENANTS = 4;
// Beside the measured tenant, the others hold half as many rooms again, and a
// tenth of the measured tenant's rooms belong to an organization.
const OTHERS_SHARE = 0.5;
const ORG_SHARE = 0.1;
const WHOLE_TENANT = '00000000-0000-0000-0000-000000000000';
const log = (line: string) => process.stderr.write(line + '\n');

const postgres = await startBenchPostgres({ durable: false, log });
const parley = await startParley({ DATABASE_URL: postgres.url, LOG_LEVEL: 'warn' });
const beforeDir = options.get('before');
const before = beforeDir
  ? await startParley({ DATABASE_URL: postgres.url, LOG_LEVEL: 'warn', EXPECT_TOKEN: 'no' }, path.resolve(beforeDir, 'dist/src/main.js'))
  : null;
try {
  const token = parley.instanceToken;
  const { tenants } = await admin<{ tenants: { id: string; name: string }[] }>(parley, 'GET', '/admin/tenants');
  const tenantId = tenants.find((t) => t.name === 'default')!.id;
  const org = await admin<{ id: string }>(parley, 'POST', `/admin/tenants/${tenantId}/organizations`, { name: 'Clinic' });
  const others = await Promise.all(
    Array.from({ length: OTHER_TENANTS }, (_, i) => admin<{ id: string }>(parley, 'POST', '/admin/tenants', { name: `other ${i}` })),
  );
  const plans: RoomPlan[] = [
    { tenantId, organizationId: null, count: 0, from: 0 },
    { tenantId, organizationId: org.id, count: 0, from: 0 },
    ...others.map((o) => ({ tenantId: o.id, organizationId: null, count: 0, from: 0 })),
  ];
  const made = plans.map(() => 0);
  const base = `${parley.url}/api/rooms`;
  const keysOf = (body: unknown) => (body as { rooms: { token: string }[] }).rooms.map((r) => r.token);
  const figures = new Map<string, number[]>();
  const plansAt: Explained[][] = [];
  const record = (label: string, ms: number) => figures.set(label, [...(figures.get(label) ?? []), ms]);
  // Warm the server up (JIT, pool) before the first figure.
  for (let i = 0; i < 200; i++) await get(`${base}?page=1`, token);

  for (const size of sizes) {
    const targets = [size * (1 - ORG_SHARE), size * ORG_SHARE, ...others.map(() => (size * OTHERS_SHARE) / OTHER_TENANTS)].map(Math.round);
    const batch = plans.map((plan, i) => ({ ...plan, from: made[i]!, count: targets[i]! - made[i]! }));
    const started = Date.now();
    await withClient(postgres.url, (client) => generateRooms(client, batch.filter((p) => p.count > 0), log));
    targets.forEach((t, i) => (made[i] = t));
    log(`${size.toLocaleString('en')} rooms in the tenant (${targets.reduce((a, b) => a + b, 0).toLocaleString('en')} in all): generated in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const first = await get(`${base}?page=1`, token);
    const totalCount = Number(first.headers.get('total-count'));
    const totalPages = Number(first.headers.get('total-pages'));
    if (totalCount !== size) throw new Error(`Total-Count is ${totalCount}, expected ${size}: room_counts is not consistent`);
    const middle = Math.ceil(totalPages / 2);

    record('page 1', await timeUrl(`${base}?page=1`, token, times));
    record(`middle page (page=N, OFFSET)`, await timeUrl(`${base}?page=${middle}`, token, times));
    if (before) {
      record('before: page 1', await timeUrl(`${before.url}/api/rooms?page=1`, token, times));
      record('before: middle page (page=N, OFFSET)', await timeUrl(`${before.url}/api/rooms?page=${middle}`, token, times));
    }
    record('last page (page=N)', await timeUrl(`${base}?page=${totalPages}`, token, times));
    record('last page (`last` link)', await timeUrl(link(first, 'last')!, token, times));
    const fromStart = await walkNext(`${base}?page=1`, token, walkSteps, keysOf);
    record(`walk: ${walkSteps} \`next\` links from page 1, per page`, fromStart.ms);
    const fromMiddle = await walkNext(`${base}?page=${middle}`, token, walkSteps, keysOf);
    record(`walk: ${walkSteps} \`next\` links from the middle, per page`, fromMiddle.ms);
    for (const walk of [fromStart, fromMiddle]) {
      if (new Set(walk.keys).size !== walk.keys.length) throw new Error('a walk along next links returned a room twice');
    }
    // The walk from the middle must return the same rooms as the plain pages it crossed.
    const plain = await get(`${base}?page=${middle + 1}`, token);
    const expected = keysOf(plain.body);
    if (fromMiddle.keys.slice(20, 40).join() !== expected.join()) throw new Error('the page after a `next` link differs from the same page by number');

    plansAt.push(
      await withClient(postgres.url, async (client) => {
        const lastId = Number(new URL(link(first, 'next')!).searchParams.get('cursor')!.slice('after:'.length));
        return [
          await explain(client, 'Total-Count', 'select sum(count) from room_counts where tenant_id = $1 and organization_id = $2', [tenantId, WHOLE_TENANT]),
          await explain(client, 'page 1', 'select * from rooms where tenant_id = $1 order by id limit 20', [tenantId]),
          await explain(client, 'next link (keyset)', 'select * from rooms where tenant_id = $1 and id > $2 order by id limit 20', [tenantId, lastId]),
          await explain(client, 'middle page (OFFSET in the index, then 20 rows)',
            'select * from rooms where tenant_id = $1 and id >= (select id from rooms where tenant_id = $1 order by id offset $2 limit 1) order by id limit 20',
            [tenantId, (middle - 1) * 20]),
          await explain(client, 'last page', 'select * from rooms where tenant_id = $1 order by id desc limit 20', [tenantId]),
        ];
      }),
    );
  }

  const header = ['request (median ms)', ...sizes.map((s) => `${s.toLocaleString('en')} rooms`), `${sizes.at(-1)!.toLocaleString('en')} ÷ ${sizes[0]!.toLocaleString('en')}`];
  const rows = [...figures].map(([label, values]) => [label, ...values.map((v) => fixed(v, 2)), fixed(values.at(-1)! / values[0]!, 2)]);
  console.log(`\n### Scale: rooms (${new Date().toISOString().slice(0, 16)}Z, ${times} requests per figure, one at a time)\n`);
  console.log(markdownTable(header, rows));
  console.log('\nEXPLAIN (ANALYZE), execution time in ms (median of 5) and the scans of the plan:\n');
  console.log(
    markdownTable(
      ['statement', ...sizes.map((s) => `${s.toLocaleString('en')} rooms`), 'plan at the largest size'],
      plansAt[0]!.map((p, i) => [p.label, ...plansAt.map((at) => fixed(at[i]!.ms, 3)), plansAt.at(-1)![i]!.scans.join('; ')]),
    ),
  );
} finally {
  await before?.stop();
  await parley.stop();
  await postgres.stop();
}

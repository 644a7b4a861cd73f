// Scale, feedback: the summary (all time, a month, a day) and the list
// (page 1, filtered by rating and month, its last page, a walk along `next`
// links) as one tenant's feedbacks grow to 10,000,000 (another tenant's beside
// them), each compared with the same at the first size (1,000). Feedbacks are
// spread evenly over two years and made by generate_series (support/generate.ts);
// feedback_daily_counts is recomputed, and checked against Total-Count and
// the summary. EXPLAIN (ANALYZE) shows the plans behind the figures.
//   npm run bench:scale-feedback -- [--sizes=1000,1000000,10000000] [--times=30] [--walk=20]
import { admin, startParley } from './support/processes.js';
import { explain, type Explained } from './support/explain.js';
import { generateFeedback, type FeedbackPlan } from './support/generate.js';
import { startBenchPostgres, withClient } from './support/postgres.js';
import { get, link, timeUrl, walkNext } from './support/sequential.js';
import { fixed, flags, markdownTable } from './support/stats.js';

const options = flags();
const sizes = (options.get('sizes') ?? '1000,1000000,10000000').split(',').map(Number);
const times = Number(options.get('times') ?? 30);
const walkSteps = Number(options.get('walk') ?? 20);
const FIRST_DAY = '2024-07-01';
const DAYS = 730;
const MONTH = { from: '2025-03-01', to: '2025-03-31' };
const DAY = '2025-03-15';
const log = (line: string) => process.stderr.write(line + '\n');

const postgres = await startBenchPostgres({ durable: false, log });
const parley = await startParley({ DATABASE_URL: postgres.url, LOG_LEVEL: 'warn' });
try {
  const token = parley.instanceToken;
  const { tenants } = await admin<{ tenants: { id: string; name: string }[] }>(parley, 'GET', '/admin/tenants');
  const tenantId = tenants.find((t) => t.name === 'default')!.id;
  const other = await admin<{ id: string }>(parley, 'POST', '/admin/tenants', { name: 'other' });
  const made = { main: 0, other: 0 };
  const api = `${parley.url}/api/room_feedbacks`;
  const filtered = `${api}?rating=bad&from=${MONTH.from}&to=${MONTH.to}`;
  const keysOf = (body: unknown) =>
    (body as { room_feedbacks: { created_at: string; room_token: string }[] }).room_feedbacks.map((f) => `${f.created_at} ${f.room_token}`);
  const figures = new Map<string, number[]>();
  const plansAt: Explained[][] = [];
  const record = (label: string, ms: number) => figures.set(label, [...(figures.get(label) ?? []), ms]);
  // Warm the server up (JIT, pool) before the first figure.
  for (let i = 0; i < 200; i++) await get(`${api}/summary`, token);

  for (const size of sizes) {
    const started = Date.now();
    const plans: FeedbackPlan[] = [
      { tenantId, count: size - made.main, from: made.main, firstDay: FIRST_DAY, days: DAYS },
      { tenantId: other.id, count: Math.round(size / 10) - made.other, from: made.other, firstDay: FIRST_DAY, days: DAYS },
    ];
    await withClient(postgres.url, (client) => generateFeedback(client, plans.filter((p) => p.count > 0), log));
    made.main = size;
    made.other = Math.round(size / 10);
    log(`${size.toLocaleString('en')} feedbacks in the tenant: generated in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    // The counts the API reads agree with the rows (one scan each, here only).
    const summary = (await get(`${api}/summary`, token)).body as { total: number };
    if (summary.total !== size) throw new Error(`summary total is ${summary.total}, expected ${size}`);
    const first = await get(filtered, token);
    const expected = await withClient(postgres.url, async (client) =>
      Number((await client.query(
        `select count(*) from room_feedbacks where tenant_id = $1 and rating = 'bad' and local_day between $2 and $3`,
        [tenantId, MONTH.from, MONTH.to],
      )).rows[0].count),
    );
    if (Number(first.headers.get('total-count')) !== expected) throw new Error(`Total-Count ${first.headers.get('total-count')}, expected ${expected}`);
    const totalPages = Number(first.headers.get('total-pages'));

    record('summary, all time', await timeUrl(`${api}/summary`, token, times));
    record('summary, a month', await timeUrl(`${api}/summary?from=${MONTH.from}&to=${MONTH.to}`, token, times));
    record('summary, a day', await timeUrl(`${api}/summary?from=${DAY}&to=${DAY}`, token, times));
    record('list, page 1', await timeUrl(api, token, times));
    record('list by rating and month, page 1', await timeUrl(filtered, token, times));
    record('list by rating and month, last page', await timeUrl(`${filtered}&page=${totalPages}`, token, times));
    const walk = await walkNext(filtered, token, walkSteps, keysOf);
    if (new Set(walk.keys).size !== walk.keys.length) throw new Error('a walk along next links returned a feedback twice');
    record(`list by rating and month: ${walkSteps} \`next\` links, per page`, walk.ms);
    const whole = await walkNext(api, token, walkSteps, keysOf);
    record(`list: ${walkSteps} \`next\` links, per page`, whole.ms);

    plansAt.push(
      await withClient(postgres.url, async (client) => {
        const next = link(first, 'next');
        const [day, id] = next ? new URL(next).searchParams.get('cursor')!.slice('after:'.length).split('.') : [MONTH.from, '0'];
        return [
          await explain(client, 'summary, all time', 'select rating, sum(count) from feedback_daily_counts where tenant_id = $1 group by rating', [tenantId]),
          await explain(client, 'summary, a month', 'select rating, sum(count) from feedback_daily_counts where tenant_id = $1 and day >= $2 and day <= $3 group by rating', [tenantId, MONTH.from, MONTH.to]),
          await explain(client, 'list by rating and month, page 1', `select * from room_feedbacks where tenant_id = $1 and rating = 'bad' and local_day >= $2 and local_day <= $3 order by local_day, id limit 20`, [tenantId, MONTH.from, MONTH.to]),
          await explain(client, 'its next link (keyset)', `select * from room_feedbacks where tenant_id = $1 and rating = 'bad' and local_day >= $2 and local_day <= $3 and (local_day, id) > ($4::date, $5) order by local_day, id limit 20`, [tenantId, MONTH.from, MONTH.to, day, Number(id)]),
        ];
      }),
    );
  }

  const header = ['request (median ms)', ...sizes.map((s) => `${s.toLocaleString('en')} feedbacks`), `${sizes.at(-1)!.toLocaleString('en')} ÷ ${sizes[0]!.toLocaleString('en')}`];
  const rows = [...figures].map(([label, values]) => [label, ...values.map((v) => fixed(v, 2)), fixed(values.at(-1)! / values[0]!, 2)]);
  console.log(`\n### Scale: feedback (${new Date().toISOString().slice(0, 16)}Z, ${times} requests per figure, one at a time)\n`);
  console.log(markdownTable(header, rows));
  console.log('\nEXPLAIN (ANALYZE), execution time in ms (median of 5) and the scans of the plan:\n');
  console.log(
    markdownTable(
      ['statement', ...sizes.map((s) => `${s.toLocaleString('en')} feedbacks`), 'plan at the largest size'],
      plansAt[0]!.map((p, i) => [p.label, ...plansAt.map((at) => fixed(at[i]!.ms, 3)), plansAt.at(-1)![i]!.scans.join('; ')]),
    ),
  );
} finally {
  await parley.stop();
  await postgres.stop();
}

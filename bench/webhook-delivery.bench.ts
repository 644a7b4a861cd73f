// Webhook delivery from a real Parley process on PostgreSQL to a receiver on
// 127.0.0.1 (docs/webhooks.md): the latency from an event's change (a room
// closed through the API) to its arrival, p50 and p99, one event at a time;
// then how many deliveries per second one endpoint gets when many events
// are waiting. The poll interval (WEBHOOKS_POLL_INTERVAL_SECONDS, 1 s) bounds
// the latency: an event waits for the next look of a node.
//   npm run bench:webhooks -- [--latency-events=100] [--burst=2000] [--nodes=1]
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startBenchPostgres } from './support/postgres.js';
import { startParley, type ServerProcess } from './support/processes.js';
import { fixed, flags, markdownTable, percentile } from './support/stats.js';

const options = flags();
const latencyEvents = Number(options.get('latency-events') ?? 100);
const burst = Number(options.get('burst') ?? 2000);
const nodeCount = Number(options.get('nodes') ?? 1);
const log = (line: string) => process.stderr.write(line + '\n');

/** room token -> when its room.closed arrived. */
const arrivals = new Map<string, number>();
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk));
  req.on('end', () => {
    arrivals.set((JSON.parse(body) as { data: { room_token: string } }).data.room_token, performance.now());
    res.statusCode = 204;
    res.end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const postgres = await startBenchPostgres({ durable: false, log });
const nodes: ServerProcess[] = [];
try {
  const env = { DATABASE_URL: postgres.url, LOG_LEVEL: 'warn', WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' };
  const first = await startParley(env);
  nodes.push(first);
  for (let i = 1; i < nodeCount; i++) nodes.push(await startParley({ ...env, EXPECT_TOKEN: 'no' }));
  const call = async (method: string, pathname: string, body?: unknown) => {
    const res = await fetch(first.url + pathname, {
      method,
      headers: { authorization: `Bearer ${first.instanceToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${await res.text()}`);
    return res.status === 204 ? null : ((await res.json()) as { token: string });
  };
  await call('POST', '/api/webhook_endpoints', { url: receiverUrl, events: ['room.closed'] });
  const newRoom = async () => (await call('POST', '/api/rooms', { name: 'Bench', meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z' }))!.token;
  const waitFor = async (done: () => boolean, what: string) => {
    const deadline = Date.now() + 120_000;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  // Latency: one event at a time, at moments unrelated to the nodes' polling.
  const latencies: number[] = [];
  for (let i = 0; i < latencyEvents; i++) {
    const token = await newRoom();
    const closedAt = performance.now();
    await call('POST', `/api/rooms/${token}/close`);
    await waitFor(() => arrivals.has(token), 'a delivery');
    latencies.push(arrivals.get(token)! - closedAt);
    await new Promise((r) => setTimeout(r, Math.random() * 1000));
  }

  // Throughput: `burst` events committed as fast as 20 clients can close rooms, then delivered.
  const tokens: string[] = [];
  for (let i = 0; i < burst; i++) tokens.push(await newRoom());
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < tokens.length) await call('POST', `/api/rooms/${tokens[next++]!}/close`);
    }),
  );
  const committed = performance.now();
  await waitFor(() => tokens.every((t) => arrivals.has(t)), 'the burst');
  const lastArrival = Math.max(...tokens.map((t) => arrivals.get(t)!));
  const firstArrival = Math.min(...tokens.map((t) => arrivals.get(t)!));

  console.log(`PostgreSQL, ${nodeCount} node(s), one endpoint on 127.0.0.1\n`);
  console.log(
    markdownTable(
      ['measure', 'value'],
      [
        [`event to delivery, p50 (${latencyEvents} events one at a time)`, `${fixed(percentile(latencies, 50), 0)} ms`],
        ['event to delivery, p99', `${fixed(percentile(latencies, 99), 0)} ms`],
        [`${burst} events committed in`, `${fixed((committed - start) / 1000, 2)} s`],
        ['deliveries per second (first to last arrival)', fixed(burst / ((lastArrival - firstArrival) / 1000), 0)],
        ['all delivered after the first close', `${fixed((lastArrival - start) / 1000, 2)} s`],
      ],
    ),
  );
} finally {
  for (const node of nodes) await node.stop();
  await postgres.stop();
  receiver.close();
}

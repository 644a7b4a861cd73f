// The load generator, in a process of its own so that it never shares an
// event loop with a server under test. Reads one LoadSpec (JSON) from argv,
// runs autocannon, prints one LoadResult (JSON) on stdout and exits.
// Bounded twice: by duration and by a maximum number of requests.
import autocannon from 'autocannon';
import type { LoadResult, LoadSpec } from './load.js';

const spec = JSON.parse(process.argv[2] ?? '') as LoadSpec;
if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(spec.origin)) throw new Error(`load only ever goes to 127.0.0.1, not ${spec.origin}`);

let next = 0;
// autocannon's percentiles are whole milliseconds: a p99 of 4 against 6 ms
// would be a ratio of 1.5 from the rounding alone. Every 2xx answer's time is
// kept instead (at most maxRequests of them) and the percentiles are exact.
const latencies: number[] = [];
// Without a callback autocannon returns its tracker, an event emitter that is also a promise.
const run = autocannon({
  url: spec.origin,
  connections: spec.connections,
  duration: spec.seconds,
  maxOverallRequests: spec.maxRequests,
  timeout: 10,
  requests: [
    {
      method: spec.method,
      headers: { authorization: `Bearer ${spec.token}`, ...(spec.body ? { 'content-type': 'application/json' } : {}) },
      ...(spec.body ? { body: spec.body } : {}),
      // Each request takes the next path of the list: a different room each time.
      setupRequest: (request) => ({ ...request, path: spec.paths[next++ % spec.paths.length]! }),
    },
  ],
}) as unknown as Promise<autocannon.Result> & NodeJS.EventEmitter;
let answered = false;
run.on('response', (_client: unknown, statusCode: number, _bytes: number, milliseconds: number) => {
  if (statusCode >= 200 && statusCode < 300) latencies.push(milliseconds);
  // For a measurement that must run inside the load (startLoad): it is flowing now.
  if (!answered) process.stderr.write('load: answered\n');
  answered = true;
});
const result = await run;
latencies.sort((a, b) => a - b);
/** The time within which p percent of the answers came, to the microsecond. */
const percentile = (p: number) =>
  latencies.length ? Math.round(latencies[Math.max(0, Math.ceil((p / 100) * latencies.length) - 1)]! * 1000) / 1000 : 0;

const output: LoadResult = {
  requestsPerSecond: result.requests.total / Math.max(result.duration, 0.001),
  p50: percentile(50),
  p99: percentile(99),
  total: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors + result.timeouts,
};
process.stdout.write(JSON.stringify(output) + '\n');

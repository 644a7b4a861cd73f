// The load generator, in a process of its own so that it never shares an
// event loop with a server under test. Reads one LoadSpec (JSON) from argv,
// runs autocannon, prints one LoadResult (JSON) on stdout and exits.
// Bounded twice: by duration and by a maximum number of requests.
import autocannon from 'autocannon';
import type { LoadResult, LoadSpec } from './load.js';

const spec = JSON.parse(process.argv[2] ?? '') as LoadSpec;
if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(spec.origin)) throw new Error(`load only ever goes to 127.0.0.1, not ${spec.origin}`);

let next = 0;
const result = await autocannon({
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
});

const output: LoadResult = {
  requestsPerSecond: result.requests.total / Math.max(result.duration, 0.001),
  p50: result.latency.p50,
  p99: result.latency.p99,
  total: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors + result.timeouts,
};
process.stdout.write(JSON.stringify(output) + '\n');

// API throughput and latency of Parley (the real server process, on
// PostgreSQL) against two node:http + pg baselines on the same cluster, at 1,
// 10 and 100 connections: baseline-server.ts (Parley's statements on Parley's
// schema: what the Node side costs) and independent-baseline-server.ts (the
// simplest correct server on a schema of its own: what the schema costs too).
//   npm run bench:api -- [--seconds=5] [--reps=3] [--connections=1,10,100] [--durable] [--only=POST] [--pool=20]
//     [--targets=parley-pg,independent] [--sustained=300 [--window=10]] [--warm-up=1]
import { runApiBench } from './support/api-bench.js';

await runApiBench(['baseline', 'independent', 'parley-pg'], 'API: Parley on PostgreSQL vs the node:http + pg baselines');

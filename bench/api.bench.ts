// API throughput and latency of Parley (the real server process,
// on PostgreSQL) against the node:http baseline (baseline-server.ts) on the
// same database, at 1, 10 and 100 connections.
//   npm run bench:api -- [--seconds=5] [--reps=3] [--connections=1,10,100] [--durable] [--only=POST] [--pool=20]
import { runApiBench } from './support/api-bench.js';

await runApiBench(['baseline', 'parley-pg'], 'API: Parley on PostgreSQL vs the node:http + pg baseline');

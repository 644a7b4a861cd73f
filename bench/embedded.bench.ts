// The API figures of api.bench.ts for the embedded default
// (PGlite in the server process, DATA_DIR), against Parley on PostgreSQL
// measured in the same run.
//   npm run bench:embedded -- [--seconds=5] [--reps=3] [--connections=1,10,100]
import { runApiBench } from './support/api-bench.js';

await runApiBench(['parley-pg', 'parley-pglite'], 'Embedded: Parley on PGlite vs Parley on PostgreSQL');

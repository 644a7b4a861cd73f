// Unit and API tests ("api" set). `npm test` (scripts/test.mjs) runs this set
// twice: TEST_DB=pglite, then TEST_DB=postgres against a throwaway PostgreSQL.
// Browser and cluster tests live in vitest.browser.config.ts.
import { defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/helpers/slow-first-sequencer.js';

/**
 * Files that never open a database, whatever TEST_DB says: they run in the
 * pglite set only, as a second run on PostgreSQL could find nothing new. The
 * page's code and src/shared reach no database (test/code/imports.test.ts
 * holds them to their imports); the rest read files or call a function.
 */
const DATABASE_FREE = [
  'web/src/**',
  'src/shared/**',
  'test/code/**',
  'test/api/docs.test.ts',
  'test/api/docs-links.test.ts',
  'test/api/client-types.test.ts',
  'test/bench/lanes.test.ts',
  'test/bench/chrome-trace.test.ts',
];

export default defineConfig({
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'web/src/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**', 'test/browser/**', 'test/cluster/**', ...(process.env.TEST_DB === 'postgres' ? DATABASE_FREE : [])],
    // FC_SEED replays the property tests from a failure's seed.
    setupFiles: ['test/helpers/fast-check-seed.ts'],
    // Ceilings only a hang reaches: on a loaded machine an app's start alone took 72 s (test/README.md,
    // "Writing a test that does not flake"); a test's own waits say what it expects.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // A worker process runs file after file, the server's modules evaluated once per worker instead of
    // once per file (test/README.md, "Where the time goes"): a file restores what it changes.
    isolate: false,
    // 2-core machines: two test files at a time.
    maxWorkers: 2,
    fileParallelism: true,
    sequence: { sequencer: SlowFirstSequencer },
  },
});

// End-to-end sets, one file at a time: "browser" (test/browser, headless
// /usr/bin/chromium through playwright-core) and "cluster" (test/cluster,
// several server processes). Pick one with PARLEY_TEST_SET=browser|cluster
// (scripts/test.mjs does); without it, both run.
import { defineConfig } from 'vitest/config';

const sets: Record<string, string[]> = {
  browser: ['test/browser/**/*.test.ts'],
  cluster: ['test/cluster/**/*.test.ts'],
};
const only = process.env.PARLEY_TEST_SET;
if (only && !sets[only]) {
  throw new Error(`PARLEY_TEST_SET must be one of ${Object.keys(sets).join(', ')} (got "${only}")`);
}

export default defineConfig({
  test: {
    environment: 'node',
    include: only ? sets[only] : Object.values(sets).flat(),
    exclude: ['**/node_modules/**', '**/dist/**'],
    // Ceilings only a hang reaches (test/README.md, "Writing a test that does not flake"): under load a
    // world of a server and browsers took over a minute to start; a test's own waits say what it expects.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
  },
});

// The api sets' file order: the files that take longest start first, so that
// neither worker is left running one long file alone at the end of a set
// (test/README.md, "Where the time goes": `test/bench/bench.test.ts` started
// last on PostgreSQL and ran alone for its last 117 s). Vitest orders by the
// durations it cached, but a fresh clone has none, and the pglite run's cache
// says ~0 s for the files that run on PostgreSQL only.
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The slowest files of the api sets, slowest first (per-file times of `TEST_REPORT_DIR` reports). */
export const SLOW_FIRST = [
  'test/bench/bench.test.ts',
  'test/api/cli.test.ts',
  'test/faults/recording-crash.test.ts',
  'test/realtime/calls-process.test.ts',
  'test/security/rest-logs.test.ts',
  'test/realtime/presence.test.ts',
  'test/sfu/janus-faults.test.ts',
  'test/bench/cluster-scale.test.ts',
  'test/api/body-limit.test.ts',
];

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const index = SLOW_FIRST.indexOf(path.relative(file.project.config.root, file.moduleId).split(path.sep).join('/'));
      return index === -1 ? SLOW_FIRST.length : index;
    };
    // Array.prototype.sort is stable: the rest keep Vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

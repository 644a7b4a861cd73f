// Which step a long browser test was on when it failed. A test that runs into
// vitest's timeout says only "Test timed out": when a call into the browser
// itself never returns (none of the test's own waits has failed), nothing
// tells which one. Each step is noted as it starts, with the time since the
// test began, and the list goes into the failure's message.
import type { TestContext } from 'vitest';

export type Step = (name: string) => void;

/** A `step(name)` for this test; if the test fails, its error messages end with the steps it reached. */
export function traceSteps(context: Pick<TestContext, 'onTestFailed'>): Step {
  const started = performance.now();
  const steps: string[] = [];
  context.onTestFailed(({ task }) => {
    const trace = `steps reached (seconds since the test began):\n${steps.map((s) => `  ${s}`).join('\n')}`;
    for (const error of task.result?.errors ?? []) error.message = `${error.message}\n${trace}`;
  });
  return (name) => {
    steps.push(`${((performance.now() - started) / 1000).toFixed(1).padStart(5)} ${name}`);
  };
}

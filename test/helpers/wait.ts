// Waiting without guessing: poll a condition up to a generous deadline instead
// of sleeping for a time that a busy CI machine may not keep. The default
// deadline (15 s) is far above what a condition of milliseconds takes on a
// loaded machine (test/README.md, "Writing a test that does not flake").

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` every `intervalMs` until it returns a truthy value (which it
 * resolves with) or `timeoutMs` passes (then it throws, naming `what`).
 */
export async function waitFor<T>(check: () => Promise<T> | T, timeoutMs = 15_000, what = 'condition', intervalMs = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}

/** Polls `check` until it returns true or `timeoutMs` passes. */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  await waitFor(check, timeoutMs, what);
}

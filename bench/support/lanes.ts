// Work over a numbered list, a fixed number of items at a time.

/** Runs `work(0)` … `work(count - 1)`, `lanes` at a time, each lane taking the next index when it is free. */
export async function inLanes(count: number, lanes: number, work: (index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, lanes) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

// bench/support/lanes.ts: the benchmarks' "this many at a time".
import { describe, expect, it } from 'vitest';
import { inLanes } from '../../bench/support/lanes.js';

describe('inLanes', () => {
  it('does every index once, never more than the lanes at a time', async () => {
    const done: number[] = [];
    let running = 0;
    let most = 0;
    await inLanes(25, 4, async (i) => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, (i * 7) % 5));
      running--;
      done.push(i);
    });
    expect(done.sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(most).toBe(4);
  });

  it('keeps one lane when asked for none, and does nothing for no items', async () => {
    const done: number[] = [];
    await inLanes(3, 0, async (i) => void done.push(i));
    expect(done).toEqual([0, 1, 2]);
    await inLanes(0, 4, async () => void done.push(-1));
    expect(done).toEqual([0, 1, 2]);
  });
});

import { describe, expect, it } from 'vitest';
import { createInFlight } from './in-flight.js';

describe('in-flight work', () => {
  it('settles once everything tracked has settled, rejections included, and forgets what settled', async () => {
    const inFlight = createInFlight();
    let resolve!: () => void;
    const slow = inFlight.track(new Promise<void>((r) => (resolve = r)));
    const failing = inFlight.track(Promise.reject(new Error('no')));
    await expect(failing).rejects.toThrow('no');
    let settled = false;
    const all = inFlight.settled().then(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    resolve();
    await slow;
    await all;
    expect(settled).toBe(true);
    // Nothing left: settles at once.
    await expect(inFlight.settled()).resolves.toEqual([]);
  });
});

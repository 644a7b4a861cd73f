import { describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/app.js';
import { tokenBucket } from './token-bucket.js';

const take = (allow: () => boolean, n: number) => Array.from({ length: n }, () => allow()).filter(Boolean).length;

describe('tokenBucket', () => {
  it('allows a burst of `capacity`, then refuses while the clock stands still', () => {
    const clock = manualClock();
    const allow = tokenBucket(10, 1, clock);
    expect(take(allow, 10)).toBe(10);
    expect(allow()).toBe(false);
    expect(allow()).toBe(false);
  });

  it('refills at `perSecond` with the clock, fractions included', () => {
    const clock = manualClock();
    const allow = tokenBucket(10, 2, clock);
    take(allow, 10);
    clock.advance(250); // half a token
    expect(allow()).toBe(false);
    clock.advance(250); // the other half: one whole token
    expect(allow()).toBe(true);
    expect(allow()).toBe(false);
    clock.advance(1500); // three tokens
    expect(take(allow, 5)).toBe(3);
  });

  it('never holds more than `capacity`, however long it rested', () => {
    const clock = manualClock();
    const allow = tokenBucket(4, 50, clock);
    clock.advance(3_600_000);
    expect(take(allow, 10)).toBe(4);
  });
});

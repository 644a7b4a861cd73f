// The rate limit of one connection's messages: bursts are fine (a browser
// renegotiating a mesh sends many candidates at once), a sustained flood is not.
import type { Clock } from '../domain/support/clock.js';

/**
 * A token bucket: `capacity` messages at once, refilled at `perSecond`.
 * Returns a function that takes one token, or answers false when none is left.
 */
export function tokenBucket(capacity: number, perSecond: number, clock: Clock): () => boolean {
  let tokens = capacity;
  let last = clock.now().getTime();
  return () => {
    const now = clock.now().getTime();
    tokens = Math.min(capacity, tokens + ((now - last) / 1000) * perSecond);
    last = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

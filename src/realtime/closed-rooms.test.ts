import { describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/app.js';
import { CLOSED_ROOMS_KEPT_MS, createClosedRooms } from './closed-rooms.js';

describe('closed rooms', () => {
  it('remembers a closed room, and forgets it when a later close finds it older than a minute', () => {
    const clock = manualClock();
    const closed = createClosedRooms(clock);
    closed.add(1);
    expect(closed.has(1)).toBe(true);
    expect(closed.has(2)).toBe(false);
    clock.advance(CLOSED_ROOMS_KEPT_MS);
    closed.add(2);
    expect(closed.has(1)).toBe(true); // exactly a minute: still kept
    clock.advance(1);
    closed.add(3);
    expect(closed.has(1)).toBe(false);
    expect(closed.has(2)).toBe(true);
    expect(closed.has(3)).toBe(true);
  });
});

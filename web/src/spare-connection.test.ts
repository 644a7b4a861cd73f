// How long the call's first connection may gather with the join page's ICE servers.
import { describe, expect, it } from 'vitest';
import { gatherAheadWindowMs } from './spare-connection.js';

describe('gatherAheadWindowMs', () => {
  it('is five minutes, and at most a tenth of the TURN credentials\u2019 life', () => {
    expect(gatherAheadWindowMs(null)).toBe(300_000);
    expect(gatherAheadWindowMs(86_400)).toBe(300_000);
    expect(gatherAheadWindowMs(3000)).toBe(300_000);
    expect(gatherAheadWindowMs(600)).toBe(60_000);
    expect(gatherAheadWindowMs(60)).toBe(6_000);
  });
});

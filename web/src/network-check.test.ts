// The verdict of the join screen's network check, from the candidates gathered.
import { describe, expect, it } from 'vitest';
import { verdictOf } from './network-check.js';

const offered = { stunOrTurn: true, relayOnly: false };

describe('the network verdict', () => {
  it('is ready when UDP reaches our servers: a reflexive candidate, or the relay over UDP', () => {
    expect(verdictOf(['host', 'srflx'], offered)).toBe('ready');
    expect(verdictOf(['host', 'relay/udp'], offered)).toBe('ready');
  });

  it('is relay when only TCP or TLS reach the relay, and blocked when nothing gets out', () => {
    expect(verdictOf(['host', 'relay/tcp'], offered)).toBe('relay');
    expect(verdictOf(['host', 'relay/tls'], offered)).toBe('relay');
    expect(verdictOf(['host'], offered)).toBe('blocked');
    expect(verdictOf([], offered)).toBe('blocked');
  });

  it('needs a relay in a relay-only deployment, and cannot say more than "ready" without STUN or TURN', () => {
    expect(verdictOf(['host', 'relay/tcp'], { stunOrTurn: true, relayOnly: true })).toBe('ready');
    expect(verdictOf(['host', 'srflx'], { stunOrTurn: true, relayOnly: true })).toBe('blocked');
    expect(verdictOf(['host'], { stunOrTurn: false, relayOnly: false })).toBe('ready');
    expect(verdictOf([], { stunOrTurn: false, relayOnly: false })).toBe('blocked');
  });
});

// The DTLS fingerprint that tells a new peer connection from the one a side knows (mesh.ts, "Recovering"),
// and how long the call's first connection may gather with the join page's ICE servers.
import { describe, expect, it } from 'vitest';
import { fingerprintOf, gatherAheadWindowMs } from './mesh.js';

describe('fingerprintOf', () => {
  it('reads the session-level fingerprint line, and null when there is none', () => {
    const sdp = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\na=fingerprint:sha-256 AB:CD:EF\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n';
    expect(fingerprintOf(sdp)).toBe('sha-256 AB:CD:EF');
    expect(fingerprintOf(sdp.replace('AB:CD:EF', '01:02:03'))).not.toBe(fingerprintOf(sdp));
    expect(fingerprintOf('v=0\r\n')).toBeNull();
    expect(fingerprintOf(undefined)).toBeNull();
  });
});

describe('gatherAheadWindowMs', () => {
  it('is five minutes, and at most a tenth of the TURN credentials\u2019 life', () => {
    expect(gatherAheadWindowMs(null)).toBe(300_000);
    expect(gatherAheadWindowMs(86_400)).toBe(300_000);
    expect(gatherAheadWindowMs(3000)).toBe(300_000);
    expect(gatherAheadWindowMs(600)).toBe(60_000);
    expect(gatherAheadWindowMs(60)).toBe(6_000);
  });
});

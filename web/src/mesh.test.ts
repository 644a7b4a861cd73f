// The DTLS fingerprint that tells a new peer connection from the one a side knows (mesh.ts, "Recovering").
import { describe, expect, it } from 'vitest';
import { fingerprintOf } from './mesh.js';

describe('fingerprintOf', () => {
  it('reads the session-level fingerprint line, and null when there is none', () => {
    const sdp = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\na=fingerprint:sha-256 AB:CD:EF\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n';
    expect(fingerprintOf(sdp)).toBe('sha-256 AB:CD:EF');
    expect(fingerprintOf(sdp.replace('AB:CD:EF', '01:02:03'))).not.toBe(fingerprintOf(sdp));
    expect(fingerprintOf('v=0\r\n')).toBeNull();
    expect(fingerprintOf(undefined)).toBeNull();
  });
});

// The DTLS fingerprint that tells a new peer connection from the one a side knows (mesh.ts,
// docs/call.md "Recovering"), and the ICE username fragment that tells an ICE restart.
import { describe, expect, it } from 'vitest';
import { fingerprintOf, restartsIce } from './peer-connection.js';

describe('fingerprintOf', () => {
  it('reads the session-level fingerprint line, and null when there is none', () => {
    const sdp = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\na=fingerprint:sha-256 AB:CD:EF\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n';
    expect(fingerprintOf(sdp)).toBe('sha-256 AB:CD:EF');
    expect(fingerprintOf(sdp.replace('AB:CD:EF', '01:02:03'))).not.toBe(fingerprintOf(sdp));
    expect(fingerprintOf('v=0\r\n')).toBeNull();
    expect(fingerprintOf(undefined)).toBeNull();
  });
});

describe('restartsIce', () => {
  const sdp = (ufrag: string) => `v=0\r\na=group:BUNDLE 0 1\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=ice-ufrag:${ufrag}\r\na=ice-pwd:x\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=ice-ufrag:${ufrag}\r\n`;
  it('is true for an offer with another ICE username fragment than the connection knows', () => {
    expect(restartsIce(sdp('AbCd'), sdp('EfGh'))).toBe(true);
    // A renegotiation (a screen shared) keeps the fragment.
    expect(restartsIce(sdp('AbCd'), sdp('AbCd'))).toBe(false);
  });
  it('is false for the first offer, which restarts nothing', () => {
    expect(restartsIce(undefined, sdp('AbCd'))).toBe(false);
  });
});

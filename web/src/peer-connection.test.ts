// The DTLS fingerprint that tells a new peer connection from the one a side knows (mesh.ts,
// docs/call.md "Recovering"), and the ICE username fragment that tells an ICE restart.
import { describe, expect, it } from 'vitest';
import { fingerprintOf, Peer, restartsIce } from './peer-connection.js';

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

/**
 * A stand-in for RTCPeerConnection with what Peer.handle uses: descriptions
 * are applied in order, each after a turn of the event loop (as the
 * connection's operations chain does), so the state lags behind the call.
 */
function fakeConnection() {
  let chain = Promise.resolve();
  const applied: string[] = [];
  const pc = {
    signalingState: 'stable' as RTCSignalingState,
    remoteDescription: null as RTCSessionDescriptionInit | null,
    localDescription: null as RTCSessionDescriptionInit | null,
    getConfiguration: () => ({}),
    setConfiguration: () => {},
    close: () => {},
    setRemoteDescription(description: RTCSessionDescriptionInit) {
      chain = chain.then(async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        applied.push(`remote ${description.type}`);
        pc.remoteDescription = description;
        pc.signalingState = description.type === 'offer' ? 'have-remote-offer' : 'stable';
      });
      return chain;
    },
    setLocalDescription() {
      chain = chain.then(() => {
        const type = pc.signalingState === 'have-remote-offer' ? 'answer' : 'offer';
        applied.push(`local ${type}`);
        pc.localDescription = { type, sdp: `v=0\r\na=ice-ufrag:${type}\r\n` };
        pc.signalingState = type === 'answer' ? 'stable' : 'have-local-offer';
      });
      return chain;
    },
  };
  return { pc, applied };
}

describe('Peer.handle', () => {
  const sdp = (ufrag: string) => `v=0\r\na=fingerprint:sha-256 AB\r\na=ice-ufrag:${ufrag}\r\n`;

  it('answers an offer that comes while the answer to its own is being applied (no collision), on the impolite side too', async () => {
    const { pc, applied } = fakeConnection();
    const sent: unknown[] = [];
    const spare = { pc: pc as unknown as RTCPeerConnection, offer: Promise.resolve(null), made: null, gatheredUntil: null, candidates: [], inSdp: 0 };
    // 'a' < 'b': this side is the impolite one, which drops an offer that collides with its own.
    const peer = new Peer('b', 'a', () => ({}), { send: (_to, data) => sent.push(data), onTrack: () => {}, onState: () => {} }, spare);
    await pc.setLocalDescription();
    expect(pc.signalingState).toBe('have-local-offer');
    // Its own ICE restart answered, and the other side's restart right behind (both in one task).
    const answer = peer.handle({ description: { type: 'answer', sdp: sdp('theirs1') } });
    const offer = peer.handle({ description: { type: 'offer', sdp: sdp('theirs2') } });
    await Promise.all([answer, offer]);
    expect(applied).toEqual(['local offer', 'remote answer', 'remote offer', 'local answer']);
    expect(sent).toEqual([{ description: { type: 'answer', sdp: 'v=0\r\na=ice-ufrag:answer\r\n' } }]);
  });

  it('still drops, on the impolite side, an offer that crosses its own unanswered one', async () => {
    const { pc, applied } = fakeConnection();
    const spare = { pc: pc as unknown as RTCPeerConnection, offer: Promise.resolve(null), made: null, gatheredUntil: null, candidates: [], inSdp: 0 };
    const peer = new Peer('b', 'a', () => ({}), { send: () => {}, onTrack: () => {}, onState: () => {} }, spare);
    await pc.setLocalDescription();
    await peer.handle({ description: { type: 'offer', sdp: sdp('theirs') } });
    expect(applied).toEqual(['local offer']);
  });
});

// The join screen's network check (issue 13): can this browser reach the
// service, and can call media get through this network, directly or only
// through the relay (TURN)? Candidates are gathered with the ICE servers the
// call will use. UDP that reaches our STUN or TURN server (a server-reflexive
// candidate, or a relay candidate reached over UDP) means a direct path is
// likely; a relay reached only over TCP or TLS means the call goes through
// the relay; nothing beyond the local network, while servers were offered,
// means the network lets no call media through (typically UDP blocked and
// no TURN over TCP/TLS). Browsers drop a server-reflexive candidate equal to
// a host one (no NAT), so the relay's transport is what tells in that case.
import type { IceServerInfo } from '../../src/shared/protocol.js';

export type Verdict = 'ready' | 'relay' | 'blocked' | 'offline';

export interface NetworkCheck {
  verdict: Verdict;
  /** The server's answer time to a ping, when it answered. */
  rttMs: number | null;
  /** The kinds of ICE candidate gathered, e.g. ["host", "srflx", "relay/udp"]. */
  candidates: string[];
}

const GATHER_MS = 6000;

/** The candidate types this browser gathers with these servers (within GATHER_MS). */
export async function gatherCandidateTypes(config: RTCConfiguration): Promise<string[]> {
  const pc = new RTCPeerConnection(config);
  const types = new Set<string>();
  try {
    pc.createDataChannel('check');
    const done = new Promise<void>((resolve) => {
      pc.onicecandidate = (event) => {
        if (!event.candidate) return resolve();
        const type = event.candidate.type ?? /typ (\w+)/.exec(event.candidate.candidate)?.[1];
        // How the browser reaches the TURN server: udp, tcp or tls (unknown: taken as udp).
        const relayProtocol = (event.candidate as RTCIceCandidate & { relayProtocol?: string }).relayProtocol ?? 'udp';
        if (type) types.add(type === 'relay' ? `relay/${relayProtocol}` : type);
      };
      setTimeout(resolve, GATHER_MS);
    });
    await pc.setLocalDescription(await pc.createOffer());
    await done;
  } finally {
    pc.close();
  }
  return [...types];
}

/** What the candidates say about this network. */
export function verdictOf(candidates: string[], offered: { stunOrTurn: boolean; relayOnly: boolean }): Exclude<Verdict, 'offline'> {
  const relayed = candidates.some((c) => c.startsWith('relay/'));
  // Every call goes through the relay in such a deployment: a relay is all it needs.
  if (offered.relayOnly) return relayed ? 'ready' : 'blocked';
  if (candidates.includes('srflx') || candidates.includes('prflx') || candidates.includes('relay/udp')) return 'ready';
  if (relayed) return 'relay';
  // No STUN or TURN offered (a private deployment): nothing beyond the local network to test.
  if (!offered.stunOrTurn && candidates.includes('host')) return 'ready';
  return 'blocked';
}

export async function checkNetwork(
  network: { iceServers: IceServerInfo[]; iceTransportPolicy: 'all' | 'relay' },
  ping: () => Promise<number | null>,
): Promise<NetworkCheck> {
  const rttMs = await ping();
  if (rttMs === null) return { verdict: 'offline', rttMs, candidates: [] };
  const candidates = await gatherCandidateTypes({ iceServers: network.iceServers as RTCIceServer[], iceTransportPolicy: network.iceTransportPolicy }).catch(() => []);
  const verdict = verdictOf(candidates, { stunOrTurn: network.iceServers.length > 0, relayOnly: network.iceTransportPolicy === 'relay' });
  return { verdict, rttMs, candidates };
}

// Watching the call's connections while it lasts (docs/call.md,
// "Recovering"): whether media still flows from each peer (media-watch.ts),
// how good each connection is (quality.ts), what the person is told of it
// (connection-health.ts, which sets the call state's connection status), the
// summary the server keeps (network-report.ts), and the browser's own hints
// that the network changed. Each of them asks the server whether our own
// connection is fine when in doubt.
import type { Signaling } from '../signaling.js';
import type { CallState } from './call-state.js';
import { createConnectionHealth } from './connection-health.js';
import { watchMediaFlow } from './media-watch.js';
import { reportNetwork } from './network-report.js';
import { watchQuality } from './quality.js';
import type { RemotePeers } from './remote-peers.js';
import type { Stage } from './stage.js';

export interface ConnectionMonitorOptions {
  state: Pick<CallState, 'setReconnecting'>;
  stage: Pick<Stage, 'say' | 'saying'>;
  /** The tiles, which say when a peer's media is gone or its connection poor. */
  peers: Pick<RemotePeers, 'connectionLost' | 'quality'>;
  /** The peer connections by peer id (through the SFU, the subscription for everyone). */
  connections(): [string, RTCPeerConnection][];
  /** The connections the call's media takes, for the network summary: the peer connections, or the SFU path's publications and subscription. */
  measured(): RTCPeerConnection[];
  signaling: Pick<Signaling, 'healthy' | 'queueMs' | 'probe' | 'send'>;
}

export function startConnectionMonitor(options: ConnectionMonitorOptions) {
  const { signaling, connections } = options;
  const health = createConnectionHealth({
    setBanner: options.state.setReconnecting,
    say: options.stage.say,
    saying: options.stage.saying,
    peers: options.peers,
    connections,
    signalingHealthy: () => signaling.healthy,
    ownQueueMs: () => signaling.queueMs,
    probe: () => signaling.probe(),
  });
  // The server keeps a summary of what the connections measured (the participant sessions, docs/api.md).
  const network = reportNetwork((report) => signaling.send(report), options.measured);
  const sampled = () => [...connections().map(([, pc]) => pc), ...options.measured()];
  const stopQuality = watchQuality(sampled, (pc, quality) => {
    for (const [peerId, carrying] of connections()) if (carrying === pc) health.quality(peerId, quality);
    if (options.measured().includes(pc)) network.record(pc, quality);
  });
  const mediaWatch = watchMediaFlow(connections, {
    // Is it us? The server answers at once if our own connection is fine.
    onStall: () => signaling.probe(),
    onLost: health.peerLost,
    onFlow: health.peerFlowing,
  });

  // Where the browser tells of network changes, they are hints to check the connection now.
  const onNetworkChange = () => signaling.probe();
  const networkInfo = (navigator as Navigator & { connection?: EventTarget }).connection;
  window.addEventListener('online', onNetworkChange);
  window.addEventListener('offline', onNetworkChange);
  networkInfo?.addEventListener('change', onNetworkChange);

  return {
    // Lost, in doubt, rejoined, a peer's media flowing again: what the connection and the server say.
    ...health,
    /** A peer connection's state changed. */
    connectionState(peerId: string, state: RTCPeerConnectionState) {
      if (state === 'connected') health.peerFlowing(peerId);
      if (state === 'disconnected' || state === 'failed') health.peerLost(peerId);
    },
    /** Whether media arrives on this connection now. */
    flowing: mediaWatch.flowing,
    /** Sends what was measured so far (on leaving), after a sample taken now if there is none since the last report. */
    flush: network.flush,
    stop() {
      stopQuality();
      network.stop();
      mediaWatch.stop();
      health.stop();
      window.removeEventListener('online', onNetworkChange);
      window.removeEventListener('offline', onNetworkChange);
      networkInfo?.removeEventListener('change', onNetworkChange);
    },
  };
}

// The call's first peer connection, kept ready while the join screen shows
// (mesh.ts prepareConnection): made again for each preview stream, and
// gathering its candidates with the join page's ICE servers during the first
// minutes after the page loaded (gatherAheadWindowMs). Candidates gathered on
// another network are stale, and so are they all once that window is over:
// when the browser says the network changed, and when the window ends (then
// one that gathers at the Join), the connection is made again.
import type { JoinPageData } from '../../src/shared/join-page-data.js';
import { gatherAheadWindowMs, prepareConnection, type SpareConnection } from './mesh.js';

export interface SpareKeeper {
  /** The preview's stream: the connection sends it. */
  useStream(stream: MediaStream): void;
  /** The connection for the call (null without WebRTC or without a stream); the keeper stops. */
  take(): SpareConnection | null;
}

export function keepSpareConnection(network: JoinPageData['network']): SpareKeeper {
  const config: RTCConfiguration = { iceServers: network.iceServers as RTCIceServer[], iceTransportPolicy: network.iceTransportPolicy };
  // From when the page loaded (performance.now() counts from there).
  const gatherUntil = Date.now() - performance.now() + gatherAheadWindowMs(network.ttlSeconds);
  let spare: SpareConnection | null = null;
  let stream: MediaStream | null = null;

  const make = () => {
    spare?.pc.close();
    spare = null;
    const sending = stream;
    if (!sending) return;
    try {
      const tracks = sending.getTracks().map((track) => ({ track, stream: sending }));
      spare = prepareConnection(tracks, Date.now() < gatherUntil ? { config, until: gatherUntil } : undefined);
    } catch {
      // No WebRTC here (or not allowed): the join screen works as before, and the call makes its connections itself.
    }
  };
  const networkInfo = (navigator as Navigator & { connection?: EventTarget }).connection;
  window.addEventListener('online', make);
  networkInfo?.addEventListener('change', make);
  const windowEnd = setTimeout(make, Math.max(0, gatherUntil - Date.now()));

  return {
    useStream(next) {
      stream = next;
      make();
    },
    take() {
      window.removeEventListener('online', make);
      networkInfo?.removeEventListener('change', make);
      clearTimeout(windowEnd);
      return spare;
    },
  };
}

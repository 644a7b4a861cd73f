// Whether media still arrives from each peer. A network change shows no event
// in the browser (measured: no ICE state change, no online/offline, for
// seconds), but the packets stop at once: audio comes 50 times a second even
// in silence. A connection whose incoming packets stop for STALL_AFTER_MS is
// reported stalled (the page then checks its own connection), lost after
// LOST_AFTER_MS (its tile says so: a camera switched off sends a frame a
// second, which must not read as a lost connection), and flowing again when
// they come back.

export const WATCH_EVERY_MS = 150;
export const STALL_AFTER_MS = 300;
export const LOST_AFTER_MS = 2000;

interface Flow {
  packets: number;
  lastGrowth: number;
  stalled: boolean;
  lost: boolean;
}

export interface MediaWatchEvents {
  onStall(peerId: string): void;
  onLost(peerId: string): void;
  onFlow(peerId: string): void;
}

/** Packets received on every incoming stream of a report. */
export function packetsIn(report: RTCStatsReport): number {
  let packets = 0;
  report.forEach((s: { type: string; packetsReceived?: number }) => {
    if (s.type === 'inbound-rtp') packets += s.packetsReceived ?? 0;
  });
  return packets;
}

export interface MediaWatch {
  /** Whether media arrives on this connection now (false until something came, or while stalled). */
  flowing(pc: RTCPeerConnection): boolean;
  stop(): void;
}

/** Watches the connections `connections()` lists until stopped. */
export function watchMediaFlow(connections: () => [string, RTCPeerConnection][], events: MediaWatchEvents): MediaWatch {
  const flows = new WeakMap<RTCPeerConnection, Flow>();
  const timer = setInterval(() => {
    for (const [peerId, pc] of connections()) {
      if (pc.connectionState === 'closed') continue;
      // Nothing can have come on a connection that has not connected yet: no getStats() (a
      // main-thread call every WATCH_EVERY_MS) while the page works at setting the call up.
      if (!flows.has(pc) && pc.connectionState !== 'connected') continue;
      void pc
        .getStats()
        .then((report) => {
          const now = Date.now();
          const packets = packetsIn(report);
          const flow = flows.get(pc);
          if (!flow) {
            // Judged only once something came: a peer that sends nothing (no camera, no microphone) never stalls.
            if (packets > 0) flows.set(pc, { packets, lastGrowth: now, stalled: false, lost: false });
            return;
          }
          if (packets > flow.packets) {
            flow.packets = packets;
            flow.lastGrowth = now;
            if (flow.stalled) events.onFlow(peerId);
            flow.stalled = flow.lost = false;
          } else if (!flow.stalled && now - flow.lastGrowth >= STALL_AFTER_MS) {
            flow.stalled = true;
            events.onStall(peerId);
          } else if (!flow.lost && now - flow.lastGrowth >= LOST_AFTER_MS) {
            flow.lost = true;
            events.onLost(peerId);
          }
        })
        .catch(() => {});
    }
  }, WATCH_EVERY_MS);
  return {
    flowing: (pc) => {
      const flow = flows.get(pc);
      return flow !== undefined && !flow.stalled;
    },
    stop: () => clearInterval(timer),
  };
}

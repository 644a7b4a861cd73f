// How good each peer connection is, from what the browser measures
// (RTCPeerConnection.getStats(): round-trip time, packet loss, the bitrate
// the congestion controller allows), sampled every QUALITY_EVERY_MS. The
// thresholds follow what people hear and see: past ~300 ms of round trip a
// conversation starts to stumble, past ~5% loss speech breaks up, and under
// ~150 kbit/s there is room for the voice but hardly for video.

export type QualityLevel = 'good' | 'fair' | 'poor';

export interface Quality {
  level: QualityLevel;
  /** Round-trip time in milliseconds, when the browser reports one. */
  rttMs: number | null;
  /** Share of incoming packets lost since the last sample, 0..1. */
  loss: number | null;
  /** What the browser estimates it may send, in kbit/s (Chromium reports it; Firefox does not). */
  sendKbps: number | null;
  /** Whether the selected pair goes through a TURN relay (our side's candidate is a relay one); null when unknown. */
  relayed: boolean | null;
}

export const QUALITY_EVERY_MS = 2000;
/**
 * A new connection's send estimate starts low (Chromium: 300 kbit/s) and
 * climbs as the congestion controller probes; for this long after it
 * connects, the estimate says nothing about the link.
 */
export const RAMP_UP_MS = 5000;

interface Totals {
  received: number;
  lost: number;
}

/** Classifies one sample. Unknown figures count as fine: a browser that reports less is not punished. */
export function classify(rttMs: number | null, loss: number | null, sendKbps: number | null): QualityLevel {
  if ((rttMs !== null && rttMs > 600) || (loss !== null && loss > 0.1) || (sendKbps !== null && sendKbps < 150)) return 'poor';
  if ((rttMs !== null && rttMs > 300) || (loss !== null && loss > 0.03) || (sendKbps !== null && sendKbps < 400)) return 'fair';
  return 'good';
}

/**
 * Reads one sample from a report; `previous` holds the packet totals of the
 * last one (updated in place). The send estimate counts against the level only
 * when it is what holds our video back (the encoder says `bandwidth`), and
 * not while it is still ramping up: a low estimate on a connection that sends
 * only what it has (camera off, a busy CPU) or has just started is no weak link.
 */
export function sample(report: RTCStatsReport, previous: Totals, { rampingUp = false } = {}): Quality {
  let pair: Record<string, any> | undefined;
  let received = 0;
  let lost = 0;
  let videoHeldBackByBandwidth = false;
  let remoteRtt: number | null = null;
  const all = new Map<string, Record<string, any>>();
  report.forEach((s: Record<string, any>) => all.set(s.id, s));
  for (const s of all.values()) {
    if (s.type === 'transport' && s.selectedCandidatePairId) pair = all.get(s.selectedCandidatePairId);
    if (s.type === 'inbound-rtp') {
      received += s.packetsReceived ?? 0;
      lost += Math.max(0, s.packetsLost ?? 0);
    }
    if (s.type === 'remote-inbound-rtp' && typeof s.roundTripTime === 'number') remoteRtt = s.roundTripTime;
    if (s.type === 'outbound-rtp' && s.kind === 'video' && s.qualityLimitationReason === 'bandwidth') videoHeldBackByBandwidth = true;
  }
  // Firefox has no transport stats: its selected pair says so itself.
  pair ??= [...all.values()].find((s) => s.type === 'candidate-pair' && (s.selected || (s.nominated && s.state === 'succeeded')));
  const rtt = typeof pair?.currentRoundTripTime === 'number' ? pair.currentRoundTripTime : remoteRtt;
  const rttMs = rtt === null ? null : Math.round(rtt * 1000);
  const newPackets = received - previous.received + (lost - previous.lost);
  const loss = newPackets > 0 ? Math.max(0, lost - previous.lost) / newPackets : null;
  previous.received = received;
  previous.lost = lost;
  const sendKbps = typeof pair?.availableOutgoingBitrate === 'number' ? Math.round(pair.availableOutgoingBitrate / 1000) : null;
  const local = pair?.localCandidateId ? all.get(pair.localCandidateId) : undefined;
  const relayed = typeof local?.candidateType === 'string' ? local.candidateType === 'relay' : null;
  const limitingKbps = videoHeldBackByBandwidth && !rampingUp ? sendKbps : null;
  return { level: classify(rttMs, loss, limitingKbps), rttMs, loss, sendKbps, relayed };
}

/**
 * Samples every connection `connections()` lists (once each, however many
 * peers' media it carries: the SFU path's subscription carries everyone's),
 * every QUALITY_EVERY_MS, and reports each one's quality. Returns a stop function.
 */
export function watchQuality(connections: () => RTCPeerConnection[], report: (pc: RTCPeerConnection, quality: Quality) => void): () => void {
  const totals = new WeakMap<RTCPeerConnection, Totals & { connectedAt: number }>();
  const timer = setInterval(() => {
    for (const pc of new Set(connections())) {
      if (pc.connectionState !== 'connected') continue;
      let previous = totals.get(pc);
      if (!previous) totals.set(pc, (previous = { received: 0, lost: 0, connectedAt: performance.now() }));
      const totalsOfPc = previous;
      const rampingUp = performance.now() - previous.connectedAt < RAMP_UP_MS;
      pc.getStats()
        .then((stats) => report(pc, sample(stats, totalsOfPc, { rampingUp })))
        .catch(() => {});
    }
  }, QUALITY_EVERY_MS);
  return () => clearInterval(timer);
}

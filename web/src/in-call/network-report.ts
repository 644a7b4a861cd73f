// What the page tells the server about its connections, for the participant
// sessions' network summary (docs/api.md "Participant sessions"): every
// NETWORK_REPORT_EVERY_MS and once more on leaving, the latest quality sample
// of each peer connection (quality.ts), averaged over the peers.
import { NETWORK_REPORT_EVERY_MS, type ClientMessage } from '../../../src/shared/protocol.js';
import type { Quality } from './quality.js';

type NetworkReport = Extract<ClientMessage, { type: 'network-report' }>;

const mean = (values: (number | null)[]): number | null => {
  const known = values.filter((v): v is number => v !== null);
  return known.length ? known.reduce((a, b) => a + b, 0) / known.length : null;
};

/** One report from the peers' latest samples; null when there is none. */
export function networkReport(samples: Quality[]): NetworkReport | null {
  if (samples.length === 0) return null;
  const relayed = samples.map((s) => s.relayed).filter((r): r is boolean => r !== null);
  const loss = mean(samples.map((s) => s.loss));
  return {
    type: 'network-report',
    rttMs: mean(samples.map((s) => s.rttMs)),
    lossPercent: loss === null ? null : Math.min(100, loss * 100),
    bitrateKbps: mean(samples.map((s) => s.sendKbps)),
    relayed: relayed.length ? relayed.some(Boolean) : null,
  };
}

/**
 * Keeps each peer's latest sample (`record`, fed by watchQuality) and sends a
 * report every NETWORK_REPORT_EVERY_MS; `flush` sends one now (on leaving) and stops.
 */
export function reportNetwork(send: (message: NetworkReport) => void) {
  const latest = new Map<string, Quality>();
  const sendNow = () => {
    const report = networkReport([...latest.values()]);
    latest.clear();
    if (report) send(report);
  };
  const timer = setInterval(sendNow, NETWORK_REPORT_EVERY_MS);
  return {
    record: (peerId: string, quality: Quality) => void latest.set(peerId, quality),
    flush() {
      clearInterval(timer);
      sendNow();
    },
    stop: () => clearInterval(timer),
  };
}

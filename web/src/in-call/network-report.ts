// What the page tells the server about its connections, for the participant
// sessions' network summary (docs/api.md "Participant sessions"; docs/design.md,
// "Participant sessions"): every NETWORK_REPORT_EVERY_MS and once more on
// leaving, the latest quality sample of each connection the call's media takes
// (quality.ts), averaged over them: the peer connections on the peer-to-peer
// path; the publications (upstream) and the subscription (downstream) on the
// SFU path. A connection that sends nothing (the subscription) has no send
// estimate worth the name (Chromium's starting 300 kbit/s, never probed), so
// the bitrate is that of the connections that send; loss is of what arrives.
import { NETWORK_REPORT_EVERY_MS, type ClientMessage } from '../../../src/shared/protocol.js';
import { sample, type Quality } from './quality.js';

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

/** On leaving, the longest the page waits for the sample it takes then (the leave itself must not wait on it). */
export const FLUSH_SAMPLE_MAX_MS = 500;

/** Whether the connection sends media (a track on a sender): the subscription sends none. */
const sends = (pc: RTCPeerConnection) => pc.getSenders().some((sender) => sender.track !== null);

/** One sample of each connected connection now (loss over the connection's life). */
async function sampleNow(connections: RTCPeerConnection[]): Promise<[RTCPeerConnection, Quality][]> {
  const connected = connections.filter((pc) => pc.connectionState === 'connected');
  const samples = connected.map(async (pc): Promise<[RTCPeerConnection, Quality]> => [pc, sample(await pc.getStats(), { received: 0, lost: 0 })]);
  const settled = await Promise.allSettled(samples);
  return settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
}

/**
 * Keeps each connection's latest sample (`record`, fed by watchQuality) and
 * sends a report every NETWORK_REPORT_EVERY_MS; `flush` (on leaving) samples
 * `measured()` now, sends one last report and stops: someone who leaves
 * before the first periodic sample (every QUALITY_EVERY_MS, of connections
 * already connected: the SFU path's are new when the call moves there) still
 * leaves a summary, and the last report is the freshest.
 */
export function reportNetwork(send: (message: NetworkReport) => void, measured: () => RTCPeerConnection[]) {
  const latest = new Map<RTCPeerConnection, Quality>();
  const record = (pc: RTCPeerConnection, quality: Quality) => void latest.set(pc, sends(pc) ? quality : { ...quality, sendKbps: null });
  const sendNow = () => {
    const report = networkReport([...latest.values()]);
    latest.clear();
    if (report) send(report);
  };
  const timer = setInterval(sendNow, NETWORK_REPORT_EVERY_MS);
  return {
    record,
    async flush(): Promise<void> {
      clearInterval(timer);
      const late = new Promise<[]>((resolve) => setTimeout(() => resolve([]), FLUSH_SAMPLE_MAX_MS));
      for (const [pc, quality] of await Promise.race([sampleNow(measured()), late])) record(pc, quality);
      sendNow();
    },
    stop: () => clearInterval(timer),
  };
}

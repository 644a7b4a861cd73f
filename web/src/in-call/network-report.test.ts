import { describe, expect, it } from 'vitest';
import { networkReport, reportNetwork } from './network-report.js';
import type { Quality } from './quality.js';

const q = (rttMs: number | null, loss: number | null, sendKbps: number | null, relayed: boolean | null): Quality => ({ level: 'good', rttMs, loss, sendKbps, relayed });

describe('networkReport', () => {
  it('averages the peers\u2019 latest samples, loss as a percentage; relayed when any peer is', () => {
    expect(networkReport([q(40, 0.01, 1000, false), q(80, 0.03, 2000, true)])).toEqual({
      type: 'network-report',
      rttMs: 60,
      lossPercent: 2,
      bitrateKbps: 1500,
      relayed: true,
    });
  });

  it('a figure no peer reports is null; no sample, no report', () => {
    expect(networkReport([q(null, null, null, null)])).toEqual({ type: 'network-report', rttMs: null, lossPercent: null, bitrateKbps: null, relayed: null });
    expect(networkReport([])).toBeNull();
  });
});

describe('reportNetwork', () => {
  /** A connected connection that sends media (a track on a sender) or not, whose stats give a 20 ms round trip and this send estimate. */
  const connection = (sending: boolean, kbps = 300) =>
    ({
      connectionState: 'connected',
      getSenders: () => [{ track: sending ? {} : null }],
      getStats: async () =>
        new Map<string, Record<string, unknown>>([
          ['T', { id: 'T', type: 'transport', selectedCandidatePairId: 'P' }],
          ['P', { id: 'P', type: 'candidate-pair', currentRoundTripTime: 0.02, availableOutgoingBitrate: kbps * 1000 }],
        ]),
    }) as unknown as RTCPeerConnection;

  it('takes the bitrate of the connections that send (the SFU path\u2019s publication), not of one that only receives', async () => {
    const sent: unknown[] = [];
    const [publication, subscription] = [connection(true), connection(false)];
    const network = reportNetwork((report) => sent.push(report), () => []);
    network.record(publication, q(10, null, 1500, false));
    network.record(subscription, q(30, 0.02, 300, false));
    await network.flush();
    expect(sent).toEqual([{ type: 'network-report', rttMs: 20, lossPercent: 2, bitrateKbps: 1500, relayed: false }]);
  });

  it('samples the connections on leaving, so a page that leaves before the first periodic sample still reports', async () => {
    const sent: unknown[] = [];
    const network = reportNetwork((report) => sent.push(report), () => [connection(true, 1200), connection(false)]);
    await network.flush();
    expect(sent).toEqual([{ type: 'network-report', rttMs: 20, lossPercent: null, bitrateKbps: 1200, relayed: null }]);
  });
});

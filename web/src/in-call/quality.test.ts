// The quality of a connection from getStats(): the thresholds, and the figures
// read from Chromium's report shape (transport → selected pair) and Firefox's
// (a candidate pair that says it is selected).
import { describe, expect, it } from 'vitest';
import { classify, sample } from './quality.js';

/** A stats report as the browser gives one: a map of stats by id. */
const report = (...stats: Record<string, unknown>[]) => new Map(stats.map((s) => [s.id as string, s])) as unknown as RTCStatsReport;

describe('connection quality', () => {
  it('classifies by the worst of round trip, loss and send bitrate; an unknown figure counts as fine', () => {
    expect(classify(40, 0, 2000)).toBe('good');
    expect(classify(null, null, null)).toBe('good');
    expect(classify(301, 0, 2000)).toBe('fair');
    expect(classify(40, 0.04, 2000)).toBe('fair');
    expect(classify(40, 0, 399)).toBe('fair');
    expect(classify(601, 0, 2000)).toBe('poor');
    expect(classify(40, 0.11, 2000)).toBe('poor');
    expect(classify(40, 0, 149)).toBe('poor');
  });

  it('reads Chromium\u2019s selected pair and the loss since the last sample', () => {
    const totals = { received: 0, lost: 0 };
    const pair = { id: 'P', type: 'candidate-pair', currentRoundTripTime: 0.052, availableOutgoingBitrate: 1_200_000 };
    const first = sample(report({ id: 'T', type: 'transport', selectedCandidatePairId: 'P' }, pair, { id: 'A', type: 'inbound-rtp', packetsReceived: 500, packetsLost: 0 }), totals);
    expect(first).toEqual({ level: 'good', rttMs: 52, loss: 0, sendKbps: 1200, relayed: null });
    // 80 more arrived, 20 more lost: 20% of this sample's packets.
    const second = sample(report({ id: 'T', type: 'transport', selectedCandidatePairId: 'P' }, pair, { id: 'A', type: 'inbound-rtp', packetsReceived: 580, packetsLost: 20 }), totals);
    expect(second.loss).toBeCloseTo(0.2);
    expect(second.level).toBe('poor');
  });

  it('counts a low send estimate only when it holds our video back, and not while it ramps up', () => {
    const pair = { id: 'P', type: 'candidate-pair', currentRoundTripTime: 0.03, availableOutgoingBitrate: 300_000 };
    const video = (reason: string) => ({ id: 'V', type: 'outbound-rtp', kind: 'video', qualityLimitationReason: reason });
    const at = (extra: Record<string, unknown>[], options?: { rampingUp: boolean }) =>
      sample(report({ id: 'T', type: 'transport', selectedCandidatePairId: 'P' }, pair, ...extra), { received: 0, lost: 0 }, options);
    expect(at([video('bandwidth')])).toMatchObject({ level: 'fair', sendKbps: 300 });
    // The encoder is held back by the CPU, or not at all: the link is not the limit.
    expect(at([video('cpu')])).toMatchObject({ level: 'good', sendKbps: 300 });
    expect(at([video('none')])).toMatchObject({ level: 'good', sendKbps: 300 });
    // No video sent (camera off): the estimate has nothing to climb on, and says nothing of the link.
    expect(at([])).toMatchObject({ level: 'good', sendKbps: 300 });
    // Just connected: the estimate has not climbed yet.
    expect(at([video('bandwidth')], { rampingUp: true })).toMatchObject({ level: 'good', sendKbps: 300 });
  });

  it('reads Firefox\u2019s pair, which says itself that it is selected, and has no send estimate', () => {
    const q = sample(
      report(
        { id: 'X', type: 'candidate-pair', selected: false, currentRoundTripTime: 0.9 },
        { id: 'Y', type: 'candidate-pair', selected: true, currentRoundTripTime: 0.35 },
      ),
      { received: 0, lost: 0 },
    );
    expect(q).toEqual({ level: 'fair', rttMs: 350, loss: null, sendKbps: null, relayed: null });
  });

  it('says whether the selected pair is relayed, from our side\u2019s candidate', () => {
    const pair = (local: string) => ({ id: 'P', type: 'candidate-pair', selected: true, localCandidateId: local, currentRoundTripTime: 0.1 });
    const relay = { id: 'L1', type: 'local-candidate', candidateType: 'relay' };
    const host = { id: 'L2', type: 'local-candidate', candidateType: 'host' };
    expect(sample(report(pair('L1'), relay, host), { received: 0, lost: 0 }).relayed).toBe(true);
    expect(sample(report(pair('L2'), relay, host), { received: 0, lost: 0 }).relayed).toBe(false);
  });
});

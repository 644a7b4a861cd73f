import { describe, expect, it } from 'vitest';
import { networkReport } from './network-report.js';
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

// Stall, loss and return of a peer's media, from the packets its connection
// reports, on a fake clock (getStats answers at once).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LOST_AFTER_MS, STALL_AFTER_MS, watchMediaFlow, WATCH_EVERY_MS } from './media-watch.js';

function fakeConnection() {
  const pc = {
    connectionState: 'connected' as RTCPeerConnectionState,
    packets: 0,
    reads: 0,
    getStats: async () => {
      pc.reads++;
      return new Map([['in', { id: 'in', type: 'inbound-rtp', packetsReceived: pc.packets }]]) as unknown as RTCStatsReport;
    },
  };
  return pc;
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('the media watch', () => {
  it('reports a stall, then a loss, then the flow again, each once', async () => {
    const pc = fakeConnection();
    const events: string[] = [];
    const watch = watchMediaFlow(() => [['a', pc as unknown as RTCPeerConnection]], {
      onStall: (id) => void events.push(`stall ${id}`),
      onLost: (id) => void events.push(`lost ${id}`),
      onFlow: (id) => void events.push(`flow ${id}`),
    });
    const flowFor = async (ms: number) => {
      for (let t = 0; t < ms; t += WATCH_EVERY_MS) {
        pc.packets += 5;
        await vi.advanceTimersByTimeAsync(WATCH_EVERY_MS);
      }
    };
    await flowFor(1000);
    expect(watch.flowing(pc as unknown as RTCPeerConnection)).toBe(true);
    expect(events).toEqual([]);

    await vi.advanceTimersByTimeAsync(STALL_AFTER_MS + WATCH_EVERY_MS);
    expect(events).toEqual(['stall a']);
    expect(watch.flowing(pc as unknown as RTCPeerConnection)).toBe(false);
    await vi.advanceTimersByTimeAsync(LOST_AFTER_MS);
    expect(events).toEqual(['stall a', 'lost a']);
    await vi.advanceTimersByTimeAsync(LOST_AFTER_MS);
    expect(events).toEqual(['stall a', 'lost a']);

    await flowFor(WATCH_EVERY_MS * 2);
    expect(events).toEqual(['stall a', 'lost a', 'flow a']);
    expect(watch.flowing(pc as unknown as RTCPeerConnection)).toBe(true);
    watch.stop();
  });

  it('never calls stalled a peer that has sent nothing yet (no camera, no microphone)', async () => {
    const pc = fakeConnection();
    const events: string[] = [];
    const watch = watchMediaFlow(() => [['a', pc as unknown as RTCPeerConnection]], {
      onStall: () => void events.push('stall'),
      onLost: () => void events.push('lost'),
      onFlow: () => void events.push('flow'),
    });
    await vi.advanceTimersByTimeAsync(LOST_AFTER_MS * 2);
    expect(events).toEqual([]);
    expect(watch.flowing(pc as unknown as RTCPeerConnection)).toBe(false);
    watch.stop();
  });

  it('reads nothing from a connection until it has connected', async () => {
    const pc = fakeConnection();
    pc.connectionState = 'connecting';
    const watch = watchMediaFlow(() => [['a', pc as unknown as RTCPeerConnection]], { onStall: () => {}, onLost: () => {}, onFlow: () => {} });
    await vi.advanceTimersByTimeAsync(WATCH_EVERY_MS * 5);
    expect(pc.reads).toBe(0);
    pc.connectionState = 'connected';
    pc.packets = 5;
    await vi.advanceTimersByTimeAsync(WATCH_EVERY_MS);
    expect(pc.reads).toBe(1);
    expect(watch.flowing(pc as unknown as RTCPeerConnection)).toBe(true);
    // Once media came, a connection that drops out of `connected` is still watched: that is how a stall shows.
    pc.connectionState = 'disconnected';
    await vi.advanceTimersByTimeAsync(STALL_AFTER_MS + WATCH_EVERY_MS);
    expect(pc.reads).toBeGreaterThan(2);
    expect(watch.flowing(pc as unknown as RTCPeerConnection)).toBe(false);
    watch.stop();
  });
});

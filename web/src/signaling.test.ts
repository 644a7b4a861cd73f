// The page's own check of its signaling connection, on a fake clock and a fake
// socket whose pongs come after a chosen delay (or never: a dead link).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEAD_AFTER_MS, PROBE_MS, Signaling } from './signaling.js';

class FakeSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;
  readyState = FakeSocket.OPEN;
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: string }) => void) | null = null;
  onclose: ((event: { code: number }) => void) | null = null;
  /** Milliseconds before a ping is answered; null: never (the link is dead). */
  pongDelay: number | null = 5;
  send(data: string) {
    if (JSON.parse(data).type !== 'ping' || this.pongDelay === null) return;
    setTimeout(() => this.onmessage?.({ data: JSON.stringify({ type: 'pong' }) }), this.pongDelay);
  }
  close() {
    this.readyState = FakeSocket.CLOSED;
  }
}

function connected() {
  const events = { doubts: [] as boolean[], downs: 0, opens: 0 };
  const signaling = new Signaling('ws://parley.test/ws', {
    onMessage: () => {},
    onOpen: () => void events.opens++,
    onDown: () => void events.downs++,
    onDoubt: (inDoubt) => void events.doubts.push(inDoubt),
    onFinalClose: () => {},
  });
  const socket = new FakeSocket();
  signaling.connect(socket as unknown as WebSocket);
  return { signaling, socket, events };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.stubGlobal('WebSocket', FakeSocket);
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('the signaling connection\u2019s own check', () => {
  it('replaces a connection that stops answering: after DEAD_AFTER_MS by itself, within PROBE_MS of a probe', async () => {
    const quiet = connected();
    await vi.advanceTimersByTimeAsync(3000);
    quiet.socket.pongDelay = null;
    await vi.advanceTimersByTimeAsync(DEAD_AFTER_MS + 1000);
    expect(quiet.events.downs).toBe(1);

    const probed = connected();
    // Between heartbeats: no pong on its way when the link dies.
    await vi.advanceTimersByTimeAsync(2500);
    probed.socket.pongDelay = null;
    probed.signaling.probe();
    await vi.advanceTimersByTimeAsync(PROBE_MS + 10);
    // In doubt first (the banner shows), then replaced (the doubt ends with the connection).
    expect(probed.events.doubts).toEqual([true, false]);
    expect(probed.events.downs).toBe(1);
    probed.signaling.close();
    quiet.signaling.close();
  });

  it('keeps a slow link that answers: its waits follow the measured round trip', async () => {
    const { signaling, socket, events } = connected();
    // A thin link: every pong comes 400 ms after its ping (a queue, not a failure).
    socket.pongDelay = 400;
    await vi.advanceTimersByTimeAsync(10_000);
    signaling.probe();
    await vi.advanceTimersByTimeAsync(3000);
    expect(events.doubts).toEqual([]);
    expect(events.downs).toBe(0);
    expect(signaling.healthy).toBe(true);
    signaling.close();
  });

  it('measures the queue in front of its own link: the round trip over its shortest on this connection', async () => {
    const { signaling, socket } = connected();
    expect(signaling.queueMs).toBeNull(); // nothing measured yet
    await vi.advanceTimersByTimeAsync(5000);
    expect(signaling.queueMs).toBe(0); // 5 ms every time: no queue
    socket.pongDelay = 305; // media fills the link: pings wait 300 ms more
    await vi.advanceTimersByTimeAsync(10_000);
    expect(signaling.queueMs).toBeGreaterThan(250);
    // A new connection (another path, perhaps) is measured afresh.
    signaling.connect(new FakeSocket() as unknown as WebSocket);
    expect(signaling.queueMs).toBeNull();
    signaling.close();
  });
});

// The in-process buses: what a single node relies on to keep rooms apart.
import { describe, expect, it } from 'vitest';
import { createLocalEventBus } from './local-room-event-bus.js';
import { createLocalSignalBus } from './local-signal-bus.js';
import type { RoomEvent } from './room-event-bus.js';
import type { SignalEnvelope } from './signal-bus.js';

const envelope = (fromSession: string): SignalEnvelope => ({ fromSession, to: null, message: { type: 'peer-left', peerId: 'p' } });

describe('local signal bus', () => {
  it('delivers to the subscribers of that room only, synchronously', () => {
    const bus = createLocalSignalBus();
    const room1: SignalEnvelope[] = [];
    const room2: SignalEnvelope[] = [];
    bus.subscribe(1, (e) => room1.push(e));
    bus.subscribe(2, (e) => room2.push(e));
    bus.publish(1, envelope('a'));
    expect(room1).toEqual([envelope('a')]);
    expect(room2).toEqual([]);
  });

  it('stops delivering to a handler once unsubscribed, and keeps the others', () => {
    const bus = createLocalSignalBus();
    const kept: SignalEnvelope[] = [];
    const dropped: SignalEnvelope[] = [];
    bus.subscribe(1, (e) => kept.push(e));
    const off = bus.subscribe(1, (e) => dropped.push(e));
    off();
    bus.publish(1, envelope('b'));
    expect(kept).toHaveLength(1);
    expect(dropped).toEqual([]);
  });
});

describe('local room event bus', () => {
  it('delivers every event to every listener until it unsubscribes', () => {
    const bus = createLocalEventBus();
    const a: RoomEvent[] = [];
    const b: RoomEvent[] = [];
    bus.subscribe((e) => a.push(e));
    const offB = bus.subscribe((e) => b.push(e));
    bus.publish({ type: 'room-updated', roomId: 3 });
    offB();
    bus.publish({ type: 'room-closed', roomId: 3 });
    expect(a).toEqual([
      { type: 'room-updated', roomId: 3 },
      { type: 'room-closed', roomId: 3 },
    ]);
    expect(b).toEqual([{ type: 'room-updated', roomId: 3 }]);
  });
});

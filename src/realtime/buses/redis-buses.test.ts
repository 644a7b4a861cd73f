// Two independent connections to a real Redis stand for two nodes.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { startRedis } from '../../../scripts/redis.mjs';
import type { RoomEvent } from '../../domain/buses/room-event-bus.js';
import type { SignalEnvelope } from '../../domain/buses/signal-bus.js';
import { eventually } from '../../../test/helpers/wait.js';
import { connectRedisBuses, type RedisBuses } from './redis-buses.js';

let redis: { url: string; stop(): Promise<void> };
let nodeA: RedisBuses;
let nodeB: RedisBuses;

beforeAll(async () => {
  redis = await startRedis();
  nodeA = await connectRedisBuses(redis.url);
  nodeB = await connectRedisBuses(redis.url);
});
afterAll(async () => {
  await nodeA?.close();
  await nodeB?.close();
  await redis?.stop();
});

function next<T>(subscribe: (handler: (value: T) => void) => () => void): Promise<T> {
  return new Promise((resolve, reject) => {
    // A generous deadline for a message that takes milliseconds: only a lost one misses it.
    const timer = setTimeout(() => reject(new Error('nothing arrived within 15 s')), 15_000);
    const off = subscribe((value) => {
      clearTimeout(timer);
      off();
      resolve(value);
    });
  });
}

/**
 * SUBSCRIBE is asynchronous: waits until Redis counts `count` subscribers of the channel
 * (its own answer, PUBSUB NUMSUB), not for a time it may take.
 */
async function subscribed(channel: string, count: number) {
  const probe = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  try {
    await eventually(async () => (await probe.pubsub('NUMSUB', channel))[1] === count, 15_000, `${count} subscriber(s) of ${channel}`);
  } finally {
    probe.disconnect();
  }
}

describe('Redis buses', () => {
  it('carries a signal from a node to every node subscribed to that room, and only that room', async () => {
    const envelope: SignalEnvelope = { fromSession: 's1', to: null, message: { type: 'session-replaced' } };
    const onB = next<SignalEnvelope>((h) => nodeB.signals.subscribe(42, h));
    const otherRoom: SignalEnvelope[] = [];
    const offOther = nodeB.signals.subscribe(43, (e) => otherRoom.push(e));
    await subscribed('parley:room:42', 1);
    await subscribed('parley:room:43', 1);
    nodeA.signals.publish(42, envelope);
    expect(await onB).toEqual(envelope);
    await new Promise((r) => setTimeout(r, 100)); // proves that nothing arrives in the other room
    expect(otherRoom).toEqual([]);
    offOther();
  });

  it('delivers API room events to every node, the publisher included', async () => {
    const event: RoomEvent = { type: 'room-closed', roomId: 7 };
    const onA = next<RoomEvent>((h) => nodeA.events.subscribe(h));
    const onB = next<RoomEvent>((h) => nodeB.events.subscribe(h));
    await subscribed('parley:room-events', 2);
    nodeA.events.publish(event);
    expect(await onA).toEqual(event);
    expect(await onB).toEqual(event);
  });

  it('stops delivering after unsubscribe', async () => {
    const received: SignalEnvelope[] = [];
    const off = nodeB.signals.subscribe(50, (e) => received.push(e));
    await subscribed('parley:room:50', 1);
    off();
    await subscribed('parley:room:50', 0);
    nodeA.signals.publish(50, { fromSession: 'x', to: null, message: { type: 'session-replaced' } });
    await new Promise((r) => setTimeout(r, 150)); // proves that nothing arrives
    expect(received).toEqual([]);
  });
});

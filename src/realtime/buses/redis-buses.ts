// Cross-node messaging over Redis pub/sub (REDIS_URL): the same SignalBus and
// RoomEventBus interfaces as the in-process buses, so the hub and the services
// never know whether the other participant is on this node or another.
//
// One channel per room for signaling (a node subscribes only to rooms it has
// participants in) and one channel for API room events. Every node, including
// the publisher, receives each message from Redis: the hub already ignores a
// connection's own messages, and one path keeps the order the same everywhere.
import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import type { RoomEvent, RoomEventBus } from './room-event-bus.js';
import type { SignalBus, SignalEnvelope } from './signal-bus.js';

const ROOM_EVENTS_CHANNEL = 'parley:room-events';
const roomChannel = (roomId: number) => `parley:room:${roomId}`;

export interface RedisBuses {
  signals: SignalBus;
  events: RoomEventBus;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export async function connectRedisBuses(url: string, onError: (error: Error) => void = () => {}): Promise<RedisBuses> {
  // Commands wait (bounded) while Redis reconnects instead of failing at once.
  const options = { maxRetriesPerRequest: 3, enableAutoPipelining: true, lazyConnect: true };
  const publisher = new Redis(url, options);
  const subscriber = new Redis(url, options);
  publisher.on('error', onError);
  subscriber.on('error', onError);
  await Promise.all([publisher.connect(), subscriber.connect()]);

  const local = new EventEmitter();
  local.setMaxListeners(0);
  subscriber.on('message', (channel: string, text: string) => {
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      return; // not ours
    }
    local.emit(channel, payload);
  });

  function subscribe<T>(channel: string, handler: (payload: T) => void): () => void {
    if (local.listenerCount(channel) === 0) void subscriber.subscribe(channel).catch(onError);
    local.on(channel, handler as (payload: unknown) => void);
    return () => {
      local.off(channel, handler as (payload: unknown) => void);
      if (local.listenerCount(channel) === 0) void subscriber.unsubscribe(channel).catch(onError);
    };
  }

  const publish = (channel: string, payload: unknown) => {
    void publisher.publish(channel, JSON.stringify(payload)).catch(onError);
  };

  return {
    signals: {
      publish: (roomId: number, envelope: SignalEnvelope) => publish(roomChannel(roomId), envelope),
      subscribe: (roomId: number, handler: (envelope: SignalEnvelope) => void) => subscribe<SignalEnvelope>(roomChannel(roomId), handler),
    },
    events: {
      publish: (event: RoomEvent) => publish(ROOM_EVENTS_CHANNEL, event),
      subscribe: (listener: (event: RoomEvent) => void) => subscribe<RoomEvent>(ROOM_EVENTS_CHANNEL, listener),
    },
    async ping() {
      await publisher.ping();
    },
    async close() {
      local.removeAllListeners();
      await Promise.allSettled([publisher.quit(), subscriber.quit()]);
    },
  };
}

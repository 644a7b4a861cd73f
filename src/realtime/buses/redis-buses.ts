// Cross-node messaging over Redis pub/sub (REDIS_URL): the same SignalBus and
// RoomEventBus interfaces as the in-process buses, so the hub and the services
// never know whether the other participant is on this node or another.
//
// One channel per room for signaling (a node subscribes only to rooms it has
// participants in) and one channel for API room events. Every node, including
// the publisher, receives each message from Redis: the hub already ignores a
// connection's own messages, and one path keeps the order the same everywhere.
//
// Redis may be away (docs/deploy.md, "What happens when…"): the node starts and runs
// without it, reconnects in the background, and heals by itself.
// - A publish resolves once Redis accepted it and rejects at once (or after
//   PUBLISH_TIMEOUT_MS) when it cannot: nothing is queued to surface later, so
//   a caller that acknowledges after the publish never acknowledges a loss.
// - The channels this node needs are kept here and subscribed again on every
//   reconnection, including those first asked for while Redis was away.
import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import type { RoomEvent, RoomEventBus } from '../../domain/buses/room-event-bus.js';
import type { SignalBus, SignalEnvelope } from '../../domain/buses/signal-bus.js';

const ROOM_EVENTS_CHANNEL = 'parley:room-events';
const roomChannel = (roomId: number) => `parley:room:${roomId}`;
const PUBLISH_TIMEOUT_MS = 2000;
/** How long start-up waits for Redis before going on without it. */
const FIRST_CONNECT_WAIT_MS = 2000;

export type RedisConnectionChange = { up: false; reason: string } | { up: true; downForMs: number; resubscribed: number };

export interface RedisBusCounters {
  publishFailed(): void;
  resubscribed(channels: number): void;
}

export interface RedisBuses {
  signals: SignalBus;
  events: RoomEventBus;
  /** Both connections ready now. */
  isUp(): boolean;
  /** Where Redis is, without credentials, for log lines. */
  address: string;
  /** Called on each loss and each recovery. */
  onConnectionChange(listener: (change: RedisConnectionChange) => void): void;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** host:port of a Redis URL: never its user or password. */
export function redisAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return 'an unparsable REDIS_URL';
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer from Redis within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function connectRedisBuses(url: string, counters: RedisBusCounters = { publishFailed() {}, resubscribed() {} }): Promise<RedisBuses> {
  const options = {
    lazyConnect: true,
    // Fail at once while disconnected instead of queueing: see the top of this file.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    // Subscriptions are restored here, from `wanted`, not by ioredis (it forgets a SUBSCRIBE that failed).
    autoResubscribe: false,
    retryStrategy: (attempt: number) => Math.min(attempt * 200, 2000),
    enableAutoPipelining: true,
  };
  const publisher = new Redis(url, options);
  const subscriber = new Redis(url, options);
  const address = redisAddress(url);
  const changes = new EventEmitter();
  // Reconnection errors repeat every retry; the loss and the recovery are reported once each (onConnectionChange).
  publisher.on('error', () => {});
  subscriber.on('error', () => {});

  const local = new EventEmitter();
  local.setMaxListeners(0);
  const wanted = new Set<string>();
  subscriber.on('message', (channel: string, text: string) => {
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      return; // not ours
    }
    local.emit(channel, payload);
  });

  let up = false;
  let downSince = Date.now();
  let reason = `Redis at ${address} not reached yet`;
  const bothReady = () => publisher.status === 'ready' && subscriber.status === 'ready';

  async function restoreSubscriptions(): Promise<number> {
    const channels = [...wanted];
    if (channels.length > 0) await subscriber.subscribe(...channels);
    return channels.length;
  }

  async function onReady() {
    if (!bothReady() || up) return;
    let resubscribed = 0;
    try {
      resubscribed = await restoreSubscriptions();
    } catch {
      return; // lost again meanwhile: the next ready tries again
    }
    if (up || !bothReady()) return;
    up = true;
    if (resubscribed > 0) counters.resubscribed(resubscribed);
    changes.emit('change', { up: true, downForMs: Date.now() - downSince, resubscribed } satisfies RedisConnectionChange);
  }

  function onLost(why: string) {
    if (!up) return;
    up = false;
    downSince = Date.now();
    reason = why;
    changes.emit('change', { up: false, reason } satisfies RedisConnectionChange);
  }

  for (const connection of [publisher, subscriber]) {
    connection.on('ready', () => void onReady());
    connection.on('close', () => onLost(`connection to Redis at ${address} closed`));
  }

  function subscribe<T>(channel: string, handler: (payload: T) => void): () => void {
    if (!wanted.has(channel)) {
      wanted.add(channel);
      // While Redis is away this fails; onReady subscribes it on recovery.
      if (subscriber.status === 'ready') void subscriber.subscribe(channel).catch(() => {});
    }
    local.on(channel, handler as (payload: unknown) => void);
    return () => {
      local.off(channel, handler as (payload: unknown) => void);
      if (local.listenerCount(channel) === 0) {
        wanted.delete(channel);
        if (subscriber.status === 'ready') void subscriber.unsubscribe(channel).catch(() => {});
      }
    };
  }

  async function publish(channel: string, payload: unknown): Promise<void> {
    try {
      await withTimeout(publisher.publish(channel, JSON.stringify(payload)), PUBLISH_TIMEOUT_MS, 'PUBLISH');
    } catch (error) {
      counters.publishFailed();
      throw error;
    }
  }

  // Start-up waits briefly for Redis, then goes on without it (the node serves
  // the API and the calls whose participants are all on it) and keeps retrying.
  const connecting = Promise.allSettled([publisher.connect(), subscriber.connect()]);
  await Promise.race([connecting, new Promise((resolve) => setTimeout(resolve, FIRST_CONNECT_WAIT_MS).unref())]);
  await onReady();

  return {
    signals: {
      publish: (roomId: number, envelope: SignalEnvelope) => publish(roomChannel(roomId), envelope),
      subscribe: (roomId: number, handler: (envelope: SignalEnvelope) => void) => subscribe<SignalEnvelope>(roomChannel(roomId), handler),
      onReconnected: (listener: () => void) => changes.on('change', (change: RedisConnectionChange) => change.up && listener()),
    },
    events: {
      // Room events are best effort across nodes: the API's answer does not wait on Redis.
      publish: (event: RoomEvent) => void publish(ROOM_EVENTS_CHANNEL, event).catch(() => {}),
      subscribe: (listener: (event: RoomEvent) => void) => subscribe<RoomEvent>(ROOM_EVENTS_CHANNEL, listener),
    },
    isUp: () => up,
    address,
    onConnectionChange(listener) {
      changes.on('change', listener);
    },
    async ping() {
      await withTimeout(publisher.ping(), 1000, 'PING');
    },
    async close() {
      changes.removeAllListeners();
      local.removeAllListeners();
      wanted.clear();
      await Promise.allSettled([publisher.quit(), subscriber.quit()]);
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}

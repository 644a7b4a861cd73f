// Chat lines between nodes: kept by the sender's node, asked for by a node
// that is back, delivered once. Two room registries on a bus that stands in
// for Redis and can leave one node out (no sockets, no Redis: the real one is
// test/cluster/redis-outage-chat.test.ts).
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { manualClock } from '../../test/helpers/app.js';
import type { SignalBus, SignalEnvelope } from '../domain/buses/signal-bus.js';
import { CLOCK_SKEW_MS, createKeptLines, createSeenLines, KEEP_MS, KEEP_PER_ROOM } from './chat-lines.js';
import { registryMember } from './hub.test-support.js';
import type { RoomSettings } from '../shared/protocol.js';
import { createRoomRegistry } from './room-registry.js';

const settings: RoomSettings = { chat: true, screenshare: true, invites: true, audioIndicator: true };
const silentLog = { warn: vi.fn(), debug: vi.fn() } as unknown as FastifyBaseLogger;
const clock = manualClock();

const line = (lineId: string, at: number): SignalEnvelope => ({
  fromSession: 's',
  to: null,
  message: { type: 'chat', from: 'p', name: 'P', text: lineId, sentAt: new Date(at).toISOString() },
  lineId,
  at,
});

/** Pub/sub like Redis's: every subscribed node gets each message, but a node marked away neither sends nor receives. */
function fakeRedis() {
  const handlers = new Map<string, Map<number, Set<(envelope: SignalEnvelope) => void>>>();
  const away = new Set<string>();
  const onBack = new Map<string, (() => void)[]>();
  return {
    node(name: string): SignalBus {
      handlers.set(name, new Map());
      return {
        async publish(roomId, envelope) {
          if (away.has(name)) throw new Error('Redis is away');
          for (const [node, rooms] of handlers) {
            if (away.has(node)) continue;
            for (const handler of rooms.get(roomId) ?? []) handler(structuredClone(envelope));
          }
        },
        subscribe(roomId, handler) {
          const rooms = handlers.get(name)!;
          rooms.set(roomId, (rooms.get(roomId) ?? new Set()).add(handler));
          return () => rooms.get(roomId)!.delete(handler);
        },
        onReconnected(listener) {
          onBack.set(name, [...(onBack.get(name) ?? []), listener]);
        },
      };
    },
    away(name: string) {
      away.add(name);
    },
    back(name: string) {
      away.delete(name);
      for (const listener of onBack.get(name) ?? []) listener();
    },
  };
}

function node(bus: SignalBus, now = () => clock.now().getTime()) {
  const registry = createRoomRegistry({ bus, log: silentLog, onDecision: () => {}, now });
  bus.onReconnected!(() => registry.askForMissedLines());
  const member = (roomId: number, peerId: string) => {
    const joined = registryMember(registry, roomId, peerId, settings, clock);
    return { ...joined, chats: () => joined.connection.all('chat').map((m) => m.text) };
  };
  return { registry, member };
}

/** Two nodes on the stand-in Redis, a sender in room 1 on node a and a receiver in it on node b. */
function twoNodes() {
  const redis = fakeRedis();
  const a = node(redis.node('a'));
  const b = node(redis.node('b'));
  return { redis, a, b, sender: a.member(1, 'sender'), receiver: b.member(1, 'receiver') };
}

const chat = (text: string) => ({ type: 'chat' as const, from: 'a', name: 'A', text, sentAt: clock.now().toISOString() });
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('chat lines across nodes', () => {
  it('a line acknowledged while the other node is away reaches it once, when it is back and asks', async () => {
    const { redis, a, b, sender, receiver } = twoNodes();
    const elsewhere = b.member(2, 'elsewhere');

    expect(await a.registry.publish(sender.session, null, chat('before'), { localFallback: false, line: true })).toBe(true);
    redis.away('b');
    expect(await a.registry.publish(sender.session, null, chat('while b is away'), { localFallback: false, line: true })).toBe(true);
    expect(receiver.chats()).toEqual(['before']);

    redis.back('b');
    await settle();
    expect(receiver.chats()).toEqual(['before', 'while b is away']);
    // Asked again (another reconnection): every line was seen here, nothing twice.
    redis.away('b');
    redis.back('b');
    await settle();
    expect(receiver.chats()).toEqual(['before', 'while b is away']);
    expect(sender.connection.all('chat')).toEqual([]);
    expect(elsewhere.chats()).toEqual([]);
  });

  it('a node back before the other sends its lines again when the later one asks', async () => {
    const { redis, a, sender, receiver } = twoNodes();
    redis.away('a');
    redis.away('b');
    redis.back('a');
    expect(await a.registry.publish(sender.session, null, chat('a is back, b not yet'), { localFallback: false, line: true })).toBe(true);
    await settle();
    expect(receiver.chats()).toEqual([]);
    redis.back('b');
    await settle();
    expect(receiver.chats()).toEqual(['a is back, b not yet']);
  });

  it('a line Redis did not take is neither acknowledged nor kept, and never arrives', async () => {
    const { redis, a, sender, receiver } = twoNodes();
    redis.away('a');
    expect(await a.registry.publish(sender.session, null, chat('not sent'), { localFallback: false, line: true })).toBe(false);
    redis.back('a');
    redis.away('b');
    redis.back('b');
    await settle();
    expect(receiver.chats()).toEqual([]);
  });

  it('keeps lines for KEEP_MS and KEEP_PER_ROOM at most', () => {
    let now = 1_000_000;
    const kept = createKeptLines(() => now);
    for (let i = 0; i < KEEP_PER_ROOM + 5; i++) kept.keep(1, line(`l${i}`, now));
    expect(kept.of(1).map((l) => l.lineId)).toEqual(Array.from({ length: KEEP_PER_ROOM }, (_, i) => `l${i + 5}`));
    now += KEEP_MS - 1;
    kept.keep(2, line('late', now));
    expect(kept.of(1)).toHaveLength(KEEP_PER_ROOM);
    now += 2;
    expect(kept.of(1)).toEqual([]);
    expect(kept.of(2).map((l) => l.lineId)).toEqual(['late']);
    // A minute on, a line of any room lets go of the rooms whose lines all expired.
    now += KEEP_MS;
    kept.keep(3, line('new', now));
    expect(kept.rooms).toBe(1);
  });

  it('delivers a line once, and not one sent before anyone here was in the room', () => {
    let now = 5_000_000;
    const seen = createSeenLines(() => now);
    expect(seen.firstTime(line('x', now))).toBe(true);
    expect(seen.firstTime(line('x', now))).toBe(false);
    expect(seen.firstTime({ fromSession: 's', to: null, message: { type: 'pong' } })).toBe(true);
    expect(seen.firstTime(line('old', now - CLOCK_SKEW_MS - 1))).toBe(false);
    expect(seen.firstTime(line('skewed', now - CLOCK_SKEW_MS + 1))).toBe(true);
    // Forgotten once no node keeps it any more.
    now += KEEP_MS + CLOCK_SKEW_MS + 1;
    expect(seen.firstTime(line('y', now))).toBe(true);
    expect(seen.firstTime(line('x', now))).toBe(true);
  });
});

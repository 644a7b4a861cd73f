// A call while Redis is away (docs/deploy.md, "What happens when…"): a chat's
// sender is told the message was not sent instead of an acknowledgement,
// nobody receives it later, and once Redis is back a chat is delivered exactly
// once; people who joined on different nodes meanwhile hear of each other when
// it is back. A real redis-server, stopped and started on the same port.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { startRedis } from '../../../scripts/redis.mjs';
import { eventually } from '../../../test/helpers/wait.js';
import { connectRedisBuses, type RedisBuses } from '../buses/redis-buses.js';
import { dispatch } from '../dispatch.js';
import { wiredHubContext } from '../hub.js';
import { recordingConnection, useHubFixture } from '../hub.test-support.js';
import { createSession } from '../session.js';
import { handleJoin } from './join.js';

let redis: { url: string; port: number; stop(): Promise<void> };
let buses: RedisBuses;
beforeAll(async () => {
  redis = await startRedis();
  buses = await connectRedisBuses(redis.url);
});
afterAll(async () => {
  await buses?.close();
  await redis?.stop();
});
const hub = useHubFixture({ bus: () => buses.signals });


describe('chat through a Redis outage', () => {
  it('is refused with a retryable error while Redis is away, never delivered later, and delivered once after', { timeout: 120_000 }, async () => {
    const { host, guest } = await hub().hostAndGuest();
    await eventually(() => host.connection.all('peer-joined').length === 1, 30_000, 'the host hears of the guest through Redis');
    const chats = () => guest.connection.all('chat').map((m) => m.text);

    await redis.stop();
    await eventually(() => !buses.isUp(), 30_000, 'the bus notices the loss');
    await dispatch(hub().ctx, host.session, { type: 'chat', requestId: 'lost', text: 'during the outage' });
    expect(host.connection.sent.filter((m) => 'requestId' in m && m.requestId === 'lost')).toEqual([
      { type: 'error', requestId: 'lost', code: 'unavailable', message: 'Your message could not be sent. Try again.' },
    ]);

    redis = await startRedis({ port: redis.port });
    await eventually(() => buses.isUp(), 30_000, 'the bus reconnects');
    await dispatch(hub().ctx, host.session, { type: 'chat', requestId: 'sent', text: 'after the outage' });
    expect(host.connection.sent.filter((m) => 'requestId' in m && m.requestId === 'sent')).toEqual([{ type: 'ack', requestId: 'sent' }]);
    await eventually(() => chats().length > 0, 30_000, 'the chat after the outage arrives');
    await new Promise((r) => setTimeout(r, 200)); // proves that the lost one does not arrive late
    expect(chats()).toEqual(['after the outage']);
  });
});

describe('people who joined on different nodes while Redis was away', () => {
  it('hear of each other (peer-present) once Redis is back', { timeout: 120_000 }, async () => {
    // Node B: its own Redis connection and hub context over the same database as node A (the fixture).
    const nodeB = await connectRedisBuses(redis.url);
    try {
      const ctxB = wiredHubContext({ ...hub().ctx.options, bus: nodeB.signals });
      const room = await hub().createRoom();
      const host = await hub().join(room.access_token, 'Host'); // node A, before the outage

      await redis.stop();
      await eventually(() => !buses.isUp() && !nodeB.isUp(), 30_000, 'both nodes notice the loss');
      const connection = recordingConnection();
      const guest = createSession(connection, hub().clock);
      await handleJoin(ctxB, guest, { type: 'join', requestId: 'g', joinToken: room.guest_token, displayName: 'Guest' });
      const guestId = connection.all('joined')[0]!.self.id;
      await new Promise((r) => setTimeout(r, 200)); // proves an absence: the announcement could not cross
      expect(host.connection.all('peer-joined')).toEqual([]); // the announcement could not cross

      redis = await startRedis({ port: redis.port });
      await eventually(() => host.connection.all('peer-present').length > 0 && connection.all('peer-present').length > 0, 30_000, 'both hear of the other');
      // Each node announces more than once (for nodes that subscribed again a moment later): the same news, nobody else.
      const distinct = (messages: unknown[]) => [...new Set(messages.map((m) => JSON.stringify(m)))].map((m) => JSON.parse(m));
      expect(distinct(host.connection.all('peer-present'))).toEqual([{ type: 'peer-present', peer: { id: guestId, name: 'Guest', role: 'guest' } }]);
      expect(distinct(connection.all('peer-present'))).toEqual([{ type: 'peer-present', peer: { id: host.joined.self.id, name: 'Host', role: 'host' } }]);
    } finally {
      await nodeB.close();
    }
  });
});

// The join path as one transaction (bench/README.md, realtime): the room is
// found by its token, locked and started, and who is connected is read in the
// same statement that adds the participant. These pin what that must keep:
// the mesh limit under joins that race, and a `joined` reply that lists
// exactly the others connected before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PARTICIPANTS } from '../../src/domain/participation/participation.service.js';
import { startRealtimeServer, type RealtimeServer } from '../helpers/realtime-server.js';
import { type Client } from '../helpers/ws-client.js';

let server: RealtimeServer;

beforeAll(async () => {
  server = await startRealtimeServer();
});
afterAll(() => server.close());

describe('the join path', () => {
  it('lets exactly the mesh limit in when more join the same room at once', async () => {
    const room = await server.createRoom();
    const clients = await Promise.all(Array.from({ length: MAX_PARTICIPANTS + 4 }, () => server.connect()));
    const replies = await Promise.all(
      clients.map((client, i) => client.request({ type: 'join', joinToken: i % 2 ? room.guest_token : room.access_token, displayName: `P${i}` }, 10_000)),
    );
    expect(replies.filter((r) => r.type === 'joined')).toHaveLength(MAX_PARTICIPANTS);
    expect(replies.filter((r) => r.type === 'error' && r.code === 'room-full')).toHaveLength(4);
    expect((await server.getRoom(room.token)).current_participants).toHaveLength(MAX_PARTICIPANTS);
  });

  it('lists in `joined` the others connected before, oldest first, with their names and roles', async () => {
    const room = await server.createRoom();
    const joined: { client: Client; id: string }[] = [];
    for (const [token, name] of [
      [room.access_token, 'Host'],
      [room.guest_token, 'Guest one'],
      [room.guest_token, 'Guest two'],
    ] as const) {
      const client = await server.connect();
      const reply = await client.join(token, name);
      expect(reply.peers).toEqual(joined.map((j, i) => ({ id: j.id, name: ['Host', 'Guest one'][i], role: i === 0 ? 'host' : 'guest' })));
      joined.push({ client, id: reply.self.id });
    }
    // One leaves: the next newcomer is not told about it.
    expect(await joined[1]!.client.request({ type: 'leave' })).toMatchObject({ type: 'left' });
    const late = await (await server.connect()).join(room.guest_token, 'Late');
    expect(late.peers.map((p) => p.id)).toEqual([joined[0]!.id, joined[2]!.id]);
  });
});

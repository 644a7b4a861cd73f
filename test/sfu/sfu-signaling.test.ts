// The SFU's signaling over real WebSocket clients against a listening server
// and a real Janus (docs/signaling.md, "Group calls through an SFU"): the
// join reply says the server has an SFU, a publication's offer is answered by
// Janus through Parley, a waiting guest may neither publish nor subscribe, a
// publication goes when its connection closes, and a call holds 25 people.
// Media itself (ICE, decoding) needs browsers: test/browser/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealtimeServer, type RealtimeServer } from '../helpers/realtime-server.js';
import { publisherOffer, startTestJanus } from '../helpers/janus.js';
import { eventually } from '../helpers/wait.js';
import type { LocalJanus } from '../../src/local-janus.js';
import { MAX_PARTICIPANTS_WITH_SFU } from '../../src/domain/participation/participation.service.js';
import { openJanusSession } from '../../src/sfu/janus-client.js';
import { VIDEOROOM, videoRoomExists } from '../../src/sfu/video-room.js';

let janus: LocalJanus;
let server: RealtimeServer;

beforeAll(async () => {
  janus = await startTestJanus();
  server = await startRealtimeServer({ SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await janus?.stop();
});

/** Who is in the room's VideoRoom now (publishing or about to: its media needs ICE, which needs a browser), asked of Janus itself. */
async function publishersOf(roomToken: string): Promise<string[]> {
  const row = await server.services.database.db.selectFrom('rooms').select('id').where('token', '=', roomToken).executeTakeFirstOrThrow();
  const pin = await server.services.repos.sfuRooms.find(Number(row.id));
  if (!pin) return [];
  const session = await openJanusSession(pin.instance, janus.apiSecret);
  try {
    const handle = await session.attach(VIDEOROOM);
    const answer = await handle.request({ request: 'listparticipants', room: pin.janusRoom });
    return (answer.participants as { display: string }[]).map((p) => p.display).sort();
  } finally {
    await session.destroy();
  }
}

describe('signaling through the SFU', () => {
  it('tells the page the threshold, and answers a publication with Janus\'s answer', async () => {
    const room = await server.createRoom();
    const host = await server.connect();
    const joined = await host.join(room.access_token, 'Dr. Ada');
    expect(joined.sfu).toEqual({ minParticipants: 3, warm: false });
    const answer = await host.request({ type: 'sfu-publish', kind: 'camera', offer: publisherOffer() });
    expect(answer).toMatchObject({ type: 'sfu-answer', kind: 'camera', sdp: expect.stringMatching(/^v=0/) });
    expect((answer as { sdp: string }).sdp).toMatch(/a=recvonly/);
    expect(await publishersOf(room.token)).toEqual([`${joined.self.id}/camera`]);
    // Nobody else publishes yet whose media started: the subscription has nothing to offer.
    expect(await host.request({ type: 'sfu-subscribe' })).toMatchObject({ type: 'sfu-offer', sdp: null, streams: [] });
    // Its publication goes with its connection.
    host.terminate();
    await eventually(async () => (await publishersOf(room.token)).length === 0, 10_000, 'the publication gone');
  });

  it('destroys the room\'s VideoRoom when the room is closed', async () => {
    const room = await server.createRoom();
    const host = await server.connect();
    await host.join(room.access_token, 'Dr. Ada');
    await host.request({ type: 'sfu-publish', kind: 'camera', offer: publisherOffer() });
    const row = await server.services.database.db.selectFrom('rooms').select('id').where('token', '=', room.token).executeTakeFirstOrThrow();
    const pin = (await server.services.repos.sfuRooms.find(Number(row.id)))!;
    expect((await server.api('POST', `/api/rooms/${room.token}/close`)).statusCode).toBe(204);
    await host.next('room-closed');
    await eventually(async () => (await server.services.repos.sfuRooms.find(Number(row.id))) === null, 10_000, 'the pin gone');
    const session = await openJanusSession(janus.url, janus.apiSecret);
    try {
      expect(await videoRoomExists(session, pin)).toBe(false);
    } finally {
      await session.destroy();
    }
  });

  it('refuses a waiting guest: it publishes nothing and receives nothing', async () => {
    const room = await server.createRoom({ enable_waiting_room: true });
    const host = await server.connect();
    await host.join(room.access_token, 'Dr. Ada');
    const guest = await server.connect();
    expect(await guest.request({ type: 'join', joinToken: room.guest_token, displayName: 'Pat' })).toMatchObject({ type: 'waiting' });
    expect(await guest.request({ type: 'sfu-publish', kind: 'camera', offer: publisherOffer() })).toMatchObject({ type: 'error', code: 'not-admitted' });
    expect(await guest.request({ type: 'sfu-subscribe' })).toMatchObject({ type: 'error', code: 'not-admitted' });
    expect(await publishersOf(room.token)).toEqual([]);
  });

  it('refuses a screen publication where screen sharing is off, and SDP that is not SDP', async () => {
    const room = await server.createRoom({ enable_screenshare: false });
    const host = await server.connect();
    await host.join(room.access_token, 'Dr. Ada');
    expect(await host.request({ type: 'sfu-publish', kind: 'screen', offer: publisherOffer() })).toMatchObject({ type: 'error', code: 'screenshare-disabled' });
    expect(await host.request({ type: 'sfu-publish', kind: 'camera', offer: 'hello' })).toMatchObject({ type: 'error', code: 'bad-request' });
  });

  it(`holds ${MAX_PARTICIPANTS_WITH_SFU} people in one call`, async () => {
    const room = await server.createRoom();
    const clients = await Promise.all(Array.from({ length: MAX_PARTICIPANTS_WITH_SFU + 1 }, () => server.connect()));
    const replies = [];
    for (const [index, client] of clients.entries()) replies.push(await client.request({ type: 'join', joinToken: room.guest_token, displayName: `P${index}` }));
    expect(replies.filter((reply) => reply.type === 'joined')).toHaveLength(MAX_PARTICIPANTS_WITH_SFU);
    expect(replies.at(-1)).toMatchObject({ type: 'error', code: 'room-full' });
  }, 60_000);
});

describe('a server without an SFU', () => {
  it('says nothing of one, and refuses its messages', async () => {
    const plain = await startRealtimeServer();
    try {
      const room = await plain.createRoom();
      const host = await plain.connect();
      const joined = await host.join(room.access_token, 'Dr. Ada');
      expect(joined.sfu).toBeUndefined();
      expect(await host.request({ type: 'sfu-publish', kind: 'camera', offer: publisherOffer() })).toMatchObject({ type: 'error', code: 'bad-request' });
    } finally {
      await plain.close();
    }
  });
});

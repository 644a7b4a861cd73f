// The join handler over the real participation service (PGlite or PostgreSQL).
import { describe, expect, it } from 'vitest';
import { CloseCode } from '../close-codes.js';
import { useHubFixture } from '../hub.test-support.js';
import { parseClientMessage } from '../../shared/protocol.js';
import { connectionClosed } from '../session-handle.js';
import { handleJoin, MAX_FAILED_JOINS } from './join.js';

const hub = useHubFixture();

describe('join', () => {
  it('authenticates the host link: joined reply with a secret token, a public id, settings and ICE servers', async () => {
    const room = await hub().createRoom({ host_display_name: 'Dr. Ada', enable_invites: false });
    const { session, joined } = await hub().join(room.access_token, '');
    expect(joined).toMatchObject({
      type: 'joined',
      self: { role: 'host', name: 'Dr. Ada' },
      peers: [],
      settings: { chat: true, screenshare: true, invites: false, audioIndicator: true },
      iceServers: [{ urls: 'stun:stun.test' }],
      iceTransportPolicy: 'all',
      returnUrl: room.return_url,
      resumed: false,
    });
    expect(joined.requestId).toMatch(/^j\d+$/);
    expect(joined.self.id).not.toBe(joined.participantToken);
    expect(session.state).toBe('joined');
    expect(session.participant?.token).toBe(joined.participantToken);
    expect(hub().ctx.rooms.get(session.participant!.roomId)?.sessions.has(session)).toBe(true);
  });

  it('lists those already in the call and announces the newcomer to them (not to itself)', async () => {
    const { host, guest } = await hub().hostAndGuest();
    expect(guest.joined.peers).toEqual([{ id: host.joined.self.id, name: 'Host', role: 'host' }]);
    expect(host.connection.all('peer-joined')).toEqual([{ type: 'peer-joined', peer: { id: guest.joined.self.id, name: 'Guest', role: 'guest' } }]);
    expect(guest.connection.all('peer-joined')).toEqual([]);
  });

  it('answers an unknown link with not-found, lets the connection try again, and closes it (4004) after too many', async () => {
    const room = await hub().createRoom();
    const { session, connection } = hub().connect();
    await handleJoin(hub().ctx, session, { type: 'join', requestId: 'bad', joinToken: 'x'.repeat(43), displayName: 'Eve' });
    expect(connection.sent).toEqual([{ type: 'error', code: 'not-found', message: 'This join link is not valid', requestId: 'bad' }]);
    expect(session.state).toBe('new');
    await handleJoin(hub().ctx, session, { type: 'join', requestId: 'good', joinToken: room.guest_token, displayName: 'Pat' });
    expect(connection.all('joined')).toHaveLength(1);

    const guesser = hub().connect();
    for (let i = 1; i <= MAX_FAILED_JOINS; i++) {
      expect(guesser.connection.closes).toEqual([]);
      await handleJoin(hub().ctx, guesser.session, { type: 'join', requestId: `g${i}`, joinToken: 'y'.repeat(43), displayName: 'Eve' });
    }
    expect(guesser.connection.all('error')).toHaveLength(MAX_FAILED_JOINS);
    expect(guesser.connection.closes).toEqual([{ code: CloseCode.notFound, reason: 'too many unknown join links' }]);
  });

  it('resumes a participant on a new connection: same peer id, the old connection closes with 4002, nobody hears peer-left', async () => {
    const room = await hub().createRoom();
    const host = await hub().join(room.access_token, 'Host');
    const first = await hub().join(room.guest_token, 'Guest');
    const again = await hub().join(room.guest_token, 'Guest', first.joined.participantToken);
    expect(again.joined).toMatchObject({ resumed: true, participantToken: first.joined.participantToken, self: { id: first.joined.self.id } });
    expect(first.connection.closes).toEqual([{ code: CloseCode.replaced, reason: 'resumed on another connection' }]);
    expect(first.session.state).toBe('gone');
    await hub().settle();
    expect(host.connection.all('peer-left')).toEqual([]);
    expect(host.connection.all('peer-joined').map((m) => m.peer.id)).toEqual([first.joined.self.id, first.joined.self.id]);
  });

  it('passes the offer a new participant sends with its join to the peer there longest, after peer-joined, and says to whom', async () => {
    const room = await hub().createRoom();
    const host = await hub().join(room.access_token, 'Host');
    const guest = await hub().join(room.guest_token, 'Guest');
    const { session, connection } = hub().connect();
    await handleJoin(hub().ctx, session, { type: 'join', requestId: 'o1', joinToken: room.guest_token, displayName: 'Third', offer: 'v=0 offer' });
    await hub().settle();
    const joined = connection.all('joined')[0]!;
    expect(joined.offeredTo).toBe(host.joined.self.id);
    const fromNewcomer = { type: 'signal', from: joined.self.id, data: { description: { type: 'offer', sdp: 'v=0 offer' } } };
    expect(host.connection.sent.filter((m) => m.type === 'peer-joined' || m.type === 'signal').slice(-2)).toEqual([
      { type: 'peer-joined', peer: joined.self },
      fromNewcomer,
    ]);
    // Only to that one peer: the others get the newcomer's own offers later.
    expect(guest.connection.all('signal')).toEqual([]);
    expect(guest.connection.all('peer-joined')).toEqual([{ type: 'peer-joined', peer: joined.self }]);
  });

  it.each([[42], [''], [{ sdp: 'v=0' }], [null]])('refuses a join whose offer is %j', (offer) => {
    expect(parseClientMessage(JSON.stringify({ type: 'join', requestId: 'j', joinToken: 'a'.repeat(43), displayName: 'Pat', offer }))).toMatchObject({
      ok: false,
      code: 'bad-request',
      requestId: 'j',
    });
  });

  it('passes no join offer on when nobody is in the call, when the join resumes, or when the newcomer waits', async () => {
    const alone = await hub().createRoom();
    const { session, connection } = hub().connect();
    await handleJoin(hub().ctx, session, { type: 'join', requestId: 'a', joinToken: alone.access_token, displayName: 'Host', offer: 'v=0 a' });
    expect(connection.all('joined')[0]).not.toHaveProperty('offeredTo');

    const room = await hub().createRoom();
    const host = await hub().join(room.access_token, 'Host');
    const guest = await hub().join(room.guest_token, 'Guest');
    const again = hub().connect();
    await handleJoin(hub().ctx, again.session, {
      type: 'join',
      requestId: 'r',
      joinToken: room.guest_token,
      displayName: 'Guest',
      participantToken: guest.joined.participantToken,
      offer: 'v=0 r',
    });
    expect(again.connection.all('joined')[0]).toMatchObject({ resumed: true });
    expect(again.connection.all('joined')[0]).not.toHaveProperty('offeredTo');

    const waitingRoom = await hub().createRoom({ enable_waiting_room: true });
    const waitingHost = await hub().join(waitingRoom.access_token, 'Host');
    const knocking = hub().connect();
    await handleJoin(hub().ctx, knocking.session, { type: 'join', requestId: 'w', joinToken: waitingRoom.guest_token, displayName: 'Pat', offer: 'v=0 w' });
    expect(knocking.connection.all('waiting')).toHaveLength(1);
    await hub().settle();
    expect(host.connection.all('signal')).toEqual([]);
    expect(waitingHost.connection.all('signal')).toEqual([]);
  });

  it('records the leave of a join whose socket went away while the database answered, and sends nothing', async () => {
    const room = await hub().createRoom();
    const host = await hub().join(room.access_token, 'Host');
    const { session, connection } = hub().connect();
    const joining = handleJoin(hub().ctx, session, { type: 'join', requestId: 'late', joinToken: room.guest_token, displayName: 'Gone' });
    connectionClosed(hub().ctx, session);
    await joining;
    await hub().settle();
    expect(connection.sent).toEqual([]);
    expect(session.participant).toBeNull();
    expect(host.connection.all('peer-joined')).toEqual([]);
    // The host alone is connected: the late join was recorded as left.
    expect((await hub().getRoom(room.token)).current_participants).toEqual([host.joined.participantToken]);
  });
});

// Signaling with real ws clients against a listening server: authentication,
// membership, malformed input, settings and roles, API events reaching calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FRAME_BYTES } from '../../src/shared/protocol.js';
import { eventually, sleep } from '../helpers/wait.js';
import { startRealtimeServer, type RealtimeServer } from '../helpers/realtime-server.js';

let server: RealtimeServer;

beforeAll(async () => {
  server = await startRealtimeServer();
});
afterAll(() => server.close());

describe('connecting and joining', () => {
  it('refuses a WebSocket from another origin before the upgrade', async () => {
    await expect(server.connect('http://evil.example')).rejects.toThrow('HTTP 403');
  });

  it('joins with the host link: own participant token, room started, listed in current_participants', async () => {
    const room = await server.createRoom({ host_display_name: 'Dr. Ada' });
    const host = await server.connect();
    const joined = await host.join(room.access_token, '');
    expect(joined.self).toMatchObject({ role: 'host', name: 'Dr. Ada' });
    expect(joined.participantToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The public id is not the secret token.
    expect(joined.self.id).not.toBe(joined.participantToken);
    expect(joined.peers).toEqual([]);
    expect(joined.settings).toEqual({ chat: true, screenshare: true, invites: true, audioIndicator: true });
    expect(joined.returnUrl).toBe(room.return_url);
    const fetched = await server.getRoom(room.token);
    expect(fetched.status).toBe('started');
    expect(fetched.started_at).toBeDefined();
    expect(fetched.current_participants).toEqual([joined.participantToken]);
  });

  it('answers an unknown join token with not-found and lets the same connection join afterwards', async () => {
    const room = await server.createRoom();
    const client = await server.connect();
    const reply = await client.request({ type: 'join', joinToken: 'x'.repeat(43), displayName: 'Eve' });
    expect(reply).toMatchObject({ type: 'error', code: 'not-found' });
    const joined = await client.join(room.guest_token, 'Pat');
    expect(joined.self).toMatchObject({ role: 'guest', name: 'Pat' });
  });

  it('gives each join its own participant token and tells the others (by public id only)', async () => {
    const room = await server.createRoom();
    const host = await server.connect();
    const guest = await server.connect();
    const h = await host.join(room.access_token, 'Host');
    const g = await guest.join(room.guest_token, 'Guest');
    expect(g.participantToken).not.toBe(h.participantToken);
    expect(g.peers).toEqual([{ id: h.self.id, name: 'Host', role: 'host' }]);
    const announced = await host.next('peer-joined');
    expect(announced.peer).toEqual({ id: g.self.id, name: 'Guest', role: 'guest' });
    expect(JSON.stringify(host.received)).not.toContain(g.participantToken);
    const fetched = await server.getRoom(room.token);
    expect(fetched.current_participants).toEqual([h.participantToken, g.participantToken]);
  });
});

describe('malformed and out-of-order frames', () => {
  it('refuses everything but join before joining, and a second join after', async () => {
    const room = await server.createRoom();
    const client = await server.connect();
    expect(await client.request({ type: 'chat', text: 'hi' })).toMatchObject({ type: 'error', code: 'not-joined' });
    client.send({ type: 'signal', to: 'abc', data: { candidate: null } });
    expect(await client.next('error')).toMatchObject({ code: 'not-joined' });
    await client.join(room.guest_token);
    expect(await client.request({ type: 'join', joinToken: room.guest_token, displayName: 'again' })).toMatchObject({
      type: 'error',
      code: 'already-joined',
    });
  });

  it('answers bad JSON, unknown types and bad fields with an error, keeping the connection', async () => {
    const client = await server.connect();
    client.send('{not json');
    expect(await client.next('error')).toMatchObject({ code: 'bad-request' });
    client.send('[1,2]');
    expect(await client.next('error')).toMatchObject({ code: 'bad-request' });
    expect(await client.request({ type: 'teleport' })).toMatchObject({ type: 'error', code: 'unknown-type' });
    expect(await client.request({ type: 'join', joinToken: '../../etc', displayName: 'x' })).toMatchObject({ type: 'error', code: 'bad-request' });
    expect(await client.request({ type: 'join', joinToken: 'a'.repeat(43), displayName: 42 })).toMatchObject({ type: 'error', code: 'bad-request' });
    // A request without requestId cannot be answered as a request: an error without one.
    client.send({ type: 'leave' });
    const error = await client.next('error');
    expect(error.code).toBe('bad-request');
    expect(error.requestId).toBeUndefined();
    client.socket.send(Buffer.from([1, 2, 3]), { binary: true });
    expect(await client.next('error')).toMatchObject({ code: 'bad-request' });
    expect(client.socket.readyState).toBe(client.socket.OPEN);
  });

  it('refuses an oversized frame with too-large, and drops a connection that sends a huge one', async () => {
    const client = await server.connect();
    expect(await client.request({ type: 'chat', text: 'x'.repeat(MAX_FRAME_BYTES + 10) })).toMatchObject({ type: 'error', code: 'too-large' });
    // Multi-byte characters count as bytes: 30,000 × 3 bytes is over the limit.
    expect(await client.request({ type: 'chat', text: '€'.repeat(30_000) })).toMatchObject({ type: 'error', code: 'too-large' });
    client.send('x'.repeat(MAX_FRAME_BYTES * 5));
    const closed = await client.closed;
    expect(closed.code).toBe(1009);
  });
});

describe('membership', () => {
  it('relays SDP and ICE untouched between members, and never into another room', async () => {
    const roomA = await server.createRoom();
    const roomB = await server.createRoom();
    const hostA = await server.connect();
    const guestA = await server.connect();
    const guestB = await server.connect();
    const hA = await hostA.join(roomA.access_token, 'A host');
    const gA = await guestA.join(roomA.guest_token, 'A guest');
    const gB = await guestB.join(roomB.guest_token, 'B guest');

    const description = { type: 'offer', sdp: 'v=0\r\no=- 46117 2 IN IP4 127.0.0.1\r\ns=-\r\n' };
    hostA.send({ type: 'signal', to: gA.self.id, data: { description } });
    const got = await guestA.next('signal');
    expect(got).toEqual({ type: 'signal', from: hA.self.id, data: { description } });
    const candidate = { candidate: 'candidate:1 1 udp 2122260223 127.0.0.1 50000 typ host', sdpMid: '0', sdpMLineIndex: 0 };
    guestA.send({ type: 'signal', to: hA.self.id, data: { candidate } });
    expect((await hostA.next('signal')).data).toEqual({ candidate });

    // Addressed to a participant of room B, from room A: nobody receives it.
    hostA.send({ type: 'signal', to: gB.self.id, data: { description } });
    expect(await hostA.request({ type: 'chat', text: 'only for room A' })).toMatchObject({ type: 'ack' });
    expect((await guestA.next('chat')).text).toBe('only for room A');
    await sleep(200); // proves that nothing reaches room B
    expect(guestB.all('signal')).toEqual([]);
    expect(guestB.all('chat')).toEqual([]);
    expect(guestB.all('peer-joined')).toEqual([]);
  });

  it('forwards chat with the sender name to the others, not back to the sender', async () => {
    const room = await server.createRoom();
    const host = await server.connect();
    const guest = await server.connect();
    const h = await host.join(room.access_token, 'Host <b>');
    await guest.join(room.guest_token, 'Guest');
    expect(await host.request({ type: 'chat', text: '<script>alert(1)</script>' })).toMatchObject({ type: 'ack' });
    const message = await guest.next('chat');
    expect(message).toMatchObject({ from: h.self.id, name: 'Host <b>', text: '<script>alert(1)</script>' });
    expect(new Date(message.sentAt).getTime()).toBeGreaterThan(Date.now() - 10_000);
    await sleep(100); // proves that the sender does not get its own chat back
    expect(host.all('chat')).toEqual([]);
  });
});

describe('room settings and roles', () => {
  it('refuses chat, screen sharing and invites when switched off', async () => {
    const room = await server.createRoom({ enable_chat: false, enable_screenshare: false, enable_invites: false });
    const host = await server.connect();
    const joined = await host.join(room.access_token);
    expect(joined.settings).toEqual({ chat: false, screenshare: false, invites: false, audioIndicator: true });
    expect(await host.request({ type: 'chat', text: 'hi' })).toMatchObject({ type: 'error', code: 'chat-disabled' });
    expect(await host.request({ type: 'screenshare-start', streamId: 's1' })).toMatchObject({ type: 'error', code: 'screenshare-disabled' });
    expect(await host.request({ type: 'invite-create' })).toMatchObject({ type: 'error', code: 'invites-disabled' });
  });

  it('lets the host, not a guest, create an invite whose link joins the same room as a guest', async () => {
    const room = await server.createRoom();
    const host = await server.connect();
    const guest = await server.connect();
    await host.join(room.access_token, 'Host');
    await guest.join(room.guest_token, 'Guest');
    expect(await guest.request({ type: 'invite-create' })).toMatchObject({ type: 'error', code: 'forbidden' });
    const invite = await host.request({ type: 'invite-create' });
    expect(invite.type).toBe('invite-created');
    const url = (invite as { url: string }).url;
    expect(url).toMatch(/^http:\/\/parley\.test\/join\/[A-Za-z0-9_-]{43}$/);
    const third = await server.connect();
    const joined = await third.join(url.split('/').pop()!, 'Friend');
    expect(joined.self.role).toBe('guest');
    expect(joined.peers.map((p) => p.name).sort()).toEqual(['Guest', 'Host']);
  });

  it('announces screen sharing to the others with its stream id', async () => {
    const room = await server.createRoom();
    const host = await server.connect();
    const guest = await server.connect();
    const h = await host.join(room.access_token);
    await guest.join(room.guest_token);
    expect(await host.request({ type: 'screenshare-start', streamId: 'screen-1' })).toMatchObject({ type: 'ack' });
    expect(await guest.next('screenshare-started')).toEqual({ type: 'screenshare-started', from: h.self.id, streamId: 'screen-1' });
    host.send({ type: 'screenshare-stop' });
    expect(await guest.next('screenshare-stopped')).toEqual({ type: 'screenshare-stopped', from: h.self.id });
  });

  it('brings a settings update through the API into the ongoing call, and enforces it', async () => {
    const room = await server.createRoom();
    const host = await server.connect();
    const guest = await server.connect();
    const h = await host.join(room.access_token);
    await guest.join(room.guest_token);
    expect(await host.request({ type: 'screenshare-start', streamId: 'screen-1' })).toMatchObject({ type: 'ack' });
    await guest.next('screenshare-started');
    const res = await server.api('PUT', `/api/rooms/${room.token}`, {
      name: room.name,
      meeting_duration: room.meeting_duration,
      scheduled_at: room.scheduled_at,
      enable_chat: false,
      enable_screenshare: false,
    });
    expect(res.statusCode).toBe(200);
    expect((await host.next('settings')).settings).toMatchObject({ chat: false, screenshare: false });
    expect((await guest.next('settings')).settings).toMatchObject({ chat: false, screenshare: false });
    // The share in progress stops for everyone.
    expect(await guest.next('screenshare-stopped')).toMatchObject({ from: h.self.id });
    expect(await guest.request({ type: 'chat', text: 'still there?' })).toMatchObject({ type: 'error', code: 'chat-disabled' });
  });
});

describe('closing and deleting through the API', () => {
  it('ejects everyone at once with a notice, empties the room and refuses new joins', async () => {
    const room = await server.createRoom();
    const host = await server.connect();
    const guest = await server.connect();
    await host.join(room.access_token);
    await guest.join(room.guest_token);
    const res = await server.api('POST', `/api/rooms/${room.token}/close`);
    expect(res.statusCode).toBe(204);
    for (const client of [host, guest]) {
      expect(await client.next('room-closed')).toEqual({ type: 'room-closed', reason: 'closed' });
      expect((await client.closed).code).toBe(4001);
    }
    const fetched = await server.getRoom(room.token);
    expect(fetched.status).toBe('closed');
    // The ejection is recorded right after the sockets close (the event crosses nodes in a cluster).
    await eventually(async () => (await server.getRoom(room.token)).current_participants.length === 0, 10_000, 'participants left');
    const late = await server.connect();
    expect(await late.request({ type: 'join', joinToken: room.guest_token, displayName: 'Late' })).toMatchObject({
      type: 'error',
      code: 'room-closed',
    });
  });

  it('ejects everyone when the room is deleted', async () => {
    const room = await server.createRoom();
    const guest = await server.connect();
    await guest.join(room.guest_token);
    expect((await server.api('DELETE', `/api/rooms/${room.token}`)).statusCode).toBe(204);
    expect(await guest.next('room-closed')).toEqual({ type: 'room-closed', reason: 'deleted' });
    expect((await guest.closed).code).toBe(4001);
    const late = await server.connect();
    expect(await late.request({ type: 'join', joinToken: room.guest_token, displayName: 'Late' })).toMatchObject({ type: 'error', code: 'not-found' });
  });
});

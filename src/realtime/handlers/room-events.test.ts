// API room events applied to the calls of this node, over the real participation service.
import { describe, expect, it } from 'vitest';
import { CloseCode } from '../close-codes.js';
import { dispatch } from '../dispatch.js';
import type { RoomEventBus } from '../../domain/buses/room-event-bus.js';
import { wiredHubContext } from '../hub.js';
import { recordingConnection, useHubFixture } from '../hub.test-support.js';
import { createSession } from '../session.js';
import { handleJoin } from './join.js';
import { connectionClosed } from '../session-handle.js';
import { handleRoomEvent } from './room-events.js';

const hub = useHubFixture();

/** A guest waits with a host in the call, drops, and the waiting room is turned off while it is away. */
async function waitingGuestAwayWhenOpened() {
  const room = await hub().createRoom({ enable_waiting_room: true });
  const host = await hub().join(room.access_token, 'Host');
  const guest = await hub().knock(room.guest_token, 'Pat');
  connectionClosed(hub().ctx, guest.session);
  await hub().settle();
  const { name, meeting_duration, scheduled_at } = room;
  expect((await hub().api('PUT', `/api/rooms/${room.token}`, { name, meeting_duration, scheduled_at, enable_waiting_room: false })).statusCode).toBe(200);
  await handleRoomEvent(hub().ctx, { type: 'room-updated', roomId: host.session.participant!.roomId });
  return { room, host, guest };
}

describe('room-updated', () => {
  it('sends the new settings to everyone, enforces them from then on, and stops a share no longer allowed', async () => {
    const { room, host, guest } = await hub().hostAndGuest();
    await dispatch(hub().ctx, host.session, { type: 'screenshare-start', requestId: 's', streamId: 'screen' });
    const { name, meeting_duration, scheduled_at } = room;
    const res = await hub().api('PUT', `/api/rooms/${room.token}`, { name, meeting_duration, scheduled_at, enable_chat: false, enable_screenshare: false });
    expect(res.statusCode).toBe(200);
    await handleRoomEvent(hub().ctx, { type: 'room-updated', roomId: host.session.participant!.roomId });
    const expected = { type: 'settings', settings: { chat: false, screenshare: false, invites: true, audioIndicator: true } };
    expect(host.connection.all('settings')).toEqual([expected]);
    expect(guest.connection.all('settings')).toEqual([expected]);
    expect(guest.connection.all('screenshare-stopped')).toEqual([{ type: 'screenshare-stopped', from: host.joined.self.id }]);
    expect(host.session.sharing).toBeNull();
    await dispatch(hub().ctx, guest.session, { type: 'chat', requestId: 'c', text: 'still there?' });
    expect(guest.connection.sent.at(-1)).toMatchObject({ type: 'error', code: 'chat-disabled', requestId: 'c' });
  });

  it('lets in everyone waiting once the waiting room is turned off, and no one while it stays on', async () => {
    const room = await hub().createRoom({ enable_waiting_room: true });
    const host = await hub().join(room.access_token, 'Host');
    const first = await hub().knock(room.guest_token, 'Pat');
    const second = await hub().knock(room.guest_token, 'Sam');
    const roomId = host.session.participant!.roomId;
    const { name, meeting_duration, scheduled_at } = room;
    const put = (body: Record<string, unknown>) => hub().api('PUT', `/api/rooms/${room.token}`, { name, meeting_duration, scheduled_at, ...body });

    // Another setting changes: they keep waiting.
    expect((await put({ enable_waiting_room: true, enable_chat: false })).statusCode).toBe(200);
    await handleRoomEvent(hub().ctx, { type: 'room-updated', roomId });
    expect([first.session.state, second.session.state]).toEqual(['waiting', 'waiting']);
    expect(first.connection.all('settings')).toEqual([]);

    expect((await put({ enable_waiting_room: false })).statusCode).toBe(200);
    await handleRoomEvent(hub().ctx, { type: 'room-updated', roomId });
    await hub().settle();
    for (const guest of [first, second]) {
      expect(guest.session.state).toBe('joined');
      const [admitted] = guest.connection.all('admitted');
      expect(admitted).toMatchObject({ participantToken: guest.waiting.participantToken, self: guest.waiting.self, resumed: false });
      expect(admitted!.peers.map((p) => p.id)).toContain(host.joined.self.id);
    }
    // The one let in second sees the first in the call.
    expect(second.connection.all('admitted')[0]!.peers.map((p) => p.id)).toContain(first.waiting.self.id);
    expect(host.connection.all('waiting-ended')).toEqual([
      { type: 'waiting-ended', peerId: first.waiting.self.id, outcome: 'admitted' },
      { type: 'waiting-ended', peerId: second.waiting.self.id, outcome: 'admitted' },
    ]);
    expect(host.connection.all('peer-joined').map((m) => m.peer.id)).toEqual([first.waiting.self.id, second.waiting.self.id]);
    const api = await hub().getRoom(room.token);
    expect(api.waiting_participants).toEqual([]);
    expect(api.current_participants).toEqual(expect.arrayContaining([first.waiting.participantToken, second.waiting.participantToken]));
  });

  it('lets in someone who comes back to wait after the waiting room was turned off', async () => {
    const { room, host, guest } = await waitingGuestAwayWhenOpened();
    const back = await hub().tryJoin(room.guest_token, 'Pat', guest.waiting.participantToken);
    await hub().settle();
    expect(back.connection.sent.map((m) => m.type)).toEqual(['waiting', 'admitted']);
    expect(back.session.state).toBe('joined');
    expect(host.connection.all('peer-joined').map((m) => m.peer.id)).toEqual([guest.waiting.self.id]);
    expect((await hub().getRoom(room.token)).waiting_participants).toEqual([]);
  });

  it('keeps someone coming back to a full call waiting, and lists it to the hosts again', async () => {
    const { room, host, guest } = await waitingGuestAwayWhenOpened();
    // The call fills up meanwhile: the host and 7 guests.
    for (let i = 0; i < 7; i++) await hub().join(room.guest_token, `Guest ${i}`);
    const listedBefore = host.connection.all('participant-waiting').length;
    const back = await hub().tryJoin(room.guest_token, 'Pat', guest.waiting.participantToken);
    await hub().settle();
    expect(back.connection.sent.map((m) => m.type)).toEqual(['waiting']);
    expect(back.session.state).toBe('waiting');
    expect(host.connection.all('participant-waiting').slice(listedBefore)).toEqual([{ type: 'participant-waiting', peer: guest.waiting.self }]);
    expect((await hub().getRoom(room.token)).waiting_participants).toEqual([guest.waiting.participantToken]);
  });

  it('sends nothing to the calls of other rooms', async () => {
    const room = await hub().createRoom();
    const other = await hub().join((await hub().createRoom()).guest_token, 'Elsewhere');
    const host = await hub().join(room.access_token, 'Host');
    const { name, meeting_duration, scheduled_at } = room;
    expect((await hub().api('PUT', `/api/rooms/${room.token}`, { name, meeting_duration, scheduled_at, enable_chat: false })).statusCode).toBe(200);
    await handleRoomEvent(hub().ctx, { type: 'room-updated', roomId: host.session.participant!.roomId });
    expect(host.connection.all('settings')).toHaveLength(1);
    expect(other.connection.all('settings')).toEqual([]);
  });

  it("sends nothing when the call's settings did not change (a new name, the same PUT again)", async () => {
    const { room, host, guest } = await hub().hostAndGuest();
    const roomId = host.session.participant!.roomId;
    const { meeting_duration, scheduled_at } = room;
    expect((await hub().api('PUT', `/api/rooms/${room.token}`, { name: 'Renamed', meeting_duration, scheduled_at })).statusCode).toBe(200);
    await handleRoomEvent(hub().ctx, { type: 'room-updated', roomId });
    expect([...host.connection.all('settings'), ...guest.connection.all('settings')]).toEqual([]);
    expect((await hub().api('PUT', `/api/rooms/${room.token}`, { name: 'Renamed', meeting_duration, scheduled_at, enable_invites: false })).statusCode).toBe(200);
    await handleRoomEvent(hub().ctx, { type: 'room-updated', roomId });
    await handleRoomEvent(hub().ctx, { type: 'room-updated', roomId });
    expect(host.connection.all('settings')).toEqual([{ type: 'settings', settings: { chat: true, screenshare: true, invites: false, audioIndicator: true } }]);
  });
});

describe('a bus that forwards only the updates of rooms someone is in (RoomEventBus.interest)', () => {
  it("is told when a room's first participant arrives and its last one leaves, and the settings are read again once it has heard", async () => {
    const told: [number, boolean][] = [];
    let heard = () => {};
    const events: RoomEventBus = {
      publish: () => {},
      subscribe: () => () => {},
      interest(roomId, someone) {
        told.push([roomId, someone]);
        return someone ? new Promise<void>((resolve) => (heard = resolve)) : Promise.resolve();
      },
    };
    const ctx = wiredHubContext({ ...hub().ctx.options, events });
    const room = await hub().createRoom();
    const host = recordingConnection();
    const session = createSession(host, hub().clock);
    ctx.open.add(session);
    await handleJoin(ctx, session, { type: 'join', requestId: 'j', joinToken: room.access_token, displayName: 'Host' });
    const roomId = session.participant!.roomId;
    expect(told).toEqual([[roomId, true]]);

    // Changed before the bus heard of the room: that update was never forwarded.
    const { name, meeting_duration, scheduled_at } = room;
    expect((await hub().api('PUT', `/api/rooms/${room.token}`, { name, meeting_duration, scheduled_at, enable_chat: false })).statusCode).toBe(200);
    expect(host.all('settings')).toEqual([]);
    heard();
    await ctx.inFlight.settled();
    expect(host.all('settings')).toEqual([{ type: 'settings', settings: { chat: false, screenshare: true, invites: true, audioIndicator: true } }]);

    connectionClosed(ctx, session);
    await ctx.inFlight.settled();
    expect(told).toEqual([
      [roomId, true],
      [roomId, false],
    ]);
  });
});

describe('room-closed and room-deleted', () => {
  it('tell everyone of the room why, close their sockets with 4001 and record their leaves', async () => {
    const { room, host, guest } = await hub().hostAndGuest();
    const other = await hub().join((await hub().createRoom()).guest_token, 'Elsewhere');
    const roomId = host.session.participant!.roomId;
    expect((await hub().api('POST', `/api/rooms/${room.token}/close`)).statusCode).toBe(204);
    await handleRoomEvent(hub().ctx, { type: 'room-closed', roomId });
    for (const p of [host, guest]) {
      expect(p.connection.sent.at(-1)).toEqual({ type: 'room-closed', reason: 'closed' });
      expect(p.connection.closes).toEqual([{ code: CloseCode.roomClosed, reason: 'room closed' }]);
    }
    expect(other.connection.closes).toEqual([]);
    expect(hub().ctx.rooms.get(roomId)).toBeUndefined();
    expect((await hub().getRoom(room.token)).current_participants).toEqual([]);
  });

  it('give the reason `deleted` for a deleted room', async () => {
    const room = await hub().createRoom();
    const guest = await hub().join(room.guest_token, 'Guest');
    await handleRoomEvent(hub().ctx, { type: 'room-deleted', roomId: guest.session.participant!.roomId });
    expect(guest.connection.sent.at(-1)).toEqual({ type: 'room-closed', reason: 'deleted' });
    expect(guest.connection.closes).toEqual([{ code: CloseCode.roomClosed, reason: 'room deleted' }]);
    // The row is still there (only the event was sent): the leave was recorded by the ejection itself.
    expect((await hub().getRoom(room.token)).current_participants).toEqual([]);
  });

  it('eject a join that lands after the close event (it raced with the close in the database)', async () => {
    const room = await hub().createRoom();
    const roomId = await hub().roomIdOf(room.guest_token);
    // Nobody of the room is on this node yet; the database still lets the join in.
    await handleRoomEvent(hub().ctx, { type: 'room-closed', roomId });
    const late = hub().connect();
    await dispatch(hub().ctx, late.session, { type: 'join', requestId: 'late', joinToken: room.guest_token, displayName: 'Late' });
    expect(late.connection.sent).toEqual([{ type: 'room-closed', reason: 'closed' }]);
    expect(late.connection.closes).toEqual([{ code: CloseCode.roomClosed, reason: 'room closed' }]);
    expect((await hub().getRoom(room.token)).current_participants).toEqual([]);
  });
});

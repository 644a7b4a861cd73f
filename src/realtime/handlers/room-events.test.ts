// API room events applied to the calls of this node, over the real participation service.
import { describe, expect, it } from 'vitest';
import { CloseCode } from '../close-codes.js';
import { dispatch } from '../dispatch.js';
import { useHubFixture } from '../hub.test-support.js';
import { handleRoomEvent } from './room-events.js';

const hub = useHubFixture();

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

  it('sends nothing to the calls of other rooms', async () => {
    const room = await hub().createRoom();
    const other = await hub().join((await hub().createRoom()).guest_token, 'Elsewhere');
    const host = await hub().join(room.access_token, 'Host');
    await handleRoomEvent(hub().ctx, { type: 'room-updated', roomId: host.session.participant!.roomId });
    expect(host.connection.all('settings')).toHaveLength(1);
    expect(other.connection.all('settings')).toEqual([]);
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

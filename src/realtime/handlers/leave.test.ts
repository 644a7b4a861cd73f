// The leave handler over the real participation service.
import { describe, expect, it } from 'vitest';
import { CloseCode } from '../close-codes.js';
import { useHubFixture } from '../hub.test-support.js';
import { connectionClosed } from '../session-handle.js';
import { leaveCall } from './leave.js';

const hub = useHubFixture();

describe('leave', () => {
  it('records the leave, tells the others once, replies `left`, then closes with 1000', async () => {
    const { room, host, guest } = await hub().hostAndGuest();
    const call = { participant: guest.session.participant!, settings: hub().ctx.rooms.get(guest.session.participant!.roomId)!.settings };
    await leaveCall(hub().ctx, guest.session, { type: 'leave', requestId: 'bye' }, call);
    expect(guest.connection.sent.at(-1)).toEqual({ type: 'left', requestId: 'bye' });
    expect(guest.connection.closes).toEqual([{ code: CloseCode.normal, reason: 'left' }]);
    expect(guest.connection.all('peer-left')).toEqual([]);
    expect(host.connection.all('peer-left')).toEqual([{ type: 'peer-left', peerId: guest.joined.self.id }]);
    expect((await hub().getRoom(room.token)).current_participants).toEqual([host.joined.participantToken]);
    // The socket's close that follows is not a drop: no second leave, no second peer-left.
    connectionClosed(hub().ctx, guest.session);
    await hub().settle();
    expect(host.connection.all('peer-left')).toHaveLength(1);
    expect(hub().ctx.rooms.get(host.session.participant!.roomId)?.sessions.has(guest.session)).toBe(false);
  });
});

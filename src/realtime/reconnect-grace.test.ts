// A dropped participant is held for the reconnect grace: still in the call
// for the API and the others, back without a leave when it resumes, gone when
// it does not (src/realtime/departures.ts).
import { describe, expect, it, vi } from 'vitest';
import { waitFor } from '../../test/helpers/wait.js';
import { dispatch } from './dispatch.js';
import { useHubFixture } from './hub.test-support.js';
import { connectionClosed } from './session-handle.js';

const GRACE_MS = 300;
const hub = useHubFixture({ reconnectGraceMs: GRACE_MS });

describe('the reconnect grace', () => {
  it('keeps a dropped guest in current_participants and tells the host it is reconnecting, not gone', async () => {
    const { room, host, guest } = await hub().hostAndGuest();
    // The grace runs on timers of the test's own: on the real clock a loaded machine's stall (1-3 s)
    // lets the 300 ms pass before the checks and the resume below, and the guest is gone.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      connectionClosed(hub().ctx, guest.session);
      await hub().settle();
      expect(host.connection.all('peer-reconnecting')).toEqual([{ type: 'peer-reconnecting', peerId: guest.joined.self.id }]);
      expect(host.connection.all('peer-left')).toEqual([]);
      expect((await hub().getRoom(room.token)).current_participants).toContain(guest.joined.participantToken);

      // Back from another address within the grace: the same participant, and no leave ever.
      const back = await hub().join(room.guest_token, 'Guest', guest.joined.participantToken);
      expect(back.joined.resumed).toBe(true);
      expect(back.joined.self.id).toBe(guest.joined.self.id);
      await vi.advanceTimersByTimeAsync(GRACE_MS * 2); // the grace is over: no leave comes
      await hub().settle();
      expect(host.connection.all('peer-left')).toEqual([]);
      expect(host.connection.all('peer-joined').map((m) => m.peer.id)).toContain(guest.joined.self.id);
      expect((await hub().getRoom(room.token)).current_participants).toEqual([host.joined.participantToken, guest.joined.participantToken]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('records the leave when the grace runs out without a resume', async () => {
    const { room, host, guest } = await hub().hostAndGuest();
    connectionClosed(hub().ctx, guest.session);
    await waitFor(() => host.connection.all('peer-left').length > 0, 15_000, 'peer-left after the grace');
    expect(host.connection.all('peer-left')).toEqual([{ type: 'peer-left', peerId: guest.joined.self.id }]);
    expect((await hub().getRoom(room.token)).current_participants).toEqual([host.joined.participantToken]);
  });

  it('records the held leave at once when the same browser comes back as someone new', async () => {
    const { room, host, guest } = await hub().hostAndGuest();
    connectionClosed(hub().ctx, guest.session);
    // The guest's participant token through the host's link: not a resume (roles differ), a new participant.
    const other = await hub().join(room.access_token, 'Host again', guest.joined.participantToken);
    expect(other.joined.resumed).toBe(false);
    await hub().settle();
    expect(host.connection.all('peer-left').map((m) => m.peerId)).toEqual([guest.joined.self.id]);
    expect((await hub().getRoom(room.token)).current_participants).not.toContain(guest.joined.participantToken);
  });

  it('leaves everyone held when the node stops', async () => {
    const { room, host, guest } = await hub().hostAndGuest();
    connectionClosed(hub().ctx, guest.session);
    await hub().ctx.departures.leaveAllHeld();
    expect(host.connection.all('peer-left').map((m) => m.peerId)).toEqual([guest.joined.self.id]);
    expect((await hub().getRoom(room.token)).current_participants).toEqual([host.joined.participantToken]);
  });

  it('answers a ping with a pong before and after joining', async () => {
    const { session, connection } = hub().connect();
    await dispatch(hub().ctx, session, { type: 'ping' });
    expect(connection.sent).toEqual([{ type: 'pong' }]);
    const { guest } = await hub().hostAndGuest();
    await dispatch(hub().ctx, guest.session, { type: 'ping' });
    expect(guest.connection.sent.at(-1)).toEqual({ type: 'pong' });
  });
});

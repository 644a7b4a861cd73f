// The graceful stop, without sockets, over the real participation service.
import { describe, expect, it } from 'vitest';
import { CloseCode } from './close-codes.js';
import { recordingConnection, useHubFixture } from './hub.test-support.js';
import { openSession } from './session-handle.js';
import { shutdownHub } from './shutdown.js';

const hub = useHubFixture();

describe('shutdown', () => {
  it('closes every connection with 1001, joined or not, records the leaves, and ends a join that lands afterwards', async () => {
    const room = await hub().createRoom();
    const host = await hub().join(room.access_token, 'Host');
    const onJoinScreen = hub().connect();
    const inFlight = recordingConnection();
    const handle = openSession(hub().ctx, inFlight);
    handle.onFrame(JSON.stringify({ type: 'join', requestId: 'j', joinToken: room.guest_token, displayName: 'Late' }));
    await shutdownHub(hub().ctx);
    const goingAway = [{ code: CloseCode.goingAway, reason: 'server restarting' }];
    expect(host.connection.closes).toEqual(goingAway);
    expect(onJoinScreen.connection.closes).toEqual(goingAway);
    expect(inFlight.closes).toEqual(goingAway);
    // The join landed after the stop began: no reply, and its participant was recorded as left.
    expect(inFlight.all('joined')).toEqual([]);
    expect((await hub().getRoom(room.token)).current_participants).toEqual([]);
    expect(hub().ctx.rooms.sessionCount).toBe(0);
  });
});

// Relay handlers over the real participation service: who receives what.
import { describe, expect, it } from 'vitest';
import { useHubFixture } from '../hub.test-support.js';
import type { InCall } from './call-handler.js';
import { relayMediaState, relaySignal, startScreenshare, stopScreenshare } from './relay.js';

const hub = useHubFixture();

/** A call of three and a participant of another room. */
async function callOfThree(overrides: Record<string, unknown> = {}) {
  const room = await hub().createRoom(overrides);
  const a = await hub().join(room.access_token, 'A');
  const b = await hub().join(room.guest_token, 'B');
  const c = await hub().join(room.guest_token, 'C');
  const elsewhere = await hub().join((await hub().createRoom()).guest_token, 'D');
  for (const p of [a, b, c, elsewhere]) p.connection.sent.length = 0;
  const inCall = (p: typeof a): InCall => ({ participant: p.session.participant!, settings: hub().ctx.rooms.get(p.session.participant!.roomId)!.settings });
  return { a, b, c, elsewhere, inCall };
}

describe('signal', () => {
  it('reaches the addressed peer of the same room only, stamped with the sender', async () => {
    const { a, b, c, elsewhere, inCall } = await callOfThree();
    const data = { description: { type: 'offer', sdp: 'v=0' } };
    relaySignal(hub().ctx, a.session, { type: 'signal', to: b.joined.self.id, data }, inCall(a));
    expect(b.connection.sent).toEqual([{ type: 'signal', from: a.joined.self.id, data }]);
    expect(c.connection.sent).toEqual([]);
    expect(a.connection.sent).toEqual([]);
    expect(elsewhere.connection.sent).toEqual([]);
  });

  it('addressed to a peer of another room, reaches nobody', async () => {
    const { a, b, c, elsewhere, inCall } = await callOfThree();
    relaySignal(hub().ctx, a.session, { type: 'signal', to: elsewhere.joined.self.id, data: { candidate: null } }, inCall(a));
    for (const p of [a, b, c, elsewhere]) expect(p.connection.sent).toEqual([]);
  });
});

describe('media-state', () => {
  it('reaches everyone else in the room', async () => {
    const { a, b, c, elsewhere, inCall } = await callOfThree();
    relayMediaState(hub().ctx, b.session, { type: 'media-state', audio: false, video: true }, inCall(b));
    const expected = [{ type: 'media-state', from: b.joined.self.id, audio: false, video: true }];
    expect(a.connection.sent).toEqual(expected);
    expect(c.connection.sent).toEqual(expected);
    expect(b.connection.sent).toEqual([]);
    expect(elsewhere.connection.sent).toEqual([]);
  });
});

describe('screen share', () => {
  it('announces a share to the others and acknowledges it; a stop is announced once', async () => {
    const { a, b, inCall } = await callOfThree();
    startScreenshare(hub().ctx, a.session, { type: 'screenshare-start', requestId: 's1', streamId: 'screen-1' }, inCall(a));
    expect(a.connection.sent).toEqual([{ type: 'ack', requestId: 's1' }]);
    expect(b.connection.sent).toEqual([{ type: 'screenshare-started', from: a.joined.self.id, streamId: 'screen-1' }]);
    expect(a.session.sharing).toBe('screen-1');
    stopScreenshare(hub().ctx, a.session, { type: 'screenshare-stop' }, inCall(a));
    stopScreenshare(hub().ctx, a.session, { type: 'screenshare-stop' }, inCall(a));
    expect(b.connection.all('screenshare-stopped')).toEqual([{ type: 'screenshare-stopped', from: a.joined.self.id }]);
    expect(a.session.sharing).toBeNull();
  });

  it('announces no stop of a share that never started', async () => {
    const { a, b, inCall } = await callOfThree();
    stopScreenshare(hub().ctx, a.session, { type: 'screenshare-stop' }, inCall(a));
    expect(b.connection.sent).toEqual([]);
  });

  it('refuses a share when the room switched screen sharing off, and tells nobody', async () => {
    const { a, b, inCall } = await callOfThree({ enable_screenshare: false });
    startScreenshare(hub().ctx, a.session, { type: 'screenshare-start', requestId: 's2', streamId: 'screen-2' }, inCall(a));
    expect(a.connection.sent).toEqual([
      { type: 'error', code: 'screenshare-disabled', message: 'Screen sharing is switched off for this room', requestId: 's2' },
    ]);
    expect(b.connection.sent).toEqual([]);
    expect(a.session.sharing).toBeNull();
  });
});

// The dispatch in front of the handlers: who may send what.
import { describe, expect, it } from 'vitest';
import { callHandlers, dispatch } from './dispatch.js';
import { useHubFixture } from './hub.test-support.js';

const hub = useHubFixture();

describe('dispatch', () => {
  it('has a handler for every message type of a joined session', () => {
    expect(Object.keys(callHandlers).sort()).toEqual([
      'admit',
      'chat',
      'deny',
      'invite-create',
      'leave',
      'media-state',
      'network-report',
      'recording-consent',
      'recording-start',
      'recording-stop',
      'remove',
      'screenshare-start',
      'screenshare-stop',
      'sfu-answer',
      'sfu-candidate',
      'sfu-layer',
      'sfu-leave',
      'sfu-publish',
      'sfu-subscribe',
      'sfu-unpublish',
      'signal',
    ]);
  });

  it('refuses every message but join before joining: requests with their requestId, notifications without', async () => {
    const { session, connection } = hub().connect();
    await dispatch(hub().ctx, session, { type: 'leave', requestId: 'l1' });
    await dispatch(hub().ctx, session, { type: 'signal', to: 'someone', data: { candidate: null } });
    expect(connection.sent).toEqual([
      { type: 'error', code: 'not-joined', message: 'Send join first', requestId: 'l1' },
      { type: 'error', code: 'not-joined', message: 'Send join first' },
    ]);
    expect(connection.closes).toEqual([]);
  });

  it('refuses a second join on a joined connection', async () => {
    const room = await hub().createRoom();
    const { session, connection } = await hub().join(room.guest_token, 'Pat');
    await dispatch(hub().ctx, session, { type: 'join', requestId: 'again', joinToken: room.guest_token, displayName: 'Pat' });
    expect(connection.sent.at(-1)).toEqual({ type: 'error', code: 'already-joined', message: 'This connection has joined already', requestId: 'again' });
    expect(session.state).toBe('joined');
  });

  it('refuses a joined session whose room this node no longer holds', async () => {
    const room = await hub().createRoom();
    const { session, connection } = await hub().join(room.guest_token, 'Pat');
    hub().ctx.rooms.leave(session);
    await dispatch(hub().ctx, session, { type: 'chat', requestId: 'c', text: 'hello?' });
    expect(connection.sent.at(-1)).toEqual({ type: 'error', code: 'not-joined', message: 'Send join first', requestId: 'c' });
  });

  it('hands a joined session message to its handler with the sender and the room settings', async () => {
    const room = await hub().createRoom({ enable_screenshare: false });
    const { session, connection } = await hub().join(room.guest_token, 'Pat');
    await dispatch(hub().ctx, session, { type: 'screenshare-start', requestId: 's', streamId: 'x' });
    expect(connection.sent.at(-1)).toMatchObject({ type: 'error', code: 'screenshare-disabled', requestId: 's' });
  });
});

// A connection's frames and close, without a socket: rate limits, parsing,
// the join timeout, and a close that is a drop.
import { describe, expect, it, vi } from 'vitest';
import { CloseCode } from './close-codes.js';
import { recordingConnection, useHubFixture } from './hub.test-support.js';
import { openSession } from './session-handle.js';
import { eventually } from '../../test/helpers/wait.js';

const hub = useHubFixture();

function open() {
  const connection = recordingConnection();
  const handle = openSession(hub().ctx, connection);
  return { connection, handle };
}

describe('frames', () => {
  it('answers a malformed frame and an unknown type, and keeps the connection', async () => {
    const { connection, handle } = open();
    handle.onFrame('not json');
    handle.onFrame(JSON.stringify({ type: 'dance', requestId: 'd' }));
    await hub().settle();
    expect(connection.sent).toEqual([
      { type: 'error', code: 'bad-request', message: 'A frame must be one JSON object' },
      { type: 'error', code: 'unknown-type', message: 'Unknown message type "dance"', requestId: 'd' },
    ]);
    expect(connection.closes).toEqual([]);
    handle.onClose();
  });

  it('refuses frames beyond the burst with rate-limited (the request keeps its requestId), then closes a flood with 1008', async () => {
    const { connection, handle } = open();
    const frame = JSON.stringify({ type: 'leave', requestId: 'x' });
    for (let i = 0; i < 400; i++) handle.onFrame(frame);
    await hub().settle();
    expect(connection.all('error').every((m) => m.code === 'not-joined')).toBe(true);
    handle.onFrame(frame);
    expect(connection.sent.at(-1)).toEqual({ type: 'error', code: 'rate-limited', message: 'Too many messages; slow down', requestId: 'x' });
    for (let i = 0; i < 99; i++) handle.onFrame(frame);
    expect(connection.closes).toEqual([]);
    handle.onFrame(frame);
    expect(connection.closes).toEqual([{ code: CloseCode.policy, reason: 'too many messages' }]);
    const sent = connection.sent.length;
    handle.onFrame(frame); // gone: ignored
    expect(connection.sent).toHaveLength(sent);
    handle.onClose();
  });

  it('reports well-formed frames and open connections to the observer', async () => {
    const observe = { message: vi.fn(), connections: vi.fn() };
    hub().ctx.options.observe = observe;
    try {
      const { handle } = open();
      handle.onFrame(JSON.stringify({ type: 'media-state', audio: true, video: true }));
      handle.onFrame('{');
      handle.onClose();
      expect(observe.message.mock.calls).toEqual([['media-state']]);
      expect(observe.connections.mock.calls).toEqual([[1], [-1]]);
    } finally {
      delete hub().ctx.options.observe;
    }
  });
});

describe('join timeout', () => {
  it('closes a connection that has not joined in time (4003), not one that has', async () => {
    hub().ctx.options.joinTimeoutMs = 100;
    try {
      const room = await hub().createRoom();
      const idle = open();
      const joining = open();
      joining.handle.onFrame(JSON.stringify({ type: 'join', requestId: 'j', joinToken: room.guest_token, displayName: 'Pat' }));
      await hub().settle();
      expect(joining.connection.all('joined')).toHaveLength(1);
      // Waits for the close itself (100 ms on a quiet machine), not for a time it may take.
      await eventually(() => idle.connection.closes.length > 0, 15_000, 'the idle connection closed');
      expect(idle.connection.closes).toEqual([{ code: CloseCode.joinTimeout, reason: 'no join' }]);
      expect(joining.connection.closes).toEqual([]);
      idle.handle.onClose();
      joining.handle.onClose();
    } finally {
      delete hub().ctx.options.joinTimeoutMs;
    }
  });
});

describe('close', () => {
  it('of a joined connection is a drop: the leave is recorded and the room hears peer-left', async () => {
    const room = await hub().createRoom();
    const host = await hub().join(room.access_token, 'Host');
    const guest = open();
    guest.handle.onFrame(JSON.stringify({ type: 'join', requestId: 'j', joinToken: room.guest_token, displayName: 'Pat' }));
    await hub().settle();
    const [joined] = guest.connection.all('joined');
    guest.handle.onClose();
    await hub().settle();
    expect(host.connection.all('peer-left')).toEqual([{ type: 'peer-left', peerId: joined!.self.id }]);
    expect((await hub().getRoom(room.token)).current_participants).toEqual([host.joined.participantToken]);
    expect([...hub().ctx.open].some((s) => s.connection === guest.connection)).toBe(false);
  });
});

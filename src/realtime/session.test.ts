import { describe, expect, it, vi } from 'vitest';
import { manualClock } from '../../test/helpers/app.js';
import { recordingConnection } from './hub.test-support.js';
import { createSession, endSession, fail, reply } from './session.js';

describe('session', () => {
  it('starts new, with no participant, and an id of its own', () => {
    const clock = manualClock();
    const a = createSession(recordingConnection(), clock);
    const b = createSession(recordingConnection(), clock);
    expect(a).toMatchObject({ state: 'new', participant: null, sharing: null, ended: false, failedJoins: 0 });
    expect(a.id).not.toBe(b.id);
  });

  it('allows bursts of 400 frames (50/s), 100 refusals (10/s) and 10 chat messages (1/s)', () => {
    const clock = manualClock();
    const session = createSession(recordingConnection(), clock);
    const count = (allow: () => boolean) => {
      let n = 0;
      while (allow() && n < 10_000) n++;
      return n;
    };
    expect(count(session.allowFrame)).toBe(400);
    expect(count(session.allowRefusal)).toBe(100);
    expect(count(session.allowChat)).toBe(10);
    clock.advance(1000);
    expect(count(session.allowFrame)).toBe(50);
    expect(count(session.allowRefusal)).toBe(10);
    expect(count(session.allowChat)).toBe(1);
  });

  it('sends a session that is gone only `room-closed` and `left`, which explain its end', () => {
    const connection = recordingConnection();
    const session = createSession(connection, manualClock());
    reply(session, { type: 'ack', requestId: 'a' });
    session.state = 'gone';
    reply(session, { type: 'ack', requestId: 'b' });
    reply(session, { type: 'peer-left', peerId: 'p' });
    reply(session, { type: 'room-closed', reason: 'closed' });
    reply(session, { type: 'left', requestId: 'c' });
    expect(connection.sent.map((m) => m.type)).toEqual(['ack', 'room-closed', 'left']);
  });

  it('answers a failed request with its requestId and a failed notification without one', () => {
    const connection = recordingConnection();
    const session = createSession(connection, manualClock());
    fail(session, 'chat-disabled', 'off', 'r1');
    fail(session, 'bad-request', 'bad');
    expect(connection.sent).toEqual([
      { type: 'error', code: 'chat-disabled', message: 'off', requestId: 'r1' },
      { type: 'error', code: 'bad-request', message: 'bad' },
    ]);
  });

  it('is ended once: leaves its room, is gone, and its socket closes with the code given', () => {
    const connection = recordingConnection();
    const session = createSession(connection, manualClock());
    const rooms = { leave: vi.fn() };
    endSession(session, 4001, 'room closed', rooms);
    endSession(session, 1000, 'left', rooms);
    expect(session).toMatchObject({ state: 'gone', ended: true });
    expect(rooms.leave).toHaveBeenCalledTimes(1);
    expect(rooms.leave).toHaveBeenCalledWith(session);
    expect(connection.closes).toEqual([{ code: 4001, reason: 'room closed' }]);
  });
});

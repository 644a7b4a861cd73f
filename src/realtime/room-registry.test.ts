// The registry over the in-process bus, with sessions that record what they
// were sent: no database, no sockets.
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { manualClock } from '../../test/helpers/app.js';
import { createLocalSignalBus } from '../domain/buses/local-signal-bus.js';
import type { SignalBus } from '../domain/buses/signal-bus.js';
import { CloseCode } from './close-codes.js';
import { recordingConnection, registryMember } from './hub.test-support.js';
import type { RoomSettings } from '../shared/protocol.js';
import { createRoomRegistry } from './room-registry.js';
import { createSession } from './session.js';

const settings: RoomSettings = { chat: true, screenshare: true, invites: true, audioIndicator: true };
const silentLog = { warn: vi.fn(), debug: vi.fn() } as unknown as FastifyBaseLogger;
const clock = manualClock();

function setup(bus: SignalBus = createLocalSignalBus(), log = silentLog) {
  const registry = createRoomRegistry({ bus, log, onDecision: () => {} });
  /** A joined session of `roomId` with peer id `peerId`, entered into the registry. */
  const member = (roomId: number, peerId: string) => registryMember(registry, roomId, peerId, settings, clock);
  return { registry, member, bus };
}

describe('room registry', () => {
  it('delivers a message for everyone to every joined session of the room on this node but the sender', () => {
    const { registry, member } = setup();
    const a = member(1, 'a');
    const b = member(1, 'b');
    const c = member(1, 'c');
    const otherRoom = member(2, 'd');
    registry.publish(a.session, null, { type: 'media-state', from: 'a', audio: true, video: false });
    expect(a.connection.sent).toEqual([]);
    expect(b.connection.sent).toEqual([{ type: 'media-state', from: 'a', audio: true, video: false }]);
    expect(c.connection.sent).toEqual(b.connection.sent);
    expect(otherRoom.connection.sent).toEqual([]);
  });

  it('delivers a message addressed to a peer to that peer only', () => {
    const { registry, member } = setup();
    const a = member(1, 'a');
    const b = member(1, 'b');
    const c = member(1, 'c');
    registry.publish(a.session, 'c', { type: 'signal', from: 'a', data: { candidate: null } });
    expect(c.connection.sent).toEqual([{ type: 'signal', from: 'a', data: { candidate: null } }]);
    expect(b.connection.sent).toEqual([]);
    expect(a.connection.sent).toEqual([]);
  });

  it('skips sessions of the room that are no longer joined (leaving)', () => {
    const { registry, member } = setup();
    const a = member(1, 'a');
    const leaving = member(1, 'b');
    leaving.session.state = 'gone';
    registry.publish(a.session, null, { type: 'peer-left', peerId: 'x' });
    expect(leaving.connection.sent).toEqual([]);
  });

  it('ends the addressed session quietly (4002) on session-replaced instead of sending it', () => {
    const { registry, member } = setup();
    const resumed = member(1, 'a');
    const old = member(1, 'a');
    const other = member(1, 'b');
    registry.publish(resumed.session, 'a', { type: 'session-replaced' });
    expect(old.connection.sent).toEqual([]);
    expect(old.connection.closes).toEqual([{ code: CloseCode.replaced, reason: 'resumed on another connection' }]);
    expect(old.session).toMatchObject({ state: 'gone', ended: true });
    expect(resumed.connection.closes).toEqual([]);
    expect(other.connection.closes).toEqual([]);
    expect(registry.get(1)?.sessions.has(old.session)).toBe(false);
    expect(registry.sessionCount).toBe(2);
  });

  it('subscribes to a room once, and unsubscribes when its last session here leaves', () => {
    const local = createLocalSignalBus();
    const unsubscribed = vi.fn();
    const bus: SignalBus = {
      publish: local.publish,
      subscribe: vi.fn((roomId, handler) => {
        const off = local.subscribe(roomId, handler);
        return () => {
          unsubscribed();
          off();
        };
      }),
    };
    const { registry, member } = setup(bus);
    const a = member(1, 'a');
    const b = member(1, 'b');
    expect(bus.subscribe).toHaveBeenCalledTimes(1);
    expect(registry.sessionCount).toBe(2);
    registry.leave(a.session);
    expect(unsubscribed).not.toHaveBeenCalled();
    registry.leave(b.session);
    expect(unsubscribed).toHaveBeenCalledTimes(1);
    expect(registry.get(1)).toBeUndefined();
    expect(registry.sessionCount).toBe(0);
    // Nothing of the room reaches this node any more.
    local.publish(1, { fromSession: 'x', to: null, message: { type: 'peer-left', peerId: 'z' } });
    expect(b.connection.sent).toEqual([]);
  });

  it('keeps the settings of the latest join of a room', () => {
    const { registry, member } = setup();
    member(1, 'a');
    const late = createSession(recordingConnection(), clock);
    late.participant = { token: 't', peerId: 'b', roomId: 1, role: 'guest', name: 'b', admission: 'admitted' };
    registry.enter(1, late, { ...settings, chat: false });
    expect(registry.get(1)?.settings.chat).toBe(false);
  });

  it('announces everyone joined here to their own room again (peer-present), never to themselves or another room', async () => {
    const { registry, member } = setup();
    const a = member(1, 'a');
    const b = member(1, 'b');
    const c = member(2, 'c');
    const joining = member(1, 'd');
    joining.session.state = 'joining';
    registry.announceAll();
    await new Promise((resolve) => setImmediate(resolve));
    const present = (id: string) => ({ type: 'peer-present', peer: { id, name: id, role: 'guest' } });
    expect(a.connection.sent).toEqual([present('b')]);
    expect(b.connection.sent).toEqual([present('a')]);
    expect(c.connection.sent).toEqual([]);
  });

  it('publishes nothing for a session without a participant', async () => {
    const { registry, member } = setup();
    const b = member(1, 'b');
    const anonymous = createSession(recordingConnection(), clock);
    expect(await registry.publish(anonymous, null, { type: 'peer-left', peerId: 'x' })).toBe(false);
    expect(b.connection.sent).toEqual([]);
  });

  it('when the bus refuses (Redis away): resolves false without throwing, and still reaches this node\'s sessions unless told not to', async () => {
    const failing: SignalBus = { publish: () => Promise.reject(new Error('redis down')), subscribe: () => () => {} };
    const { registry, member } = setup(failing);
    const a = member(1, 'a');
    const b = member(1, 'b');
    const elsewhere = member(2, 'c');
    expect(await registry.publish(a.session, null, { type: 'media-state', from: 'a', audio: false, video: true })).toBe(false);
    expect(b.connection.sent).toEqual([{ type: 'media-state', from: 'a', audio: false, video: true }]);
    expect(a.connection.sent).toEqual([]);
    expect(elsewhere.connection.sent).toEqual([]);
    expect(await registry.publish(a.session, null, { type: 'peer-left', peerId: 'a' }, { localFallback: false })).toBe(false);
    expect(b.connection.sent).toHaveLength(1);
  });
});

// Departures over the real participation service, and with one that fails.
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { manualClock } from '../../test/helpers/app.js';
import type { ParticipationService } from '../domain/participation/participation.service.js';
import { createDepartures } from './departures.js';
import { recordingConnection, useHubFixture } from './hub.test-support.js';
import { createInFlight } from './in-flight.js';
import { createSession } from './session.js';

const hub = useHubFixture();

describe('departures', () => {
  it('records a leave and tells the room once; a second leave of the same participant tells nobody', async () => {
    const { room, host, guest } = await hub().hostAndGuest();
    await hub().ctx.departures.markLeft(guest.session.participant!, guest.session);
    await hub().ctx.departures.markLeft(guest.session.participant!, guest.session);
    expect(host.connection.all('peer-left')).toEqual([{ type: 'peer-left', peerId: guest.joined.self.id }]);
    expect((await hub().getRoom(room.token)).current_participants).toEqual([host.joined.participantToken]);
  });

  it('keeps a leave in flight findable by participant token until it is recorded, so that a resume can wait for it', async () => {
    const room = await hub().createRoom();
    const guest = await hub().join(room.guest_token, 'Guest');
    const token = guest.joined.participantToken;
    expect(hub().ctx.departures.inFlightFor(token)).toBeUndefined();
    const leaving = hub().ctx.departures.markLeft(guest.session.participant!, guest.session);
    const pending = hub().ctx.departures.inFlightFor(token);
    expect(pending).toBeInstanceOf(Promise);
    await pending;
    expect((await hub().getRoom(room.token)).current_participants).toEqual([]);
    await leaving;
    expect(hub().ctx.departures.inFlightFor(token)).toBeUndefined();
  });

  it('logs a leave the database refused instead of rejecting, and tells nobody', async () => {
    const warn = vi.fn();
    const publish = vi.fn();
    const participation = { leave: () => Promise.reject(new Error('database down')) } as unknown as ParticipationService;
    const departures = createDepartures({ participation, rooms: { publish }, inFlight: createInFlight(), log: { warn } as unknown as FastifyBaseLogger, reconnectGraceMs: 0 });
    const session = createSession(recordingConnection(), manualClock());
    const participant = { token: 't', peerId: 'p', roomId: 1, role: 'guest' as const, name: 'n', admission: 'admitted' as const };
    await expect(departures.markLeft(participant, session)).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(publish).not.toHaveBeenCalled();
    // A resume waiting for it is not failed by it either.
    expect(departures.inFlightFor('t')).toBeUndefined();
  });
});

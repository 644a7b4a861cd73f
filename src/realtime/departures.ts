// A participant leaving the call, whatever the cause (leave, drop, ejection,
// stop): the database records it, and the room hears `peer-left` unless
// another connection already took the participant over.
import type { FastifyBaseLogger } from 'fastify';
import type { Participant, ParticipationService } from '../domain/participation/participation.service.js';
import type { InFlight } from './in-flight.js';
import type { RoomRegistry } from './room-registry.js';
import type { Session } from './session.js';

export function createDepartures({
  participation,
  rooms,
  inFlight,
  log,
}: {
  participation: ParticipationService;
  rooms: Pick<RoomRegistry, 'publish'>;
  inFlight: InFlight;
  log: FastifyBaseLogger;
}) {
  /** Leaves in flight per participant token: a resume waits for them so that it is not undone. */
  const pendingLeaves = new Map<string, Promise<unknown>>();

  return {
    /** Marks the participant left and tells the room, unless another connection took it over. Never rejects. */
    markLeft(participant: Participant, session: Session): Promise<void> {
      const leaving = inFlight.track(
        participation.leave(participant.token).then((wasHere) => {
          if (wasHere) void rooms.publish(session, null, { type: 'peer-left', peerId: participant.peerId });
        }),
      );
      pendingLeaves.set(participant.token, leaving);
      return leaving
        .catch((error: unknown) => log.warn({ err: error, peer: participant.peerId }, 'could not record a leave'))
        .finally(() => {
          if (pendingLeaves.get(participant.token) === leaving) pendingLeaves.delete(participant.token);
        });
    },

    /** The leave of this participant still being recorded, if any (settles, never rejects). */
    inFlightFor(participantToken: string): Promise<unknown> | undefined {
      return pendingLeaves.get(participantToken)?.catch(() => {});
    },
  };
}

export type Departures = ReturnType<typeof createDepartures>;

// A participant leaving the call, whatever the cause (leave, drop, ejection,
// stop): the database records it, and the room hears `peer-left` unless
// another connection already took the participant over.
//
// A drop is not a leave: a phone moving from Wi-Fi to cellular loses its
// socket and comes back seconds later from another address. So a dropped
// participant is first held: the room hears `peer-reconnecting`, the database
// still lists it, and only if it has not resumed when the grace runs out is
// its leave recorded. A resume on this node cancels the hold; a resume on
// another node moves the participant's row to that node, so the hold's leave
// (which only touches rows of this node) finds nothing to do.
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
  reconnectGraceMs,
}: {
  participation: ParticipationService;
  rooms: Pick<RoomRegistry, 'publish'>;
  inFlight: InFlight;
  log: FastifyBaseLogger;
  reconnectGraceMs: number;
}) {
  /** Leaves in flight per participant token: a resume waits for them so that it is not undone. */
  const pendingLeaves = new Map<string, Promise<unknown>>();
  /** Dropped participants waiting for their browser to come back, by participant token. */
  const held = new Map<string, { timer: NodeJS.Timeout; leave: () => Promise<void> }>();

  function markLeft(participant: Participant, session: Session): Promise<void> {
    cancelHold(participant.token);
    const leaving = inFlight.track(
      participation.leave(participant.token).then((was) => {
        if (was === 'admitted') void rooms.publish(session, null, { type: 'peer-left', peerId: participant.peerId });
        // Only hosts ever heard of someone waiting.
        if (was === 'waiting') void rooms.publish(session, null, { type: 'waiting-ended', peerId: participant.peerId, outcome: 'left' }, { toRole: 'host' });
      }),
    );
    pendingLeaves.set(participant.token, leaving);
    return leaving
      .catch((error: unknown) => log.warn({ err: error, peer: participant.peerId }, 'could not record a leave'))
      .finally(() => {
        if (pendingLeaves.get(participant.token) === leaving) pendingLeaves.delete(participant.token);
      });
  }

  function cancelHold(participantToken: string): void {
    const hold = held.get(participantToken);
    if (!hold) return;
    clearTimeout(hold.timer);
    held.delete(participantToken);
  }

  return {
    /** Marks the participant left and tells the room, unless another connection took it over. Never rejects. */
    markLeft,

    /**
     * The participant's connection dropped: it stays in the call for the
     * reconnect grace, then leaves unless it resumed meanwhile.
     */
    markDropped(participant: Participant, session: Session): void {
      if (reconnectGraceMs <= 0) {
        void markLeft(participant, session);
        return;
      }
      cancelHold(participant.token);
      // Someone waiting stays on the hosts' list meanwhile; the call never knew them.
      if (participant.admission === 'admitted') void rooms.publish(session, null, { type: 'peer-reconnecting', peerId: participant.peerId });
      const leave = () => markLeft(participant, session);
      const timer = setTimeout(() => void leave(), reconnectGraceMs);
      timer.unref();
      held.set(participant.token, { timer, leave });
    },

    /**
     * A join that may resume this participant began on this node: its hold
     * ends now, so that the grace cannot run out between the resume and its
     * reply. Returns the held leave, for the caller to record when the join
     * turns out not to resume it (null when it was not held here).
     */
    takeHold(participantToken: string): (() => Promise<void>) | null {
      const hold = held.get(participantToken);
      if (!hold) return null;
      cancelHold(participantToken);
      return hold.leave;
    },

    /** Records now the leave of everyone still held (the node is stopping: its timers die with it). */
    leaveAllHeld(): Promise<void[]> {
      return Promise.all([...held.values()].map((hold) => hold.leave()));
    },

    /** The leave of this participant still being recorded, if any (settles, never rejects). */
    inFlightFor(participantToken: string): Promise<unknown> | undefined {
      return pendingLeaves.get(participantToken)?.catch(() => {});
    },
  };
}

export type Departures = ReturnType<typeof createDepartures>;

// What this node knows of the recordings of the rooms it has participants in
// (docs/design.md, "Recording with consent", "Consent in the call"). The
// recording itself is in the database (services.recordings), the same for
// every node; each node keeps a copy of the room's recording in progress, as
// it last read it after a `recording-changed` room event, and acts on it for
// its own participants: tells their pages, records the publications of
// those who consented, asks those who have not been asked, and renews the
// recording's lease every 10 s while it has someone in that room.
import type { ActiveRecording, RecordingsService } from '../domain/recordings/recordings.service.js';
import type { ConsentRound } from './consent-round.js';
import type { Session } from './session.js';

/** What the hub uses of the recordings service. */
export type RecordingsPort = Pick<RecordingsService, 'start' | 'addConsent' | 'active' | 'stop' | 'renew'>;

/** The node renews the lease of a recording it has participants in this often (the service's lease lasts 30 s). */
export const RENEW_EVERY_MS = 10_000;

export interface RoomRecording {
  /** The room allows recording (enable_recording), as last read here. */
  enabled: boolean;
  /** The room's recording in progress, as last read here. */
  active: ActiveRecording | null;
  /** A host's request to record is under way (on whichever node holds that host). */
  asking: boolean;
  /** The asks this node sent for the recording in progress, by ask id: who joined during it. */
  asks: Map<string, string>;
  /** Who this node asked for the recording in progress (`askedFor`), by peer id: each is asked once per recording. */
  asked: Set<string>;
  askedFor: string | null;
}

/** A request to record that this node holds (its host is connected here), by its ask id. */
export interface Round {
  askId: string;
  roomId: number;
  host: Session;
  hostName: string;
  consent: ConsentRound;
  hostAcceptedAt: Date;
  timer: NodeJS.Timeout;
}

export function createRecordingRooms() {
  const rooms = new Map<number, RoomRecording>();
  const rounds = new Map<string, Round>();
  let renewal: NodeJS.Timeout | null = null;

  return {
    rounds,
    get: (roomId: number): RoomRecording | undefined => rooms.get(roomId),
    of(roomId: number): RoomRecording {
      let room = rooms.get(roomId);
      if (!room) {
        room = { enabled: false, active: null, asking: false, asks: new Map(), asked: new Set(), askedFor: null };
        rooms.set(roomId, room);
      }
      return room;
    },
    /** The round of a host's request in this room held here, if any. */
    roundIn: (roomId: number): Round | undefined => [...rounds.values()].find((round) => round.roomId === roomId),
    /** Rooms with a recording in progress, for the lease. */
    recording: () => [...rooms].filter(([, room]) => room.active !== null),
    /** Forgets rooms nobody here is in any more (the lease's tick calls it). */
    forget(isHere: (roomId: number) => boolean): void {
      for (const roomId of rooms.keys()) if (!isHere(roomId) && !this.roundIn(roomId)) rooms.delete(roomId);
    },
    /** Runs `tick` every `everyMs` while some room here records. */
    keepRenewing(everyMs: number, tick: () => void): void {
      if (renewal) return;
      renewal = setInterval(tick, everyMs);
      renewal.unref();
    },
    stopRenewing(): void {
      if (renewal) clearInterval(renewal);
      renewal = null;
    },
    /** The hub stops: no timer outlives it. */
    stop(): void {
      this.stopRenewing();
      for (const round of rounds.values()) clearTimeout(round.timer);
      rounds.clear();
    },
  };
}

export type RecordingRooms = ReturnType<typeof createRecordingRooms>;

// Recordings as the calls see them (docs/design.md, "Recording with consent"):
// the node whose host pressed record starts one with everyone's consent,
// adds the consent of whoever joins, renews its lease while it records and
// stops it. The state is in the database, so every node of a cluster reads
// the same; every change is published on the room event bus
// (`recording-changed`) for the hubs of every node.
import { ConflictError, NotFoundError, UnprocessableError } from '../../errors.js';
import type { RoomEventBus } from '../buses/room-event-bus.js';
import type { Clock } from '../support/clock.js';
import type { Ids } from '../support/ids.js';
import { createRecordingJobs, RECORDING_LEASE_SECONDS } from './recording-jobs.js';
import type { RecordingFiles } from './recording-files.js';
import type { RecordingReadsRepo } from './recording-reads.repo.js';
import { createRecordingsApi } from './recordings-api.js';
import type { RecordingsRepo } from './recordings.repo.js';

export interface ConsentInput {
  peerId: string;
  displayName: string;
  role: 'host' | 'guest';
  acceptedAt: Date;
}

export interface ActiveRecording {
  id: string;
  roomId: number;
  /** Where Janus writes this recording's raw files: `<rawDir>/<peerId>-<kind>`, kind camera|screen. */
  rawDir: string;
  consentedPeerIds: string[];
}

export { RECORDING_LEASE_SECONDS };

const consentRow = (c: ConsentInput) => ({ peer_id: c.peerId, display_name: c.displayName, role: c.role, accepted_at: c.acceptedAt });

interface Deps {
  repo: RecordingsRepo;
  reads: RecordingReadsRepo;
  files: RecordingFiles;
  events: RoomEventBus;
  clock: Clock;
  ids: Ids;
  retentionSeconds: number;
}

export function createRecordingsService({ repo, reads, files, events, clock, ids, retentionSeconds }: Deps) {
  const leaseFrom = (now: Date) => new Date(now.getTime() + RECORDING_LEASE_SECONDS * 1000);
  const changed = (roomId: number) => events.publish({ type: 'recording-changed', roomId });

  async function activeOf(roomId: number): Promise<ActiveRecording | null> {
    const row = await repo.active(roomId);
    if (!row) return null;
    const consents = await repo.consents([row.id]);
    return { id: row.id, roomId, rawDir: files.rawDirOf(row.id), consentedPeerIds: consents.map((c) => c.peer_id) };
  }

  return {
    // The API's (docs/api.md, "Recordings") and the jobs' (src/jobs.ts) halves.
    ...createRecordingsApi({ reads, repo, files, clock }),
    ...createRecordingJobs({ repo, files, events, clock, retentionSeconds }),

    /**
     * A recording in `recording`, its raw directory made, recording.started
     * sent. ConflictError when the room has one already (one at a time),
     * UnprocessableError when the room does not allow recording (`enable_recording` off).
     */
    async start({ roomId, startedBy, consents }: { roomId: number; startedBy: string; consents: ConsentInput[] }): Promise<ActiveRecording> {
      const id = ids.uuid();
      // The directory before the row: a row never names a directory that cannot exist; a directory without a row is swept.
      const rawDir = await files.createRawDir(id);
      const now = clock.now();
      const row = await repo.insert({ id, roomId, startedBy, startedAt: now, leaseUntil: leaseFrom(now) }, consents.map(consentRow)).catch(async (error: unknown) => {
        await files.remove(id);
        throw error;
      });
      if (row === 'busy' || row === 'disabled') {
        await files.remove(id);
        throw row === 'busy' ? new ConflictError('This room is being recorded already') : new UnprocessableError('This room does not allow recording (enable_recording)');
      }
      changed(roomId);
      return { id, roomId, rawDir, consentedPeerIds: consents.map((c) => c.peerId) };
    },

    /** Someone who joined during the recording accepted. NotFoundError when it is not recording any more. */
    async addConsent(recordingId: string, consent: ConsentInput): Promise<void> {
      const row = await repo.find(recordingId);
      if (!row || !(await repo.addConsent(recordingId, consentRow(consent)))) throw new NotFoundError('Recording not found or not recording');
      changed(row.room_id);
    },

    /** The room's recording in progress, or null. */
    active: activeOf,

    /** recording -> processing (the processing job makes the file), or `failed` when nothing was recorded. Stopping twice is harmless. */
    async stop(recordingId: string): Promise<void> {
      const roomId = await repo.stop(recordingId, clock.now());
      if (roomId === null) return;
      if (!(await files.hasRaw(recordingId))) await repo.finish(recordingId, null, { status: 'failed', error: 'Nothing was recorded' });
      changed(roomId);
    },

    /** Called every 10 s by the node that records it. NotFoundError when it is not recording any more (stopped, or taken over as lapsed). */
    async renew(recordingId: string): Promise<void> {
      if (!(await repo.renew(recordingId, leaseFrom(clock.now())))) throw new NotFoundError('Recording not found or not recording');
    },
  };
}

export type RecordingsService = ReturnType<typeof createRecordingsService>;

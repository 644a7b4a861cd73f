// The recordings' jobs (docs/design.md, "Recording with consent"), run by
// every node (src/jobs.ts); the claims in SQL keep nodes apart:
// - lapsed: a recording whose recording node stopped renewing its lease (the
//   node died) is stopped, keeping what was recorded;
// - processing: one `processing` recording at a time is claimed with a lease,
//   renewed while its file is composed; a node killed meanwhile lets the lease
//   lapse and another node composes it again (given up after MAX_ATTEMPTS);
// - retention and files: recordings past RECORDING_RETENTION_DAYS are deleted,
//   and the directories of deleted recordings (and any directory no
//   recording owns) are removed.
import type { RoomEventBus } from '../buses/room-event-bus.js';
import type { Clock } from '../support/clock.js';
import { RECORDING_CONTENT_TYPE, type RecordingFiles } from './recording-files.js';
import type { RecordingsRepo } from './recordings.repo.js';

/** What makes the one file of a recording: src/sfu/recording/compose.ts's composeRecording (tests pass a fake). */
export type Composer = (input: { rawDir: string; outFile: string; signal?: AbortSignal }) => Promise<{ durationSeconds: number; sizeBytes: number }>;

/** The recording node renews its lease every 10 s; a lease not renewed for this long means its node died. */
export const RECORDING_LEASE_SECONDS = 30;
/** How long a processing claim holds without being renewed; renewed every third of it while composing. */
export const PROCESSING_LEASE_SECONDS = 60;
/** Composing attempts before a recording is given up as failed (a file that kills its node each time). */
export const MAX_ATTEMPTS = 3;
/** A directory nobody owns is removed once it has not changed for this long (a start in flight owns its directory before its row). */
const ORPHAN_AFTER_MS = 3600_000;
const BATCH = 100;

export function createRecordingJobs({ repo, files, events, clock, retentionSeconds }: { repo: RecordingsRepo; files: RecordingFiles; events: RoomEventBus; clock: Clock; retentionSeconds: number }) {
  const after = (seconds: number) => new Date(clock.now().getTime() + seconds * 1000);

  /** Deletes the directories whose recordings are gone, then their marks. */
  async function sweepDeleted(): Promise<string[]> {
    const ids = await repo.deletedFiles(BATCH);
    for (const id of ids) await files.remove(id);
    await repo.filesRemoved(ids);
    return ids;
  }

  async function composeOne(compose: Composer, signal?: AbortSignal): Promise<string | null> {
    const claimed = await repo.claimProcessing(clock.now(), after(PROCESSING_LEASE_SECONDS));
    if (!claimed) return null;
    const { id, attempts } = claimed;
    if (attempts > MAX_ATTEMPTS) {
      await repo.finish(id, attempts, { status: 'failed', error: `Processing was given up after ${MAX_ATTEMPTS} attempts` });
      return id;
    }
    if (!(await files.hasRaw(id))) {
      await repo.finish(id, attempts, { status: 'failed', error: 'Nothing was recorded' });
      return id;
    }
    const renewal = setInterval(() => void repo.extendProcessing(id, attempts, after(PROCESSING_LEASE_SECONDS)).catch(() => {}), (PROCESSING_LEASE_SECONDS * 1000) / 3);
    renewal.unref();
    try {
      const made = await compose({ rawDir: files.rawDirOf(id), outFile: files.fileOf(id), signal });
      if (await repo.finish(id, attempts, { status: 'ready', durationSeconds: made.durationSeconds, sizeBytes: made.sizeBytes, contentType: RECORDING_CONTENT_TYPE })) {
        await files.removeRaw(id);
      }
    } catch (error) {
      // Stopped with the node: another node (or this one, started again) composes it.
      if (signal?.aborted) await repo.release(id, attempts);
      else await repo.finish(id, attempts, { status: 'failed', error: error instanceof Error ? error.message : String(error) });
    } finally {
      clearInterval(renewal);
    }
    return id;
  }

  return {
    /** Recordings whose recording node died: stopped, what was recorded kept (processing), or failed with nothing. */
    async stopLapsed(): Promise<string[]> {
      const lapsed = await repo.lapsed(clock.now(), BATCH);
      for (const row of lapsed) {
        // It ended when its node was last heard of: the last renewal.
        const endedAt = row.lease_until ? new Date(row.lease_until.getTime() - RECORDING_LEASE_SECONDS * 1000) : clock.now();
        const roomId = await repo.stop(row.id, endedAt < row.started_at ? row.started_at : endedAt);
        if (roomId === null) continue;
        if (!(await files.hasRaw(row.id))) await repo.finish(row.id, null, { status: 'failed', error: 'Nothing was recorded' });
        events.publish({ type: 'recording-changed', roomId });
      }
      return lapsed.map((row) => row.id);
    },

    /** Composes the files of the processing recordings due, one after the other; the ids done. */
    async processDue(compose: Composer, signal?: AbortSignal): Promise<string[]> {
      const done: string[] = [];
      for (let id = await composeOne(compose, signal); id !== null && !signal?.aborted; id = await composeOne(compose, signal)) done.push(id);
      return done;
    },

    /** Deletes the recordings past retention (rows, with a `delete` audit entry by Parley, then files). */
    async applyRetention(): Promise<string[]> {
      const ids = await repo.expired(new Date(clock.now().getTime() - retentionSeconds * 1000), BATCH);
      await repo.remove(ids, { tokenId: null, at: clock.now() });
      await sweepDeleted();
      return ids;
    },

    sweepDeleted,

    /** Removes the directories of deleted recordings, and those no recording owns that have not changed for an hour. */
    async sweepFiles(): Promise<string[]> {
      const removed = await sweepDeleted();
      const present = await files.list();
      const owned = await repo.existing(present.map((entry) => entry.id));
      const cutoff = Date.now() - ORPHAN_AFTER_MS;
      for (const entry of present) {
        if (owned.has(entry.id) || entry.changedAt.getTime() > cutoff) continue;
        await files.remove(entry.id);
        removed.push(entry.id);
      }
      return removed;
    },
  };
}

export type RecordingJobs = ReturnType<typeof createRecordingJobs>;

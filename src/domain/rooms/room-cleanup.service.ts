// Automatic cleanup, the last step of a room's life (room-lifecycle.ts):
// non-permanent rooms are deleted a configurable time after the later of their
// scheduled end and their last activity, never while someone is in the call.
// Feedback is kept (it holds the room token as a value). Deleting with FOR
// UPDATE SKIP LOCKED lets several nodes run it at once and still delete each
// room exactly once.
import type { Clock } from '../support/clock.js';
import { deletionCutoff } from './room-lifecycle.js';
import type { RoomsRepo } from './rooms.repo.js';

const BATCH = 500;

export function createCleanupService({ rooms, clock, retentionSeconds }: { rooms: RoomsRepo; clock: Clock; retentionSeconds: number }) {
  return {
    /** Deletes every expired room, in batches; returns the deleted rooms' tokens. */
    async run(): Promise<string[]> {
      const before = deletionCutoff(clock.now(), retentionSeconds);
      const deleted: string[] = [];
      for (;;) {
        const batch = await rooms.deleteExpired(before, BATCH);
        deleted.push(...batch);
        if (batch.length < BATCH) return deleted;
      }
    },
  };
}

export type CleanupService = ReturnType<typeof createCleanupService>;

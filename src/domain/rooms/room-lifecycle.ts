// The life of a room (docs/api.md "The Room", "Close", "Automatic cleanup"),
// from creation to deletion:
//   created                                      → active
//   a participant joins (also an ended room)     → started  (started_at set once;
//                                                  someone waiting to be let in has not joined)
//   started, empty for longer than the grace     → ended    (people waiting do not count)
//   closed through the API                       → closed   (final: joins refused)
//   expired (not permanent, nobody in the call)  → deleted
//
// The rules live here and nowhere else. rooms.repo.ts applies them in SQL, in
// the statements that lock the room's row, so that every node of a cluster
// reaches the same status without asking the others; the statements name the
// statuses through the constants below.
import type { RoomStatus } from '../../db/schema.js';

export const ACTIVE = 'active' satisfies RoomStatus;
export const STARTED = 'started' satisfies RoomStatus;
export const ENDED = 'ended' satisfies RoomStatus;
export const CLOSED = 'closed' satisfies RoomStatus;

/** What happens to a room that can change its status. */
export type LifecycleEvent = 'participant-joined' | 'grace-passed-empty' | 'closed';

/** A new room's status. */
export const CREATED_STATUS: RoomStatus = ACTIVE;

/**
 * The status a room has after `event`, or null when the event does not
 * apply: a closed room never changes again, and only a started room ends.
 */
export function statusAfter(status: RoomStatus, event: LifecycleEvent): RoomStatus | null {
  if (status === CLOSED) return null;
  switch (event) {
    case 'participant-joined':
      return STARTED;
    case 'grace-passed-empty':
      return status === STARTED ? ENDED : null;
    case 'closed':
      return CLOSED;
  }
}

/** Whether a join link (or a participant coming back) may enter the room's call. */
export function acceptsParticipants(status: RoomStatus): boolean {
  return statusAfter(status, 'participant-joined') !== null;
}

/** Closing a closed room changes nothing (and is 204 again). */
export function isClosed(status: RoomStatus): boolean {
  return status === CLOSED;
}

/**
 * The start of the grace window at `now`: a started room empty since this
 * time or earlier ends, and a participant who left after it may still come
 * back as itself (a reload, a dropped connection).
 */
export function graceWindowStart(now: Date, graceSeconds: number): Date {
  return new Date(now.getTime() - graceSeconds * 1000);
}

const MINUTE = 60_000;

export function scheduledEnd(scheduledAt: Date, meetingDuration: number): Date {
  return new Date(scheduledAt.getTime() + meetingDuration * MINUTE);
}

/** Cleanup counts from the later of the scheduled end and the last activity. */
export function cleanupBase(end: Date, lastActivity: Date): Date {
  return end > lastActivity ? end : lastActivity;
}

/** Rooms whose cleanup base is before this time are deleted, unless permanent or someone is in the call. */
export function deletionCutoff(now: Date, retentionSeconds: number): Date {
  return new Date(now.getTime() - retentionSeconds * 1000);
}

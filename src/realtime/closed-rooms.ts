// Rooms closed or deleted recently. A join that was in the database when the
// close event came lands afterwards; it is ejected then instead of staying in
// a closed room.
import type { Clock } from '../domain/support/clock.js';

/** A join's database call takes milliseconds; a minute leaves a wide margin. */
export const CLOSED_ROOMS_KEPT_MS = 60_000;

export function createClosedRooms(clock: Clock) {
  const closedAt = new Map<number, number>();
  return {
    add(roomId: number): void {
      const now = clock.now().getTime();
      closedAt.set(roomId, now);
      // Forgotten only when another room closes: the map stays as small as the number of recent closes.
      for (const [id, at] of closedAt) if (now - at > CLOSED_ROOMS_KEPT_MS) closedAt.delete(id);
    },
    has(roomId: number): boolean {
      return closedAt.has(roomId);
    },
  };
}

export type ClosedRooms = ReturnType<typeof createClosedRooms>;

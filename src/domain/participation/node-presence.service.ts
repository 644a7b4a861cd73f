// This node's part in presence: registered at start, the periodic presence
// job (heartbeat, the participants of dead nodes marked left, rooms empty for
// longer than the grace ended), retired at a graceful stop. Safe on every
// node at once.
import type { RoomsRepo } from '../rooms/rooms.repo.js';
import { graceWindowStart } from '../rooms/room-lifecycle.js';
import type { Clock } from '../support/clock.js';
import type { ParticipantsRepo } from './participants.repo.js';

interface Deps {
  repo: Pick<ParticipantsRepo, 'heartbeat' | 'leaveNodes' | 'removeNode'>;
  rooms: Pick<RoomsRepo, 'endEmptyRooms'>;
  clock: Clock;
  nodeId: string;
  roomEndGraceSeconds: number;
  nodeDeadAfterSeconds: number;
}

export function nodePresence({ repo, rooms, clock, nodeId, roomEndGraceSeconds, nodeDeadAfterSeconds }: Deps) {
  /** This node's last heartbeat failed (the database was away), and when it worked again. */
  let heartbeatFailed = false;
  let databaseBackAt: Date | null = null;

  return {
    /** This node is alive; it starts with nobody connected through it (a restart left no sockets open). */
    async registerNode(): Promise<void> {
      const now = clock.now();
      await repo.heartbeat(nodeId, now);
      await repo.leaveNodes({ nodeId }, now);
    },

    /**
     * The periodic presence job, safe on every node at once: heartbeat, mark
     * the participants of dead nodes as left, end rooms empty for longer than the grace.
     */
    async sweep(): Promise<{ endedRooms: number[] }> {
      const now = clock.now();
      try {
        await repo.heartbeat(nodeId, now);
      } catch (error) {
        heartbeatFailed = true;
        throw error;
      }
      if (heartbeatFailed) {
        heartbeatFailed = false;
        databaseBackAt = now;
      }
      const deadBefore = new Date(now.getTime() - nodeDeadAfterSeconds * 1000);
      // When the database was away, every node's heartbeat is old, not only a
      // dead one's: the others get NODE_DEAD_AFTER_SECONDS from its return to
      // beat again before their participants count as gone (docs/deploy.md).
      if (databaseBackAt === null || databaseBackAt <= deadBefore) await repo.leaveNodes({ deadBefore }, now);
      return { endedRooms: await rooms.endEmptyRooms(graceWindowStart(now, roomEndGraceSeconds), now) };
    },

    /** A graceful stop: whoever is still marked connected here has left, and the node is gone. */
    async retireNode(): Promise<void> {
      await repo.leaveNodes({ nodeId }, clock.now());
      await repo.removeNode(nodeId);
    },
  };
}

// Which Janus instance carries a room's media (docs/design.md, "Group calls
// through an SFU"). The database decides, not a node: the first node to pin a
// room writes its row and every other node reads that row, so a call whose
// participants sit on different nodes meets in one VideoRoom.
import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export interface SfuPin {
  roomId: number;
  instance: string;
  janusRoom: number;
  secret: string;
}

export interface InstanceLoad {
  instance: string;
  rooms: number;
}

type Row = { room_id: number; instance: string; janus_room: number; secret: string };
const toPin = (row: Row): SfuPin => ({ roomId: row.room_id, instance: row.instance, janusRoom: row.janus_room, secret: row.secret });

export function createSfuRoomsRepo(db: Db) {
  /** Rooms pinned to each of `instances` (0 for one with none), least loaded first, ties in the order given. */
  async function load(instances: readonly string[]): Promise<InstanceLoad[]> {
    const rows = await db.selectFrom('sfu_rooms').select(['instance', sql<number>`count(*)::int`.as('rooms')]).groupBy('instance').execute();
    const counts = new Map(rows.map((row) => [row.instance, Number(row.rooms)]));
    return instances.map((instance) => ({ instance, rooms: counts.get(instance) ?? 0 })).sort((a, b) => a.rooms - b.rooms);
  }

  return {
    load,

    /** Every pinned room's instance, for `parley admin sfu` (the instances named there, and any others still holding rooms). */
    async all(): Promise<InstanceLoad[]> {
      const rows = await db.selectFrom('sfu_rooms').select(['instance', sql<number>`count(*)::int`.as('rooms')]).groupBy('instance').execute();
      return rows.map((row) => ({ instance: row.instance, rooms: Number(row.rooms) }));
    },

    async find(roomId: number): Promise<SfuPin | null> {
      const row = await db.selectFrom('sfu_rooms').select(['room_id', 'instance', 'janus_room', 'secret']).where('room_id', '=', roomId).executeTakeFirst();
      return row ? toPin(row) : null;
    },

    /**
     * The room's pin: the existing one, or a new one on the least loaded of
     * `instances` (none excluded). Two nodes pinning at once both insert; the
     * primary key keeps the first, and both read it back.
     */
    async pin(roomId: number, instances: readonly string[], fresh: { janusRoom: number; secret: string }, now: Date, exclude: readonly string[] = []): Promise<SfuPin> {
      const candidates = (await load(instances)).filter((entry) => !exclude.includes(entry.instance));
      const chosen = candidates[0]?.instance;
      if (chosen === undefined) throw new Error('no SFU instance to pin the room to');
      await db
        .insertInto('sfu_rooms')
        .values({ room_id: roomId, instance: chosen, janus_room: fresh.janusRoom, secret: fresh.secret, pinned_at: now })
        .onConflict((oc) => oc.column('room_id').doNothing())
        .execute();
      const row = await db.selectFrom('sfu_rooms').select(['room_id', 'instance', 'janus_room', 'secret']).where('room_id', '=', roomId).executeTakeFirstOrThrow();
      return toPin(row);
    },

    /**
     * Moves a room off the VideoRoom that failed: to the least loaded other
     * instance, or to a new VideoRoom on the same one when it is the only
     * one (a local Janus restarted). Another node's move stands: only the
     * failed pin is replaced.
     */
    async move(failed: SfuPin, instances: readonly string[], fresh: { janusRoom: number; secret: string }, now: Date): Promise<SfuPin | null> {
      const loads = await load(instances);
      const chosen = loads.find((entry) => entry.instance !== failed.instance)?.instance ?? loads[0]?.instance;
      if (chosen !== undefined) {
        await db
          .updateTable('sfu_rooms')
          .set({ instance: chosen, janus_room: fresh.janusRoom, secret: fresh.secret, pinned_at: now })
          .where('room_id', '=', failed.roomId)
          .where('instance', '=', failed.instance)
          .where('janus_room', '=', failed.janusRoom)
          .execute();
      }
      const row = await db.selectFrom('sfu_rooms').select(['room_id', 'instance', 'janus_room', 'secret']).where('room_id', '=', failed.roomId).executeTakeFirst();
      return row ? toPin(row) : null;
    },

    /**
     * Pins older than `before` of rooms nobody is in or has left since
     * `before`: no call uses their VideoRooms (a call whose last participant's
     * node died; docs/design.md, "Group calls through an SFU", Faults). At most
     * `limit`, through participants_room_idx.
     */
    async deserted(before: Date, limit = 100): Promise<SfuPin[]> {
      const rows = await db
        .selectFrom('sfu_rooms as s')
        .select(['s.room_id', 's.instance', 's.janus_room', 's.secret'])
        .where('s.pinned_at', '<', before)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('participants as p')
                .select('p.token')
                .whereRef('p.room_id', '=', 's.room_id')
                .where((p) => p.or([p('p.left_at', 'is', null), p('p.left_at', '>', before)])),
            ),
          ),
        )
        .limit(limit)
        .execute();
      return rows.map(toPin);
    },

    /** The room no longer goes through an SFU (back to peer to peer, or ended). */
    async unpin(roomId: number): Promise<void> {
      await db.deleteFrom('sfu_rooms').where('room_id', '=', roomId).execute();
    },
  };
}

export type SfuRoomsRepo = ReturnType<typeof createSfuRoomsRepo>;

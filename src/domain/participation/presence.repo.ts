// Leaving in SQL: a participant's leave, and the nodes' heartbeats, by which
// the participants of a node that stopped or died are marked left. Whoever
// leaves may leave a room empty: the rooms repository's markEmptied runs in
// the same transaction or right after.
import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Admission } from '../../db/schema.js';
import type { RoomsRepo } from '../rooms/rooms.repo.js';

export function presence(db: Db, rooms: RoomsRepo) {
  return {
    /**
     * Marks a participant left if it is still connected through this node;
     * returns its room id and whether it was in the call or waiting.
     */
    async leave(token: string, nodeId: string, now: Date): Promise<{ roomId: number; admission: Admission } | null> {
      return db.transaction().execute(async (tx) => {
        const current = await tx
          .selectFrom('participants')
          .select(['room_id', 'admission'])
          .where('token', '=', token)
          .where('node_id', '=', nodeId)
          .where('left_at', 'is', null)
          .executeTakeFirst();
        if (!current) return null;
        await tx.selectFrom('rooms').select('id').where('id', '=', current.room_id).forUpdate().execute();
        const left = await tx
          .updateTable('participants')
          .set({ left_at: now })
          .where('token', '=', token)
          .where('node_id', '=', nodeId)
          .where('left_at', 'is', null)
          .executeTakeFirst();
        if (Number(left.numUpdatedRows) === 0) return null;
        await rooms.markEmptied(tx, [current.room_id], now);
        return { roomId: current.room_id, admission: current.admission };
      });
    },

    /** Records that a node is alive (upsert). */
    async heartbeat(nodeId: string, now: Date): Promise<void> {
      await db
        .insertInto('nodes')
        .values({ id: nodeId, started_at: now, heartbeat_at: now })
        .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: now }))
        .execute();
    },

    async removeNode(nodeId: string): Promise<void> {
      await db.deleteFrom('nodes').where('id', '=', nodeId).execute();
    },

    /**
     * Marks as left everyone connected through the given node, or through any
     * node whose heartbeat is older than `deadBefore` (or that has no row at all).
     * Returns the participants' rooms. Safe on every node at once.
     */
    async leaveNodes(filter: { nodeId: string } | { deadBefore: Date }, now: Date): Promise<number[]> {
      const condition =
        'nodeId' in filter
          ? sql`node_id = ${filter.nodeId}`
          : sql`node_id not in (select id from nodes where heartbeat_at >= ${filter.deadBefore})`;
      const result = await sql<{ room_id: number }>`
        update participants set left_at = ${now}
        where left_at is null and ${condition}
        returning room_id`.execute(db);
      const roomIds = [...new Set(result.rows.map((r) => Number(r.room_id)))];
      await rooms.markEmptied(db, roomIds, now);
      return roomIds;
    },
  };
}

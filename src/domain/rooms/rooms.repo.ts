// Rooms in SQL: reads, writes and the room's status. The statement a call
// runs is chosen here, never by the services: the hottest ones are compiled
// once (db/prepared.ts) and some calls have a shape with fewer round trips;
// bench/README.md "Optimizations" has the measurements behind each. The
// repository is one object, in files by concern: the room's status here; the
// create and the PUT (each a statement alone and one for the writes of a turn)
// in room-creates.repo.ts and room-updates.repo.ts; the reads in
// room-reads.repo.ts; what every statement shares in room-rows.repo.ts.
import { sql, type Transaction } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Database } from '../../db/schema.js';
import { roomCreates } from './room-creates.repo.js';
import { CLOSED, ENDED, STARTED } from './room-lifecycle.js';
import { roomReads } from './room-reads.repo.js';
import { NEXT_VERSION, type RoomRow, type Versions, type WhichRoom } from './room-rows.repo.js';
import { roomUpdates } from './room-updates.repo.js';

export function createRoomsRepo(db: Db) {
  return {
    ...roomCreates(db),
    ...roomReads(db),
    ...roomUpdates(db),

    /**
     * A participant enters the room `which` picks (statusAfter 'participant-joined'):
     * any room but a closed one becomes started (again, if it had ended), and its
     * row stays locked until `tx` ends, so that the joins and leaves of a room
     * happen one after the other. The room, or null when it is closed or gone.
     * `unless`: a condition on the room under which the row is only locked,
     * not started (a guest who waits to be let in has not joined the call).
     */
    async start(tx: Transaction<Database>, which: WhichRoom, now: Date, { unless = sql<boolean>`false` } = {}): Promise<RoomRow | null> {
      const row = await sql<RoomRow>`
        update rooms set
          status = case when ${unless} then status else ${sql.lit(STARTED)} end,
          started_at = case when ${unless} then started_at else coalesce(started_at, ${now}) end,
          ended_at = case when ${unless} then ended_at end,
          emptied_at = case when ${unless} then emptied_at end,
          updated_at = case when ${unless} or status = ${sql.lit(STARTED)} then updated_at else ${now} end,
          version = case when ${unless} or status = ${sql.lit(STARTED)} then version else ${NEXT_VERSION} end,
          cleanup_base_at = greatest(cleanup_base_at, ${now})
        where ${which} and status <> ${sql.lit(CLOSED)}
        returning *`.execute(tx);
      return row.rows[0] ?? null;
    },

    /**
     * After participants of these rooms left: a started room nobody is in any
     * more starts its grace period. `executor` is the transaction the leaving
     * happened in, if any.
     */
    async markEmptied(executor: Db, roomIds: number[], now: Date): Promise<void> {
      if (roomIds.length === 0) return;
      await sql`
        update rooms r set emptied_at = ${now}, cleanup_base_at = greatest(r.cleanup_base_at, ${now})
        where r.id in (${sql.join(roomIds)}) and r.status = ${sql.lit(STARTED)}
          and not exists (select 1 from participants p where p.room_id = r.id and p.left_at is null and p.admission = 'admitted')`.execute(executor);
    },

    /**
     * Started rooms empty since `emptiedBefore` or earlier and still empty
     * end (statusAfter 'grace-passed-empty'). One idempotent statement: every
     * node may run it at the same time. The statuses are literals, not
     * parameters: the partial index rooms_emptied_idx serves `status = 'started'`.
     */
    async endEmptyRooms(emptiedBefore: Date, now: Date): Promise<number[]> {
      const result = await sql<{ id: number }>`
        update rooms r set status = ${sql.lit(ENDED)}, ended_at = ${now}, updated_at = ${now}, version = ${NEXT_VERSION}
        where r.status = ${sql.lit(STARTED)} and r.emptied_at is not null and r.emptied_at <= ${emptiedBefore}
          and not exists (select 1 from participants p where p.room_id = r.id and p.left_at is null and p.admission = 'admitted')
        returning r.id`.execute(db);
      return result.rows.map((r) => Number(r.id));
    },

    /** Closes the room unless it is closed already (or its version is not one of `versions`); the closed row, else null. */
    async close(id: number, at: Date, versions?: Versions): Promise<RoomRow | null> {
      if (versions?.length === 0) return null;
      let update = db.updateTable('rooms').set({ status: CLOSED, closed_at: at, updated_at: at, version: NEXT_VERSION }).where('id', '=', id).where('status', '!=', CLOSED);
      if (versions) update = update.where('version', 'in', versions);
      return (await update.returningAll().executeTakeFirst()) ?? null;
    },

    async delete(id: number, versions?: Versions): Promise<boolean> {
      if (versions?.length === 0) return false;
      let query = db.deleteFrom('rooms').where('id', '=', id);
      if (versions) query = query.where('version', 'in', versions);
      const result = await query.executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /**
     * Deletes up to `limit` non-permanent rooms whose cleanup time has passed
     * and that nobody is in. Returns their tokens.
     */
    async deleteExpired(before: Date, limit: number): Promise<string[]> {
      const result = await sql<{ token: string }>`
        delete from rooms where id in (
          select r.id from rooms r
          where not r.permanent and r.cleanup_base_at < ${before}
            and not exists (select 1 from participants p where p.room_id = r.id and p.left_at is null)
          order by r.cleanup_base_at
          limit ${limit}
          for update skip locked
        )
        returning token`.execute(db);
      return result.rows.map((r) => r.token);
    },
  };
}

export type RoomsRepo = ReturnType<typeof createRoomsRepo>;

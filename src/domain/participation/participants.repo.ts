// Presence and room lifecycle in SQL (DESIGN §5). The database is the one
// truth about who is in a call, so that every node of a cluster agrees.
// Joins and leaves of a room lock the room's row first: two last participants
// leaving at once cannot both miss that the room became empty.
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/client.js';
import type { ParticipantRole, ParticipantsTable } from '../../db/schema.js';
import type { RoomRow } from '../rooms/rooms.repo.js';

export type ParticipantRow = Selectable<ParticipantsTable>;

type Tx = Parameters<Parameters<ReturnType<Db['transaction']>['execute']>[0]>[0];

/** A new participant's row, without what the repository fills in (room, times). */
export type NewParticipant = Omit<ParticipantRow, 'left_at' | 'room_id' | 'joined_at'>;

/** `peers`: the others connected to the room at that moment, oldest first. */
export type JoinOutcome =
  | { ok: true; room: RoomRow; participant: ParticipantRow; peers: ParticipantRow[] }
  | { ok: false; reason: 'not-found' | 'closed' | 'full' | 'expired' };

/**
 * The room a join token opens: host access, guest access, or an extra guest
 * (or invite) token. One index lookup per kind: the same test written as
 * `access_token = $1 or guest_token = $1 or id in (...)` scans the whole
 * table (117 ms at 300,000 rooms against 0.04 ms, bench/README.md).
 */
function opensRoom(token: string): RawBuilder<boolean> {
  return sql<boolean>`id = (select id from rooms where access_token = ${token}
    union all select id from rooms where guest_token = ${token}
    union all select room_id from room_guest_tokens where token = ${token}
    limit 1)`;
}

/** Starts the room (or keeps it started) and locks its row; null when closed or gone. */
async function startRoom(tx: Tx, which: RawBuilder<boolean>, now: Date): Promise<RoomRow | null> {
  const row = await sql<RoomRow>`
    update rooms set
      status = 'started',
      started_at = coalesce(started_at, ${now}),
      ended_at = null,
      emptied_at = null,
      updated_at = case when status = 'started' then updated_at else ${now} end,
      cleanup_base_at = greatest(cleanup_base_at, ${now})
    where ${which} and status <> 'closed'
    returning *`.execute(tx);
  return row.rows[0] ?? null;
}

/** Who is connected to the room, oldest first. */
function connected(db: Db | Tx, roomId: number): Promise<ParticipantRow[]> {
  return db.selectFrom('participants').selectAll().where('room_id', '=', roomId).where('left_at', 'is', null).orderBy('joined_at').execute();
}

/** After participants of these rooms left: a room nobody is in any more starts its grace period. */
async function markEmptied(db: Db | Tx, roomIds: number[], now: Date): Promise<void> {
  if (roomIds.length === 0) return;
  await sql`
    update rooms r set emptied_at = ${now}, cleanup_base_at = greatest(r.cleanup_base_at, ${now})
    where r.id in (${sql.join(roomIds)}) and r.status = 'started'
      and not exists (select 1 from participants p where p.room_id = r.id and p.left_at is null)`.execute(db);
}

export function createParticipantsRepo(db: Db) {
  return {
    /** The room a join token opens and the role it grants: host access, guest access, or an extra guest token. */
    async findByJoinToken(token: string): Promise<{ room: RoomRow; role: ParticipantRole } | null> {
      const room = await db.selectFrom('rooms').selectAll().where(opensRoom(token)).executeTakeFirst();
      if (!room) return null;
      return { room, role: room.access_token === token ? 'host' : 'guest' };
    },

    async findRoom(roomId: number): Promise<RoomRow | null> {
      return (await db.selectFrom('rooms').selectAll().where('id', '=', roomId).executeTakeFirst()) ?? null;
    },

    /**
     * A new participant in the room the join token opens: `make` builds its row
     * from the room and the role the token grants. The join path of every call
     * (bench/README.md, realtime), four round trips: begin, the statement that
     * finds the room by the token, locks and starts it, the one that reads who is
     * connected and adds the participant, commit.
     */
    async join(joinToken: string, now: Date, maxParticipants: number, make: (room: RoomRow, role: ParticipantRole) => NewParticipant): Promise<JoinOutcome> {
      return db.transaction().execute(async (tx): Promise<JoinOutcome> => {
        const room = await startRoom(tx, opensRoom(joinToken), now);
        if (!room) {
          const exists = await tx.selectFrom('rooms').select('id').where(opensRoom(joinToken)).executeTakeFirst();
          return { ok: false, reason: exists ? 'closed' : 'not-found' };
        }
        const added = make(room, room.access_token === joinToken ? 'host' : 'guest');
        // Who is connected, and the new participant unless that is the maximum, in one
        // statement: it runs after the lock above, so its snapshot holds every join before.
        const { rows } = await sql<ParticipantRow & { added: boolean }>`
          with peers as (select * from participants where room_id = ${room.id} and left_at is null),
          inserted as (
            insert into participants (token, room_id, role, display_name, node_id, joined_at, left_at)
            select ${added.token}, ${room.id}, ${added.role}, ${added.display_name}, ${added.node_id}, ${now}, null
            where (select count(*) from peers) < ${maxParticipants}
            returning *)
          select true as added, * from inserted
          union all select false, * from peers
          order by added desc, joined_at`.execute(tx);
        const [first, ...others] = rows.map(({ added: isNew, ...row }) => ({ isNew, row }));
        if (!first?.isNew) throw new RoomFull();
        return { ok: true, room, participant: first.row, peers: others.map((p) => p.row) };
      }).catch((error: unknown): JoinOutcome => {
        if (error instanceof RoomFull) return { ok: false, reason: 'full' };
        throw error;
      });
    },

    /**
     * The same participant on a new connection: allowed while it is connected
     * (a connection that has not been noticed as dead yet) or left after `since`,
     * and only through a link of its own role (a guest link never resumes the host).
     */
    async resume(roomId: number, token: string, role: ParticipantRole, nodeId: string, now: Date, since: Date): Promise<JoinOutcome> {
      return db.transaction().execute(async (tx): Promise<JoinOutcome> => {
        const room = await startRoom(tx, sql<boolean>`id = ${roomId}`, now);
        if (!room) return { ok: false, reason: 'closed' };
        const row = await tx
          .updateTable('participants')
          .set({ left_at: null, node_id: nodeId })
          .where('token', '=', token)
          .where('room_id', '=', roomId)
          .where('role', '=', role)
          .where((eb) => eb.or([eb('left_at', 'is', null), eb('left_at', '>', since)]))
          .returningAll()
          .executeTakeFirst();
        // Throwing rolls back the start of the room above.
        if (!row) throw new ResumeExpired();
        const peers = (await connected(tx, roomId)).filter((p) => p.token !== token);
        return { ok: true, room, participant: row, peers };
      }).catch((error: unknown): JoinOutcome => {
        if (error instanceof ResumeExpired) return { ok: false, reason: 'expired' };
        throw error;
      });
    },

    /** Marks a participant left if it is still connected through this node; returns its room id. */
    async leave(token: string, nodeId: string, now: Date): Promise<number | null> {
      return db.transaction().execute(async (tx) => {
        const current = await tx
          .selectFrom('participants')
          .select('room_id')
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
        await markEmptied(tx, [current.room_id], now);
        return current.room_id;
      });
    },

    async findParticipant(token: string): Promise<{ participant: ParticipantRow; room: RoomRow } | null> {
      const participant = await db.selectFrom('participants').selectAll().where('token', '=', token).executeTakeFirst();
      if (!participant) return null;
      const room = await db.selectFrom('rooms').selectAll().where('id', '=', participant.room_id).executeTakeFirst();
      return room ? { participant, room } : null;
    },

    async insertInvite(roomId: number, token: string, now: Date): Promise<void> {
      await db.insertInto('room_guest_tokens').values({ token, room_id: roomId, kind: 'invite', created_at: now }).execute();
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
      await markEmptied(db, roomIds, now);
      return roomIds;
    },

    /**
     * started -> ended for rooms empty since before `emptiedBefore` and still
     * empty. One idempotent statement: every node may run it at the same time.
     */
    async endEmptyRooms(emptiedBefore: Date, now: Date): Promise<number[]> {
      const result = await sql<{ id: number }>`
        update rooms r set status = 'ended', ended_at = ${now}, updated_at = ${now}
        where r.status = 'started' and r.emptied_at is not null and r.emptied_at <= ${emptiedBefore}
          and not exists (select 1 from participants p where p.room_id = r.id and p.left_at is null)
        returning r.id`.execute(db);
      return result.rows.map((r) => Number(r.id));
    },
  };
}

class RoomFull extends Error {}
class ResumeExpired extends Error {}

export type ParticipantsRepo = ReturnType<typeof createParticipantsRepo>;

// Presence in SQL. The database is the one truth about who is in a call, so
// that every node of a cluster agrees. Joins and leaves of a room lock the
// room's row first: two last participants leaving at once cannot both miss
// that the room became empty. What presence does to the room's status
// (started, emptied) is the rooms repository's, called inside the same
// transactions.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/client.js';
import type { NetworkReport, ParticipantRole, ParticipantsTable } from '../../db/schema.js';
import type { RoomRow, RoomsRepo, WhichRoom } from '../rooms/rooms.repo.js';

/** A participant as presence needs it: its network reports are read only by the sessions (sessions.repo.ts). */
export type ParticipantRow = Omit<Selectable<ParticipantsTable>, 'network_reports'>;

/** Every column of ParticipantRow, named instead of `*`: the reports would ride along in every join otherwise. */
const PARTICIPANT_COLUMNS = Object.keys({
  token: true,
  room_id: true,
  role: true,
  display_name: true,
  node_id: true,
  joined_at: true,
  left_at: true,
} satisfies Record<keyof ParticipantRow, true>) as (keyof ParticipantRow)[];
const PARTICIPANT_SQL = sql.raw(PARTICIPANT_COLUMNS.join(', '));

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
 * `access_token = $1 or guest_token = $1 or id in (...)` scans the whole table.
 */
function opensRoom(token: string): WhichRoom {
  return sql<boolean>`id = (select id from rooms where access_token = ${token}
    union all select id from rooms where guest_token = ${token}
    union all select room_id from room_guest_tokens where token = ${token}
    limit 1)`;
}

/** Who is connected to the room, oldest first. */
function connected(db: Db | Tx, roomId: number): Promise<ParticipantRow[]> {
  return db.selectFrom('participants').select(PARTICIPANT_COLUMNS).where('room_id', '=', roomId).where('left_at', 'is', null).orderBy('joined_at').execute();
}

export function createParticipantsRepo(db: Db, rooms: RoomsRepo) {
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
     * from the room and the role the token grants. The join path of every call,
     * four round trips: begin, the statement that finds the room by the token,
     * locks and starts it, the one that reads who is connected and adds the
     * participant, commit.
     */
    async join(joinToken: string, now: Date, maxParticipants: number, make: (room: RoomRow, role: ParticipantRole) => NewParticipant): Promise<JoinOutcome> {
      return db.transaction().execute(async (tx): Promise<JoinOutcome> => {
        const room = await rooms.start(tx, opensRoom(joinToken), now);
        if (!room) {
          const exists = await tx.selectFrom('rooms').select('id').where(opensRoom(joinToken)).executeTakeFirst();
          return { ok: false, reason: exists ? 'closed' : 'not-found' };
        }
        const added = make(room, room.access_token === joinToken ? 'host' : 'guest');
        // Who is connected, and the new participant unless that is the maximum, in one
        // statement: it runs after the lock above, so its snapshot holds every join before.
        const { rows } = await sql<ParticipantRow & { added: boolean }>`
          with peers as (select ${PARTICIPANT_SQL} from participants where room_id = ${room.id} and left_at is null),
          inserted as (
            insert into participants (token, room_id, role, display_name, node_id, joined_at, left_at)
            select ${added.token}, ${room.id}, ${added.role}, ${added.display_name}, ${added.node_id}, ${now}, null
            where (select count(*) from peers) < ${maxParticipants}
            returning ${PARTICIPANT_SQL})
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
        const room = await rooms.start(tx, sql<boolean>`id = ${roomId}`, now);
        if (!room) return { ok: false, reason: 'closed' };
        const row = await tx
          .updateTable('participants')
          .set({ left_at: null, node_id: nodeId })
          .where('token', '=', token)
          .where('room_id', '=', roomId)
          .where('role', '=', role)
          .where((eb) => eb.or([eb('left_at', 'is', null), eb('left_at', '>', since)]))
          .returning(PARTICIPANT_COLUMNS)
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
        await rooms.markEmptied(tx, [current.room_id], now);
        return current.room_id;
      });
    },

    async findParticipant(token: string): Promise<{ participant: ParticipantRow; room: RoomRow } | null> {
      const participant = await db.selectFrom('participants').select(PARTICIPANT_COLUMNS).where('token', '=', token).executeTakeFirst();
      if (!participant) return null;
      const room = await db.selectFrom('rooms').selectAll().where('id', '=', participant.room_id).executeTakeFirst();
      return room ? { participant, room } : null;
    },

    /**
     * Adds a network report of the participant's browser, keeping the last
     * MAX_NETWORK_REPORTS (an hour at one report per 10 s): a long call's
     * summary follows how it went lately, and a row stays small.
     */
    async recordNetwork(token: string, report: NetworkReport): Promise<void> {
      await sql`
        update participants set network_reports =
          (case when jsonb_array_length(network_reports) >= ${MAX_NETWORK_REPORTS} then network_reports - 0 else network_reports end)
          || jsonb_build_array(${JSON.stringify(report)}::jsonb)
        where token = ${token}`.execute(db);
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
      await rooms.markEmptied(db, roomIds, now);
      return roomIds;
    },
  };
}

const MAX_NETWORK_REPORTS = 360;

class RoomFull extends Error {}
class ResumeExpired extends Error {}

export type ParticipantsRepo = ReturnType<typeof createParticipantsRepo>;

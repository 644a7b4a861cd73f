// Presence in SQL. The database is the one truth about who is in a call, so
// that every node of a cluster agrees. Joins and leaves of a room lock the
// room's row first: two last participants leaving at once cannot both miss
// that the room became empty. What presence does to the room's status
// (started, emptied) is the rooms repository's, called inside the same
// transactions.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Admission, NetworkReport, ParticipantRole, ParticipantsTable } from '../../db/schema.js';
import type { RoomRow, WhichRoom } from '../rooms/room-rows.repo.js';
import type { RoomsRepo } from '../rooms/rooms.repo.js';

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
  admission: true,
} satisfies Record<keyof ParticipantRow, true>) as (keyof ParticipantRow)[];
const PARTICIPANT_SQL = sql.raw(PARTICIPANT_COLUMNS.join(', '));

type Tx = Parameters<Parameters<ReturnType<Db['transaction']>['execute']>[0]>[0];

/** A new participant's row, without what the repository fills in (room, times, admission). */
export type NewParticipant = Omit<ParticipantRow, 'left_at' | 'room_id' | 'joined_at' | 'admission'>;

/**
 * `peers`: the others in the call at that moment, `waiting`: those waiting to
 * be let in (docs/design.md, "Waiting room"), both oldest first. `participant.admission` says
 * whether this one is in the call or waits.
 */
export type JoinOutcome =
  | { ok: true; room: RoomRow; participant: ParticipantRow; peers: ParticipantRow[]; waiting: ParticipantRow[] }
  | { ok: false; reason: 'not-found' | 'closed' | 'full' | 'expired' | 'denied' | 'removed' };

/** Limits of a join: people in the call, and people waiting to be let in. */
export interface JoinLimits {
  inCall: number;
  waiting: number;
}

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

/** Who is connected to the room, in the call or waiting, oldest first. */
function connected(db: Db | Tx, roomId: number): Promise<ParticipantRow[]> {
  return db.selectFrom('participants').select(PARTICIPANT_COLUMNS).where('room_id', '=', roomId).where('left_at', 'is', null).orderBy('joined_at').execute();
}

/** Splits the connected others into those in the call and those waiting. */
function byAdmission(rows: ParticipantRow[]): { peers: ParticipantRow[]; waiting: ParticipantRow[] } {
  return { peers: rows.filter((p) => p.admission === 'admitted'), waiting: rows.filter((p) => p.admission === 'waiting') };
}

/**
 * Whoever comes through a guest link of a room with a waiting room waits;
 * the host link never does (docs/design.md, "Waiting room"). As SQL on the room's row, so that
 * the statement that locks the room decides it without reading the room first.
 */
function waitsSql(joinToken: string) {
  return sql<boolean>`(enable_waiting_room and access_token <> ${joinToken})`;
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
    async join(joinToken: string, now: Date, limits: JoinLimits, make: (room: RoomRow, role: ParticipantRole) => NewParticipant): Promise<JoinOutcome> {
      return db.transaction().execute(async (tx): Promise<JoinOutcome> => {
        // A guest who waits does not start the call: the room's row is only locked.
        const room = await rooms.start(tx, opensRoom(joinToken), now, { unless: waitsSql(joinToken) });
        if (!room) {
          const exists = await tx.selectFrom('rooms').select('id').where(opensRoom(joinToken)).executeTakeFirst();
          return { ok: false, reason: exists ? 'closed' : 'not-found' };
        }
        const role: ParticipantRole = room.access_token === joinToken ? 'host' : 'guest';
        const added = make(room, role);
        const admission: Admission = room.enable_waiting_room && role === 'guest' ? 'waiting' : 'admitted';
        const limit = admission === 'waiting' ? limits.waiting : limits.inCall;
        // Who is connected, and the new participant unless its side (call or waiting room) is
        // full, in one statement: it runs after the lock above, so its snapshot holds every join before.
        const { rows } = await sql<ParticipantRow & { added: boolean }>`
          with present as (select ${PARTICIPANT_SQL} from participants where room_id = ${room.id} and left_at is null),
          inserted as (
            insert into participants (token, room_id, role, display_name, node_id, joined_at, left_at, admission)
            select ${added.token}, ${room.id}, ${added.role}, ${added.display_name}, ${added.node_id}, ${now}, null, ${admission}
            where (select count(*) from present where admission = ${admission}) < ${limit}
            returning ${PARTICIPANT_SQL})
          select true as added, * from inserted
          union all select false, * from present
          order by added desc, joined_at`.execute(tx);
        const [first, ...others] = rows.map(({ added: isNew, ...row }) => ({ isNew, row }));
        if (!first?.isNew) throw new RoomFull();
        return { ok: true, room, participant: first.row, ...byAdmission(others.map((p) => p.row)) };
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
        // The room is locked and, unless the participant turns out to be waiting, started.
        const room = await rooms.start(tx, sql<boolean>`id = ${roomId}`, now, {
          unless: sql<boolean>`exists (select 1 from participants where token = ${token} and room_id = ${roomId} and admission = 'waiting')`,
        });
        if (!room) return { ok: false, reason: 'closed' };
        const row = await tx
          .updateTable('participants')
          .set({ left_at: null, node_id: nodeId })
          .where('token', '=', token)
          .where('room_id', '=', roomId)
          .where('role', '=', role)
          .where('admission', 'in', ['waiting', 'admitted'])
          .where((eb) => eb.or([eb('left_at', 'is', null), eb('left_at', '>', since)]))
          .returning(PARTICIPANT_COLUMNS)
          .executeTakeFirst();
        if (!row) {
          // Turned away once, turned away for good: a removed or denied participant never comes back as itself.
          const turnedAway = await tx.selectFrom('participants').select('admission').where('token', '=', token).where('room_id', '=', roomId).executeTakeFirst();
          // Throwing rolls back the start of the room above.
          throw new NotResumed(turnedAway?.admission === 'removed' || turnedAway?.admission === 'denied' ? turnedAway.admission : 'expired');
        }
        const others = (await connected(tx, roomId)).filter((p) => p.token !== token);
        return { ok: true, room, participant: row, ...byAdmission(others) };
      }).catch((error: unknown): JoinOutcome => {
        if (error instanceof NotResumed) return { ok: false, reason: error.reason };
        throw error;
      });
    },

    /**
     * A host lets a waiting participant in: the room is locked and started,
     * the call must have room for one more. The participant, else why not.
     */
    async admit(roomId: number, token: string, now: Date, maxInCall: number): Promise<{ ok: true; participant: ParticipantRow } | { ok: false; reason: 'closed' | 'gone' | 'full' }> {
      return db.transaction().execute(async (tx) => {
        const room = await rooms.start(tx, sql<boolean>`id = ${roomId}`, now);
        if (!room) return { ok: false as const, reason: 'closed' as const };
        const present = await connected(tx, roomId);
        if (!present.some((p) => p.token === token && p.admission === 'waiting')) return { ok: false as const, reason: 'gone' as const };
        if (present.filter((p) => p.admission === 'admitted').length >= maxInCall) return { ok: false as const, reason: 'full' as const };
        const participant = await tx
          .updateTable('participants')
          .set({ admission: 'admitted' })
          .where('token', '=', token)
          .where('admission', '=', 'waiting')
          .returning(PARTICIPANT_COLUMNS)
          .executeTakeFirstOrThrow();
        return { ok: true as const, participant };
      });
    },

    /**
     * A host turns someone away: a waiting participant is denied, one in the
     * call is removed (guests only). Either way it has left, and its token
     * cannot resume. True when the participant was there to turn away.
     */
    async turnAway(roomId: number, token: string, decision: 'denied' | 'removed', now: Date): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        await tx.selectFrom('rooms').select('id').where('id', '=', roomId).forUpdate().execute();
        const result = await tx
          .updateTable('participants')
          .set({ admission: decision, left_at: now })
          .where('token', '=', token)
          .where('room_id', '=', roomId)
          .where('role', '=', 'guest')
          .where('admission', '=', decision === 'denied' ? 'waiting' : 'admitted')
          .where('left_at', 'is', null)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 0) return false;
        if (decision === 'removed') await rooms.markEmptied(tx, [roomId], now);
        return true;
      });
    },

    /** The participants connected to a room now, in the call or waiting, oldest first. */
    connected: (roomId: number) => connected(db, roomId),

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
class NotResumed extends Error {
  constructor(readonly reason: 'expired' | 'denied' | 'removed') {
    super(reason);
  }
}

export type ParticipantsRepo = ReturnType<typeof createParticipantsRepo>;

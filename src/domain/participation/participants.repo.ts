// Presence in SQL. The database is the one truth about who is in a call, so
// that every node of a cluster agrees. Joins and leaves of a room lock the
// room's row first: two last participants leaving at once cannot both miss
// that the room became empty. What presence does to the room's status
// (started, emptied) is the rooms repository's, called inside the same
// transactions. The repository is one object, in files by concern: joining
// here, a host's decisions in host-decisions.repo.ts, leaving in
// presence.repo.ts.
import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Admission, NetworkReport, ParticipantRole } from '../../db/schema.js';
import type { RoomRow, WhichRoom } from '../rooms/room-rows.repo.js';
import type { RoomsRepo } from '../rooms/rooms.repo.js';
import { hostDecisions } from './host-decisions.repo.js';
import { connected, PARTICIPANT_COLUMNS, PARTICIPANT_SQL, type ParticipantRow } from './participant-rows.repo.js';
import { presence } from './presence.repo.js';

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
    ...hostDecisions(db, rooms),
    ...presence(db, rooms),

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

    /** The participants connected to a room now, in the call or waiting, oldest first. */
    connected: (roomId: number) => connected(db, roomId),

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

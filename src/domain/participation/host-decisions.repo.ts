// A host's decisions in SQL (docs/design.md, "Waiting room"): letting a
// waiting guest in, turning a guest away. Each locks the room's row first,
// as joins and leaves do, so that it sees every join and leave before it.
import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { RoomsRepo } from '../rooms/rooms.repo.js';
import { connected, PARTICIPANT_COLUMNS, type ParticipantRow } from './participant-rows.repo.js';

export function hostDecisions(db: Db, rooms: RoomsRepo) {
  return {
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
  };
}

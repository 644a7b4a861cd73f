// What the presence statements share: a participant's columns, and who is
// connected to a room.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/client.js';
import type { ParticipantsTable } from '../../db/schema.js';

/** A participant as presence needs it: its network reports are read only by the sessions (sessions.repo.ts). */
export type ParticipantRow = Omit<Selectable<ParticipantsTable>, 'network_reports'>;

/** Every column of ParticipantRow, named instead of `*`: the reports would ride along in every join otherwise. */
export const PARTICIPANT_COLUMNS = Object.keys({
  token: true,
  room_id: true,
  role: true,
  display_name: true,
  node_id: true,
  joined_at: true,
  left_at: true,
  admission: true,
} satisfies Record<keyof ParticipantRow, true>) as (keyof ParticipantRow)[];
export const PARTICIPANT_SQL = sql.raw(PARTICIPANT_COLUMNS.join(', '));

type Tx = Parameters<Parameters<ReturnType<Db['transaction']>['execute']>[0]>[0];

/** Who is connected to the room, in the call or waiting, oldest first. */
export function connected(db: Db | Tx, roomId: number): Promise<ParticipantRow[]> {
  return db.selectFrom('participants').select(PARTICIPANT_COLUMNS).where('room_id', '=', roomId).where('left_at', 'is', null).orderBy('joined_at').execute();
}

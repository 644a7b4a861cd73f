// A room's create in SQL: one statement when nothing is written with the
// room, sent together with the other creates of its turn of the event loop;
// a transaction when guest links or an Idempotency-Key record go with it.
import { sql, type Transaction } from 'kysely';
import type { Db } from '../../db/client.js';
import { statementRolledBack } from '../../db/database-error.js';
import { prepare } from '../../db/prepared.js';
import type { Database } from '../../db/schema.js';
import { perTurnWrites } from '../support/per-turn-batches.js';
import {
  additionalEnabled,
  columnsOf,
  FIELD_COLUMNS,
  NEW_ROOM_COLUMNS,
  NEW_ROOM_TYPES,
  reread,
  ROOM_COLUMNS,
  type RoomFields,
  type RoomRow,
  type RoomScope,
  type RoomWithExtras,
} from './room-rows.repo.js';
import { ROOM_SETTING_NAMES, type RoomSettings } from './room-settings.js';

/** Further writes that must commit or roll back together with a new room (an Idempotency-Key record). */
export type OnRoomInserted = (tx: Transaction<Database>, row: RoomRow) => Promise<void>;

/** A create that writes nothing with the room; `scope` is the caller's. */
interface LoneCreate {
  scope: RoomScope;
  fields: RoomFields;
  settings: RoomSettings;
}

/** A list of a room just created: nobody is in it, and it has no additional guests yet. */
const EMPTY_LIST = sql<string[]>`'{}'::text[]`;

function pick<T extends object, K extends keyof T>(from: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((key) => [key, from[key]])) as Pick<T, K>;
}

export function roomCreates(db: Db) {
  // The create most requests make, compiled once (db/prepared.ts). Every column is
  // named, so that the statement has the same shape whatever the room. A room it
  // creates has nobody in it and no additional guests: of the extras only the
  // toggle needs the database, the two lists are constants.
  const insertRoom = prepare(db, (fields: RoomFields, settings: RoomSettings, scope: Pick<RoomScope, 'additionalParticipants'>) =>
    db
      .insertInto('rooms')
      .values({ ...pick(fields, FIELD_COLUMNS), ...pick(settings, ROOM_SETTING_NAMES) })
      .returning(ROOM_COLUMNS)
      .returning([EMPTY_LIST.as('current_participants'), EMPTY_LIST.as('waiting_participants'), EMPTY_LIST.as('additional_tokens'), additionalEnabled(scope)]),
  );
  // The creates asked in one turn of the event loop, as one statement
  // (support/per-turn-batches.ts): each column an array, unnested into rows in
  // the order of the arrays. The toggle differs by caller: createOne puts each
  // caller's on its row.
  const insertRooms = prepare(db, (fields: Record<keyof RoomFields, unknown[]>, settings: Record<keyof RoomSettings, unknown[]>) => {
    const arrays = [
      ...FIELD_COLUMNS.map((column) => sql`${fields[column]}::${sql.raw(NEW_ROOM_TYPES[column])}[]`),
      ...ROOM_SETTING_NAMES.map((name) => sql`${settings[name]}::${sql.raw(NEW_ROOM_TYPES[name])}[]`),
    ];
    return db
      .insertInto('rooms')
      .columns(NEW_ROOM_COLUMNS)
      .expression(sql`select * from unnest(${sql.join(arrays)})`)
      .returning(ROOM_COLUMNS)
      .returning([EMPTY_LIST.as('current_participants'), EMPTY_LIST.as('waiting_participants'), EMPTY_LIST.as('additional_tokens')]);
  });
  const createOne = perTurnWrites(
    async ({ scope, fields, settings }: LoneCreate): Promise<RoomWithExtras> => (await insertRoom(fields, settings, scope))[0]!,
    async (creates) => {
      const fields = columnsOf(creates.map((create) => create.fields), FIELD_COLUMNS);
      const settings = columnsOf(creates.map((create) => create.settings), ROOM_SETTING_NAMES);
      const inserted = new Map((await insertRooms(fields, settings)).map((row) => [row.token, row]));
      return creates.map(({ scope, fields }) => ({ ...inserted.get(fields.token)!, additional_enabled: scope.additionalParticipants }));
    },
    statementRolledBack,
  );

  return {
    /** A new room with `settings` and the other columns in `fields`; `scope` is the caller's: it decides the toggle in the extras. */
    async insert(scope: RoomScope, fields: RoomFields, settings: RoomSettings, guestTokens: string[], onInserted?: OnRoomInserted): Promise<RoomWithExtras> {
      // Nothing to write with the room: one statement, atomic by itself (no BEGIN
      // and COMMIT), shared with the other creates of this turn.
      if (!guestTokens.length && !onInserted) return createOne({ scope, fields, settings });
      return db.transaction().execute(async (tx) => {
        // One object for the columns (in V8 a spread of two objects this size takes a slow path).
        const row = await tx.insertInto('rooms').values(Object.assign({}, fields, settings)).returningAll().executeTakeFirstOrThrow();
        if (guestTokens.length) {
          await tx
            .insertInto('room_guest_tokens')
            .values(guestTokens.map((token) => ({ token, room_id: row.id, kind: 'additional' as const, created_at: fields.created_at })))
            .execute();
        }
        await onInserted?.(tx, row);
        return reread(tx, scope, row.id);
      });
    },
  };
}

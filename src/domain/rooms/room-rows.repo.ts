// What the rooms statements share: a room's columns and their SQL types, its
// version, the caller's scope, and the extras a room's representation reads
// in the same statement as the row.
import { sql, type ExpressionBuilder, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { Database, RoomsTable } from '../../db/schema.js';
import { ROOM_SETTING_NAMES, ROOM_SETTINGS, type RoomSettingName, type SqlType } from './room-settings.js';

export type RoomRow = Selectable<RoomsTable>;
type NewRoom = Omit<RoomRow, 'id' | 'version'>;
/** What a create writes besides the room's settings. */
export type RoomFields = Omit<NewRoom, RoomSettingName>;

/**
 * The room's version is its ETag (docs/security.md): every statement that
 * changes a column of the room's representation raises it by one in the
 * same write; presence bookkeeping (emptied_at, cleanup_base_at) does not. A
 * trigger did this until migration 0011: as a BEFORE UPDATE row trigger it
 * locked the row before each update, which cost a PUT 40–50 µs of PostgreSQL
 * (bench/README.md "Issue 15: the version in the write").
 * test/api/rooms-conditional.test.ts goes through each writer.
 */
export const NEXT_VERSION = sql<number>`version + 1`;

/**
 * The SQL type of each column a create writes besides the settings (theirs
 * are in room-settings.ts); the compiler checks that none is missing. A batch
 * of creates sends each column as one array of it.
 */
const FIELD_TYPES = {
  tenant_id: 'uuid',
  organization_id: 'uuid',
  doctor_id: 'uuid',
  token: 'text',
  access_token: 'text',
  guest_token: 'text',
  status: 'text',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
  started_at: 'timestamptz',
  ended_at: 'timestamptz',
  closed_at: 'timestamptz',
  emptied_at: 'timestamptz',
  cleanup_base_at: 'timestamptz',
} satisfies Record<keyof RoomFields, SqlType>;

export const FIELD_COLUMNS = Object.keys(FIELD_TYPES) as (keyof RoomFields)[];

/** The SQL type of each column a create writes. */
export const NEW_ROOM_TYPES: Record<keyof NewRoom, SqlType> = {
  ...FIELD_TYPES,
  ...(Object.fromEntries(ROOM_SETTING_NAMES.map((name) => [name, ROOM_SETTINGS[name].sqlType])) as Record<RoomSettingName, SqlType>),
};

/** What an insert writes: all but the generated id and version, in the order the create statements name them. */
export const NEW_ROOM_COLUMNS: (keyof NewRoom)[] = [...FIELD_COLUMNS, ...ROOM_SETTING_NAMES];

/** Every column of a room. The prepared statements name them instead of `*` (db/prepared.ts). */
export const ROOM_COLUMNS: (keyof RoomRow)[] = ['id', ...NEW_ROOM_COLUMNS, 'version'];

/** Writes of one turn column by column, as a batch statement takes them: each key's values in the writes' order. */
export function columnsOf<T, K extends keyof T>(writes: readonly T[], keys: readonly K[]): { [Key in K]: T[Key][] } {
  return Object.fromEntries(keys.map((key) => [key, writes.map((write) => write[key])])) as { [Key in K]: T[Key][] };
}

/** A condition on `rooms` that picks one room (by id, or by a join token). */
export type WhichRoom = RawBuilder<boolean>;

/**
 * If-Match as SQL: the write happens only while the room's version is one of
 * these (undefined = any version). The check is in the statement's WHERE, so
 * nothing can change the room between the check and the write.
 */
export type Versions = readonly number[] | undefined;

/** Which rooms a caller sees: the whole tenant, or one organization (with its doctors' rooms). */
export interface TokenScope {
  tenantId: string;
  organizationId: string | null;
}

/** A token's scope, with what a room's representation needs to know of it. */
export interface RoomScope extends TokenScope {
  /** Whether additional participants are on for the caller (its token lookup read it): their tokens are shown only then. */
  additionalParticipants: boolean;
}

/** What a room's representation needs besides the row, for the caller's scope. */
interface RoomExtras {
  current_participants: string[];
  waiting_participants: string[];
  additional_tokens: string[];
  /** The additional_participants toggle for the caller (its tokens are shown only while it is on). */
  additional_enabled: boolean;
}
export type RoomWithExtras = RoomRow & RoomExtras;

/**
 * The extras as columns correlated on rooms.id: they ride along in a select
 * from rooms and in the RETURNING of an insert or update, so a room endpoint
 * costs one statement.
 */
export function extras(scope: RoomScope) {
  return [...roomLists(), additionalEnabled(scope)];
}

/** The room's participant and additional guest lists, correlated on rooms.id. */
export function roomLists() {
  return [
    sql<string[]>`array(select p.token from participants p where p.room_id = rooms.id and p.left_at is null and p.admission = 'admitted' order by p.joined_at)`.as(
      'current_participants',
    ),
    sql<string[]>`array(select p.token from participants p where p.room_id = rooms.id and p.left_at is null and p.admission = 'waiting' order by p.joined_at)`.as(
      'waiting_participants',
    ),
    sql<string[]>`array(select g.token from room_guest_tokens g where g.room_id = rooms.id and g.kind = 'additional' order by g.created_at, g.token)`.as(
      'additional_tokens',
    ),
  ];
}

/** The caller's toggle, a value (a parameter of the prepared statements): the token lookup read it. */
export function additionalEnabled(scope: Pick<RoomScope, 'additionalParticipants'>) {
  return sql<boolean>`${scope.additionalParticipants}::boolean`.as('additional_enabled');
}

/**
 * The room with this token, if it is in the caller's scope (the organization
 * as a value, null for the whole tenant: one statement shape serves both
 * token kinds, as a statement compiled once needs). The room is found by its
 * token's unique index; the scope is a check on the row found, written with
 * IS NOT DISTINCT FROM, which no index serves (and which is `=` here:
 * tenant_id is never null, and a room without an organization is never in an
 * organization's scope). Written with `=`, the planner could find the room through
 * rooms_tenant_list_idx instead: on a table without statistics the two
 * estimates tie, and PGlite (no autovacuum) never has statistics, nor has a
 * new PostgreSQL install before its first automatic ANALYZE. GET room then
 * read every room of the tenant: 115 µs of PostgreSQL per GET at 100 rooms
 * against 48 µs by the token, and growing with the tenant (bench/README.md).
 */
export function byToken(scope: TokenScope, token: string) {
  return (eb: ExpressionBuilder<Database, 'rooms'>) =>
    eb.and([
      eb('token', '=', token),
      sql<boolean>`tenant_id is not distinct from ${scope.tenantId}::uuid`,
      eb.or([sql<boolean>`${scope.organizationId}::uuid is null`, sql<boolean>`organization_id is not distinct from ${scope.organizationId}::uuid`]),
    ]);
}

/** The room with its extras as they are inside `tx`, after writes to its guest tokens. */
export function reread(tx: Transaction<Database>, scope: RoomScope, id: number): Promise<RoomWithExtras> {
  return tx.selectFrom('rooms').selectAll().select(extras(scope)).where('id', '=', id).executeTakeFirstOrThrow();
}

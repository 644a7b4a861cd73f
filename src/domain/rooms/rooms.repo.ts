// Rooms in SQL: reads, writes and the room's status. The statement a call
// runs is chosen here, never by the services: the hottest ones are compiled
// once (db/prepared.ts) and some calls have a shape with fewer round trips;
// bench/README.md "Optimizations" has the measurements behind each.
import { sql, type ExpressionBuilder, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { Db } from '../../db/client.js';
import { statementRolledBack } from '../../db/database-error.js';
import { prepare } from '../../db/prepared.js';
import { WHOLE_TENANT, type Database, type RoomsTable } from '../../db/schema.js';
import type { PageQuery } from '../support/pagination.js';
import { perTurnWrites } from '../support/per-turn-batches.js';
import { CLOSED, ENDED, STARTED, cleanupBase } from './room-lifecycle.js';

export type RoomRow = Selectable<RoomsTable>;
export type NewRoom = Omit<RoomRow, 'id' | 'version'>;

/**
 * The room's version is its ETag (docs/security.md): every statement below
 * that changes a column of the room's representation raises it by one in the
 * same write; presence bookkeeping (emptied_at, cleanup_base_at) does not. A
 * trigger did this until migration 0011: as a BEFORE UPDATE row trigger it
 * locked the row before each update, which cost a PUT 40–50 µs of PostgreSQL
 * (bench/README.md "Issue 15: the version in the write").
 * test/api/rooms-conditional.test.ts goes through each writer.
 */
const NEXT_VERSION = sql<number>`version + 1`;

/**
 * Every column of a room; the compiler checks that none is missing. The
 * prepared statements name them instead of `*` (db/prepared.ts).
 */
const ROOM_COLUMNS = Object.keys({
  id: true,
  tenant_id: true,
  organization_id: true,
  doctor_id: true,
  token: true,
  access_token: true,
  guest_token: true,
  name: true,
  status: true,
  host_display_name: true,
  guest_display_name: true,
  enable_chat: true,
  enable_screenshare: true,
  enable_invites: true,
  enable_audio_indicator: true,
  enable_waiting_room: true,
  locale: true,
  scheduled_at: true,
  meeting_duration: true,
  return_url: true,
  host_return_url: true,
  permanent: true,
  created_at: true,
  updated_at: true,
  started_at: true,
  ended_at: true,
  closed_at: true,
  emptied_at: true,
  cleanup_base_at: true,
  version: true,
} satisfies Record<keyof RoomRow, true>) as (keyof RoomRow)[];

/** What an insert gives: all but the generated id and version. */
const NEW_ROOM_COLUMNS = ROOM_COLUMNS.filter((column): column is keyof NewRoom => column !== 'id' && column !== 'version');

/** The SQL type of each column a create writes: a batch of creates sends each column as one array of it. */
const NEW_ROOM_TYPES = {
  tenant_id: 'uuid',
  organization_id: 'uuid',
  doctor_id: 'uuid',
  token: 'text',
  access_token: 'text',
  guest_token: 'text',
  name: 'text',
  status: 'text',
  host_display_name: 'text',
  guest_display_name: 'text',
  enable_chat: 'boolean',
  enable_screenshare: 'boolean',
  enable_invites: 'boolean',
  enable_audio_indicator: 'boolean',
  enable_waiting_room: 'boolean',
  locale: 'text',
  scheduled_at: 'timestamptz',
  meeting_duration: 'integer',
  return_url: 'text',
  host_return_url: 'text',
  permanent: 'boolean',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
  started_at: 'timestamptz',
  ended_at: 'timestamptz',
  closed_at: 'timestamptz',
  emptied_at: 'timestamptz',
  cleanup_base_at: 'timestamptz',
} satisfies Record<keyof NewRoom, string>;

/** New rooms column by column: what the batch statement takes. */
type NewRoomColumns = { [Column in keyof NewRoom]: NewRoom[Column][] };

/** If-Match versions as the text of an integer array, for a batch of PUTs (null: any version). */
function versionsText(versions: Versions | null): string | null {
  return versions ? `{${versions.join(',')}}` : null;
}

function pick<T extends object, K extends keyof T>(from: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((key) => [key, from[key]])) as Pick<T, K>;
}

/** The settings a PUT replaces: every one is sent or returns to its default. */
const ROOM_SETTINGS = [
  'name',
  'meeting_duration',
  'scheduled_at',
  'return_url',
  'host_return_url',
  'host_display_name',
  'guest_display_name',
  'enable_chat',
  'enable_screenshare',
  'enable_invites',
  'enable_audio_indicator',
  'enable_waiting_room',
  'locale',
  'permanent',
] as const satisfies readonly (keyof NewRoom)[];
export type RoomSettings = Pick<NewRoom, (typeof ROOM_SETTINGS)[number]>;

/**
 * What a PUT writes (docs/api.md): every setting, and the new scheduled end, which
 * the cleanup time moves to unless activity already put it later.
 */
export interface RoomUpdate {
  settings: RoomSettings;
  updatedAt: Date;
  scheduledEnd: Date;
  /** doctor_id sent as null: the doctor comes off the room, which stays in its organization. */
  removeDoctor: boolean;
  /** The room as the service's checks read it and what they decided; absent when the PUT needed no check. */
  checked?: CheckedUpdate;
}

export interface CheckedUpdate {
  room: RoomRow;
  organizationId: string | null;
  doctorId: string | null;
  /** Additional guest links: new tokens, and how many of the newest to revoke. */
  guestTokens: { add: string[]; removeCount: number };
}

/** The values of the compiled PUT of a room found by token (updateRoomSettings). */
type SettingsUpdate = RoomSettings &
  RoomScope & { token: string; updatedAt: Date; scheduledEnd: Date; removeDoctor: boolean; versions: Versions | null };

/**
 * The SQL type of each value of a PUT of settings: a batch of them sends each
 * as one array. The If-Match versions of each PUT travel as the text of an
 * integer array (arrays of arrays must all have one length).
 */
const SETTINGS_UPDATE_TYPES = {
  token: 'text',
  tenantId: 'uuid',
  organizationId: 'uuid',
  additionalParticipants: 'boolean',
  versions: 'text',
  ...pick(NEW_ROOM_TYPES, ROOM_SETTINGS),
  updatedAt: 'timestamptz',
  scheduledEnd: 'timestamptz',
  removeDoctor: 'boolean',
} satisfies Record<keyof SettingsUpdate, string>;
const SETTINGS_UPDATE_KEYS = Object.keys(SETTINGS_UPDATE_TYPES) as (keyof SettingsUpdate)[];

/** PUTs of settings value by value: what the batch statement takes. */
type SettingsUpdateColumns = Record<keyof SettingsUpdate, unknown[]>;

/** The batch's column for a value: `arg_scheduled_end` for scheduledEnd. */
const argColumn = (key: keyof SettingsUpdate) => `arg_${key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)}`;
const arg = <Key extends keyof SettingsUpdate>(key: Key) => sql.ref<SettingsUpdate[Key]>(`u.${argColumn(key)}`);

/** A condition on `rooms` that picks one room (by id, or by a join token). */
export type WhichRoom = RawBuilder<boolean>;

/** Further writes that must commit or roll back together with a new room (an Idempotency-Key record). */
export type OnRoomInserted = (tx: Transaction<Database>, row: RoomRow) => Promise<void>;

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
export interface RoomExtras {
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
function extras(scope: RoomScope) {
  return [...roomLists(), additionalEnabled(scope)];
}

/** The room's participant and additional guest lists, correlated on rooms.id. */
function roomLists() {
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

/** The caller's toggle, a value (a parameter of the prepared statements): the token lookup read it. */
function additionalEnabled(scope: Pick<RoomScope, 'additionalParticipants'>) {
  return sql<boolean>`${scope.additionalParticipants}::boolean`.as('additional_enabled');
}

export function createRoomsRepo(db: Db) {
  // The create most requests make, compiled once (db/prepared.ts). Every column is
  // named, so that the statement has the same shape whatever the room. A room it
  // creates has nobody in it and no additional guests: of the extras only the
  // toggle needs the database, the two lists are constants.
  const insertRoom = prepare(db, (room: NewRoom & Pick<RoomScope, 'additionalParticipants'>) =>
    db
      .insertInto('rooms')
      .values(pick(room, NEW_ROOM_COLUMNS))
      .returning(ROOM_COLUMNS)
      .returning([
        sql<string[]>`'{}'::text[]`.as('current_participants'),
        sql<string[]>`'{}'::text[]`.as('waiting_participants'),
        sql<string[]>`'{}'::text[]`.as('additional_tokens'),
        additionalEnabled(room),
      ]),
  );
  // The creates asked in one turn of the event loop, as one statement
  // (support/per-turn-batches.ts): each column an array, unnested into rows in
  // the order of the arrays. The toggle differs by caller: createOne puts each
  // caller's on its row.
  const insertRooms = prepare(db, (columns: NewRoomColumns) =>
    db
      .insertInto('rooms')
      .columns(NEW_ROOM_COLUMNS)
      .expression(sql`select * from unnest(${sql.join(NEW_ROOM_COLUMNS.map((column) => sql`${columns[column]}::${sql.raw(NEW_ROOM_TYPES[column])}[]`))})`)
      .returning(ROOM_COLUMNS)
      .returning([
        sql<string[]>`'{}'::text[]`.as('current_participants'),
        sql<string[]>`'{}'::text[]`.as('waiting_participants'),
        sql<string[]>`'{}'::text[]`.as('additional_tokens'),
      ]),
  );
  const createOne = perTurnWrites(
    async ({ scope, room }: { scope: RoomScope; room: NewRoom }): Promise<RoomWithExtras> =>
      (await insertRoom({ ...room, additionalParticipants: scope.additionalParticipants }))[0]!,
    async (creates) => {
      const columns = Object.fromEntries(NEW_ROOM_COLUMNS.map((column) => [column, creates.map(({ room }) => room[column])])) as NewRoomColumns;
      const inserted = new Map((await insertRooms(columns)).map((row) => [row.token, row]));
      return creates.map(({ scope, room }) => ({ ...inserted.get(room.token)!, additional_enabled: scope.additionalParticipants }));
    },
    statementRolledBack,
  );
  // GET /api/rooms/{token}, compiled once.
  const findRoom = prepare(db, (args: RoomScope & { token: string }) =>
    db
      .selectFrom('rooms')
      .select(ROOM_COLUMNS)
      .select(extras(args))
      .where(byToken(args, args.token)),
  );
  // A PUT found by token, compiled once like GET: the doctor's removal and the
  // If-Match versions are values too, so one shape serves every call. The cleanup
  // time is cleanupBase (room-lifecycle.ts) in SQL.
  const updateRoomSettings = prepare(
    db,
    (a: SettingsUpdate) =>
      db
        .updateTable('rooms')
        .set({
          name: a.name,
          meeting_duration: a.meeting_duration,
          scheduled_at: a.scheduled_at,
          return_url: a.return_url,
          host_return_url: a.host_return_url,
          host_display_name: a.host_display_name,
          guest_display_name: a.guest_display_name,
          enable_chat: a.enable_chat,
          enable_screenshare: a.enable_screenshare,
          enable_invites: a.enable_invites,
          enable_audio_indicator: a.enable_audio_indicator,
          enable_waiting_room: a.enable_waiting_room,
          locale: a.locale,
          permanent: a.permanent,
          updated_at: a.updatedAt,
          version: NEXT_VERSION,
          doctor_id: sql<string | null>`case when ${a.removeDoctor}::boolean then null else doctor_id end`,
          cleanup_base_at: sql<Date>`greatest(${a.scheduledEnd}::timestamptz, cleanup_base_at)`,
        })
        .where(byToken(a, a.token))
        .where((eb) => eb.or([sql<boolean>`${a.versions}::int[] is null`, sql<boolean>`version = any(${a.versions}::int[])`]))
        .returning(ROOM_COLUMNS)
        .returning(extras(a)),
  );
  // The PUTs of settings asked in one turn, as one statement, as for creates:
  // each value an array, the PUTs joined to their rooms by token. Each PUT keeps
  // its own scope and If-Match; one that finds no room gets no row back. Two
  // PUTs of one room never share it (updateSettingsOne's key).
  const updateRoomsSettings = prepare(db, (a: SettingsUpdateColumns) =>
    db
      .updateTable('rooms')
      .from(
        sql`(select * from unnest(${sql.join(SETTINGS_UPDATE_KEYS.map((key) => sql`${a[key]}::${sql.raw(SETTINGS_UPDATE_TYPES[key])}[]`))}) as t(${sql.join(
          SETTINGS_UPDATE_KEYS.map((key) => sql.id(argColumn(key))),
        )}))`.as('u'),
      )
      .set({
        name: arg('name'),
        meeting_duration: arg('meeting_duration'),
        scheduled_at: arg('scheduled_at'),
        return_url: arg('return_url'),
        host_return_url: arg('host_return_url'),
        host_display_name: arg('host_display_name'),
        guest_display_name: arg('guest_display_name'),
        enable_chat: arg('enable_chat'),
        enable_screenshare: arg('enable_screenshare'),
        enable_invites: arg('enable_invites'),
        enable_audio_indicator: arg('enable_audio_indicator'),
        enable_waiting_room: arg('enable_waiting_room'),
        locale: arg('locale'),
        permanent: arg('permanent'),
        updated_at: arg('updatedAt'),
        version: NEXT_VERSION,
        doctor_id: sql<string | null>`case when ${arg('removeDoctor')} then null else rooms.doctor_id end`,
        cleanup_base_at: sql<Date>`greatest(${arg('scheduledEnd')}, rooms.cleanup_base_at)`,
      })
      .where(sql<boolean>`rooms.token = ${arg('token')}`)
      .where(sql<boolean>`rooms.tenant_id is not distinct from ${arg('tenantId')}`)
      .where(sql<boolean>`(${arg('organizationId')} is null or rooms.organization_id is not distinct from ${arg('organizationId')})`)
      .where(sql<boolean>`(${arg('versions')} is null or rooms.version = any(${arg('versions')}::int[]))`)
      .returning(ROOM_COLUMNS)
      .returning([...roomLists(), arg('additionalParticipants').as('additional_enabled')]),
  );
  const updateSettingsOne = perTurnWrites(
    async (update: SettingsUpdate): Promise<RoomWithExtras | null> => (await updateRoomSettings(update))[0] ?? null,
    async (updates) => {
      const columns = Object.fromEntries(
        SETTINGS_UPDATE_KEYS.map((key) => [key, updates.map((update) => (key === 'versions' ? versionsText(update.versions) : update[key]))]),
      ) as SettingsUpdateColumns;
      const updated = new Map((await updateRoomsSettings(columns)).map((row) => [row.token, row]));
      return updates.map((update) => updated.get(update.token) ?? null);
    },
    statementRolledBack,
    (update) => update.token,
  );
  /** The rooms in scope with their extras, for a page of the list (found through rooms_tenant_list_idx or rooms_organization_list_idx). */
  const listed = (scope: RoomScope) => {
    let query = db.selectFrom('rooms').selectAll().select(extras(scope)).where('tenant_id', '=', scope.tenantId);
    if (scope.organizationId !== null) query = query.where('organization_id', '=', scope.organizationId);
    return query;
  };
  /** The room with its extras as they are inside `tx`, after writes to its guest tokens. */
  const reread = (tx: Transaction<Database>, scope: RoomScope, id: number) =>
    tx.selectFrom('rooms').selectAll().select(extras(scope)).where('id', '=', id).executeTakeFirstOrThrow();

  return {
    /** `scope` is the caller's: it decides the toggle in the extras. */
    async insert(scope: RoomScope, room: NewRoom, guestTokens: string[], onInserted?: OnRoomInserted): Promise<RoomWithExtras> {
      // Nothing to write with the room: one statement, atomic by itself (no BEGIN
      // and COMMIT), shared with the other creates of this turn.
      if (!guestTokens.length && !onInserted) return createOne({ scope, room });
      return db.transaction().execute(async (tx) => {
        const row = await tx.insertInto('rooms').values(room).returningAll().executeTakeFirstOrThrow();
        if (guestTokens.length) {
          await tx
            .insertInto('room_guest_tokens')
            .values(guestTokens.map((token) => ({ token, room_id: row.id, kind: 'additional' as const, created_at: room.created_at })))
            .execute();
        }
        await onInserted?.(tx, row);
        return reread(tx, scope, row.id);
      });
    },

    async findByToken(scope: RoomScope, token: string): Promise<RoomRow | null> {
      return (await db.selectFrom('rooms').selectAll().where(byToken(scope, token)).executeTakeFirst()) ?? null;
    },

    async findWithExtras(scope: RoomScope, token: string): Promise<RoomWithExtras | null> {
      const [row] = await findRoom({ tenantId: scope.tenantId, organizationId: scope.organizationId, additionalParticipants: scope.additionalParticipants, token });
      return row ?? null;
    },

    /**
     * A PUT of the room with this token in scope. Null when there is no
     * such room or its version is not one of `versions`: nothing was written then.
     */
    async update(scope: RoomScope, token: string, update: RoomUpdate, versions?: Versions): Promise<RoomWithExtras | null> {
      if (versions?.length === 0) return null;
      const { checked } = update;
      if (checked === undefined) {
        // Nothing was read before: one statement finds the room, checks If-Match and writes.
        // One literal naming every argument: with the settings spread into it, V8
        // added the other properties one at a time, 10 µs of every PUT (bench/README.md).
        const s = update.settings;
        return updateSettingsOne({
          name: s.name,
          meeting_duration: s.meeting_duration,
          scheduled_at: s.scheduled_at,
          return_url: s.return_url,
          host_return_url: s.host_return_url,
          host_display_name: s.host_display_name,
          guest_display_name: s.guest_display_name,
          enable_chat: s.enable_chat,
          enable_screenshare: s.enable_screenshare,
          enable_invites: s.enable_invites,
          enable_audio_indicator: s.enable_audio_indicator,
          enable_waiting_room: s.enable_waiting_room,
          locale: s.locale,
          permanent: s.permanent,
          updatedAt: update.updatedAt,
          scheduledEnd: update.scheduledEnd,
          removeDoctor: update.removeDoctor,
          tenantId: scope.tenantId,
          organizationId: scope.organizationId,
          additionalParticipants: scope.additionalParticipants,
          token,
          versions: versions ?? null,
        });
      }
      const changes: Partial<NewRoom> = {
        ...update.settings,
        organization_id: checked.organizationId,
        doctor_id: checked.doctorId,
        updated_at: update.updatedAt,
        cleanup_base_at: cleanupBase(update.scheduledEnd, checked.room.cleanup_base_at),
      };
      const id = checked.room.id;
      const { add, removeCount } = checked.guestTokens;
      if (!add.length && removeCount === 0) {
        // No guest links change: one statement, atomic by itself.
        let write = db.updateTable('rooms').set({ ...changes, version: NEXT_VERSION }).where('id', '=', id);
        if (versions) write = write.where('version', 'in', versions);
        return (await write.returningAll().returning(extras(scope)).executeTakeFirst()) ?? null;
      }
      return db.transaction().execute(async (tx) => {
        let write = tx.updateTable('rooms').set({ ...changes, version: NEXT_VERSION }).where('id', '=', id);
        if (versions) write = write.where('version', 'in', versions);
        const row = await write.returningAll().executeTakeFirst();
        if (!row) return null;
        if (add.length) {
          await tx
            .insertInto('room_guest_tokens')
            .values(add.map((guestToken) => ({ token: guestToken, room_id: id, kind: 'additional' as const, created_at: update.updatedAt })))
            .execute();
        }
        if (removeCount > 0) {
          // The newest additional guests go first; the links already handed out early keep working.
          await tx
            .deleteFrom('room_guest_tokens')
            .where(
              'token',
              'in',
              tx
                .selectFrom('room_guest_tokens')
                .select('token')
                .where('room_id', '=', id)
                .where('kind', '=', 'additional')
                .orderBy('created_at', 'desc')
                .orderBy('token', 'desc')
                .limit(removeCount),
            )
            .execute();
        }
        return reread(tx, scope, id);
      });
    },

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
     * Number of rooms in scope, from the counts the triggers keep (never a scan):
     * the sum of the scope's shards (0007_sharded_counts.sql), at most 16 rows of the key.
     */
    async count(scope: RoomScope): Promise<number> {
      const row = await db
        .selectFrom('room_counts')
        .select((eb) => eb.fn.sum<string | number | null>('count').as('count'))
        .where('tenant_id', '=', scope.tenantId)
        .where('organization_id', '=', scope.organizationId ?? WHOLE_TENANT)
        .executeTakeFirst();
      return Number(row?.count ?? 0);
    },

    /** One page of rooms in scope with their extras, oldest first. */
    async page(scope: RoomScope, query: PageQuery): Promise<RoomWithExtras[]> {
      switch (query.kind) {
        case 'empty':
          return [];
        case 'offset': {
          // page=N: the skipping happens in the (tenant_id, id) index alone, and only
          // the page's own rows are read and get their extras. OFFSET over the full
          // select would compute the extras of every skipped room.
          let first = db.selectFrom('rooms').select('id').where('tenant_id', '=', scope.tenantId);
          if (scope.organizationId !== null) first = first.where('organization_id', '=', scope.organizationId);
          const start = first.orderBy('id').offset(query.offset).limit(1);
          return listed(scope).where('id', '>=', start).orderBy('id').limit(query.limit).execute();
        }
        case 'after':
          return listed(scope).where('id', '>', Number(query.key)).orderBy('id').limit(query.limit).execute();
        case 'before':
          return (await listed(scope).where('id', '<', Number(query.key)).orderBy('id', 'desc').limit(query.limit).execute()).reverse();
        case 'tail':
          return (await listed(scope).orderBy('id', 'desc').limit(query.limit).execute()).reverse();
      }
    },

    async countAdditionalTokens(roomId: number): Promise<number> {
      const row = await db
        .selectFrom('room_guest_tokens')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('room_id', '=', roomId)
        .where('kind', '=', 'additional')
        .executeTakeFirstOrThrow();
      return Number(row.n);
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

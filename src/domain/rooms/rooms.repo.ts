import { sql, type ExpressionBuilder, type Selectable, type Transaction } from 'kysely';
import type { Db } from '../../db/client.js';
import { prepare } from '../../db/prepared.js';
import { WHOLE_TENANT, type Database, type RoomsTable } from '../../db/schema.js';
import type { PageQuery } from '../support/pagination.js';
import { featureEnabledSql } from '../tenants/tenants.repo.js';

export type RoomRow = Selectable<RoomsTable>;
export type NewRoom = Omit<RoomRow, 'id' | 'version'>;

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

function pick<T extends object, K extends keyof T>(from: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((key) => [key, from[key]])) as Pick<T, K>;
}

/** The settings a PUT replaces (§4.4): every one is sent or returns to its default. */
export type RoomSettings = Pick<
  NewRoom,
  | 'name'
  | 'meeting_duration'
  | 'scheduled_at'
  | 'return_url'
  | 'host_return_url'
  | 'host_display_name'
  | 'guest_display_name'
  | 'enable_chat'
  | 'enable_screenshare'
  | 'enable_invites'
  | 'enable_audio_indicator'
  | 'permanent'
>;

/** The values of the compiled PUT of settings alone (updateSettings). */
type SettingsUpdate = RoomSettings &
  RoomScope & { token: string; updatedAt: Date; scheduledEnd: Date; removeDoctor: boolean; versions: Versions | null };

/** Further writes that must commit or roll back together with a new room (an Idempotency-Key record). */
export type OnRoomInserted = (tx: Transaction<Database>, row: RoomRow) => Promise<void>;

/**
 * If-Match as SQL: the write happens only while the room's version is one of
 * these (undefined = any version). The check is in the statement's WHERE, so
 * nothing can change the room between the check and the write.
 */
export type Versions = readonly number[] | undefined;

/** Which rooms a caller sees: the whole tenant, or one organization (with its doctors' rooms). */
export interface RoomScope {
  tenantId: string;
  organizationId: string | null;
}

/** What a room's representation needs besides the row, for the caller's scope. */
export interface RoomExtras {
  current_participants: string[];
  additional_tokens: string[];
  /** The additional_participants toggle for the caller (its tokens are shown only while it is on). */
  additional_enabled: boolean;
}
export type RoomWithExtras = RoomRow & RoomExtras;

/**
 * The extras as columns correlated on rooms.id: they ride along in a select
 * from rooms and in the RETURNING of an insert or update, so a room endpoint
 * costs one statement instead of one plus three (bench/README.md).
 */
function extras(scope: RoomScope) {
  return [
    sql<string[]>`array(select p.token from participants p where p.room_id = rooms.id and p.left_at is null order by p.joined_at)`.as(
      'current_participants',
    ),
    sql<string[]>`array(select g.token from room_guest_tokens g where g.room_id = rooms.id and g.kind = 'additional' order by g.created_at, g.token)`.as(
      'additional_tokens',
    ),
    additionalEnabled(scope),
  ];
}

/** The organization as a value, null for the whole tenant: one statement shape serves both token kinds. */
function inOrganization(organizationId: string | null) {
  return (eb: ExpressionBuilder<Database, 'rooms'>) =>
    eb.or([sql<boolean>`${organizationId}::uuid is null`, eb('organization_id', '=', organizationId)]);
}

function additionalEnabled(scope: RoomScope) {
  return featureEnabledSql(scope.tenantId, scope.organizationId, 'additional_participants').as('additional_enabled');
}

export function createRoomsRepo(db: Db) {
  function scoped(scope: RoomScope) {
    let query = db.selectFrom('rooms').selectAll().where('tenant_id', '=', scope.tenantId);
    if (scope.organizationId !== null) query = query.where('organization_id', '=', scope.organizationId);
    return query;
  }
  // The create most requests make, compiled once (db/prepared.ts). Every column is
  // named, so that the statement has the same shape whatever the room.
  const insertRoom = prepare(db, (room: NewRoom & { caller_organization_id: string | null }) =>
    db
      .insertInto('rooms')
      .values(pick(room, NEW_ROOM_COLUMNS))
      .returning(ROOM_COLUMNS)
      .returning([
        sql<string[]>`'{}'::text[]`.as('current_participants'),
        sql<string[]>`'{}'::text[]`.as('additional_tokens'),
        additionalEnabled({ tenantId: room.tenant_id, organizationId: room.caller_organization_id }),
      ]),
  );
  // GET /api/rooms/{token}, compiled once.
  const findRoom = prepare(db, (args: { tenantId: string; organizationId: string | null; token: string }) =>
    db
      .selectFrom('rooms')
      .select(ROOM_COLUMNS)
      .select(extras(args))
      .where('tenant_id', '=', args.tenantId)
      .where('token', '=', args.token)
      .where(inOrganization(args.organizationId)),
  );
  // A PUT of settings alone, compiled once like GET: the doctor's removal and the
  // If-Match versions are values too, so one shape serves every call.
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
          permanent: a.permanent,
          updated_at: a.updatedAt,
          doctor_id: sql<string | null>`case when ${a.removeDoctor}::boolean then null else doctor_id end`,
          cleanup_base_at: sql<Date>`greatest(${a.scheduledEnd}::timestamptz, cleanup_base_at)`,
        })
        .where('tenant_id', '=', a.tenantId)
        .where('token', '=', a.token)
        .where(inOrganization(a.organizationId))
        .where((eb) => eb.or([sql<boolean>`${a.versions}::int[] is null`, sql<boolean>`version = any(${a.versions}::int[])`]))
        .returning(ROOM_COLUMNS)
        .returning(extras(a)),
  );
  const listed = (scope: RoomScope) => scoped(scope).select(extras(scope));
  /** The room with its extras as they are inside `tx`, after writes to its guest tokens. */
  const reread = (tx: Transaction<Database>, scope: RoomScope, id: number) =>
    tx.selectFrom('rooms').selectAll().select(extras(scope)).where('id', '=', id).executeTakeFirstOrThrow();

  return {
    /** `scope` is the caller's: it decides the toggle in the extras. */
    async insert(scope: RoomScope, room: NewRoom, guestTokens: string[], onInserted?: OnRoomInserted): Promise<RoomWithExtras> {
      // The common create is one statement, atomic by itself: no BEGIN and COMMIT round trips.
      // A room this statement creates has nobody in it and no additional guests, so of
      // its extras only the toggle needs the database: the two correlated sub-selects
      // would cost PostgreSQL a fifth of a create's work for two empty arrays, which the
      // statement returns as constants instead (bench/README.md).
      if (!guestTokens.length && !onInserted) {
        const [row] = await insertRoom({ ...room, caller_organization_id: scope.organizationId });
        return row!;
      }
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
      return (await scoped(scope).where('token', '=', token).executeTakeFirst()) ?? null;
    },

    async findWithExtras(scope: RoomScope, token: string): Promise<RoomWithExtras | null> {
      const [row] = await findRoom({ tenantId: scope.tenantId, organizationId: scope.organizationId, token });
      return row ?? null;
    },

    /** Null when the room is gone or its version is not one of `versions`: nothing was written then. */
    async update(
      scope: RoomScope,
      id: number,
      changes: Partial<NewRoom>,
      guestTokens: { add: string[]; removeCount: number; at: Date },
      versions?: Versions,
    ): Promise<RoomWithExtras | null> {
      if (versions?.length === 0) return null;
      if (!guestTokens.add.length && guestTokens.removeCount === 0) {
        // Settings only: one statement, atomic by itself.
        let update = db.updateTable('rooms').set(changes).where('id', '=', id);
        if (versions) update = update.where('version', 'in', versions);
        return (await update.returningAll().returning(extras(scope)).executeTakeFirst()) ?? null;
      }
      return db.transaction().execute(async (tx) => {
        let update = tx.updateTable('rooms').set(changes).where('id', '=', id);
        if (versions) update = update.where('version', 'in', versions);
        const row = await update.returningAll().executeTakeFirst();
        if (!row) return null;
        if (guestTokens.add.length) {
          await tx
            .insertInto('room_guest_tokens')
            .values(guestTokens.add.map((token) => ({ token, room_id: id, kind: 'additional' as const, created_at: guestTokens.at })))
            .execute();
        }
        if (guestTokens.removeCount > 0) {
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
                .limit(guestTokens.removeCount),
            )
            .execute();
        }
        return reread(tx, scope, id);
      });
    },

    /**
     * A PUT of settings alone, found by token in scope, in one statement. The
     * cleanup time becomes the new scheduled end unless activity already put it
     * later (cleanupBase, in SQL); `removeDoctor` takes the doctor off the room.
     * Null when no room in scope has the token or its version is not one of
     * `versions`: nothing was written then.
     */
    async updateSettings(
      scope: RoomScope,
      token: string,
      settings: RoomSettings,
      change: { updatedAt: Date; scheduledEnd: Date; removeDoctor: boolean },
      versions?: Versions,
    ): Promise<RoomWithExtras | null> {
      if (versions?.length === 0) return null;
      const [row] = await updateRoomSettings({
        ...settings,
        ...change,
        tenantId: scope.tenantId,
        organizationId: scope.organizationId,
        token,
        versions: versions ?? null,
      });
      return row ?? null;
    },

    /** Closes the room unless it is closed already (or its version is not one of `versions`); the closed row, else null. */
    async close(id: number, at: Date, versions?: Versions): Promise<RoomRow | null> {
      if (versions?.length === 0) return null;
      let update = db.updateTable('rooms').set({ status: 'closed', closed_at: at, updated_at: at }).where('id', '=', id).where('status', '!=', 'closed');
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

    /** Number of rooms in scope, from the counts the triggers keep (never a scan). */
    async count(scope: RoomScope): Promise<number> {
      const row = await db
        .selectFrom('room_counts')
        .select('count')
        .where('tenant_id', '=', scope.tenantId)
        .where('organization_id', '=', scope.organizationId ?? WHOLE_TENANT)
        .executeTakeFirst();
      return row ? Number(row.count) : 0;
    },

    /** One page of rooms in scope with their extras, oldest first. */
    async page(scope: RoomScope, query: PageQuery): Promise<RoomWithExtras[]> {
      switch (query.kind) {
        case 'empty':
          return [];
        case 'offset': {
          // page=N: the skipping happens in the (tenant_id, id) index alone, and only
          // the page's own rows are read and get their extras. OFFSET over the full
          // select would compute the extras of every skipped room (bench/README.md).
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

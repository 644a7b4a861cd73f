// A PUT of a room in SQL. Settings alone (nothing for the service to check
// first): one statement finds the room by token, checks If-Match and writes,
// sent together with the other PUTs of its turn of the event loop. After the
// service's checks: the room by id, in a transaction when guest links change.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import { statementRolledBack } from '../../db/database-error.js';
import { prepare } from '../../db/prepared.js';
import { perTurnWrites } from '../support/per-turn-batches.js';
import { cleanupBase } from './room-lifecycle.js';
import { byToken, columnsOf, extras, NEXT_VERSION, reread, ROOM_COLUMNS, roomLists, type RoomRow, type RoomScope, type RoomWithExtras, type Versions } from './room-rows.repo.js';
import { ROOM_SETTING_NAMES, ROOM_SETTINGS, type RoomSettings, type SqlType } from './room-settings.js';

/**
 * What a PUT writes (docs/api.md): every setting, and the new scheduled end, which
 * the cleanup time moves to unless activity already put it later.
 */
interface RoomUpdate {
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

/** The values of a PUT of settings alone besides the settings themselves. */
interface SettingsPut {
  token: string;
  tenantId: string;
  organizationId: string | null;
  additionalParticipants: boolean;
  versions: Versions | null;
  updatedAt: Date;
  scheduledEnd: Date;
  removeDoctor: boolean;
}

/**
 * The SQL type of each: a batch of PUTs sends each value as one array. The
 * If-Match versions of each PUT travel as the text of an integer array
 * (arrays of arrays must all have one length).
 */
const PUT_TYPES = {
  token: 'text',
  tenantId: 'uuid',
  organizationId: 'uuid',
  additionalParticipants: 'boolean',
  versions: 'text',
  updatedAt: 'timestamptz',
  scheduledEnd: 'timestamptz',
  removeDoctor: 'boolean',
} satisfies Record<keyof SettingsPut, SqlType>;
const PUT_KEYS = Object.keys(PUT_TYPES) as (keyof SettingsPut)[];

/** If-Match versions as the text of an integer array, for a batch of PUTs (null: any version). */
function versionsText(versions: Versions | null): string | null {
  return versions ? `{${versions.join(',')}}` : null;
}

/** The batch's column for a value: `arg_scheduled_end` for scheduledEnd, `arg_enable_chat` for a setting. */
const argColumn = (key: string) => `arg_${key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)}`;
const arg = <T>(key: keyof SettingsPut | keyof RoomSettings) => sql.ref<T>(`u.${argColumn(key)}`);

/** The settings as the stand-ins of a compiled statement (db/prepared.ts) give them: one value each. */
function settingValues<T>(value: (name: keyof RoomSettings) => T): Record<keyof RoomSettings, T> {
  return Object.fromEntries(ROOM_SETTING_NAMES.map((name) => [name, value(name)])) as Record<keyof RoomSettings, T>;
}

export function roomUpdates(db: Db) {
  // A PUT found by token, compiled once like GET: the doctor's removal and the
  // If-Match versions are values too, so one shape serves every call. The cleanup
  // time is cleanupBase (room-lifecycle.ts) in SQL.
  const updateRoomSettings = prepare(db, (put: SettingsPut, settings: RoomSettings) =>
    db
      .updateTable('rooms')
      .set(settingValues((name) => settings[name]) as RoomSettings)
      .set({
        updated_at: put.updatedAt,
        version: NEXT_VERSION,
        doctor_id: sql<string | null>`case when ${put.removeDoctor}::boolean then null else doctor_id end`,
        cleanup_base_at: sql<Date>`greatest(${put.scheduledEnd}::timestamptz, cleanup_base_at)`,
      })
      .where(byToken(put, put.token))
      .where((eb) => eb.or([sql<boolean>`${put.versions}::int[] is null`, sql<boolean>`version = any(${put.versions}::int[])`]))
      .returning(ROOM_COLUMNS)
      .returning(extras(put)),
  );
  // The PUTs of settings asked in one turn, as one statement, as for creates:
  // each value an array, the PUTs joined to their rooms by token. Each PUT keeps
  // its own scope and If-Match; one that finds no room gets no row back. Two
  // PUTs of one room never share it (updateSettingsOne's key).
  const updateRoomsSettings = prepare(db, (puts: Record<keyof SettingsPut, unknown[]>, settings: Record<keyof RoomSettings, unknown[]>) => {
    const arrays = [
      ...PUT_KEYS.map((key) => sql`${puts[key]}::${sql.raw(PUT_TYPES[key])}[]`),
      ...ROOM_SETTING_NAMES.map((name) => sql`${settings[name]}::${sql.raw(ROOM_SETTINGS[name].sqlType)}[]`),
    ];
    const names = [...PUT_KEYS, ...ROOM_SETTING_NAMES].map((key) => sql.id(argColumn(key)));
    return db
      .updateTable('rooms')
      .from(sql`(select * from unnest(${sql.join(arrays)}) as t(${sql.join(names)}))`.as('u'))
      .set(settingValues((name) => arg(name)) as Record<keyof RoomSettings, RawBuilder<never>>)
      .set({
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
      .returning([...roomLists(), arg<boolean>('additionalParticipants').as('additional_enabled')]);
  });
  const updateSettingsOne = perTurnWrites(
    async ({ put, settings }: { put: SettingsPut; settings: RoomSettings }): Promise<RoomWithExtras | null> =>
      (await updateRoomSettings(put, settings))[0] ?? null,
    async (updates) => {
      const puts = Object.fromEntries(
        PUT_KEYS.map((key) => [key, updates.map(({ put }) => (key === 'versions' ? versionsText(put.versions) : put[key]))]),
      ) as Record<keyof SettingsPut, unknown[]>;
      const settings = columnsOf(updates.map((update) => update.settings), ROOM_SETTING_NAMES);
      const updated = new Map((await updateRoomsSettings(puts, settings)).map((row) => [row.token, row]));
      return updates.map(({ put }) => updated.get(put.token) ?? null);
    },
    statementRolledBack,
    ({ put }) => put.token,
  );

  return {
    /**
     * A PUT of the room with this token in scope. Null when there is no
     * such room or its version is not one of `versions`: nothing was written then.
     */
    async update(scope: RoomScope, token: string, update: RoomUpdate, versions?: Versions): Promise<RoomWithExtras | null> {
      if (versions?.length === 0) return null;
      const { checked } = update;
      if (checked !== undefined) return writeChecked(db, scope, update, checked, versions);
      // Nothing was read before: one statement finds the room, checks If-Match and writes.
      // The settings go as their own object, beside one literal naming every other
      // value: spread into one object, V8 added the properties one at a time,
      // 10 µs of every PUT (bench/README.md).
      const put: SettingsPut = {
        token,
        tenantId: scope.tenantId,
        organizationId: scope.organizationId,
        additionalParticipants: scope.additionalParticipants,
        versions: versions ?? null,
        updatedAt: update.updatedAt,
        scheduledEnd: update.scheduledEnd,
        removeDoctor: update.removeDoctor,
      };
      return updateSettingsOne({ put, settings: update.settings });
    },
  };
}

/** A PUT after the service's checks: the room by id, with what they decided, in a transaction when guest links change too. */
async function writeChecked(db: Db, scope: RoomScope, update: RoomUpdate, checked: CheckedUpdate, versions: Versions): Promise<RoomWithExtras | null> {
  const id = checked.room.id;
  const changes = {
    organization_id: checked.organizationId,
    doctor_id: checked.doctorId,
    updated_at: update.updatedAt,
    cleanup_base_at: cleanupBase(update.scheduledEnd, checked.room.cleanup_base_at),
    version: NEXT_VERSION,
  };
  const { add, removeCount } = checked.guestTokens;
  if (!add.length && removeCount === 0) {
    // No guest links change: one statement, atomic by itself.
    let write = db.updateTable('rooms').set(update.settings).set(changes).where('id', '=', id);
    if (versions) write = write.where('version', 'in', versions);
    return (await write.returningAll().returning(extras(scope)).executeTakeFirst()) ?? null;
  }
  return db.transaction().execute(async (tx) => {
    let write = tx.updateTable('rooms').set(update.settings).set(changes).where('id', '=', id);
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
}

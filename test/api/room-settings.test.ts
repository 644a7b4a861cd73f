// A room's settings are declared once (src/domain/rooms/room-settings.ts;
// docs/design.md, "Adding a room setting"). What names them elsewhere must
// agree with that list: the API's body and Room schemas, the defaults the API
// documents, and the columns' types the batched statements cast to.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.js';
import { NEW_ROOM_TYPES } from '../../src/domain/rooms/room-rows.repo.js';
import { ROOM_SETTING_NAMES, storedSettings } from '../../src/domain/rooms/room-settings.js';
import { RoomInputSchema, RoomSchema } from '../../src/http/schemas.js';
import { openTestDatabase } from '../helpers/database.js';

/** Fields of a create's or a PUT's body that are not settings: what the service's checks decide (room-checks.ts). */
const CHECKED_FIELDS = ['additional_guest_count', 'doctor_id'];

/** The names information_schema gives the SQL types the statements cast to. */
const INFORMATION_SCHEMA_TYPE = { text: 'text', integer: 'integer', boolean: 'boolean', timestamptz: 'timestamp with time zone', uuid: 'uuid' };

let database: DatabaseHandle;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());

describe('the room settings', () => {
  it('are the fields of the create and PUT body, besides the checked ones', () => {
    const fields = Object.keys(RoomInputSchema.properties).filter((field) => !CHECKED_FIELDS.includes(field));
    expect(fields.sort()).toEqual([...ROOM_SETTING_NAMES].sort());
  });

  it('are each a field of the Room resource', () => {
    expect(Object.keys(RoomSchema.properties)).toEqual(expect.arrayContaining(ROOM_SETTING_NAMES));
  });

  it('store, when not sent, the default the API documents', () => {
    const stored = storedSettings({ name: 'Room', meeting_duration: 30, scheduled_at: '2030-03-10T14:00:00Z' }, { tenantReturnUrl: 'https://tenant.example/' });
    const defaults = ROOM_SETTING_NAMES.flatMap((name) => {
      const schema: object = RoomInputSchema.properties[name];
      return 'default' in schema ? [[name, schema.default] as const] : [];
    });
    expect(defaults.length).toBeGreaterThanOrEqual(6);
    for (const [name, documented] of defaults) expect(stored[name], name).toBe(documented);
  });

  it("give each column of a create its column's type, as the batched statements cast to it", async () => {
    const { rows } = await sql<{ column_name: string; data_type: string }>`
      select column_name, data_type from information_schema.columns where table_name = 'rooms'`.execute(database.db);
    const types = Object.fromEntries(rows.map((row) => [row.column_name, row.data_type]));
    for (const [column, type] of Object.entries(NEW_ROOM_TYPES)) expect(types[column], column).toBe(INFORMATION_SCHEMA_TYPE[type]);
  });
});

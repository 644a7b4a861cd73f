// A room's settings: what a create sets and a PUT replaces (docs/api.md), each
// a column of rooms under the same name. ROOM_SETTINGS is the one list of
// them: the rooms repository's column lists and statements (alone and in
// batches), what the service stores when a setting is not sent, and the Room
// resource's fields all follow it (docs/design.md, "Adding a room setting").
import type { RoomsTable } from '../../db/schema.js';

/** A column's SQL type: a batch of writes sends each column as one array of it. */
export type SqlType = 'text' | 'integer' | 'boolean' | 'timestamptz' | 'uuid';

/** What a stored setting may fall back on: the caller's tenant, as its token lookup read it. */
interface SettingDefaults {
  tenantReturnUrl: string;
}

interface RoomSetting<Sent, Stored> {
  readonly sqlType: SqlType;
  /**
   * The value stored for the one sent, which the route's schema has checked.
   * Undefined when it was not sent: a PUT returns the setting to its default.
   */
  store(sent: Sent, defaults: SettingDefaults): Stored;
}

const setting = <Sent, Stored>(sqlType: SqlType, store: (sent: Sent, defaults: SettingDefaults) => Stored): RoomSetting<Sent, Stored> => ({
  sqlType,
  store,
});

/** On or off, `fallback` when not sent. */
const flag = (fallback: boolean) => setting('boolean', (sent: boolean | undefined) => sent ?? fallback);

/** Text stored as sent; null when not sent. */
const optionalText = () => setting('text', (sent: string | null | undefined) => sent ?? null);

/** A pre-filled display name: trimmed, null when blank (the page then says "Host" or "Guest"). */
const displayName = () => setting('text', (sent: string | null | undefined) => sent?.trim() || null);

/** In the order a PUT writes them. The compiler checks each against its column's type in db/schema.ts. */
export const ROOM_SETTINGS = {
  name: setting('text', (sent: string) => sent.trim()),
  meeting_duration: setting('integer', (sent: number) => sent),
  scheduled_at: setting('timestamptz', (sent: string) => new Date(sent)),
  return_url: setting('text', (sent: string | null | undefined, defaults) => sent ?? defaults.tenantReturnUrl),
  host_return_url: optionalText(),
  host_display_name: displayName(),
  guest_display_name: displayName(),
  enable_chat: flag(true),
  enable_screenshare: flag(true),
  enable_invites: flag(true),
  enable_audio_indicator: flag(true),
  enable_waiting_room: flag(false),
  locale: optionalText(),
  permanent: flag(false),
  enable_recording: flag(false),
} satisfies { [Column in keyof RoomsTable]?: RoomSetting<never, RoomsTable[Column]> };

export type RoomSettingName = keyof typeof ROOM_SETTINGS;
export const ROOM_SETTING_NAMES = Object.keys(ROOM_SETTINGS) as RoomSettingName[];

/** A room's settings as stored. */
export type RoomSettings = { [Name in RoomSettingName]: RoomsTable[Name] };

type Sent<Name extends RoomSettingName> = Parameters<(typeof ROOM_SETTINGS)[Name]['store']>[0];
type WithDefault = { [Name in RoomSettingName]: undefined extends Sent<Name> ? Name : never }[RoomSettingName];

/** The settings as a request sends them: one with a default may be left out. */
export type SentSettings = { [Name in Exclude<RoomSettingName, WithDefault>]: Sent<Name> } & { [Name in WithDefault]?: Sent<Name> };

/**
 * Every setting, undefined. An object that gets its settings in a loop starts
 * as a copy of this one, so it has one shape however many settings there are:
 * from an empty object, V8 turns one that gets many properties in a loop (20
 * in Node 20) into a dictionary, slower to fill and to read.
 */
const EVERY_SETTING = Object.fromEntries(ROOM_SETTING_NAMES.map((name) => [name, undefined])) as Readonly<Record<RoomSettingName, undefined>>;

/** The settings a create or a PUT stores: each as sent, or its default. */
export function storedSettings(sent: SentSettings, defaults: SettingDefaults): RoomSettings {
  const stored: Record<RoomSettingName, unknown> = { ...EVERY_SETTING };
  for (const name of ROOM_SETTING_NAMES) stored[name] = ROOM_SETTINGS[name].store(sent[name] as never, defaults);
  return stored as RoomSettings;
}

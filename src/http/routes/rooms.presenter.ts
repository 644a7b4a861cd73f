// The Room resource (docs/api.md) from a stored room. Fields without a value
// (started_at before the start, ...) are omitted, as the interface allows.
// The room's settings go out as stored, one by one from their list
// (domain/rooms/room-settings.ts).
import type { Static } from 'typebox';
import { Value } from 'typebox/value';
import { ROOM_SETTING_NAMES, type RoomSettingName } from '../../domain/rooms/room-settings.js';
import type { RoomView } from '../../domain/rooms/rooms.service.js';
import { RoomSchema } from '../schemas.js';

type Room = Static<typeof RoomSchema>;

/**
 * Every field of the Room resource, undefined, in the response schema's order.
 * An answer starts as a copy of it, so every answer has one shape: from an
 * empty object, V8 turns one that gets many properties in a loop (20 in Node
 * 20) into a dictionary, slower to fill and to serialize.
 */
const FIELDS = Object.fromEntries(Object.keys(RoomSchema.properties).map((field) => [field, undefined])) as unknown as Room;

/** The settings shown as null without a value, where the response schema allows null; the others are left out then. */
const NULL_SHOWN = new Set(ROOM_SETTING_NAMES.filter((name) => Value.Check(RoomSchema.properties[name], null)));

/** A stored setting as the Room resource shows it: a time in ISO 8601, no value as null or left out. */
function shown(name: RoomSettingName, value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  return value === null && !NULL_SHOWN.has(name) ? undefined : value;
}

function joinUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/join/${token}`;
}

export function presentRoom(view: RoomView, publicUrl: string): Room {
  const { row } = view;
  const room = { ...FIELDS };
  const settings: Partial<Record<RoomSettingName, unknown>> = room;
  for (const name of ROOM_SETTING_NAMES) settings[name] = shown(name, row[name]);
  room.token = row.token;
  room.status = row.status;
  room.access_token = row.access_token;
  room.guest_token = row.guest_token;
  room.host_join_url = joinUrl(publicUrl, row.access_token);
  room.guest_join_url = joinUrl(publicUrl, row.guest_token);
  room.current_participants = view.currentParticipants;
  room.waiting_participants = view.waitingParticipants;
  room.expected_guest_count = 1 + view.additionalTokens.length;
  room.doctor_id = row.doctor_id ?? undefined;
  room.additional_access_tokens = view.showAdditionalTokens
    ? view.additionalTokens.map((token) => ({ token, join_url: joinUrl(publicUrl, token) }))
    : undefined;
  room.created_at = row.created_at.toISOString();
  room.updated_at = row.updated_at.toISOString();
  room.started_at = row.started_at?.toISOString();
  room.ended_at = row.ended_at?.toISOString();
  room.closed_at = row.closed_at?.toISOString();
  return room;
}

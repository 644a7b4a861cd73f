// The postMessage protocol between the join page and the window that frames
// it (docs/embedding.md; docs/design.md, "Embedding"). The types are the
// integrators' (src/client/embed.d.ts); these are the only two readers of
// messages: the join page parses commands (web/src/embed-bridge.ts), the
// element parses events (web/src/embed/parley-room.ts). Both take a message
// only in the documented shape; anything else is null, never an error.
// Shared with web/: no Node imports here.
import type { ParleyCommandMessage, ParleyEventMessage, ParleyProtocolVersion } from '../client/embed.js';
import { MAX_DISPLAY_NAME_LENGTH } from './protocol.js';

export const PROTOCOL_VERSION: ParleyProtocolVersion = 1;

type Obj = Record<string, unknown>;

/** A plain object, as postMessage's structured clone delivers one: no array, no Date, Map or other class. */
const isPlain = (v: unknown): v is Obj => typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;
/** Only these own keys (a `__proto__` that came as data is a key like any other, and not one of these). */
const onlyKeys = (o: Obj, allowed: readonly string[]) => Object.keys(o).every((k) => allowed.includes(k));
const oneOf = <T extends string>(v: unknown, values: readonly T[]): v is T => typeof v === 'string' && (values as readonly string[]).includes(v);
const isName = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_DISPLAY_NAME_LENGTH;

/** Each command's arguments: name and whether it is valid. */
const COMMAND_ARGUMENTS: Record<ParleyCommandMessage['command'], Record<string, (v: unknown) => boolean>> = {
  toggle_microphone: { enabled: (v) => typeof v === 'boolean' },
  toggle_camera: { enabled: (v) => typeof v === 'boolean' },
  toggle_chat: {},
  leave: {},
  admit: { display_name: isName },
  deny: { display_name: isName },
};

/** A command from the parent window, or null when `data` is anything but a documented one. */
export function parseEmbedCommand(data: unknown): ParleyCommandMessage | null {
  if (!isPlain(data) || !onlyKeys(data, ['parley', 'command', 'detail']) || data.parley !== PROTOCOL_VERSION) return null;
  const command = data.command;
  if (typeof command !== 'string' || !Object.hasOwn(COMMAND_ARGUMENTS, command)) return null;
  const args = COMMAND_ARGUMENTS[command as ParleyCommandMessage['command']];
  const detail = data.detail === undefined && !Object.hasOwn(data, 'detail') ? {} : data.detail;
  if (!isPlain(detail) || !onlyKeys(detail, Object.keys(args))) return null;
  if (!Object.entries(detail).every(([key, value]) => args[key]!(value))) return null;
  return { parley: PROTOCOL_VERSION, command, detail: { ...detail } } as ParleyCommandMessage;
}

const ROLES = ['host', 'guest'] as const;
const person = { role: (v: unknown) => oneOf(v, ROLES), display_name: (v: unknown) => typeof v === 'string' };

const EVENT_DETAILS: Record<ParleyEventMessage['event'], Record<string, (v: unknown) => boolean>> = {
  ready: {},
  join: person,
  waiting: {},
  leave: { reason: (v) => oneOf(v, ['left', 'removed', 'denied', 'closed', 'ended', 'error'] as const) },
  participant_join: person,
  participant_leave: person,
  knock: { display_name: (v) => typeof v === 'string' },
  connection_status_change: { status: (v) => oneOf(v, ['connected', 'reconnecting'] as const) },
  microphone_toggle: { enabled: (v) => typeof v === 'boolean' },
  camera_toggle: { enabled: (v) => typeof v === 'boolean' },
  feedback: { rating: (v) => oneOf(v, ['good', 'neutral', 'bad'] as const) },
  recording_started: { recorded: (v) => typeof v === 'boolean' },
  recording_stopped: {},
};

/**
 * An event from the join page, or null. Every field the event documents must
 * be there and valid; fields it does not are dropped, not refused, so that an
 * element cached before a newer page added one still works.
 */
export function parseEmbedEvent(data: unknown): ParleyEventMessage | null {
  if (!isPlain(data) || data.parley !== PROTOCOL_VERSION || typeof data.event !== 'string' || !Object.hasOwn(EVENT_DETAILS, data.event)) return null;
  const fields = EVENT_DETAILS[data.event as ParleyEventMessage['event']];
  const detail = data.detail;
  if (!isPlain(detail)) return null;
  const kept: Obj = {};
  for (const [key, valid] of Object.entries(fields)) {
    if (!valid(detail[key])) return null;
    kept[key] = detail[key];
  }
  return { parley: PROTOCOL_VERSION, event: data.event, detail: kept } as ParleyEventMessage;
}

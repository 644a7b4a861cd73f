// The events Parley sends (docs/webhooks.md; docs/design.md, "Webhooks") and the one way to
// put an event in the outbox from application code. Room and presence events
// are written by triggers (migrations/0006_webhooks.sql); whatever else
// causes an event calls enqueueEvent inside the transaction of its change,
// so that the event commits or rolls back with it.
import { sql, type Kysely } from 'kysely';
import type { Database, ParticipantRole, Rating, RoomStatus } from '../../db/schema.js';

export const WEBHOOK_EVENT_TYPES = [
  'room.started',
  'room.ended',
  'room.closed',
  'room.deleted',
  'participant.joined',
  'participant.left',
  'participant.waiting',
  'feedback.created',
  'recording.started',
  'recording.ready',
  'recording.failed',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Never an access token, guest token or join URL: a receiver's logs are not a safe place for them. */
export interface RoomEventData {
  room_token: string;
  status: RoomStatus;
  organization_id: string | null;
}

export interface ParticipantEventData {
  room_token: string;
  participant_token: string;
  role: ParticipantRole;
  display_name: string;
}

export interface FeedbackEventData {
  room_token: string;
  rating: Rating;
  feedback: string | null;
  created_at: string;
}

/** docs/design.md, "Recording with consent". */
export interface RecordingEventData {
  room_token: string;
  recording_id: string;
  status: 'recording' | 'ready' | 'failed';
  started_by: string;
  started_at: string;
  ended_at?: string | null;
  duration_seconds?: number | null;
  size_bytes?: number | null;
  content_type?: string | null;
  error?: string;
}

export type WebhookEvent =
  | { type: 'room.started' | 'room.ended' | 'room.closed' | 'room.deleted'; data: RoomEventData }
  | { type: 'participant.joined' | 'participant.left' | 'participant.waiting'; data: ParticipantEventData }
  | { type: 'feedback.created'; data: FeedbackEventData }
  | { type: 'recording.started' | 'recording.ready' | 'recording.failed'; data: RecordingEventData };

/**
 * A lone surrogate (half of a UTF-16 pair, e.g. in a feedback comment) has no
 * UTF-8 form: a text column gets U+FFFD for it from the driver, but jsonb
 * refuses its JSON escape (\ud800). The event carries U+FFFD too.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const wellFormed = (_key: string, value: unknown) => (typeof value === 'string' ? value.replace(LONE_SURROGATE, '\uFFFD') : value);

/**
 * Stores the event for every live endpoint of the tenant that wants it, in
 * `executor`'s transaction (pass the transaction of the change). For a tenant
 * without such an endpoint it writes nothing: one index probe.
 */
export async function enqueueEvent(executor: Kysely<Database>, tenantId: string, event: WebhookEvent): Promise<void> {
  await sql`select webhook_enqueue(${tenantId}::uuid, ${event.type}, ${JSON.stringify(event.data, wellFormed)}::jsonb)`.execute(executor);
}

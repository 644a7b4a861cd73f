// TypeBox schemas of the REST interface: they validate requests, shape the
// responses (only declared fields go out) and generate the OpenAPI document.
import { Type, type TSchema } from 'typebox';
import { LANGUAGES } from '../shared/i18n/languages.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../domain/webhooks/webhook-events.js';

/** A nullable field, written as a JSON-schema type list (fast to serialize). */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

// x-http-url and x-trimmed-length are keywords of src/http/validation.ts.
const httpUrl = (description: string) =>
  Type.String({
    format: 'uri',
    'x-http-url': true,
    maxLength: 2048,
    description,
    'x-error-type': 'invalid',
    'x-error-message': 'must be an absolute http or https URL',
  });

// Counted after trimming; a name of only spaces is blank.
const nameField = (max: number, description: string) =>
  Type.String({ 'x-trimmed-length': { min: 1, max }, description: `${description} 1..${max} characters after trimming.` });

const displayName = (description: string) => Nullable(Type.String({ maxLength: 100, description }));

export const RoomInputSchema = Type.Object(
  {
    name: nameField(255, 'Name shown to participants on the join page.'),
    meeting_duration: Type.Integer({ minimum: 1, maximum: 1440, description: 'Expected duration in minutes.' }),
    scheduled_at: Type.String({
      format: 'date-time',
      description: 'ISO 8601 date-time with offset or Z, years 1900..9998; informational only.',
      'x-error-type': 'invalid',
      'x-error-message': 'must be an ISO 8601 date-time with a time zone (Z or +hh:mm), between 1900 and 9998',
    }),
    return_url: Type.Optional(Nullable(httpUrl('Where guests go after leaving; the tenant default when omitted.'))),
    host_return_url: Type.Optional(Nullable(httpUrl('Where the host goes after leaving; falls back to return_url.'))),
    host_display_name: Type.Optional(displayName('Pre-filled host display name.')),
    guest_display_name: Type.Optional(displayName('Pre-filled guest display name.')),
    enable_chat: Type.Optional(Type.Boolean({ default: true })),
    enable_screenshare: Type.Optional(Type.Boolean({ default: true })),
    enable_invites: Type.Optional(Type.Boolean({ default: true })),
    enable_audio_indicator: Type.Optional(Type.Boolean({ default: true })),
    enable_waiting_room: Type.Optional(
      Type.Boolean({ default: false, description: 'Extension: guests wait until the host admits them (docs/call.md "Waiting room").' }),
    ),
    locale: Type.Optional(
      Nullable(
        Type.Union(
          LANGUAGES.map((lang) => Type.Literal(lang)),
          { description: `Extension: the language of the participant pages (${LANGUAGES.join(', ')}); omitted or null: the browser's, else English.` },
        ),
      ),
    ),
    additional_guest_count: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 20, description: 'Extra guest tokens; needs the additional_participants feature.' }),
    ),
    permanent: Type.Optional(Type.Boolean({ default: false, description: 'Exempt from automatic cleanup; needs the permanent_rooms feature.' })),
    enable_recording: Type.Optional(
      Type.Boolean({ default: false, description: 'Extension: the host may record the call, once everyone in it has accepted; needs the recording feature.' }),
    ),
    doctor_id: Type.Optional(Nullable(Type.String({ format: 'uuid', description: 'Extension: the doctor the room belongs to.' }))),
  },
  {
    additionalProperties: true,
    examples: [{ name: 'Consultation with Dr. Weber', meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z', enable_waiting_room: true }],
  },
);

const dateTime = Type.String({ format: 'date-time' });

export const RoomSchema = Type.Object(
  {
    name: Type.String(),
    token: Type.String({ description: 'The room identifier.' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('started'), Type.Literal('ended'), Type.Literal('closed')]),
    access_token: Type.String({ description: 'Grants host access. Sensitive.' }),
    guest_token: Type.String(),
    host_join_url: Type.String({ format: 'uri' }),
    guest_join_url: Type.String({ format: 'uri' }),
    host_display_name: Nullable(Type.String()),
    guest_display_name: Nullable(Type.String()),
    enable_chat: Type.Boolean(),
    enable_screenshare: Type.Boolean(),
    enable_invites: Type.Boolean(),
    enable_audio_indicator: Type.Boolean(),
    enable_waiting_room: Type.Boolean(),
    locale: Type.Optional(Type.String()),
    current_participants: Type.Array(Type.String()),
    waiting_participants: Type.Array(Type.String(), { description: 'Extension: participant tokens waiting to be admitted now, oldest first.' }),
    expected_guest_count: Type.Integer(),
    scheduled_at: dateTime,
    meeting_duration: Type.Integer(),
    return_url: Type.String({ format: 'uri' }),
    host_return_url: Type.Optional(Type.String({ format: 'uri' })),
    permanent: Type.Boolean(),
    enable_recording: Type.Boolean(),
    doctor_id: Type.Optional(Type.String()),
    additional_access_tokens: Type.Optional(Type.Array(Type.Object({ token: Type.String(), join_url: Type.String({ format: 'uri' }) }))),
    created_at: dateTime,
    updated_at: dateTime,
    started_at: Type.Optional(dateTime),
    ended_at: Type.Optional(dateTime),
    closed_at: Type.Optional(dateTime),
  },
  {
    $id: 'Room',
    examples: [
      {
        name: 'Consultation with Dr. Weber',
        token: 'Xy7rT2pQ9sVbN4mK8wZc1A',
        status: 'active',
        access_token: 'hT5kP0qW3eR8tY1uI6oP2a',
        guest_token: 'gU4jK9lZ2xC7vB1nM5qW8e',
        host_join_url: 'https://parley.example/j/hT5kP0qW3eR8tY1uI6oP2a',
        guest_join_url: 'https://parley.example/j/gU4jK9lZ2xC7vB1nM5qW8e',
        host_display_name: null,
        guest_display_name: null,
        enable_chat: true,
        enable_screenshare: true,
        enable_invites: true,
        enable_audio_indicator: true,
        enable_waiting_room: true,
        current_participants: [],
        waiting_participants: [],
        expected_guest_count: 1,
        scheduled_at: '2026-03-10T14:00:00.000Z',
        meeting_duration: 30,
        return_url: 'https://booking.example/thanks',
        permanent: false,
        enable_recording: false,
        created_at: '2026-03-09T09:12:00.000Z',
        updated_at: '2026-03-09T09:12:00.000Z',
      },
    ],
  },
);

export const FeedbackSchema = Type.Object(
  {
    room_token: Type.String(),
    rating: Type.Union([Type.Literal('good'), Type.Literal('neutral'), Type.Literal('bad')]),
    feedback: Type.Optional(Type.String()),
    created_at: dateTime,
  },
  { $id: 'RoomFeedback', examples: [{ room_token: 'Xy7rT2pQ9sVbN4mK8wZc1A', rating: 'good', feedback: 'Clear sound.', created_at: '2026-03-10T14:31:00.000Z' }] },
);

const EventTypeSchema = Type.Unsafe<WebhookEventType>(Type.Union(WEBHOOK_EVENT_TYPES.map((type) => Type.Literal(type))));

export const WebhookEndpointInputSchema = Type.Object(
  {
    url: httpUrl('Where the events are POSTed. Loopback, private and link-local targets are refused unless the operator allows them.'),
    events: Type.Optional(
      Type.Array(EventTypeSchema, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length * 2, description: 'The event types to send; omitted: every type.' }),
    ),
    description: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  },
  { additionalProperties: true, examples: [{ url: 'https://booking.example/hooks/parley', events: ['participant.joined', 'room.ended'], description: 'Booking system' }] },
);

export const WebhookEndpointSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String({ format: 'uri' }),
    events: Nullable(Type.Array(EventTypeSchema, { description: 'null: every event type, including types added later.' })),
    description: Nullable(Type.String()),
    created_at: dateTime,
    status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
    failing_since: Nullable(Type.String({ format: 'date-time', description: 'Every delivery has failed since then; null after a success.' })),
    disabled_at: Nullable(dateTime),
    disabled_reason: Nullable(Type.String()),
  },
  {
    $id: 'WebhookEndpoint',
    examples: [
      {
        id: '0b7e6c1e-6a4f-4d8e-9a51-3f1c2d4e5a6b',
        url: 'https://booking.example/hooks/parley',
        events: ['participant.joined', 'room.ended'],
        description: 'Booking system',
        created_at: '2026-03-01T08:00:00.000Z',
        status: 'enabled',
        failing_since: null,
        disabled_at: null,
        disabled_reason: null,
      },
    ],
  },
);

/** The answer of a create: the endpoint and, this once, its signing secret. */
export const CreatedWebhookEndpointSchema = Type.Object({
  ...WebhookEndpointSchema.properties,
  secret: Type.String({ description: 'whsec_ + base64 of the signing key. Shown only here.' }),
});

export const ParticipantSessionSchema = Type.Object(
  {
    participant_token: Type.String(),
    role: Type.Union([Type.Literal('host'), Type.Literal('guest')]),
    display_name: Type.String(),
    joined_at: dateTime,
    left_at: Nullable(dateTime),
    duration_seconds: Type.Integer({ minimum: 0 }),
    network: Nullable(
      Type.Object(
        {
          rtt_ms: Nullable(Type.Integer({ description: 'Median round-trip time.' })),
          loss_percent: Nullable(Type.Number({ description: 'Mean share of incoming packets lost.' })),
          bitrate_kbps: Nullable(Type.Integer({ description: 'Median outgoing bitrate the browser estimated.' })),
          relayed: Nullable(Type.Boolean({ description: 'true when media went through a TURN relay in any report.' })),
          reports: Type.Integer({ minimum: 1 }),
        },
        { description: "What the participant's browser reported; null when it reported nothing." },
      ),
    ),
  },
  {
    $id: 'ParticipantSession',
    examples: [
      {
        participant_token: 'gU4jK9lZ2xC7vB1nM5qW8e',
        role: 'guest',
        display_name: 'Anna',
        joined_at: '2026-03-10T14:01:12.000Z',
        left_at: '2026-03-10T14:29:40.000Z',
        duration_seconds: 1708,
        network: { rtt_ms: 42, loss_percent: 0.3, bitrate_kbps: 1450, relayed: false, reports: 56 },
      },
    ],
  },
);

export const RecordingSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: Type.Union([Type.Literal('recording'), Type.Literal('processing'), Type.Literal('ready'), Type.Literal('failed')], {
      description: 'recording, then processing (the file is being made), then ready or failed.',
    }),
    started_at: dateTime,
    ended_at: Nullable(dateTime),
    duration_seconds: Nullable(Type.Number({ minimum: 0, description: 'The file\'s duration, once ready.' })),
    size_bytes: Nullable(Type.Integer({ minimum: 0, description: 'The file\'s size, once ready.' })),
    content_type: Nullable(Type.String({ description: 'video/webm, once ready.' })),
    started_by: Type.String({ description: "The host's display name." }),
    consents: Type.Array(
      Type.Object({ display_name: Type.String(), role: Type.Union([Type.Literal('host'), Type.Literal('guest')]), accepted_at: dateTime }),
      { description: 'Everyone who accepted to be recorded, when (a newcomer accepts as it joins).' },
    ),
  },
  {
    $id: 'Recording',
    examples: [
      {
        id: '6f1d0c2a-3b4e-4f5a-8b9c-0d1e2f3a4b5c',
        status: 'ready',
        started_at: '2026-03-10T14:05:00.000Z',
        ended_at: '2026-03-10T14:25:00.000Z',
        duration_seconds: 1199.5,
        size_bytes: 183500800,
        content_type: 'video/webm',
        started_by: 'Dr. Weber',
        consents: [
          { display_name: 'Dr. Weber', role: 'host', accepted_at: '2026-03-10T14:04:50.000Z' },
          { display_name: 'Anna', role: 'guest', accepted_at: '2026-03-10T14:04:58.000Z' },
        ],
      },
    ],
  },
);

export const RecordingAuditEntrySchema = Type.Object(
  {
    action: Type.Union([Type.Literal('download'), Type.Literal('delete')]),
    at: dateTime,
    token_id: Nullable(Type.String({ format: 'uuid', description: 'The API token that did it; null: Parley itself (retention).' })),
    token_label: Nullable(Type.String({ description: "That token's label, when it has one." })),
  },
  { $id: 'RecordingAuditEntry', examples: [{ action: 'download', at: '2026-03-11T09:00:00.000Z', token_id: '0b7e6c1e-6a4f-4d8e-9a51-3f1c2d4e5a6b', token_label: 'Booking system' }] },
);

export const RecordingParamsSchema = Type.Object({ id: Type.String({ maxLength: 200 }) });

export const FeedbackSummarySchema = Type.Object({
  total: Type.Integer(),
  good: Type.Integer(),
  neutral: Type.Integer(),
  bad: Type.Integer(),
  from: Nullable(Type.String({ format: 'date' })),
  to: Nullable(Type.String({ format: 'date' })),
});

export const ValidationErrorsSchema = Type.Array(
  Type.Object({ attribute: Type.String(), type: Type.String(), message: Type.String() }),
  { description: 'Every failing field at once.' },
);

export const ErrorSchema = Type.Object({ error: Type.String() });

export const PageQuerySchema = {
  page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page number, default 1.' })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Extension: items per page, 1..100, default 20.' })),
  cursor: Type.Optional(
    Type.String({ maxLength: 100, description: 'Opaque position carried by the Link URLs; follow the links rather than setting it.' }),
  ),
};

export const TokenParamsSchema = Type.Object({ token: Type.String({ maxLength: 200 }) });

/** Error responses every authenticated route may give. */
export const commonErrors = {
  401: ErrorSchema,
  404: ErrorSchema,
};

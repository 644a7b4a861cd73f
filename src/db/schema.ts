// Row types of the tables in migrations/, for Kysely's typed queries.
import type { Generated } from 'kysely';

export type RoomStatus = 'active' | 'started' | 'ended' | 'closed';
export type Rating = 'good' | 'neutral' | 'bad';
export type ParticipantRole = 'host' | 'guest';

export interface TenantsTable {
  id: string;
  name: string;
  default_return_url: string;
  timezone: string;
  created_at: Date;
}

export interface OrganizationsTable {
  id: string;
  tenant_id: string;
  name: string;
  created_at: Date;
}

export interface DoctorsTable {
  id: string;
  tenant_id: string;
  organization_id: string;
  name: string;
  created_at: Date;
}

export interface ApiTokensTable {
  id: string;
  tenant_id: string;
  organization_id: string | null;
  label: string | null;
  token_hash: Uint8Array;
  created_at: Date;
  revoked_at: Date | null;
}

export interface TenantFeaturesTable {
  tenant_id: string;
  feature: string;
  enabled: boolean;
}

export interface OrganizationFeaturesTable {
  organization_id: string;
  feature: string;
  enabled: boolean;
}

export interface RoomsTable {
  id: Generated<number>;
  tenant_id: string;
  organization_id: string | null;
  doctor_id: string | null;
  token: string;
  access_token: string;
  guest_token: string;
  name: string;
  status: RoomStatus;
  host_display_name: string | null;
  guest_display_name: string | null;
  enable_chat: boolean;
  enable_screenshare: boolean;
  enable_invites: boolean;
  enable_audio_indicator: boolean;
  /** Guests wait until a host admits them (0005, docs/design.md, "Waiting room"). */
  enable_waiting_room: boolean;
  /** The host may record the call, with everyone's consent (0017, docs/design.md, "Recording with consent"). */
  enable_recording: boolean;
  /** The language of the participant pages (src/shared/i18n/languages.ts); null: the browser's (0005, docs/design.md, "Languages and layout"). */
  locale: string | null;
  scheduled_at: Date;
  meeting_duration: number;
  return_url: string;
  host_return_url: string | null;
  permanent: boolean;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  ended_at: Date | null;
  closed_at: Date | null;
  emptied_at: Date | null;
  cleanup_base_at: Date;
  /** The room's ETag; bumped by a trigger when the API representation changes (0002). */
  version: Generated<number>;
}

export interface RoomGuestTokensTable {
  token: string;
  room_id: number;
  kind: 'additional' | 'invite';
  created_at: Date;
}

/** Rooms per tenant and organization, spread over shards (0007): the count is the sum of the shards. */
export interface RoomCountsTable {
  tenant_id: string;
  organization_id: string;
  shard: number;
  count: number;
}

export interface NodesTable {
  id: string;
  started_at: Date;
  heartbeat_at: Date;
}

/** waiting → admitted | denied; admitted → removed. Only 'admitted' participants are in the call. */
export type Admission = 'waiting' | 'admitted' | 'denied' | 'removed';

export interface ParticipantsTable {
  token: string;
  room_id: number;
  role: ParticipantRole;
  display_name: string;
  node_id: string;
  joined_at: Date;
  left_at: Date | null;
  /** Whether the participant is in the call, waiting to be let in, or was turned away (0005). */
  admission: Generated<Admission>;
  /** What the browser measured, one object per report, the last 360 (0006). */
  network_reports: Generated<NetworkReport[]>;
}

/** One network report of a participant's browser, as stored (0006). */
export interface NetworkReport {
  rtt: number | null;
  loss: number | null;
  kbps: number | null;
  relayed: boolean | null;
}

export interface RoomFeedbacksTable {
  id: Generated<number>;
  tenant_id: string;
  room_token: string;
  participant_token: string | null;
  rating: Rating;
  feedback: string | null;
  local_day: string;
  created_at: Date;
}

/** Feedbacks per tenant, day and rating, spread over shards (0007): the count is the sum of the shards. */
export interface FeedbackDailyCountsTable {
  tenant_id: string;
  day: string;
  rating: Rating;
  shard: number;
  count: number;
}

export interface IdempotencyKeysTable {
  token_id: string;
  key: string;
  fingerprint: Uint8Array;
  room_token: string;
  created_at: Date;
}

export interface InstanceFlagsTable {
  name: string;
  set_at: Date;
}

export interface TenantFrameAncestorsTable {
  tenant_id: string;
  /** Canonical origins separated by single spaces (src/domain/tenants/frame-ancestors.ts). */
  origins: string;
}

/** An organization's narrowing of its tenant's list (0015); '' is nobody. */
export interface OrganizationFrameAncestorsTable {
  organization_id: string;
  origins: string;
}

export interface WebhookEndpointsTable {
  id: string;
  tenant_id: string;
  url: string;
  /** null: every event type. */
  events: string[] | null;
  description: string | null;
  /** `whsec_` + base64 of the key: kept as issued, signing needs it (docs/webhooks.md). */
  secret: string;
  created_at: Date;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
}

export interface WebhookMessagesTable {
  id: Generated<number>;
  endpoint_id: string;
  msg_id: string;
  type: string;
  data: unknown;
  occurred_at: Date;
  attempts: Generated<number>;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  failed_at: Date | null;
  last_status: number | null;
  last_error: string | null;
}

/** The Janus instance and VideoRoom of a room whose media goes through an SFU (migration 0016). */
export interface SfuRoomsTable {
  room_id: number;
  instance: string;
  janus_room: number;
  secret: string;
  pinned_at: Date;
}

export interface DeletedRoomSessionsTable {
  participant_token: string;
  tenant_id: string;
  organization_id: string | null;
  room_token: string;
  role: ParticipantRole;
  display_name: string;
  joined_at: Date;
  left_at: Date;
  network_reports: NetworkReport[];
}

/** recording -> processing -> ready | failed (0017, docs/design.md, "Recording with consent"). */
export type RecordingStatus = 'recording' | 'processing' | 'ready' | 'failed';

export interface RecordingsTable {
  id: string;
  room_id: number;
  status: RecordingStatus;
  started_by: string;
  started_at: Date;
  ended_at: Date | null;
  duration_seconds: number | null;
  size_bytes: number | null;
  content_type: string | null;
  /** The lease of the node recording it (renewed) or composing its file. */
  lease_until: Date | null;
  attempts: Generated<number>;
  error: string | null;
}

export interface RecordingConsentsTable {
  recording_id: string;
  peer_id: string;
  display_name: string;
  role: ParticipantRole;
  accepted_at: Date;
}

/** Downloads and deletions, kept after the recording (0017). */
export interface RecordingAuditTable {
  id: Generated<number>;
  recording_id: string;
  tenant_id: string;
  organization_id: string | null;
  room_token: string;
  action: 'download' | 'delete';
  token_id: string | null;
  at: Date;
}

/** Directories of deleted recordings still to remove (0017's trigger writes them). */
export interface RecordingDeletedFilesTable {
  recording_id: string;
  deleted_at: Date;
}

export interface Database {
  tenants: TenantsTable;
  organizations: OrganizationsTable;
  doctors: DoctorsTable;
  api_tokens: ApiTokensTable;
  tenant_features: TenantFeaturesTable;
  organization_features: OrganizationFeaturesTable;
  rooms: RoomsTable;
  room_guest_tokens: RoomGuestTokensTable;
  room_counts: RoomCountsTable;
  nodes: NodesTable;
  participants: ParticipantsTable;
  room_feedbacks: RoomFeedbacksTable;
  feedback_daily_counts: FeedbackDailyCountsTable;
  idempotency_keys: IdempotencyKeysTable;
  instance_flags: InstanceFlagsTable;
  tenant_frame_ancestors: TenantFrameAncestorsTable;
  organization_frame_ancestors: OrganizationFrameAncestorsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_messages: WebhookMessagesTable;
  deleted_room_sessions: DeletedRoomSessionsTable;
  sfu_rooms: SfuRoomsTable;
  recordings: RecordingsTable;
  recording_consents: RecordingConsentsTable;
  recording_audit: RecordingAuditTable;
  recording_deleted_files: RecordingDeletedFilesTable;
}

/** The sentinel organization_id of room_counts rows that count a whole tenant. */
export const WHOLE_TENANT = '00000000-0000-0000-0000-000000000000';

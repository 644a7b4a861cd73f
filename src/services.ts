// Wires the domain services over one database. main.ts, the tests and the CLI
// all build the same graph here.
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/client.js';
import { createAuthService } from './domain/auth/auth.service.js';
import { createFeedbackRepo } from './domain/feedback/feedback.repo.js';
import { createFeedbackService } from './domain/feedback/feedback.service.js';
import { createIdempotencyRepo } from './domain/idempotency/idempotency.repo.js';
import { createIdempotencyService } from './domain/idempotency/idempotency.service.js';
import { createParticipantsRepo } from './domain/participation/participants.repo.js';
import { createParticipationService, MAX_PARTICIPANTS, MAX_PARTICIPANTS_WITH_SFU } from './domain/participation/participation.service.js';
import { createSessionsRepo } from './domain/participation/sessions.repo.js';
import { createSessionsService } from './domain/participation/sessions.service.js';
import { createCleanupService } from './domain/rooms/room-cleanup.service.js';
import { createRoomsRepo } from './domain/rooms/rooms.repo.js';
import { createRoomsService } from './domain/rooms/rooms.service.js';
import { systemClock, type Clock } from './domain/support/clock.js';
import { cryptoIds, type Ids } from './domain/support/ids.js';
import { createTenantsRepo } from './domain/tenants/tenants.repo.js';
import { createSfuRoomsRepo } from './domain/sfu/sfu-rooms.repo.js';
import { recordingFiles } from './domain/recordings/recording-files.js';
import { createRecordingReadsRepo } from './domain/recordings/recording-reads.repo.js';
import { createRecordingsRepo } from './domain/recordings/recordings.repo.js';
import { createRecordingsService } from './domain/recordings/recordings.service.js';
import { createTenantsService } from './domain/tenants/tenants.service.js';
import { createWebhookDeliveryService } from './domain/webhooks/webhook-delivery.service.js';
import { createWebhookEndpointsRepo } from './domain/webhooks/webhook-endpoints.repo.js';
import { createWebhookEndpointsService } from './domain/webhooks/webhook-endpoints.service.js';
import { createWebhookMessagesRepo } from './domain/webhooks/webhook-messages.repo.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import { metricsSources } from './observability/metrics-sources.js';
import { createLocalEventBus } from './domain/buses/local-room-event-bus.js';
import { createLocalSignalBus } from './domain/buses/local-signal-bus.js';
import type { RoomEventBus } from './domain/buses/room-event-bus.js';
import type { SignalBus } from './domain/buses/signal-bus.js';

export interface ServiceOptions {
  database: DatabaseHandle;
  config: Readonly<Config>;
  clock?: Clock;
  ids?: Ids;
  events?: RoomEventBus;
  /** Messages between participants of a call; a cluster passes one that crosses nodes. */
  signals?: SignalBus;
  metrics?: Metrics;
}

export function createServices({ database, config, clock = systemClock, ids = cryptoIds, events = createLocalEventBus(), signals = createLocalSignalBus(), metrics = createMetrics() }: ServiceOptions) {
  const db = database.db;
  metrics.addSources(metricsSources(database));
  const tenantsRepo = createTenantsRepo(db);
  const roomsRepo = createRoomsRepo(db);
  const repos = {
    tenants: tenantsRepo,
    rooms: roomsRepo,
    feedback: createFeedbackRepo(db),
    participants: createParticipantsRepo(db, roomsRepo),
    webhookEndpoints: createWebhookEndpointsRepo(db),
    webhookMessages: createWebhookMessagesRepo(db),
    sfuRooms: createSfuRoomsRepo(db),
    recordings: createRecordingsRepo(db),
  };
  const allowPrivateNetworks = config.webhooksAllowPrivateNetworks;
  const feedback = createFeedbackService({ repo: repos.feedback, clock });
  const rooms = createRoomsService({ rooms: repos.rooms, tenants: repos.tenants, events, ids, clock });
  const auth = createAuthService({ tokens: repos.tenants });
  const recordingFilesOf = recordingFiles(config.recordingsDir);
  return {
    database,
    config,
    metrics,
    clock,
    ids,
    events,
    repos,
    tenants: createTenantsService({ repo: repos.tenants, ids, clock, fallbackReturnUrl: `${config.publicUrl}/left`, onAccessChanged: auth.forgetAll }),
    auth,
    rooms,
    idempotency: createIdempotencyService({ repo: createIdempotencyRepo(db), rooms, clock }),
    feedback,
    signals,
    participation: createParticipationService({
      repo: repos.participants,
      rooms: repos.rooms,
      tenants: repos.tenants,
      feedback,
      clock,
      ids,
      nodeId: config.nodeId,
      roomEndGraceSeconds: config.roomEndGraceSeconds,
      nodeDeadAfterSeconds: config.nodeDeadAfterSeconds,
      maxParticipants: config.sfu === 'janus' ? MAX_PARTICIPANTS_WITH_SFU : MAX_PARTICIPANTS,
    }),
    sessions: createSessionsService({ repo: createSessionsRepo(db), clock }),
    webhookEndpoints: createWebhookEndpointsService({
      repo: repos.webhookEndpoints,
      messages: repos.webhookMessages,
      tenants: repos.tenants,
      clock,
      ids,
      allowPrivateNetworks,
    }),
    webhookDelivery: createWebhookDeliveryService({
      repo: repos.webhookMessages,
      clock,
      allowPrivateNetworks,
      timeoutSeconds: config.webhooksTimeoutSeconds,
      disableAfterSeconds: config.webhooksDisableAfterSeconds,
    }),
    // Recording with consent (docs/design.md, "Recording with consent").
    recordings: createRecordingsService({
      repo: repos.recordings,
      reads: createRecordingReadsRepo(db),
      files: recordingFilesOf,
      events,
      clock,
      ids,
      retentionSeconds: config.recordingRetentionSeconds,
    }),
    cleanup: createCleanupService({ rooms: repos.rooms, clock, retentionSeconds: config.cleanupAfterSeconds }),
  };
}

export type Services = ReturnType<typeof createServices>;

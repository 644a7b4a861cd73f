// What the main process and the calls process say to each other over IPC
// (child_process, advanced serialization: Dates, Buffers and bigints survive).
import type { Config } from '../config.js';
import type { Reply, Request } from '../db/pglite-thread.js';
import type { JobOutcome } from '../jobs.js';
import type { RoomEvent } from '../domain/buses/room-event-bus.js';

/** The upgrade request as the main process's HTTP server parsed it; the socket travels beside the message. */
export interface UpgradeRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export type ToCalls =
  | { type: 'start'; config: Config }
  /** `id`: the calls process answers `upgrade-taken` with it once it holds the socket. */
  | { type: 'upgrade'; id: number; request: UpgradeRequest; head: Uint8Array }
  /** From the API, on a node without Redis (with it, the calls process hears them there). */
  | { type: 'room-event'; event: RoomEvent }
  | { type: 'db-reply'; reply: Reply }
  /** The answer to each `interest` with someone in the room, in order: its updates come from now on. */
  | { type: 'interest-heard' }
  | { type: 'metrics'; id: number }
  | { type: 'stop' };

export type FromCalls =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  /** Statements for the embedded database, which lives in the main process. */
  | { type: 'db'; requests: Request[] }
  | { type: 'metrics'; id: number; text: string }
  /** It holds the socket of `upgrade` `id` now (or it closed on its way): the main process lets go of its own copy. */
  | { type: 'upgrade-taken'; id: number }
  /** Someone is in this room here now (true), or nobody any more (forwarded-events.ts). */
  | { type: 'interest'; roomId: number; someone: boolean }
  /** Every window while anyone is connected, and once when nobody is any more: for calls first (http/calls-first.ts). */
  | { type: 'load'; connections: number; latenessP99Ms: number }
  /**
   * A run of one of its jobs (presence), counted in the main process's
   * parley_job_runs_total beside the main process's own jobs: one family on
   * GET /metrics, and counts that survive the calls process's restarts.
   */
  | { type: 'job-run'; job: string; outcome: JobOutcome };

/**
 * The metrics the calls process owns: the main process leaves them out of its
 * own registry and appends the calls process's to GET /metrics.
 */
export const CALLS_METRICS = [
  'parley_signaling_messages_total',
  'parley_node_connections',
  'parley_bus_publish_failures_total',
  'parley_redis_resubscriptions_total',
] as const;

/** Database connections the calls process opens on PostgreSQL, beside the main process's DATABASE_POOL_SIZE. */
export const CALLS_DATABASE_POOL_SIZE = 4;

// Periodic jobs of a running server. Each is safe to run on every node at
// once (the SQL behind it claims its rows), so a cluster needs no leader.
import type { FastifyBaseLogger } from 'fastify';
import { maintainEmbedded } from './db/embedded-maintenance.js';
import type { Composer } from './domain/recordings/recording-jobs.js';
import type { Services } from './services.js';
import { composeRecording } from './sfu/recording/compose.js';

export interface Job {
  name: string;
  intervalSeconds: number;
  run(): Promise<unknown>;
  /** Asked to give up what it is doing as the jobs stop (a recording's composing, taken again by another run). */
  abort?(): void;
}

/** How a run of a job ended (parley_job_runs_total's outcome). */
export type JobOutcome = 'ok' | 'failed';

export interface RunningJobs {
  stop(): Promise<void>;
}

export function startJobs(
  jobs: Job[],
  log: FastifyBaseLogger,
  onRun: (job: string, outcome: JobOutcome) => void = () => {},
): RunningJobs {
  const running = new Set<Promise<unknown>>();
  const timers = jobs.map((job) => {
    let busy = false;
    // A database outage fails every run of every job: one warning when a job starts failing, one line when it works again.
    let failedRuns = 0;
    const tick = () => {
      if (busy) return; // never overlap a slow run with the next one
      busy = true;
      const run = job
        .run()
        .then((result) => {
          onRun(job.name, 'ok');
          if (failedRuns > 0) log.info({ job: job.name, failedRuns }, 'job works again');
          failedRuns = 0;
          if (Array.isArray(result) && result.length) log.info({ job: job.name, count: result.length }, 'job done');
        })
        .catch((error: unknown) => {
          onRun(job.name, 'failed');
          if (failedRuns++ === 0) log.warn({ job: job.name, err: error }, 'job failed (said once until it works again)');
          else log.debug({ job: job.name, err: error }, 'job failed');
        })
        .finally(() => {
          busy = false;
          running.delete(run);
        });
      running.add(run);
    };
    const timer = setInterval(tick, job.intervalSeconds * 1000);
    timer.unref();
    return timer;
  });
  return {
    async stop() {
      for (const timer of timers) clearInterval(timer);
      for (const job of jobs) job.abort?.();
      await Promise.allSettled([...running]);
    },
  };
}

/**
 * Which process runs a node's jobs: `node` both halves (the calls in the main
 * process), or `api` and `calls` each its own half when the calls run in a
 * process of their own. Presence goes with the calls: the node is alive while
 * its calls are.
 */
export type JobsOf = 'node' | 'api' | 'calls';

/** The node's jobs, one list for every process (docs/design.md, "Room lifecycle" and "Webhooks"). */
export function nodeJobs(services: Services, of: JobsOf, { compose = composeRecording }: { compose?: Composer } = {}): Job[] {
  const { config, database } = services;
  const api: Job[] = [
    // A deleted room's recordings go with it: their files right after (docs/design.md, "Recording with consent").
    { name: 'cleanup', intervalSeconds: config.cleanupIntervalSeconds, run: () => services.cleanup.run().finally(() => services.recordings.sweepDeleted()) },
    // Idempotency-Key records live 24 hours (docs/security.md).
    { name: 'idempotency-keys', intervalSeconds: config.cleanupIntervalSeconds, run: () => services.idempotency.purgeExpired() },
    // The webhook outbox (docs/webhooks.md): every node delivers whatever is due; claims keep them apart.
    { name: 'webhooks', intervalSeconds: config.webhooksPollIntervalSeconds, run: () => services.webhookDelivery.deliverDue() },
    { name: 'webhook-messages', intervalSeconds: config.cleanupIntervalSeconds, run: () => services.webhookDelivery.purgeDone() },
    ...recordingJobs(services, compose),
    // PGlite has no autovacuum or checkpointer: this does their work (db/embedded-maintenance.ts). PostgreSQL's own do it there.
    ...(database.kind === 'pglite'
      ? [{ name: 'embedded-maintenance', intervalSeconds: config.embeddedMaintenanceIntervalSeconds, run: () => maintainEmbedded(database.db) }]
      : []),
  ];
  // Heartbeat, participants of dead nodes, rooms empty past the grace.
  const calls: Job[] = [{ name: 'presence', intervalSeconds: config.heartbeatIntervalSeconds, run: () => services.participation.sweep() }];
  return of === 'api' ? api : of === 'calls' ? calls : [...api, ...calls];
}

/**
 * Recordings (docs/design.md, "Recording with consent"): one whose recording
 * node died is stopped; processing recordings get their file (one at a time
 * per node, claimed with a lease); past retention they are deleted, and no
 * directory outlives its recording.
 */
function recordingJobs(services: Services, compose: Composer): Job[] {
  const { config } = services;
  let composing = new AbortController();
  return [
    { name: 'recordings-lapsed', intervalSeconds: 5, run: () => services.recordings.stopLapsed() },
    {
      name: 'recordings-processing',
      intervalSeconds: 2,
      run: () => {
        if (composing.signal.aborted) composing = new AbortController();
        return services.recordings.processDue(compose, composing.signal);
      },
      abort: () => composing.abort(),
    },
    {
      name: 'recordings-retention',
      intervalSeconds: config.cleanupIntervalSeconds,
      run: async () => [...(await services.recordings.applyRetention()), ...(await services.recordings.sweepFiles())],
    },
  ];
}

// Periodic jobs of a running server. Each is safe to run on every node at
// once (the SQL behind it claims its rows), so a cluster needs no leader.
import type { FastifyBaseLogger } from 'fastify';
import { maintainEmbedded } from './db/embedded-maintenance.js';
import type { Services } from './services.js';

export interface Job {
  name: string;
  intervalSeconds: number;
  run(): Promise<unknown>;
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
export function nodeJobs(services: Services, of: JobsOf): Job[] {
  const { config, database } = services;
  const api: Job[] = [
    { name: 'cleanup', intervalSeconds: config.cleanupIntervalSeconds, run: () => services.cleanup.run() },
    // Idempotency-Key records live 24 hours (docs/security.md).
    { name: 'idempotency-keys', intervalSeconds: config.cleanupIntervalSeconds, run: () => services.idempotency.purgeExpired() },
    // The webhook outbox (docs/webhooks.md): every node delivers whatever is due; claims keep them apart.
    { name: 'webhooks', intervalSeconds: config.webhooksPollIntervalSeconds, run: () => services.webhookDelivery.deliverDue() },
    { name: 'webhook-messages', intervalSeconds: config.cleanupIntervalSeconds, run: () => services.webhookDelivery.purgeDone() },
    // PGlite has no autovacuum or checkpointer: this does their work (db/embedded-maintenance.ts). PostgreSQL's own do it there.
    ...(database.kind === 'pglite'
      ? [{ name: 'embedded-maintenance', intervalSeconds: config.embeddedMaintenanceIntervalSeconds, run: () => maintainEmbedded(database.db) }]
      : []),
  ];
  // Heartbeat, participants of dead nodes, rooms empty past the grace.
  const calls: Job[] = [{ name: 'presence', intervalSeconds: config.heartbeatIntervalSeconds, run: () => services.participation.sweep() }];
  return of === 'api' ? api : of === 'calls' ? calls : [...api, ...calls];
}

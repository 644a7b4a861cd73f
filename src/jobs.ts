// Periodic jobs of a running server. Each is safe to run on every node at
// once (the SQL behind it claims its rows), so a cluster needs no leader.
import type { FastifyBaseLogger } from 'fastify';

export interface Job {
  name: string;
  intervalSeconds: number;
  run(): Promise<unknown>;
}

export interface RunningJobs {
  stop(): Promise<void>;
}

export function startJobs(
  jobs: Job[],
  log: FastifyBaseLogger,
  onRun: (job: string, outcome: 'ok' | 'failed') => void = () => {},
): RunningJobs {
  const running = new Set<Promise<unknown>>();
  const timers = jobs.map((job) => {
    let busy = false;
    const tick = () => {
      if (busy) return; // never overlap a slow run with the next one
      busy = true;
      const run = job
        .run()
        .then((result) => {
          onRun(job.name, 'ok');
          if (Array.isArray(result) && result.length) log.info({ job: job.name, count: result.length }, 'job done');
        })
        .catch((error: unknown) => {
          onRun(job.name, 'failed');
          log.warn({ job: job.name, err: error }, 'job failed');
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

// Liveness and readiness for load balancers and orchestrators.
//
// Readiness answers "should this node get traffic?". The database is needed
// for everything, so without it the node is not ready (503). Redis only
// carries calls between nodes: when it is away every node loses it at once,
// and taking every node out of rotation would stop the API too, so it is
// reported as degraded with 200 (docs/deploy.md, "What happens when…"). Every check is
// bounded, so the answer comes within about a second whatever they do.
import type { FastifyPluginAsync } from 'fastify';

export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
  /** Not needed to serve traffic: a failure degrades the node instead of making it unready. */
  optional?: boolean;
}

/**
 * A dependency that has not answered by then counts as unavailable: the answer
 * then comes within a second even on a loaded machine (900 ms left a CI run
 * 33 ms over at load).
 */
const CHECK_TIMEOUT_MS = 700;

/**
 * The bound gives up only after the event loop has read what arrived in the
 * meantime (setImmediate runs after the poll phase). When this process itself
 * stalls past the bound (a loaded machine, a long collection), the timer and
 * the dependency's answer are due together, and timers run first: without the
 * extra turn a stall of our own would be counted against a dependency that had
 * answered in time, and take the node out of rotation for nothing.
 */
function bounded(check: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  return Promise.race([
    check(),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        immediate = setImmediate(() => reject(new Error('timed out')));
      }, CHECK_TIMEOUT_MS);
    }),
  ]).finally(() => {
    clearTimeout(timer);
    clearImmediate(immediate);
  });
}

export const healthRoutes =
  (checks: ReadinessCheck[]): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
      const results = await Promise.all(
        checks.map(async ({ name, check, optional = false }) => {
          try {
            await bounded(check);
            return { name, optional, state: 'ok' as const };
          } catch {
            return { name, optional, state: 'unavailable' as const };
          }
        }),
      );
      const ready = results.every(({ state, optional }) => state === 'ok' || optional);
      const degraded = results.some(({ state }) => state !== 'ok');
      const status = !ready ? 'unavailable' : degraded ? 'degraded' : 'ok';
      return reply.status(ready ? 200 : 503).send({ status, checks: Object.fromEntries(results.map(({ name, state }) => [name, state])) });
    });
  };

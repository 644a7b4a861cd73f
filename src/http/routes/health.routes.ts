// Liveness and readiness for load balancers and orchestrators.
import type { FastifyPluginAsync } from 'fastify';

export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

export const healthRoutes =
  (checks: ReadinessCheck[]): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
      const results = await Promise.all(
        checks.map(async ({ name, check }) => {
          try {
            await check();
            return [name, 'ok'] as const;
          } catch {
            return [name, 'unavailable'] as const;
          }
        }),
      );
      const ready = results.every(([, state]) => state === 'ok');
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', checks: Object.fromEntries(results) });
    });
  };

// buildApp assembles the HTTP application from its dependencies; it never
// listens (main.ts does), so tests run it in-process with inject() or a port.
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import type { Principal } from '../domain/auth/auth.service.js';
import type { Services } from '../services.js';
import { callsFirst, callsProcessTurns } from './calls-first.js';
import { errorHandler, frameworkErrorHandler } from './error-handler.js';
import { answerUnmetExpectations, clientErrorHandler } from './hooks/client-errors.js';
import { concurrencyGate } from './hooks/concurrency-gate.js';
import { gracefulClose } from './hooks/graceful-close.js';
import { lingerAfterRefusedBody } from './hooks/lingering-close.js';
import { createRateLimiter, rateLimitHook } from './hooks/rate-limit.js';
import { apiSecurityHeaders } from './hooks/security-headers.js';
import { childLoggerOnFirstUse, createLogging } from '../observability/logging.js';
import { completeOpenapiDocument } from './openapi-contract.js';
import { adminRoutes } from './routes/admin.routes.js';
import { feedbackRoutes } from './routes/feedback.routes.js';
import { healthRoutes, type ReadinessCheck } from './routes/health.routes.js';
import { roomsRoutes } from './routes/rooms.routes.js';
import { recordingsRoutes } from './routes/recordings.routes.js';
import { webhooksRoutes } from './routes/webhooks.routes.js';
import { FeedbackSchema, ParticipantSessionSchema, RecordingAuditEntrySchema, RecordingSchema, RoomSchema, WebhookEndpointSchema } from './schemas.js';
import { validatorCompiler } from './validation.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

export interface AppOptions {
  services: Services;
  /** Where logs go; defaults to stdout at the configured level. */
  logStream?: NodeJS.WritableStream;
  /** Extra readiness checks (e.g. Redis) beside the database. */
  readiness?: ReadinessCheck[];
  /** Further plugins to register (the join pages and the realtime server). */
  plugins?: FastifyPluginAsync[];
  /** Metrics kept elsewhere (the calls process's), appended to GET /metrics. */
  moreMetrics?: () => Promise<string>;
  /** The calls process, whose connections and lateness calls first follows instead of this process's. */
  calls?: { connected(): boolean; lateness(): number };
}

const API_BODY_LIMIT = 64 * 1024;

export async function buildApp({ services, logStream, readiness = [], plugins = [], moreMetrics = async () => '', calls }: AppOptions): Promise<FastifyInstance> {
  const { config } = services;
  const logging = createLogging(config.logLevel, logStream);
  const app = Fastify({
    loggerInstance: logging.logger,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: childLoggerOnFirstUse,
    bodyLimit: API_BODY_LIMIT,
    trustProxy: config.trustProxy,
    // Join and room tokens travel in paths; a path longer than this names nothing of ours.
    routerOptions: { maxParamLength: 200 },
    frameworkErrors: frameworkErrorHandler,
    // Requests Node's parser refuses still get the interface's error shapes.
    clientErrorHandler,
    // A request parsed just before the stop is served, then its connection closed (hooks/graceful-close.ts).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // Shared schemas belong to the root: a plugin that adds its own gets a new
  // schema controller and would lose the validator compiler above.
  app.addSchema(RoomSchema);
  app.addSchema(FeedbackSchema);
  app.addSchema(WebhookEndpointSchema);
  app.addSchema(ParticipantSessionSchema);
  app.addSchema(RecordingSchema);
  app.addSchema(RecordingAuditEntrySchema);
  app.setErrorHandler(errorHandler);
  // An empty body sent as application/json (some client libraries do that on
  // POST .../close) means "no body", not malformed JSON; a route that needs a
  // body still answers 400 on `body` through its schema.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    /^\s*$/.test(body as string) ? done(null, undefined) : parseJson(request, body as string, done),
  );
  app.setNotFoundHandler((_request, reply) => reply.status(404).send({ error: 'Not found' }));
  app.addHook('onRequest', apiSecurityHeaders);
  gracefulClose(app);
  lingerAfterRefusedBody(app);
  answerUnmetExpectations(app.server);

  // One line per response, with the route pattern instead of the URL: URLs
  // carry room and join tokens, which never go to the logs.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? '(no route)';
    const elapsed = reply.elapsedTime;
    services.metrics.httpDuration.observe({ method: request.method, route, status: String(reply.statusCode) }, elapsed / 1000);
    logging.requestLine(request.id, request.method, route, reply.statusCode, Math.round(elapsed));
    done();
  });

  await app.register(fastifySwagger, {
    // Shared schemas keep their $id as their name (components/schemas/Room), not def-0.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Parley video rooms API',
        version: '1.0.0',
        description: 'Rooms, participant sessions, room feedback, webhook endpoints and the operator admin API. Every /api call needs `Authorization: Bearer <API token>`.',
      },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Instance or Organization API token' },
          admin: { type: 'http', scheme: 'bearer', description: 'PARLEY_ADMIN_TOKEN' },
        },
      },
    },
    transformObject: (documentObject) =>
      completeOpenapiDocument((documentObject as { openapiObject: Record<string, unknown> }).openapiObject, { rateLimited: config.rateLimitPerMinute > 0, admin: Boolean(config.adminToken) }),
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  app.decorateRequest('principal', null as unknown as Principal);
  await app.register(async (api) => {
    if (config.apiConcurrency > 0) {
      const gate = concurrencyGate(config.apiConcurrency);
      api.addHook('onRequest', gate.hook);
      services.metrics.watchApiGate(gate);
      const limiter = callsFirst({
        gate,
        max: config.apiConcurrency,
        // Joined, waiting to be let in, or on the join screen: anyone on this node's signaling.
        ...(calls
          ? { callsConnected: () => calls.connected(), turns: callsProcessTurns(calls) }
          : { callsConnected: () => services.metrics.connectionsOpen() > 0 }),
      });
      limiter.start();
      app.addHook('onClose', async () => limiter.stop());
    }
    // Authentication runs before the body is read: no token, no parsing (401 before 400).
    api.addHook('onRequest', async (request) => {
      request.principal = await services.auth.authenticate(request.headers.authorization);
    });
    // Per API token, in memory on this node (docs/security.md); RATE_LIMIT_PER_MINUTE=0 turns it off.
    if (config.rateLimitPerMinute > 0) {
      api.addHook('onRequest', rateLimitHook(createRateLimiter({ limit: config.rateLimitPerMinute, clock: services.clock })));
    }
    await api.register(roomsRoutes(services));
    await api.register(feedbackRoutes(services));
    await api.register(webhooksRoutes(services));
    await api.register(recordingsRoutes(services));
  });

  if (config.adminToken) await app.register(adminRoutes(services, config.adminToken));
  // Prometheus scrape endpoint: no secrets in it; restrict it to the internal network at the load balancer.
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) =>
    reply.type(services.metrics.registry.contentType).send((await services.metrics.registry.metrics()) + (await moreMetrics())),
  );
  await app.register(healthRoutes([{ name: 'database', check: () => services.database.ping() }, ...readiness]));
  for (const plugin of plugins) await app.register(plugin);
  return app;
}

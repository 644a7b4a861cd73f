// Starts a whole Parley server: database, migrations, first-start tenant,
// HTTP app, jobs. main.ts adds the process concerns (signals, exit codes);
// tests and the CLI use this directly.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { openDatabase } from './db/client.js';
import { migrate } from './db/migrate.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import { connectRedisBuses, type RedisBuses } from './realtime/buses/redis-buses.js';
import { buildApp } from './http/build-app.js';
import { embedRoutes } from './http/routes/embed.routes.js';
import { joinRoutes } from './http/routes/join.routes.js';
import { nodeJobs, startJobs } from './jobs.js';
import { realtimePlugin } from './realtime/ws-server.js';
import { startCallsProcess, type CallsProcess } from './calls-process/calls-process.js';
import { handOffPlugin } from './calls-process/hand-off.js';
import { CALLS_METRICS } from './calls-process/messages.js';
import { createLogging } from './observability/logging.js';
import { createServices, type Services } from './services.js';
import { startLocalJanus, type LocalJanus } from './local-janus.js';
import { MAX_PARTICIPANTS } from './domain/participation/participation.service.js';

export interface RunningServer {
  app: FastifyInstance;
  services: Services;
  url: string;
  /** Stops accepting, drains in-flight requests, stops jobs, closes the database. */
  close(): Promise<void>;
  /** The Janus this node started and supervises (SFU=janus without JANUS_URLS), or null. */
  localJanus: LocalJanus | null;
}

/** One line saying how group calls will go when SFU was left to its default (docs/design.md, "Group calls through an SFU"). */
function logSfuChoice(log: FastifyBaseLogger, config: Readonly<Config>, local: boolean): void {
  const peerToPeer = `group calls will be peer to peer, up to ${MAX_PARTICIPANTS} people`;
  if (config.sfuBecause === 'no-janus') log.info(`SFU off: no janus on PATH, ${peerToPeer} (apt-get install janus, or SFU=janus with JANUS_URLS)`);
  if (config.sfuBecause === 'redis-without-janus-urls') log.warn(`SFU off: REDIS_URL is set without JANUS_URLS and a local Janus serves one node, ${peerToPeer} (SFU=janus with JANUS_URLS listing instances every node shares)`);
  if (config.sfuBecause === 'janus-installed') log.info(`SFU janus: janus is on PATH, calls of ${config.sfuMinParticipants} or more go through ${local ? 'a local Janus' : 'JANUS_URLS'} (SFU=off keeps them peer to peer)`);
}

export async function startServer(
  givenConfig: Readonly<Config>,
  options: { logStream?: NodeJS.WritableStream; announce?: (line: string) => void } = {},
): Promise<RunningServer> {
  const announce = options.announce ?? ((line: string) => process.stdout.write(line + '\n'));
  let config = givenConfig;
  const database = await openDatabase(config);
  let redis: RedisBuses | null = null;
  let calls: CallsProcess | null = null;
  let localJanus: LocalJanus | null = null;
  try {
    // SFU=janus and no JANUS_URLS: this node's own Janus (docs/design.md, "Group calls through an SFU"),
    // which the rest of the node, the calls process included, then sees as its one instance.
    if (config.sfu === 'janus' && config.janusUrls.length === 0) {
      localJanus = await startLocalJanus(config, createLogging(config.logLevel, options.logStream).logger);
      config = Object.freeze({ ...config, janusUrls: [localJanus.url], janusApiSecret: localJanus.apiSecret });
    }
    await migrate(database);
    // Several nodes share calls through Redis; one node alone needs nothing but itself.
    const metrics = createMetrics();
    redis = config.redisUrl
      ? await connectRedisBuses(config.redisUrl, {
          publishFailed: () => metrics.busPublishFailures.inc(),
          resubscribed: (channels) => metrics.redisResubscriptions.inc(channels),
        })
      : null;
    // The calls in a process of their own (CALLS_PROCESS, docs/design.md#the-calls-process): it serves
    // the node's WebSockets, records its participants' presence and owns the signaling metrics.
    if (config.callsProcess === 'separate') {
      calls = await startCallsProcess({
        config,
        database,
        log: createLogging(config.logLevel, options.logStream).logger,
        logStream: options.logStream,
        onJobRun: (job, outcome) => metrics.jobRuns.inc({ job, outcome }),
      });
      for (const name of CALLS_METRICS) metrics.registry.removeSingleMetric(name);
    }
    const events = redis?.events ?? calls?.events;
    const services = createServices({ database, config, metrics, ...(redis ? { signals: redis.signals } : {}), ...(events ? { events } : {}) });
    const firstToken = await services.tenants.bootstrapDefaultTenant();
    const readiness = [...(redis ? [{ name: 'redis', check: redis.ping, optional: true }] : []), ...(calls ? [{ name: 'calls', check: calls.check }] : [])];
    const app = await buildApp({
      services,
      logStream: options.logStream,
      readiness,
      plugins: [joinRoutes(services), embedRoutes(), calls ? handOffPlugin(calls, config) : realtimePlugin({ services })],
      ...(calls ? { moreMetrics: calls.metrics, calls } : {}),
    });
    if (redis) reportRedis(redis, app.log, metrics);
    // Nobody is connected through this node yet: whoever a previous run left marked connected has gone.
    if (!calls) await services.participation.registerNode();
    const jobs = startJobs(
      nodeJobs(services, calls ? 'api' : 'node'),
      app.log,
      (job, outcome) => services.metrics.jobRuns.inc({ job, outcome }),
    );
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    app.log.info({ database: database.description, port, node: config.nodeId }, 'Parley is listening');
    logSfuChoice(app.log, config, localJanus !== null);
    if (firstToken) {
      // Printed once, to the console only: it is stored hashed and cannot be shown again.
      announce(
        [
          '',
          'Parley created the tenant "default". Its Instance API token (shown only this once):',
          '',
          `    ${firstToken}`,
          '',
          `Try: curl -H "Authorization: Bearer ${firstToken}" ${config.publicUrl}/api/rooms`,
          '',
        ].join('\n'),
      );
    }
    return {
      app,
      services,
      localJanus,
      url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
      async close() {
        // First, as the inline hub does before the HTTP server stops (ws-server.ts): the calls'
        // leaves recorded while the database is open, before a join waiting for its token times out.
        await calls?.stop();
        await app.close();
        await jobs.stop();
        if (!calls) await services.participation.retireNode().catch((error: unknown) => app.log.warn({ err: error }, 'could not retire this node'));
        await redis?.close();
        await localJanus?.stop();
        await database.close();
      },
    };
  } catch (error) {
    await calls?.stop();
    await redis?.close();
    await localJanus?.stop();
    await database.close().catch(() => {});
    throw error;
  }
}

/**
 * One line when Redis is lost and one when it is back (with how long it was
 * away), never one per failed retry; the address without credentials.
 */
function reportRedis(redis: RedisBuses, log: FastifyBaseLogger, metrics: Metrics): void {
  const degraded = 'calls between nodes are paused; calls within this node and the API go on';
  metrics.redisUp.set(redis.isUp() ? 1 : 0);
  if (!redis.isUp()) log.warn({ redis: redis.address }, `Redis (REDIS_URL) at ${redis.address} is unreachable: ${degraded}; retrying in the background`);
  redis.onConnectionChange((change) => {
    metrics.redisUp.set(change.up ? 1 : 0);
    if (change.up) {
      log.info({ redis: redis.address, downForMs: change.downForMs, resubscribed: change.resubscribed }, `Redis (REDIS_URL) at ${redis.address} is back after ${(change.downForMs / 1000).toFixed(1)} s`);
    } else {
      log.warn({ redis: redis.address }, `Redis (REDIS_URL) at ${redis.address} lost: ${degraded}; retrying in the background`);
    }
  });
}

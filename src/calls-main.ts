// The calls process: the node's signaling in a process of its own, so that
// the API's work and its garbage never hold up a relayed offer, candidate or
// "let in" (docs/design.md, "The calls process"). The main process accepts
// every connection and hands each /ws upgrade over with its socket; this
// process runs the hub over the same services, its own database pool (or the
// main process's embedded database, over IPC) and the node's buses. It stops
// when the main process tells it to or goes away; signals are the main
// process's to act on (a Ctrl-C reaches both).
import type { IncomingMessage } from 'node:http';
import { Socket, type SocketConstructorOpts } from 'node:net';
import v8 from 'node:v8';
import { WebSocketServer } from 'ws';
import type { Config } from './config.js';
import { openPostgres, openRemotePGlite } from './db/client.js';
import { RemotePGlite } from './db/remote-pglite.js';
import { eventLoopTurns, WINDOW_MS } from './observability/event-loop-turns.js';
import { createLogging } from './observability/logging.js';
import { nodeJobs, startJobs } from './jobs.js';
import { createMetrics } from './observability/metrics.js';
import { connectRedisBuses, type RedisBuses } from './realtime/buses/redis-buses.js';
import type { RoomEvent, RoomEventBus } from './domain/buses/room-event-bus.js';
import { createLocalEventBus } from './domain/buses/local-room-event-bus.js';
import { createServices } from './services.js';
import { createNodeHub, HARD_FRAME_LIMIT, serveSockets } from './realtime/socket-endpoint.js';
import { raiseCallsPriority } from './calls-process/calls-priority.js';
import { CALLS_DATABASE_POOL_SIZE, CALLS_METRICS, type FromCalls, type ToCalls } from './calls-process/messages.js';

// As the main process (main.ts): short-lived objects stay young.
v8.setFlagsFromString('--no-allocation-site-pretenuring');

const tell = (message: FromCalls, then?: () => void) => process.send?.(message, undefined, {}, then);
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});

/**
 * While anyone is connected: this event loop's lateness at p99 every window,
 * which the main process's calls first follows (src/http/calls-first.ts). Nobody
 * connected: one report saying so, and no sampling.
 */
function reportLoad(connections: () => number): NodeJS.Timeout {
  const turns = eventLoopTurns();
  let sampling = false;
  return setInterval(() => {
    const connected = connections();
    if (connected === 0) {
      if (sampling) tell({ type: 'load', connections: 0, latenessP99Ms: 0 });
      turns.stop();
      sampling = false;
    } else if (!sampling) {
      turns.start();
      sampling = true;
    } else {
      tell({ type: 'load', connections: connected, latenessP99Ms: turns.read().p99Ms });
    }
  }, WINDOW_MS).unref();
}

/** What the messages of the main process act on, once the calls are served. */
interface Serving {
  accept(request: IncomingMessage, socket: Socket, head: Buffer): void;
  publish(event: RoomEvent): void;
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

let remote: RemotePGlite | null = null;
let serving: Serving | null = null;
/** The main process answers each `interest` with someone in the room in order (forwarded-events.ts). */
const interestHeard: (() => void)[] = [];

/** RoomEventBus.interest of the bus the main process feeds: settings updates of a room come while someone is in it here. */
function tellInterest(roomId: number, someone: boolean): Promise<void> {
  tell({ type: 'interest', roomId, someone });
  return someone ? new Promise((resolve) => interestHeard.push(resolve)) : Promise.resolve();
}

async function start(config: Config): Promise<void> {
  const { logger } = createLogging(config.logLevel, process.stdout);
  const log = logger.child({ process: 'calls' });
  const priority = raiseCallsPriority();
  if (priority.raised) log.info({ nice: priority.nice, mainProcessNice: priority.from }, 'calls process runs ahead of the API');
  else {
    log.info(
      { nice: priority.nice, reason: priority.reason },
      'calls process runs at the API\'s priority: grant CAP_SYS_NICE or a nice limit (systemd LimitNICE=) to run it ahead (docs/deploy.md)',
    );
  }
  remote = config.databaseUrl ? null : new RemotePGlite((requests) => tell({ type: 'db', requests }));
  const database = remote ? openRemotePGlite(remote) : await openPostgres(config.databaseUrl!, CALLS_DATABASE_POOL_SIZE, config.databasePreparedStatements);
  const metrics = createMetrics();
  let redis: RedisBuses | null = null;
  const events: RoomEventBus = { ...createLocalEventBus(), interest: tellInterest };
  if (config.redisUrl) {
    redis = await connectRedisBuses(config.redisUrl, {
      publishFailed: () => metrics.busPublishFailures.inc(),
      resubscribed: (channels) => metrics.redisResubscriptions.inc(channels),
    });
  }
  const services = createServices({ database, config, metrics, ...(redis ? { signals: redis.signals, events: redis.events } : { events }) });
  const hub = createNodeHub(services, log);
  const wss = new WebSocketServer({ noServer: true, maxPayload: HARD_FRAME_LIMIT });
  const sockets = serveSockets(wss, hub, config.heartbeatIntervalSeconds);
  // Nobody is connected through this node yet: whoever a previous run left marked connected has gone.
  await services.participation.registerNode();
  const jobs = startJobs(
    nodeJobs(services, 'calls'),
    log,
    (job, outcome) => tell({ type: 'job-run', job, outcome }),
  );

  const reporting = reportLoad(() => metrics.connectionsOpen());
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(reporting);
      await sockets.close();
      await jobs.stop();
      await services.participation.retireNode().catch((error: unknown) => log.warn({ err: error }, 'could not retire this node'));
      await redis?.close();
      await database.close();
    })());

  serving = {
    accept(request, socket, head) {
      if (stopping) return void socket.destroy();
      wss.handleUpgrade(request, socket, head, (ws) => sockets.accept(ws));
    },
    publish: (event) => events.publish(event),
    metrics: async () => (await Promise.all(CALLS_METRICS.map((name) => metrics.registry.getSingleMetricAsString(name)))).join('\n') + '\n',
    stop,
  };
  log.info({ node: config.nodeId }, 'calls process ready');
  tell({ type: 'ready' });
}

process.on('message', (message: ToCalls, handle?: unknown) => {
  switch (message.type) {
    case 'start':
      start(message.config).catch((error: unknown) => {
        // Exits once the main process has the reason.
        tell({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) }, () => process.exit(1));
      });
      return;
    case 'db-reply':
      // Before the calls are served too: registerNode's statements come back this way.
      return remote?.receive(message.reply);
    case 'upgrade': {
      // The connection's bare handle (calls-process.ts); none if it closed on its way.
      const socket = handle ? new Socket({ handle, readable: true, writable: true } as SocketConstructorOpts) : null;
      tell({ type: 'upgrade-taken', id: message.id });
      if (!socket) return;
      if (!serving) return void socket.destroy();
      const request = { ...message.request, socket } as unknown as IncomingMessage;
      return serving.accept(request, socket, Buffer.from(message.head));
    }
    case 'room-event':
      return serving?.publish(message.event);
    case 'interest-heard':
      return interestHeard.shift()?.();
    case 'metrics':
      void (serving?.metrics() ?? Promise.resolve('')).then((text) => tell({ type: 'metrics', id: message.id, text }));
      return;
    case 'stop':
      void (serving?.stop() ?? Promise.resolve()).finally(() => process.exit(0));
      return;
  }
});
// The main process went away without a word (killed): the calls end with it, leaves recorded where the database allows.
process.on('disconnect', () => {
  remote?.lost();
  for (const heard of interestHeard.splice(0)) heard();
  void (serving?.stop() ?? Promise.resolve()).finally(() => process.exit(0));
});

// The main process's side of the calls process (src/calls-main.ts): starts it,
// hands it each /ws upgrade with its socket, tells it of room events, runs
// its statements on the embedded database, reads its metrics, stops it, and
// starts it again if it dies (its calls reconnect and resume, as after a
// node's restart).
import { fork, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { DatabaseHandle } from '../db/client.js';
import { serveRemoteStatements } from '../db/remote-pglite.js';
import type { JobOutcome } from '../jobs.js';
import { CALLS_NODE_FLAGS } from '../node-flags.js';
import type { RoomEventBus } from '../domain/buses/room-event-bus.js';
import { forwardedEvents } from './forwarded-events.js';
import type { FromCalls, ToCalls } from './messages.js';

/** How long a stop waits for the calls to be closed and their leaves recorded before the process is killed. */
const STOP_TIMEOUT_MS = 10_000;
/** Waits before starting a calls process that died again: doubling from the first, up to the last. */
const RESTART_DELAYS_MS = [250, 30_000] as const;
/** A calls process that ran this long before dying restarts without waiting on the earlier failures. */
const STABLE_AFTER_MS = 60_000;
/** The refusal of an upgrade while the calls process is not serving. */
const STARTING_AGAIN = 'The calls of this node are starting again: try again in a moment';
/** GET /metrics waits this long for the calls process's part. */
const METRICS_TIMEOUT_MS = 2000;

export interface CallsProcess {
  /** Hands an upgrade of GET /ws, already checked, to the calls process. */
  handOff(request: IncomingMessage, socket: Socket, head: Buffer): void;
  /**
   * The API's room events on a node without Redis: published to the calls
   * process, which holds the calls they concern (nothing subscribes here);
   * settings updates only of rooms someone is in there (forwarded-events.ts).
   */
  events: RoomEventBus;
  /** The calls process's metrics, in Prometheus's text format ('' while it is down). */
  metrics(): Promise<string>;
  /** Whether anyone is connected to the calls process (joined, waiting, or on the join screen). */
  connected(): boolean;
  /** Its event loop's lateness at p99 over the last window, in ms (http/calls-first.ts). */
  lateness(): number;
  /** Readiness: throws while the calls process is not serving. */
  check(): Promise<void>;
  /** Graceful stop: everyone's leave recorded, every socket closed, the process ended. */
  stop(): Promise<void>;
}

export interface CallsProcessOptions {
  config: Readonly<Config>;
  database: DatabaseHandle;
  log: FastifyBaseLogger;
  /** Where the calls process's log lines go (the main process's own log stream). */
  logStream?: { write(line: string): void };
  /** A run of one of the calls process's jobs (presence), for parley_job_runs_total. */
  onJobRun?: (job: string, outcome: JobOutcome) => void;
}

/** The compiled entry beside this file; from source (tests, tsx scripts), the TypeScript one through tsx. */
function entry(): { path: string; execArgv: string[] } {
  const flags = [...CALLS_NODE_FLAGS];
  if (!import.meta.url.endsWith('.ts')) return { path: new URL('../calls-main.js', import.meta.url).pathname, execArgv: flags };
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href.replace(/\.cjs$/, '.mjs');
  return { path: new URL('../calls-main.ts', import.meta.url).pathname, execArgv: [...flags, '--import', tsx] };
}

export async function startCallsProcess({ config, database, log, logStream = process.stdout, onJobRun = () => {} }: CallsProcessOptions): Promise<CallsProcess> {
  let child: ChildProcess | null = null;
  let ready = false;
  let stopping = false;
  let failures = 0;
  let load = { connections: 0, latenessP99Ms: 0 };
  const forwarded = forwardedEvents((event) => send({ type: 'room-event', event }));

  const send = (message: ToCalls) => {
    if (!child?.connected) return false;
    // A message to a calls process that has just died is lost with it: its exit says what matters.
    child.send(message, undefined, {}, () => {});
    return true;
  };

  const handOver = socketHandOver(log);
  const metricsAsked = metricsRequests();

  /** Starts one calls process and resolves once it serves (or rejects with why it could not). */
  const spawn = () =>
    new Promise<void>((resolve, reject) => {
      const { path, execArgv } = entry();
      const started = Date.now();
      const current = fork(path, [], { execArgv, serialization: 'advanced', stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
      child = current;
      readline.createInterface({ input: current.stdout! }).on('line', (line) => logStream.write(line + '\n'));
      const statements = database.thread ? serveRemoteStatements(database.thread, (reply) => send({ type: 'db-reply', reply })) : null;
      current.on('message', (message: FromCalls) => {
        switch (message.type) {
          case 'db':
            return statements?.run(message.requests);
          case 'upgrade-taken':
            return handOver.taken(message.id);
          case 'metrics':
            return metricsAsked.answered(message.id, message.text);
          case 'load':
            load = message;
            return;
          case 'interest':
            forwarded.occupied(message.roomId, message.someone);
            if (message.someone) send({ type: 'interest-heard' });
            return;
          case 'job-run':
            return onJobRun(message.job, message.outcome);
          case 'ready':
            ready = true;
            return resolve();
          case 'failed':
            return reject(new Error(`the calls process could not start: ${message.message}`));
        }
      });
      current.on('exit', (code, signal) => {
        statements?.abandon();
        forwarded.reset();
        handOver.refuseAll();
        const served = ready;
        ready = false;
        load = { connections: 0, latenessP99Ms: 0 };
        if (child === current) child = null;
        reject(new Error(`the calls process ended as it started (code ${code}, signal ${signal})`));
        if (stopping || !served) return;
        // Its sockets went with it: the browsers reconnect and resume once the next one serves.
        if (Date.now() - started > STABLE_AFTER_MS) failures = 0;
        log.error({ code, signal }, 'the calls process ended: its calls are reconnecting; starting it again');
        restart();
      });
      current.send({ type: 'start', config } satisfies ToCalls);
    });

  /** Starts a calls process again after a wait that doubles with each failure in a row. */
  const restart = () => {
    const delay = Math.min(RESTART_DELAYS_MS[0] * 2 ** failures++, RESTART_DELAYS_MS[1]);
    setTimeout(() => {
      if (stopping) return;
      spawn().then(
        () => log.info('the calls process is serving again'),
        (error: unknown) => {
          log.error({ err: error }, 'the calls process could not start again');
          restart();
        },
      );
    }, delay).unref();
  };

  await spawn();

  return {
    handOff(request, socket, head) {
      if (!(ready && !stopping && handOver.send(child, request, socket, head))) refuse(socket, 503, STARTING_AGAIN);
    },
    events: forwarded.bus,
    metrics: () => metricsAsked.ask((id) => send({ type: 'metrics', id })),
    connected: () => load.connections > 0,
    lateness: () => load.latenessP99Ms,
    async check() {
      if (!ready) throw new Error('the calls process is not serving');
    },
    async stop() {
      stopping = true;
      const current = child;
      if (!current) return;
      const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
      if (!send({ type: 'stop' })) current.kill('SIGKILL');
      const timer = setTimeout(() => current.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Sockets handed to the calls process. A socket goes as its bare handle; this
 * process keeps its own copy (not reading from it) until the calls process
 * says it holds the socket, then closes it, and the connection stays open
 * there. Sent as a net.Socket, the HTTP server would count it as served by
 * that process, and its close would wait for an answer from a calls process
 * that may be gone. A calls process killed a moment ago can still take the
 * message without ever reading it: the sockets it never took are refused when
 * its exit is heard, as while it is down, not dropped.
 */
function socketHandOver(log: FastifyBaseLogger) {
  /** Sockets handed over that the calls process has not yet said it holds, by the upgrade's id. */
  const handedOver = new Map<number, Socket>();
  let nextUpgradeId = 1;
  return {
    /** Hands `socket` to `child`; false if it cannot go (no calls process, or the socket is gone). */
    send(child: ChildProcess | null, request: IncomingMessage, socket: Socket, head: Buffer): boolean {
      const handle = (socket as Socket & { _handle: { readStop(): void } | null })._handle;
      if (!child?.connected || !handle) return false;
      handle.readStop();
      const id = nextUpgradeId++;
      handedOver.set(id, socket);
      const message: ToCalls = { type: 'upgrade', id, request: { method: request.method ?? 'GET', url: request.url ?? '/ws', headers: request.headers }, head };
      child.send(message, handle as never, (error) => {
        if (!error || !handedOver.delete(id)) return;
        log.warn({ err: error }, 'a WebSocket could not be handed to the calls process');
        refuse(socket, 503, STARTING_AGAIN);
      });
      return true;
    },
    /** The calls process holds the socket of upgrade `id`: this process's copy is let go. */
    taken(id: number): void {
      handedOver.get(id)?.destroy();
      handedOver.delete(id);
    },
    /** The calls process ended: the sockets it never took are refused as while it is down. */
    refuseAll(): void {
      for (const socket of handedOver.values()) refuse(socket, 503, STARTING_AGAIN);
      handedOver.clear();
    },
  };
}

/** The calls process's metrics, asked for by id; an empty text if it does not answer in time. */
function metricsRequests() {
  let nextId = 1;
  const waiting = new Map<number, (text: string) => void>();
  return {
    ask(send: (id: number) => boolean): Promise<string> {
      const id = nextId++;
      if (!send(id)) return Promise.resolve('');
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        setTimeout(() => {
          if (waiting.delete(id)) resolve('');
        }, METRICS_TIMEOUT_MS).unref();
      });
    },
    answered(id: number, text: string): void {
      waiting.get(id)?.(text);
      waiting.delete(id);
    },
  };
}

/** An HTTP answer on a socket that asked for an upgrade, in the API's error shape, then the socket closed. */
export function refuse(socket: Socket, status: 403 | 404 | 503, message: string): void {
  const body = JSON.stringify({ error: message });
  const reason = { 403: 'Forbidden', 404: 'Not Found', 503: 'Service Unavailable' }[status];
  // The client may be gone already (the HTTP server no longer listens for this socket's errors after an upgrade).
  socket.on('error', () => {});
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

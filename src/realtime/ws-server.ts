// The signaling endpoint, GET /ws (WebSocket). It checks the Origin, caps
// frame sizes, detects dead connections with pings, and hands every frame to
// the hub. Authentication happens inside the socket, with the join token in
// the first message: a token in the URL would end up in proxy logs.
import fastifyWebsocket from '@fastify/websocket';
import type { FastifyPluginAsync } from 'fastify';
import type { WebSocket } from 'ws';
import type { Services } from '../services.js';
import { createHub, type Hub } from './hub.js';
import { MAX_FRAME_BYTES, type ServerMessage } from './protocol.js';
import { iceRenewalMs, iceServersFor } from './turn-credentials.js';

/** Connections are pinged in this many groups, one group every 1/PING_SLICES of the heartbeat interval. */
const PING_SLICES = 10;

/**
 * Heartbeat intervals in a row with nothing from a connection (no pong, no
 * frame) after which it is dead. One was too few on a thin link: at 80 kbit/s
 * the queue in front of a phone's uplink is full of media, and pongs came
 * 0.9–2.0 s after their ping with a 1 s interval (docs/signaling.md) while the
 * browser was there and its media flowed. Dropping it then would tell the
 * others that the patient is reconnecting and send the page through a
 * reconnect over that same thin link. The browser sends a `ping` every second,
 * so a live page is heard well within two intervals; a dead one is found within three.
 */
const SILENT_INTERVALS_DEAD = 2;

/** ws drops the connection (close 1009) above this; frames between MAX_FRAME_BYTES and it get a `too-large` error. */
const HARD_FRAME_LIMIT = 4 * MAX_FRAME_BYTES;

/**
 * Unsent bytes a connection may hold. One that does not read (a frozen tab, a
 * hostile client) would otherwise keep everything its room sends in memory
 * until its pongs are missed: tens of megabytes per connection. A call's
 * signaling needs a few hundred kilobytes at most (a full mesh renegotiating).
 */
export const MAX_BUFFERED_BYTES = 2 * 1024 * 1024;

export interface RealtimeOptions {
  services: Services;
  /** Called with the hub once it exists (tests and readiness use it). */
  onHub?: (hub: Hub) => void;
}

export function realtimePlugin({ services, onHub }: RealtimeOptions): FastifyPluginAsync {
  return async (app) => {
    const { config } = services;
    const hub = createHub({
      participation: services.participation,
      bus: services.signals,
      events: services.events,
      clock: services.clock,
      log: app.log,
      publicUrl: config.publicUrl,
      iceServersFor: (peerId) => iceServersFor(config, peerId, services.clock.now()),
      iceRenewalMs: iceRenewalMs(config),
      iceTransportPolicy: config.iceTransportPolicy,
      reconnectGraceMs: config.reconnectGraceSeconds * 1000,
      observe: {
        message: (type) => services.metrics.signalingMessages.inc({ type }),
        connections: (delta) => services.metrics.connectionsChanged(delta),
      },
    });
    onHub?.(hub);

    await app.register(fastifyWebsocket, {
      options: { maxPayload: HARD_FRAME_LIMIT },
      // A client error (oversized frame, broken framing) is the client's problem, not a server error.
      errorHandler: (error, socket, request) => {
        request.log.info({ code: (error as NodeJS.ErrnoException).code }, 'websocket dropped on a protocol error');
        socket.terminate();
      },
      // Before the HTTP server stops: record everyone's leave while the database is still open.
      preClose: async () => {
        await hub.shutdown();
        const wss = app.websocketServer;
        // The going-away close frames are out: let the browsers answer them (a cut socket reads as 1006, an
        // error), then cut whatever has not, such as a client that never answers.
        const deadline = Date.now() + 2000;
        while (wss.clients.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        for (const client of wss.clients) client.terminate();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
      },
    });

    // A dead peer (laptop asleep, network gone) sends no FIN: silence for
    // SILENT_INTERVALS_DEAD intervals reveals it within three, so presence
    // stays true within seconds. Each connection is pinged once an interval, in
    // one of PING_SLICES slices spread over it: a thousand pings in one tick
    // held up every message relayed meanwhile (p99 of the relay, bench/README.md, realtime).
    const silentIntervals = new WeakMap<WebSocket, number>();
    const sliceOf = new WeakMap<WebSocket, number>();
    let nextSlice = 0;
    let slice = 0;
    const pingTimer = setInterval(() => {
      slice = (slice + 1) % PING_SLICES;
      for (const socket of app.websocketServer.clients) {
        if (sliceOf.get(socket) !== slice) continue;
        const silent = silentIntervals.get(socket) ?? 0;
        if (silent >= SILENT_INTERVALS_DEAD) {
          socket.terminate();
          continue;
        }
        silentIntervals.set(socket, silent + 1);
        socket.ping();
      }
    }, (config.heartbeatIntervalSeconds * 1000) / PING_SLICES);
    pingTimer.unref();
    app.addHook('onClose', async () => clearInterval(pingTimer));

    app.get(
      '/ws',
      {
        websocket: true,
        schema: { hide: true },
        // Cross-site WebSocket hijacking: browsers always send Origin, and only our own pages may connect.
        preValidation: async (request, reply) => {
          if (!config.allowedOrigins.includes(request.headers.origin ?? '')) {
            return reply.status(403).send({ error: 'WebSocket connections are accepted from this service\'s own pages only' });
          }
        },
      },
      (socket) => {
        sliceOf.set(socket, nextSlice++ % PING_SLICES);
        // Whatever comes from the browser says it is there, not only the pong.
        const heard = () => silentIntervals.set(socket, 0);
        socket.on('pong', heard);
        const session = hub.connect({
          send(message: ServerMessage) {
            if (socket.readyState !== socket.OPEN) return;
            // Dropped like a dead connection: the hub records the leave, the browser reconnects and resumes.
            if (socket.bufferedAmount > MAX_BUFFERED_BYTES) return socket.terminate();
            socket.send(JSON.stringify(message));
          },
          close(code, reason) {
            socket.close(code, reason);
          },
        });
        socket.on('message', (data, isBinary) => {
          heard();
          if (isBinary) return session.onFrame('\u0000binary');
          session.onFrame((data as Buffer).toString('utf8'));
        });
        socket.on('close', () => session.onClose());
        socket.on('error', () => socket.terminate());
      },
    );
  };
}

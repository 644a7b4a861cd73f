// What every signaling WebSocket gets, wherever the hub runs (in the main
// process, ws-server.ts, or in the calls process, src/calls-process/): the hub over
// the node's services, a dead-connection check by pings, a cap on unsent
// bytes, and a graceful close. The Origin check comes before, where the
// upgrade arrives.
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Services } from '../services.js';
import { createHub, type Hub } from './hub.js';
import { MAX_FRAME_BYTES, type ServerMessage } from '../shared/protocol.js';
import { iceRenewalMs, iceServersFor } from '../domain/participation/turn-credentials.js';
import { createJanusInstances } from '../sfu/janus-instances.js';
import { reply } from './session.js';
import { createSfuCalls, type SfuCalls } from './sfu-calls.js';

/** Connections are pinged in this many groups, one group every 1/PING_SLICES of the heartbeat interval. */
const PING_SLICES = 10;

/** This node's side of group calls through Janus (docs/design.md, "Group calls through an SFU"). */
function nodeSfu(services: Services, log: FastifyBaseLogger): SfuCalls {
  const { config } = services;
  const instances = createJanusInstances({ urls: config.janusUrls, apiSecret: config.janusApiSecret, repo: services.repos.sfuRooms, clock: services.clock });
  return createSfuCalls({ instances, minParticipants: config.sfuMinParticipants, warm: config.sfuWarm, emptyRoomMs: config.sfuEmptyRoomSeconds * 1000, lostRoomMs: config.sfuLostRoomSeconds * 1000, log, send: (session, message) => reply(session, message) });
}

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
export const HARD_FRAME_LIMIT = 4 * MAX_FRAME_BYTES;

/**
 * Unsent bytes a connection may hold. One that does not read (a frozen tab, a
 * hostile client) would otherwise keep everything its room sends in memory
 * until its pongs are missed: tens of megabytes per connection. A call's
 * signaling needs a few hundred kilobytes at most (a full mesh renegotiating).
 */
export const MAX_BUFFERED_BYTES = 2 * 1024 * 1024;

/** The node's hub over its services. */
export function createNodeHub(services: Services, log: FastifyBaseLogger): Hub {
  const { config } = services;
  return createHub({
    participation: services.participation,
    bus: services.signals,
    events: services.events,
    clock: services.clock,
    log,
    publicUrl: config.publicUrl,
    iceServersFor: (peerId) => iceServersFor(config, peerId, services.clock.now()),
    iceRenewalMs: iceRenewalMs(config),
    iceTransportPolicy: config.iceTransportPolicy,
    reconnectGraceMs: config.reconnectGraceSeconds * 1000,
    sfu: config.sfu === 'janus' ? nodeSfu(services, log) : null,
    recordings: services.recordings,
    observe: {
      message: (type) => services.metrics.signalingMessages.inc({ type }),
      connections: (delta) => services.metrics.connectionsChanged(delta),
    },
  });
}

/**
 * Serves the WebSockets of `wss` (which tracks its clients) through `hub`:
 * `accept` each once upgraded; `close` records everyone's leave and closes them all.
 */
export function serveSockets(wss: WebSocketServer, hub: Hub, heartbeatIntervalSeconds: number) {
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
    for (const socket of wss.clients) {
      if (sliceOf.get(socket) !== slice) continue;
      const silent = silentIntervals.get(socket) ?? 0;
      if (silent >= SILENT_INTERVALS_DEAD) {
        socket.terminate();
        continue;
      }
      silentIntervals.set(socket, silent + 1);
      socket.ping();
    }
  }, (heartbeatIntervalSeconds * 1000) / PING_SLICES);
  pingTimer.unref();

  return {
    accept(socket: WebSocket): void {
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

    /** Graceful stop: everyone's leave recorded while the database is still open, then every socket closed. */
    async close(): Promise<void> {
      clearInterval(pingTimer);
      await hub.shutdown();
      // The going-away close frames are out: let the browsers answer them (a cut socket reads as 1006, an
      // error), then cut whatever has not, such as a client that never answers.
      const deadline = Date.now() + 2000;
      while (wss.clients.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
